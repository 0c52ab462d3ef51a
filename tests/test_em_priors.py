"""EM after BCTS: the calibration against scipy.optimize on the same NLL, EM against a brute-force maximum of the
mixture likelihood, the intervals' coverage in a simulation with a known truth."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import optimize, special

from streammon.metrics.calibration import calibration_covariance, fit_bcts
from streammon.metrics.em_priors import em_priors, estimate_mix, mix_posteriors


def _probabilities(rng: np.random.Generator, y: np.ndarray, k: int, strength: float = 1.5) -> np.ndarray:
    """A miscalibrated model's probabilities: noisy logits favouring the true class, over-sharpened by 2."""
    logits = rng.normal(size=(y.size, k))
    logits[np.arange(y.size), y] += strength
    return special.softmax(2.0 * logits + np.arange(k) * 0.3, axis=1)


def _scipy_bcts(p: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The BCTS NLL minimised by scipy's L-BFGS directly: θ = (1/T, b₁ … b_{K−1})."""
    logp = np.log(np.maximum(p, 1e-15))

    def nll(theta: np.ndarray) -> float:
        z = theta[0] * logp
        z[:, 1:] += theta[1:]
        return float(w @ (special.logsumexp(z, axis=1) - z[np.arange(y.size), y]))

    start = np.r_[1.0, np.zeros(p.shape[1] - 1)]
    return np.asarray(optimize.minimize(nll, start, method="L-BFGS-B", options={"ftol": 1e-15, "gtol": 1e-10}).x)


@pytest.mark.parametrize("k", [2, 3, 6])
def test_bcts_reaches_the_minimum_scipy_finds_on_the_same_nll(k: int) -> None:
    """Newton's (1/T, b) equals scipy.optimize's minimiser of the weighted validation NLL, at K = 2, 3 and 6."""
    rng = np.random.default_rng(k)
    y = rng.integers(0, k, 800)
    p = _probabilities(rng, y, k)
    w = rng.integers(1, 4, y.size).astype(float)
    fit = fit_bcts(p[:, 1] if k == 2 else p, y, k, weights=w)
    theta = _scipy_bcts(p, y, w)
    assert fit.converged and fit.reason == ""
    assert fit.scale == pytest.approx(theta[0], abs=2e-4)
    assert fit.bias[1:] == pytest.approx(theta[1:], abs=2e-4)


def test_bcts_weights_are_repeated_samples() -> None:
    """A weight of 3 on a sample fits exactly as three copies of it (a histogram stands for its samples)."""
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, 200)
    p = _probabilities(rng, y, 3)
    w = rng.integers(1, 4, y.size)
    weighted = fit_bcts(p, y, 3, weights=w)
    repeated = fit_bcts(np.repeat(p, w, axis=0), np.repeat(y, w), 3)
    assert weighted.scale == pytest.approx(repeated.scale, rel=1e-9)
    assert weighted.bias == pytest.approx(repeated.bias, abs=1e-9)


def test_bcts_rejects_bad_inputs_with_the_value_named() -> None:
    """Out-of-range scores, labels outside [0, K) and negative weights are ValueErrors naming what was expected."""
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\]"):
        fit_bcts(np.array([0.2, 1.5]), np.array([0, 1]), 2)
    with pytest.raises(ValueError, match=r"class indices in \[0, 2\)"):
        fit_bcts(np.array([0.2, 0.5]), np.array([0, 2]), 2)
    with pytest.raises(ValueError, match="weights must be 2 finite non-negative"):
        fit_bcts(np.array([0.2, 0.5]), np.array([0, 1]), 2, weights=[1, -1])
    with pytest.raises(ValueError, match=r"scores must be \(n,\) for K = 2 or \(n, 3\)"):
        fit_bcts(np.array([0.2, 0.5]), np.array([0, 1]), 3)


def _brute_force_mix(ratio: np.ndarray, w: np.ndarray, k: int, step: float) -> np.ndarray:
    """The grid point of the simplex (spacing ``step``) with the largest window log-likelihood Σ w log(π·r)."""
    best, best_value = None, -np.inf
    ticks = np.arange(0.0, 1.0 + step / 2, step)
    for head in itertools.product(ticks, repeat=k - 1):
        last = 1.0 - sum(head)
        if last < -1e-12:
            continue
        pi = np.array([*head, max(last, 0.0)])
        value = float(w @ np.log(np.maximum(ratio @ pi, 1e-300)))
        if value > best_value:
            best, best_value = pi, value
    assert best is not None
    return best


