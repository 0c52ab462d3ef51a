"""The warning for scores whose columns read as if meant in another order: scikit-learn's ``predict_proba`` (columns
in ``classes_`` order, sorted) fed to a monitor whose classes are in another order. The trap is shown against
scikit-learn first (the monitor reads 1 − its ROC AUC, binary), then the warning, then the fix it names."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from streammon import Cumulative, Monitor
from streammon.metrics.column_hint import MIN_SAMPLES, column_order_hint


def _read(monitor: Monitor, y: np.ndarray, pred: np.ndarray, scores: np.ndarray) -> tuple[float, list[str]]:
    """The monitor's ROC AUC after one batch, and the warnings its report gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        monitor.update_many(y, pred, y_score=scores)
        auc = monitor.report().windows["cumulative"].scores["roc_auc"]
    return auc, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def _breast_cancer() -> tuple[np.ndarray, np.ndarray, np.ndarray, LogisticRegression]:
    x, y = load_breast_cancer(return_X_y=True)
    names = np.array(["malignant", "benign"])[y]
    model = LogisticRegression(max_iter=5_000).fit(x, names)
    return names, model.predict(x), model.predict_proba(x), model


def test_a_binary_predict_proba_in_sorted_order_against_labels_written_majority_first_is_warned() -> None:
    """scikit-learn's columns are ["benign", "malignant"] (sorted); the reference lists "malignant" first, so the
    monitor takes the column at the positive class's position in its own order: the other class's probability,
    which reads 1 − scikit-learn's ROC AUC. The report warns, naming the fix; following it reads scikit-learn's
    value and warns no more."""
    y, pred, proba, model = _breast_cancer()
    assert list(model.classes_) == ["benign", "malignant"]
    truth = roc_auc_score(y == "malignant", proba[:, 1])
    monitor = Monitor([Cumulative()], reference={"malignant": 0.37, "benign": 0.63})  # not sorted
    auc, told = _read(monitor, y, pred, proba)
    assert auc == pytest.approx(1 - truth, abs=1e-9)  # the trap, measured against scikit-learn
    assert len(told) == 1 and "is it the probability of 'malignant'" in told[0]
    assert "proba[:, list(model.classes_).index('malignant')]" in told[0]
    fixed = Monitor([Cumulative()], reference={"malignant": 0.37, "benign": 0.63})
    auc, told = _read(fixed, y, pred, proba[:, list(model.classes_).index("malignant")])
    assert auc == pytest.approx(truth, abs=1e-9) and told == []


def test_k3_columns_in_sorted_order_against_another_order_are_warned_and_the_fix_reads_scikit_learn() -> None:
    """iris at K = 3 with the reference in an order that is not sorted: the warning names both orders; the
    columns reordered as it says read scikit-learn's one-vs-one ROC AUC."""
    x, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = LogisticRegression(max_iter=5_000).fit(x, names)
    proba = model.predict_proba(x)
    reference = {"virginica": 1, "setosa": 1, "versicolor": 1}
    _, told = _read(Monitor([Cumulative()], reference=reference), names, model.predict(x), proba)
    assert len(told) == 1 and "['setosa', 'versicolor', 'virginica'] (scikit-learn's model.classes_)" in told[0]
    monitor = Monitor([Cumulative()], reference=reference)
    reordered = proba[:, [list(model.classes_).index(c) for c in monitor.labels]]
    auc, told = _read(monitor, names, model.predict(x), reordered)
    assert told == []
    assert auc == pytest.approx(roc_auc_score(names, proba, multi_class="ovo", labels=model.classes_), abs=1e-9)


def test_columns_in_the_monitor_s_order_and_few_samples_are_not_warned() -> None:
    """The right order warns nothing; nor does a window with fewer than ``MIN_SAMPLES`` of a class, whatever the
    order; and a monitor warns once, not at every report."""
    y, pred, proba, _ = _breast_cancer()
    right = Monitor([Cumulative()], reference={"benign": 0.63, "malignant": 0.37})  # sorted: columns as given
    assert _read(right, y, pred, proba)[1] == []
    few = np.flatnonzero(y == "malignant")[: MIN_SAMPLES - 1]
    rows = np.r_[few, np.flatnonzero(y == "benign")[:100]]
    wrong = Monitor([Cumulative()], reference={"malignant": 0.37, "benign": 0.63})
    assert _read(wrong, y[rows], pred[rows], proba[rows])[1] == []
    once = Monitor([Cumulative()], reference={"malignant": 0.37, "benign": 0.63})
    assert len(_read(once, y, pred, proba)[1]) == 1
    assert _read(once, y[:10], pred[:10], proba[:10])[1] == []


def test_the_separation_is_a_recount() -> None:
    """The pure function on sums built by hand (``p1``: the probability of class index 1): labels ["b", "a"], whose
    sorted order is ["a", "b"]; columns in sorted order are hinted, in the labels' order not; and where the labels
    are sorted already there is no other order to suggest, even for swapped columns (the binary path's own check
    covers that case inside the monitor)."""
    rng = np.random.default_rng(0)
    true = rng.integers(0, 2, 400)
    p1 = np.clip(np.where(true == 1, 0.8, 0.2) + rng.normal(0, 0.05, 400), 0, 1)
    stated = np.column_stack([1 - p1, p1])
    in_sorted = stated[:, ::-1]
    counts = np.bincount(true)

    def sums(columns: np.ndarray) -> np.ndarray:
        return np.array([columns[true == k].sum(axis=0) for k in (0, 1)])

    assert column_order_hint(sums(in_sorted), counts, ["b", "a"]) is not None
    assert column_order_hint(sums(stated), counts, ["b", "a"]) is None
    assert column_order_hint(sums(in_sorted), counts, ["a", "b"]) is None
    own = p1[true == 1].mean() - p1[true == 0].mean()  # the separation of either column, recounted
    from streammon.metrics.column_hint import separation
    assert separation(sums(stated), counts, [0, 1]) == pytest.approx(own, abs=1e-12)


def test_a_binary_model_at_chance_is_not_told_it_is_below_it() -> None:
    """Scores that carry nothing (uniform, either class): over 200 windows of 30–2,000 samples a class, the binary
    check never fires — the gap must be four standard errors, not only 0.05 (at 30 samples a class, noise alone
    passes 0.05 in ~50 % of windows). A model truly below chance is: its scores one minus a model's."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(30, 2_000))
        true = np.r_[np.zeros(n, int), np.ones(n, int)]
        s = rng.random(2 * n)
        sums = np.array([[s[true == k].sum()] for k in (0, 1)])
        squares = np.array([[(s[true == k] ** 2).sum()] for k in (0, 1)])
        assert column_order_hint(sums, np.array([n, n]), ["a", "b"], positive=1, squares=squares) is None
    true = np.r_[np.zeros(300, int), np.ones(300, int)]
    s = 1 - np.clip(np.where(true == 1, 0.7, 0.3) + rng.normal(0, 0.2, 600), 0, 1)
    sums = np.array([[s[true == k].sum()] for k in (0, 1)])
    squares = np.array([[(s[true == k] ** 2).sum()] for k in (0, 1)])
    assert column_order_hint(sums, np.array([300, 300]), ["a", "b"], positive=1, squares=squares) is not None
