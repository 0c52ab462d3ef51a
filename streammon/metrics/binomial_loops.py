"""Binomial tails in the log domain, compiled: the loops of ``streammon.metrics.binomial``.

Exact for every ``n`` a float64 holds as an integer (up to 2**53), with no scipy at run time:

- the log of the probability mass is Loader's saddle-point form (R's ``dbinom``): Stirling's error
  terms ``stirlerr`` and the deviance ``bd0(x, M) = x log(x/M) + M − x`` computed without cancellation,
  so that ``log P(X = k)`` keeps its relative precision when ``n`` is 10¹⁵ and the naive
  ``lgamma(n + 1) − lgamma(k + 1) − …`` would lose every digit;
- a tail is that mass times the continued fraction of the regularised incomplete beta function
  (``P(X ≥ k) = I_p(k, n − k + 1) = q · P(X = k) · cf(k, n − k + 1, p)``, Numerical Recipes' ``betacf``
  by the modified Lentz method), evaluated on the side of the mean where it converges, the other tail
  as ``log(1 − P)``. The fraction takes O(√(npq)) steps near the mean; beyond ``MAX_STEPS`` (a
  variance above ~10¹⁰, only at n ≳ 4·10¹⁰) the tail is the Lugannani–Rice saddle-point
  approximation with its continuity correction, whose relative error there is below 10⁻⁹.

Kept apart from ``streammon.metrics.compiled`` so that numba's disk cache of these loops does not depend on it.
"""

from __future__ import annotations

import math
from typing import Any

from streammon.metrics.jitting import compiled

LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
MAX_STEPS = 200_000
_TINY = 1e-300
_EPS = 1e-16


def jit(function: Any) -> Any:
    """A loop of this module compiled (``streammon.metrics.jitting``)."""
    return compiled(function, error_model="numpy")


@jit
def stirlerr(n: float) -> float:
    """``log Γ(n + 1) − (n + ½) log n + n − log √(2π)`` (Stirling's error), its series above n = 15."""
    if n <= 15.0:
        if n == 0.0:
            return 0.0  # (the mass formula never reads it at 0: k = 0 and k = n are closed forms)
        return math.lgamma(n + 1.0) - (n + 0.5) * math.log(n) + n - LOG_SQRT_2PI
    nn = n * n
    s0, s1, s2, s3, s4 = 1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680, 1.0 / 1188
    if n > 500:
        return (s0 - s1 / nn) / n
    if n > 80:
        return (s0 - (s1 - s2 / nn) / nn) / n
    if n > 35:
        return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n


@jit
def bd0(x: float, m: float) -> float:
    """The deviance term ``x log(x/m) + m − x`` (≥ 0), by its series where ``x`` is near ``m``."""
    if abs(x - m) < 0.1 * (x + m):
        v = (x - m) / (x + m)
        s = (x - m) * v
        ej = 2.0 * x * v
        v2 = v * v
        for j in range(1, 1000):
            ej *= v2
            s1 = s + ej / (2 * j + 1)
            if s1 == s:
                return s1
            s = s1
        return s
    return x * math.log(x / m) + m - x


@jit
def log_pmf(k: float, n: float, p: float, q: float) -> float:
    """``log P(X = k)`` for X ~ Binomial(n, p), ``q = 1 − p`` given apart (its precision matters when p → 1)."""
    if k < 0 or k > n:
        return -math.inf
    if p == 0.0:
        return 0.0 if k == 0 else -math.inf
    if q == 0.0:
        return 0.0 if k == n else -math.inf
    if k == 0:
        return n * math.log1p(-p) if p < 0.5 else n * math.log(q)
    if k == n:
        return n * math.log(p)
    lc = stirlerr(n) - stirlerr(k) - stirlerr(n - k) - bd0(k, n * p) - bd0(n - k, n * q)
    return float(lc - 0.5 * (2 * LOG_SQRT_2PI + math.log(k) + math.log1p(-k / n)))


@jit
def beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) (NR ``betacf``, modified Lentz); NaN when it has not converged in
    ``MAX_STEPS`` steps."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < _TINY:
        d = _TINY
    d = 1.0 / d
    h = d
    for m in range(1, MAX_STEPS + 1):
        m2 = 2.0 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        if abs(d) < _TINY:
            d = _TINY
        c = 1.0 + aa / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        if abs(d) < _TINY:
            d = _TINY
        c = 1.0 + aa / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        step = d * c
        h *= step
        if abs(step - 1.0) < _EPS:
            return h
    return math.nan


@jit
def _log1mexp(a: float) -> float:
    """``log(1 − e^a)`` for a ≤ 0, accurate at both ends."""
    if a > -0.6931471805599453:
        return math.log(-math.expm1(a))
    return math.log1p(-math.exp(a))


@jit
def _std_normal_log_sf(z: float) -> float:
    """``log P(Z > z)`` for a standard normal Z (``erfc`` while it does not underflow, then its asymptotic
    series)."""
    if z < 30.0:
        return math.log(0.5 * math.erfc(z / math.sqrt(2.0)))
    z2 = z * z
    series = 1.0 - 1.0 / z2 + 3.0 / (z2 * z2) - 15.0 / (z2 * z2 * z2)
    return -0.5 * z2 - math.log(z) - LOG_SQRT_2PI + math.log(series)


