"""The score metrics read from a window's score tally agree with scikit-learn on the window's samples.

Ranking metrics (ROC AUC, average precision) are exact on scores that the bins cannot split further (each
score replaced by its bin's lower edge: the tally is the same, scikit-learn then sees the ties the bins see),
and within the documented bin error on the raw scores; Brier score and log loss are exact on the raw scores;
ECE equals a recount by brute force. The values at a class mix equal scikit-learn's with the sample weights
``π_c / (n_c / n)`` on every sample of class c.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn import metrics as skm

from streammon.metrics import (
    average_precision,
    average_precision_bin_error,
    average_precision_interval,
    brier,
    ece,
    log_loss,
    roc_auc,
    roc_auc_bin_error,
    roc_auc_interval,
    score_tally,
)
from streammon.metrics.score_bins import CLIP, bin_edges, score_bins

EXACT = 1e-9


def _data(seed: int, k: int, n: int, *, skew: float = 0.6) -> tuple[np.ndarray, np.ndarray]:
    """Labels with every class present and a skewed mix; softmax scores that separate the classes partly
    (binary: the score of class 1)."""
    rng = np.random.default_rng(seed)
    mix = rng.dirichlet(np.ones(k) * skew)
    y = np.concatenate([np.arange(k), rng.choice(k, size=n - k, p=mix)])
    z = rng.normal(size=(n, k)) * rng.uniform(0.5, 3.0)
    z[np.arange(n), y] += rng.uniform(0.5, 3.0)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return y, (p[:, 1] if k == 2 else p)


def _quantized(scores: np.ndarray) -> np.ndarray:
    """Each score replaced by its bin's lower edge: the same bins, and ties wherever the bins see ties."""
    return bin_edges()[score_bins(scores)]


def _grid(scores: np.ndarray, seed: int) -> np.ndarray:
    """Scores on the grid of multiples of 1/64 (K > 2: rows of 64 draws from each sample's probabilities, so
    they still sum to 1 exactly). Distinct grid values never share a bin (the widest bin, at ½, is 0.0036 wide),
    so the bins lose nothing and scikit-learn's ties are the bins' ties."""
    if scores.ndim == 1:
        return np.round(scores * 64) / 64
    rng = np.random.default_rng(seed)
    return np.array([rng.multinomial(64, row / row.sum()) for row in scores]) / 64


def _weights(y: np.ndarray, mix: np.ndarray) -> np.ndarray:
    """scikit-learn's sample weights that move a window to the mix: π_c / (n_c / n) on each sample of class c."""
    share = np.bincount(y, minlength=len(mix)) / len(y)
    return (mix / share)[y]


def _sk(y: np.ndarray, s: np.ndarray, k: int, w: np.ndarray | None = None) -> dict[str, float]:
    """scikit-learn's five values (ROC AUC as one-vs-rest when weighted: its one-vs-one takes no weights)."""
    out = {"ap": skm.average_precision_score(y if k == 2 else np.eye(k)[y], s, sample_weight=w),
           "brier": skm.brier_score_loss(y, s, sample_weight=w, labels=list(range(k))),
           "log_loss": skm.log_loss(y, np.clip(s, CLIP, 1 - CLIP), sample_weight=w, labels=list(range(k)))}
    if k == 2:
        out["auc"] = skm.roc_auc_score(y, s, sample_weight=w)
    else:
        out["ovr"] = skm.roc_auc_score(y, s, multi_class="ovr", sample_weight=w)
        if w is None:
            out["ovo"] = skm.roc_auc_score(y, s, multi_class="ovo")
    return out


