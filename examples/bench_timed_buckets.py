"""What a timed window's buckets cost a stream with scores whose samples carry their own times (#28): the rate of
``update_many`` with scores against the same calls without, side by side, at several samples per bucket.

``bench_scores_speed.py`` feeds every sample at one time, so its timed window (the default ``timed_3600s``, 60
buckets of a minute) never closes a bucket. A service's samples carry their times, and so does a replay of a log
(``streammon replay``): at 16 samples a second a minute's bucket holds ~1,000 samples, and one batch of a replay
can span many buckets. Each closed bucket costs something whatever it holds: its scores' histogram (K x C x 2,048
counts) found and moved to the window, and — a few-valued model's, whose scores the census counts
(``streammon.counting.score_census``) — a mark of the census's counts (``streammon.counting.windows.timed_values``).
This script measures that cost as the rate ratio, at K = 10 with the default windows and detector, for continuous
scores and scores rounded to 3 decimals (a few-valued model's), with each batch inside one bucket (``span 1``) or
spanning fifty (``span 50``).

    python examples/bench_timed_buckets.py [--quick]   # --quick: ~1 min on this shared machine; full: ~3 min

Measured (``--quick``, two runs each, this machine, CPU-time ratios; before ``cd1ddb3``, after the round that
closes a bucket by its samples' own cells and marks a small bucket by its samples' census entries): continuous,
100 / 1,000 / 10,000 a bucket, span 1: 0.07–0.08 → 0.38–0.40, 0.12–0.13 → 0.33–0.34, 0.31–0.36 → 0.34–0.50;
span 50: 0.02 → 0.20–0.21, 0.07–0.08 → 0.24. Three decimals, span 1: 0.04 → 0.26–0.28, 0.05–0.06 → 0.22–0.26,
0.18–0.19 → 0.26–0.27; span 50: 0.01 → 0.13–0.14, 0.02 → 0.17–0.21. The full table and what remains:
``docs/benchmarks``, "With scores and sample times".
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

import numpy as np

from streammon import Monitor
from streammon.monitor import default_windows

K = 10


def data(n: int, decimals: int | None, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """True and predicted class indices and a K-class model's scores (rounded to ``decimals``, rows renormalised)."""
    rng = np.random.default_rng(seed)
    true = rng.choice(K, size=n, p=np.r_[0.5, np.full(K - 1, 0.5 / (K - 1))])
    logits = rng.normal(size=(n, K))
    logits[np.arange(n), true] += 2.0
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    if decimals is not None:
        proba = np.round(proba, decimals)
        proba[:, -1] = np.clip(1.0 - proba[:, :-1].sum(axis=1), 0.0, 1.0)
        proba /= proba.sum(axis=1, keepdims=True)
    return true, proba.argmax(axis=1), proba


def ratio(n: int, per_bucket: int, span: int, decimals: int | None, repeats: int) -> tuple[float, float, float]:
    """CPU seconds of feeding ``n`` samples without and with scores, ``per_bucket`` samples a 60 s bucket, each
    batch spanning ``span`` buckets; and the ratio of the rates (with / without)."""
    true, pred, scores = data(n, decimals)
    times = np.arange(n) * (60.0 / per_bucket)
    batch = per_bucket * span
    reference = {c: (900 if c == 0 else 100) for c in range(K)}

    def run(scored: bool) -> None:
        m = Monitor(default_windows(), reference=reference)
        for s in range(0, n, batch):
            part = slice(s, s + batch)
            m.update_many(true[part], pred[part], times[part], y_score=scores[part] if scored else None)

    run(True), run(False)  # compile, warm
    cpu: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(repeats):
        for scored in (False, True):
            gc.collect()
            start = time.thread_time()
            run(scored)
            cpu[scored].append(time.thread_time() - start)
    plain, scored = statistics.median(cpu[False]), statistics.median(cpu[True])
    return plain, scored, plain / scored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples and repeats")
    args = parser.parse_args()
    n, repeats = (200_000, 3) if args.quick else (600_000, 5)
    print(f"update_many, K = {K}, {n:,} samples with their times, default windows + detector "
          "(rate with scores / rate without; target 0.5)")
    for decimals in (None, 3):
        model = "continuous" if decimals is None else f"{decimals} decimals"
        for per_bucket in (100, 1_000, 10_000):
            for span in (1, 50):
                if per_bucket * span > n // 2:
                    continue
                plain, scored, r = ratio(n, per_bucket, span, decimals, repeats)
                print(f"  {model:<11} {per_bucket:>6,} a bucket, span {span:>2}: without {plain * 1e3:7.1f} ms, "
                      f"with {scored * 1e3:7.1f} ms -> {r:.2f}")


if __name__ == "__main__":
    main()
