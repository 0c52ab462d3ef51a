"""What the size limits of the log readers cost on legal logs, and what the bomb files cost in memory.

Run with nice: ``nice python examples/bench_log_limits.py [--rows 5000000] [--rounds 5]``. It writes the
logs of ``bench_replay.py`` (int64 and string labels, 1 Mi-row row groups) and times, side by side in one
process and alternating round by round, ``streammon.replay`` with the Parquet page-header checks and with
the checks switched off; it prints the best time of each and their ratio, and the time of the checks alone.
Then it writes the bomb files (one 1 GiB label cell: Parquet zstd with and without dictionary, Arrow IPC zstd,
.csv.gz)
and prints the peak RSS of a child process opening and reading each (refused) next to a legal two-row log.
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import streammon
from streammon.logs import sources
from streammon.logs.limits import check_parquet, checked_batches

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_replay import write_log

ROOT = Path(__file__).resolve().parents[1]


def best(run: object, rounds: int) -> list[float]:
    """Each round's time of ``run``."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return times


def cost(path: Path, rounds: int, reference: dict[object, int]) -> None:
    """Replay with and without the page checks, alternating; print the best of each and the ratio."""
    checked, unchecked = [], []

    def run() -> None:
        streammon.replay(path, true="y", pred="p", time="ts", every="1d", reference=reference)

    for turn in range(rounds):
        if turn % 2:  # alternate which goes first
            checked += best(run, 1)
        sources.checked_batches = lambda name, metadata, columns, batches, rows: batches  # type: ignore[assignment]
        try:
            unchecked += best(run, 1)
        finally:
            sources.checked_batches = checked_batches
        if not turn % 2:
            checked += best(run, 1)
    alone = min(best(lambda: check_parquet(str(path), pq.read_metadata(path), ["y", "p", "ts"]), rounds))
    paired = sorted(a / b for a, b in zip(checked, unchecked, strict=True))
    print(f"{path.name}: replay {min(checked):.3f} s with the checks, {min(unchecked):.3f} s without: best "
          f"{min(checked) / min(unchecked):.3f}x, median of {rounds} paired rounds {paired[rounds // 2]:.3f}x; "
          f"the checks alone {alone * 1e3:.1f} ms")


def cell(size: int) -> pa.Array:
    data = pa.py_buffer(np.full(size, ord("a"), np.uint8))
    return pa.Array.from_buffers(pa.large_string(), 1, [None, pa.py_buffer(np.array([0, size], np.int64)), data])


def peak(path: Path) -> tuple[float, str]:
    """Peak RSS (MiB, VmHWM) of a fresh process opening and reading ``path``, and what it said."""
    code = ("from streammon.logs import ReplayError\nfrom streammon.logs.sources import open_log\n"
            f"try:\n    [c for c in open_log({str(path)!r}, true='y', pred='p').chunks()]\n    print('read')\n"
            "except ReplayError as e:\n    print(str(e)[:90])\n"
            "print(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}).stdout.strip()
    said, _, kib = out.rpartition("\n")
    return int(kib) / 1024, said


def bombs(folder: Path, size: int) -> None:
    """Write the bomb files and a legal log; print each one's size and the reading child's peak RSS."""
    table = pa.table({"y": pa.concat_arrays([pa.array(["a"], pa.large_string()), cell(size)]),
                      "p": pa.array(["a", "b"], pa.large_string())})
    files = {"legal.parquet": None, "bomb-dictionary.parquet": True, "bomb-plain.parquet": False}
    for name, dictionary in files.items():
        if dictionary is None:
            pq.write_table(pa.table({"y": ["a", "b"], "p": ["a", "b"]}), folder / name)
        else:
            pq.write_table(table, folder / name, compression="zstd", use_dictionary=dictionary)
    with pa.ipc.new_file(folder / "bomb.arrow", table.schema,
                         options=pa.ipc.IpcWriteOptions(compression="zstd")) as out:
        out.write_table(table)
    del table
    with gzip.open(folder / "bomb.csv.gz", "wb", compresslevel=1) as out:
        out.write(b"y,p\na,a\n")
        for _ in range(size >> 24):
            out.write(b"a" * (1 << 24))
        out.write(b",b\n")
    (folder / "legal.csv").write_text("y,p\na,a\nb,b\n")
    for name in [*files, "bomb.arrow", "legal.csv", "bomb.csv.gz"]:
        mib, said = peak(folder / name)
        print(f"  {name:<24} {(folder / name).stat().st_size / 1024:9.1f} kB  peak {mib:6.0f} MiB  {said}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bomb-bytes", type=int, default=1 << 30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for strings in (False, True):
            path = folder / f"log-{'str' if strings else 'int'}.parquet"
            write_log(path, args.rows, classes=2, strings=strings, days=1.0)
            labels = ["class_0", "class_1"] if strings else [0, 1]
            cost(path, args.rounds, dict.fromkeys(labels, 1))
        print(f"bombs: one label cell of {args.bomb_bytes / 2**20:.0f} MiB")
        bombs(folder, args.bomb_bytes)


if __name__ == "__main__":
    main()
