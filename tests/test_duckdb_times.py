"""The DuckDB counts read every time column replay reads: pandas-written Parquet (and the same frames in memory)
with naive and tz-aware timestamps in s/ms/us/ns, dates, and numeric seconds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")
pytest.importorskip("duckdb")

from streammon.logs import counts_from_rows, counts_with_duckdb  # noqa: E402

START = 1_704_067_200  # 2024-01-01 00:00:00 UTC
KINDS = [f"{zone}_{unit}" for zone in ("naive", "tz") for unit in ("s", "ms", "us", "ns")] + [
    "date", "seconds_float", "seconds_int"]


def _frame(kind: str, n: int = 400, seed: int = 5) -> tuple[Any, np.ndarray, float]:
    """A log whose ``ts`` column is of ``kind``, the UTC seconds each row stands for (an independent integer
    computation), and the bucket width to count it in."""
    rng = np.random.default_rng(seed)
    steps = rng.integers(0, 40_000, n).cumsum()  # ms after START, non-decreasing
    y = rng.choice(["legit", "fraud"], n, p=[0.9, 0.1])
    p = np.where(rng.random(n) < 0.8, y, rng.choice(["legit", "fraud"], n))
    if kind == "date":
        days = np.sort(rng.integers(0, 60, n))
        ts: Any = pd.to_datetime(START + days * 86_400, unit="s").date
        return pd.DataFrame({"ts": ts, "y": y, "p": p}), (START + days * 86_400).astype(np.float64), 7 * 86_400.0
    if kind.startswith("seconds"):
        values = steps / 1000.0 if kind == "seconds_float" else steps // 1000
        return pd.DataFrame({"ts": values, "y": y, "p": p}), np.asarray(values, np.float64), 60.0
    zone, unit = kind.split("_")
    whole = {"s": steps // 1000 * 1000, "ms": steps, "us": steps, "ns": steps}[unit]
    stamps = pd.to_datetime(START * 1000 + whole, unit="ms").as_unit(unit)
    if zone == "tz":
        stamps = stamps.tz_localize("UTC").tz_convert("America/New_York")  # stored as UTC, shown in New York
    return pd.DataFrame({"ts": stamps, "y": y, "p": p}), START + whole / 1000.0, 60.0


def _recount(true: np.ndarray, pred: np.ndarray, seconds: np.ndarray, width: float) -> list[dict[str, Any]]:
    """The counts table by hand: a Counter over (floor(seconds / width) * width, true, pred)."""
    from collections import Counter

    counts = Counter(zip((np.floor(seconds / width) * width).tolist(), true.tolist(), pred.tolist(), strict=True))
    return [{"bucket_start": b, "true": t, "pred": p, "count": c} for (b, t, p), c in sorted(counts.items())]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("where", ["parquet", "frame"])
def test_duckdb_counts_equal_replay_reader_and_recount(kind: str, where: str, tmp_path: Path) -> None:
    """counts_with_duckdb on a pandas-written Parquet (or the frame itself) with this time type equals replay's
    reader (counts_from_rows) and a recount from the integer times, bucket by bucket."""
    frame, seconds, width = _frame(kind)
    if where == "parquet":
        frame.to_parquet(tmp_path / "log.parquet")
        source: Any = tmp_path / "log.parquet"
    else:
        source = frame
    duck = counts_with_duckdb(source, true="y", pred="p", time="ts", bucket=width)
    replayed = counts_from_rows(source, true="y", pred="p", time="ts", bucket=width)
    assert duck.equals(replayed)
    assert duck.to_pylist() == _recount(frame["y"].to_numpy(), frame["p"].to_numpy(), seconds, width)
