"""The exact binomial tails and the prior-shift test agree with scipy.stats at every size, deep into the tails."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from streammon.metrics.binomial import binomial_log_tails, prior_shift_tests, two_sided_p


def _random_cases(seed: int, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(k, n, p) with n from 1 to 2e9, p from 1e-6 to 1 - 1e-3, k drawn near the mean, far out, or anywhere."""
    rng = np.random.default_rng(seed)
    n = np.floor(10 ** rng.uniform(0, 9.3, count))
    p = np.where(rng.random(count) < 0.6, 10 ** rng.uniform(-6, -0.001, count), rng.uniform(0.001, 0.999, count))
    sd = np.sqrt(n * p * (1 - p) + 1)
    k = np.select([rng.random(count) < 0.4, rng.random(count) < 0.5],
                  [rng.binomial(n.astype(np.int64), p), np.floor(n * p + rng.uniform(-60, 60, count) * sd)],
                  np.floor(rng.random(count) * (n + 1)))
    return np.clip(k, 0, n), n, p


def test_tails_equal_scipy_binom_for_random_n_k_p_up_to_1e9() -> None:
    """log P(X <= k) and log P(X >= k) equal scipy.stats.binom's logcdf and logsf (relative 1e-7 in the log) for
    n up to 2e9 and p-values down to 1e-300."""
    k, n, p = _random_cases(0, 4000)
    lower, upper = binomial_log_tails(k, n, p)
    for ours, theirs in ((lower, stats.binom.logcdf(k, n, p)), (upper, stats.binom.logsf(k - 1, n, p))):
        judged = theirs > -690  # below e^-690 scipy's own value is a subnormal's log
        assert judged.sum() > 3000
        np.testing.assert_allclose(ours[judged], theirs[judged], rtol=1e-7, atol=1e-12)
        assert (theirs < -230).sum() > 100  # p-values below 1e-100 are among the cases


def test_two_sided_p_equals_doubled_binomtest_tails() -> None:
    """The two-sided p-value is min(1, 2·min) of scipy.stats.binomtest's one-sided p-values ('less', 'greater')."""
    rng = np.random.default_rng(1)
    for _ in range(300):
        n = int(10 ** rng.uniform(0, 9))
        pi = float(10 ** rng.uniform(-5, -0.01))
        k = int(np.clip(rng.binomial(n, min(1.0, pi * rng.uniform(0.2, 5))), 0, n))
        less = stats.binomtest(k, n, pi, alternative="less").pvalue
        greater = stats.binomtest(k, n, pi, alternative="greater").pvalue
        expected = min(1.0, 2 * min(less, greater))
        assert float(two_sided_p(k, n, pi)) == pytest.approx(expected, rel=1e-7, abs=1e-300)


def test_p_values_far_below_1e100_keep_their_digits() -> None:
    """Deep tails (1e-100 to 1e-300) match scipy's logsf to 1e-9 relative, at n from 1,000 to 1e9."""
    for n, share in ((1_000, 0.5), (100_000, 0.013), (10**9, 1e-6), (10**9, 0.3)):
        sd = math.sqrt(n * share * (1 - share))
        for z in (25.0, 30.0, 35.0):
            k = math.floor(n * share + z * sd) if n * share + z * sd < n else n
            theirs = float(stats.binom.logsf(k - 1, n, share))
            if not -690 < theirs < -230:
                continue
            assert float(binomial_log_tails(k, n, share)[1]) == pytest.approx(theirs, rel=1e-9)


def test_edges_k_zero_k_n_and_degenerate_rates() -> None:
    """k = 0 and k = n are closed forms; p = 0 and p = 1 put all the mass on one count."""
    lower, upper = binomial_log_tails([0, 7, 0, 3, 7], [7, 7, 7, 7, 7], [0.3, 0.3, 0.0, 0.0, 1.0])
    assert np.exp(lower).tolist() == pytest.approx([0.7**7, 1.0, 1.0, 1.0, 1.0])
    assert np.exp(upper).tolist() == pytest.approx([1.0, 0.3**7, 1.0, 0.0, 1.0])


def test_bad_input_is_refused() -> None:
    """A fractional count, a negative n or a rate outside [0, 1] raise ValueError naming the problem."""
    with pytest.raises(ValueError, match="whole k"):
        binomial_log_tails(1.5, 3, 0.5)
    with pytest.raises(ValueError, match="0 <= p <= 1"):
        binomial_log_tails(1, 3, 1.5)
    with pytest.raises(ValueError, match="non-negative"):
        prior_shift_tests([[-1, 3]], [0.5, 0.5])


def test_prior_shift_test_is_bonferroni_over_scipy_per_class_tests() -> None:
    """The combined p-value is min(1, m·min_c p_c) with scipy's per-class exact tests, m = 1 for two classes and
    K otherwise; the prior ratio is the largest of p̂/π and π/p̂ recounted by hand."""
    rng = np.random.default_rng(2)
    for k in (2, 3, 10):
        for _ in range(60):
            pi = rng.dirichlet(np.ones(k) * 0.7)
            pi = np.maximum(pi, 1e-3) / np.maximum(pi, 1e-3).sum()
            n = int(rng.integers(1, 5000))
            x = rng.multinomial(n, rng.dirichlet(pi * 50 + 0.1))
            t = prior_shift_tests(x[None], pi)
            per_class = [min(1.0, 2 * min(stats.binom.cdf(x[c], n, pi[c]), stats.binom.sf(x[c] - 1, n, pi[c])))
                         for c in range(k)]
            m = 1 if k == 2 else k
            assert t.p_value[0] == pytest.approx(min(1.0, m * min(per_class)), rel=1e-7, abs=1e-300)
            share = x / n
            ratio = max(math.inf if s == 0 else max(s / q, q / s) for s, q in zip(share, pi, strict=True))
            assert t.prior_ratio[0] == pytest.approx(ratio)
