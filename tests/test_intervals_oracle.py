"""Interval bounds pinned to independent implementations: statsmodels, the Wilson quadratic solved here, scipy's
Beta distribution, to 1e-9 where the method is exact."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats
from statsmodels.stats.proportion import proportion_confint

from streammon import Cumulative, Monitor
from streammon.metrics.intervals import index_interval, index_intervals, posterior_intervals, wilson

CASES = [(0, 1), (1, 1), (0, 7), (3, 7), (7, 7), (1, 20), (14, 20), (80, 100), (50, 100), (999, 1000), (3, 10_000)]
ALPHAS = [0.001, 0.01, 0.05, 0.1, 0.2, 0.5]


def _wilson_by_quadratic(k: int, n: int, alpha: float) -> tuple[float, float]:
    """Wilson (1927): the p with (k/n − p)² = z²·p(1 − p)/n, i.e. the roots of (n + z²)p² − (2k + z²)p + k²/n."""
    z = stats.norm.ppf(1 - alpha / 2)
    a, b, c = n + z * z, -(2 * k + z * z), k * k / n
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize(("k", "n"), CASES)
def test_wilson_equals_statsmodels_and_the_quadratic(k: int, n: int, alpha: float) -> None:
    """wilson(k, n, 1 − α) equals statsmodels' proportion_confint(method='wilson') and the roots of Wilson's
    quadratic to 1e-9, at several sizes and levels."""
    low, high = wilson(k, n, confidence=1 - alpha)
    sm_low, sm_high = proportion_confint(k, n, alpha=alpha, method="wilson")
    assert (low, high) == pytest.approx((sm_low, sm_high), abs=1e-9)
    assert (low, high) == pytest.approx(_wilson_by_quadratic(k, n, alpha), abs=1e-9)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_wilson_bounds_are_where_the_score_test_is_at_z(alpha: float) -> None:
    """Inside (0, 1) each Wilson bound p solves |k/n − p| = z·√(p(1 − p)/n): the interval is the score test inverted."""
    z = stats.norm.ppf(1 - alpha / 2)
    for k, n in CASES:
        for bound in wilson(k, n, confidence=1 - alpha):
            if 0 < bound < 1:
                assert abs(k / n - bound) == pytest.approx(z * math.sqrt(bound * (1 - bound) / n), rel=1e-9)


def test_wilson_ends_are_exact() -> None:
    """With no success the low end is exactly 0, with all successes the high end exactly 1 (no rounding error)."""
    for n in range(1, 200):
        assert wilson(0, n)[0] == 0.0
        assert wilson(n, n)[1] == 1.0
        assert wilson(n, n, confidence=0.99)[1] == 1.0


def test_confidence_must_lie_strictly_between_0_and_1() -> None:
    """A confidence of 0 or 1 (or outside) is an error, for Wilson and for the index intervals."""
    for confidence in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\)"):
            wilson(3, 10, confidence=confidence)
        with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\)"):
            index_intervals([3], [10], confidence=confidence)


def test_detector_baseline_is_the_jeffreys_posterior_mean() -> None:
    """A given baseline of 80/100 correct sets the in-control recall to the mean of the Jeffreys posterior
    Beta(80.5, 20.5) (scipy), 0.7970…: an estimate, not a bound — the bank's own margin handles its noise."""
    report = Monitor([Cumulative()], reference={"legit": 9, "fraud": 1}, baseline=[[90, 10], [20, 80]]).report()
    assert report.baseline["fraud"] == pytest.approx(stats.beta(80.5, 20.5).mean(), abs=1e-12)
    assert report.baseline["fraud"] == pytest.approx(0.7970297, abs=1e-7)


@pytest.mark.parametrize(("k", "n"), [(2, 4), (15, 20), (40, 50), (5, 5)])
def test_one_class_posterior_interval_is_the_jeffreys_interval(k: int, n: int) -> None:
    """With one class, the posterior-draw ACSA and G-mean intervals are the Jeffreys interval of its recall
    (statsmodels), within the Monte Carlo error of 200 000 posterior draws."""
    expected = proportion_confint(k, n, alpha=0.05, method="jeffreys")
    intervals = posterior_intervals([k], [n], draws=200_000)
    assert intervals["acsa"] == pytest.approx(expected, abs=3e-3)
    assert intervals["gmean"] == pytest.approx(intervals["acsa"], abs=1e-9)


def test_several_classes_match_an_independent_posterior_simulation() -> None:
    """Posterior-draw ACSA and G-mean intervals are the central 90 % of the index over Beta(k + ½, n − k + ½)
    draws per class: an independent simulation with scipy gives the same bounds within Monte Carlo error; the
    closed forms stay within 0.02 of them at these sizes."""
    correct, totals = np.array([8, 45, 190]), np.array([10, 60, 200])
    draws = stats.beta(correct + 0.5, totals - correct + 0.5).rvs(size=(200_000, 3), random_state=1)
    expected = {"acsa": np.quantile(draws.mean(axis=1), [0.05, 0.95]),
                "gmean": np.quantile(np.exp(np.log(draws).mean(axis=1)), [0.05, 0.95])}
    got = posterior_intervals(correct, totals, confidence=0.9, draws=200_000)
    closed = index_intervals(correct, totals, confidence=0.9)
    for name, (low, high) in expected.items():
        assert got[name] == pytest.approx((low, high), abs=3e-3), name
        assert closed[name] == pytest.approx((low, high), abs=0.02), name


@pytest.mark.parametrize(("correct", "totals"), [([8, 45, 190], [10, 60, 200]), ([2], [4]), ([0, 5, 3], [5, 5, 9]),
                                                 ([30] * 10, [100] * 10)])
