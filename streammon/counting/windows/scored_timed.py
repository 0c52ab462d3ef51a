"""The score tally of a window sliding by time (``streammon.counting.windows.scored``): the buckets of the
``Timed`` window it follows, so both hold the same samples.

The open (newest) bucket is a dense tally that the batches add into; the closed buckets are kept as their
histogram's non-zero cells, with their dense sums and confidence bins, and ``counts`` is the sum of the closed
buckets still in the window. A sample is thus added once, into the open bucket — not into the bucket and the
window both, which halved the work of a timed window and spared the per-batch bookkeeping of sparse cells. When
a later bucket opens, the open one is added to ``counts`` (one dense addition a bucket, not a sample) and kept as
its cells; a closed bucket that leaves the window is subtracted from ``counts``; a read adds the open bucket to
``counts``. The state is the one the window always wrote: the window's whole tally and every bucket.

The open bucket's histogram counts are int32 (``OPEN_TYPE``), widened to int64 before the samples given to the
bucket could exceed ``OPEN_LIMIT`` (no bin holds more): half the memory of an int64 histogram (0.8 MB at K = 10,
34 MB at K = 64), which every batch scatters its scores into. In isolation, with the histogram out of cache, the
compiled pass over 4,096 samples at K = 10 took ~20 ns a sample less; inside a monitor the gain is within the
noise of this shared machine. A report's snapshot of it moves half the bytes: the cumulative window's copy while
its samples are all in the open bucket (an int32 slab into int32), K = 10, ~0.21 -> ~0.16 ms of CPU; where the
cumulative window adds its own int64 histogram to the bucket's, numpy's mixed add into int32 takes about what
two int64 slabs took (measured apart, out of cache: 0.25 against 0.27 ms).

A cumulative window beside it takes its histogram through this window (``lead``): whatever leaves the open bucket
(closed, expired) is added to the cumulative histogram, and so are the samples of a batch too old for this window;
the samples in the open bucket are read from it. Each score is then binned into one histogram, the open bucket's,
not two (``streammon.counting.windows.scored.ScoreWindow.follow``).

>>> from streammon.counting.windows import Timed
>>> from streammon.counting.windows.scored_batch import ScoredBatch
>>> s = TimedScores(Timed(60.0, buckets=3), rows=2, columns=1, positive=1)
>>> s.ingest(ScoredBatch(np.array([0, 1]), np.array([[0.1], [0.8]]), np.array([0.0, 30.0]), positive=1))
>>> s.snapshot(None, 2, 1).n_scored, s.snapshot(65.0, 2, 1).n_scored, s.snapshot(200.0, 2, 1).n_scored
(2, 1, 0)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.score_tally import ScoreCounts, ScoreTally
from streammon.counting.windows.scored import ScoreWindow
from streammon.counting.windows.scored_batch import ScoredBatch
from streammon.counting.windows.timed import Timed
from streammon.counting.windows.timed_values import TimedValues
from streammon.metrics.bucket_cells import add_cells, cells_of, take_cells
from streammon.metrics.score_bins import BINS


class _Closed:
    """A closed bucket: its histogram's non-zero flat cells (each once, not always sorted) and their counts, its
    dense sums and confidence bins."""

    __slots__ = ("cells", "counts", "sums", "top")

    def __init__(self, cells: npt.NDArray[np.int64], counts: npt.NDArray[np.int64], sums: npt.NDArray[np.float64],
                 top: npt.NDArray[np.float64]) -> None:
        self.cells, self.counts, self.sums, self.top = cells, counts, sums, top

    @classmethod
    def of(cls, tally: ScoreCounts) -> _Closed:
        flat = tally.hist.reshape(-1)
        cells = np.flatnonzero(flat).astype(np.int64)
        return cls(cells, flat[cells], tally.sums.copy(), tally.top.copy())

    def grow(self, rows: int) -> None:  # rows lead the flat cell ids: the cells keep their ids
        self.sums, self.top = _pad(self.sums, rows), _pad(self.top, rows)

    def item(self, bucket_id: int) -> dict[str, Any]:
        live = np.flatnonzero(self.top[:, :, 0].sum(axis=1))
        order = np.argsort(self.cells)  # (a bucket closed by its samples' cells holds them in the order met)
        return {"id": bucket_id, "cells": self.cells[order].tolist(), "counts": self.counts[order].tolist(),
                "rows": live.tolist(),
                "sums": self.sums[live].tolist(), "top": self.top[live].tolist()}


class TimedScores(ScoreWindow):
    """The scores of the samples of the last ``seconds``, in the buckets of the ``Timed`` window it follows
    (``counts``: the closed buckets still in the window; ``_open``: the newest bucket's dense tally)."""

    def __init__(self, window: Timed, rows: int, columns: int, positive: int) -> None:
        super().__init__(rows, columns, positive)
        self.window = window
        self._closed: dict[int, _Closed] = {}
        self._open = ScoreCounts(rows, columns, OPEN_TYPE)
        self._open_samples = 0  # samples given to the open bucket since it was cleared: a bound on any of its counts
        self._open_id: int | None = None
        self._led: list[ScoreCounts] = []  # tallies whose histograms take what leaves the open bucket (lead)
        self._late = False  # ``whole_target`` opened a bucket older than the open one for the coming batch
        self.values = TimedValues()  # the census's counts as each bucket opened (``timed_values``)
        # the flat cells of the open bucket's samples (``bucket_cells``), while fewer than ``TOUCHED_SHARE`` of its
        # histogram's; None past that, when closing it scans the histogram
        self._touched: list[npt.NDArray[np.int64]] | None = []
        self._touched_size = 0

    @property
    def open_bucket(self) -> ScoreCounts:
        """The open bucket's tally (all zeros while no bucket is open), updated in place."""
        return self._open

    def lead(self, counts: ScoreCounts) -> None:
        """Add to ``counts.hist`` the histogram of every sample that leaves the open bucket, and of the samples of
        a batch too old for this window: with the open bucket's, the histogram of every sample this window was
        given (a cumulative window's: ``ScoreWindow.follow``)."""
        self._led.append(counts)

    def _take_open(self, into: ScoreCounts | None) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The open bucket's non-zero histogram cells (flat ids, each once) and their counts, its histogram left all
        zeros and its counts added to the led tallies' histograms and to ``into``'s: found from its samples' cells
        where they are known, in one compiled pass (``bucket_cells``: time in the samples, not in the 204,800 cells
        of a K = 10 histogram), else by scanning it."""
        flat = self._open.hist.reshape(-1)
        targets = [counts.hist.reshape(-1) for counts in ([] if into is None else [into]) + self._led]
        assert all(target.size >= flat.size for target in targets)  # (rows grow together: ``grow``)
        if self._touched is None:
            cells = np.flatnonzero(flat).astype(np.int64)
            counts = flat[cells]
            flat.fill(0)
        else:
            ids = np.concatenate(self._touched) if self._touched else np.empty(0, np.int64)
            first, second = [*targets, None, None][:2]
            cells, counts = take_cells(ids, flat, into=first, led=second)
            counts = counts.astype(flat.dtype)  # (the bucket's counts kept in its histogram's type, as scanned)
            targets = targets[2:]
        for target in targets:
            add_cells(target, cells, counts)
        return cells, counts

    def grow(self, rows: int) -> None:
        super().grow(rows)
        self._open.grow(rows)
        for bucket in self._closed.values():
            bucket.grow(rows)

    def _room(self, size: int) -> None:
        """Widen the open bucket's histogram to int64 if ``size`` more samples could make a count exceed
        ``OPEN_LIMIT`` (no bin holds more than the samples given to the bucket)."""
        if self._open_samples + size > OPEN_LIMIT and self._open.hist.dtype != np.int64:
            self._open.hist = self._open.hist.astype(np.int64)

    def _clear_open(self, *, emptied: bool = False) -> None:
        """The open bucket back to no sample (``emptied``: its histogram is all zeros already, ``_take_open``)."""
        if emptied:
            self._open.sums.fill(0.0)
            self._open.top.fill(0.0)
        else:
            self._open.clear()
        self._open_samples = 0
        self._touched, self._touched_size = [], 0

    def _empty_open(self, into: ScoreCounts | None = None) -> tuple[npt.NDArray[np.int64],
                                                                      npt.NDArray[np.int64]] | None:
        """Clear the open bucket: its histogram's cells and counts (``_take_open``), spilled into the led tallies'
        histograms and ``into``'s; None if it held no score."""
        taken = self._take_open(into) if self._open.top[:, :, 0].any() else None
        self._clear_open(emptied=True)
        return taken

    def _touch(self, batch: ScoredBatch, start: int, stop: int) -> None:
        """Samples ``start:stop`` of ``batch`` go to the open bucket: their cells kept (``_touched``) while they are
        fewer than ``TOUCHED_SHARE`` of the bucket's histogram's."""
        if self._touched is None:
            return
        if self._touched_size + (stop - start) * self.counts.columns > self._open.hist.size * TOUCHED_SHARE:
            self._touched = None
            return
        assert batch.bins is not None
        self._touched.append(cells_of(batch.true[start:stop], batch.bins[start:stop], BINS))
        self._touched_size += len(self._touched[-1])

    def _expire(self, newest: int) -> None:
        """Buckets older than the window ending at bucket ``newest`` leave."""
        oldest_kept = newest - self.window.buckets + 1
        self.values.leave(oldest_kept)
        for bucket_id in [b for b in self._closed if b < oldest_kept]:
            bucket = self._closed.pop(bucket_id)
            self.counts.subtract_cells(bucket.cells, bucket.counts, bucket.sums, bucket.top)
        if self._open_id is not None and self._open_id < oldest_kept:
            self._empty_open()
            self._open_id = None

    def _open_bucket(self, bucket_id: int) -> None:
        """Make ``bucket_id`` the open bucket, closing the open one if it is older."""
        if self._open_id is not None and self._open_id != bucket_id:
            sums, top = self._open.sums.copy(), self._open.top.copy()
            taken = self._empty_open(into=self.counts)
            if taken is not None:  # a bucket that holds scores: into the window's closed part
                self._closed[self._open_id] = _Closed(*taken, sums, top)
                self.counts.sums[: len(sums)] += sums
                self.counts.top[: len(top)] += top
        self._expire(bucket_id)
        self._open_id = bucket_id

    def whole_target(self, times: npt.NDArray[np.float64] | float | None, size: int) -> ScoreCounts | None:
        """The open bucket, when the whole batch falls in one bucket (opened now, as ``ingest`` would; with room
        for the batch's ``size`` samples)."""
        if times is None:
            return None
        width = self.window.width
        if isinstance(times, np.ndarray):
            if not len(times) or math.floor(times[0] / width) != math.floor(times[-1] / width):
                return None
            times = float(times[-1])
        bucket_id = math.floor(times / width)
        self._late = self._open_id is not None and bucket_id < self._open_id  # (marked by ``ingest``)
        self._open_bucket(bucket_id)
        self._room(size)
        return self._open

    def _add(self, bucket_id: int, batch: ScoredBatch, start: int, stop: int) -> None:
        self._open_bucket(bucket_id)
        self.values.opened(bucket_id, batch, start)
        self.values.took(batch, start, stop)
        self._room(stop - start)
        self._open_samples += stop - start
        self._touch(batch, start, stop)
        if start == 0 and stop == len(batch):
            batch.add_whole(self._open)
        else:
            batch.add_to(self._open, start, stop)

    def _out_of_order(self, bucket_id: int, batch: ScoredBatch, stop: int) -> None:
        """Samples ``[.., stop)`` of ``batch`` go to a bucket older than the open one: past them the window's
        scored samples are no longer a suffix of the monitor's (``broken_at``, ``counting.exact_scores``).
        Sample times never decrease (``counting.timing``), so this guards a caller that feeds windows directly."""
        if self._open_id is not None and bucket_id < self._open_id:
            self.broken_at = batch.numbered(stop)

    def ingest(self, batch: ScoredBatch) -> None:
        if batch.times is None or not len(batch):
            if batch.scored:
                raise ValueError("a timed window's scores need sample times")
            return
        width = self.window.width
        if self._late:  # the whole batch went to a bucket older than the open one (``whole_target``)
            self.broken_at = batch.numbered(len(batch))
            self._late = False
        if not batch.scored:  # nothing to add, but buckets expire as the confusion window's do
            last = batch.times if not isinstance(batch.times, np.ndarray) else float(batch.times[-1])
            self._expire(math.floor(last / width))
            return
        if not isinstance(batch.times, np.ndarray):
            self._out_of_order(math.floor(batch.times / width), batch, len(batch))
            self._add(math.floor(batch.times / width), batch, 0, len(batch))
            return
        ids = np.floor(batch.times / width).astype(np.int64)
        newest = int(ids[-1])
        starts = np.flatnonzero(np.diff(ids)) + 1
        for lo, hi in zip([0, *starts.tolist()], [*starts.tolist(), len(ids)], strict=True):
            if ids[lo] > newest - self.window.buckets:  # older buckets would leave within this batch
                self._out_of_order(int(ids[lo]), batch, hi)
                self._add(int(ids[lo]), batch, lo, hi)
            else:  # never in this window, but in those led: routed around it (the scored ones counted in ``broken_at``,
                # although, times never decreasing, every sample before them is out of this window too)
                self.broken_at = batch.numbered(hi)
                self.values.took(batch, lo, hi)
                for counts in self._led:
                    batch.add_bins(counts.hist, lo, hi)

    def _whole(self) -> ScoreCounts:
        """The window's tally: the closed buckets' and the open one's."""
        whole = ScoreCounts(self.rows, self.counts.columns)
        whole.add(self.counts.hist, self.counts.sums, self.counts.top)
        whole.add(self._open.hist, self._open.sums, self._open.top)
        return whole

    def read_key(self, now: float | None) -> Any:
        return None if now is None else math.floor(now / self.window.width)

    def snapshot(self, now: float | None, k: int, positive: int | None) -> ScoreTally:
        if now is not None:
            self._expire(math.floor(now / self.window.width))
        if self._open_id is None:
            return super().snapshot(now, k, positive)
        if not self._closed:  # only the open bucket holds samples: no sum to make
            return self._frozen(k, positive, self._open)
        return self._frozen(k, positive, self.counts, self._open)

    def state(self) -> dict[str, Any]:
        buckets = [bucket.item(bucket_id) for bucket_id, bucket in sorted(self._closed.items())]
        if self._open_id is not None and self._open.top[:, :, 0].any():
            buckets.append(_Closed.of(self._open).item(self._open_id))
        return {"tally": self._whole().state(), "buckets": buckets, "broken_at": self.broken_at}

    def restore(self, state: dict[str, Any]) -> None:
        super().restore(state)
        items = state["buckets"]
        broken_at = state.get("broken_at", 0)  # absent from files written before exact scores were kept
        if type(broken_at) is not int or broken_at < 0:
            raise ValueError(f"saved timed score window's broken_at must be an int >= 0, got {broken_at!r:.60}")
        self.broken_at = broken_at
        if not isinstance(items, list) or len(items) > self.window.buckets:
            raise ValueError(f"saved score buckets must be a list of at most {self.window.buckets}")
        recount = ScoreCounts(self.rows, self.counts.columns)
        parts: dict[int, ScoreCounts] = {}
        for item in items:
            part = ScoreCounts(self.rows, self.counts.columns)
            part.restore(item)
            bucket_id = item["id"]
            if type(bucket_id) is not int or bucket_id in parts:
                raise ValueError(f"saved score bucket id {bucket_id!r} must be an int, once")
            parts[bucket_id] = part
            recount.add(part.hist, part.sums, part.top)
        if parts and max(parts) - min(parts) >= self.window.buckets:
            raise ValueError("saved score buckets span more than the window")
        if not np.array_equal(recount.hist, self.counts.hist):
            raise ValueError("saved score tally does not match its buckets")
        self._closed = {bucket_id: _Closed.of(part) for bucket_id, part in parts.items()}
        self.values.unknown(parts)  # a state file keeps no marks: read by the ring's values until they leave
        self._clear_open()
        self._open_id = None
        if parts:  # the newest bucket is open again: out of the closed part, into the dense one
            newest = max(parts)
            bucket = self._closed.pop(newest)
            self.counts.subtract_cells(bucket.cells, bucket.counts, bucket.sums, bucket.top)
            held = int(parts[newest].top[:, :, 0].sum())  # its scored samples (exact integers in float64)
            self._room(held)
            self._open_samples = held
            self._open.add(parts[newest].hist, parts[newest].sums, parts[newest].top)
            self._touched, self._touched_size = [bucket.cells], len(bucket.cells)
            self._open_id = newest


TOUCHED_SHARE = 0.25  # the open bucket's sample cells are kept while fewer than this share of its histogram's
OPEN_TYPE = np.int32  # the open bucket's histogram counts, while they cannot exceed OPEN_LIMIT
OPEN_LIMIT = int(np.iinfo(np.int32).max)


def _pad(a: npt.NDArray[Any], rows: int) -> npt.NDArray[Any]:
    grown = np.zeros((rows, *a.shape[1:]), a.dtype)
    grown[: len(a)] = a
    return grown
