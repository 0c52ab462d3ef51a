"""What loading a state file costs per byte of file: time and peak memory, for real saves and hostile files.

Peak memory is tracemalloc's (it sees numpy's arrays too); time is the median of 3 loads.
The README's Reliability section quotes these factors.

    python examples/bench_state_load.py
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

from streammon import Cumulative, Monitor, Sliding, StateError, Timed
from streammon.state import FORMAT, VERSION, _digest


def saved(windows: Callable[[], list], k: int, n: int) -> bytes:
    rng = np.random.default_rng(0)
    monitor = Monitor(windows(), classes=list(range(k)))
    monitor.update_many(rng.integers(0, k, n), rng.integers(0, k, n), t=np.linspace(0, 3600, n))
    path = Path(tempfile.mkdtemp()) / "m.json"
    monitor.save(path)
    return path.read_bytes()


def forged(body: object) -> bytes:
    return json.dumps({"format": FORMAT, "version": VERSION, "sha256": _digest(body), "body": body}).encode()


def measure(data: bytes) -> tuple[float, float, str]:
    path = Path(tempfile.mkdtemp()) / "m.json"
    path.write_bytes(data)

    def load() -> str:
        try:
            Monitor.load(path)
        except StateError as exc:
            return f"StateError: {str(exc)[:50]}"
        return "loaded"

    times = []
    for _ in range(3):
        start = time.perf_counter()
        outcome = load()
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    load()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return statistics.median(times) / len(data) * 1e9, peak / len(data), outcome


def main() -> None:
    n = 2_000_000
    cases = {
        "save: Sliding(1M) + cumulative, K=2": saved(lambda: [Cumulative(), Sliding(1_000_000)], 2, n),
        "save: Timed(3600, 600 buckets), K=64": saved(lambda: [Timed(3600, buckets=600)], 64, n),
        "save: default windows, K=256": saved(lambda: [Cumulative(), Sliding(1000), Sliding(10_000), Timed(3600)],
                                              256, n),
        "hostile: 4M empty lists": b"[" + b",".join([b"[]"] * 4_000_000) + b"]",
        "hostile: 4M empty objects": b"[" + b",".join([b"{}"] * 4_000_000) + b"]",
        "hostile: 4M floats": b"[" + b",".join([b"0.5"] * 4_000_000) + b"]",
        "hostile: 1M 6-char strings": b"[" + b",".join([b'"abcdef"'] * 1_000_000) + b"]",
        "hostile: body of 4M empty lists": forged([[] for _ in range(4_000_000)]),
        "hostile: Sliding ring of 4M floats": forged({"windows": [{"describe": {"kind": "sliding", "size": 4_000_000},
                                                                   "state": {"ring": [0.5] * 4_000_000}}]}),
        "hostile: 16 MB of one string": b'"' + b"x" * 16_000_000 + b'"',
    }
    print(f"{'file':40} {'MB':>7} {'ns/byte':>8} {'peak B/byte':>11}  outcome")
    for name, data in cases.items():
        per_byte, peak, outcome = measure(data)
        print(f"{name:40} {len(data) / 1e6:7.1f} {per_byte:8.1f} {peak:11.1f}  {outcome}")


if __name__ == "__main__":
    main()
