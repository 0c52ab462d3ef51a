"""Speed and memory of predictions whose labels come later (printed by ``bench_speed.py`` beside its table).

Goals (issue 14): ``predict`` <= 1 µs and ``label`` <= 2 µs per call in memory;
``predict_many``/``label_many`` >= 1 M keys/s in memory and >= 200 k keys/s with the durable
SQLite store; the memory per pending prediction filled from empty (tracemalloc, the key object excluded:
the caller made it). Medians of repeats; absolute times on a shared machine are indicative.

    python examples/bench_labels.py [--quick]
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from streammon import Cumulative, Monitor, Sliding, Timed


def windows() -> list:
    return [Cumulative(), Sliding(1000), Sliding(10_000), Timed(3600)]


def per_call(n: int, repeats: int = 3) -> dict[str, float]:
    """Nanoseconds per ``predict``, ``label`` and (for comparison) ``update`` call, clock-timed, 4 windows."""
    rng = np.random.default_rng(0)
    preds = rng.choice(["legit", "fraud"], n).tolist()
    truth = rng.choice(["legit", "fraud"], n).tolist()
    keys = list(range(n))
    out: dict[str, list[float]] = {"predict": [], "label": [], "update": []}
    for _ in range(repeats):
        m = Monitor(windows(), reference={"legit": 9, "fraud": 1}, max_pending=2 * n, label_ttl=math.inf)
        gc.collect()
        start = time.perf_counter()
        for k, p in zip(keys, preds, strict=True):
            m.predict(k, p)
        out["predict"].append((time.perf_counter() - start) / n * 1e9)
        start = time.perf_counter()
        for k, y in zip(keys, truth, strict=True):
            m.label(k, y)
        out["label"].append((time.perf_counter() - start) / n * 1e9)
        u = Monitor(windows(), reference={"legit": 9, "fraud": 1})
        start = time.perf_counter()
        for y, p in zip(truth, preds, strict=True):
            u.update(y, p)
        out["update"].append((time.perf_counter() - start) / n * 1e9)
    return {name: statistics.median(v) for name, v in out.items()}


def batches(n: int, durable: bool, size: int = 100_000) -> dict[str, float]:
    """Keys per second of ``predict_many`` and ``label_many`` in batches of ``size``."""
    rng = np.random.default_rng(1)
    preds = rng.choice(["legit", "fraud"], n)
    truth = rng.choice(["legit", "fraud"], n)
    keys = np.arange(n)
    with tempfile.TemporaryDirectory() as tmp:
        pending = Path(tmp) / "pending.sqlite" if durable else None
        m = Monitor(windows(), reference={"legit": 9, "fraud": 1}, max_pending=2 * n, label_ttl=math.inf,
                    pending=pending)
        gc.collect()
        start = time.perf_counter()
        for i in range(0, n, size):
            m.predict_many(keys[i:i + size], preds[i:i + size])
        predict = n / (time.perf_counter() - start)
        start = time.perf_counter()
        for i in range(0, n, size):
            m.label_many(keys[i:i + size], truth[i:i + size])
        label = n / (time.perf_counter() - start)
        assert m.report().label_stats.labelled == n
    return {"predict_many": predict, "label_many": label}


def pending_bytes(n: int) -> float:
    """Bytes allocated per pending prediction (tracemalloc over ``predict_many`` of ``n`` made-before int keys)."""
    keys = list(range(10**9, 10**9 + n))  # ints beyond the small-int cache, made before measuring
    preds = np.array(["legit", "fraud"])[np.arange(n) % 2]
    m = Monitor(windows(), reference={"legit": 9, "fraud": 1}, max_pending=2 * n, label_ttl=math.inf)
    m.predict("warm", "legit")
    m.report()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(0, n, 100_000):
        m.predict_many(keys[i:i + 100_000], preds[i:i + 100_000])
    m.report()  # flushes the prediction buffer into the windows
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / n


def table(quick: bool = False) -> str:
    n = 50_000 if quick else 200_000
    calls = per_call(n)
    memory_rates = batches(n * 5, durable=False)
    durable_rates = batches(n, durable=True)
    size = pending_bytes(n * 5)
    rows = [
        "| measure | result | goal |", "|---|---|---|",
        f"| predict, per call (memory, 4 windows) | {calls['predict']:,.0f} ns | <= 1,000 ns |",
        f"| label, per call (memory, joined) | {calls['label']:,.0f} ns | <= 2,000 ns |",
        f"| update, per call (same run, for comparison) | {calls['update']:,.0f} ns | unchanged |",
        f"| predict_many (memory) | {memory_rates['predict_many'] / 1e6:,.2f} M keys/s | >= 1 M keys/s |",
        f"| label_many (memory) | {memory_rates['label_many'] / 1e6:,.2f} M keys/s | >= 1 M keys/s |",
        f"| predict_many (durable SQLite) | {durable_rates['predict_many'] / 1e3:,.0f} k keys/s | >= 200 k keys/s |",
        f"| label_many (durable SQLite) | {durable_rates['label_many'] / 1e3:,.0f} k keys/s | >= 200 k keys/s |",
        f"| memory per pending prediction (key excluded, filled from empty) | {size:,.0f} B | see "
        "bench_pending_memory.py (by key, at the bound) |",
    ]
    return "\n".join(rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    print(table(parser.parse_args().quick))
