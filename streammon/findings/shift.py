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
from streammon.metrics.tails import chi2_sfs

DEFAULT_ALPHA = 0.01
DEFAULT_MIN_JS = 0.01


def _entropy_terms(p: FloatArray, q: FloatArray) -> FloatArray:
    """Σ p·log2(p/q) over the last axis, terms with p = 0 left out (their ratio taken as 1)."""
    ratio = np.divide(p, q, out=np.ones(np.broadcast(p, q).shape), where=p > 0)
    out: FloatArray = (p * np.log2(ratio)).sum(axis=-1)
    return out


def js_divergence(p: FloatArray, q: FloatArray) -> float:
    """Jensen–Shannon divergence in bits between two distributions.

    >>> js_divergence(np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    1.0
    """
    return float(js_divergences(np.asarray(p)[None], np.asarray(q))[0])


def js_divergences(p: FloatArray, q: FloatArray) -> FloatArray:
    """``js_divergence`` of each row of ``p`` against ``q`` (rows of the same length, or one row): both
    Kullback–Leibler terms against the midpoint in one pass."""
    mid = (p + q) / 2
    both = np.stack(np.broadcast_arrays(p, q))
    terms = _entropy_terms(both, mid)
    out: FloatArray = np.maximum(0.0, 0.5 * terms[0] + 0.5 * terms[1])
    return out


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
    return prior_shifts(np.asarray(counts)[None], reference, alpha=alpha, min_js=min_js)[0]


def prior_shifts(
    counts: Any,
    reference: Any,
    *,
    alpha: float = DEFAULT_ALPHA,
    min_js: float = DEFAULT_MIN_JS,
) -> list[PriorShift]:
    """``prior_shift`` of each row of ``counts`` (W windows × K classes) against ``reference`` priors: one mix (K,)
    for all, or one per window (W, K)."""
    # (Mutation testing: without dtype=, int counts become floats at the first division below: the same values.)
    observed = np.asarray(counts, dtype=np.float64)
    ref = np.broadcast_to(np.asarray(reference, dtype=np.float64), observed.shape)
    ref = ref / ref.sum(axis=1, keepdims=True)
    n = observed.sum(axis=1)
    window = observed / np.where(n == 0, 1.0, n)[:, None]
    js = js_divergences(window, ref)
    tv = np.abs(window - ref).sum(axis=1) / 2
    support = ref > 0
    dfs = support.sum(axis=1) - 1
    # a class the reference never saw but a window holds: chi2 = inf, p = 0
    unseen = ((observed > 0) & ~support).any(axis=1)
    expected = n[:, None] * ref
    with np.errstate(divide="ignore", invalid="ignore"):
        chi2s = np.where(support, (observed - expected) ** 2 / expected, 0.0).sum(axis=1)
    chi2s = np.where(unseen, math.inf, np.where(dfs < 1, 0.0, chi2s))
    p_values = np.full(len(n), math.nan)
    for df in set(dfs.tolist()) - {0, -1}:  # (windows of one reference share their degrees of freedom)
        rows = dfs == df
        p_values[rows] = chi2_sfs(chi2s[rows], df)
    out = []
    for size, js_i, tv_i, chi2, df, p_value in zip(n.tolist(), js.tolist(), tv.tolist(), chi2s.tolist(),
                                                   dfs.tolist(), np.where(unseen, 0.0, p_values).tolist(),
                                                   strict=True):
        if size == 0:
            out.append(PriorShift(math.nan, math.nan, math.nan, 0, math.nan, False))
            continue
        out.append(PriorShift(js_i, tv_i, chi2, df, p_value, bool(p_value < alpha and js_i >= min_js)))
    return out
