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
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from streammon.findings.encode import json_float
from streammon.metrics.confusion import FloatArray
from streammon.metrics.mix_shift import mix_shifts

DEFAULT_ALPHA = 0.01
DEFAULT_MIN_JS = 0.01


def js_divergence(p: FloatArray, q: FloatArray) -> float:
    """Jensen–Shannon divergence in bits between two distributions.

    >>> js_divergence(np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    1.0
    """
    return float(mix_shifts(np.asarray(p, dtype=np.float64)[None], np.asarray(q, dtype=np.float64)[None],
                            np.array([-1])).js[0])


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
    observed = np.asarray(counts, dtype=np.float64)
    ref = np.broadcast_to(np.asarray(reference, dtype=np.float64), observed.shape)
    mix = mix_shifts(observed, ref, np.full(len(observed), -1, dtype=np.int64))
    return prior_shifts_of(mix, observed.sum(axis=1).tolist(), alpha=alpha, min_js=min_js)


class _Shifts(Protocol):
    """Per window: ``js``, ``tv``, ``chi2`` and its ``df`` and ``p_value`` (``WindowNumbers``, ``MixShifts``)."""

    @property
    def js(self) -> FloatArray: ...
    @property
    def tv(self) -> FloatArray: ...
    @property
    def chi2(self) -> FloatArray: ...
    @property
    def df(self) -> npt.NDArray[np.int64]: ...
    @property
    def p_value(self) -> FloatArray: ...


def prior_shifts_of(stats: _Shifts, sizes: list[int] | list[float], *, alpha: float,
                    min_js: float) -> list[PriorShift]:
    """The ``PriorShift`` of each window of ``stats`` (``sizes``: its samples) — a window with a reference."""
    out = []
    for size, js, tv, chi2, df, p_value in zip(sizes, stats.js.tolist(), stats.tv.tolist(), stats.chi2.tolist(),
                                               stats.df.tolist(), stats.p_value.tolist(), strict=True):
        if size == 0:
            out.append(PriorShift(math.nan, math.nan, math.nan, 0, math.nan, False))
            continue
        out.append(PriorShift(js, tv, chi2, df, p_value, bool(p_value < alpha and js >= min_js)))
    return out
