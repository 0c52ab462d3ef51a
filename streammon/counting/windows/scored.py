"""The score distribution of each window (``streammon.counting.score_tally``), kept beside its confusion counts.

One score window follows one confusion window and holds exactly the scored samples that window holds:

- cumulative: one tally, added to;
- sliding by count: a ring of the last ``size`` samples' true classes and scores (NaN for a sample that came
  without one) with the bins and logarithms each was counted with, so each evicted sample's score is subtracted
  exactly — 26 bytes a score column and 8 bytes of class a sample, allocated only once the monitor's first score
  arrives;
- sliding by time: one tally per bucket, its histogram as non-zero cells only (a bucket holds at most as many
  as its samples), merged into the window's tally when added and subtracted when the bucket expires — the
  same buckets as the confusion window (``Timed``), so both hold the same samples.

Samples without a score are in the confusion counts but not in the tally: ``ScoreTally.n_scored`` says how many
of a window's samples carried one.

>>> from streammon.counting.windows import Sliding
>>> w = Sliding(2)
>>> s = score_window(w, rows=2, columns=1, positive=1)
>>> s.ingest(ScoredBatch(np.array([0, 1, 1]), np.array([[0.1], [np.nan], [0.8]]), None, positive=1))
>>> s.snapshot(None, 2, 1).n_scored, s.snapshot(None, 2, 1).class_counts.tolist()
(1, [0, 1])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.score_tally import ScoreCounts, ScoreTally
from streammon.counting.windows.base import Cumulative, Window
from streammon.counting.windows.sliding import Sliding
from streammon.counting.windows.timed import Timed
from streammon.metrics.score_bins import BINS, ECE_BINS, SUMS, TOP
from streammon.metrics.score_kernel import accumulate, prepared


class ScoredBatch:
    """A batch's class indices, scores ((n, C), a NaN row for a sample without a score) and times, with the
    bins and logarithms of its scores made once (``streammon.metrics.score_kernel.prepared``) and shared by every
    window."""

    __slots__ = ("_delta", "bins", "log1ms", "logs", "positive", "scored", "scores", "times", "true")

    def __init__(self, true: npt.NDArray[np.intp], scores: npt.NDArray[np.float64],
                 times: npt.NDArray[np.float64] | float | None, *, positive: int) -> None:
        self.true = np.ascontiguousarray(true, dtype=np.intp)
        self.scores = np.ascontiguousarray(scores, dtype=np.float64)
        self.times = times
        self.positive = positive
        self.scored = bool((~np.isnan(self.scores[:, 0])).any()) if len(true) else False
        self.bins: npt.NDArray[np.int16] | None = None
        self.logs: npt.NDArray[np.float64] | None = None
        self.log1ms: npt.NDArray[np.float64] | None = None
        if self.scored:
            self.bins, self.logs, self.log1ms = prepared(self.scores)
        self._delta: tuple[int, ScoreCounts | None] | None = None

    def __len__(self) -> int:
        return len(self.true)

    def delta(self, rows: int) -> ScoreCounts | None:
        """The whole batch's tally as one dense ``ScoreCounts`` when adding that to a window is cheaper than adding
        the samples one by one (its histogram has at most ``DENSE_RATIO`` cells a score), else None. Made once and
        shared by the windows that add the whole batch."""
        if self._delta is None or self._delta[0] != rows:
            columns = self.scores.shape[1]
            delta = None
            if rows * columns * BINS <= DENSE_RATIO * len(self.true) * columns:
                delta = ScoreCounts(rows, columns)
                self.add_to(delta)
            self._delta = (rows, delta)
        return self._delta[1]

    def add_whole(self, counts: ScoreCounts) -> None:
        """Add every sample to ``counts``: the dense delta where it pays (``delta``), else sample by sample."""
        delta = self.delta(len(counts.hist))
        if delta is None:
            self.add_to(counts)
        else:
            counts.add(delta.hist, delta.sums, delta.top)

    def add_to(self, counts: ScoreCounts, start: int = 0, stop: int | None = None, *, with_hist: bool = True,
               sums: npt.NDArray[np.float64] | None = None, top: npt.NDArray[np.float64] | None = None) -> None:
        """Add samples ``start:stop`` to ``counts`` (or only to the given ``sums`` and ``top``), one by one."""
        assert self.bins is not None and self.logs is not None and self.log1ms is not None
        part = slice(start, stop)
        accumulate(self.true[part], self.scores[part], self.bins[part], self.logs[part], self.log1ms[part],
                   self.positive, 1, counts.hist, with_hist, counts.sums if sums is None else sums,
                   counts.top if top is None else top)


class ScoreWindow:
    """The score tally of one window (base: the cumulative one)."""

    def __init__(self, rows: int, columns: int, positive: int) -> None:
        self.counts = ScoreCounts(rows, columns)
        self.positive = positive

    @property
    def rows(self) -> int:
        return len(self.counts.hist)

    def grow(self, rows: int) -> None:
        """Room for more true classes."""
        self.counts.grow(rows)

    def ingest(self, batch: ScoredBatch) -> None:
        if batch.scored:
            batch.add_whole(self.counts)

    def snapshot(self, now: float | None, k: int, positive: int | None) -> ScoreTally:
        """A read-only copy of the first ``k`` classes' tally as of ``now``."""
        return self.counts.snapshot(k, positive)

    def state(self) -> dict[str, Any]:
        return {"tally": self.counts.state()}

    def restore(self, state: dict[str, Any]) -> None:
        self.counts.restore(state["tally"])


