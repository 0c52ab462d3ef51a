"""EM after BCTS on a validation set the scores separate: the unsmoothed fit against scipy's L-BFGS on the same NLL
(as QuaPy's BCTS fits it), the unseen-errors term against a brute-force simulation and scipy's Beta moments, and
the intervals' coverage where the validation set showed no error but the windows hold some."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, special, stats

import streammon
from streammon.metrics.calibration import SEPARABLE, fit_bcts
from streammon.metrics.em_priors import mix_posteriors
from streammon.metrics.unseen_errors import error_moments, unseen_error_covariance


def _separable(rng: np.random.Generator, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels and (n, K) probabilities whose argmax is always the label, over-confident in between."""
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), y] += 4.0 + np.abs(rng.normal(size=n))
    return y, special.softmax(logits, axis=1)


def _scipy_nll_floor(p: np.ndarray, y: np.ndarray) -> float:
    """The BCTS NLL (θ = (1/T, b₁ … b_{K−1})) as far as scipy's L-BFGS-B takes it at abstention's tolerance (1e-7)."""
    logp = np.log(np.maximum(p, 1e-15))

    def nll(theta: np.ndarray) -> float:
        z = theta[0] * logp
        z[:, 1:] += theta[1:]
        return float(np.mean(special.logsumexp(z, axis=1) - z[np.arange(y.size), y]))

    start = np.r_[1.0, np.zeros(p.shape[1] - 1)]
    return float(optimize.minimize(nll, start, method="L-BFGS-B", tol=1e-7).fun)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_a_separable_fit_goes_as_far_down_the_nll_as_scipy_and_says_so(k: int) -> None:
    """Where the scores separate the validation set the fit is the labels' own (not Platt's targets), its NLL is no
    higher than scipy's L-BFGS-B reaches, it is marked separable, and its posteriors decide every sample right."""
    rng = np.random.default_rng(k)
    y, p = _separable(rng, 60, k)
    fit = fit_bcts(p[:, 1] if k == 2 else p, y, k)
    assert fit.separable and not fit.smoothed and "separate" in fit.reason
    assert fit.nll < SEPARABLE
    assert fit.nll <= _scipy_nll_floor(p, y) + 1e-9
    posteriors = fit.apply(p[:, 1] if k == 2 else p)
    assert np.array_equal(posteriors.argmax(axis=1), y)
    assert posteriors.min() > 0  # floored: no class impossible for a sample


def test_a_fit_with_a_minimum_is_not_marked_separable() -> None:
    """Overlapping classes: a finite minimum, ``separable`` False."""
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 400)
    s = special.expit((2 * y - 1) + rng.normal(size=400))
    assert not fit_bcts(s, y, 2).separable


