"""Which score bins a monitor's histograms can hold samples in (pure): the span a report copies and reads.

A window's histogram is (K, C, BINS) counts, and a report used to copy all of it and walk all of it — at K = 10,
204,800 cells a window, most of them empty where a model's scores cover part of the bins. Every sample a window
counts came in a batch of the monitor's, so the bins of every scored sample ever taken, per score column, bound
where any window's counts can be non-zero: ``span[c] = [lo, hi)`` holds column c's bins of every sample (an empty
span, ``lo >= hi``, none). It only widens: samples that leave leave it as it is, still a bound.
A snapshot copies the bins of the columns' spans (``ScoreTally.slab``); the score metrics read only each column's
span (``window_score_loop``), which changes no value: the cells left out are 0.

>>> span = empty_span(2)
>>> widen(span, np.array([[5, 9], [0, 0], [7, 2]], np.int16), np.array([[0.1, 0.2], [np.nan, np.nan], [0.3, 0.1]]))
>>> span.tolist()  # the unscored middle row (bin 0) left out
[[5, 8], [2, 10]]
>>> hist = np.zeros((2, 2, 12), np.int64); hist[1, 0, 3] = 4; hist[0, 1, 11] = 1
>>> occupied(hist).tolist()
[[3, 4], [11, 12]]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.jitting import compiled
from streammon.metrics.score_bins import BINS

Span = npt.NDArray[np.int64]  # (C, 2): each score column's [lo, hi) of bins


def empty_span(columns: int) -> Span:
    """The span of no sample: ``[BINS, 0)`` in every column."""
    span = np.empty((columns, 2), np.int64)
    span[:, 0], span[:, 1] = BINS, 0
    return span


def widen(span: Span, bins: npt.NDArray[np.int16], scores: npt.NDArray[np.float64]) -> None:
    """Widen ``span`` (C, 2) in place to the bins ``bins`` (n, C) of the samples whose ``scores`` (n, C) are
    scores (a NaN first column: a sample without one, whose bins mean nothing)."""
    if len(bins):
        _widen(span, bins, scores)


@compiled
def _widen(span: Any, bins: Any, scores: Any) -> None:  # pragma: no cover - compiled
    n, columns = bins.shape
    lo = span[:, 0].copy()
    last = span[:, 1] - 1
    for i in range(n):
        if scores[i, 0] == scores[i, 0]:  # not NaN
            for c in range(columns):
                b = bins[i, c]
                lo[c] = min(lo[c], b)
                last[c] = max(last[c], b)
    span[:, 0] = lo
    span[:, 1] = last + 1


def occupied(hist: npt.NDArray[np.integer]) -> Span:
    """The span of a histogram's non-zero cells (K, C, BINS): each column's first and past its last, over every
    class (``empty_span`` where a column holds none). Reads every cell: for a restored state, once."""
    held = (hist != 0).any(axis=0)  # (C, BINS)
    span = empty_span(hist.shape[1])
    for c in range(hist.shape[1]):
        where = np.flatnonzero(held[c])
        if len(where):
            span[c] = where[0], where[-1] + 1
    return span


def union(a: Span, b: Span) -> Span:
    """The span that covers both."""
    return np.stack([np.minimum(a[:, 0], b[:, 0]), np.maximum(a[:, 1], b[:, 1])], axis=1)