def _ours(t: tuple, k: int, priors: np.ndarray | None = None) -> dict[str, float]:
    out = {"ap": average_precision(t, priors=priors), "brier": brier(t, priors=priors),
           "log_loss": log_loss(t, priors=priors)}
    if k == 2:
        out["auc"] = roc_auc(t, priors=priors)
    else:
        out["ovr"] = roc_auc(t, priors=priors, multi_class="ovr")
        out["ovo"] = roc_auc(t, priors=priors)
    return out


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("seed", range(6))
def test_values_equal_sklearn_on_the_binned_scores(k: int, seed: int) -> None:
    """On scores the bins cannot split further, every metric equals scikit-learn's, as read and at a mix."""
    y, s = _data(seed, k, 300 + 97 * seed)
    q = _grid(s, seed)
    t = score_tally(y, q, k)
    ours, theirs = _ours(t, k), _sk(y, q, k)
    assert set(theirs) <= set(ours)
    for name, value in theirs.items():
        assert ours[name] == pytest.approx(value, abs=EXACT), name
    mix = np.random.default_rng(seed + 100).dirichlet(np.ones(k))
    ours, theirs = _ours(t, k, mix), _sk(y, q, k, _weights(y, mix))
    for name, value in theirs.items():
        assert ours[name] == pytest.approx(value, abs=EXACT), name


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("seed", range(6))
def test_raw_scores_read_within_the_bin_error(k: int, seed: int) -> None:
    """On raw scores ROC AUC and AP stay within their computed bin errors (and 0.005), Brier and log loss exact."""
    y, s = _data(seed, k, 2000)
    t = score_tally(y, s, k)
    ours, theirs = _ours(t, k), _sk(y, s, k)
    for name in ("brier", "log_loss"):
        assert ours[name] == pytest.approx(theirs[name], abs=EXACT), name
    assert abs(ours["ap"] - theirs["ap"]) <= min(0.005, average_precision_bin_error(t) + EXACT)
    for name, multi in (("auc", "ovo"), ("ovo", "ovo"), ("ovr", "ovr")):
        if name in theirs:
            bound = roc_auc_bin_error(t, multi_class=multi)
            assert abs(ours[name] - theirs[name]) <= bound + EXACT, name
            assert bound < 0.002


@pytest.mark.parametrize("k", [2, 3, 10])
def test_corrected_values_equal_sklearn_with_sample_weights(k: int) -> None:
    """At a random mix, Brier and log loss equal scikit-learn's weighted values exactly; AUC (OvR) and AP within
    their bin errors at that mix."""
    for seed in range(4):
        y, s = _data(seed + 50, k, 1500)
        mix = np.random.default_rng(seed).dirichlet(np.ones(k))
        t = score_tally(y, s, k)
        ours, theirs = _ours(t, k, mix), _sk(y, s, k, _weights(y, mix))
        for name in ("brier", "log_loss"):
            assert ours[name] == pytest.approx(theirs[name], abs=EXACT), name
        assert abs(ours["ap"] - theirs["ap"]) <= min(0.005, average_precision_bin_error(t, priors=mix) + EXACT)
        name, multi = ("auc", "ovo") if k == 2 else ("ovr", "ovr")
        assert abs(ours[name] - theirs[name]) <= roc_auc_bin_error(t, priors=mix, multi_class=multi) + EXACT


def _ece(y: np.ndarray, s: np.ndarray, w: np.ndarray) -> float:
    """Guo et al.'s ECE recounted sample by sample: 15 equal-width bins [b/15, (b+1)/15), the last closed."""
    probs = np.column_stack([1 - s, s]) if s.ndim == 1 else s
    total, gaps = 0.0, {}
    for row, truth, weight in zip(probs, y, w, strict=True):
        top = int(np.argmax(row))
        b = min(int(row[top] * 15), 14)
        acc, conf = gaps.get(b, (0.0, 0.0))
        gaps[b] = (acc + weight * (top == truth), conf + weight * row[top])
        total += weight
    return sum(abs(acc - conf) for acc, conf in gaps.values()) / total


@pytest.mark.parametrize("k", [2, 3, 10])
def test_ece_equals_a_recount_as_read_and_at_a_mix(k: int) -> None:
    """ECE from the top-label bins equals a sample-by-sample recount, with and without class weights."""
    y, s = _data(k, k, 800)
    t = score_tally(y, s, k)
    assert ece(t) == pytest.approx(_ece(y, s, np.ones(len(y))), abs=EXACT)
    mix = np.random.default_rng(k).dirichlet(np.ones(k))
    assert ece(t, priors=mix) == pytest.approx(_ece(y, s, _weights(y, mix)), abs=EXACT)


