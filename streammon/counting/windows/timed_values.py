"""A window sliding by time's own counts of each score value, per column and true class, at the entries of the
monitor's census (``streammon.counting.score_census``): what splits its bins exactly once a bucket has left it, when
the census no longer describes the window's samples.

Sample times never decrease, so a timed window's samples are the monitor's since its oldest bucket's first sample:
its value counts are the census's now less the census's then. The window keeps, for each bucket, the census's
counts as they stood before that bucket's first scored sample (``opened``: a copy of the open columns' counts up to
the last entry they took, less the batch's samples from that one on, looked up again: ``ValueCensus.mark_before``),
and drops it when the bucket leaves; a read subtracts the oldest bucket's from the census's. No sample costs
anything: a bucket that opens costs a copy of the open columns' counts (K = 10, every column at 4,096 values: 1.6
MB, kept while the bucket is in the window; a closed column's, none). A bucket whose mark is not known — one
restored from a state file, which keeps none, or one opened while the census counted nothing — leaves the window's
counts unknown (``counts`` None: it reads the ring's values, as before) while it is the oldest.

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

Mark = tuple[npt.NDArray[np.intp], npt.NDArray[Any]]  # the open columns and their counts (C', width, R)


class TimedValues:
    """The census's counts as each bucket of a timed window opened (module docstring)."""

    __slots__ = ("_marks",)

    def __init__(self) -> None:
        # bucket id -> the census's open columns' counts before its first scored sample; None: not known
        self._marks: dict[int, Mark | None] = {}

    def opened(self, bucket: int, census: ValueCensus | None, true: npt.NDArray[np.intp],
               scores: npt.NDArray[np.float64], start: int) -> None:
        """``bucket`` takes samples ``start:`` of a batch (``true`` classes, ``scores``), the ``census`` already
        holding the batch: its mark, the open columns' counts before those samples, if it has none yet (None: not
        known)."""
        if bucket in self._marks:
            return
        self._marks[bucket] = None if census is None else census.mark_before(true[start:], scores[start:])

    def leave(self, oldest: int) -> None:
        """The buckets before ``oldest`` leave the window: every one's mark, also a bucket's that took only unscored
        samples (a batch's part), which the window never closed and so never names when it leaves."""
        for bucket in [b for b in self._marks if b < oldest]:
            del self._marks[bucket]

    def unknown(self, buckets: Iterable[int]) -> None:
        """These buckets (restored from a state file) have no mark."""
        for bucket in buckets:
            self._marks[bucket] = None

    def counts(self, census: npt.NDArray[Any] | None) -> npt.NDArray[np.int64] | None:
        """The window's counts (C, room, R) from the ``census``'s now; None if its oldest bucket's mark is not known
        (or no bucket holds a sample)."""
        if not self._marks or census is None:
            return None
        got = self._marks[min(self._marks)]
        if got is None:
            return None
        columns, mark = got
        if mark.shape[2] > census.shape[2]:
            return None  # (a census that dropped its counts: every column closed since)
        # the census's room is cut to its open columns' values when columns close (``ValueCensus._shrink``): past it a
        # mark holds only the counts of columns closed since, which no read takes
        width = min(mark.shape[1], census.shape[1])
        out = census.astype(np.int64)
        out[columns, :width, : mark.shape[2]] -= mark[:, :width]
        return out
