"""The calibration's misfit term of EM's intervals (``misfit_bias``, ``Validation.misfit``): zero by a law where
the posteriors are the class frequencies, equal to a scipy maximum of the weighted mixture likelihood, and the
intervals' coverage in a simulation whose model BCTS cannot calibrate (binomial bounds over 200 trials)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, special, stats

from streammon import Validation
from streammon.metrics.em_priors import misfit_bias
from streammon.metrics.student_t import satterthwaite_df, t_quantile


def test_misfit_is_zero_where_the_posteriors_are_the_class_frequencies_of_each_score() -> None:
    """A discrete score whose posterior is its samples' class frequencies is calibrated within each class, so EM
    on the set moved to any mix reads that mix exactly (the fixed point of Saerens' EM, by hand in the docstring
    of the module): the misfit is 0 at every mix."""
    rng = np.random.default_rng(5)
    k = 3
    y = rng.choice(k, 900, p=[0.5, 0.3, 0.2])
    x = np.minimum(y + rng.integers(0, 3, 900), 4)  # five score values, overlapping classes
    table = np.zeros((5, k))
    np.add.at(table, (x, y), 1)
    posteriors = (table / table.sum(axis=1, keepdims=True))[x]
    share = np.bincount(y, minlength=k) / y.size
    for mix in ([0.1, 0.1, 0.8], [0.6, 0.3, 0.1], [1 / 3, 1 / 3, 1 / 3]):
        assert misfit_bias(posteriors, y, share, mix) == pytest.approx(np.zeros(k), abs=1e-7)


def test_misfit_is_the_weighted_validation_mle_a_scipy_search_finds_minus_the_mix() -> None:
    """EM's reading of the moved validation set is the maximum of its weighted mixture likelihood
    ``Σ wᵢ log Σ_c π'_c pᵢ꜀/π_c``: scipy maximises it over the simplex (softmax coordinates) independently."""
    rng = np.random.default_rng(8)
    k = 3
    y = rng.choice(k, 700, p=[0.5, 0.3, 0.2])
    p = special.softmax(2.5 * (rng.normal(size=(700, k)) + 1.3 * np.eye(k)[y]), axis=1)  # over-confident
    share = np.bincount(y, minlength=k) / y.size
    mix = np.array([0.15, 0.25, 0.6])
    w = (mix / share)[y]
    ratio = p / share

    def minus_loglik(theta: np.ndarray) -> float:
        return -float(w @ np.log(ratio @ special.softmax(np.r_[0.0, theta])))

    best = optimize.minimize(minus_loglik, np.zeros(k - 1), method="BFGS", options={"gtol": 1e-10}).x
    expected = special.softmax(np.r_[0.0, best]) - mix
    got = misfit_bias(p, y, share, mix)
    assert got == pytest.approx(expected, abs=2e-6)
    assert np.abs(got).max() > 0.005  # these posteriors are not calibrated per class: a misfit to find


def test_misfit_refuses_bad_input_with_the_value_named() -> None:
    p = np.full((4, 2), 0.5)
    y = np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"mix must be 2 non-negative shares summing to 1, got \[0.5, 0.6\]"):
        misfit_bias(p, y, [0.5, 0.5], [0.5, 0.6])
    with pytest.raises(ValueError, match="y_true must be 4 class indices in"):
        misfit_bias(p, np.array([0, 1, 2, 1]), [0.5, 0.5], [0.5, 0.5])
    with pytest.raises(ValueError, match="every class needs a validation sample"):
        misfit_bias(p, np.array([0, 0, 0, 0]), [0.5, 0.5], [0.5, 0.5])
    v = Validation([0, 1, 0, 1], [0, 1, 1, 1], [0.2, 0.9, 0.6, 0.7], bootstrap=0)
    with pytest.raises(ValueError, match="mix must be 2 non-negative shares"):
        v.misfit([1.2, -0.2, 0.0])


