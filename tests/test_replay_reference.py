"""The reference's classes checked against the log's first rows: a likely typo stops the replay at the start
(exit 2 from the CLI), a rare class merely absent or a genuinely new class does not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")

from streammon.logs import ReferenceMismatch, replay  # noqa: E402
from streammon.logs.reference_check import CHECK_ROWS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _log(n: int, rare: str = "fraud", rare_from: int = 0, seed: int = 2) -> Any:
    """n rows, about 1 % of them ``rare`` (only from row ``rare_from`` on), the rest ``legit``; predictions right."""
    rng = np.random.default_rng(seed)
    y = np.where((rng.random(n) < 0.01) & (np.arange(n) >= rare_from), rare, "legit").astype(object)
    return pa.table({"t": np.arange(n, dtype=np.float64), "y": y, "p": y})


@pytest.mark.parametrize(("typo", "label"), [("Fraud", "fraud"), ("FRAUD", "fraud"), ("fraude", "fraud"),
                                             ("frud", "fraud")])
def test_typo_in_reference_stops_before_a_snapshot(typo: str, label: str) -> None:
    """A reference class the first rows lack beside a look-alike log label raises ReferenceMismatch naming both,
    before any snapshot is taken (the replay does not run to the end)."""
    seen: list[int] = []
    with pytest.raises(ReferenceMismatch) as refused:
        replay(_log(3 * CHECK_ROWS), true="y", pred="p", every=1_000, reference={"legit": 99, typo: 1},
               on_snapshot=lambda s, _: seen.append(s.samples))
    assert repr(typo) in str(refused.value) and repr(label) in str(refused.value)
    assert seen == []


def test_rare_class_absent_from_first_rows_is_not_refused() -> None:
    """A reference class first seen after the checked rows (a rare class) replays to the end and is counted."""
    result = replay(_log(CHECK_ROWS + 20_000, rare_from=CHECK_ROWS + 1), true="y", pred="p",
                    reference={"legit": 99, "fraud": 1})
    assert result.samples == CHECK_ROWS + 20_000
    assert result.report.windows["cumulative"].recall["fraud"] == 1.0


def test_new_class_unlike_the_reference_is_not_refused() -> None:
    """A log label like no reference class (a class-set change) replays to the end with both classes counted."""
    result = replay(_log(5_000, rare="chargeback"), true="y", pred="p", reference={"legit": 99, "fraud": 1})
    assert {"legit", "chargeback"} <= set(result.classes)


def test_look_alike_only_after_the_checked_rows_is_not_refused() -> None:
    """The rule reads only the first CHECK_ROWS rows: a look-alike label first seen later does not stop the replay."""
    result = replay(_log(CHECK_ROWS + 5_000, rare_from=CHECK_ROWS), true="y", pred="p",
                    reference={"legit": 99, "Fraud": 1})
    assert "fraud" in result.classes


def test_joined_log_typo_refused() -> None:
    """The joined replay (predictions and labels on a key) applies the same check to the labels it reads."""
    log = _log(2_000)
    preds = pa.table({"k": np.arange(2_000), "p": log.column("p"), "t": log.column("t")})
    labels = pa.table({"k": np.arange(2_000), "y": log.column("y"), "t": log.column("t")})
    with pytest.raises(ReferenceMismatch, match=r"'Fraud'.*'fraud'"):
        replay(preds, labels=labels, key="k", true="y", pred="p", time="t", reference={"legit": 99, "Fraud": 1})


def test_cli_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    """streammon replay with --reference legit=99000,Fraud=1000 exits 2 naming both labels and writes no output."""
    import pyarrow.parquet as pq

    pq.write_table(_log(20_000), tmp_path / "log.parquet")
    out = tmp_path / "timeline.json"
    done = subprocess.run([sys.executable, "-m", "streammon", "replay", str(tmp_path / "log.parquet"), "--true", "y",
                           "--pred", "p", "--time", "t", "--reference", "legit=99000,Fraud=1000", "--json", str(out)],
                          check=False, capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin"},
                          timeout=300)
    assert done.returncode == 2, done.stderr
    assert "'Fraud'" in done.stderr and "'fraud'" in done.stderr and "case-sensitive" in done.stderr
    assert not out.exists()


def test_short_log_typo_refused_before_its_first_snapshot() -> None:
    """A log shorter than CHECK_ROWS snapshotted every 100 rows is checked on all its rows before any snapshot."""
    seen: list[int] = []
    with pytest.raises(ReferenceMismatch, match=r"'Fraud'.*'fraud'"):
        replay(_log(5_000), true="y", pred="p", every=100, reference={"legit": 99, "Fraud": 1},
               on_snapshot=lambda s, _: seen.append(s.samples))
    assert seen == []