def test_one_error_among_many_confident_scores_is_not_separable() -> None:
    """A large validation set of confident scores with one error: its mean NLL at the minimum is below
    ``SEPARABLE`` (one error weighs 1/200,000), yet no threshold separates the classes (a brute-force check: a
    negative scores above the lowest positive) and scipy finds the same finite minimum — not ``separable``."""
    rng = np.random.default_rng(11)
    n = 200_000
    y = (rng.random(n) < 0.3).astype(int)
    s = np.where(y == 1, rng.uniform(0.99, 1.0, n), rng.uniform(0.0, 0.01, n))
    s[np.flatnonzero(y == 0)[0]] = 0.995
    assert s[y == 0].max() > s[y == 1].min()  # no threshold decides every sample right
    fit = fit_bcts(s, y, 2)
    assert fit.converged and fit.nll < SEPARABLE
    assert not fit.separable and "separate" not in fit.reason
    logp = np.log(np.maximum(np.column_stack([1 - s, s]), fit.floor))

    onehot = np.eye(2)[y]

    def nll(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = theta[0] * logp + np.array([0.0, theta[1]])
        r = special.softmax(z, axis=1) - onehot
        gradient = np.array([np.mean(np.sum(r * logp, axis=1)), np.mean(r[:, 1])])
        return float(np.mean(special.logsumexp(z, axis=1) - z[np.arange(n), y])), gradient

    best = optimize.minimize(nll, np.array([1.0, 0.0]), jac=True, method="BFGS", options={"gtol": 1e-12})
    np.testing.assert_allclose([fit.scale, fit.bias[1]], best.x, rtol=1e-3)


@pytest.mark.parametrize(("counts", "shares", "n"), [([18, 21, 14], [8, 12, 20], 40), ([250, 250], [30, 70], 100),
                                                     ([40, 5, 60, 10], [5, 10, 5, 0], 20)])
def test_the_unseen_error_term_is_the_mean_squared_error_of_a_simulation(counts: list[int], shares: list[int],
                                                                          n: int) -> None:
    """The closed form equals the mean outer product of the counted shares' error over a brute-force simulation:
    error rates drawn from Beta(1, n_j + 1), each sample of class j wrong with that rate, its error sent to one of
    the other classes uniformly."""
    rng = np.random.default_rng(len(counts))
    k, trials = len(counts), 200_000
    window = np.asarray(shares)
    eps = rng.beta(1.0, np.asarray(counts) + 1.0, size=(trials, k))
    read = np.tile(window.astype(float), (trials, 1))
    for j in range(k):
        wrong = rng.binomial(window[j], eps[:, j])
        read[:, j] -= wrong
        others = [c for c in range(k) if c != j]
        read[:, others] += rng.multinomial(wrong, np.full(k - 1, 1.0 / (k - 1)))
    error = read / n - window / n
    simulated = error.T @ error / trials
    closed = unseen_error_covariance(window / n, counts, n)
    assert closed == pytest.approx(simulated, abs=3e-5 + 0.03 * np.abs(simulated).max())


def test_the_error_moments_are_the_beta_posteriors() -> None:
    """``E ε`` and ``E ε²`` are scipy's moments of Beta(1, n + 1), the posterior of a rate after n samples, 0 wrong."""
    counts = np.array([0, 1, 17, 500])
    mean, second = error_moments(counts)
    assert mean == pytest.approx(stats.beta(1, counts + 1).mean())
    assert second == pytest.approx(stats.beta(1, counts + 1).moment(2))


@pytest.mark.parametrize(("shares", "counts", "n", "match"), [
    ([0.5, 0.6], [10, 10], 5, "shares"), ([0.5, 0.5], [10], 5, "class_counts"),
    ([0.5, 0.5], [10, -1], 5, "class_counts"), ([0.5, 0.5], [10, 10], 0, "n must"),
    ([0.5, 0.5], [10, 10], "5", "n must")])
def test_bad_input_is_refused_clearly(shares: list[float], counts: list[int], n: object, match: str) -> None:
    """Shares that do not sum to 1, counts that are not K ≥ 2 non-negative numbers, or no window: a ValueError."""
    with pytest.raises(ValueError, match=match):
        unseen_error_covariance(shares, counts, n)  # type: ignore[arg-type]


def test_intervals_cover_the_window_where_the_validation_set_showed_no_error() -> None:
    """A model wrong on ~2 % of samples, validation sets of 60 that it separates, windows of 1,000 that hold errors:
    the 95 % intervals cover the window's shares at 0.9 or more; without the unseen-errors term they would not
    (measured: 1.0 with it, 0.725 without)."""
    rng = np.random.default_rng(11)
    covered, without, separable = [], [], 0
    while separable < 40:
        yv = np.repeat([0, 1], 30)
        sv = special.expit(3.0 * (2 * yv - 1) + 1.5 * rng.normal(size=60))
        if np.any((sv > 0.5) != yv):
            continue  # only validation sets without an error: the case under test
        v = streammon.Validation(yv, (sv > 0.5).astype(int), sv, classes=[0, 1], positive=1, bootstrap=20,
                                 seed=separable)
        if not v.calibration.separable:
            continue
        separable += 1
        counts = rng.multinomial(1000, rng.dirichlet([1.0, 1.0]))
        yw = np.repeat([0, 1], counts)
        sw = special.expit(3.0 * (2 * yw - 1) + 1.5 * rng.normal(size=yw.size))
        e = v.estimate(sw)
        real = counts / 1000
        covered.append(bool(np.all((e.lower <= real) & (real <= e.upper))))
        term = unseen_error_covariance(e.priors, [30, 30], 1000)
        half = 1.96 * np.sqrt(np.maximum(np.diag(e.covariance) - np.diag(term), 0))
        without.append(bool(np.all(np.abs(e.priors - real) <= half)))
    assert np.mean(covered) >= 0.9
    assert np.mean(without) < 0.85


def test_posteriors_of_a_separable_fit_move_to_a_mix_with_an_empty_class() -> None:
    """Posteriors near 0 and 1 moved to a mix where a class has share 0 stay defined (floored, not 0/0), and EM on
    a window without that class gives a finite estimate and interval."""
    rng = np.random.default_rng(2)
    y, p = _separable(rng, 60, 3)
    v = streammon.Validation(y, p.argmax(axis=1), p, classes=[0, 1, 2], bootstrap=5)
    assert v.calibration.separable
    moved = mix_posteriors(v.posteriors(p), v.priors, [0.0, 0.5, 0.5])
    assert np.all(np.isfinite(moved)) and moved.sum(axis=1) == pytest.approx(np.ones(60))
    e = v.estimate(p[y > 0])
    assert np.all(np.isfinite(e.priors)) and np.all(np.isfinite(e.lower)) and np.all(np.isfinite(e.upper))
    assert e.priors[0] < 0.05