def _bent_world(rng: np.random.Generator, n: int, mix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian classes (true log-odds t, linear) scored by a model whose logit bends, t + 0.4·t³: BCTS's
    ``a·logit + b`` cannot undo the bend, so EM after BCTS is biased away from the validation mix."""
    y = (rng.random(n) < mix[1]).astype(int)
    t = 1.5 * (rng.normal(size=n) + 1.5 * y) - 1.125
    return y, special.expit(t + 0.4 * t**3)


def test_intervals_cover_the_window_shares_where_bcts_cannot_calibrate_the_model() -> None:
    """200 (validation, window) pairs at random mixes: the 95 % intervals (delta method plus the misfit term)
    cover the window's class share at a rate a binomial test cannot tell below 0.93 or above 0.99 (each at
    0.001), while the same intervals without the misfit (covariance minus b bᵀ) fall clearly below 0.93 — the
    setting has a misfit the noise terms do not see."""
    rng = np.random.default_rng(3)
    trials, with_misfit, without = 200, 0, 0
    z = stats.norm.ppf(0.975)
    for _ in range(trials):
        yv, sv = _bent_world(rng, 3000, np.array([0.7, 0.3]))
        v = Validation(yv, (sv > 0.5).astype(int), sv, classes=[0, 1], positive=1, bootstrap=0)
        yw, sw = _bent_world(rng, 4000, rng.dirichlet([1.0, 1.0]))
        e = v.estimate(sw)
        b = v.misfit(e.priors)
        error = abs(e.priors[1] - yw.mean())
        with_misfit += bool(e.lower[1] <= yw.mean() <= e.upper[1])
        without += bool(error <= z * np.sqrt(e.covariance[1, 1] - b[1] ** 2))
    assert stats.binom.cdf(with_misfit, trials, 0.93) > 0.001, with_misfit
    assert stats.binom.sf(with_misfit - 1, trials, 0.99) > 0.001, with_misfit
    assert stats.binom.cdf(without, trials, 0.93) < 0.001, without


@pytest.mark.parametrize("df", [1.0, 2.0, 2.5, 3.0, 4.0, 10.0, 49.0, 1e4, 1e90, np.inf])
def test_t_quantile_matches_scipy_within_its_documented_error(df: float) -> None:
    """Exact at df 1 and 2 (and df in (2, 3) reads df = 2: wider than scipy's), the Cornish–Fisher expansion from
    df = 3 within the docstring's bounds of scipy's exact quantile."""
    for p in (0.9, 0.95, 0.975, 0.995):
        exact = float(stats.t.ppf(p, df))
        got = t_quantile(p, df)
        if df < 3:
            assert got == pytest.approx(float(stats.t.ppf(p, np.floor(df))), rel=1e-12)
            assert got >= exact - 1e-12
        else:
            bound = 1e-4 if df >= 10 else 0.05 if p == 0.995 else 0.004
            assert abs(got - exact) <= bound, (p, df, got, exact)
    with pytest.raises(ValueError, match=r"t_quantile needs 0\.5 <= p < 1 and df > 0, got p=0\.3"):
        t_quantile(0.3, 5.0)


def test_satterthwaite_t_intervals_cover_where_part_of_the_variance_is_a_sample_variance() -> None:
    """An error with variance known + σ², σ² read as the sample variance of 11 normal replicas (10 df): 40,000
    simulated intervals with Student's t at Satterthwaite's df cover at 95 % (binomial bound, 0.001 each side),
    the normal quantile on the same variances covers clearly less."""
    rng = np.random.default_rng(4)
    n, replicas, known, sigma2 = 40_000, 11, 0.5, 1.0
    estimated = rng.normal(scale=np.sqrt(sigma2), size=(n, replicas)).var(axis=1, ddof=1)
    error = rng.normal(scale=np.sqrt(known + sigma2), size=n)
    df = satterthwaite_df(np.full(n, known), estimated, replicas)
    q = np.array([t_quantile(0.975, float(d)) for d in df])
    hits = int(np.sum(np.abs(error) <= q * np.sqrt(known + estimated)))
    normal = int(np.sum(np.abs(error) <= stats.norm.ppf(0.975) * np.sqrt(known + estimated)))
    low, high = stats.binom.ppf([0.001, 0.999], n, 0.95)
    assert low <= hits <= high, hits / n
    assert normal < low, normal / n
    assert satterthwaite_df([0.0], [1.0], 50)[0] == pytest.approx(49.0)  # all of it estimated: B − 1
    assert np.isinf(satterthwaite_df([1.0], [0.0], 50)[0])  # nothing estimated: the normal quantile
