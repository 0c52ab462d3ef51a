"""A window sliding by time's own counts of each score value, per column and true class, at the entries of the
monitor's census (``streammon.counting.score_census``): what splits its bins exactly once a bucket has left it, when
the census no longer describes the window's samples.

Sample times never decrease, so a timed window's samples are the monitor's since its oldest bucket's first sample:
its value counts are the census's now less the census's then — the oldest bucket's *mark*. The window keeps two marks
whole, the oldest bucket's and the newest's, and for each bucket between what the census counted from the mark
before to its own. A bucket's mark is made from the samples themselves where they are few — their census entries as
the census gave them (``ValueCensus.entries``: no lookup again), at most ``RAW_LIMIT`` scores since the newest mark,
kept as they came (2 bytes a score) and added to the newest mark. After more, the mark is made whole, the census's
counts less the batch's samples from the bucket's first on, at their entries (``ValueCensus.mark_before``), and its
difference from the newest mark kept as the cells that moved (8 bytes a cell). When the oldest bucket leaves, the
next one's part is added to the oldest mark. A read subtracts the oldest mark from the census's counts.

What a small bucket costs is thus in its samples, not in the census's size: a whole mark and its difference cost
~1.2 ms a bucket at K = 10 whatever the bucket held (``examples/bench_timed_buckets.py``: a few-valued model's scores
with their times, 1,000 a minute's bucket, were counted at 0.06 of the unscored rate when every mark was whole;
0.22 now); past ``RAW_LIMIT`` a bucket's samples cost more than that. Memory: two arrays of the census's counts (K =
10, every column at 4,096 values: 3.3 MB each) and the buckets' parts. A bucket
whose mark is not known — one restored from a state file, which keeps none, or one opened while the census counted
nothing — leaves the window's counts unknown (``counts`` None: it reads the ring's values, as before) while it is
the oldest.

>>> from streammon.counting.score_census import ValueCensus
>>> from streammon.counting.windows.scored_batch import ScoredBatch
>>> census, v = ValueCensus(columns=1), TimedValues()
>>> batch = ScoredBatch(np.array([0, 0, 1]), np.array([[0.3], [0.3], [0.3]]), None, positive=1)
>>> census.add(batch.true, batch.scores); batch.census, batch.entries = census, census.entries
>>> v.opened(0, batch, 0); v.took(batch, 0, 2); v.opened(1, batch, 2); v.took(batch, 2, 3)  # buckets 0, 1
>>> v.counts(census.counts)[0, :1].tolist(), v.leave(1), v.counts(census.counts)[0, :1].tolist()
([[2, 1]], None, [[0, 1]])
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.value_census import CENSUS_LIMIT, add_entries, padded_counts

if TYPE_CHECKING:
    from streammon.counting.windows.scored_batch import ScoredBatch

RAW_LIMIT = 1 << 17  # the scores (samples x C) since the newest mark kept as their entries (10,000 samples at K = 10)


class TimedValues:
    """The census's counts as the oldest and the newest bucket of a timed window opened, and what the census
    counted between each later bucket's mark and the one before (module docstring)."""

    __slots__ = ("_buckets", "_first", "_last", "_moved", "_raw", "_raw_size", "_unknown")

    def __init__(self) -> None:
        self._buckets: list[int] = []  # the buckets with a mark, oldest first
        self._first: npt.NDArray[np.int64] | None = None  # the oldest one's mark: (C, width, R)
        self._last: npt.NDArray[np.int64] | None = None  # the newest one's
        self._moved: dict[int, Moved] = {}  # bucket -> what the census counted between its mark and the one before
        # the entries and classes of the samples counted since the newest mark, while at most ``RAW_LIMIT`` scores;
        # None past that: the next mark is made whole and its difference from the newest kept
        self._raw: list[tuple[npt.NDArray[np.int16], npt.NDArray[np.int32]]] | None = []
        self._raw_size = 0
        self._unknown: set[int] = set()  # buckets whose mark is not known

    def opened(self, bucket: int, batch: ScoredBatch, start: int) -> None:
        """``bucket`` takes samples ``start:`` of ``batch``, its census (``batch.census``, None while none counts)
        already holding them: its mark, if it has none yet."""
        if bucket in self._unknown or (self._buckets and bucket <= self._buckets[-1]):
            return
        census = batch.census
        if census is None or batch.entries is None:
            self._unknown.add(bucket)
            return
        if self._last is not None and self._raw is not None:  # the samples since the newest mark, as they came
            if self._raw:
                entries = np.concatenate([e for e, _ in self._raw], axis=1)
                true = np.concatenate([t for _, t in self._raw])
            else:
                entries, true = np.zeros((census.columns, 0), np.int16), np.zeros(0, np.int32)
            self._moved[bucket] = entries, true
            self._last = _counted(self._last, entries, true)
        else:  # the first mark, or one after many samples: whole
            got = census.mark_before(batch.true, batch.entries, start)
            if got is None:
                self._unknown.add(bucket)
                return
            columns, counts = got
            mark = np.zeros((census.columns, *counts.shape[1:]), np.int64)
            mark[columns] = counts
            if self._last is None:
                self._first = mark.copy()
            else:
                before = padded_counts(self._last, mark.shape)
                moved = (padded_counts(mark, before.shape) - before).reshape(-1)
                cells = np.flatnonzero(moved)
                small = np.int32 if moved.size < 2**31 and (not len(cells) or np.abs(moved[cells]).max() < 2**31) \
                    else np.int64
                self._moved[bucket] = before.shape, cells.astype(small), moved[cells].astype(small)
            self._last = mark
        self._raw, self._raw_size = [], 0
        self._buckets.append(bucket)

    def took(self, batch: ScoredBatch, start: int, stop: int) -> None:
        """The census counted samples ``start:stop`` of ``batch`` after the newest mark (every sample it counts
        comes here, in order: a bucket's, and those of a batch too old for the window)."""
        if self._raw is None or not self._buckets or batch.entries is None or stop <= start:
            return
        entries = batch.entries[:, start:stop]
        if self._raw_size + entries.size > RAW_LIMIT:
            self._raw = None  # (many: the next mark is made whole)
            return
        self._raw.append((entries.astype(np.int16), batch.true[start:stop].astype(np.int32)))  # (entries < 4,096)
        self._raw_size += entries.size

    def leave(self, oldest: int) -> None:
        """The buckets before ``oldest`` leave the window: every one's mark, also a bucket's that took only unscored
        samples (a batch's part), which the window never closed and so never names when it leaves."""
        if self._unknown:
            self._unknown = {b for b in self._unknown if b >= oldest}
        while self._buckets and self._buckets[0] < oldest:
            self._buckets.pop(0)
            if not self._buckets:
                self._first = self._last = None
                self._raw, self._raw_size = [], 0
                return
            assert self._first is not None
            self._first = _applied(self._first, self._moved.pop(self._buckets[0]))

    def unknown(self, buckets: Iterable[int]) -> None:
        """These buckets (restored from a state file) have no mark."""
        self._unknown.update(buckets)

    def counts(self, census: npt.NDArray[Any] | None) -> npt.NDArray[np.int64] | None:
        """The window's counts (C, room, R) from the ``census``'s now; None if its oldest bucket's mark is not known
        (or no bucket holds a sample)."""
        live = self._buckets[:1] + sorted(self._unknown)[:1]
        if not live or census is None or min(live) in self._unknown or self._first is None:
            return None
        mark = self._first
        if mark.shape[2] > census.shape[2]:
            return None  # (a census that dropped its counts: every column closed since)
        # the census's room is cut to its open columns' values when columns close (``ValueCensus._shrink``): past it a
        # mark holds only the counts of columns closed since, which no read takes
        width = min(mark.shape[1], census.shape[1])
        out = census.astype(np.int64)
        out[:, :width, : mark.shape[2]] -= mark[:, :width]
        return out


