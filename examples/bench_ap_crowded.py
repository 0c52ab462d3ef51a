"""Average precision of windows past the exact limit, against scikit-learn on the window's samples (run on demand).

A window of more than 2,048 scored samples reads ROC AUC and AP from its 2,048 logit bins. Read with every bin
tied, AP misses scikit-learn by more than the issue's 0.002 wherever a continuous model crowds its scores into
few bins: a weak model's scores near ½, a rare class's scores near 0, Beta scores of a narrow spread. streammon
reads a bin in random order (the precision at the expected count of negatives ahead, ``random_order_share``)
where the monitor's last 2,048 exact scores show the bin holding distinct scores each seen once, tied where they
show one repeated score (``ScoreTally.distinct``), and splits a bin where they show repeated distinct values over
those values by each class's share (``ScoreTally.values``, ``streammon.metrics.bin_values``). Per distribution
and ``--trials`` trials (a fresh stream each), a ``Monitor`` with a cumulative window and a sliding window of
5,000 is fed ``--samples`` labelled samples with their scores in batches of 1,000, then read; the table gives the
worst and the mean |AP − scikit-learn| over the trials and both windows, as the monitor reads it (``now``) and
with every bin tied (``tied``: the same tally read as before the random-order reading), as read and at the
reference mix (scikit-learn with ``sample_weight``), ×1e-4 (target 20 as read, 50 at the reference mix); and the
worst |ROC AUC − scikit-learn| (``now``).

**Bundled data** (``--real``): the data sets and classifiers of ``bench_score_metrics.py`` (each trained on a
stratified half; the other half is the pool), ``--windows`` windows per cell of ``--window`` samples drawn
from the pool with replacement at a random class mix (``bench_score_metrics``' draw), each fed to a ``Monitor``
(a cumulative window, the training mix as reference; binary: the minority class's score) and read: the worst
(mean) |streammon − scikit-learn| over the windows of ROC AUC (K > 2: Hand & Till's), AP now and tied, AP at the
reference mix, and the Brier score, ×1e-4. A pool of 27–1,000 samples drawn 3,000 times repeats each sample, so
these windows hold many exact ties (the stress of the tied reading's one advantage; the ring's values, which
see those repeats, read most cells exactly).

    nice -n 10 python examples/bench_ap_crowded.py [--trials 100] [--samples 12000] [--quick]
    nice -n 10 python examples/bench_ap_crowded.py --real [--windows 20] [--window 3000]

``--quick``: 10 trials (``--real``: 5 windows). Results: docs/benchmarks/index.md, "Average precision past the
exact limit".
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


def _three_to_a_bin(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Three values 1e-5 apart (one logit bin) taken by both classes in unequal shares, and exact 0 and 1: most
    (positive, negative) pairs share the bin (``tests/test_bin_values.py``'s i.i.d. stream)."""
    y = (rng.random(n) < 0.3).astype(int)
    values = np.array([0.0, 0.30000, 0.30001, 0.30002, 1.0])
    return y, np.where(y == 1, rng.choice(values, n, p=[0.05, 0.1, 0.2, 0.35, 0.3]),
                       rng.choice(values, n, p=[0.3, 0.3, 0.2, 0.15, 0.05]))


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
    "three values a bin, 1e-5 apart": _three_to_a_bin,
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


def real_cells(windows: int, size: int) -> None:
    """The ``--real`` table (module docstring)."""
    from bench_score_metrics import CLASSIFIERS, datasets  # noqa: PLC0415 - scikit-learn's and river's data
    from sklearn.model_selection import train_test_split  # noqa: PLC0415

    print(f"{windows} windows of {size:,} per cell, drawn from the held-out half; |error| x1e-4, worst (mean)")
    print(f"{'data set x classifier':36s} " + " ".join(f"{c:>14s}" for c in ("ROC AUC", "AP now", "AP tied", "AP@pi",
                                                                             "Brier")))
    for dname, (x, y) in datasets().items():
        for cname, make in CLASSIFIERS.items():
            k = int(y.max()) + 1
            x_tr, x_pool, y_tr, y_pool = train_test_split(x, y, test_size=0.5, stratify=y, random_state=17)
            model = make()
            model.fit(x_tr, y_tr)  # type: ignore[attr-defined]
            proba = np.clip(model.predict_proba(x_pool), 0.0, 1.0)  # type: ignore[attr-defined]
            reference = np.bincount(y_tr, minlength=k) / len(y_tr)
            positive = int(np.argmin(reference)) if k == 2 else None
            by_class = [np.flatnonzero(y_pool == c) for c in range(k)]
            rng = np.random.default_rng(17)
            errors_all = []
            for _ in range(windows):
                mix = 0.8 * rng.dirichlet(np.ones(k)) + 0.2 / k
                counts = rng.multinomial(size - 2 * k, mix) + 2
                rows = rng.permutation(np.concatenate([rng.choice(by_class[c], counts[c]) for c in range(k)]))
                yw, pw = y_pool[rows], proba[rows]
                scores = pw[:, positive] if positive is not None else pw
                m = Monitor([Cumulative()], reference={c: float(reference[c]) for c in range(k)},
                            positive=positive, detector=None)
                m.update_many(yw.tolist(), pw.argmax(axis=1).tolist(), y_score=scores)
                w = m.report().windows["cumulative"]
                tally = w.score_tally
                assert tally is not None and tally.samples is None
                weights = (reference / (np.bincount(yw, minlength=k) / len(yw)))[yw]
                if positive is not None:
                    truth = (yw == positive).astype(int)
                    theirs = (roc_auc_score(truth, scores), average_precision_score(truth, scores),
                              average_precision_score(truth, scores, sample_weight=weights),
                              float(np.mean((scores - truth) ** 2)))
                    tied = average_precision((tally.hist, tally.sums, tally.top), positive=positive)
                else:
                    onehot = np.eye(k)[yw]
                    theirs = (roc_auc_score(yw, pw, multi_class="ovo"), average_precision_score(onehot, pw),
                              average_precision_score(onehot, pw, sample_weight=weights),
                              float(np.mean(((pw - onehot) ** 2).sum(axis=1))))
                    tied = average_precision((tally.hist, tally.sums, tally.top))
                ours = (w.scores["roc_auc"], w.scores["average_precision"], tied, w.corrected["average_precision"],
                        w.scores["brier"])
                errors = np.abs(np.array(ours) - np.array([theirs[0], theirs[1], theirs[1], theirs[2], theirs[3]]))
                errors_all.append(errors * 1e4)
            e = np.array(errors_all)
            cells = [f"{e[:, j].max():6.2f} ({e[:, j].mean():5.2f})" for j in range(5)]
            print(f"{dname + ' x ' + cname:36s} " + " ".join(f"{c:>14s}" for c in cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--samples", type=int, default=12_000)
    parser.add_argument("--real", action="store_true", help="the bundled data sets instead (module docstring)")
    parser.add_argument("--windows", type=int, default=20, help="--real: windows per cell")
    parser.add_argument("--window", type=int, default=3_000, help="--real: samples a window (> 2,048)")
    parser.add_argument("--quick", action="store_true", help="10 trials (--real: 5 windows)")
    args = parser.parse_args()
    if args.real:
        real_cells(5 if args.quick else args.windows, args.window)
        return
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