def test_ties_and_certain_scores_equal_sklearn() -> None:
    """Scores with many ties (one decimal) and scores of exactly 0 and 1 read scikit-learn's values exactly."""
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 500)
    for s in (np.round(np.clip(0.3 * y + rng.random(500) * 0.7, 0, 1), 1),
              np.where(rng.random(500) < 0.8, y, 1 - y).astype(float)):
        t = score_tally(y, s, 2)
        assert roc_auc(t) == pytest.approx(skm.roc_auc_score(y, s), abs=EXACT)
        assert average_precision(t) == pytest.approx(skm.average_precision_score(y, s), abs=EXACT)
        assert brier(t) == pytest.approx(skm.brier_score_loss(y, s), abs=EXACT)
        assert log_loss(t) == pytest.approx(skm.log_loss(y, np.clip(s, CLIP, 1 - CLIP)), abs=EXACT)


def test_positive_class_zero_reads_as_sklearn_with_pos_label_zero() -> None:
    """With positive = 0 the one score column is class 0's: the metrics equal scikit-learn's pos_label=0 ones."""
    y, s1 = _data(3, 2, 600)
    s0 = _quantized(1 - s1)
    t = score_tally(y, s0, 2, positive=0)
    assert roc_auc(t, positive=0) == pytest.approx(skm.roc_auc_score(y == 0, s0), abs=EXACT)
    assert average_precision(t, positive=0) == pytest.approx(skm.average_precision_score(y, s0, pos_label=0),
                                                             abs=EXACT)
    assert brier(t, positive=0) == pytest.approx(skm.brier_score_loss(y, s0, pos_label=0), abs=EXACT)
    assert log_loss(t, positive=0) == pytest.approx(skm.log_loss(y == 0, np.clip(s0, CLIP, 1 - CLIP)), abs=EXACT)


def test_a_class_absent_reads_nan_or_the_mean_over_the_classes_present() -> None:
    """Binary: no negatives or no positives → ROC AUC NaN, AP NaN without positives (scikit-learn: a warning
    and 0), 1 without negatives. K = 3 with class 2 absent: the macro means over the classes (pairs) present."""
    t = score_tally(np.array([1, 1, 1]), np.array([0.2, 0.6, 0.9]), 2)
    assert math.isnan(roc_auc(t)) and math.isnan(roc_auc_bin_error(t)) and average_precision(t) == 1.0
    assert math.isnan(average_precision(score_tally(np.array([0, 0]), np.array([0.2, 0.6]), 2)))
    y, p = _data(11, 3, 400)
    keep = y != 2
    y, p = y[keep], _quantized(p[keep])
    t = score_tally(y, p, 3)
    pairs = [(skm.roc_auc_score(y == 0, p[:, 0]) + skm.roc_auc_score(y == 1, p[:, 1])) / 2]  # Hand & Till, (0, 1)
    assert roc_auc(t) == pytest.approx(np.mean(pairs), abs=EXACT)
    assert roc_auc(t, multi_class="ovr") == pytest.approx(
        np.mean([skm.roc_auc_score(y == c, p[:, c]) for c in (0, 1)]), abs=EXACT)
    assert average_precision(t) == pytest.approx(
        np.mean([skm.average_precision_score(y == c, p[:, c]) for c in (0, 1)]), abs=EXACT)
    assert math.isnan(roc_auc(t, priors=[0.3, 0.3, 0.4]))  # class 2 has a share at that mix but no scores


def test_an_empty_window_reads_nan_everywhere() -> None:
    """No samples: every score metric is NaN, never 0."""
    t = score_tally(np.array([], dtype=int), np.zeros((0, 3)), 3)
    for f in (roc_auc, roc_auc_bin_error, average_precision, brier, log_loss, ece):
        assert math.isnan(f(t)), f.__name__


