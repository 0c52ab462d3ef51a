"""BCTS on scores that take few values: the probabilities are clipped at half the validation set's smallest
non-zero one before their log (``calibration.probability_floor``), not at 1e-15 — checked against a BCTS written
here and minimised by scipy, and against the flattening the old clip caused."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import log_softmax

from streammon.metrics.calibration import CLIP, fit_bcts, probability_floor


def _knn(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Validation labels and the scores of a 15-NN model (multiples of 1/15, many exactly 0 or 1, a few of them
    confidently wrong) on overlapping Gaussian classes."""
    from sklearn.neighbors import KNeighborsClassifier

    rng = np.random.default_rng(seed)
    y = (rng.random(6_000) < 0.3).astype(int)
    x = rng.normal(size=(6_000, 4)) + 1.2 * y[:, None] * np.array([1.0, 0.5, 0.0, 0.3])
    model = KNeighborsClassifier(15).fit(x[:3_000], y[:3_000])
    return y[3_000:], model.predict_proba(x[3_000:])[:, 1]


def _scipy_bcts(scores: np.ndarray, y: np.ndarray, floor: float) -> np.ndarray:
    logp = np.log(np.maximum(np.column_stack([1 - scores, scores]), floor))

    def nll(theta: np.ndarray) -> float:
        z = theta[0] * logp + np.array([0.0, theta[1]])
        return float(-log_softmax(z, axis=1)[np.arange(len(y)), y].sum())

    return np.asarray(minimize(nll, np.array([1.0, 0.0]), method="BFGS", options={"gtol": 1e-10}).x)


def test_the_floor_is_half_the_smallest_step_and_the_fit_is_scipys() -> None:
    y, s = _knn(0)
    assert np.any((s == 0) & (y == 1)) and np.any((s == 1) & (y == 0))
    floor = probability_floor(s, 2)
    assert floor == pytest.approx(0.5 / 15)
    fit = fit_bcts(s, y, 2)
    assert fit.floor == floor and fit.converged
    a, b = _scipy_bcts(s, y, floor)
    assert fit.scale == pytest.approx(a, rel=1e-4) and fit.bias[1] == pytest.approx(b, rel=1e-4, abs=1e-4)
    # what the old clip at 1e-15 fitted: a temperature that flattens every posterior (1/T ~ 0.14)
    old = _scipy_bcts(s, y, CLIP)
    assert old[0] < 0.3 and fit.scale > 0.7
    # the floored fit's posteriors follow the labels' frequency at each of the 16 score values (a recount), the
    # old fit's are squashed: mean |posterior − frequency| over the samples
    p = fit.apply(s)[:, 1]
    z = old[0] * np.log(np.maximum(np.column_stack([1 - s, s]), CLIP)) + np.array([0.0, old[1]])
    p_old = np.exp(z[:, 1]) / np.exp(z).sum(axis=1)

    def reliability(posterior: np.ndarray) -> float:
        return float(sum(np.sum(s == v) * abs(posterior[s == v].mean() - y[s == v].mean()) for v in np.unique(s))
                     / len(s))

    assert reliability(p) < 0.04 and reliability(p_old) > 3 * reliability(p)  # 0.029 and 0.153


def test_continuous_scores_keep_a_floor_far_below_them() -> None:
    rng = np.random.default_rng(4)
    y = (rng.random(2_000) < 0.4).astype(int)
    s = 1 / (1 + np.exp(-(rng.normal(size=2_000) + 2.5 * (2 * y - 1))))
    floor = probability_floor(s, 2)
    assert floor <= 0.5 * min(s.min(), (1 - s).max() and (1 - s).min())
    fit = fit_bcts(s, y, 2)
    a, b = _scipy_bcts(s, y, floor)
    assert fit.scale == pytest.approx(a, rel=1e-4) and fit.bias[1] == pytest.approx(b, rel=1e-4, abs=1e-4)


def test_a_floor_outside_the_probabilities_is_refused() -> None:
    with pytest.raises(ValueError, match=r"floor must be a probability in \[1e-15, 1\), got 1.0"):
        fit_bcts(np.array([0.2, 0.8]), np.array([0, 1]), 2, floor=1.0)


def test_integer_weights_fit_as_repeated_samples_and_bad_weights_are_refused_clearly() -> None:
    """Weights are counts: a fit with integer weights is the fit of the samples repeated (the floor included, a
    zero weight drops its sample's score from it); weights of another length are a ``ValueError`` naming them in
    ``fit_bcts`` and ``probability_floor`` (they were a numpy IndexError once the floor read them unchecked)."""
    rng = np.random.default_rng(5)
    s = rng.integers(0, 16, 300) / 15
    y = (rng.random(300) < 0.2 + 0.6 * s).astype(int)
    w = rng.integers(0, 4, 300)
    w[np.argmin(np.where(s > 0, s, 2.0))] = 0  # the smallest non-zero score carries no weight
    weighted = fit_bcts(s, y, 2, weights=w)
    repeated = fit_bcts(np.repeat(s, w), np.repeat(y, w), 2)
    assert weighted.floor == repeated.floor == probability_floor(s, 2, w)
    assert weighted.scale == pytest.approx(repeated.scale, rel=1e-8)
    assert weighted.bias[1] == pytest.approx(repeated.bias[1], rel=1e-8, abs=1e-10)
    with pytest.raises(ValueError, match=r"weights must be 300 finite non-negative numbers, got \[1, 2\]"):
        fit_bcts(s, y, 2, weights=[1, 2])
    with pytest.raises(ValueError, match=r"weights must be 300 sample weights, one per score row, got shape \(2,\)"):
        probability_floor(s, 2, [1, 2])
