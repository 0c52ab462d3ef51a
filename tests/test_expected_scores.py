"""Expected performance without labels: the expected confusion by enumerating every labelling, the weighted ranking
scores against scikit-learn with sample weights, and the scores' "only the mix changed?" test's false alarms."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import special
from sklearn.metrics import average_precision_score, roc_auc_score

from streammon.metrics import compute
from streammon.metrics.expected_scores import (
    expected_average_precision,
    expected_confusion,
    expected_metrics,
    expected_roc_auc,
    weighted_average_precision,
    weighted_roc_auc,
)
from streammon.metrics.score_shift_test import class_cell_counts, make_binning, mix_test


def test_expected_confusion_is_the_mean_over_every_labelling() -> None:
    """Σ p'ᵢ ⊗ onehot(ŷᵢ) equals the probability-weighted mean of the confusion matrices of all K^n labellings."""
    rng = np.random.default_rng(0)
    k, n = 3, 5
    p = rng.dirichlet(np.ones(k), size=n)
    decided = rng.integers(0, k, n)
    brute = np.zeros((k, k))
    for labels in itertools.product(range(k), repeat=n):
        weight = np.prod(p[np.arange(n), labels])
        cm = np.zeros((k, k))
        np.add.at(cm, (np.array(labels), decided), 1)
        brute += weight * cm
    assert expected_confusion(p, decided) == pytest.approx(brute, abs=1e-12)


def test_histogram_decision_counts_equal_the_samples_they_count() -> None:
    """Rows with (m, K) decision counts give the expected confusion of the samples those counts stand for."""
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(3), size=40)
    decided = rng.integers(0, 3, (40, 4))  # four samples per row, each with its own decision
    counts = np.stack([np.bincount(row, minlength=3) for row in decided])
    per_sample = expected_confusion(np.repeat(p, 4, axis=0), decided.ravel())
    assert expected_confusion(p, counts) == pytest.approx(per_sample, abs=1e-12)


def test_expected_metrics_are_the_catalog_on_the_expected_confusion() -> None:
    """Each expected metric is ``compute(name, E[M])``; a metric needing a parameter is given it or left out."""
    cm = np.array([[50.5, 3.25, 1.0], [4.0, 30.0, 2.5], [0.5, 6.0, 12.0]])
    values = expected_metrics(cm, params={"holder": {"p": -1}})
    assert values["acsa"] == compute("acsa", cm)
    assert values["holder"] == compute("holder", cm, p=-1)
    assert "holder" not in expected_metrics(cm)


@pytest.mark.parametrize("ties", [False, True])
def test_weighted_ranking_scores_equal_scikit_learn_with_sample_weights(ties: bool) -> None:
    """Weighted roc_auc and average_precision equal scikit-learn's on the samples duplicated as a positive and a
    negative with the posterior weights (with many tied scores too)."""
    rng = np.random.default_rng(2 + ties)
    s = rng.random(300)
    if ties:
        s = np.round(s, 1)
    wp, wn = rng.random(300), rng.random(300)
    y = np.r_[np.ones(300), np.zeros(300)]
    weights = np.r_[wp, wn]
    assert weighted_roc_auc(s, wp, wn) == pytest.approx(roc_auc_score(y, np.r_[s, s], sample_weight=weights),
                                                        abs=1e-12)
    assert weighted_average_precision(s, wp, wn) == pytest.approx(
        average_precision_score(y, np.r_[s, s], sample_weight=weights), abs=1e-12)


def test_expected_macro_ovr_is_the_mean_of_the_one_vs_rest_scores() -> None:
    """At K > 2 the expected roc_auc is the mean over classes of scikit-learn's one-vs-rest values with posterior
    weights (``weights`` scaling each row); with known labels (one-hot posteriors) the expected average_precision
    is scikit-learn's macro average precision with ``weights`` as sample weights."""
    rng = np.random.default_rng(4)
    s = rng.dirichlet(np.ones(4), size=200)
    p = rng.dirichlet(np.ones(4), size=200)
    w = rng.integers(1, 5, 200).astype(float)
    auc = []
    for c in range(4):
        y = np.r_[np.ones(200), np.zeros(200)]
        sw = np.r_[w * p[:, c], w * (1 - p[:, c])]
        auc.append(roc_auc_score(y, np.r_[s[:, c], s[:, c]], sample_weight=sw))
    assert expected_roc_auc(s, p, weights=w) == pytest.approx(np.mean(auc), abs=1e-12)
    labels = rng.integers(0, 4, 200)
    known = np.eye(4)[labels]
    assert expected_average_precision(s, known, weights=w) == pytest.approx(
        average_precision_score(known, s, average="macro", sample_weight=w), abs=1e-12)


