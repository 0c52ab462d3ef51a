"""Exact binomial tails and the prior-shift test built on them (pure; vectorised over windows).

The prior-shift criterion (``docs/explanation/prior-shift.md``) asks two things of a window's true-class counts
``x`` (n samples) against the reference priors ``π``:

- **significance, exact at every n** — under "no shift" each ``x_c`` is Binomial(n, π_c). Each class gets the
  two-sided exact binomial p-value by the *doubled smaller tail*, ``min(1, 2·min(P(X ≤ x_c), P(X ≥ x_c)))``
  (the "central" test: each tail at most α/2, so it never rejects more often than α; scipy's
  ``binomtest`` computes the same tails), and the classes combine by Bonferroni,
  ``p = min(1, m · min_c p_c)`` with ``m = 1`` for two reference classes (their two tests are one event:
  ``x_0 = n − x_1``) and ``m = K`` otherwise. A class the reference lacks (π = 0) present in the window
  gives p = 0. No minimum count before testing is needed: the tails are exact.
- **effect size fit for imbalance** — ``prior_ratio = max_c max(p̂_c/π_c, π_c/p̂_c)`` over the reference's
  classes: a 1 % → 6 % minority reads 6 (total variation 0.05 and JS ≈ 0.01 bits would call it small);
  inf when a reference class is absent or a class the reference lacks is present.

The tails are computed in the log domain (``streammon.metrics.binomial_loops``): accurate down to p ~ 1e-300
and for n up to 2**53.

>>> two_sided_p([1, 0, 3], [1, 1, 10], [0.01, 0.01, 0.5]).round(4).tolist()
[0.02, 1.0, 0.3438]
>>> t = prior_shift_tests(np.array([[94, 6], [99, 1]]), np.array([0.99, 0.01]))
>>> t.prior_ratio.round(2).tolist(), bool(t.p_value[0] < 0.01), bool(t.p_value[1] < 0.01)
([6.0, 1.0], True, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
LOG2 = math.log(2.0)


def binomial_log_tails(k: npt.ArrayLike, n: npt.ArrayLike, p: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """``(log P(X ≤ k), log P(X ≥ k))`` for X ~ Binomial(n, p), element by element (broadcast).

    ``k`` and ``n`` are whole numbers (floats up to 2**53 are exact), ``0 ≤ p ≤ 1``.

    >>> lower, upper = binomial_log_tails(3, 10, 0.5)
    >>> round(float(np.exp(lower)), 9), round(float(np.exp(upper)), 9)
    (0.171875, 0.9453125)
    >>> float(binomial_log_tails(900, 1000, 0.5)[1]) < -370  # p ~ 1e-161, still a number
    True
    """
    from streammon.metrics import binomial_loops  # noqa: PLC0415 - imports numba: on first use, not with streammon

    kk, nn, pp = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64),
                                     np.asarray(p, dtype=np.float64))
    if kk.size and (np.any(nn < 0) or np.any(kk != np.floor(kk)) or np.any(nn != np.floor(nn))):
        raise ValueError("binomial tails need whole k and n >= 0")
    if pp.size and not np.all((pp >= 0) & (pp <= 1)):
        raise ValueError(f"binomial tails need 0 <= p <= 1, got {pp[~((pp >= 0) & (pp <= 1))][0]!r}")
    flat = [np.ascontiguousarray(a.reshape(-1)) for a in (kk, nn, pp)]
    lower, upper = np.empty(kk.size), np.empty(kk.size)
    binomial_loops.log_tails(flat[0], flat[1], flat[2], 1.0 - flat[2], lower, upper)
    return lower.reshape(kk.shape), upper.reshape(kk.shape)


def log_two_sided_p(k: npt.ArrayLike, n: npt.ArrayLike, p: npt.ArrayLike) -> FloatArray:
    """``log`` of the two-sided exact binomial p-value, ``min(0, log 2 + min(log P(X ≤ k), log P(X ≥ k)))``."""
    lower, upper = binomial_log_tails(k, n, p)
    return np.minimum(0.0, LOG2 + np.minimum(lower, upper))


def two_sided_p(k: npt.ArrayLike, n: npt.ArrayLike, p: npt.ArrayLike) -> FloatArray:
    """The two-sided exact binomial p-value of ``k`` successes in ``n`` trials at rate ``p`` (doubled smaller tail,
    capped at 1).

    >>> two_sided_p(5, 10, 0.5).tolist(), two_sided_p(10, 10, 0.5).tolist()
    (1.0, 0.001953125)
    """
    return np.exp(log_two_sided_p(k, n, p))


@dataclass(frozen=True)
class PriorTests:
    """Per window: the combined exact p-value (``p_value``, and its log ``log_p`` which keeps its precision
    below 1e-308), ``prior_ratio``, and the Bonferroni factor ``m`` used. NaN for an empty window or one
    without a reference."""

    p_value: FloatArray
    log_p: FloatArray
    prior_ratio: FloatArray
    m: npt.NDArray[np.int64]


def prior_shift_tests(counts: npt.ArrayLike, priors: npt.ArrayLike) -> PriorTests:
    """The exact prior-shift test and the prior ratio of each row of ``counts`` (W × K true-class counts) against
    ``priors`` (K, or W × K; each row normalised here; a row of zeros means no reference: NaN).

    >>> t = prior_shift_tests(np.array([[1, 0], [0, 5], [0, 0]]), np.array([0.99, 0.01]))
    >>> t.p_value.tolist(), t.prior_ratio.tolist(), t.m.tolist()  # 5 of 5 at 1 %: p = 2·0.01⁵
    ([1.0, 2.000000000000003e-10, nan], [inf, inf, nan], [1, 1, 1])
    >>> t = prior_shift_tests(np.array([[3, 0, 2], [40, 30, 30]]), np.array([0.5, 0.5, 0.0]))
    >>> t.p_value.tolist(), t.prior_ratio.tolist(), t.m.tolist()
    ([0.0, 0.0], [inf, inf], [1, 1])
    """
    from streammon.metrics import binomial_loops  # noqa: PLC0415 - imports numba: on first use, not with streammon

    x = np.ascontiguousarray(np.atleast_2d(np.asarray(counts, dtype=np.float64)))
    ref = np.ascontiguousarray(np.broadcast_to(np.asarray(priors, dtype=np.float64), x.shape))
    if x.size and (x.min() < 0 or ref.min() < 0):
        raise ValueError("prior_shift_tests needs non-negative counts and priors")
    windows = x.shape[0]
    log_p, prior_ratio, m = np.empty(windows), np.empty(windows), np.empty(windows, dtype=np.int64)
    binomial_loops.prior_tests(x, ref, log_p, prior_ratio, m)
    return PriorTests(np.exp(log_p), log_p, prior_ratio, m)


def within_ratio(counts: npt.ArrayLike, priors: npt.ArrayLike, ratio: float, alpha: float) -> bool:
    """Whether ``counts`` (K true-class counts) show at level ``alpha`` that every class's share lies within a
    factor ``ratio`` of its prior: ``π_c/ratio < p_c < ratio·π_c`` for every class (``priors`` normalised here).

    The equivalence test of a mix *back at* the reference — the off decision of a prior-shift alert, whose on
    decision asks the opposite (``prior_shift_tests``). Per class two one-sided exact binomial tests
    (Schuirmann's TOST): ``P(X ≤ x_c) < alpha`` at rate ``min(1, ratio·π_c)`` and ``P(X ≥ x_c) < alpha`` at rate
    ``π_c/ratio``; the claim holds when every test rejects, an intersection–union test of level ``alpha`` with no
    multiplicity correction (Berger 1982). A class the reference lacks, present in the counts, fails it; so do
    empty counts (no evidence).

    >>> within_ratio([9_900, 100], [0.99, 0.01], 1.25, 0.05)  # 1 % in 10,000: bounds ≈ 0.84 %–1.18 %
    True
    >>> within_ratio([990, 10], [0.99, 0.01], 1.25, 0.05)  # the same share in 1,000: too few to tell
    False
    >>> within_ratio([9_850, 150], [0.99, 0.01], 1.25, 0.05)  # 1.5 %: outside
    False
    """
    x = np.asarray(counts, dtype=np.float64).reshape(-1)
    ref = np.asarray(priors, dtype=np.float64).reshape(-1)
    if x.shape != ref.shape or (x.size and (x.min() < 0 or ref.min() < 0)) or not ratio >= 1 or not 0 < alpha < 1:
        raise ValueError(f"within_ratio needs K non-negative counts and priors, ratio >= 1 and 0 < alpha < 1, got "
                         f"{x.size} counts, {ref.size} priors, ratio {ratio!r}, alpha {alpha!r}")
    n, total = float(x.sum()), float(ref.sum())
    if n == 0 or total == 0 or np.any((ref == 0) & (x > 0)):
        return False
    keep = ref > 0
    k, pi = x[keep], ref[keep] / total
    below_high, _ = binomial_log_tails(k, n, np.minimum(1.0, ratio * pi))
    _, above_low = binomial_log_tails(k, n, pi / ratio)
    log_alpha = math.log(alpha)
    # (at rate 1 the lower tail is 1 unless every sample is of the class: then "no higher share" holds trivially)
    return bool(np.all(((below_high < log_alpha) | (ratio * pi >= 1.0)) & (above_low < log_alpha)))