@jit
def _saddle_log_upper(k: float, n: float, p: float, q: float) -> float:
    """``log P(X ≥ k)`` by Lugannani–Rice with the second continuity correction (Daniels 1987): for a variance
    too large for the fraction (then its relative error is ~ 1/(npq)^(3/2))."""
    mean = n * p
    x = k - 0.5  # the continuity-corrected point
    if abs(x - mean) < 1e-9 * math.sqrt(n * p * q):
        return math.log(0.5)
    t = x / n
    # the saddle point s of the cumulant generating function, its deviance r and the standardised u
    s = math.log(t / (1.0 - t)) - math.log(p / q)
    deviance = bd0(x, mean) + bd0(n - x, n * q)
    r = math.copysign(math.sqrt(2.0 * deviance), x - mean)
    u = 2.0 * math.sinh(s / 2.0) * math.sqrt(n * t * (1.0 - t))
    if r > 0:
        log_tail = _std_normal_log_sf(r)
        density = -0.5 * r * r - LOG_SQRT_2PI
        correction = math.exp(density - log_tail) * (1.0 / u - 1.0 / r)
        return float(log_tail + math.log1p(correction))
    tail = 0.5 * math.erfc(-r / math.sqrt(2.0))  # P(Z ≤ r), ≥ ½ away from the mean
    density = math.exp(-0.5 * r * r) / math.sqrt(2 * math.pi)
    return float(_log1mexp(math.log(tail - density * (1.0 / u - 1.0 / r))))


@jit
def _direct_log_upper(k: float, n: float, p: float, q: float) -> float:
    """``log P(X ≥ k)`` for 1 ≤ k ≤ n on the side where the fraction converges (k above about the mean)."""
    cf = beta_fraction(k, n - k + 1.0, p)
    if math.isnan(cf):
        return float(_saddle_log_upper(k, n, p, q))
    return float(math.log(q) + log_pmf(k, n, p, q) + math.log(cf))


@jit
def log_upper(k: float, n: float, p: float, q: float) -> float:
    """``log P(X ≥ k)`` for X ~ Binomial(n, p), q = 1 − p."""
    if k <= 0:
        return 0.0
    if k > n:
        return -math.inf
    if p == 0.0:
        return -math.inf
    if q == 0.0:
        return 0.0
    if p < (k + 1.0) / (n + 3.0):
        return float(_direct_log_upper(k, n, p, q))
    # P(X ≥ k) = 1 − P(X ≤ k − 1) = 1 − P(Y ≥ n − k + 1), Y = n − X ~ Binomial(n, q)
    return float(_log1mexp(_direct_log_upper(n - k + 1.0, n, q, p)))


@jit
def log_lower(k: float, n: float, p: float, q: float) -> float:
    """``log P(X ≤ k)`` for X ~ Binomial(n, p): ``P(Y ≥ n − k)`` for Y ~ Binomial(n, q)."""
    return float(log_upper(n - k, n, q, p))


@jit
def log_tails(k: Any, n: Any, p: Any, q: Any, lower: Any, upper: Any) -> None:  # noqa: PLR0917 - numba: positional
    """``log P(X ≤ k)`` into ``lower`` and ``log P(X ≥ k)`` into ``upper``, element by element."""
    for i in range(len(k)):
        lower[i] = log_lower(k[i], n[i], p[i], q[i])
        upper[i] = log_upper(k[i], n[i], p[i], q[i])


@jit
def prior_tests(counts: Any, priors: Any, log_p: Any, ratio: Any, m: Any) -> None:
    """Per row of ``counts`` (W × K) against the same row of ``priors`` (W × K weights; all 0: no reference): the
    log of the Bonferroni-combined two-sided exact p-value, the largest prior ratio and the Bonferroni factor
    (``streammon.metrics.binomial.prior_shift_tests`` documents them). NaN for an empty row or one without a
    reference."""
    for w in range(counts.shape[0]):
        n = weight = 0.0
        support = 0
        for c in range(counts.shape[1]):
            n += counts[w, c]
            weight += priors[w, c]
            support += priors[w, c] > 0
        m[w] = 1 if support == 2 else support
        if n == 0 or weight == 0:
            log_p[w] = ratio[w] = math.nan
            continue
        smallest, largest = 0.0, 1.0
        for c in range(counts.shape[1]):
            x = counts[w, c]
            pi = priors[w, c] / weight
            if pi <= 0:
                if x > 0:  # a class the reference lacks: it cannot appear by chance
                    smallest, largest = -math.inf, math.inf
                continue
            pi = min(pi, 1.0)
            q = max(0.0, 1.0 - pi)
            two_sided = min(0.0, math.log(2.0) + min(log_lower(x, n, pi, q), log_upper(x, n, pi, q)))
            smallest = min(smallest, two_sided)
            share = x / n
            largest = max(largest, math.inf if share == 0 else max(share / pi, pi / share))
        log_p[w] = min(0.0, math.log(max(m[w], 1)) + smallest)
        ratio[w] = largest