# what the census counted between a bucket's mark and the one before: the samples' entries (C, m) and classes (m,),
# or, for a large bucket, the non-zero flat cells of their counts' shape (C, width, R) and the counts there
Moved = tuple[npt.NDArray[np.int16], npt.NDArray[np.int32]] | tuple[
    tuple[int, ...], npt.NDArray[np.signedinteger[Any]], npt.NDArray[np.signedinteger[Any]]]


def _counted(counts: npt.NDArray[np.int64], entries: npt.NDArray[np.signedinteger[Any]],
             true: npt.NDArray[np.signedinteger[Any]]) -> npt.NDArray[np.int64]:
    """``counts`` (C, width, R) with these samples counted at their ``entries`` (C, m; -1 none): itself, or
    copied into a larger array where they need it (its width doubled, as the census's room, up to its
    ``CENSUS_LIMIT``: a few-valued model's values come a few at a time)."""
    width = int(entries.max(initial=-1)) + 1
    if width > counts.shape[1]:  # (no entry reaches CENSUS_LIMIT: a column that would take more closes)
        width = min(max(width, 2 * counts.shape[1], 64), CENSUS_LIMIT)
    rows = int(true.max(initial=-1)) + 1
    if rows > counts.shape[2]:  # only the classes of samples with a score: the census counts no other (``counts``)
        rows = int(true[(entries >= 0).any(axis=0)].max(initial=-1)) + 1
    counts = padded_counts(counts, (len(counts), width, rows))
    add_entries(entries.astype(np.int32, copy=False), true.astype(np.intp, copy=False), counts)
    return counts


def _applied(mark: npt.NDArray[np.int64], moved: Moved) -> npt.NDArray[np.int64]:
    """``mark`` plus what the census counted between it and the next (``Moved``): the next bucket's mark."""
    if len(moved) == 2:
        return _counted(mark, moved[0], moved[1])
    shape, cells, counts = moved
    mark = padded_counts(mark, shape)
    mark[np.unravel_index(cells, shape)] += counts  # (distinct cells)
    return mark
