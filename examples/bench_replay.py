"""Replay throughput from Parquet, against DuckDB's own GROUP BY on the same file, and peak memory vs file size.

Run with nice: ``nice python examples/bench_replay.py [--rows 5000000] [--classes 2]``. It writes its logs
(int64 labels, microsecond UTC timestamps, 1 Mi-row row groups; and the same with string labels) in a
temporary folder, then reports, per file:

- ``replay``: ``streammon.replay`` with the four default windows, snapshots every day of data time;
- ``read only``: the same file read and converted to numpy arrays, no monitor (what the reading costs);
- ``duckdb``: DuckDB's multi-threaded ``GROUP BY`` making the 60 s bucket-count table of the same rows;
- peak RSS of a replay of the file and of a file 10x larger, each in its own process.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import streammon
from streammon.logs import counts_with_duckdb
from streammon.logs.sources import open_log

ROW_GROUP = 1 << 20
START = 1_700_000_000


def write_log(path: Path, rows: int, *, classes: int, strings: bool, days: float, seed: int = 0) -> None:
    """A log of ``rows`` rows evenly over ``days``, written a row group at a time (bounded memory)."""
    rng = np.random.default_rng(seed)
    names = np.array([f"class_{i}" for i in range(classes)])
    step = int(days * 86_400 * 1_000_000) // rows
    writer = None
    for start in range(0, rows, ROW_GROUP):
        n = min(ROW_GROUP, rows - start)
        y = rng.integers(0, classes, n)
        p = np.where(rng.random(n) < 0.9, y, rng.integers(0, classes, n))
        micros = START * 1_000_000 + (start + np.arange(n, dtype=np.int64)) * step
        ts = pa.array(micros, pa.timestamp("us", tz="UTC"))
        table = pa.table({"ts": ts, "y": names[y] if strings else y, "p": names[p] if strings else p})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=ROW_GROUP)
    assert writer is not None
    writer.close()


def timed(run: object) -> float:
    start = time.perf_counter()
    run()  # type: ignore[operator]
    return time.perf_counter() - start


def measure(path: Path, rows: int, *, classes: int, strings: bool, days: float) -> None:
    labels = [f"class_{i}" for i in range(classes)] if strings else list(range(classes))
    reference = dict.fromkeys(labels, 1)

    def read_only() -> None:
        for _ in open_log(path, true="y", pred="p", time="ts").chunks():
            pass

    con = duckdb.connect()
    results = {
        "replay": min(timed(lambda: streammon.replay(path, true="y", pred="p", time="ts", every="1d",
                                                     reference=reference)) for _ in range(2)),
        "read only": min(timed(read_only) for _ in range(2)),
        "duckdb": min(timed(lambda: counts_with_duckdb(path, true="y", pred="p", time="ts", connection=con))
                      for _ in range(2)),
    }
    kind = "string" if strings else "int64"
    print(f"{rows:,} rows over {days:g} days, {classes} classes, {kind} labels, "
          f"{path.stat().st_size / 2**20:.0f} MiB:")
    for name, seconds in results.items():
        print(f"  {name:<10} {seconds:7.2f} s  {rows / seconds / 1e6:6.1f} M rows/s")
    print(f"  replay / duckdb = {results['replay'] / results['duckdb']:.2f}x")


def peak_rss(path: Path, classes: int) -> float:
    """Peak RSS (MiB) of a process that replays ``path``."""
    code = (f"import streammon; streammon.replay({str(path)!r}, true='y', pred='p', time='ts', every='1d', "
            f"reference={{i: 1 for i in range({classes})}})")
    root = str(Path(__file__).resolve().parents[1])
    process = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": root})
    _, status, usage = os.wait4(process.pid, 0)
    if status:
        raise RuntimeError(f"replay of {path} failed ({status})")
    return usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--classes", type=int, default=2)
    parser.add_argument("--days", type=float, default=1.0, help="data time the rows span (timed_3600s counts "
                        "each minute of it: a sparse log costs per minute, not per row)")
    parser.add_argument("--no-rss", action="store_true", help="skip the 10x file and the memory measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder) / "log.parquet"
        write_log(base, args.rows, classes=args.classes, strings=False, days=args.days)
        measure(base, args.rows, classes=args.classes, strings=False, days=args.days)
        text = Path(folder) / "log_strings.parquet"
        write_log(text, args.rows // 5, classes=args.classes, strings=True, days=args.days)
        measure(text, args.rows // 5, classes=args.classes, strings=True, days=args.days)
        if not args.no_rss:
            large = Path(folder) / "log_10x.parquet"
            write_log(large, args.rows * 10, classes=args.classes, strings=False, days=args.days)
            small_rss, large_rss = peak_rss(base, args.classes), peak_rss(large, args.classes)
            print(f"peak RSS: {small_rss:.0f} MiB for {args.rows:,} rows, {large_rss:.0f} MiB for "
                  f"{args.rows * 10:,} rows ({large.stat().st_size / 2**20:.0f} MiB file)")


if __name__ == "__main__":
    main()
