"""The write path of this checkout against another one (e.g. the last release), side by side in one run.

Each measure runs in a fresh subprocess per checkout, the two alternating, ``--rounds`` times; the
table gives each side's median and the ratio new ÷ base (for rates, base ÷ new: above 1 is slower
either way). Used to check that a change costs at most 5 % on ``predict``, ``label``, their batch
forms (in memory and with the durable journal) and ``update_many``.

    git worktree add /tmp/base <commit>
    python examples/bench_against.py /tmp/base [--rounds 7] [--n 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

MEASURE = r'''
import gc, json, math, sys, tempfile, time
from pathlib import Path
import numpy as np
from streammon import Cumulative, Monitor, Sliding, Timed

what, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
preds = rng.choice(["legit", "fraud"], n)
truth = rng.choice(["legit", "fraud"], n)
keys = np.arange(n)
windows = lambda: [Cumulative(), Sliding(1000), Sliding(10_000), Timed(3600)]
with tempfile.TemporaryDirectory() as tmp:
    durable = what.endswith("durable")
    m = Monitor(windows(), reference={"legit": 9, "fraud": 1}, max_pending=2 * n, label_ttl=math.inf,
                pending=Path(tmp) / "p.sqlite" if durable else None)
    m.update_many(truth[:10], preds[:10])
    gc.collect()
    if what.startswith("calls"):
        k, p, y = keys.tolist(), preds.tolist(), truth.tolist()
        start = time.perf_counter()
        for a, b in zip(k, p):
            m.predict(a, b)
        predict = (time.perf_counter() - start) / n * 1e9
        start = time.perf_counter()
        for a, b in zip(k, y):
            m.label(a, b)
        out = {"predict ns": predict, "label ns": (time.perf_counter() - start) / n * 1e9}
    elif what.startswith("batches"):
        size = 10_000
        start = time.perf_counter()
        for i in range(0, n, size):
            m.predict_many(keys[i:i + size], preds[i:i + size])
        predict = (time.perf_counter() - start) / n * 1e9
        start = time.perf_counter()
        for i in range(0, n, size):
            m.label_many(keys[i:i + size], truth[i:i + size])
        out = {"predict_many ns/key": predict, "label_many ns/key": (time.perf_counter() - start) / n * 1e9}
    else:
        start = time.perf_counter()
        for i in range(0, n, 100_000):
            m.update_many(truth[i:i + 100_000], preds[i:i + 100_000])
        out = {"update_many ns/sample": (time.perf_counter() - start) / n * 1e9}
print(json.dumps(out))
'''

SETS = {"calls": 1, "calls-durable": 0.05, "batches": 1, "batches-durable": 0.5, "update_many": 20}


def run(tree: Path, what: str, n: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", MEASURE, what, str(n)], env=env, cwd=tree, check=True,
                          capture_output=True, text=True)
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", type=Path, help="the other checkout (a git worktree)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--n", type=int, default=100_000)
    args = parser.parse_args()
    print("| measure | base | this | this ÷ base |\n|---|---|---|---|")
    for what, scale in SETS.items():
        n = max(1000, int(args.n * scale))
        sides: dict[str, dict[str, list[float]]] = {"base": {}, "this": {}}
        for _ in range(args.rounds):
            for side, tree in (("base", args.base), ("this", HERE)):
                for name, value in run(tree, what, n).items():
                    sides[side].setdefault(name, []).append(value)
        for name in sides["this"]:
            base, this = statistics.median(sides["base"][name]), statistics.median(sides["this"][name])
            print(f"| {what}: {name} (n={n:,}) | {base:,.0f} | {this:,.0f} | {this / base:.3f} |", flush=True)


if __name__ == "__main__":
    main()
