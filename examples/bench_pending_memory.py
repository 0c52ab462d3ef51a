"""Memory per pending prediction, by key kind and length (speed: ``bench_pending_speed.py``).

Each figure comes from a fresh subprocess (nothing else allocated or freed in it): the keys are
made first, then ``n`` predictions go into a monitor with the default windows and the bytes it
holds afterwards are divided by ``n``. The store keeps every key object alive (the caller's own
references are dropped before the end), so the figures include the key; the key's own size is
printed beside them. Three states of the store:

- ``pending``: ``n`` predictions, none labelled, into an empty store;
- ``joined``: the same, then every one labelled (joined records stay as tombstones);
- ``steady``: ``3 n`` predictions into a store with ``max_pending = n`` (it holds ``n``, the
  rest were evicted): the state of a long-running process at its bound.

``tracemalloc`` counts Python's allocations exactly; ``RSS`` is the resident set of the process
(a separate run, without tracemalloc), which also counts the allocator's free lists and holes.

    python examples/bench_pending_memory.py [--quick] [--n N] [--keys int,str12,uuid36,str512]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tracemalloc
import uuid
from pathlib import Path

import numpy as np

from streammon import Monitor

KEYS = [("int", 0), ("str", 8), ("str", 12), ("uuid", 36), ("str", 64), ("str", 256), ("str", 512)]
PHASES = ("pending", "joined", "steady")
HERE = Path(__file__).resolve().parent


def make_keys(kind: str, length: int, start: int, n: int) -> list[str | int]:
    """``n`` distinct keys numbered from ``start``: ints beyond the small-int cache, or ASCII str of ``length``."""
    if kind == "int":
        return list(range(10**12 + start, 10**12 + start + n))
    if kind == "uuid":
        rng = random.Random(start)
        return [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(n)]
    return [f"{i:0{length}x}" for i in range(start, start + n)]


def resident() -> int:
    """The resident set size of this process, in bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def one(kind: str, length: int, n: int, phase: str, mode: str) -> dict[str, float]:
    """Bytes held per record in one store state (run in a fresh process)."""
    batch = 10_000
    labels = np.array(["legit", "fraud"])
    m = Monitor(reference={"legit": 9, "fraud": 1}, max_pending=n, label_ttl=math.inf, max_pending_bytes=2**40)
    m.predict_many(["warm-up"], ["legit"], t=0.0)
    m.label_many(["warm-up"], ["legit"], t=0.0)
    m.report()
    key_size = statistics.fmean(sys.getsizeof(k) for k in make_keys(kind, length, 0, 1000))
    gc.collect()
    if mode == "tracemalloc":
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
    else:
        before = resident()
    keys = make_keys(kind, length, 0, n) if phase != "steady" else []  # counted: the store keeps them alive
    t = 1.0
    if phase == "steady":
        for start in range(0, 3 * n, batch):
            chunk = make_keys(kind, length, start, min(batch, 3 * n - start))
            m.predict_many(chunk, labels[np.arange(len(chunk)) % 2], t=t)
        del chunk
    else:
        for start in range(0, n, batch):
            chunk = keys[start:start + batch]
            m.predict_many(chunk, labels[np.arange(len(chunk)) % 2], t=t)
        if phase == "joined":
            for start in range(0, n, batch):
                chunk = keys[start:start + batch]
                m.label_many(chunk, labels[np.arange(len(chunk)) % 3 % 2], t=t + 1.0)
        del chunk, keys
    stats = m.report().label_stats
    assert stats is not None and stats.predictions == (3 * n if phase == "steady" else n) + 1
    gc.collect()
    after = tracemalloc.get_traced_memory()[0] if mode == "tracemalloc" else resident()
    if mode == "tracemalloc":
        tracemalloc.stop()
    return {"per_record": (after - before) / n, "key": key_size, "total_mib": (after - before) / 2**20}


def run_one(kind: str, length: int, n: int, phase: str, mode: str) -> dict[str, float]:
    """``one`` in a fresh interpreter (with this checkout's streammon)."""
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    out = subprocess.run([sys.executable, __file__, "--one", kind, str(length), str(n), phase, mode],
                         env=env, capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def memory_table(n: int, only: set[str] | None = None) -> str:
    """Bytes per pending prediction (key included) by key, state and method (``only``: names like ``str12``)."""
    rows = [f"n = {n:,} records, default windows, key object included (its own size in the second column)", "",
            "| key | key object | pending | joined | steady (evicting) | steady, RSS |", "|---|---|---|---|---|---|"]
    for kind, length in KEYS:
        if only and f"{kind}{length or ''}" not in only:
            continue
        cells = {phase: run_one(kind, length, n, phase, "tracemalloc") for phase in PHASES}
        rss = run_one(kind, length, n, "steady", "rss")
        name = "int (> 2**30)" if kind == "int" else f"{kind} {length}"
        rows.append(f"| {name} | {cells['pending']['key']:,.0f} B | " + " | ".join(
            f"{cells[p]['per_record']:,.0f} B" for p in PHASES) + f" | {rss['per_record']:,.0f} B |")
    return "\n".join(rows)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        kind, length, n, phase, mode = sys.argv[2:7]
        print(json.dumps(one(kind, int(length), int(n), phase, mode)))
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100,000 records instead of 1,000,000")
    parser.add_argument("--n", type=int, default=None, help="records per measurement")
    parser.add_argument("--keys", default="", help="comma-separated subset: int,str8,str12,uuid36,str64,str256,str512")
    args = parser.parse_args()
    print(memory_table(args.n or (100_000 if args.quick else 1_000_000), set(filter(None, args.keys.split(",")))))
