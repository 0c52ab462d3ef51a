"""Windows over the labelled stream: cumulative, sliding by count, sliding by time.

Every window keeps one integer count matrix; every score is read from it. A
window is fed ``Batch`` objects by its ``Monitor`` (never directly) and answers
``snapshot(now)`` with a copy of its counts.

- ``Cumulative()`` — every sample since start (or reset). Name ``cumulative``.
- ``Sliding(size)`` — exactly the last ``size`` samples: a ring of cell ids
  (4 bytes a sample) and one subtraction per evicted sample. Name ``sliding_<size>``.
- ``Timed(seconds, buckets=60)`` — the samples whose time lies in the last
  ``seconds``, to one bucket's width (``seconds / buckets``): a ring of per-bucket
  count matrices, so memory depends on K and ``buckets``, never on throughput.
  Name ``timed_<seconds>s``. Time is the sample's ``t`` or the monitor's clock.

>>> Sliding(1000).name, Timed(3600).name, Cumulative().name
('sliding_1000', 'timed_3600s', 'cumulative')
"""

from __future__ import annotations

import itertools
import math
import struct
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.batch import Batch, count_pairs
from streammon.counting.counts import IntMatrix
from streammon.counting.sparse import dense, sparse
from streammon.counting.timing import MAX_TIME
from streammon.counting.user_text import check_text

IndexArray = npt.NDArray[np.intp]
EMPTY_BUCKET = int(np.iinfo(np.int64).min)  # the id of a ring slot that holds no bucket


DIRECT_CELLS = 1 << 16  # a sliding window bincounts its cell ids directly while they span at most this many


class Window:
    """Base class: one count matrix fed by a monitor. Subclasses route, math lives elsewhere."""

    kind = "window"

    def __init__(self, name: str) -> None:
        self.name = check_text(name, "window name")  # the rule for user strings (streammon.counting.user_text)
        # (Mutation testing: attach() sets capacity and stride before any use, and tests `if self._stride` only:
        # other falsy or overwritten values are equivalent mutants.)
        self._capacity = 0
        self._stride = 0
        self._counts: IntMatrix = np.zeros((0, 0), np.int64)

    def attach(self, stride: int, capacity: int) -> None:
        """Allocate for a monitor; a window serves one monitor only."""
        if self._stride:
            raise ValueError(f"window {self.name!r} already belongs to a monitor; make a new one")
        self._stride = stride
        self._capacity = capacity
        self._counts = np.zeros((capacity, capacity), np.int64)

    @staticmethod
    def _embed(m: IntMatrix, capacity: int) -> IntMatrix:
        grown = np.zeros((capacity, capacity), np.int64)
        grown[: m.shape[0], : m.shape[1]] = m  # (mutation testing: m is square, shape[1] for [0] is equivalent)
        return grown

    def grow(self, capacity: int) -> None:
        """Make room for more classes, keeping every count."""
        self._counts = self._embed(self._counts, capacity)
        self._capacity = capacity

    def ingest(self, batch: Batch) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def snapshot(self, now: float | None, size: int | None = None) -> IntMatrix:
        """A copy of the counts as of ``now``: ``capacity × capacity``, or the first ``size`` classes'."""
        return (self._counts if size is None else self._counts[:size, :size]).copy()

    def describe(self) -> dict[str, Any]:
        """The window's kind and parameters, for reports and exporters."""
        return {"kind": self.kind, "name": self.name}

    def state(self) -> dict[str, Any]:
        """The window's counts (and ring) as plain data, for ``streammon.state``: matrices as their non-zero cells."""
        return {"counts": sparse(self._counts)}

    def restore(self, state: dict[str, Any]) -> None:
        """Load a ``state()`` into this attached window; raises ``ValueError`` if it does not fit."""
        self._counts = _matrix(state["counts"], self._capacity)

    def fresh(self) -> Window:
        """A new, empty window with the same parameters (free to join another monitor)."""
        params = {k: v for k, v in self.describe().items() if k != "kind"}
        return type(self)(**params)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.describe().items() if k != "kind")
        return f"{type(self).__name__}({params})"


def _matrix(values: Any, capacity: int) -> IntMatrix:
    if not isinstance(values, dict):
        raise ValueError(f"a saved count matrix must be its non-zero cells and counts, got {type(values).__name__}")
    return dense(values, capacity)


class Cumulative(Window):
    """Every sample seen.

    >>> Cumulative(name="all").describe()
    {'kind': 'cumulative', 'name': 'all'}
    """

    kind = "cumulative"

    def __init__(self, *, name: str = "cumulative") -> None:
        super().__init__(name)

    def ingest(self, batch: Batch) -> None:
        self._counts += batch.delta(self._capacity)


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


class Timed(Window):
    """The samples of the last ``seconds``, in ``buckets`` buckets of ``seconds/buckets``.

    The window at time ``now`` holds the buckets that overlap
    ``(now − seconds, now]``: exact to one bucket's width.

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