class SlidingScores(ScoreWindow):
    """The scores of the last ``size`` samples: a ring of classes and scores (NaN where a sample had none), with
    the bins and logarithms each was counted with, so that evicting it subtracts exactly that."""

    def __init__(self, size: int, rows: int, columns: int, positive: int) -> None:
        super().__init__(rows, columns, positive)
        self.size = size
        self._true = np.zeros(size, np.intp)
        self._scores = np.full((size, columns), np.nan)  # the slots before the first score hold none
        self._bins = np.zeros((size, columns), np.int16)
        self._logs = np.zeros((size, columns))
        self._log1ms = np.zeros((size, columns))
        self._head = 0

    def _evict(self, start: int, stop: int) -> None:
        """Subtract the scores of ring slots ``start:stop`` (no wrap)."""
        part = slice(start, stop)
        accumulate(self._true[part], self._scores[part], self._bins[part], self._logs[part], self._log1ms[part],
                   self.positive, -1, self.counts.hist, True, self.counts.sums, self.counts.top)

    def _write(self, at: int, batch: ScoredBatch, start: int, stop: int) -> None:
        """Ring slots from ``at`` take the batch's samples ``start:stop`` (no wrap)."""
        end = at + stop - start
        self._true[at:end] = batch.true[start:stop]
        self._scores[at:end] = batch.scores[start:stop]
        if batch.bins is not None and batch.logs is not None and batch.log1ms is not None:
            self._bins[at:end] = batch.bins[start:stop]
            self._logs[at:end] = batch.logs[start:stop]
            self._log1ms[at:end] = batch.log1ms[start:stop]

    def ingest(self, batch: ScoredBatch) -> None:
        m, size = len(batch), self.size
        if m == 0:
            return
        if m >= size:  # the ring is replaced whole: every slot's score leaves
            if size * 8 < self.rows * BINS:  # fewer slots than bins: subtracting them is cheaper than clearing
                self._evict(0, size)
                self.counts.settle()
            else:
                self.counts.clear()
            self._write(0, batch, m - size, m)
            self._head = 0
            if batch.scored:
                batch.add_to(self.counts, m - size, m)
            return
        head = self._head
        first = min(m, size - head)  # slots up to the ring's end, then from its start
        self._evict(head, head + first)
        if m > first:
            self._evict(0, m - first)
        self.counts.settle()
        self._write(head, batch, 0, first)
        if m > first:
            self._write(0, batch, first, m)
        self._head = (head + m) % size
        if batch.scored:
            batch.add_whole(self.counts)

    def state(self) -> dict[str, Any]:
        scored = np.flatnonzero(~np.isnan(self._scores[:, 0]))
        return {**super().state(), "head": self._head, "slots": scored.tolist(),
                "true": self._true[scored].tolist(), "scores": self._scores[scored].tolist()}

    def restore(self, state: dict[str, Any]) -> None:
        super().restore(state)
        slots = np.asarray(state["slots"], dtype=np.int64).reshape(-1)
        true = np.asarray(state["true"], dtype=np.int64).reshape(-1)
        scores = np.asarray(state["scores"], dtype=np.float64).reshape(len(slots), self.counts.columns)
        head = state["head"]
        if type(head) is not int or not 0 <= head < self.size:
            raise ValueError(f"saved score ring head {head!r} does not fit a window of {self.size}")
        if slots.size and (slots.min() < 0 or slots.max() >= self.size or (np.diff(slots) <= 0).any()):
            raise ValueError(f"saved score ring slots must lie in [0, {self.size}), sorted and unique")
        if true.shape != slots.shape or (true < 0).any() or (true >= self.rows).any():
            raise ValueError(f"saved score ring classes must be {len(slots)} class indices in [0, {self.rows})")
        if not (np.isfinite(scores).all() and (scores >= 0).all() and (scores <= 1).all()):
            raise ValueError("saved scores must be finite and in [0, 1]")
        self._true[:] = 0
        self._scores[:] = np.nan
        self._true[slots] = true
        self._scores[slots] = scores
        self._bins[:], self._logs[:], self._log1ms[:] = prepared(self._scores)
        self._head = head
        recount = ScoreCounts(self.rows, self.counts.columns)
        accumulate(self._true, self._scores, self._bins, self._logs, self._log1ms, self.positive, 1, recount.hist,
                   True, recount.sums, recount.top)
        if not np.array_equal(recount.hist, self.counts.hist):
            raise ValueError("saved score tally does not match its ring")


