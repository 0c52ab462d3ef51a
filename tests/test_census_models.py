"""The census's exactness claim end to end, through the prediction path: real models with at most ~900 distinct
scores a column, several distinct values to a bin (naive Bayes on digits at K = 10, over-confident: crowded near
0 and 1; gradient boosting on wine, K = 3, and on breast cancer), predictions with their scores
first, labels arriving late and shuffled, the monitor saved and loaded halfway through the labels. Past the exact
limit the cumulative window, a window sliding by count and a timed one no bucket has left read scikit-learn's ROC
AUC, average precision and (binary) DeLong's interval on the samples each holds, in label order."""

from __future__ import annotations

from statistics import NormalDist
from typing import Any

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.metrics import average_precision_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

from streammon import Cumulative, Monitor, Sliding, Timed

MODELS: dict[str, Any] = {
    "digits-naive_bayes": (load_digits, GaussianNB),
    "wine-boosting": (load_wine, lambda: GradientBoostingClassifier(n_estimators=20, random_state=0)),
    "breast_cancer-boosting": (load_breast_cancer, lambda: GradientBoostingClassifier(n_estimators=20,
                                                                                      random_state=0)),
}


def delong(y: np.ndarray, s: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """DeLong's interval of a binary ROC AUC, by its placement values (ties ½), recounted with NumPy."""
    pos, neg = np.sort(s[y == 1]), np.sort(s[y == 0])
    below = np.searchsorted(neg, s[y == 1], "left")
    v10 = (below + 0.5 * (np.searchsorted(neg, s[y == 1], "right") - below)) / len(neg)
    above = len(pos) - np.searchsorted(pos, s[y == 0], "right")
    v01 = (above + 0.5 * (np.searchsorted(pos, s[y == 0], "right") - np.searchsorted(pos, s[y == 0], "left"))) \
        / len(pos)
    auc = float(v10.mean())
    spread = NormalDist().inv_cdf(0.5 + confidence / 2) * np.sqrt(v10.var(ddof=1) / len(pos)
                                                                   + v01.var(ddof=1) / len(neg))
    return max(0.0, auc - spread), min(1.0, auc + spread)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_late_shuffled_labels_and_a_reload_read_scikit_learn(name: str) -> None:
    load, make = MODELS[name]
    x, y_all = load(return_X_y=True)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y_all, test_size=0.5, stratify=y_all, random_state=0)
    proba = make().fit(x_tr, y_tr).predict_proba(x_te)
    k = proba.shape[1]
    rng = np.random.default_rng(k)
    pick = rng.integers(0, len(y_te), 6_000)
    y, p = y_te[pick], proba[pick]
    scores = p[:, 1] if k == 2 else p
    monitor = Monitor([Cumulative(), Sliding(3_000), Timed(3_600.0)], reference={c: 1.0 for c in range(k)},
                      positive=1 if k == 2 else None, detector=None)
    keys = [f"p{i}" for i in range(len(y))]
    for i in range(0, len(y), 1_000):
        monitor.predict_many(keys[i:i + 1_000], p[i:i + 1_000].argmax(axis=1).tolist(), 10.0,
                             y_score=scores[i:i + 1_000])
    order = rng.permutation(len(y))
    for i in range(0, len(y), 700):
        if i == 2_800:
            monitor = Monitor.loads(monitor.dumps())
        at = order[i:i + 700]
        monitor.label_many([keys[j] for j in at], y[at].tolist(), 20.0)
    y, p = y[order], p[order]  # the windows' samples: in label order
    report = monitor.report()
    for window, rows in (("cumulative", slice(None)), ("sliding_3000", slice(-3_000, None)),
                         ("timed_3600s", slice(None))):
        w = report.windows[window]
        yy, pp = y[rows], p[rows]
        assert w.n_scored == len(yy) and w.score_tally is not None and w.score_tally.samples is None
        if k == 2:
            assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(yy, pp[:, 1]), abs=1e-12)
            assert w.scores["average_precision"] == pytest.approx(average_precision_score(yy, pp[:, 1]), abs=1e-12)
            assert w.intervals["roc_auc"] == pytest.approx(delong(yy, pp[:, 1]), abs=1e-12)
        else:
            assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(yy, pp, multi_class="ovo"), abs=1e-12)
            assert w.scores["average_precision"] == pytest.approx(average_precision_score(np.eye(k)[yy], pp),
                                                                  abs=1e-12)
