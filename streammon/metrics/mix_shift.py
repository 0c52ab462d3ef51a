"""Each window's class mix against its reference, for a stack of windows in one compiled loop: the window's
own imbalance ratio (RRT) and how far its mix moved from the reference (``streammon.findings.shift``
documents the statistics) — the Jensen–Shannon divergence and total variation between the two mixes, and
Pearson's chi-square statistic of the window's counts against the reference.

As NumPy array operations these cost some 30 calls of 1–3 µs for any number of windows, and a
report asks for them on every read. Plain Python compiled by numba on first use (``compiled``);
it also runs uncompiled (``NUMBA_DISABLE_JIT=1``). The statistic's tail is ``streammon.metrics.tails``'.

>>> import numpy as np
>>> mix = mix_shifts(np.array([[50.0, 50.0], [3.0, 1.0]]), np.array([[0.9, 0.1], [0.9, 0.0]]), np.array([-1, 1]))
>>> mix.rrt.tolist(), mix.js.round(3).tolist(), mix.tv.round(2).tolist(), mix.chi2.round(1).tolist(), mix.df.tolist()
([1.0, 3.0], [0.147, 0.138], [0.4, 0.25], [177.8, inf], [1, 0])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.confusion import FloatArray


@dataclass(frozen=True)
class MixShifts:
    """Per window: ``rrt``; and against its reference ``js`` (bits), ``tv``, ``chi2`` and its ``df`` (NaN and −1
    for a window without a reference)."""

    rrt: FloatArray
    js: FloatArray
    tv: FloatArray
    chi2: FloatArray
    df: npt.NDArray[np.int64]


def mix_shifts(observed: FloatArray, reference: FloatArray, minority: npt.NDArray[np.int64]) -> MixShifts:
    """The ``MixShifts`` of each row of ``observed`` (W × K class counts) against the same row of ``reference`` (W
    × K non-negative weights; a row of zeros: no reference).

    RRT (seed 004, Definition 2): with a binary ``minority`` class (its index, −1 for none) ``n(other) /
    n(minority)``, inf without minority samples; otherwise ``max n_i / min n_j`` over the classes present; NaN
    for an empty window. The chi-square statistic is inf when the window holds a class the reference lacks, 0
    with fewer than two classes in the reference; ``df`` is the reference's classes less one. An empty window's
    statistics are NaN but for ``df``.
    """
    windows = observed.shape[0]
    out = MixShifts(np.empty(windows), np.empty(windows), np.empty(windows), np.empty(windows),
                    np.empty(windows, dtype=np.int64))
    with np.errstate(all="ignore"):  # (only where the loop runs uncompiled: NaN and inf are its results)
        compiled()(np.ascontiguousarray(observed, dtype=np.float64),
                   np.ascontiguousarray(reference, dtype=np.float64), np.ascontiguousarray(minority, dtype=np.int64),
                   out.rrt, out.js, out.tv, out.chi2, out.df)
    return out


def _mix_shifts(  # noqa: PLR0917 - one compiled loop; numba takes its arrays positionally (results: the last five)
        observed: Any, reference: Any, minority: Any, rrt: Any, js: Any, tv: Any, chi2: Any, df: Any) -> None:
    """``mix_shifts``' loop."""
    windows, k = observed.shape
    for w in range(windows):
        n = weight = 0.0
        largest, smallest = 0.0, math.inf
        for i in range(k):
            count = observed[w, i]
            n += count
            weight += reference[w, i]
            largest = max(largest, count)
            if count > 0:
                smallest = min(smallest, count)
        low = minority[w]
        if n == 0:
            rrt[w] = math.nan
        elif low >= 0:
            rrt[w] = math.inf if observed[w, low] == 0 else observed[w, 1 - low] / observed[w, low]
        else:
            rrt[w] = largest / smallest
        if weight == 0 or n == 0:
            js[w] = tv[w] = chi2[w] = math.nan
            df[w] = -1
            for i in range(k):
                df[w] += reference[w, i] > 0
            continue
        left = right = distance = statistic = 0.0
        support = 0
        unseen = False
        for i in range(k):
            p = observed[w, i] / n
            q = reference[w, i] / weight
            mid = (p + q) / 2
            if p > 0:  # the Kullback–Leibler terms against the midpoint; a zero weight's term is 0
                left += p * np.log2(p / mid)
            if q > 0:
                right += q * np.log2(q / mid)
                support += 1
                expected = n * q
                statistic += (observed[w, i] - expected) ** 2 / expected
            elif observed[w, i] > 0:
                unseen = True
            distance += abs(p - q)
        js[w] = max(0.0, 0.5 * left + 0.5 * right)
        tv[w] = distance / 2
        df[w] = support - 1
        chi2[w] = math.inf if unseen else (0.0 if support < 2 else statistic)


@cache
def compiled() -> Any:
    """``_mix_shifts`` compiled by numba (once per process; the machine code is cached on disk where it can be)."""
    import numba  # noqa: PLC0415 - heavy (~0.4 s): imported by the first report, not with streammon

    return numba.njit(cache=True, nogil=True, error_model="numpy")(_mix_shifts)
