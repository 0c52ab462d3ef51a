"""Issue 28's public names used as an outside check uses them (``examples/bench_score_paths.py`` is the full run):
scikit-learn's bundled data sets, models whose scores take few values (a decision tree, k nearest neighbours),
small windows read exactly, at K > 2 with the one-vs-rest ROC AUC chosen as the docs write it, through the
sample, prediction and late-label paths. Each window's five score metrics, as read and at the reference mix,
equal scikit-learn's on the samples that window holds (sample weights ``π_c·n/n_c`` at the mix; ``log_loss`` is
``sklearn.metrics.log_loss`` with ``labels=``, ECE a recount of the documented 15 bins), a window missing a class
averaging over the classes present and reading NaN at a mix that weights the missing one."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from sklearn import datasets
from sklearn.metrics import average_precision_score, brier_score_loss, log_loss, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier

from streammon import Cumulative, Monitor, Policy, Sliding, Timed

NAMES = ("roc_auc", "average_precision", "brier", "log_loss", "ece")
PATHS = ("update_many", "update", "predict_many", "predict")


def held_out(data: Any, model: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training class counts, and the true classes and probabilities of ``model`` on the other half of ``data``."""
    x, y = data(return_X_y=True)
    xa, xb, ya, yb = train_test_split(x, y, test_size=0.5, stratify=y, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = model.fit(xa, ya).predict_proba(xb)
    return np.bincount(ya), yb.astype(np.intp), p


def ece(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> float:
    """Top-label ECE over 15 equal-width bins closed on the left (the first largest probability's class)."""
    conf, right = p.max(axis=1), (p.argmax(axis=1) == y).astype(float)
    b = np.minimum((conf * 15).astype(int), 14)
    return float(sum(abs(np.sum(w[b == i] * (right[b == i] - conf[b == i]))) for i in range(15)) / w.sum())


def sklearn_values(y: np.ndarray, p: np.ndarray, k: int, priors: np.ndarray | None, ovr: bool) -> dict[str, float]:
    """scikit-learn's values on a window's samples (K > 2), over the classes present; NaN at a mix weighting a
    class the window lacks."""
    counts = np.bincount(y, minlength=k)
    present = np.flatnonzero(counts)
    if priors is not None and np.any((priors > 0) & (counts == 0)):
        return dict.fromkeys(NAMES, math.nan)
    w = np.ones(len(y)) if priors is None else (priors * len(y) / np.maximum(counts, 1))[y]
    if ovr:
        auc = [roc_auc_score(y == c, p[:, c], sample_weight=w) for c in present] if len(present) > 1 else [math.nan]
    else:  # Hand & Till: each pair's two one-vs-one AUCs
        auc = [(roc_auc_score(y[both] == i, p[both, i]) + roc_auc_score(y[both] == j, p[both, j])) / 2
               for a, i in enumerate(present) for j in present[a + 1:] if (both := np.isin(y, (i, j))).any()]
    return {"roc_auc": float(np.mean(auc)) if auc else math.nan,
            "average_precision": float(np.mean([average_precision_score(y == c, p[:, c], sample_weight=w)
                                                for c in present])),
            "brier": brier_score_loss(y, p, labels=list(range(k)), sample_weight=w),
            "log_loss": log_loss(y, np.clip(p, 1e-15, 1 - 1e-15), labels=list(range(k)), sample_weight=w),
            "ece": ece(y, p, w)}


def feed(path: str, m: Monitor, y: np.ndarray, p: np.ndarray) -> None:
    """All samples through one public path (``predict``: each label three predictions late)."""
    t, d = np.arange(len(y), dtype=float), p.argmax(axis=1)
    if path == "update_many":
        for a in range(0, len(y), 40):
            m.update_many(y[a:a + 40].tolist(), d[a:a + 40].tolist(), t=t[a:a + 40], y_score=p[a:a + 40])
    elif path == "update":
        for i in range(len(y)):
            m.update(int(y[i]), int(d[i]), t=t[i], y_score=p[i].tolist())
    elif path == "predict_many":
        for a in range(0, len(y), 40):
            keys = list(range(a, min(a + 40, len(y))))
            m.predict_many(keys, d[keys].tolist(), t=t[keys], y_score=p[keys])
            m.label_many(keys, y[keys].tolist(), t=t[keys[-1]])
    else:
        for i in range(len(y)):
            m.predict(i, int(d[i]), t=t[i], y_score=p[i])
            if i >= 3:
                m.label(i - 3, int(y[i - 3]), t=t[i])
        for i in range(len(y) - 3, len(y)):
            m.label(i, int(y[i]), t=t[-1])


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("data", "model", "ovr"), [
    (datasets.load_wine, DecisionTreeClassifier(max_depth=3, random_state=0), True),
    (datasets.load_iris, KNeighborsClassifier(4), False),
])
def test_small_windows_at_k3_read_scikit_learns_values_on_every_path(path: str, data: Any, model: Any,
                                                                    ovr: bool) -> None:
    """Small sliding windows (3 and 25 samples: some miss a class), a timed one and the cumulative one read every
    score metric exactly (1e-9) as read and at the reference mix, with ``roc_auc`` one-vs-rest by the policy the
    docs show (``{"roc_auc": {"multi_class": "ovr"}}`` alone) or Hand & Till's by default."""
    counts, y, p = held_out(data, model)
    k = p.shape[1]
    policy = Policy(metric_params={"roc_auc": {"multi_class": "ovr"}}) if ovr else None
    m = Monitor([Cumulative(), Sliding(3), Sliding(25), Timed(20.0, buckets=4)],
                reference={c: int(counts[c]) for c in range(k)}, policy=policy, detector=None)
    feed(path, m, y, p)
    report = m.report()
    priors = counts / counts.sum()
    t = np.arange(len(y), dtype=float)
    counted = t.copy()  # when each sample was counted: a prediction's when its label came
    if path == "predict_many":
        counted = np.minimum(t // 40 * 40 + 39, t[-1])
    elif path == "predict":
        counted = np.minimum(t + 3, t[-1])
    held = {"cumulative": np.ones(len(y), bool), "sliding_3": t >= len(y) - 3, "sliding_25": t >= len(y) - 25,
            "timed_20s": np.floor(counted / 5) > np.floor(t[-1] / 5) - 4}
    for name, mask in held.items():
        w = report.windows[name]
        assert w.n == w.n_scored == mask.sum(), name
        for got, mix in ((w.scores, None), (w.corrected, priors)):
            want = sklearn_values(y[mask], p[mask], k, mix, ovr)
            for metric in NAMES:
                assert got[metric] == pytest.approx(want[metric], abs=1e-9, nan_ok=True), (name, metric, mix)
    assert math.isnan(report.windows["sliding_3"].corrected["brier"]) == (len(set(y[-3:])) < k)
