"""Class-prior shift of a window against the reference (training) mix: one criterion, everywhere.

The decision (``shifted``) and its two numbers (``docs/explanation/prior-shift.md`` has the formulas):

- ``p_value`` — the exact test of "the window's true-class counts are a sample of the reference mix": per
  reference class the two-sided exact binomial p-value (doubled smaller tail) of its count, combined over the
  classes by Bonferroni (``streammon.metrics.binomial.prior_shift_tests``). Exact at every window size, so a
  window of one sample with a 1 % class does not cry wolf (p = 0.02 there, where Pearson's chi-square said
  2.5e-23). A class the reference never saw but the window holds gives p = 0.
- ``prior_ratio`` — the effect size: the largest per-class ratio ``max(p̂_c/π_c, π_c/p̂_c)``, inf when a
  reference class is absent or an unseen class is present. It suits imbalance: a 1 % → 6 % minority reads 6.

A window is ``shifted`` when ``p_value < alpha`` **and** ``prior_ratio >= min_ratio`` (the policy's
``shift_alpha`` and ``shift_min_ratio``): significant and material. The alert built on it turns off only at
looser levels (``streammon.findings.alerts``). Descriptive numbers kept beside them: ``js`` — the
Jensen–Shannon divergence in bits, exported as ``streammon_prior_shift`` — ``tv`` (total variation), and
Pearson's ``chi2`` with its ``df`` (no longer used for any decision).

>>> s = prior_shift([50, 50], [0.9, 0.1])
>>> round(s.js, 3), round(s.tv, 2), s.p_value < 1e-10, round(s.prior_ratio, 2), s.shifted
(0.147, 0.4, True, 5.0, True)
>>> prior_shift([9, 1], [0.9, 0.1]).shifted
False
>>> one = prior_shift([0, 1], [0.99, 0.01])  # one sample, of the 1 % class: as likely as 1 in 50 two-sided
>>> round(one.p_value, 4), one.shifted
(0.02, False)
>>> prior_shift([940, 60], [0.99, 0.01]).shifted  # 1 % -> 6 %: ratio 6, p ~ 1e-23
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from streammon.findings.encode import json_float
from streammon.metrics.binomial import prior_shift_tests
from streammon.metrics.confusion import FloatArray
from streammon.metrics.mix_shift import mix_shifts

DEFAULT_ALPHA = 0.01
DEFAULT_MIN_RATIO = 1.5


def js_divergence(p: FloatArray, q: FloatArray) -> float:
    """Jensen–Shannon divergence in bits between two distributions.

    >>> js_divergence(np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    1.0
    """
    return float(mix_shifts(np.asarray(p, dtype=np.float64)[None], np.asarray(q, dtype=np.float64)[None],
                            np.array([-1])).js[0])


@dataclass(frozen=True)
class PriorShift:
    """The prior-shift statistics of one window (NaN when the window is empty): ``p_value`` of the exact test,
    ``prior_ratio``, the decision ``shifted``, and the descriptive ``js``, ``tv``, ``chi2`` and ``df``."""

    js: float
    tv: float
    chi2: float
    df: int
    p_value: float
    shifted: bool
    prior_ratio: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the fields by name (NaN as ``None``, inf as ``"Infinity"``; see ``encode``).

        >>> prior_shift([3, 0], [0.0, 1.0]).to_dict()
        {'js': 1.0, 'tv': 1.0, 'chi2': 'Infinity', 'df': 0, 'p_value': 0.0, 'prior_ratio': 'Infinity', 'shifted': True}
        """
        return {"js": json_float(self.js), "tv": json_float(self.tv), "chi2": json_float(self.chi2), "df": self.df,
                "p_value": json_float(self.p_value), "prior_ratio": json_float(self.prior_ratio),
                "shifted": self.shifted}


def prior_shift(
    counts: Any,
    reference: Any,
    *,
    alpha: float = DEFAULT_ALPHA,
    min_ratio: float = DEFAULT_MIN_RATIO,
) -> PriorShift:
    """Compare a window's true-class ``counts`` with ``reference`` priors (same order)."""
    return prior_shifts(np.asarray(counts)[None], reference, alpha=alpha, min_ratio=min_ratio)[0]


def prior_shifts(
    counts: Any,
    reference: Any,
    *,
    alpha: float = DEFAULT_ALPHA,
    min_ratio: float = DEFAULT_MIN_RATIO,
) -> list[PriorShift]:
    """``prior_shift`` of each row of ``counts`` (W windows × K classes) against ``reference`` priors: one mix (K,)
    for all, or one per window (W, K)."""
    observed = np.asarray(counts, dtype=np.float64)
    ref = np.broadcast_to(np.asarray(reference, dtype=np.float64), observed.shape)
    mix = mix_shifts(observed, ref, np.full(len(observed), -1, dtype=np.int64))
    return prior_shifts_of(mix, observed, ref, alpha=alpha, min_ratio=min_ratio)


class _Shifts(Protocol):
    """Per window: ``js``, ``tv``, ``chi2`` and its ``df`` (``WindowNumbers``, ``MixShifts``)."""

    @property
    def js(self) -> FloatArray: ...
    @property
    def tv(self) -> FloatArray: ...
    @property
    def chi2(self) -> FloatArray: ...
    @property
    def df(self) -> npt.NDArray[np.int64]: ...


def prior_shifts_of(stats: _Shifts, counts: Any, priors: Any, *, alpha: float,
                    min_ratio: float) -> list[PriorShift]:
    """The ``PriorShift`` of each window (``counts``: W × K true-class counts, ``priors``: its reference, K or
    W × K) with the descriptive numbers of ``stats`` — a window with a reference."""
    observed = np.asarray(counts, dtype=np.float64)
    tests = prior_shift_tests(observed, priors)
    out = []
    for size, js, tv, chi2, df, p_value, ratio in zip(
            observed.sum(axis=1).tolist(), stats.js.tolist(), stats.tv.tolist(), stats.chi2.tolist(),
            stats.df.tolist(), tests.p_value.tolist(), tests.prior_ratio.tolist(), strict=True):
        if size == 0:
            out.append(PriorShift(math.nan, math.nan, math.nan, 0, math.nan, False))
            continue
        out.append(PriorShift(js, tv, chi2, df, p_value, is_shifted(p_value, ratio, alpha, min_ratio), ratio))
    return out


def is_shifted(p_value: float, prior_ratio: float, alpha: float, min_ratio: float) -> bool:
    """The criterion: significant (``p_value < alpha``) and material (``prior_ratio >= min_ratio``); the alert's
    "stay on" test is the same at its looser levels.

    >>> is_shifted(1e-5, 6.0, 0.01, 1.5), is_shifted(1e-5, 1.2, 0.01, 1.5), is_shifted(0.02, 6.0, 0.01, 1.5)
    (True, False, False)
    """
    return bool(p_value < alpha and prior_ratio >= min_ratio)
