"""Each window's class mix against its reference, for a stack of windows (the loop is
``streammon.metrics.compiled.mix_shift``): the window's own imbalance ratio (RRT) and how far its mix
moved from the reference (``streammon.findings.shift`` documents the statistics) — the
Jensen–Shannon divergence and total variation between the two mixes, and Pearson's chi-square
statistic of the window's counts against the reference.

>>> import numpy as np
>>> mix = mix_shifts(np.array([[50.0, 50.0], [3.0, 1.0]]), np.array([[0.9, 0.1], [0.9, 0.0]]), np.array([-1, 1]))
>>> mix.rrt.tolist(), mix.js.round(3).tolist(), mix.tv.round(2).tolist(), mix.chi2.round(1).tolist(), mix.df.tolist()
([1.0, 3.0], [0.147, 0.138], [0.4, 0.25], [177.8, inf], [1, 0])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from streammon.metrics.confusion import FloatArray


@dataclass(frozen=True)
class MixShifts:
    """Per window: its ``mix`` (W × K, the class shares; NaN for an empty window) and ``rrt``; against its reference
    ``js`` (bits), ``tv``, ``chi2``, its ``df`` and ``p_value`` (NaN, −1 and NaN for a window without a reference;
    the p-value is NaN for ``df`` < 1 and 0 where ``chi2`` is inf)."""

    mix: FloatArray
    rrt: FloatArray
    js: FloatArray
    tv: FloatArray
    chi2: FloatArray
    df: npt.NDArray[np.int64]
    p_value: FloatArray


def mix_shifts(observed: FloatArray, reference: FloatArray, minority: npt.NDArray[np.int64]) -> MixShifts:
    """The ``MixShifts`` of each row of ``observed`` (W × K class counts) against the same row of ``reference`` (W
    × K non-negative weights; a row of zeros: no reference).

    RRT (seed 004, Definition 2): with a binary ``minority`` class (its index, −1 for none) ``n(other) /
    n(minority)``, inf without minority samples; otherwise ``max n_i / min n_j`` over the classes present; NaN
    for an empty window. The chi-square statistic is inf when the window holds a class the reference lacks, 0
    with fewer than two classes in the reference; ``df`` is the reference's classes less one. An empty window's
    statistics are NaN but for ``df``.
    """
    from streammon.metrics import compiled  # noqa: PLC0415 - imports numba: on first use, not with streammon
    from streammon.metrics.tails import log_gammas  # noqa: PLC0415 - (tails imports this module's loop too)

    windows = observed.shape[0]
    mix, per_window = np.empty(observed.shape), np.empty((5, windows))
    df = np.empty(windows, dtype=np.int64)
    with compiled.quiet():
        compiled.mix_shifts(np.ascontiguousarray(observed, dtype=np.float64),
                            np.ascontiguousarray(reference, dtype=np.float64),
                            np.ascontiguousarray(minority, dtype=np.int64), log_gammas(observed.shape[1]), mix,
                            per_window, df)
    return MixShifts(mix, per_window[compiled.RRT], per_window[compiled.JS], per_window[compiled.TV],
                     per_window[compiled.CHI2], df, per_window[compiled.P_VALUE])