def test_the_auc_bin_error_bound_holds_and_is_reached() -> None:
    """A positive and a negative in one bin: the tally reads ½ and the bound is ½, reached by the exact AUC."""
    s = np.array([0.5000001, 0.5000002])
    for y in (np.array([0, 1]), np.array([1, 0])):
        t = score_tally(y, s, 2)
        assert roc_auc(t) == 0.5 and roc_auc_bin_error(t) == 0.5
        assert abs(skm.roc_auc_score(y, s) - roc_auc(t)) == 0.5
    rng = np.random.default_rng(3)  # crowded scores: many pairs share bins
    y = rng.integers(0, 2, 3000)
    s = 0.5 + 1e-4 * (rng.random(3000) + 0.3 * y)
    t = score_tally(y, s, 2)
    assert abs(skm.roc_auc_score(y, s) - roc_auc(t)) <= roc_auc_bin_error(t) + EXACT
    assert roc_auc_bin_error(t) > 0.01


def _delong_variance(y: np.ndarray, s: np.ndarray) -> float:
    """DeLong's variance from the samples' placements (midranks): the textbook computation, pair by pair."""
    pos, neg = s[y == 1], s[y == 0]
    v10 = np.array([np.mean((neg < x) + 0.5 * (neg == x)) for x in pos])
    v01 = np.array([np.mean((pos > x) + 0.5 * (pos == x)) for x in neg])
    return float(np.var(v10, ddof=1) / len(pos) + np.var(v01, ddof=1) / len(neg))


def test_delong_interval_from_bins_is_delongs_on_the_binned_scores() -> None:
    """The interval's half-width is z·√(DeLong's variance) of the binned scores, computed sample by sample."""
    y, s = _data(5, 2, 700)
    q = _quantized(s)
    low, high = roc_auc_interval(score_tally(y, q, 2))
    auc = skm.roc_auc_score(y, q)
    half = 1.959963984540054 * math.sqrt(_delong_variance(y, q))
    assert (low, high) == pytest.approx((max(0.0, auc - half), min(1.0, auc + half)), abs=1e-9)
    assert roc_auc_interval(score_tally(np.array([0, 1, 1]), np.array([0.1, 0.5, 0.9]), 2)) == (
        pytest.approx(math.nan, nan_ok=True), pytest.approx(math.nan, nan_ok=True))


def test_delong_interval_covers_the_true_auc() -> None:
    """95 % DeLong intervals from the bins cover the binormal model's true AUC in at least 93 % of 400 windows."""
    rng = np.random.default_rng(2024)
    shift = 1.2
    true_auc = 0.5 * math.erfc(-shift / 2)  # Φ(shift/√2) for unit-variance normals
    covered = 0
    for _ in range(400):
        n_pos = int(rng.integers(20, 200))
        y = np.concatenate([np.ones(n_pos, int), np.zeros(400 - n_pos, int)])
        s = 1 / (1 + np.exp(-(rng.normal(size=400) + shift * y)))
        low, high = roc_auc_interval(score_tally(y, s, 2))
        covered += low <= true_auc <= high
    assert covered / 400 >= 0.93


def test_over_confident_scores_read_within_the_targets() -> None:
    """Scores at naive-Bayes extremes (logits spread over ±300, many exactly 0 or within a few float steps of
    1) still read ROC AUC and AP within 0.002 of scikit-learn: the tails of the bins keep them apart."""
    rng = np.random.default_rng(12)
    y = rng.integers(0, 2, 4000)
    logit = rng.normal(0, 120, 4000) + 60 * y
    s = 1 / (1 + np.exp(-logit))
    s[:200] = 1 - rng.integers(1, 30, 200) * 2.0**-53  # the last float steps below 1
    t = score_tally(y, s, 2)
    assert abs(roc_auc(t) - skm.roc_auc_score(y, s)) <= min(0.002, roc_auc_bin_error(t) + EXACT)
    assert abs(average_precision(t) - skm.average_precision_score(y, s)) <= 0.002


