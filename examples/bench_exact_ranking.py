"""Exact ROC AUC and average precision of small windows (issue 28): what they fix and what they cost, in one run.

1. **Accuracy.** Classifiers (gradient boosting, random forest, logistic regression, Gaussian naive Bayes) trained
   on a stratified half of scikit-learn's iris, wine, breast_cancer and digits, scored on the other half (75 to
   899 samples), fed to a ``Monitor`` (``update_many(..., y_score=)``, a cumulative window); the window's tally is
   read twice — from its bins (``(hist, sums, top)``, what a window of more than ``EXACT_RANKING_LIMIT`` scored
   samples reads) and as the monitor reads it (``ScoreTally.parts``, with the exact samples) — against
   scikit-learn's ``roc_auc_score`` (Hand & Till at K > 2) and macro one-vs-rest ``average_precision_score``, as
   read and at a uniform mix (``sample_weight``). Worst |streammon − scikit-learn| over the splits, side by side.
2. **Cost of the exact reading** (``metrics.exact_ranking.RankedScores``: one compiled call, a bucket sort of
   each score column and a walk down its tie groups) against the bins' compiled reading
   (``window_scores.score_values``) of the same window, K = 2 and 10, 1,000 samples, both mixes: median of
   repeated calls.
3. **Cost in a report**: two monitors with the default windows fed the same batches, one keeping exact scores and
   one not (its ring removed: the bins, as before), ``report()`` after each new batch of 500 — median CPU time
   (``time.thread_time``); with the default windows only ``sliding_1000`` holds at most 2,048 scored samples.

    nice -n 10 python examples/bench_exact_ranking.py [--quick]   # --quick: 3 splits, ~1.5 min of CPU (3.5 min of
    # wall time at a load of ~3 on the shared 2-core machine); full: 20 splits, 14 min of wall time at a load
    # of ~6 (fitting the classifiers is most of it)
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn import datasets
from sklearn import metrics as skm
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

from streammon import Cumulative, Monitor
from streammon.metrics import average_precision, roc_auc
from streammon.metrics.exact_ranking import RankedScores
from streammon.metrics.window_scores import score_values
from streammon.monitor import default_windows

DATA = {"iris": datasets.load_iris, "wine": datasets.load_wine, "breast_cancer": datasets.load_breast_cancer,
        "digits": datasets.load_digits}
MODELS: dict[str, Callable[[], Any]] = {
    "gradient_boosting": lambda: GradientBoostingClassifier(random_state=0),
    "random_forest": lambda: RandomForestClassifier(random_state=0),
    "logistic": lambda: LogisticRegression(max_iter=5000),
    "naive_bayes": GaussianNB,
}


def sklearn_values(y: np.ndarray, p: np.ndarray, weights: np.ndarray | None) -> tuple[float, float]:
    k = p.shape[1]
    sw = None if weights is None else weights[y]
    if k == 2:
        return (skm.roc_auc_score(y, p[:, 1], sample_weight=sw),
                skm.average_precision_score(y, p[:, 1], sample_weight=sw))
    onehot = np.eye(k)[y]
    return (skm.roc_auc_score(y, p, multi_class="ovo"),
            float(np.mean([skm.average_precision_score(onehot[:, c], p[:, c], sample_weight=sw) for c in range(k)])))


def accuracy(splits: int) -> None:
    print(f"1. worst |streammon - scikit-learn| over {splits} held-out halves: bins (x 1e-4) -> exact (absolute)")
    print(f"{'data set':15}{'model':19}{'n':>5}{'AUC':>20}{'AP':>20}{'AP at mix':>20}")
    for data, load in DATA.items():
        x, y = load(return_X_y=True)
        for model, make in MODELS.items():
            worst = np.zeros((2, 3))
            for seed in range(splits):
                xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.5, stratify=y, random_state=seed)
                p = make().fit(xtr, ytr).predict_proba(xte)
                k = p.shape[1]
                m = Monitor([Cumulative()], reference={c: 1.0 for c in range(k)}, positive=1 if k == 2 else None,
                            detector=None)
                m.update_many(yte.tolist(), p.argmax(axis=1).tolist(), y_score=p[:, 1] if k == 2 else p)
                t = m.report().windows["cumulative"].score_tally
                assert t is not None and t.samples is not None
                mix = np.full(k, 1.0 / k)
                weights = mix * len(yte) / np.bincount(yte, minlength=k)
                (auc, ap), (_, ap_mix) = sklearn_values(yte, p, None), sklearn_values(yte, p, weights)
                for row, parts in enumerate(((t.hist, t.sums, t.top), t.parts)):
                    got = (roc_auc(parts), average_precision(parts), average_precision(parts, priors=mix))
                    worst[row] = np.maximum(worst[row], np.abs(np.subtract(got, (auc, ap, ap_mix))))
            cells = "".join(f"{worst[0, i] * 1e4:>11.2f} -> {worst[1, i]:<5.0e}" for i in range(3))
            print(f"{data:15}{model:19}{len(yte):>5}{cells}", flush=True)


def _median_time(call: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cost(repeats: int) -> None:
    print("\n2. one window of 1,000 samples, both mixes: exact reading vs the bins' (median of calls)")
    rng = np.random.default_rng(0)
    for k in (2, 10):
        y = rng.integers(0, k, 1000)
        p = rng.dirichlet(np.ones(k), 1000)
        scores = p[:, 1:] if k == 2 else p
        m = Monitor([Cumulative()], reference={c: 1.0 for c in range(k)}, positive=1 if k == 2 else None,
                    detector=None)
        m.update_many(y.tolist(), p.argmax(axis=1).tolist(), y_score=scores[:, 0] if k == 2 else scores)
        t = m.report().windows["cumulative"].score_tally
        assert t is not None
        mixes = (None, np.full(k, 1.0 / k))
        weights = np.vstack([np.ones(k), np.full(k, 1.0 / k) * 1000 / np.bincount(y, minlength=k)])
        RankedScores.of(y, scores, k).values(weights)  # compiled before timing
        exact = _median_time(lambda: RankedScores.of(y, scores, k).values(weights), repeats)  # noqa: B023
        sort = _median_time(lambda: np.argsort(scores.T, axis=1), repeats)  # noqa: B023
        bins = _median_time(lambda: score_values(t.hist, t.sums, t.top, mixes), repeats)  # noqa: B023
        print(f"  K={k:<3} exact {exact * 1e3:.3f} ms (numpy's argsort of the columns alone: {sort * 1e3:.3f}, not "
              f"used: a bucket sort), bins (all five metrics) {bins * 1e3:.3f} ms")


def in_reports(reads: int) -> None:
    print(f"\n3. report() after each new batch of 500, default windows, median of {reads} reads (CPU time)")
    for k in (2, 10):
        rng = np.random.default_rng(k)
        labels = [f"c{i}" for i in range(k)]
        n = 20_000 + reads * 500
        true = rng.choice(k, size=n)
        logits = rng.normal(size=(n, k))
        logits[np.arange(n), true] += 2.0
        proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        names = np.array(labels)
        scores = proba[:, 1] if k == 2 else proba
        monitors = [Monitor(default_windows(), reference={c: 1.0 for c in labels}, clock=lambda: 1_000.0)
                    for _ in range(2)]
        for m in monitors:
            m.update_many(names[true[:20_000]], names[proba[:20_000].argmax(axis=1)], y_score=scores[:20_000])
            m.report()
        monitors[1]._tally.scoring.ring = None  # type: ignore[union-attr]  # the bins, as before exact scores
        spent: list[list[float]] = [[], []]
        for i in range(reads):
            part = slice(20_000 + i * 500, 20_500 + i * 500)
            for j, m in enumerate(monitors):
                m.update_many(names[true[part]], names[proba[part].argmax(axis=1)], y_score=scores[part])
                start = time.thread_time()
                m.report()
                spent[j].append(time.thread_time() - start)
        exact, bins = statistics.median(spent[0]), statistics.median(spent[1])
        print(f"  K={k:<3} with exact scores {exact * 1e3:.2f} ms, bins only {bins * 1e3:.2f} ms -> "
              f"{exact / bins:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 splits, fewer repeats (~1 min)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    accuracy(3 if args.quick else 20)
    cost(50 if args.quick else 300)
    in_reports(20 if args.quick else 60)


if __name__ == "__main__":
    main()
