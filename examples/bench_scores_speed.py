"""What scores cost (#28): ``update_many`` and ``update`` with ``y_score`` against the same calls without, side by side.

Targets of issue 28: ``update_many`` with scores at >= 50 % of the rate without; ``update`` with a score at <= 2x
the time without. Every number is a ratio of medians measured in one run, the two variants taking turns within each
repeat (so a slow spell of this shared machine hits both alike); absolute rates are only indicative. Each ratio is
also given in CPU time (this thread's), which the machine's load moves far less than the wall clock. The monitor has
the default windows (cumulative, sliding_1000, sliding_10000, timed_3600s) and the degradation detector on, as a
user's would. Before timing, the script checks that the scored monitor's tallies hold every score it was given.
Sliding score windows are brought up to date when read, not per batch, so the script also times ``report()`` with
scores against without (the issue's third target, a report at K = 10 within 2x), the first one after the batches
and the next one after one more batch: that read pays the catch-up the batches did not. Those two read windows
still filling (20,000 samples); the last part reads them full, as a long-running service does: a report after
each batch of 1,000 past 30,000 (--quick) or 60,000 samples.

    python examples/bench_scores_speed.py [--quick]     # --quick: ~70 s on this shared machine (load 5-8); full: ~5x
    python examples/bench_scores_speed.py --quick --decimals 3   # a few-valued model's scores (the census's case)

``--decimals N`` rounds the scores (each row renormalised), as a few-valued model gives them: every column then
keeps its census (``streammon.counting.score_census``), which counts each score as it comes.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable

import numpy as np

from streammon import Monitor
from streammon.monitor import default_windows


def side_by_side(fns: dict[str, Callable[[], object]], repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """Median seconds of each function, the functions taking turns within every repeat: wall-clock, and the CPU
    time of this thread (``time.thread_time``: on a shared machine the wall clock also counts the time spent
    waiting for a core, which swings the wall-clock ratios by tens of percent from run to run)."""
    wall: dict[str, list[float]] = {name: [] for name in fns}
    cpu: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            gc.collect()
            start, start_cpu = time.perf_counter(), time.thread_time()
            fn()
            cpu[name].append(time.thread_time() - start_cpu)
            wall[name].append(time.perf_counter() - start)
    return ({name: statistics.median(ts) for name, ts in wall.items()},
            {name: statistics.median(ts) for name, ts in cpu.items()})


DECIMALS: list[int | None] = [None]  # --decimals N: a few-valued model's scores, rounded (the census's case)


def data(n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """True and predicted class names and the scores of a k-class model (binary: the positive class's), rounded
    to ``--decimals`` (each row renormalised)."""
    rng = np.random.default_rng(seed)
    labels = [f"c{i}" for i in range(k)]
    true = rng.choice(k, size=n, p=np.r_[0.9, np.full(k - 1, 0.1 / (k - 1))])
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), true] += 2.0
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    if DECIMALS[0] is not None:
        proba = np.round(proba, DECIMALS[0])
        proba[:, -1] = np.clip(1.0 - proba[:, :-1].sum(axis=1), 0.0, 1.0)
        proba /= proba.sum(axis=1, keepdims=True)
    pred = proba.argmax(axis=1)
    names = np.array(labels)
    return names[true], names[pred], (proba[:, 1] if k == 2 else proba), labels


def fresh(k: int, labels: list[str]) -> Monitor:
    reference = {label: (900 if i == 0 else 100) for i, label in enumerate(labels)}
    return Monitor(default_windows(), reference=reference, clock=lambda: 1_000.0)


def check(k: int) -> None:
    """The scored monitor's cumulative tally holds every score given, by true class."""
    true, pred, scores, labels = data(5_000, k, seed=1)
    m = fresh(k, labels)
    m.update_many(true, pred, y_score=scores)
    for i in range(200):
        m.update(true[i], pred[i], y_score=scores[i] if k == 2 else scores[i].tolist())
    tally = m.report().windows["cumulative"].score_tally
    assert tally is not None and tally.n_scored == 5_200, tally
    expected = np.bincount(np.r_[[labels.index(x) for x in true], [labels.index(x) for x in true[:200]]],
                           minlength=k)
    assert tally.class_counts.tolist() == expected.tolist()


def bench_batches(k: int, n: int, batch: int, repeats: int) -> float:
    true, pred, scores, labels = data(n, k)
    cuts = range(0, n, batch)

    def plain() -> None:
        m = fresh(k, labels)
        for s in cuts:
            m.update_many(true[s:s + batch], pred[s:s + batch])

    def scored() -> None:
        m = fresh(k, labels)
        for s in cuts:
            m.update_many(true[s:s + batch], pred[s:s + batch], y_score=scores[s:s + batch])

    t, c = side_by_side({"plain": plain, "scored": scored}, repeats)
    rate = n / t["plain"] / 1e6
    ratio = t["plain"] / t["scored"]
    print(f"  K={k:<3} batch {batch:>7,}: without {rate:6.2f} M/s, with {n / t['scored'] / 1e6:6.2f} M/s -> "
          f"rate with scores = {ratio:.2f} of without (CPU time: {c['plain'] / c['scored']:.2f})")
    return ratio


def bench_single(k: int, n: int, repeats: int) -> float:
    true, pred, scores, labels = data(n, k)
    t_list, p_list = true.tolist(), pred.tolist()
    s_list = scores.tolist()

    def plain() -> None:
        m = fresh(k, labels)
        update = m.update
        for a, b in zip(t_list, p_list, strict=True):
            update(a, b)
        m.flush()

    def scored() -> None:
        m = fresh(k, labels)
        update = m.update
        for a, b, s in zip(t_list, p_list, s_list, strict=True):
            update(a, b, y_score=s)
        m.flush()

    t, c = side_by_side({"plain": plain, "scored": scored}, repeats)
    ratio = t["scored"] / t["plain"]
    print(f"  K={k:<3} update: without {t['plain'] / n * 1e9:6.0f} ns, with {t['scored'] / n * 1e9:6.0f} ns a sample "
          f"-> time with a score = {ratio:.2f}x without (CPU time: {c['plain'] / n * 1e9:.0f} and "
          f"{c['scored'] / n * 1e9:.0f} ns, {c['scored'] / c['plain']:.2f}x)")
    return ratio


def bench_read(k: int, n: int, repeats: int) -> float:
    """``report()`` with scores against without, after a stream of batches of 1,000 (the first report) and after
    one more batch (the next one): with scores each includes the sliding score windows' catch-up (they are
    brought up to date when read: at most 2 x size samples each; the next report, one batch)."""
    true, pred, scores, labels = data(n + 1_000, k)
    times: dict[str, list[float]] = {"plain first": [], "scored first": [], "plain next": [], "scored next": []}
    for _ in range(repeats):
        for name in ("plain", "scored"):
            m = fresh(k, labels)
            for s in range(0, n + 1_000, 1_000):
                if s == n:  # the last batch comes after the first report
                    gc.collect()
                    start = time.perf_counter()
                    m.report()
                    times[f"{name} first"].append(time.perf_counter() - start)
                m.update_many(true[s:s + 1_000], pred[s:s + 1_000],
                              y_score=scores[s:s + 1_000] if name == "scored" else None)
            gc.collect()
            start = time.perf_counter()
            m.report()
            times[f"{name} next"].append(time.perf_counter() - start)
    t = {name: statistics.median(ts) for name, ts in times.items()}
    for when in ("first", "next"):
        plain, scored = t[f"plain {when}"], t[f"scored {when}"]
        print(f"  K={k:<3} {when:>5} report after {n:,} samples: without {plain * 1e3:6.1f} ms, with scores "
              f"{scored * 1e3:6.1f} ms -> {scored / plain:.2f}x")
    return t["scored next"] / t["plain next"]


def bench_steady(k: int, history: int, reports: int) -> float:
    """``report()`` at a steady state, as a service scrapes it: a monitor with ``history`` samples already (its
    sliding windows full), then a report after each of ``reports`` more batches of 1,000; the plain and the scored
    monitor take turns batch by batch; medians of CPU time. Unlike ``bench_read`` (after 20,000 samples, the
    windows still filling) this reads full sliding windows: what a long-running service pays."""
    true, pred, scores, labels = data(history + reports * 1_000, k, seed=2)
    monitors = {"plain": fresh(k, labels), "scored": fresh(k, labels)}
    times: dict[str, list[float]] = {"plain": [], "scored": []}
    for s in range(0, history + reports * 1_000, 1_000):
        for name, m in monitors.items():
            m.update_many(true[s:s + 1_000], pred[s:s + 1_000],
                          y_score=scores[s:s + 1_000] if name == "scored" else None)
            start = time.thread_time()
            m.report()
            if s >= history:
                times[name].append(time.thread_time() - start)
    plain, scored = statistics.median(times["plain"]), statistics.median(times["scored"])
    print(f"  K={k:<3} report after each batch of 1,000, past {history:,} samples: without {plain * 1e3:6.2f} ms, "
          f"with scores {scored * 1e3:6.2f} ms -> {scored / plain:.2f}x (CPU time, median of {reports})")
    return scored / plain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples and repeats (~70 s under load)")
    parser.add_argument("--decimals", type=int, help="scores rounded to this many decimals (a few-valued model)")
    args = parser.parse_args()
    DECIMALS[0] = args.decimals
    n, repeats = (200_000, 3) if args.quick else (1_000_000, 5)
    for k in (2, 10):
        check(k)
    print(f"update_many, {n:,} samples, default windows + detector (target: rate with scores >= 0.50 of without)")
    for k in (2, 10):
        for batch in (1_000, 100_000):
            bench_batches(k, n, batch, repeats)
    print(f"update, {n // 5:,} samples one at a time (target: time with a score <= 2x without)")
    for k in (2, 10):
        bench_single(k, n // 5, repeats)
    print("report() after the batches (with scores: the sliding score windows catch up when read)")
    for k in (2, 10):
        bench_read(k, n // 10, repeats)
    print("report() at a steady state (sliding windows full), as a service scrapes it")
    for k in (2, 10):
        bench_steady(k, 30_000 if args.quick else 60_000, 30 if args.quick else 60)


if __name__ == "__main__":
    main()
