"""Ranking metrics of saturated scores against scikit-learn: what the bins keep apart reads exactly, what they
tie stays within the documented bin error.

An over-confident model (Gaussian naive Bayes) puts its scores at 0, at 1, at float64's last steps below 1 and
at logits of hundreds. The tail bins give each of the last 40 floats below 1 but one its own bin and split the
low tail finely in |logit|: scores on distinct bins there read scikit-learn's ROC AUC and average precision
exactly, duplicates included (scikit-learn ties exact duplicates as the bins do). Two pairs of floats share a
bin — the last bin holds 1 − 2⁻⁵³ and 1, bin 0 holds 0 and everything below 1e-304 — and a window that ranks
its classes by exactly that difference reads the tie, within ``roc_auc_bin_error`` and
``average_precision_bin_error``, which there are reached.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as skm

from streammon.metrics import (
    average_precision,
    average_precision_bin_error,
    roc_auc,
    roc_auc_bin_error,
    score_tally,
)
from streammon.metrics.score_bins import score_bins

EXACT = 1e-12
ULP = 2.0**-53  # float64's spacing just below 1


def _saturated_values() -> np.ndarray:
    """Distinct scores at the extremes, each (the test checks) in a bin of its own."""
    low = np.array([0.0, 1e-300, 1e-250, 1e-200, 1e-150, 1e-100, 1e-60, 1e-30, 1e-12, 1e-7])
    high = 1.0 - ULP * np.arange(2, 41)  # the last floats below 1 but 1 − 2⁻⁵³
    return np.concatenate((low, [0.5], 1.0 - np.geomspace(1e-6, 1e-14, 6), high, [1.0]))


def _weights(y: np.ndarray, mix: np.ndarray) -> np.ndarray:
    return (mix / (np.bincount(y, minlength=len(mix)) / len(y)))[y]


@pytest.mark.parametrize("seed", range(5))
def test_saturated_scores_in_distinct_bins_read_sklearn_exactly(seed: int) -> None:
    """Scores drawn with repeats from float64's extremes (exact 0 and 1, the last steps below 1, logits beyond
    ±300), the positives skewed high: ROC AUC and AP equal scikit-learn's, as read and at a class mix."""
    values = _saturated_values()
    assert len(np.unique(score_bins(values))) == len(values)  # the law's premise: no two values share a bin
    rng = np.random.default_rng(seed)
    n = 3000
    y = (rng.random(n) < 0.15).astype(int)
    rank = np.clip(rng.normal(0.55 + 0.35 * y, 0.3) * len(values), 0, len(values) - 1).astype(int)
    s = values[rank]
    t = score_tally(y, s, 2)
    assert roc_auc(t) == pytest.approx(skm.roc_auc_score(y, s), abs=EXACT)
    assert average_precision(t) == pytest.approx(skm.average_precision_score(y, s), abs=EXACT)
    mix = np.array([0.98, 0.02])
    w = _weights(y, mix)
    assert average_precision(t, priors=mix) == pytest.approx(skm.average_precision_score(y, s, sample_weight=w),
                                                             abs=EXACT)
    assert roc_auc(t, priors=mix) == pytest.approx(skm.roc_auc_score(y, s, sample_weight=w), abs=EXACT)


def test_saturated_multiclass_scores_read_sklearn_exactly() -> None:
    """K = 3 rows of exact 0, ½ and 1 (a saturated model's one-hot and two-way ties): Hand & Till's and
    one-vs-rest ROC AUC and the macro AP equal scikit-learn's."""
    rng = np.random.default_rng(4)
    y = np.concatenate([np.arange(3), rng.integers(0, 3, 900)])
    rows = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0.5, 0.5, 0], [0, 0.5, 0.5], [0.5, 0, 0.5]])
    pick = np.where(rng.random(len(y)) < 0.7, y, rng.integers(0, 6, len(y)))
    p = rows[pick]
    t = score_tally(y, p, 3)
    assert roc_auc(t) == pytest.approx(skm.roc_auc_score(y, p, multi_class="ovo"), abs=EXACT)
    assert roc_auc(t, multi_class="ovr") == pytest.approx(skm.roc_auc_score(y, p, multi_class="ovr"), abs=EXACT)
    assert average_precision(t) == pytest.approx(skm.average_precision_score(np.eye(3)[y], p), abs=EXACT)


@pytest.mark.parametrize(("positive_score", "negative_score"), [(1.0, 1.0 - ULP), (1e-310, 0.0), (1e-305, 5e-324)])
def test_floats_that_share_a_bin_read_tied_within_the_bound(positive_score: float, negative_score: float) -> None:
    """Positives at 1 and negatives at 1 − 2⁻⁵³ (the last bin), or both below 1e-304 (bin 0) with nothing
    else to rank them: scikit-learn ranks every positive first (AUC 1, AP 1); the tally ties them (AUC ½, AP
    the prevalence), and the bin errors say so: the gaps equal them."""
    assert score_bins(np.array([positive_score]))[0] == score_bins(np.array([negative_score]))[0]
    y = np.r_[np.ones(30, int), np.zeros(70, int)]
    s = np.where(y == 1, positive_score, negative_score)
    t = score_tally(y, s, 2)
    assert skm.roc_auc_score(y, s) == 1.0 and skm.average_precision_score(y, s) == 1.0
    assert roc_auc(t) == 0.5 and average_precision(t) == pytest.approx(0.3, abs=EXACT)
    assert roc_auc_bin_error(t) == pytest.approx(0.5, abs=EXACT)
    assert average_precision_bin_error(t) == pytest.approx(1.0 - 0.3, abs=EXACT)


def test_a_pool_resampled_with_ties_across_classes_reads_within_the_bound() -> None:
    """The pattern behind the benchmark's largest AP errors (gradient boosting on wine and Phishing): a few
    distinct scores within one bin, each repeated many times, some scored identically for both classes (equal
    features). As read and at a mix, AP stays within its bin error; at the duplicates' own ties it is exact."""
    rng = np.random.default_rng(28)
    for _ in range(30):
        pool_s = 0.33 + 4e-4 * rng.integers(0, 6, 12)  # six distinct scores, ~one bin wide at ⅓
        pool_y = rng.integers(0, 2, 12)
        rows = rng.integers(0, 12, 800)
        above = rng.random(200)  # scores elsewhere, so the bin sits mid-ranking
        y = np.r_[pool_y[rows], (rng.random(200) < 0.8).astype(int)]
        s = np.r_[pool_s[rows], 0.5 + 0.4 * above]
        t = score_tally(y, s, 2)
        gap = abs(average_precision(t) - skm.average_precision_score(y, s))
        assert gap <= average_precision_bin_error(t) + EXACT
        mix = rng.dirichlet([1, 1])
        gap = abs(average_precision(t, priors=mix) - skm.average_precision_score(y, s, sample_weight=_weights(y, mix)))
        assert gap <= average_precision_bin_error(t, priors=mix) + EXACT
    y = np.r_[np.ones(40, int), np.zeros(60, int)]
    s = np.full(100, 0.3301)  # every sample one score: scikit-learn ties them as the bin does
    t = score_tally(y, s, 2)
    assert average_precision(t) == pytest.approx(skm.average_precision_score(y, s), abs=EXACT)
