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
>>> cells, counts = take_cells(cells_of(true, bins, 4), hist.reshape(-1))
>>> cells.tolist(), counts.tolist(), int(hist.sum())
([7, 0], [2, 1], 0)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.jitting import compiled


@compiled
def _take(ids: Any, flat: Any, cells: Any, counts: Any) -> int:  # pragma: no cover - compiled
    """Each cell of ``ids`` whose count in ``flat`` is not zero, once: into ``cells`` and ``counts``, zeroed in
    ``flat``. Returns how many."""
    m = 0
    for i in range(ids.shape[0]):
        j = ids[i]
        v = flat[j]
        if v != 0:
            cells[m] = j
            counts[m] = v
            flat[j] = 0
            m += 1
    return m


def cells_of(true: npt.NDArray[np.intp], bins: npt.NDArray[np.int16], bins_per_column: int) -> npt.NDArray[np.int64]:
    """The flat histogram cells (n × C) of samples of classes ``true`` whose scores fell in ``bins`` (n, C): in
    a histogram (rows, C, ``bins_per_column``), whatever its rows."""
    columns = bins.shape[1]
    lead = (np.asarray(true, np.int64) * columns)[:, None] + np.arange(columns, dtype=np.int64)
    cells: npt.NDArray[np.int64] = (lead * bins_per_column + bins).reshape(-1)
    return cells


def take_cells(ids: npt.NDArray[np.int64], flat: npt.NDArray[np.signedinteger[Any]],
               ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The non-zero cells of ``flat`` (a histogram, flattened: written in place) among ``ids`` — every cell that
    holds a count must be among them — each once, in the order of ``ids``, with their counts; those cells
    zeroed, so ``flat`` is all zeros after."""
    cells = np.empty(len(ids), np.int64)
    counts = np.empty(len(ids), np.int64)
    m = _take(ids, flat, cells, counts)
    return cells[:m], counts[:m]
