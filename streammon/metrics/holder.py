"""Hölder (power) means of recalls and their competitiveness bounds (seed 001).

The unweighted Hölder mean of recalls ``r_1..r_C`` with exponent ``p`` is
``M_p = ((1/C) Σ r_i^p)^(1/p)`` with the limits ``p → 0`` (geometric mean),
``p → −∞`` (minimum) and ``p → +∞`` (maximum). ACSA is ``p = 1``, G-mean
``p → 0``, H-mean ``p = −1``.

Seed 001, Section 5: the uniformly random classifier scores ``1/K`` under every
Hölder mean. A score below ``1/K`` proves some class is recalled worse than
random (*incompetent*); a score above ``S_sup(p, K) = M_p(1/K, 1, …, 1)`` proves
every class is recalled better than random (*competitive*); in between the score
alone cannot tell (*undecided*).

>>> holder_bounds(1, 2)
(0.5, 0.75)
>>> competitiveness(0.8, p=1, k=2)
'competitive'
>>> competitiveness(0.45, p=0, k=2)
'incompetent'
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from streammon.metrics.confusion import FloatArray

INCOMPETENT = "incompetent"
UNDECIDED = "undecided"
COMPETITIVE = "competitive"
UNDEFINED = "undefined"


def holder_mean(values: Sequence[float] | FloatArray, p: float) -> float:
    """The unweighted Hölder mean of non-negative ``values`` with exponent ``p``.

    A zero value drives every mean with ``p <= 0`` to 0 (its limit). An empty
    sequence or any NaN gives NaN.

    >>> holder_mean([0.25, 1.0], 1)
    0.625
    >>> holder_mean([0.25, 1.0], 0)
    0.5
    >>> holder_mean([0.25, 1.0], -math.inf)
    0.25
    >>> holder_mean([0.0, 1.0], -1)
    0.0
    """
    r = np.asarray(values, dtype=np.float64)
    if r.size == 0 or np.any(np.isnan(r)):
        return math.nan
    return defined_holder_mean(r, p)


def defined_holder_mean(r: FloatArray, p: float) -> float:
    """``holder_mean`` of values already known to be a non-empty float array without NaN.

    >>> defined_holder_mean(np.array([0.25, 1.0]), 1)
    0.625
    """
    if math.isnan(p):
        raise ValueError(f"Hölder exponent p must be a number or ±inf, got {p!r}")
    if p == math.inf:
        return float(r.max())
    if p == -math.inf:
        return float(r.min())
    if p <= 0 and np.any(r == 0):
        return 0.0
    if p == 0:
        return float(np.exp(np.mean(np.log(r))))
    with np.errstate(over="ignore", under="ignore"):
        direct = float(np.mean(r**p) ** (1.0 / p))
    if 0.0 < direct < math.inf or not r.max() > 0:
        return direct
    # r**p overflowed or underflowed (|p| in the hundreds or more): the same mean in the log domain,
    # M_p = exp((log Σ exp(p·log r) − log C) / p), shifted by the largest term
    with np.errstate(divide="ignore"):
        logs = p * np.log(r)
    top = float(logs.max())
    return float(np.exp((top + math.log(float(np.mean(np.exp(logs - top))))) / p))


def holder_bounds(p: float, k: int) -> tuple[float, float]:
    """Seed 001's bounds ``(1/k, S_sup)`` for a Hölder mean of ``k`` recalls.

    ``S_sup(p, k) = M_p(1/k, 1, …, 1)``: one recall at the random level, the
    others perfect.

    >>> holder_bounds(0, 2) == (0.5, 0.5 ** 0.5)
    True
    >>> holder_bounds(-math.inf, 3) == (1 / 3, 1 / 3)
    True
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"k must be an integer number of classes >= 2, got {k!r}")
    return _bounds(float(p), int(k))


@functools.lru_cache(maxsize=1024)
def _bounds(p: float, k: int) -> tuple[float, float]:
    """``holder_bounds`` of a validated ``k`` (kept: every report asks for the same few)."""
    low = 1.0 / k
    return low, holder_mean([low] + [1.0] * (k - 1), p)


def competitiveness(score: float, *, p: float, k: int) -> str:
    """Classify a Hölder-mean score of ``k`` recalls against the random classifier.

    Returns ``"incompetent"``, ``"undecided"``, ``"competitive"``, or
    ``"undefined"`` for a NaN score or fewer than two classes.

    >>> competitiveness(0.6, p=1, k=2)
    'undecided'
    >>> competitiveness(float("nan"), p=1, k=2)
    'undefined'
    """
    if math.isnan(score) or k < 2:
        return UNDEFINED
    low, sup = holder_bounds(p, k)
    if score < low:
        return INCOMPETENT
    if score > sup:
        return COMPETITIVE
    return UNDECIDED
