"""Class-prior shift of a window against the reference (training) mix.

Three numbers, each documented where it is computed:

- ``js`` — Jensen–Shannon divergence (base 2, in [0, 1]) between the window's
  priors and the reference priors: the effect size, exported as
  ``streammon_prior_shift``.
- ``tv`` — total variation distance (half the L1 distance), in [0, 1].
- ``chi2``/``p_value`` — Pearson's chi-square goodness-of-fit test of the
  window's true-class counts against the reference priors, so that a small
  window does not cry wolf. A class the reference never saw but the window holds
  makes the statistic infinite (p = 0).

A window is ``shifted`` when the test rejects (``p_value < alpha``) **and** the
effect is material (``js >= min_js``): large windows detect tiny, harmless shifts.

>>> s = prior_shift([50, 50], [0.9, 0.1])
>>> round(s.js, 3), round(s.tv, 2), s.p_value < 1e-10, s.shifted
(0.147, 0.4, True, True)
>>> prior_shift([9, 1], [0.9, 0.1]).shifted
False
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammon.findings.encode import json_float
from streammon.metrics.confusion import FloatArray
from streammon.metrics.tails import chi2_sf

DEFAULT_ALPHA = 0.01
DEFAULT_MIN_JS = 0.01


def _entropy_term(p: FloatArray, q: FloatArray) -> float:
    keep = p > 0
    return float(np.sum(p[keep] * np.log2(p[keep] / q[keep])))


def js_divergence(p: FloatArray, q: FloatArray) -> float:
    """Jensen–Shannon divergence in bits between two distributions.

    >>> js_divergence(np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    1.0
    """
    mid = (p + q) / 2
    return max(0.0, 0.5 * _entropy_term(p, mid) + 0.5 * _entropy_term(q, mid))


@dataclass(frozen=True)
class PriorShift:
    """The prior-shift statistics of one window (NaN when the window is empty)."""

    js: float
    tv: float
    chi2: float
    df: int
    p_value: float
    shifted: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the fields by name (NaN as ``None``, inf as ``"Infinity"``; see ``encode``).

        >>> prior_shift([3, 0], [0.0, 1.0]).to_dict()
        {'js': 1.0, 'tv': 1.0, 'chi2': 'Infinity', 'df': 0, 'p_value': 0.0, 'shifted': True}
        """
        return {"js": json_float(self.js), "tv": json_float(self.tv), "chi2": json_float(self.chi2), "df": self.df,
                "p_value": json_float(self.p_value), "shifted": self.shifted}


def prior_shift(
    counts: Any,
    reference: Any,
    *,
    alpha: float = DEFAULT_ALPHA,
    min_js: float = DEFAULT_MIN_JS,
) -> PriorShift:
    """Compare a window's true-class ``counts`` with ``reference`` priors (same order)."""
    # (Mutation testing: without dtype= int, bool or float inputs give the same numbers, each operation below
    # mixes them with float64 or widens the sum: equivalent mutants for the numeric inputs callers pass.)
    # (Mutation testing: without dtype=, int counts become floats at the first division below: the same values.)
    observed = np.asarray(counts, dtype=np.float64)
    ref = np.asarray(reference, dtype=np.float64)
    ref = ref / ref.sum()
    n = observed.sum()
    if n == 0:
        return PriorShift(math.nan, math.nan, math.nan, 0, math.nan, False)
    window = observed / n
    js = js_divergence(window, ref)
    tv = float(np.abs(window - ref).sum() / 2)
    support = ref > 0
    df = int(support.sum()) - 1
    if np.any(observed[~support] > 0):
        chi2, p_value = math.inf, 0.0
    elif df < 1:
        chi2, p_value = 0.0, math.nan
    else:
        expected = n * ref[support]
        chi2 = float(np.sum((observed[support] - expected) ** 2 / expected))
        p_value = chi2_sf(chi2, df)
    shifted = bool(p_value < alpha and js >= min_js)
    return PriorShift(js, tv, chi2, df, p_value, shifted)
