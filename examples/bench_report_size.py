"""How big is the HTML report of a 1-year hourly replay? (README, "The HTML report")

Replays one year of a binary log (``--rows-per-hour`` rows an hour, default 50: 438,000 rows) with a
snapshot every hour (8,760 snapshots, default windows), writes the report and prints its size, the
size of plotly.js inside it, and the times taken.

    python examples/bench_report_size.py [--rows-per-hour 50] [--out report.html]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
from plotly.offline import get_plotlyjs

import streammon

HOURS = 365 * 24
START = 1_704_067_200  # 2024-01-01 00:00 UTC


def log(rows_per_hour: int, seed: int = 0) -> dict[str, np.ndarray]:
    """A year of rows: the fraud share drifts from 2 % to 8 % through the year; recall drops in the last month."""
    rng = np.random.default_rng(seed)
    n = HOURS * rows_per_hour
    t = START + np.sort(rng.random(n)) * HOURS * 3600
    progress = (t - START) / (HOURS * 3600)
    fraud = rng.random(n) < 0.02 + 0.06 * progress
    recall = np.where(fraud, np.where(progress > 11 / 12, 0.6, 0.85), 0.97)
    right = rng.random(n) < recall
    truth = np.where(fraud, "fraud", "legit")
    pred = np.where(right, truth, np.where(fraud, "legit", "fraud"))
    return {"t": t, "y": truth, "p": pred}


def main() -> None:
    """Replay, write, measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows-per-hour", type=int, default=50)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    table = pa.table(log(args.rows_per_hour))
    began = time.perf_counter()
    result = streammon.replay(table, true="y", pred="p", time="t", every="1h",
                              reference={"legit": 98, "fraud": 2},
                              baseline={"legit": {"legit": 970, "fraud": 30}, "fraud": {"fraud": 85, "legit": 15}})
    replayed = time.perf_counter() - began
    out = args.out or Path(tempfile.mkdtemp()) / "report.html"
    began = time.perf_counter()
    result.write_html(out)
    written = time.perf_counter() - began
    size, plotly = os.path.getsize(out), len(get_plotlyjs().encode())
    print(f"{result.samples:,} rows, {len(result.snapshots):,} snapshots, {len(result.windows)} windows, "
          f"{len(result.alerts)} alerts; replay {replayed:.1f} s, report {written:.1f} s")
    print(f"{out}: {size / 1e6:.2f} MB ({plotly / 1e6:.2f} MB plotly.js, {(size - plotly) / 1e6:.2f} MB figures "
          f"and text)")


if __name__ == "__main__":
    main()
