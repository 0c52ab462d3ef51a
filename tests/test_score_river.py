"""river with scores (#28): ``MonitorMetric(scores=True)`` takes river's ``predict_proba_one`` dicts in
``evaluate.progressive_val_score`` — the arg-max as the decision, the probabilities as the score — and every
catalog metric counts a dict as its arg-max. Checked against a hand-written progressive loop over the same model."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from river import datasets, evaluate, linear_model, naive_bayes, preprocessing

from streammon.river import ACSA, GMean, MonitorMetric
from tests.test_score_windows import assert_tally


def logistic() -> object:
    return preprocessing.StandardScaler() | linear_model.LogisticRegression()


def test_binary_progressive_validation_keeps_the_positive_class_scores() -> None:
    """On Phishing with logistic regression, the monitor holds exactly the hand loop's (label, P(positive)) pairs
    and the same confusion counts as a monitor fed ``predict_one``'s labels."""
    reference = {True: 45, False: 55}  # True is the minority: the positive class
    scored = MonitorMetric(reference=reference, scores=True)
    plain = MonitorMetric(reference=reference)
    for metric in (scored, plain):
        evaluate.progressive_val_score(datasets.Phishing(), logistic(), metric)
    model = logistic()
    pairs = []
    for x, y in datasets.Phishing():
        proba = model.predict_proba_one(x)
        if proba:
            pairs.append((int(y), (proba.get(True, 0.0) / sum(proba.values()),)))
        model.learn_one(x, y)
    a, b = scored.report().windows["cumulative"], plain.report().windows["cumulative"]
    assert a.confusion == b.confusion
    labels = scored.monitor.labels
    assert_tally(a.score_tally, [(labels.index(bool(y)), row) for y, row in pairs], 2, labels.index(True))


def test_k_class_progressive_validation_keeps_every_class_probability() -> None:
    """On ImageSegments with Gaussian naive Bayes, each sample's K probabilities (normalised, in the monitor's class
    order, 0 for a class the dict leaves out) are the hand loop's."""
    stream = list(itertools.islice(datasets.ImageSegments(), 600))
    classes = sorted({y for _, y in stream})
    reference = {c: 1 for c in classes}
    scored = MonitorMetric(reference=reference, scores=True)
    evaluate.progressive_val_score(stream, naive_bayes.GaussianNB(), scored)
    model = naive_bayes.GaussianNB()
    rows = []
    labels = scored.monitor.labels
    for x, y in stream:
        proba = model.predict_proba_one(x)
        if proba:
            total = sum(proba.values())
            rows.append((labels.index(y), tuple(proba.get(c, 0.0) / total for c in labels)))
        model.learn_one(x, y)
    w = scored.report().windows["cumulative"]
    assert w.n_scored == len(rows) and w.n == len(rows)
    assert_tally(w.score_tally, rows, len(labels), 0)


def test_catalog_metrics_count_a_dict_as_its_arg_max() -> None:
    """A catalog metric given ``predict_proba_one`` dicts counts what it counts given their arg-max labels."""
    rng = np.random.default_rng(2)
    dicts, argmax = GMean(), GMean()
    acsa_dicts, acsa_labels = ACSA(), ACSA()
    for _ in range(300):
        p = rng.dirichlet(np.ones(3))
        proba = dict(zip("abc", p.tolist(), strict=True))
        y = "abc"[int(rng.integers(3))]
        dicts.update(y, proba)
        argmax.update(y, "abc"[int(p.argmax())])
        acsa_dicts.update(y, proba)
        acsa_labels.update(y, "abc"[int(p.argmax())])
    assert dicts.get() == argmax.get() and acsa_dicts.get() == acsa_labels.get()


def test_scores_need_the_classes_and_known_classes() -> None:
    """``scores=True`` without a reference is refused at construction; a dict naming an unknown class is refused."""
    with pytest.raises(ValueError, match="needs reference="):
        MonitorMetric(scores=True)
    m = MonitorMetric(reference={"a": 1, "b": 1, "c": 1}, scores=True)
    before = m.monitor.dumps()
    with pytest.raises(ValueError, match="not classes of the monitor"):
        m.update("a", {"a": 0.5, "z": 0.5})
    assert m.monitor.dumps() == before


@pytest.mark.parametrize(
    ("proba", "match"),
    [
        ({"a": float("nan"), "b": 0.5}, r"finite number >= 0, got nan"),  # was counted without a score
        ({"a": float("nan"), "b": float("nan"), "c": 0.0}, r"finite number >= 0, got nan"),
        ({"a": float("inf"), "b": 0.5}, r"finite number >= 0, got inf"),  # was reported as y_score[0] is nan
        ({"a": -0.5, "b": 1.5}, r"finite number >= 0, got -0.5"),
        ({"a": True, "b": False}, r"finite number >= 0, got True"),
        ({"a": "0.5", "b": "0.5"}, r"finite number >= 0, got '0.5'"),
        ({"a": 0.0, "b": 0.0, "c": 0.0}, "sum to 0"),  # was counted without a score
    ],
)
def test_a_malformed_probability_dict_is_refused_and_counts_nothing(proba: dict, match: str) -> None:
    """A ``predict_proba_one`` dict holding NaN, an infinity, a negative, a bool or a string, or probabilities
    summing to 0, raises a ValueError naming the dict's value, and the monitor's state is what it was."""
    m = MonitorMetric(reference={"a": 1, "b": 1, "c": 1}, scores=True)
    m.update("a", {"a": 0.6, "b": 0.3, "c": 0.1})
    before = m.monitor.dumps()
    with pytest.raises(ValueError, match=match):
        m.update("a", proba)
    assert m.monitor.dumps() == before


def test_numpy_probabilities_are_numbers() -> None:
    """NumPy scalars in a dict (float32, int64) are read as the numbers they are: the window's Brier score is the
    recount (0.6 − 1)² + 0.3² + 0.1² on the one sample."""
    m = MonitorMetric(reference={"a": 1, "b": 1, "c": 1}, scores=True, metric="brier")
    m.update("a", {"a": np.float32(0.6), "b": np.float64(0.3), "c": np.float32(0.1)})
    assert m.get() == pytest.approx((0.6 - 1) ** 2 + 0.3**2 + 0.1**2, abs=1e-7)
