"""Scores in ``streammon replay`` (#28): score columns of a log are fed as ``y_score`` with their rows, from the
Python API and the command line, so the replayed monitor's tallies are those of a monitor fed the rows by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from streammon import Cumulative, Monitor, Sliding
from streammon.logs import replay
from streammon.logs.errors import ReplayError


def log(n: int = 3_000, k: int = 2) -> pa.Table:
    rng = np.random.default_rng(k)
    classes = np.array([f"c{i}" for i in range(k)])
    true = rng.integers(k, size=n)
    proba = rng.dirichlet(np.ones(k), size=n)
    columns = {"t": np.arange(n, dtype=np.float64), "y": classes[true], "p": classes[proba.argmax(1)]}
    columns.update({f"s{i}": proba[:, i] for i in range(k)})
    return pa.table(columns)


@pytest.mark.parametrize("k", [2, 3])
def test_replayed_scores_are_the_scores_fed_by_hand(k: int) -> None:
    """A binary model's score column, or K probability columns, replayed in chunks: every window's tally is that
    of one monitor fed the whole log with ``update_many(..., y_score=...)``."""
    table = log(k=k)
    reference = {f"c{i}": 10 * (i + 1) for i in range(k)}
    score = "s0" if k == 2 else [f"s{i}" for i in range(k)]  # binary: c0 is the reference minority, the positive
    result = replay(table, true="y", pred="p", time="t", every=500, score=score, reference=reference,
                    windows=[Cumulative(), Sliding(700)], batch_rows=256)
    by_hand = Monitor([Cumulative(), Sliding(700)], reference=reference)
    scores = table["s0"].to_numpy() if k == 2 else np.column_stack([table[f"s{i}"].to_numpy() for i in range(k)])
    by_hand.update_many(table["y"].to_numpy(zero_copy_only=False), table["p"].to_numpy(zero_copy_only=False),
                        t=table["t"].to_numpy(), y_score=scores)
    for name in ("cumulative", "sliding_700"):
        a, b = result.report.windows[name].score_tally, by_hand.report().windows[name].score_tally
        assert a is not None and b is not None
        np.testing.assert_array_equal(a.hist, b.hist)
        np.testing.assert_allclose(a.sums, b.sums, rtol=1e-9)
    assert result.report.windows["sliding_700"].n_scored == 700


def test_a_bad_score_column_names_its_rows(tmp_path: Path) -> None:
    """A null or out-of-range score stops the replay with an error naming the column or the rows; a text column is
    refused as a score column; the command line takes --score."""
    table = log(n=100).set_column(3, "s0", pa.array([0.5] * 50 + [None] + [0.5] * 49))
    with pytest.raises(ReplayError, match="null score"):
        replay(table, true="y", pred="p", score="s0", reference={"c0": 1, "c1": 9})
    bad = log(n=100).set_column(3, "s0", pa.array([0.5] * 60 + [1.5] * 40))
    with pytest.raises(ReplayError, match=r"column 's0', row 60: score 1\.5 is not a probability"):
        replay(bad, true="y", pred="p", score="s0", reference={"c0": 1, "c1": 9})
    with pytest.raises(ReplayError, match="cannot hold scores"):
        replay(log(n=10), true="y", pred="p", score="y", reference={"c0": 1, "c1": 9})
    from streammon.cli import main

    path = tmp_path / "log.parquet"
    pq.write_table(log(n=200), path)
    assert main(["replay", str(path), "--true", "y", "--pred", "p", "--time", "t", "--score", "s1",
                 "--reference", "c0=9,c1=1"]) == 0


def test_score_columns_without_the_classes_are_a_usage_error(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """``--score`` without ``--reference`` (binary: or ``--positive``) is a usage error (status 2) naming the flags
    to add, before the log is read: every row was refused, the message naming ``Monitor``'s keyword arguments."""
    from streammon.cli import main

    binary, three = tmp_path / "two.parquet", tmp_path / "three.parquet"
    pq.write_table(log(n=200), binary)
    pq.write_table(log(n=200, k=3), three)
    common = ["--true", "y", "--pred", "p", "--time", "t"]
    with pytest.raises(SystemExit) as stopped:
        main(["replay", str(binary), *common, "--score", "s1"])
    assert stopped.value.code == 2 and "--score needs --reference or --positive" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        main(["replay", str(three), *common, "--score", "s0", "--score", "s1", "--score", "s2"])
    assert stopped.value.code == 2 and "3 --score columns need --reference" in capsys.readouterr().err
    assert main(["replay", str(binary), *common, "--score", "s1", "--positive", "c1"]) == 0
    assert main(["replay", str(three), *common, "--score", "s0", "--score", "s1", "--score", "s2",
                 "--reference", "c0=1,c1=1,c2=1"]) == 0
