"""Average precision of windows past the exact limit, against scikit-learn on the window's samples (run on demand).

A window of more than 2,048 scored samples reads ROC AUC and AP from its 2,048 logit bins. Read with every bin
tied, AP misses scikit-learn by more than the issue's 0.002 wherever a continuous model crowds its scores into
few bins: a weak model's scores near ½, a rare class's scores near 0, Beta scores of a narrow spread. streammon
reads a bin in random order (Davis & Goadrich's expected precision, ``window_score_loop.random_order_share``)
where the monitor's last 2,048 exact scores show the bin holding distinct scores, tied where they show one
repeated score (``ScoreTally.distinct``). Per distribution and ``--trials`` trials (a fresh stream each), a
``Monitor`` with a cumulative window and a sliding window of 5,000 is fed ``--samples`` labelled samples with
their scores in batches of 1,000, then read; the table gives the worst and the mean |AP − scikit-learn| over the
trials and both windows, as the monitor reads it (``now``) and with every bin tied (``tied``: the same tally read
as before this change), as read and at the reference mix (scikit-learn with ``sample_weight``), ×1e-4
(target 20 as read, 50 at the reference mix); and the worst |ROC AUC − scikit-learn| (ties ½ in both readings).

    nice -n 10 python examples/bench_ap_crowded.py [--trials 100] [--samples 12000] [--quick]

``--quick``: 10 trials. Results: docs/benchmarks/index.md, "Average precision past the exact limit".
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score

from streammon import Cumulative, Monitor, Sliding
from streammon.metrics import average_precision

Stream = Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _logit_normal(spread: float, prevalence: float = 0.2, shift: float = 1.0, centre: float = -0.5) -> Stream:
    def make(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        y = (rng.random(n) < prevalence).astype(int)
        return y, _sigmoid(spread * (rng.normal(size=n) + shift * y + centre))
    return make


def _beta(a: tuple[float, float], b: tuple[float, float]) -> Stream:
    def make(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        y = (rng.random(n) < 0.2).astype(int)
        return y, np.where(y == 1, rng.beta(*b, n), rng.beta(*a, n))
    return make


def _rounded(decimals: int) -> Stream:
    def make(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        y = (rng.random(n) < 0.2).astype(int)
        return y, np.round(_sigmoid(rng.normal(size=n) + 1.5 * y - 1.0), decimals)
    return make


def _knn(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    y = (rng.random(n) < 0.2).astype(int)
    return y, rng.binomial(15, np.where(y == 1, 0.7, 0.3)) / 15


def _mixed(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """30 % of the scores saturated at exactly 0 or 1 (the true class), the rest continuous."""
    y = (rng.random(n) < 0.2).astype(int)
    return y, np.where(rng.random(n) < 0.3, y * 1.0, _sigmoid(rng.normal(size=n) + 1.5 * y - 1.0))


STREAMS: dict[str, Stream] = {
    "logit-normal, spread 0.1 (scores ~0.47-0.53)": _logit_normal(0.1),
    "logit-normal, spread 0.3 (scores ~0.4-0.6)": _logit_normal(0.3),
    "logit-normal, spread 1": _logit_normal(1.0),
    "logit-normal, spread 3 (confident)": _logit_normal(3.0),
    "fraud: 1 % positives, logit -6 +- 1, +2": _logit_normal(1.0, prevalence=0.01, shift=2.0, centre=-6.0),
    "Beta(55, 45) vs Beta(50, 50)": _beta((50, 50), (55, 45)),
    "Beta(5, 2) vs Beta(2, 5)": _beta((2, 5), (5, 2)),
    "30 % saturated at 0/1, the rest continuous": _mixed,
    "rounded to 3 decimals": _rounded(3),
    "rounded to 2 decimals (one value a bin)": _rounded(2),
    "15-NN (k/15)": _knn,
}


def trial(make: Stream, seed: int, n: int) -> list[tuple[float, float, float, float, float]]:
    """Per window: |AP now − sklearn|, |AP tied − sklearn|, the same at the reference mix, |ROC AUC − sklearn|."""
    rng = np.random.default_rng(seed)
    y, s = make(rng, n)
    m = Monitor([Cumulative(), Sliding(5_000)], reference={0: 0.8, 1: 0.2}, positive=1, detector=None)
    for start in range(0, n, 1_000):
        part = slice(start, start + 1_000)
        m.update_many(y[part].tolist(), (s[part] > 0.5).astype(int).tolist(), y_score=s[part])
    report = m.report()
    out = []
    for name, rows in (("cumulative", slice(None)), ("sliding_5000", slice(n - 5_000, None))):
        w = report.windows[name]
        tally = w.score_tally
        assert tally is not None and tally.samples is None, "a window past the exact limit"
        yy, ss = y[rows], s[rows]
        n1 = int(yy.sum())
        weights = np.where(yy == 1, 0.2 * len(yy) / n1, 0.8 * len(yy) / (len(yy) - n1))
        tied = (tally.hist, tally.sums, tally.top)
        out.append((abs(w.scores["average_precision"] - average_precision_score(yy, ss)),
                    abs(average_precision(tied) - average_precision_score(yy, ss)),
                    abs(w.corrected["average_precision"] - average_precision_score(yy, ss, sample_weight=weights)),
                    abs(average_precision(tied, priors=[0.8, 0.2])
                        - average_precision_score(yy, ss, sample_weight=weights)),
                    abs(w.scores["roc_auc"] - roc_auc_score(yy, ss))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--samples", type=int, default=12_000)
    parser.add_argument("--quick", action="store_true", help="10 trials")
    args = parser.parse_args()
    trials = 10 if args.quick else args.trials
    print(f"{trials} trials of {args.samples:,} samples; windows cumulative and sliding_5000; |error| x1e-4, "
          "worst (mean)")
    print(f"{'distribution':46s} {'AP now':>14s} {'AP tied':>14s} {'AP@pi now':>14s} {'AP@pi tied':>14s} "
          f"{'ROC AUC':>8s}")
    for name, make in STREAMS.items():
        rows = np.array([row for seed in range(trials) for row in trial(make, seed, args.samples)]) * 1e4
        cells = [f"{rows[:, j].max():6.2f} ({rows[:, j].mean():5.2f})" for j in range(4)]
        print(f"{name:46s} {' '.join(f'{c:>14s}' for c in cells)} {rows[:, 4].max():8.2f}", flush=True)


if __name__ == "__main__":
    main()
