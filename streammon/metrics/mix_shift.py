"""How far each window's class mix is from its reference, for a stack of windows in one compiled loop
(``streammon.findings.shift`` documents the statistics): the Jensen–Shannon divergence and total variation
between the two mixes, and Pearson's chi-square statistic of the window's counts against the reference.

As NumPy array operations these cost some 20 calls of 1–3 µs for any number of windows, and a
report asks for them on every read. Plain Python compiled by numba on first use (``compiled``);
it also runs uncompiled (``NUMBA_DISABLE_JIT=1``). The statistic's tail is ``streammon.metrics.tails``'.

>>> import numpy as np
>>> js, tv, chi2, df = mix_shifts(np.array([[50.0, 50.0], [3.0, 1.0]]), np.array([[0.9, 0.1], [0.9, 0.0]]))
>>> js.round(3).tolist(), tv.round(2).tolist(), chi2.round(1).tolist(), df.tolist()
([0.147, 0.138], [0.4, 0.25], [177.8, inf], [1, 0])
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.confusion import FloatArray


def mix_shifts(observed: FloatArray,
               reference: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, npt.NDArray[np.int64]]:
    """``(js, tv, chi2, df)`` of each row of ``observed`` (W × K counts, a row not all 0) against the same row of
    ``reference`` (W × K non-negative weights, not all 0): the divergence in bits, the total variation, the
    statistic (inf when the window holds a class the reference lacks; 0 with fewer than two classes in the
    reference) and its degrees of freedom (the reference's classes less one)."""
    windows = observed.shape[0]
    js, tv, chi2 = np.empty(windows), np.empty(windows), np.empty(windows)
    df = np.empty(windows, dtype=np.int64)
    compiled()(np.ascontiguousarray(observed, dtype=np.float64), np.ascontiguousarray(reference, dtype=np.float64),
               js, tv, chi2, df)
    return js, tv, chi2, df


def _mix_shifts(observed: Any, reference: Any, js: Any, tv: Any, chi2: Any, df: Any) -> None:  # noqa: PLR0917
    """``mix_shifts``' loop (numba takes its arrays positionally; the results are written into the last four)."""
    windows, k = observed.shape
    for w in range(windows):
        n = 0.0
        weight = 0.0
        for i in range(k):
            n += observed[w, i]
            weight += reference[w, i]
        scale = 1.0 if n == 0 else n
        left = right = distance = statistic = 0.0
        support = 0
        unseen = False
        for i in range(k):
            p = observed[w, i] / scale
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
