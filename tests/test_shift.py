"""Prior-shift statistics agree with scipy, and the significance test holds its false-alarm rate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.spatial import distance

from streammon.findings.shift import js_divergence, prior_shift
from streammon.metrics.tails import chi2_sf
from tests.shift_oracle import exact_shift_p, prior_ratio


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 10, 31, 99, 255])
def test_chi2_tail_matches_scipy(df: int) -> None:
    """The chi-square survival function equals scipy.stats.chi2.sf over its whole range."""
    for x in np.concatenate([np.linspace(0.01, 3 * df, 40), [df * 10.0, df * 40.0]]):
        expected = stats.chi2.sf(x, df)
        assert chi2_sf(float(x), df) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_js_divergence_matches_scipy() -> None:
    """JS divergence (bits) is the square of scipy's Jensen–Shannon distance with base 2."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        p, q = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
        assert js_divergence(p, q) == pytest.approx(distance.jensenshannon(p, q, base=2) ** 2, abs=1e-12)


def test_prior_shift_matches_scipy_exact_test_chisquare_and_total_variation() -> None:
    """The p-value is the Bonferroni-combined exact binomial test (scipy's binomtest per class), the ratio the
    largest per-class prior ratio; the descriptive chi-square equals scipy's; TV is half the L1 distance."""
    counts, reference = np.array([30, 50, 20]), np.array([0.5, 0.3, 0.2])
    shift = prior_shift(counts, reference)
    expected = stats.chisquare(counts, reference * counts.sum())
    assert shift.chi2 == pytest.approx(expected.statistic)
    assert shift.p_value == pytest.approx(exact_shift_p(counts, reference), rel=1e-9)
    assert shift.prior_ratio == pytest.approx(prior_ratio(counts, reference))
    assert shift.tv == pytest.approx(0.2) and shift.df == 2


def test_null_false_alarm_rate_is_held() -> None:
    """Windows drawn at the reference mix are declared shifted in at most ~alpha of trials (alpha = 0.01)."""
    rng = np.random.default_rng(1)
    reference = np.array([0.7, 0.2, 0.1])
    shifted = sum(
        prior_shift(rng.multinomial(n, reference), reference, min_ratio=1.0).shifted
        for n in (50, 200, 1000)
        for _ in range(1000)
    )
    assert shifted / 3000 <= 0.02


def test_small_windows_do_not_cry_wolf_and_large_shifts_are_found() -> None:
    """A 20-sample window with a modest shift is not significant; a 2 000-sample one is."""
    reference = np.array([0.9, 0.1])
    assert not prior_shift([16, 4], reference).shifted
    assert prior_shift([1600, 400], reference).shifted


def test_a_class_the_reference_never_saw_is_a_certain_shift() -> None:
    """Observed samples of a zero-prior class make the statistic and the ratio infinite (p = 0)."""
    shift = prior_shift([50, 50, 5], [0.5, 0.5, 0.0])
    assert math.isinf(shift.chi2) and shift.p_value == 0.0 and math.isinf(shift.prior_ratio) and shift.shifted


def test_windows_shifted_together_each_against_its_own_reference_equal_scipy() -> None:
    """``prior_shifts`` of stacked windows, each against its own reference (raw weights, some zero): JS, TV, the
    chi-square statistic, degrees of freedom and p-value of each row equal scipy's on that row alone; an empty
    window is all NaN; a class its reference never saw gives chi2 = inf, p = 0."""
    from streammon.findings.shift import prior_shifts

    rng = np.random.default_rng(21)
    counts = rng.integers(0, 60, (30, 5))
    references = rng.integers(0, 9, (30, 5)).astype(float) * (rng.random((30, 5)) < 0.8)
    references[:, 0] += 1.0  # no reference all zero
    counts[4] = 0
    counts[6] = np.where(references[6] > 0, counts[6], 0)  # only classes its reference knows
    shifts = prior_shifts(counts, references, alpha=0.05, min_ratio=1.3)
    for c, r, s in zip(counts, references, shifts, strict=True):
        n = c.sum()
        if n == 0:
            assert all(math.isnan(v) for v in (s.js, s.tv, s.chi2, s.p_value)) and not s.shifted
            continue
        q = r / r.sum()
        assert s.js == pytest.approx(distance.jensenshannon(c / n, q, base=2) ** 2, abs=1e-12)
        assert s.tv == pytest.approx(np.abs(c / n - q).sum() / 2, abs=1e-12)
        support = q > 0
        assert s.df == support.sum() - 1
        if (c[~support] > 0).any():
            assert s.chi2 == math.inf and s.p_value == 0.0
        elif s.df >= 1:
            expected = stats.chisquare(c[support], q[support] * n)
            assert s.chi2 == pytest.approx(expected.statistic, rel=1e-12)
        assert s.p_value == pytest.approx(exact_shift_p(c, r), rel=1e-9, abs=1e-300)
        assert s.prior_ratio == pytest.approx(prior_ratio(c, r))
        assert s.shifted == (s.p_value < 0.05 and s.prior_ratio >= 1.3)