def _average_precisions(scores: np.ndarray, labels: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """scikit-learn's step-form AP of each row of ``labels`` ((B, m) positives per score row, ``counts`` samples
    per row), ties grouped into one threshold — recounted with cumulative sums, B labellings at once."""
    unique, inverse = np.unique(-scores, return_inverse=True)  # distinct scores, highest first
    tp = np.stack([np.bincount(inverse, weights=row, minlength=unique.size) for row in labels])
    seen = np.cumsum(np.bincount(inverse, weights=counts, minlength=unique.size))
    out: np.ndarray = (tp * np.cumsum(tp, axis=1) / seen).sum(axis=1) / tp.sum(axis=1)
    return out


@pytest.mark.parametrize(("m", "ties", "binned"), [(60, False, False), (400, True, False), (300, True, True)])
def test_expected_average_precision_is_the_mean_over_labellings_drawn_from_the_posteriors(
        m: int, ties: bool, binned: bool) -> None:
    """The expected average_precision equals the mean of scikit-learn's AP over 20,000 labellings drawn from the
    posteriors (each row's ``weights`` samples drawn independently), within 4 Monte Carlo standard errors plus the
    expansion's O(1/E[P]²); the plug-in AP of the expected weights misses that mean by more than 10 of them."""
    rng = np.random.default_rng(m)
    share = rng.beta(0.5, 1.5, m)
    scores = share + 0.1 * rng.normal(size=m)
    if ties:
        scores = np.round(scores, 1)
    counts = rng.integers(1, 6, m).astype(float) if binned else np.ones(m)
    positives = rng.binomial(counts.astype(int), share, size=(20_000, m)).astype(float)
    positives = positives[positives.sum(axis=1) > 0]
    ap = _average_precisions(scores, positives, counts)
    for row in positives[:20]:  # the recount is scikit-learn's AP on the samples the rows stand for
        y = np.concatenate([np.r_[np.ones(int(k)), np.zeros(int(c - k))] for k, c in zip(row, counts, strict=True)])
        expanded = np.repeat(scores, counts.astype(int))
        assert _average_precisions(scores, row[None], counts)[0] == pytest.approx(
            average_precision_score(y, expanded), abs=1e-12)
    mean, error = float(ap.mean()), float(ap.std() / np.sqrt(ap.size))
    posteriors = np.column_stack([1 - share, share])
    assert expected_average_precision(scores, posteriors, weights=counts) == pytest.approx(mean, abs=4 * error + 1e-3)
    plug_in = weighted_average_precision(scores, counts * share, counts * (1 - share))
    assert abs(plug_in - mean) > 10 * error


@pytest.mark.parametrize("share", [1e-7, 1e-17, 1e-120, 1e-300])
def test_a_class_expected_almost_never_has_no_expected_average_precision(share: float) -> None:
    """A class with (practically) no expected positive has no expected AP: NaN, left out of the macro mean — it was
    −0.25 at shares of 1e-17 (rounding in the expansion's cancelling ~1/μ terms) and a ZeroDivisionError, failing
    the whole report, below 1e-103. The other class's value is then scikit-learn's AP of its known labels."""
    scores = np.array([[0.9, 0.05, 0.05], [0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.3, 0.6, 0.1]])
    posteriors = np.array([[1.0 - share, 0.0, share], [1.0 - share, 0.0, share], [0.0, 1.0 - share, share],
                           [0.0, 1.0 - share, share]])
    assert np.isnan(expected_average_precision(scores[:, 2], posteriors, positive=2))
    known = np.array([0, 0, 1, 1])
    want = np.mean([average_precision_score(known == c, scores[:, c]) for c in (0, 1)])
    assert expected_average_precision(scores, posteriors) == pytest.approx(want, abs=1e-6)


def test_a_window_of_one_class_predicted_with_certainty_reads_its_expected_values() -> None:
    """A monitor with a K = 3 ``Validation`` baseline whose window holds only predictions of one class with
    probability 1: EM puts the whole mix on that class, and the report (and a scrape) succeeds — it raised
    ZeroDivisionError. The expected values are those of a window of that class alone, all predicted right: AP 1.0
    (every sample its positive), ACSA 1.0 over the one class present (it read 1/3: the classes EM gives ~1e-17
    counted as present with recall 0), and ROC AUC undefined (no class has both positives and negatives)."""
    from prometheus_client import CollectorRegistry, generate_latest

    from streammon import Cumulative, Monitor, Validation
    from streammon.export import MonitorCollector

    rng = np.random.default_rng(0)
    y = rng.choice(3, 400, p=[0.5, 0.3, 0.2])
    p = rng.dirichlet(np.ones(3), 400) + np.eye(3)[y]
    p /= p.sum(axis=1, keepdims=True)
    m = Monitor([Cumulative()], reference={0: 5, 1: 3, 2: 2}, baseline=Validation(y, p.argmax(axis=1), p),
                detector=None)
    m.predict_many(list(range(6)), [0] * 6, y_score=np.tile([1.0, 0.0, 0.0], (6, 1)))
    w = m.report().windows["cumulative"]
    assert w.estimate is not None and w.estimate.method == "em"
    assert w.estimate.priors[0] == pytest.approx(1.0, abs=1e-9)
    assert w.expected["average_precision"] == pytest.approx(average_precision_score(np.ones(6), np.ones(6)))
    assert w.expected["acsa"] == pytest.approx(1.0) and w.expected["accuracy"] == pytest.approx(1.0)
    assert np.isnan(w.expected["roc_auc"])
    registry = CollectorRegistry()
    collector = MonitorCollector()
    collector.add("m", m)
    registry.register(collector)
    assert b"streammon_" in generate_latest(registry)


def test_one_class_weighing_nothing_leaves_roc_auc_undefined() -> None:
    """All posterior mass on one class: no negatives, so roc_auc is NaN (never a 0 that looks real)."""
    assert np.isnan(weighted_roc_auc([0.2, 0.4], [1.0, 1.0], [0.0, 0.0]))


def _scores(rng: np.random.Generator, y: np.ndarray) -> np.ndarray:
    return special.expit(2.0 * (2.0 * y - 1.0) + 1.5 * rng.normal(size=y.size))


@pytest.mark.parametrize("k", [2, 3])
def test_mix_test_false_alarms_stay_at_or_below_alpha_under_pure_label_shift(k: int) -> None:
    """Windows drawn from the validation's class-conditional score laws at random mixes are flagged at 5 % in at
    most 8 % of 300 trials (binomial noise on 5 %: 2.3 standard errors), validation of 1,000 samples included."""
    rng = np.random.default_rng(20 + k)
    centres = 2.0 * np.eye(k)
    alarms = 0
    trials = 300
    for _ in range(trials):
        yv = rng.integers(0, k, 1000)
        if k == 2:
            sv = _scores(rng, yv)
            binning = make_binning(sv, 2)
        else:
            sv = special.softmax(centres[yv] + rng.normal(size=(yv.size, k)), axis=1)
            binning = make_binning(sv, k)
        cells = class_cell_counts(binning.assign(sv), yv, k, binning.cells)
        yw = rng.choice(k, 2000, p=rng.dirichlet(np.ones(k)))
        sw = _scores(rng, yw) if k == 2 else special.softmax(centres[yw] + rng.normal(size=(yw.size, k)), axis=1)
        alarms += mix_test(cells, np.bincount(binning.assign(sw), minlength=binning.cells)).p_value < 0.05
    assert alarms / trials <= 0.08


def test_mix_test_refuses_what_it_cannot_test() -> None:
    """Mis-shaped counts are ValueErrors; an empty window or too few cells give NaN and a reason."""
    with pytest.raises(ValueError, match="window must be 3 non-negative counts"):
        mix_test(np.ones((2, 3)), [1, 2])
    assert np.isnan(mix_test(np.ones((2, 3)), [0, 0, 0]).p_value)
    assert "cells cannot test" in mix_test(np.ones((3, 3)), [1, 2, 3]).reason
