"""Half a sample's floor in EM's intervals for a window's class shares (``metrics.em_priors.intervals``): the
shares are multiples of 1/n, and where the classifier separates most of a small window, EM's error is mostly
whole samples — the few it gets confidently wrong — which a normal interval of small variance misses."""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from streammon import Validation
from streammon.metrics.em_priors import em_priors


def _world(rng: np.random.Generator, n: int, share: float) -> tuple[np.ndarray, np.ndarray]:
    """Labels and scores of an over-confident model, as logistic regression on a small training set is: logit ±6
    plus noise for 98 % of the samples, and for 2 % ∓2 plus noise — wrong, less confidently, which BCTS's single
    temperature cannot calibrate apart from the rest."""
    y = (rng.random(n) < share).astype(int)
    wrong = rng.random(n) < 0.02
    return y, special.expit(np.where(wrong, -2.0, 6.0) * (2 * y - 1) + rng.normal(size=n))


def test_the_intervals_cover_small_windows_shares_at_the_nominal_rate_only_with_the_floor() -> None:
    """400 trials, each a fresh validation set of 200 (10 bootstrap replicas) and a window of 40 at a class share
    drawn in [0.2, 0.8] (the interval without the floor: the same one with the variance (1/(2n))² taken out): with
    the floor a binomial test cannot tell coverage below 0.93 or above 0.99 (each at 0.001); without it
    coverage is clearly below the nominal 0.95."""
    rng = np.random.default_rng(28)
    trials, n, hits, without = 400, 40, 0, 0
    for _ in range(trials):
        yv, sv = _world(rng, 200, 0.4)
        v = Validation(yv, (sv > 0.5).astype(int), sv, classes=[0, 1], positive=1, bootstrap=10)
        yw, sw = _world(rng, n, rng.uniform(0.2, 0.8))
        e = v.estimate(sw)
        truth = float(yw.mean())  # the window's share: what its labels will show
        assert e.lower[1] > 0 or e.upper[1] < 1  # at most one end cut: the other gives the half-width
        half = e.upper[1] - e.priors[1] if e.upper[1] < 1 else e.priors[1] - e.lower[1]
        hits += bool(e.lower[1] <= truth <= e.upper[1])
        variance = e.covariance[1, 1]  # the interval's variance before half a sample's, (1/(2n))², joins it
        without += bool(abs(e.priors[1] - truth) <= half * np.sqrt(variance / (variance + (0.5 / n) ** 2)))
    assert stats.binom.cdf(hits, trials, 0.93) > 0.001, hits / trials
    assert stats.binom.sf(hits - 1, trials, 0.99) > 0.001, hits / trials
    assert stats.binom.cdf(without, trials, 0.95) < 0.001, without / trials


def test_the_floor_is_half_a_sample_for_the_shares_and_none_for_the_mix() -> None:
    """The window-noise interval (``em_priors``) is the normal quantile times √(variance + (1/(2n))²) for the
    window's shares — n its total weight, histogram counts included — and times the standard error alone for the
    mix that generated it (``target="mix"``)."""
    rng = np.random.default_rng(5)
    p = rng.dirichlet([1.0, 1.0], size=30)
    w = rng.integers(1, 5, size=30)
    z = stats.norm.ppf(0.975)
    for target, floor in (("window", (0.5 / w.sum()) ** 2), ("mix", 0.0)):
        e = em_priors(p, [0.5, 0.5], weights=w, target=target)
        half = z * np.sqrt(np.diag(e.covariance) + floor)
        assert np.allclose(e.lower, np.clip(e.priors - half, 0, 1), atol=1e-12), target
        assert np.allclose(e.upper, np.clip(e.priors + half, 0, 1), atol=1e-12), target
