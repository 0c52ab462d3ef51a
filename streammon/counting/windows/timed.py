"""The sliding-by-time window: a ring of per-bucket count matrices, exact to one bucket's width."""

from __future__ import annotations

import itertools
import math
import struct
from typing import Any

import numpy as np

from streammon.counting.batch import Batch
from streammon.counting.counts import IntMatrix
from streammon.counting.sparse import sparse
from streammon.counting.timing import MAX_TIME
from streammon.counting.windows.base import EMPTY_BUCKET, Window, _matrix


class Timed(Window):
    """The samples of the last ``seconds``, in ``buckets`` buckets of ``seconds/buckets``.

    The window at time ``now`` holds the ``buckets`` buckets up to the one holding ``now``: the samples with
    ``t ≥ (⌊now/width⌋ − buckets + 1)·width`` (``width = seconds/buckets``), i.e. ``(now − seconds, now]`` less at
    most one bucket's width at its old end — exact to one bucket's width.

    >>> Timed(60, buckets=6).describe()
    {'kind': 'timed', 'name': 'timed_60s', 'seconds': 60.0, 'buckets': 6}
    """

    kind = "timed"

    def __init__(self, seconds: float, *, buckets: int = 60, name: str | None = None) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise TypeError(f"Timed seconds must be a number, got {seconds!r}")
        if not (isinstance(seconds, float) or -MAX_TIME <= seconds <= MAX_TIME):  # a huge int: no float
            raise ValueError(f"Timed seconds must be finite and > 0, got an int of {seconds.bit_length()} bits")
        if not (math.isfinite(seconds) and seconds > 0):
            raise ValueError(f"Timed seconds must be finite and > 0, got {seconds!r}")
        if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 1:
            raise ValueError(f"Timed buckets must be an int >= 1, got {buckets!r}")
        if MAX_TIME / (seconds / buckets) >= 2**62:  # every accepted time's bucket id must fit int64
            raise ValueError(
                f"Timed buckets of {seconds / buckets:g} s ({seconds!r} s / {buckets}) are too fine: bucket ids "
                f"of times within ±{MAX_TIME:g} s must fit int64, so a bucket must last >= {MAX_TIME / 2**62:.2g} s"
            )
        super().__init__(f"timed_{seconds:g}s" if name is None else name)
        self.seconds = float(seconds)
        self.buckets = buckets
        self.width = self.seconds / buckets
        # (Mutation testing: np.full of a Python int is int64 without the dtype, and None for _expired_to only
        # loses _expire's shortcut: equivalent mutants.)
        # (Mutation testing: without the dtype np.full infers int64 from EMPTY_BUCKET, and None for _expired_to,
        # like EMPTY_BUCKET, equals no bucket id: equivalent mutants.)
        self._ids = np.full(buckets, EMPTY_BUCKET, np.int64)  # bucket id in each slot
        self._slots: list[IntMatrix | None] = [None] * buckets
        self._expired_to = EMPTY_BUCKET  # the newest bucket of the last expiry

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "seconds": self.seconds, "buckets": self.buckets}

    def state(self) -> dict[str, Any]:
        slots = [None if m is None else sparse(m) for m in self._slots]
        return {**super().state(), "ids": self._ids.tolist(), "slots": slots}

    def restore(self, state: dict[str, Any]) -> None:
        super().restore(state)
        capacity = self._capacity
        ids = np.asarray(state["ids"], dtype=np.int64)  # (without dtype=: equivalent for saved ints)
        if ids.shape != (self.buckets,) or len(state["slots"]) != self.buckets:
            raise ValueError(f"saved buckets of {self.name!r} do not fit {self.buckets} buckets")
        self._ids = ids
        self._expired_to = EMPTY_BUCKET  # (mutation testing: None, like it, equals no bucket id: equivalent)
        self._slots = [None if m is None else _matrix(m, capacity) for m in state["slots"]]
        # (Mutation testing: a float64 start is equivalent, array_equal compares the sums as float64 anyway.)
        total = sum((m for m in self._slots if m is not None), np.zeros((capacity, capacity), np.int64))
        if not np.array_equal(total, self._counts):
            raise ValueError(f"saved counts of {self.name!r} do not match its buckets")

    def grow(self, capacity: int) -> None:
        super().grow(capacity)
        self._slots = [None if s is None else self._embed(s, capacity) for s in self._slots]

    def _bucket_of(self, t: float) -> int:
        return math.floor(t / self.width)

    def bucket_end(self, t: float) -> float:
        """The smallest time whose bucket comes after the bucket of ``t`` (exact in floating point).

        >>> w = Timed(60, buckets=6)
        >>> w.bucket_end(0.0), w.bucket_end(25.0), w.bucket_end(30.0)
        (10.0, 30.0, 40.0)
        """
        bucket = self._bucket_of(t)
        guess = (bucket + 1) * self.width  # exact but for rounding: checked, then found by bisection
        if self._bucket_of(guess) > bucket >= self._bucket_of(math.nextafter(guess, -math.inf)):
            return guess
        # (Mutation testing: a wrong guess, or a stricter or other-sided check of it, only sends the search to
        # the bisection, which finds the same end; a walk by ulps alone (``high - self.width``) reaches the
        # same later bucket: equivalent mutants, slower only.)
        high = guess
        while self._bucket_of(high) <= bucket:  # each step leaves at least one bucket behind
            high = max(high + self.width, math.nextafter(high, math.inf))
        before, after = _ordered(t), _ordered(high)  # t's bucket holds t; high's comes later
        while after - before > 1:  # floor(x / width) never decreases with x: bisect the floats between them
            middle = (before + after) // 2
            if self._bucket_of(_unordered(middle)) > bucket:
                after = middle
            else:
                before = middle
        return _unordered(after)

    def _expire(self, newest: int) -> None:
        """Drop every bucket that no longer overlaps the window ending in bucket ``newest``."""
        if newest == self._expired_to:
            return  # nothing new can have expired
        self._expired_to = newest  # (mutation testing: None only loses the shortcut above, an equivalent mutant)
        stale = (self._ids <= newest - self.buckets) & (self._ids != EMPTY_BUCKET)
        for slot in np.flatnonzero(stale):
            matrix = self._slots[slot]
            if matrix is not None:
                self._counts -= matrix
                self._slots[slot] = None
            self._ids[slot] = EMPTY_BUCKET

    def _add(self, bucket: int, delta: IntMatrix) -> None:
        self._expire(bucket)
        slot = bucket % self.buckets
        matrix = self._slots[slot]
        if matrix is None:
            matrix = np.zeros((self._capacity, self._capacity), np.int64)
            self._slots[slot] = matrix
        self._ids[slot] = bucket
        matrix += delta
        self._counts += delta

    def ingest(self, batch: Batch) -> None:
        if len(batch) == 0:
            return
        if batch.times is None:
            raise ValueError(f"timed window {self.name!r} needs sample times")
        if not isinstance(batch.times, np.ndarray):
            self._add(self._bucket_of(batch.times), batch.delta(self._capacity))
            return
        times = batch.times
        first, last = self._bucket_of(float(times[0])), self._bucket_of(float(times[-1]))
        if first == last:  # times never decrease: one bucket
            self._add(first, batch.delta(self._capacity))
            return
        # Rows of buckets the batch's last bucket has already pushed out of the window would be added and
        # expired within this call: they are skipped (a day of data per call counts 60 buckets, not 1,440).
        # Bucket ids are computed from one bucket before the oldest live one (rounding in t / width moves a
        # time by at most one bucket), so every row of a live bucket gets its exact id.
        # (Mutation testing: starting earlier, e.g. ``- self.buckets`` or ``oldest - 2``, adds buckets the last
        # _add expires, and float ids, without astype, name the same buckets: equivalent mutants. So is always
        # starting at 0 (``and False``), and searching when ``oldest <= first`` (``or True``, ``>=``): the time
        # searched for is then before the batch's first time, so the search returns 0.)
        oldest = last - self.buckets + 1
        start = int(np.searchsorted(times, (oldest - 1) * self.width)) if oldest > first else 0
        ids = np.floor(times[start:] / self.width).astype(np.int64)
        live = int(np.searchsorted(ids, oldest))  # times never decrease: ids are sorted
        starts = np.flatnonzero(np.diff(ids[live:])) + 1 + live + start
        bounds = [live + start, *starts.tolist(), len(times)]
        for lo, hi in itertools.pairwise(bounds):
            self._add(int(ids[lo - start]), batch.count(self._capacity, lo, hi))  # the last expires what it pushed out

    def snapshot(self, now: float | None, size: int | None = None) -> IntMatrix:
        if now is not None:
            self._expire(self._bucket_of(now))
        return super().snapshot(now, size)


def _ordered(x: float) -> int:
    """An int that orders floats as they compare (-0.0 and 0.0 alike), one step per representable float."""
    bits: int = struct.unpack("<q", struct.pack("<d", x))[0]
    # (Mutation testing: ``bits > 0`` is equivalent, 0.0 maps to 0 by either branch.)
    return bits if bits >= 0 else -(bits & 0x7FFF_FFFF_FFFF_FFFF)


def _unordered(i: int) -> float:
    """The float ``_ordered`` maps to ``i``."""
    value: float = struct.unpack("<d", struct.pack("<q", abs(i)))[0]
    # (Mutation testing: "<Q" packs the same bits of a non-negative int, and ``i > 0`` returns -0.0 for 0, which
    # equals 0.0 and has the same bucket: equivalent mutants.)
    return value if i >= 0 else -value

