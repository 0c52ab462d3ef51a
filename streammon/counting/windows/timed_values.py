"""A window sliding by time's own counts of each score value, per column and true class, at the entries of the
monitor's census (``streammon.counting.score_census``): what splits its bins exactly once a bucket has left it, when
the census no longer describes the window's samples.

Sample times never decrease, so a timed window's samples are the monitor's since its oldest bucket's first sample:
its value counts are the census's now less the census's then — the oldest bucket's *mark*. As each bucket opens
the window takes its mark (``ValueCensus.mark_before``: the census's counts less the batch's samples from the
bucket's first on, looked up again), but keeps only two marks whole, the oldest bucket's and the newest's; each
bucket between is kept as its mark less the one before, the cells the samples of one bucket moved (sparse: at most
a bucket's samples × C). When the oldest bucket leaves, the next one's difference is added to the oldest mark. A
read subtracts the oldest mark from the census's counts. No sample costs anything; a bucket that opens costs a
copy of the open columns' counts and a difference. Memory: two arrays of the census's counts (K = 10, every column
at 4,096 values: 1.6 MB each) and the differences, 8 bytes a cell (the default window's 60 buckets of 2,000
samples of a K = 10 model rounded to 3 decimals: 2.0 MiB whole and 5.4 MiB of differences, where a whole mark a
bucket took 12–33 MiB). A bucket whose mark is not known — one restored from a state file, which keeps none, or one
opened while the census counted nothing — leaves the window's counts unknown (``counts`` None: it reads the ring's
values, as before) while it is the oldest.

>>> from streammon.counting.score_census import ValueCensus
>>> census, v = ValueCensus(columns=1), TimedValues()
>>> true, scores = np.array([0, 0, 1]), np.array([[0.3], [0.3], [0.3]])  # bucket 0 takes two, bucket 1 one
>>> census.add(true, scores)
>>> v.opened(0, census, true, scores, 0); v.opened(1, census, true, scores, 2)
>>> v.counts(census.counts)[0, :1].tolist(), v.leave(1), v.counts(census.counts)[0, :1].tolist()
([[2, 1]], None, [[0, 1]])
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from streammon.counting.score_census import ValueCensus

class TimedValues:
    """The census's counts as the oldest bucket of a timed window opened, and what each later bucket moved
    (module docstring). A mark is the open columns' counts only: their indices and the counts (C', width, R)."""

    __slots__ = ("_buckets", "_first", "_last", "_moved", "_unknown")

    def __init__(self) -> None:
        self._buckets: list[int] = []  # the buckets with a mark, oldest first
        self._first: Mark | None = None  # the oldest one's mark
        self._last: Mark | None = None  # the newest one's
        # bucket -> its mark less the one before: its columns, shape, the flat cells that moved and by how much
        self._moved: dict[int, Moved] = {}
        self._unknown: set[int] = set()  # buckets whose mark is not known

    def opened(self, bucket: int, census: ValueCensus | None, true: npt.NDArray[np.intp],
               scores: npt.NDArray[np.float64], start: int) -> None:
        """``bucket`` takes samples ``start:`` of a batch (``true`` classes, ``scores``), the ``census`` already
        holding the batch: its mark, the census's counts before those samples, if it has none yet (None: not
        known)."""
        if bucket in self._unknown or (self._buckets and bucket <= self._buckets[-1]):
            return
        got = None if census is None else census.mark_before(true[start:], scores[start:])
        if got is None:
            self._unknown.add(bucket)
            return
        columns, counts = got[0], got[1].astype(np.int64, copy=False)
        if self._last is None:
            self._first, self._last = (columns, counts), (columns, counts.copy())
        else:  # (columns only close: this mark's are among the last one's)
            before = _padded(self._last[1][np.searchsorted(self._last[0], columns)], counts.shape)
            moved = (_padded(counts, before.shape) - before).reshape(-1)
            cells = np.flatnonzero(moved)
            small = np.int32 if before.size < 2**31 and len(cells) and np.abs(moved[cells]).max() < 2**31 else np.int64
            self._moved[bucket] = columns, before.shape, cells.astype(small), moved[cells].astype(small)
            self._last = columns, counts
        self._buckets.append(bucket)

    def leave(self, oldest: int) -> None:
        """The buckets before ``oldest`` leave the window: every one's mark, also a bucket's that took only unscored
        samples (a batch's part), which the window never closed and so never names when it leaves."""
        self._unknown = {b for b in self._unknown if b >= oldest}
        while self._buckets and self._buckets[0] < oldest:
            self._buckets.pop(0)
            if not self._buckets:
                self._first = self._last = None
                return
            assert self._first is not None
            their, shape, cells, moved = self._moved.pop(self._buckets[0])
            row, entry, cls = np.unravel_index(cells, shape)
            columns, first = self._first
            first = _padded(first, (len(first), *shape[1:]))
            first[np.searchsorted(columns, their[row]), entry, cls] += moved  # (distinct cells)
            self._first = columns, first

    def unknown(self, buckets: Iterable[int]) -> None:
        """These buckets (restored from a state file) have no mark."""
        self._unknown.update(buckets)

    def counts(self, census: npt.NDArray[Any] | None) -> npt.NDArray[np.int64] | None:
        """The window's counts (C, room, R) from the ``census``'s now; None if its oldest bucket's mark is not known
        (or no bucket holds a sample)."""
        live = self._buckets[:1] + sorted(self._unknown)[:1]
        if not live or census is None or min(live) in self._unknown or self._first is None:
            return None
        columns, mark = self._first
        if mark.shape[2] > census.shape[2]:
            return None  # (a census that dropped its counts: every column closed since)
        # the census's room is cut to its open columns' values when columns close (``ValueCensus._shrink``): past it a
        # mark holds only the counts of columns closed since, which no read takes
        width = min(mark.shape[1], census.shape[1])
        out = census.astype(np.int64)
        out[columns, :width, : mark.shape[2]] -= mark[:, :width]
        return out


Mark = tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]]  # the open columns and their counts (C', width, R)
# a bucket's mark less the one before: its open columns, the difference's shape, its non-zero flat cells and values
# (int32 where they fit: 8 bytes a cell)
Moved = tuple[npt.NDArray[np.intp], tuple[int, ...], npt.NDArray[np.signedinteger[Any]],
              npt.NDArray[np.signedinteger[Any]]]


def _padded(a: npt.NDArray[np.int64], shape: tuple[int, ...]) -> npt.NDArray[np.int64]:
    """``a`` in zeros at least ``shape`` (itself if it is as large)."""
    if all(n <= m for n, m in zip(shape, a.shape, strict=True)):
        return a
    out = np.zeros(tuple(max(n, m) for n, m in zip(shape, a.shape, strict=True)), np.int64)
    out[tuple(slice(0, m) for m in a.shape)] = a
    return out