DENSE_RATIO = 8  # a batch's dense tally is added to windows when its histogram has at most this many cells a score
DENSE_BUCKET = 1 << 14  # a timed bucket with a histogram of at most this many cells keeps it dense (128 KiB)
COMPACT_AT = 1 << 16  # a timed bucket counts its cells into (cell, count) pairs once this many more came


class _Bucket:
    """One timed bucket's tally: its dense sums and confidence bins, and its histogram — dense where that is small
    (at most ``DENSE_BUCKET`` cells: a binary model's 2 × 2,048), else as the flat cells of its samples, compacted
    into sorted unique cells and counts once they pile up (a bucket holds its non-zero cells and at most as many
    more, or ``COMPACT_AT``, or 1/64 of the histogram's cells, whichever is most)."""

    __slots__ = ("cells", "counts", "dense", "fresh", "sums", "top")

    def __init__(self, rows: int, columns: int) -> None:
        self.cells = np.zeros(0, np.int64)
        self.counts = np.zeros(0, np.int64)
        self.fresh: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64] | None]] = []  # (cells, counts or 1s)
        size = rows * columns * BINS
        self.dense: npt.NDArray[np.int64] | None = np.zeros(size, np.int64) if size <= DENSE_BUCKET else None
        self.sums = np.zeros((rows, columns, len(SUMS)))
        self.top = np.zeros((rows, ECE_BINS, len(TOP)))

    def add(self, cells: npt.NDArray[np.int64], counts: npt.NDArray[np.int64] | None = None) -> None:
        """Add flat histogram cells, one sample each, or with their (unique cells') ``counts``."""
        if self.dense is not None:
            if counts is None:
                np.add.at(self.dense, cells, 1)
            else:
                self.dense[cells] += counts
            return
        self.fresh.append((cells, counts))
        if sum(len(c) for c, _ in self.fresh) > max(COMPACT_AT, len(self.cells), self.sums.size * BINS // 64):
            self.compact()

    def add_hist(self, hist: npt.NDArray[np.int64]) -> None:
        """Add a dense histogram (a batch's, ``ScoredBatch.delta``)."""
        flat = hist.reshape(-1)
        if self.dense is not None:
            self.dense += flat
            return
        cells = np.flatnonzero(flat)
        self.add(cells.astype(np.int64), flat[cells])

    def compact(self) -> None:
        """Make ``cells`` and ``counts`` the histogram's non-zero cells (for a sparse bucket: count the fresh cells
        in with one ``bincount`` over the histogram's cells, linear, no sort)."""
        if self.dense is not None:
            self.cells = np.flatnonzero(self.dense).astype(np.int64)
            self.counts = self.dense[self.cells]
            return
        if not self.fresh:
            return
        size = self.sums.shape[0] * self.sums.shape[1] * BINS
        dense = np.zeros(size, np.int64)
        dense[self.cells] = self.counts
        for cells, counts in self.fresh:
            if counts is None:
                dense += np.bincount(cells, minlength=size)
            else:
                dense[cells] += counts
        self.cells = np.flatnonzero(dense).astype(np.int64)
        self.counts = dense[self.cells].astype(np.int64)
        self.fresh = []

    def load(self, cells: npt.NDArray[np.int64], counts: npt.NDArray[np.int64]) -> None:
        """Hold exactly these non-zero cells and counts (a restored bucket)."""
        self.cells, self.counts = cells, counts
        if self.dense is not None:
            self.dense[:] = 0
            self.dense[cells] = counts

    def grow(self, rows: int) -> None:
        self.sums, self.top = _pad(self.sums, rows), _pad(self.top, rows)
        if self.dense is not None:  # rows lead the flat cell ids: growing appends cells
            size = rows * self.sums.shape[1] * BINS
            if size <= DENSE_BUCKET:
                self.dense = _pad(self.dense, size)
            else:
                self.compact()
                self.dense = None


class TimedScores(ScoreWindow):
    """The scores of the samples of the last ``seconds``, in the buckets of the ``Timed`` window it follows."""

    def __init__(self, window: Timed, rows: int, columns: int, positive: int) -> None:
        super().__init__(rows, columns, positive)
        self.window = window
        self._buckets: dict[int, _Bucket] = {}

    def grow(self, rows: int) -> None:
        super().grow(rows)
        for bucket in self._buckets.values():
            bucket.grow(rows)

    def _expire(self, newest: int) -> None:
        for bucket_id in [b for b in self._buckets if b <= newest - self.window.buckets]:
            bucket = self._buckets.pop(bucket_id)
            bucket.compact()
            self.counts.subtract_cells(bucket.cells, bucket.counts, bucket.sums, bucket.top)

    def _add(self, bucket_id: int, batch: ScoredBatch, start: int, stop: int) -> None:
        self._expire(bucket_id)
        bucket = self._buckets.get(bucket_id)
        if bucket is None:
            bucket = self._buckets[bucket_id] = _Bucket(self.rows, self.counts.columns)
        delta = batch.delta(self.rows) if start == 0 and stop == len(batch) else None
        if delta is not None:  # the whole batch in one bucket, its dense tally made already
            self.counts.add(delta.hist, delta.sums, delta.top)
            bucket.sums += delta.sums
            bucket.top += delta.top
            bucket.add_hist(delta.hist)
            return
        batch.add_to(self.counts, start, stop)
        batch.add_to(self.counts, start, stop, with_hist=False, sums=bucket.sums, top=bucket.top)
        assert batch.bins is not None
        columns = self.counts.columns
        where = ~np.isnan(batch.scores[start:stop, 0])
        flat = (batch.true[start:stop, None] * columns + np.arange(columns)) * BINS + batch.bins[start:stop]
        bucket.add(flat[where].ravel().astype(np.int64))

    def ingest(self, batch: ScoredBatch) -> None:
        if batch.times is None or not len(batch):
            if batch.scored:
                raise ValueError("a timed window's scores need sample times")
            return
        width = self.window.width
        if not batch.scored:  # nothing to add, but buckets expire as the confusion window's do
            last = batch.times if not isinstance(batch.times, np.ndarray) else float(batch.times[-1])
            self._expire(math.floor(last / width))
            return
        if not isinstance(batch.times, np.ndarray):
            self._add(math.floor(batch.times / width), batch, 0, len(batch))
            return
        ids = np.floor(batch.times / width).astype(np.int64)
        newest = int(ids[-1])
        starts = np.flatnonzero(np.diff(ids)) + 1
        for lo, hi in zip([0, *starts.tolist()], [*starts.tolist(), len(ids)], strict=True):
            if ids[lo] > newest - self.window.buckets:  # older buckets would leave within this batch
                self._add(int(ids[lo]), batch, lo, hi)

    def snapshot(self, now: float | None, k: int, positive: int | None) -> ScoreTally:
        if now is not None:
            self._expire(math.floor(now / self.window.width))
        return super().snapshot(now, k, positive)

    def state(self) -> dict[str, Any]:
        buckets = []
        for bucket_id, bucket in sorted(self._buckets.items()):
            bucket.compact()
            live = np.flatnonzero(bucket.top[:, :, 0].sum(axis=1))
            buckets.append({"id": bucket_id, "cells": bucket.cells.tolist(), "counts": bucket.counts.tolist(),
                            "rows": live.tolist(), "sums": bucket.sums[live].tolist(),
                            "top": bucket.top[live].tolist()})
        return {**super().state(), "buckets": buckets}

    def restore(self, state: dict[str, Any]) -> None:
        super().restore(state)
        items = state["buckets"]
        if not isinstance(items, list) or len(items) > self.window.buckets:
            raise ValueError(f"saved score buckets must be a list of at most {self.window.buckets}")
        recount = ScoreCounts(self.rows, self.counts.columns)
        buckets: dict[int, _Bucket] = {}
        for item in items:
            part = ScoreCounts(self.rows, self.counts.columns)
            part.restore(item)
            bucket_id = item["id"]
            if type(bucket_id) is not int or bucket_id in buckets:
                raise ValueError(f"saved score bucket id {bucket_id!r} must be an int, once")
            bucket = buckets[bucket_id] = _Bucket(self.rows, self.counts.columns)
            flat = part.hist.reshape(-1)
            cells = np.flatnonzero(flat).astype(np.int64)
            bucket.load(cells, flat[cells])
            bucket.sums, bucket.top = part.sums, part.top
            recount.add(part.hist, part.sums, part.top)
        if buckets and max(buckets) - min(buckets) >= self.window.buckets:
            raise ValueError("saved score buckets span more than the window")
        if not np.array_equal(recount.hist, self.counts.hist):
            raise ValueError("saved score tally does not match its buckets")
        self._buckets = buckets


def _pad(a: npt.NDArray[Any], rows: int) -> npt.NDArray[Any]:
    grown = np.zeros((rows, *a.shape[1:]), a.dtype)
    grown[: len(a)] = a
    return grown


def score_window(window: Window, *, rows: int, columns: int, positive: int) -> ScoreWindow:
    """The score window that follows ``window``."""
    if isinstance(window, Sliding):
        return SlidingScores(window.size, rows, columns, positive)
    if isinstance(window, Timed):
        return TimedScores(window, rows, columns, positive)
    if isinstance(window, Cumulative):
        return ScoreWindow(rows, columns, positive)
    raise TypeError(f"no score window for {type(window).__name__}")
