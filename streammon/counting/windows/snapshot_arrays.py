"""Arrays for a score window's snapshots, reused once nobody holds them (``SnapshotArrays``).

A report copies each changed window's score histogram (K × C × 2,048 int64: 1.6 MB at K = 10). A fresh array of
that size comes from the operating system as new pages, each zeroed on its first write: ~400 page faults a
window, more CPU than the copy itself, and on a loaded machine each fault is a point where the reading thread
can lose the processor (measured: at K = 10 a report's wall time was ~5x its CPU time). A window therefore keeps
the few arrays it gave out and copies into one that nobody else references any more — the report that held it
and every view of it (a numpy view references its base) are gone, as its reference count says — else into a
fresh one. A snapshot still held is never written: its readers see the counts of their report.

>>> arrays = SnapshotArrays()
>>> source = np.arange(6)
>>> first = arrays.copy(source)
>>> second = arrays.copy(source)  # the first is still held here: a fresh array
>>> second is first
False
>>> del first
>>> arrays.copy(source + 1).tolist()  # the first array, reused
[1, 2, 3, 4, 5, 6]
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import numpy.typing as npt

KEPT = 3  # arrays kept per window: a report's, the previous report's (held by the caches), one to write


def _unheld_count() -> int:
    """The reference count ``copy`` sees for an array that only the pool holds (its list entry, the loop's name
    and ``getrefcount``'s argument in CPython), measured the way ``copy`` measures it."""
    kept = [np.empty(1)]
    for a in kept:
        return sys.getrefcount(a)
    raise AssertionError  # pragma: no cover - the list holds one array


_UNHELD = _unheld_count()


class SnapshotArrays:
    """The arrays one window gave out as snapshots (at most ``KEPT``)."""

    __slots__ = ("_given",)

    def __init__(self) -> None:
        self._given: list[npt.NDArray[Any]] = []

    def copy(self, source: npt.NDArray[Any], other: npt.NDArray[Any] | None = None) -> npt.NDArray[Any]:
        """A copy of ``source`` (or ``source + other``, for a timed window's closed and open parts), in an array
        given out before that nobody holds any more, else in a fresh one. The caller makes it read-only."""
        for a in self._given:
            if sys.getrefcount(a) <= _UNHELD and a.shape == source.shape and a.dtype == source.dtype:
                a.flags.writeable = True
                if other is None:
                    np.copyto(a, source)
                else:
                    np.add(source, other, out=a)
                return a
        fresh = source.copy() if other is None else source + other
        self._given = [*self._given[-(KEPT - 1):], fresh]
        return fresh
