"""A bucket's histogram cells taken out by the samples that touched them (pure): what a window sliding by time
closes a bucket with when the bucket holds few samples, in time proportional to them rather than to the histogram.

A timed window's open bucket is a dense histogram (K × C × ``BINS`` counts: 204,800 at K = 10). Closing it by
scanning the whole histogram for its non-zero cells, adding it densely to the window and clearing it costs about a
millisecond, whatever it holds: a stream of 16 samples a second, each with its time, spent six times as long
closing buckets as counting samples. The samples' own flat cells, ``(class × C + column) × BINS + bin`` (``cells_of``),
name every cell the bucket holds, with repeats; ``take_cells`` visits them, reads each cell's count, zeroes it (so a
repeat reads 0 and is skipped) and returns the non-zero cells, each once, in the order first met, with their counts:
the bucket's histogram as ``ScoreCounts.add_cells`` takes it, and the bucket cleared (not sorted: sorting 10,000
cells took as long as finding them).

>>> hist = np.zeros((2, 1, 4), np.int32)
>>> true, bins = np.array([1, 0, 1]), np.array([[3], [0], [3]], np.int16)
>>> hist[true, 0, bins[:, 0]] += 1; hist[1, 0, 3] += 1  # (the second sample of cell 7 counted)
>>> window = np.zeros(8, np.int64)
>>> cells, counts = take_cells(cells_of(true, bins, 4), hist.reshape(-1), into=window)
>>> cells.tolist(), counts.tolist(), int(hist.sum()), window.tolist()
([7, 0], [2, 1], 0, [1, 0, 0, 0, 0, 0, 0, 2])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.jitting import compiled


@compiled
def _take(ids: Any, flat: Any, cells: Any, counts: Any, into: Any, with_into: bool, led: Any,  # noqa: PLR0917
          with_led: bool) -> int:  # pragma: no cover - compiled
    """Each cell of ``ids`` whose count in ``flat`` is not zero, once: into ``cells`` and ``counts``, zeroed in
    ``flat``, and added to ``into`` and ``led`` (flat histograms of as many cells or more) where given. Returns
    how many."""
    m = 0
    for i in range(ids.shape[0]):
        j = ids[i]
        v = flat[j]
        if v != 0:
            cells[m] = j
            counts[m] = v
            flat[j] = 0
            if with_into:
                into[j] += v
            if with_led:
                led[j] += v
            m += 1
    return m


@compiled
def _add_cells(flat: Any, cells: Any, counts: Any, sign: int) -> bool:  # pragma: no cover - compiled
    """Add ``sign`` times ``counts`` at distinct ``cells`` of ``flat``; subtracting, nothing if some cell would go
    below 0 (False)."""
    if sign < 0:
        for i in range(cells.shape[0]):
            if flat[cells[i]] < counts[i]:
                return False
    for i in range(cells.shape[0]):
        flat[cells[i]] += sign * counts[i]
    return True


_NONE = np.zeros(1, np.int64)  # the histogram argument of a pass that adds to none


@compiled
def _cells_of(true: Any, bins: Any, bins_per_column: int, out: Any) -> None:  # pragma: no cover - compiled
    n, columns = bins.shape
    for i in range(n):
        lead = true[i] * columns
        for c in range(columns):
            out[i * columns + c] = (lead + c) * bins_per_column + bins[i, c]


def cells_of(true: npt.NDArray[np.intp], bins: npt.NDArray[np.int16], bins_per_column: int) -> npt.NDArray[np.int64]:
    """The flat histogram cells (n × C) of samples of classes ``true`` whose scores fell in ``bins`` (n, C): in
    a histogram (rows, C, ``bins_per_column``), whatever its rows. One compiled pass (NumPy's four took ~35 µs
    for 1,000 samples at K = 10)."""
    out = np.empty(bins.size, np.int64)
    if bins.size:
        _cells_of(np.ascontiguousarray(true, dtype=np.intp), bins, bins_per_column, out)
    return out


def take_cells(ids: npt.NDArray[np.int64], flat: npt.NDArray[np.signedinteger[Any]], *,
               into: npt.NDArray[np.int64] | None = None, led: npt.NDArray[np.int64] | None = None,
               ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The non-zero cells of ``flat`` (a histogram, flattened: written in place) among ``ids`` — every cell that
    holds a count must be among them — each once, in the order of ``ids``, with their counts; those cells
    zeroed, so ``flat`` is all zeros after. In the same pass the counts are added to ``into`` and ``led`` (flat
    histograms, in place) where given: a closing bucket's window and the cumulative window it leads."""
    cells = np.empty(len(ids), np.int64)
    counts = np.empty(len(ids), np.int64)
    m = _take(ids, flat, cells, counts, _NONE if into is None else into, into is not None,
              _NONE if led is None else led, led is not None)
    return cells[:m], counts[:m]


def add_cells(flat: npt.NDArray[np.signedinteger[Any]], cells: npt.NDArray[np.signedinteger[Any]],
              counts: npt.NDArray[np.signedinteger[Any]], sign: int = 1) -> bool:
    """Add (``sign`` 1) or subtract (-1) ``counts`` at distinct flat ``cells`` of ``flat`` (in place): one compiled
    pass, where NumPy's fancy indexing read and wrote every cell twice and its check a third time. Subtracting,
    False and nothing changed if some cell would go below 0.

    >>> flat = np.array([0, 5, 2])
    >>> add_cells(flat, np.array([2, 1]), np.array([1, 5]), -1), flat.tolist()
    (True, [0, 0, 1])
    >>> add_cells(flat, np.array([0, 2]), np.array([3, 1]), -1), flat.tolist()  # cell 0 would go below 0
    (False, [0, 0, 1])
    """
    if not len(cells):
        return True
    return bool(_add_cells(flat, cells, counts, sign))