@pytest.mark.parametrize(("k", "mix"), [(2, [0.8, 0.2]), (3, [0.1, 0.3, 0.6]), (3, [0.0, 0.5, 0.5])])
def test_em_finds_the_maximum_likelihood_mix_a_grid_search_finds(k: int, mix: list[float]) -> None:
    """EM's mix maximises the window's mixture likelihood: it agrees with an exhaustive grid search (spacing 0.002
    at K = 2, 0.005 at K = 3, then a finer grid around the best point) — also with a class absent."""
    rng = np.random.default_rng(int(10 * k + 100 * mix[0]))
    source = np.full(k, 1.0 / k)
    y = rng.choice(k, 600, p=mix)
    p = special.softmax(rng.normal(size=(600, k)) + 1.2 * np.eye(k)[y], axis=1)
    w = rng.integers(1, 3, 600).astype(float)
    e = em_priors(p, source, weights=w)
    ratio = p / source
    coarse = _brute_force_mix(ratio, w, k, 0.002 if k == 2 else 0.005)
    assert e.converged and e.method == "em"
    assert np.abs(e.priors - coarse).max() <= 0.006
    value = float(w @ np.log(ratio @ e.priors))
    assert value >= float(w @ np.log(np.maximum(ratio @ coarse, 1e-300))) - 1e-9  # never below the grid's best
    assert e.priors == pytest.approx(mix_posteriors(p, source, e.priors).T @ w / w.sum(), abs=1e-8)


def test_em_with_weights_equals_em_on_the_repeated_rows() -> None:
    """Counts as weights (a histogram's representatives) give the estimate and intervals of the repeated rows."""
    rng = np.random.default_rng(3)
    p = special.softmax(rng.normal(size=(300, 3)), axis=1)
    w = rng.integers(0, 4, 300)
    a = em_priors(p, [0.2, 0.3, 0.5], weights=w)
    b = em_priors(np.repeat(p, w, axis=0), [0.2, 0.3, 0.5])
    assert a.priors == pytest.approx(b.priors, abs=1e-9)
    assert a.lower == pytest.approx(b.lower, abs=1e-9)
    assert a.n == b.n == w.sum()


def test_em_reads_an_empty_window_as_undefined_and_refuses_bad_sources() -> None:
    """No weight: NaN priors, [0, 1] intervals and a reason; a source mix that is not a distribution is refused."""
    e = em_priors(np.full((2, 2), 0.5), [0.5, 0.5], weights=[0, 0])
    assert np.isnan(e.priors).all() and e.reason and e.lower.tolist() == [0, 0]
    with pytest.raises(ValueError, match="source_priors must be 2 positive shares summing to 1"):
        em_priors(np.full((2, 2), 0.5), [0.5, 0.6])


def _gaussian_world(rng: np.random.Generator, n: int, mix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels and a miscalibrated binary score: logit = 3·(class-conditional Gaussian log-odds) + 0.5."""
    y = (rng.random(n) < mix[1]).astype(int)
    x = rng.normal(size=n) + 1.5 * y
    return y, special.expit(3.0 * (1.5 * x - 1.125) + 0.5)


def test_em_after_bcts_intervals_cover_the_window_mix_at_the_nominal_rate() -> None:
    """With the validation's noise included, 95 % intervals of EM after BCTS cover the window's true class share
    in at least 90 % of 200 simulated (validation, window) pairs — the benchmark measures it on real data."""
    rng = np.random.default_rng(11)
    hits = 0
    trials = 200
    for _ in range(trials):
        yv, sv = _gaussian_world(rng, 600, np.array([0.7, 0.3]))
        fit = fit_bcts(sv, yv, 2)
        cov = calibration_covariance(fit, sv, yv)
        mix = rng.dirichlet([1.0, 1.0])
        yw, sw = _gaussian_world(rng, 1000, mix)
        e = estimate_mix(fit, np.bincount(yv, minlength=2) / yv.size, sw, parameter_covariance=cov)
        truth = yw.mean()
        hits += bool(e.lower[1] <= truth <= e.upper[1])
    assert hits / trials >= 0.90
