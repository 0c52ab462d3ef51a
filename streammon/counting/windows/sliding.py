"""The sliding-by-count window: a ring of cell ids (4 bytes a sample), one subtraction per evicted sample."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.batch import Batch, count_pairs
from streammon.counting.counts import IntMatrix
from streammon.counting.windows.base import Window

DIRECT_CELLS = 1 << 16  # a sliding window bincounts its cell ids directly while they span at most this many


class Sliding(Window):
    """Exactly the last ``size`` samples.

    >>> Sliding(500).describe()
    {'kind': 'sliding', 'name': 'sliding_500', 'size': 500}
    """

    kind = "sliding"

    def __init__(self, size: int, *, name: str | None = None) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"Sliding size must be an int >= 1, got {size!r}")
        super().__init__(f"sliding_{size}" if name is None else name)
        self.size = size
        self._ring = np.zeros(size, np.int32)
        self._head = 0  # next position to write
        self._filled = 0

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "size": self.size}

    def state(self) -> dict[str, Any]:
        return {**super().state(), "ring": self._ring.tolist(), "head": self._head, "filled": self._filled}

    def restore(self, state: dict[str, Any]) -> None:
        super().restore(state)
        stride = self._stride
        ring = np.asarray(state["ring"], dtype=np.int64)  # (without dtype=: equivalent for a ring of ints)
        head, filled = int(state["head"]), int(state["filled"])
        if ring.shape != (self.size,) or not (0 <= head < self.size and 0 <= filled <= self.size):
            raise ValueError(f"saved ring of {self.name!r} does not fit a window of {self.size}")
        if np.any(ring < 0) or np.any(ring >= stride * stride):
            raise ValueError(f"saved ring of {self.name!r} holds cell ids outside the class range")
        self._ring = ring.astype(np.int32)
        self._head, self._filled = head, filled
        # (Mutation testing: ring[:filled] is the whole ring when filled == size, so `<=` or always slicing are
        # equivalent mutants.)
        live = self._ring[:filled] if filled < self.size else self._ring
        if not np.array_equal(self._count_cells(live), self._counts):
            raise ValueError(f"saved counts of {self.name!r} do not match its ring")

    def _count_cells(self, cells: npt.NDArray[np.int32]) -> IntMatrix:
        stride, capacity = self._stride, self._capacity
        # (Mutation testing: capacity never exceeds stride and both branches count the same cells, so mutants
        # of this test only pick the other way to the same counts: equivalent.)
        if capacity <= stride and capacity * stride <= DIRECT_CELLS:  # count the cell ids themselves
            flat = np.bincount(cells, minlength=capacity * stride)
            return flat.reshape(capacity, stride)[:, :capacity].astype(np.int64)
        rows, cols = np.divmod(cells.astype(np.intp), stride)
        return count_pairs(rows, cols, capacity)

    def ingest(self, batch: Batch) -> None:
        m = len(batch)
        if m == 0:
            return
        size = self.size
        if m <= _FEW:  # a flush of a few per-sample updates: each sample in and the oldest out, one by one
            self._ingest_few(batch)
            return
        # (Mutation testing: `m > size`, `evict >= 0` and cells(None) for cells(0) are equivalent mutants: the
        # general path also replaces a whole ring, evicting nothing subtracts zero, and start None is 0.)
        if m >= size:
            new = batch.cells(m - size)
            self._ring[:] = new
            self._head, self._filled = 0, size
            self._counts = self._count_cells(new)
            return
        evict = self._filled + m - size
        if evict > 0:  # the oldest samples are the next ones after the head once the ring is full
            oldest = self._head if self._filled == size else 0
            self._counts -= self._count_cells(_ring_read(self._ring, oldest, evict))
        _ring_write(self._ring, self._head, batch.cells(0))
        self._head = (self._head + m) % size
        self._filled = min(size, self._filled + m)
        self._counts += batch.delta(self._capacity)

    def _ingest_few(self, batch: Batch) -> None:
        """``ingest`` of a batch of at most ``_FEW`` samples, sample by sample: the same ring and counts."""
        true, pred = batch.indices()
        ring, counts, stride, size = self._ring, self._counts, self._stride, self.size
        head, filled = self._head, self._filled
        for t, p in zip(true.tolist(), pred.tolist(), strict=True):
            if filled == size:  # full: the sample at the head is the oldest, and leaves
                old = int(ring[head])
                counts[old // stride, old % stride] -= 1
            else:
                filled += 1
            ring[head] = t * stride + p
            counts[t, p] += 1
            head = (head + 1) % size
        self._head, self._filled = head, filled


_FEW = 8  # samples up to which a sliding window takes a batch one sample at a time (array calls cost more)


def _ring_read(ring: npt.NDArray[np.int32], start: int, n: int) -> npt.NDArray[np.int32]:
    """``n`` entries from ``start``, wrapping around (at most two slices, no index array)."""
    end = start + n
    if end <= len(ring):  # (mutation testing: `<` is equivalent, end == len(ring) concatenates an empty slice)
        return ring[start:end]
    return np.concatenate([ring[start:], ring[: end - len(ring)]])


def _ring_write(ring: npt.NDArray[np.int32], start: int, values: npt.NDArray[np.int32]) -> None:
    """Write ``values`` (no longer than the ring) from ``start``, wrapping around."""
    first = min(len(values), len(ring) - start)
    ring[start:start + first] = values[:first]
    ring[: len(values) - first] = values[first:]