def test_the_ap_bin_error_bound_holds_on_crowded_scores_and_is_reached() -> None:
    """Every order of a bin's samples reads within the AP bound: crowded scores at K = 2 and 3, as read and at a
    mix; a lone positive and negative in one bin reach it (tied ½, exact 1 when the positive ranks first)."""
    y, s = np.array([1, 0]), np.array([0.5000002, 0.5000001])
    t = score_tally(y, s, 2)
    assert abs(skm.average_precision_score(y, s) - average_precision(t)) == average_precision_bin_error(t) == 0.5
    rng = np.random.default_rng(8)
    for k in (2, 3):
        y = rng.integers(0, k, 2000)
        z = 0.5 + 2e-4 * (rng.random((2000, k)) + 0.5 * np.eye(k)[y])  # a few dozen bins hold everything
        p = z / z.sum(axis=1, keepdims=True)
        s = p[:, 1] if k == 2 else p
        t = score_tally(y, s, k)
        onehot = y if k == 2 else np.eye(k)[y]
        mix = rng.dirichlet(np.ones(k))
        weights = (mix / (np.bincount(y, minlength=k) / len(y)))[y]
        gap = abs(average_precision(t) - skm.average_precision_score(onehot, s))
        assert gap <= average_precision_bin_error(t) + EXACT
        assert abs(average_precision(t, priors=mix) - skm.average_precision_score(onehot, s, sample_weight=weights)) \
            <= average_precision_bin_error(t, priors=mix) + EXACT


def test_the_ap_bin_error_bound_holds_when_the_raw_scores_tie() -> None:
    """A window resampled from few distinct scores (scikit-learn ties the duplicates) reads within the AP bound."""
    rng = np.random.default_rng(21)
    for _ in range(20):
        pool_y = rng.integers(0, 2, 40)
        pool_s = 0.5 + 3e-3 * rng.random(40) + 1e-3 * pool_y  # a handful of bins
        rows = rng.integers(0, 40, 600)
        y, s = pool_y[rows], pool_s[rows]
        t = score_tally(y, s, 2)
        assert abs(average_precision(t) - skm.average_precision_score(y, s)) <= average_precision_bin_error(t) + EXACT


@pytest.mark.parametrize("positive", [0, 1])
def test_a_two_column_binary_tally_reads_the_positive_column(positive: int) -> None:
    """K = 2 with an (n, 2) probability array reads as the 1-D score of class ``positive`` (scikit-learn's
    values for that class)."""
    y, s1 = _data(31, 2, 500)
    probs = np.column_stack([1 - s1, s1])
    t2 = score_tally(y, probs, 2, positive=positive)
    truth = (y == positive).astype(int)
    s = probs[:, positive]
    assert roc_auc(t2, positive=positive) == pytest.approx(skm.roc_auc_score(truth, s), abs=roc_auc_bin_error(
        t2, positive=positive) + EXACT)
    assert brier(t2, positive=positive) == pytest.approx(skm.brier_score_loss(truth, s), abs=EXACT)
    assert log_loss(t2, positive=positive) == pytest.approx(skm.log_loss(truth, np.clip(s, CLIP, 1 - CLIP)),
                                                            abs=EXACT)
    assert ece(t2) == pytest.approx(_ece(y, probs, np.ones(len(y))), abs=EXACT)


def test_average_precision_interval_covers_the_population_value() -> None:
    """95 % bootstrap intervals from the bins cover the binormal population's AP (prevalence 0.2, 200
    positives per window) in at least 93 % of 200 windows, and bad arguments raise."""
    rng = np.random.default_rng(9)
    y_pop = (rng.random(1_000_000) < 0.2).astype(int)
    truth = skm.average_precision_score(y_pop, rng.normal(size=1_000_000) + 1.2 * y_pop)
    y = np.r_[np.ones(200, int), np.zeros(800, int)]
    covered = 0
    for _ in range(200):
        low, high = average_precision_interval(score_tally(y, 1 / (1 + np.exp(-(rng.normal(size=1000) + 1.2 * y))), 2))
        covered += low <= truth <= high
    assert covered / 200 >= 0.93
    t = score_tally(y, rng.random(1000), 2)
    with pytest.raises(ValueError, match="draws must be an int >= 2"):
        average_precision_interval(t, draws=1)
    with pytest.raises(ValueError, match="binary-only"):
        average_precision_interval(score_tally(np.array([0, 1, 2]), np.eye(3), 3))
    assert all(math.isnan(v) for v in average_precision_interval(score_tally(np.array([0, 1]), np.array([.2, .8]), 2)))
