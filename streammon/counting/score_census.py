"""A monitor's census of the distinct scores each column takes, per true class (``streammon.metrics.value_census``):
what a window past the exact limit that holds every sample (a cumulative one) splits its bins by, exactly.

One census a monitor's labelled score side, fed every scored sample the windows take, in the same order as the
exact ring (``streammon.counting.exact_scores``). It counts only while it has counted every such sample
(``complete``: a state file written before it was kept loads incomplete, and the windows read the ring's values as
before); a column is closed — its counts dropped, for good — when it takes more than ``CENSUS_LIMIT`` distinct
values (a continuous model's, within its first few thousand scores: a batch's values are inserted as they are
counted, and a column closes before any room for counts is made past the limit). Memory: per open column a 32 KiB
hash table, 32 KiB of values, and 4 bytes a value and class (int32 counts until the total could pass 2³¹), grown by
doubling with the values seen and cut back to what the open columns take when some close (K = 10, every
column at the limit: 2.3 MB); nothing once every column is closed.

Saved in the state file with the score tallies (an optional part) and checked on load against every window that
holds as many samples as it counted (a cumulative one): per column and class, its values binned are the window's
histogram.

>>> census = ValueCensus(columns=1)
>>> census.add(np.array([0, 0, 1]), np.array([[0.3], [0.3], [0.9]]))
>>> census.total, census.counted(0)
(3, ([0.3, 0.9], [[2, 0], [0, 1]]))
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.census_file import parsed_column
from streammon.metrics.bin_values import BinValues
from streammon.metrics.score_bins import BINS
from streammon.metrics.value_census import (
    BEYOND,
    CENSUS_LIMIT,
    CLOSED,
    TABLE,
    add_entries,
    census_insert,
    census_layout,
    census_recount,
    census_values,
    keyed,
    padded_counts,
)

COUNT32 = 2**31 - 1  # the counts are int32 (half the memory the hashing walks) until the total could reach this
FIRST_ROOM = 64  # the entries a column's census starts with; doubled as values come, up to CENSUS_LIMIT


class ValueCensus:
    """The distinct values of each score column and each class's count at each (module docstring)."""

    __slots__ = ("_counts", "_layouts", "_made", "_marked", "_open", "_opened", "_table", "_used", "_values",
                 "columns", "complete", "entries", "total")

    def __init__(self, columns: int, *, complete: bool = True) -> None:
        self.columns = columns
        self.complete = complete  # it counted every sample the monitor's windows took
        self.total = 0  # samples counted (added while complete)
        # each score's entry (C, n: -1 in a closed column) of the batch ``add`` counted last; None if it counted none
        self.entries: npt.NDArray[np.int32] | None = None
        self._used = np.zeros(columns, np.int64)  # entries taken per column; -1: closed
        self._open = np.ones(columns, np.bool_)  # the columns not closed
        self._opened = columns  # how many (read per batch: a sum of the mask costs a microsecond)
        self._table = np.empty((0, TABLE), np.int32)  # allocated at the first sample
        self._values = np.empty((columns, 0))
        self._counts = np.zeros((columns, 0, 0), np.int32)  # int64 once a count could pass int32's range
        # per column, (entries, its ``census_layout``) as last made: the same while the column takes no new value
        self._layouts: list[tuple[int, npt.NDArray[np.intp], npt.NDArray[np.intp]] | None] = [None] * columns
        self._made: tuple[int, int, BinValues | None, BinValues] | None = None  # (total, k, shown, values): last made
        # the last mark made (``mark_before``): the batch's entries, its start and every column's counts then
        self._marked: tuple[npt.NDArray[np.int32], int, npt.NDArray[Any]] | None = None

    @property
    def counting(self) -> bool:
        """Whether a sample added is counted: complete, some column open."""
        return self.complete and self._opened > 0

    @property
    def counts(self) -> npt.NDArray[Any] | None:
        """The counts (C, room, R) as they stand (the census's own array: read, never written); None while it
        counts nothing."""
        return self._counts if self.counting else None

    @property
    def open_columns(self) -> npt.NDArray[np.bool_]:
        """Which columns it counts (not closed)."""
        return self._open

    @property
    def every_column(self) -> bool:
        """Whether it counts every column: complete, none closed."""
        return self.complete and self._opened == self.columns

    def add(self, true: npt.NDArray[np.intp], scores: npt.NDArray[np.float64]) -> None:
        """Count ``scores`` (n, C: finite, in [0, 1], checked by the caller) of true classes ``true`` (``total``
        counts them while complete, every column closed or not)."""
        n = len(true)
        self._marked, self.entries = None, None  # (both are of the batch counted last)
        if n and self.counting:
            self._count(true, scores)
        if self.complete:
            self.total += n

    def _count(self, true: npt.NDArray[np.intp], scores: npt.NDArray[np.float64]) -> None:
        """One compiled pass inserts and counts the batch's values (a column past the limit closes); the few whose
        entries fell past the counts' room are counted once it is made (doubled: a few-valued model's values come
        a few at a time; a continuous model's columns close before any room is made for them)."""
        true, scores = np.ascontiguousarray(true, dtype=np.intp), keyed(scores)
        if not len(self._table):
            self._table = np.full((self.columns, TABLE), -1, np.int32)
            self._values = np.full((self.columns, CENSUS_LIMIT), -1.0)
        if self._counts.dtype != np.int64 and self.total + len(true) >= COUNT32:  # (no count exceeds the total)
            self._counts = self._counts.astype(np.int64)
        most = int(true.max()) + 1
        if most > self._counts.shape[2]:
            self._counts = padded_counts(self._counts, (self.columns, self._counts.shape[1], most))
        room = self._counts.shape[1]
        status, self.entries = census_insert(self._table, self._values, self._used, scores=scores, true=true,
                                             counts=self._counts)
        if status & CLOSED:
            self._close(np.flatnonzero((self._used < 0) & self._open))
            if not self._opened:  # every column closed: nothing more is counted
                return
        if status & BEYOND:
            need = int(self._used.max())
            wider = min(max(need, 2 * room, FIRST_ROOM), CENSUS_LIMIT)
            self._counts = padded_counts(self._counts, (self.columns, wider, self._counts.shape[2]))
            census_recount(self._table, self._values, self._used, scores=scores, true=true, counts=self._counts,
                           low=room)
        if status & CLOSED:
            self._shrink()

    def _shrink(self) -> None:
        """The counts' room cut to what the open columns take (as ``restore`` sizes it): a continuous column grows
        it to ``CENSUS_LIMIT`` before it closes, and every column's counts are that wide (K = 64: 64 MiB kept
        for a few-valued column beside continuous ones)."""
        room = _room(int(self._used[self._open].max(initial=0)))
        if room < self._counts.shape[1]:
            self._counts = self._counts[:, :room].copy()

    def mark_before(self, true: npt.NDArray[np.intp], entries: npt.NDArray[np.int32], start: int = 0,
                    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[Any]] | None:
        """A copy of the open columns' counts as they stood before samples ``start:`` of the batch it counted last
        (``true`` classes, ``entries`` (C, n) their entries as it gave them, -1 for a sample without a score), up to
        the last entry any of them took: their indices and the counts (C', width, R) — what a timed window keeps
        as a bucket opens (``streammon.counting.windows.timed_values``); a closed column's zeros and the room past
        the values are not copied (K = 64, one column of 55 values beside 63 continuous ones: 55 x 64 counts, not
        64 x 4,096 x 64). None while it counts nothing.

        A batch that spans many buckets may ask for a mark at several one's first samples, in order: each is made
        from the one before plus the samples between, so the batch's samples are counted once in all."""
        if not self.counting:
            return None
        marked = self._marked
        if marked is not None and marked[0] is entries and marked[1] <= start:
            counts, sign, rows = marked[2], 1, slice(marked[1], start)
        else:
            width = int(self._used[self._open].max(initial=0))
            counts, sign, rows = self._counts[:, :width].copy(), -1, slice(start, None)
        add_entries(entries[:, rows], true[rows], counts, sign)
        self._marked = (entries, start, counts)
        columns = np.flatnonzero(self._open)
        return columns, counts[columns]  # (a copy: fancy indexing)

    def forget_batch(self) -> None:
        """Drop what it keeps of the batch it counted last (``entries``, the last mark's counts), once the windows
        took it: at K = 64 a mark's counts are up to 67 MB, a batch's entries 4 bytes a score."""
        self.entries = self._marked = None

    def _close(self, columns: npt.NDArray[np.intp]) -> None:
        """Close these columns for good: their counts go (all of the census's memory once every column closed)."""
        self._used[columns] = -1
        self._open[columns] = False
        for c in np.atleast_1d(columns).tolist():
            self._layouts[c] = None
        self._opened = int(self._open.sum())
        self._table[columns] = -1
        self._values[columns] = -1.0
        self._counts[columns] = 0
        if (self._used < 0).all():  # nothing left to count: the memory goes
            self._table = np.empty((0, TABLE), np.int32)
            self._values = np.empty((self.columns, 0))
            self._counts = np.zeros((self.columns, 0, 0), np.int32)

    def counted(self, column: int) -> tuple[list[float], list[list[int]]] | None:
        """Column ``column``'s values (ascending) and each one's count per class; None: closed."""
        m = int(self._used[column])
        if m < 0:
            return None
        order = np.argsort(self._values[column, :m], kind="stable")
        return self._values[column, order].tolist(), self._counts[column, order].tolist()

    def values(self, k: int, shown: BinValues | None) -> BinValues | None:
        """The split a cumulative window's bins read (``census_values``), for classes ``[0, k)``, its closed
        columns' and its unsplit bins' flags taken from ``shown`` (the ring's); None if the census is
        incomplete, or every column closed. Made once per ``total``, ``k`` and ``shown``."""
        if not self.counting or self.total == 0:
            return None
        made = self._made
        if made is None or made[:2] != (self.total, k) or made[2] is not shown:
            made = self._made = (self.total, k, shown, self._split(self._counts, k, shown))
        return made[3]

    def values_counted(self, counts: npt.NDArray[np.int64], k: int, shown: BinValues | None) -> BinValues | None:
        """The split a window reads whose own ``counts`` (C, room, R: the census's shape) at the census's entries
        are kept — a window sliding by time: ``census_values`` of them, exact in every open column; closed columns
        and unsplit bins' flags from ``shown``. None if the census is incomplete or every column closed."""
        return self._split(counts, k, shown) if self.counting else None

    def values_of(self, true: npt.NDArray[np.intp], scores: npt.NDArray[np.float64], k: int,
                  shown: BinValues | None) -> BinValues | None:
        """The split a window of these samples (``true`` classes, ``scores`` (n, C): samples the census counted,
        not all of them — a window sliding by count) reads, exact in every open column: ``census_values`` of their
        own counts at the census's entries; closed columns and unsplit bins' flags from ``shown`` (the ring's).
        None if the census is incomplete or every column closed (or a score is not in it: never, for samples it
        counted)."""
        if not self.counting:
            return None
        rows = max(k, self._counts.shape[2], int(np.max(true, initial=-1)) + 1)
        counts = np.zeros((self.columns, max(int(self._used.max(initial=0)), 0), rows), np.int64)
        if not census_recount(self._table, self._values, self._used, scores=keyed(scores), true=true, counts=counts):
            return None
        return self._split(counts, k, shown)

    def _split(self, counts: npt.NDArray[Any], k: int, shown: BinValues | None) -> BinValues:
        """``census_values`` of a window's ``counts`` at the census's entries; closed columns and unsplit bins'
        flags from ``shown`` (none: no flag)."""
        flags = np.zeros((self.columns, BINS), np.bool_) if shown is None else shown.flags
        return census_values(self._values, counts, self._used, k, flags=flags, fallback=shown, layouts=self._layout())

    def _layout(self) -> list[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]] | None]:
        """Each open column's ``census_layout``, made again only where it took new values."""
        out: list[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]] | None] = []
        for c in range(self.columns):
            m = int(self._used[c])
            kept = self._layouts[c]
            if m < 0:
                out.append(None)
                continue
            if kept is None or kept[0] != m:
                kept = self._layouts[c] = (m, *census_layout(self._values[c, :m]))
            out.append(kept[1:])
        return out

    def state(self) -> dict[str, Any]:
        """Plain data: ``total``, ``complete`` and per column its values and their counts per class (None: closed),
        as many classes as some count is for (the room allocated is not saved: a round trip writes the same)."""
        seen = np.flatnonzero(self._counts.any(axis=(0, 1)))
        width = int(seen[-1]) + 1 if len(seen) else 0
        columns: list[dict[str, Any] | None] = []
        for i in range(self.columns):
            got = self.counted(i) if self.complete else None
            columns.append(None if got is None else {"values": got[0], "counts": [row[:width] for row in got[1]]})
        return {"total": self.total, "complete": self.complete, "columns": columns}

    def restore(self, state: Any, rows: int) -> None:
        """Load ``state()`` (``ValueError`` naming what does not fit: per open column at most ``CENSUS_LIMIT``
        distinct finite values in [0, 1], counts of classes ``[0, rows)`` that add up to ``total``); nothing
        changes on an error."""
        if not isinstance(state, dict) or set(state) != {"total", "complete", "columns"}:
            raise ValueError("a saved score census must hold total, complete and columns")
        total, complete, columns = state["total"], state["complete"], state["columns"]
        if type(total) is not int or total < 0 or type(complete) is not bool:
            raise ValueError(f"a saved score census' total must be an int >= 0 and complete a bool, got {total!r:.40} "
                             f"and {complete!r:.40}")
        if not isinstance(columns, list) or len(columns) != self.columns:
            raise ValueError(f"a saved score census must hold {self.columns} columns")
        if not complete and any(column is not None for column in columns):
            raise ValueError("a saved score census that is not complete must hold no column (null each)")
        parsed = [parsed_column(column, i, total, rows) for i, column in enumerate(columns)] if complete else []
        # every open column counts every sample: the same count per class, as many classes as the last one counted
        per_class = {tuple(p[1].sum(axis=0).tolist()) for p in parsed if p is not None}
        if len(per_class) > 1 or any(counted and counted[-1] == 0 for counted in per_class):
            raise ValueError("a saved score census must count each class as often in every open column, up to "
                             "the last class counted")
        fresh = ValueCensus(self.columns, complete=complete)
        fresh.total = total
        if complete:
            room = _room(max((len(p[0]) for p in parsed if p is not None), default=0))
            fresh._table = np.full((self.columns, TABLE), -1, np.int32)
            fresh._values = np.full((self.columns, CENSUS_LIMIT), -1.0)
            fresh._counts = np.zeros((self.columns, room, rows), np.int32 if total < COUNT32 else np.int64)
            for i, p in enumerate(parsed):
                if p is None:
                    fresh._used[i] = -1
                    fresh._open[i] = False
                    fresh._opened -= 1
                    continue
                values, counts = p  # the table made by inserting the values in order: entries 0, 1, ...
                census_insert(fresh._table[i:i + 1], fresh._values[i:i + 1], fresh._used[i:i + 1],
                              scores=keyed(values[:, None]), true=np.zeros(len(values), np.intp),
                              counts=np.zeros((1, 0, 1), np.int64))  # (none counted: room 0)
                fresh._counts[i, : len(values), : counts.shape[1]] = counts
            if (fresh._used < 0).all():
                fresh._close(np.arange(self.columns))
        for name in self.__slots__:
            setattr(self, name, getattr(fresh, name))


def _room(values: int) -> int:
    """The counts' room for a column of ``values`` values: the power of two above, at least ``FIRST_ROOM``, at
    most ``CENSUS_LIMIT``."""
    return min(max(FIRST_ROOM, 1 << max(values - 1, 0).bit_length()), CENSUS_LIMIT)
