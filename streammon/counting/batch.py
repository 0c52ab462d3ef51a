"""A validated batch of samples on its way into the windows, and how it is counted.

``Batch`` holds a batch as label codes (see ``labels.code_labels``) with their times;
``count_pairs`` is the one counting primitive, run in cache-sized chunks for long batches.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from streammon.counting.counts import IntMatrix

IndexArray = npt.NDArray[np.intp]

CHUNK = 1 << 17  # samples per counting pass: one reused key buffer of this size stays in cache


def count_pairs(true: IndexArray, pred: IndexArray, capacity: int) -> IntMatrix:
    """Count (true, pred) index pairs into a ``capacity × capacity`` matrix.

    >>> count_pairs(np.array([0, 1, 1]), np.array([0, 1, 0]), 2).tolist()
    [[1, 0], [1, 1]]
    """
    n, cells = len(true), capacity * capacity
    # (Mutation testing: `<` sends n == CHUNK through the one-chunk loop, same counts; the copy= of astype only
    # decides whether bincount's fresh int64 array is copied: equivalent mutants.)
    if n <= CHUNK:
        keys = true * capacity
        keys += pred
        return np.bincount(keys, minlength=cells).reshape(capacity, capacity).astype(np.int64, copy=False)
    flat = np.zeros(cells, np.int64)
    buffer = np.empty(CHUNK, np.intp)  # page faults of a batch-sized temporary cost more than the counting
    for start, stop in chunk_bounds(n):
        keys = buffer[: stop - start]
        np.multiply(true[start:stop], capacity, out=keys)
        keys += pred[start:stop]
        flat += np.bincount(keys, minlength=cells)
    return flat.reshape(capacity, capacity)


def chunk_bounds(n: int) -> Iterator[tuple[int, int]]:
    """(start, stop) of consecutive chunks of at most ``CHUNK`` samples covering ``range(n)``.

    >>> list(chunk_bounds(2 * CHUNK + 5)) == [(0, CHUNK), (CHUNK, 2 * CHUNK), (2 * CHUNK, 2 * CHUNK + 5)]
    True
    """
    for start in range(0, n, CHUNK):
        yield start, min(n, start + CHUNK)


def to_index_square(counts: IntMatrix, lut: IndexArray | None, capacity: int) -> IntMatrix:
    """A code × code count matrix as a ``capacity × capacity`` matrix in class-index order.

    >>> to_index_square(np.array([[1, 2], [3, 4]]), np.array([1, 0]), 3).tolist()
    [[4, 3, 0], [2, 1, 0], [0, 0, 0]]
    """
    out = np.zeros((capacity, capacity), np.int64)
    if lut is None:
        out[: counts.shape[0], : counts.shape[1]] = counts  # (square counts: shape[1] for [0] is equivalent)
    else:
        out[np.ix_(lut, lut)] = counts
    return out


class Batch:
    """Validated samples in arrival order and their times: one per sample, one float for the
    whole batch, or None when no window needs them.

    ``scores`` (optional) holds each sample's checked score row (``streammon.counting.scoring``).
    Samples are held as codes: the class index of code ``c`` is ``lut[c]``, or ``c`` itself
    when ``lut`` is None. Counts are made over codes and permuted once, so a batch of
    labels that are not their own indices is never gathered sample by sample.
    """

    __slots__ = ("_delta", "lut", "pred", "scores", "stride", "times", "true")

    def __init__(
        self,
        true: IndexArray,
        pred: IndexArray,
        times: npt.NDArray[np.float64] | float | None,
        stride: int,
        lut: IndexArray | None = None,
        *,
        scores: npt.NDArray[np.float64] | None = None,
    ) -> None:
        self.true = true
        self.pred = pred
        self.times = times
        self.stride = stride  # cell id = true index * stride + pred index
        self.lut = lut
        self.scores = scores  # (n, C) checked scores, NaN rows for samples without one; None: no sample has one
        self._delta: tuple[int, IntMatrix] | None = None

    def __len__(self) -> int:
        return len(self.true)

    def code_span(self, k: int) -> int:
        """Codes lie in ``range(code_span(k))``: the table's length, or ``k`` (classes) when codes are indices."""
        return k if self.lut is None else len(self.lut)

    def preset_delta(self, capacity: int, codes: IntMatrix) -> None:
        """Give the batch its counts over codes (code × code) when they were made already (the detector's scan
        counts them on its way, ``detection.watch.DegradationWatch.feed``)."""
        self._delta = (capacity, codes if self.lut is None and len(codes) == capacity
                       else to_index_square(codes, self.lut, capacity))

    def delta(self, capacity: int) -> IntMatrix:
        """The whole batch counted once and shared by every window that needs it."""
        if self._delta is None or self._delta[0] != capacity:
            self._delta = (capacity, self.count(capacity))
        return self._delta[1]

    def count(self, capacity: int, start: int = 0, stop: int | None = None) -> IntMatrix:
        """Confusion counts (``capacity × capacity``, class-index order) of samples ``start:stop``."""
        t, p = self.true[start:stop], self.pred[start:stop]
        if self.lut is None:
            return count_pairs(t, p, capacity)
        return to_index_square(count_pairs(t, p, len(self.lut)), self.lut, capacity)

    def indices(self, start: int = 0, stop: int | None = None) -> tuple[IndexArray, IndexArray]:
        """Class indices of the true and predicted labels of samples ``start:stop``."""
        t, p = self.true[start:stop], self.pred[start:stop]
        return (t, p) if self.lut is None else (self.lut[t], self.lut[p])

    def cells(self, start: int, stop: int | None = None) -> npt.NDArray[np.int32]:
        """Cell ids ``true * stride + pred`` of samples ``start:stop``."""
        t, p = self.indices(start, stop)
        return (t * self.stride + p).astype(np.int32)