def test_closed_forms_match_their_definition_with_scipy(correct: list[int], totals: list[int]) -> None:
    """ACSA: statsmodels' Wilson interval of the observed mean recall at n_eff = μ(1 − μ)/V − 1 (μ, V: posterior
    mean and variance of the mean of Beta(k + ½, n − k + ½) recalls). G-mean: exp(E ± z·√Var) cut at 1, E and Var
    the posterior moments of the mean log recall from scipy's digamma and trigamma."""
    k, n = np.array(correct, float), np.array(totals, float)
    a, b, size = k + 0.5, n - k + 0.5, len(k)
    mu = float(np.mean(a / (a + b)))
    var = float(np.sum(a * b / ((a + b) ** 2 * (a + b + 1)))) / size**2
    n_eff = mu * (1 - mu) / var - 1
    acsa = proportion_confint(float(np.mean(k / n)) * n_eff, n_eff, alpha=0.05, method="wilson")
    mean = float(np.mean(special.digamma(a) - special.digamma(a + b)))
    sd = math.sqrt(float(np.sum(special.polygamma(1, a) - special.polygamma(1, a + b)))) / size
    z = stats.norm.ppf(0.975)
    got = index_intervals(correct, totals)
    assert got["acsa"] == pytest.approx(acsa, abs=1e-9)
    assert got["gmean"] == pytest.approx((math.exp(mean - z * sd), min(1.0, math.exp(mean + z * sd))), abs=1e-9)


def test_min_recall_interval_is_bonferroni_wilson() -> None:
    """The minimum-recall interval is [min L_i, min U_i] of per-class Wilson intervals at level 1 − α/C."""
    correct, totals = [8, 45, 190], [10, 60, 200]
    bounds = [proportion_confint(k, n, alpha=0.05 / 3, method="wilson") for k, n in zip(correct, totals, strict=True)]
    expected = (min(b[0] for b in bounds), min(b[1] for b in bounds))
    assert index_interval("min_recall", correct, totals) == pytest.approx(expected, abs=1e-12)


def test_intervals_are_deterministic_and_count_every_class_with_a_sample() -> None:
    """The closed forms give the same interval twice (posterior draws: per seed), and a class with a single
    sample counts while a class with none is left out."""
    correct, totals = [3, 1, 0], [4, 1, 0]
    assert index_intervals(correct, totals) == index_intervals(correct, totals)
    assert index_interval("acsa", correct, totals) == index_intervals(correct, totals)["acsa"]
    assert posterior_intervals(correct, totals, seed=7, draws=500) == posterior_intervals(
        correct, totals, seed=7, draws=500)
    seeded = [posterior_intervals(correct, totals, seed=seed)["gmean"] for seed in (7, 8)]
    assert seeded[0] != seeded[1]
    with_single = index_intervals(correct, totals)
    without = index_intervals([3], [4])
    assert with_single["acsa"] != without["acsa"] and all(math.isfinite(v) for v in with_single["acsa"])
    assert with_single["min_recall"] == pytest.approx(
        (min(wilson(3, 4, 0.975)[0], wilson(1, 1, 0.975)[0]), min(wilson(3, 4, 0.975)[1], 1.0)))


def test_unknown_index_names_list_the_three_with_intervals() -> None:
    """Asking for an interval of another index says which three have one."""
    with pytest.raises(ValueError, match=r"no interval for 'mcc'; intervals exist for acsa, gmean, min_recall$"):
        index_interval("mcc", [1], [2])


def test_each_window_of_a_stack_gets_the_intervals_of_its_present_classes_alone() -> None:
    """Stacked windows with absent classes (rows of zero totals): each window's intervals equal those computed on
    its present classes alone, and its per-class recall intervals are statsmodels' Wilson intervals (NaN for an
    absent class) — whatever the other windows hold."""
    from streammon.metrics.intervals import window_intervals

    rng = np.random.default_rng(8)
    totals = rng.integers(0, 40, (12, 6)).astype(float)
    totals[rng.random(totals.shape) < 0.3] = 0.0
    totals[3] = 0.0  # a window without any class
    totals[4] = [0.0, 25.0, 0.0, 0.0, 0.0, 0.0]  # one class only
    correct = np.floor(totals * rng.random(totals.shape))
    correct[5] = totals[5]  # every recall perfect: the upper Wilson ends are 1
    (low, high), per_window = window_intervals(correct, totals, 0.9)
    for w in range(len(totals)):
        keep = totals[w] > 0
        alone = index_intervals(correct[w][keep], totals[w][keep], confidence=0.9)
        assert per_window[w].keys() == alone.keys()
        for name, pair in alone.items():
            assert np.allclose(per_window[w][name], pair, rtol=0, atol=1e-12, equal_nan=True), (w, name)
        for i in range(totals.shape[1]):
            if not keep[i]:
                assert math.isnan(low[w, i]) and math.isnan(high[w, i])
                continue
            expected = proportion_confint(int(correct[w, i]), int(totals[w, i]), alpha=0.1, method="wilson")
            assert np.allclose((low[w, i], high[w, i]), expected, rtol=0, atol=1e-9), (w, i)
            assert (low[w, i] == 0.0) == (correct[w, i] == 0)  # the exact ends, as ``wilson``'s
            assert (high[w, i] == 1.0) == (correct[w, i] == totals[w, i])


def test_chi_square_tail_refuses_a_degree_of_freedom_below_one() -> None:
    from streammon.metrics.tails import chi2_sf

    with pytest.raises(ValueError, match="df must be >= 1, got 0"):
        chi2_sf(1.0, 0)
