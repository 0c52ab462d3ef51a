"""A sample's scores sorted by (bin, score), column by column (pure, compiled): what ``streammon.metrics.bin_values``
reads each bin's distinct values from.

A counting sort by bin, every column at once in row order (the exact ring's layout), then each bin's run by score:
by insertion up to ``SMALL_RUN`` samples (a continuous model's runs are short), by counting where a long run takes
at most ``FEW_VALUES`` values (a few-valued model's bin: hundreds of samples at three values), else by a merge
sort. O(n) but for the long runs' own sorts, where a sort of each column by two keys took 1.4 ms at K = 10.
Compiled on first use (``streammon.metrics.jitting``); its loops call nothing of another file (numba's disk cache).

>>> bins, scores = np.array([[5], [3], [5]], np.int16), np.array([[0.52], [0.3], [0.51]])
>>> sb, ss, st = sorted_by_bin(bins, scores, np.array([1, 0, 0]))
>>> sb.tolist(), ss.tolist(), st.tolist()
([[3, 5, 5]], [[0.3, 0.51, 0.52]], [[0, 0, 1]])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.jitting import compiled
from streammon.metrics.score_bins import BINS

SMALL_RUN = 32  # a bin's samples sorted by insertion up to this many, else by a merge sort
FEW_VALUES = 16  # ... or, if they take at most this many values, by counting (``_group_run``; at most SMALL_RUN)


def jit(function: Any) -> Any:
    """A loop of this module compiled (``streammon.metrics.jitting``)."""
    return compiled(function, error_model="numpy")


@jit
def _sort(bins: Any, scores: Any, true: Any, sb: Any, ss: Any, st: Any,  # noqa: PLR0917
          start: Any) -> None:  # pragma: no cover - compiled
    """Each column c of ``bins``/``scores``/``true`` (n, C) sorted by (bin, score) into ``sb``/``ss``/``st``
    (C, n): a counting sort by bin (``start``: scratch (C, BINS + 1), zeros), every column at once in row order
    (the ring's layout), then each bin's few samples by score — O(n) but for the bins' own sorts, where a sort
    of each column by two keys took 1.4 ms at K = 10."""
    n, columns = bins.shape
    for i in range(n):
        for c in range(columns):
            start[c, bins[i, c] + 1] += 1
    for c in range(columns):
        for b in range(start.shape[1] - 1):
            start[c, b + 1] += start[c, b]
    for i in range(n):
        for c in range(columns):
            b = bins[i, c]
            at = start[c, b]
            start[c, b] = at + 1
            sb[c, at] = b
            ss[c, at] = scores[i, c]
            st[c, at] = true[i]
    seen = np.empty(FEW_VALUES)  # scratch of ``_group_run``
    held = np.empty(FEW_VALUES, np.int64)
    spare_values, spare_classes = np.empty(n), np.empty(n, np.intp)
    for c in range(columns):
        i = 0
        while i < n:  # each bin's run, by score (stable: the classes of one value in sample order)
            j = i + 1
            while j < n and sb[c, j] == sb[c, i]:
                j += 1
            if j - i > SMALL_RUN:
                if not _group_run(ss[c, i:j], st[c, i:j], seen, held, spare_values, spare_classes):
                    _sort_run(ss[c, i:j], st[c, i:j])
            elif j - i > 1:
                _sort_run(ss[c, i:j], st[c, i:j])
            i = j


@jit
def _group_run(values: Any, classes: Any, seen: Any, held: Any, spare_values: Any,  # noqa: PLR0917
               spare_classes: Any) -> bool:  # pragma: no cover - compiled
    """A long run of at most ``FEW_VALUES`` distinct scores (a few-valued model's bin: hundreds of samples at
    three values) sorted in place as ``_sort_run`` sorts it, by counting: its values found and sorted, then each
    sample moved to its value's place in sample order — O(n) with no array made, where a merge sort of each
    such run took most of a 10,000-sample window's reading (~4 ms at K = 10). False, untouched, past
    ``FEW_VALUES`` values."""
    n = values.shape[0]
    d = 0
    for i in range(n):
        v = values[i]
        found = False
        for e in range(d):
            if seen[e] == v:
                held[e] += 1
                found = True
                break
        if not found:
            if d == seen.shape[0]:
                return False
            seen[d] = v
            held[d] = 1
            d += 1
    _sort_run(seen[:d], held[:d])  # the few values in ascending order, their counts alongside (by insertion)
    at = 0
    for e in range(d):  # where each value's samples start
        h = held[e]
        held[e] = at
        at += h
    for i in range(n):
        spare_values[i] = values[i]
        spare_classes[i] = classes[i]
    for i in range(n):
        v = spare_values[i]
        e = 0
        while seen[e] != v:
            e += 1
        values[held[e]] = v
        classes[held[e]] = spare_classes[i]
        held[e] += 1
    return True


@jit
def _sort_run(values: Any, classes: Any) -> None:  # pragma: no cover - compiled
    """One bin's scores sorted ascending in place, their classes alongside (stable): by insertion up to
    ``SMALL_RUN`` (no array made: a continuous model's runs are short), else a merge sort."""
    n = values.shape[0]
    if n <= SMALL_RUN:
        for x in range(1, n):
            value, cls = values[x], classes[x]
            y = x - 1
            while y >= 0 and values[y] > value:
                values[y + 1] = values[y]
                classes[y + 1] = classes[y]
                y -= 1
            values[y + 1] = value
            classes[y + 1] = cls
        return
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    sorted_classes = classes[order]
    values[:] = sorted_values
    classes[:] = sorted_classes



def sorted_by_bin(bins: npt.NDArray[np.int16], scores: npt.NDArray[np.float64], true: npt.NDArray[np.intp],
                  ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.intp]]:
    """Each column of ``bins``, ``scores`` (n, C) and the samples' ``true`` classes sorted by (bin, score): the
    bins, scores and classes, (C, n) each (stable: a value's classes in sample order)."""
    columns, n = bins.shape[1], len(true)
    sb, ss, st = np.empty((columns, n), np.int64), np.empty((columns, n)), np.empty((columns, n), np.intp)
    _sort(np.ascontiguousarray(bins), np.ascontiguousarray(scores, np.float64), np.asarray(true, np.intp), sb, ss, st,
          np.zeros((columns, BINS + 1), np.int64))
    return sb, ss, st
