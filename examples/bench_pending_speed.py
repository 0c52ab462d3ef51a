"""predict/label speed of this checkout against another one, side by side in one process.

The other checkout's ``streammon`` is copied under the name ``streammon_base`` (its imports
renamed), so both run in the same interpreter, alternately, round after round: a machine shared
with other work slows both alike. Each round times each measure once for each side, in
alternating order; the table gives each side's best time (per call or per key), their ratio, and
the median over rounds of the per-round ratio this / base (above 1: this is slower).

    git archive <commit> | tar -x -C /tmp/base
    python examples/bench_pending_speed.py /tmp/base [--rounds 9] [--n 50000]

Measures: ``predict`` and ``label`` per call (int keys, joined), ``predict`` per call at the
``max_pending`` bound (a 12-character key evicted every call), and ``predict_many`` /
``label_many`` in batches of 10,000 (int keys; and str keys at the bound).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import streammon


def base_package(root: Path) -> Any:
    """``root``'s streammon, imported as ``streammon_base``."""
    out = Path(tempfile.mkdtemp(prefix="streammon_base_"))
    shutil.copytree(root / "streammon", out / "streammon_base")
    for path in (out / "streammon_base").rglob("*.py"):
        text = path.read_text()
        path.write_text(re.sub(r"\bstreammon(?=[.\s])", "streammon_base", text))
    sys.path.insert(0, str(out))
    return importlib.import_module("streammon_base")


def monitor(package: Any, n: int, bound: int | None = None) -> Any:
    windows = [package.Cumulative(), package.Sliding(1000), package.Sliding(10_000), package.Timed(3600)]
    return package.Monitor(windows, reference={"legit": 9, "fraud": 1}, max_pending=bound or 2 * n,
                           label_ttl=math.inf)


def timed(run: Callable[[], None], count: int) -> float:
    """Nanoseconds per item of one run."""
    gc.collect()
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) / count * 1e9


def measures(package: Any, n: int) -> dict[str, float]:
    """One round of every measure for ``package`` (ns per call or key)."""
    preds = np.random.default_rng(0).choice(["legit", "fraud"], n).tolist()
    keys = list(range(10**9, 10**9 + n))
    skeys = [f"{i:012x}" for i in range(n)]
    out: dict[str, float] = {}
    m = monitor(package, n)
    out["predict"] = timed(lambda: [m.predict(k, p) for k, p in zip(keys, preds, strict=True)] and None, n)
    out["label"] = timed(lambda: [m.label(k, p) for k, p in zip(keys, preds, strict=True)] and None, n)
    m = monitor(package, n, bound=n // 10)
    out["predict at the bound"] = timed(lambda: [m.predict(k, p) for k, p in zip(skeys, preds, strict=True)]
                                        and None, n)
    size = 10_000
    arr, labels = np.asarray(keys), np.asarray(preds)
    m = monitor(package, n)
    out["predict_many"] = timed(lambda: [m.predict_many(arr[i:i + size], labels[i:i + size], t=1.0)
                                         for i in range(0, n, size)] and None, n)
    out["label_many"] = timed(lambda: [m.label_many(arr[i:i + size], labels[i:i + size], t=2.0)
                                       for i in range(0, n, size)] and None, n)
    m = monitor(package, n, bound=n // 10)
    out["predict_many at the bound"] = timed(lambda: [m.predict_many(skeys[i:i + size], preds[i:i + size], t=1.0)
                                                      for i in range(0, n, size)] and None, n)
    return out


def table(base_root: Path, n: int, rounds: int) -> str:
    base = base_package(base_root)
    ratios: dict[str, list[float]] = {}
    best: dict[str, dict[str, float]] = {"base": {}, "this": {}}
    sides = [("base", base), ("this", streammon)]
    for _, package in sides:
        measures(package, 2000)  # warm-up: imports, numba compilation, first allocations
    for r in range(rounds):
        got = {name: measures(package, n) for name, package in (sides if r % 2 else sides[::-1])}
        for key, value in got["this"].items():
            ratios.setdefault(key, []).append(value / got["base"][key])
            for name, times in best.items():
                times[key] = min(times.get(key, math.inf), got[name][key])
    rows = [f"{rounds} rounds, n = {n:,}, base = {base_root}; this / base < 1: this is faster", "",
            "| measure | base, best | this, best | best / best | this / base, median of rounds |",
            "|---|---|---|---|---|"]
    for key, values in ratios.items():
        b, t = best["base"][key], best["this"][key]
        rows.append(f"| {key} | {b:,.0f} ns | {t:,.0f} ns | {t / b:.3f} | {statistics.median(values):.3f} |")
    return "\n".join(rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", type=Path, help="a checkout (or git archive) to compare with")
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    print(table(args.base.resolve(), args.n, args.rounds))
