"""The score distribution of each window (``streammon.counting.score_tally``), kept beside its confusion counts.

One score window follows one confusion window and holds exactly the scored samples that window holds:

- cumulative: one tally, added to;
- sliding by count: a ring of the last ``size`` samples' true classes and scores (NaN for a sample that came
  without one), so each evicted sample's score is subtracted exactly — 8 bytes a score column and 4 bytes of
  class a sample, allocated only once the monitor's first score arrives;
- sliding by time: one tally per bucket, its histogram as non-zero cells only (a bucket holds at most as many
  as its samples), merged into the window's tally when added and subtracted when the bucket expires — the
  same buckets as the confusion window (``Timed``), so both hold the same samples.

Samples without a score are in the confusion counts but not in the tally: ``ScoreTally.n_scored`` says how many
of a window's samples carried one.

>>> from streammon.counting.windows import Sliding
>>> w = Sliding(2)
>>> s = score_window(w, rows=2, columns=1, positive=1)
>>> s.ingest(ScoredBatch(np.array([0, 1, 1]), np.array([[0.1], [np.nan], [0.8]]), None, positive=1))
>>> s.snapshot(None, 2).n_scored, s.snapshot(None, 2).class_counts.tolist()
(1, [0, 1])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.score_tally import Parts, ScoreCounts, ScoreTally, sample_cells
from streammon.counting.windows.base import EMPTY_BUCKET, Cumulative, Window
from streammon.counting.windows.sliding import Sliding
from streammon.counting.windows.timed import Timed


class ScoredBatch:
    """A batch's class indices, scores ((n, C), a NaN row for a sample without a score) and times, and the
    tally of its scored samples, made once and shared by every window that adds the whole batch."""

    __slots__ = ("_parts", "positive", "scored", "scores", "times", "true")

    def __init__(self, true: npt.NDArray[np.intp], scores: npt.NDArray[np.float64],
                 times: npt.NDArray[np.float64] | float | None, *, positive: int) -> None:
        self.true = true
        self.scores = scores
        self.times = times
        self.positive = positive
        self.scored = ~np.isnan(scores[:, 0])
        self._parts: tuple[int, Parts] | None = None

    def __len__(self) -> int:
        return len(self.true)

    def parts(self, rows: int, start: int = 0, stop: int | None = None) -> Parts:
        """The tally of the scored samples ``start:stop`` (the whole batch's is kept)."""
        whole = start == 0 and (stop is None or stop >= len(self.true))
        if whole and self._parts is not None and self._parts[0] == rows:
            return self._parts[1]
        parts = tally_of(self.true[start:stop], self.scores[start:stop], rows, self.positive,
                         self.scored[start:stop])
        if whole:
            self._parts = (rows, parts)
        return parts


def tally_of(true: npt.NDArray[np.intp], scores: npt.NDArray[np.float64], rows: int, positive: int,
             scored: npt.NDArray[np.bool_] | None = None) -> Parts:
    """``sample_cells`` of the rows of ``scores`` that are not NaN."""
    if scored is None:
        scored = ~np.isnan(scores[:, 0])
    if not scored.all():
        true, scores = true[scored], scores[scored]
    return sample_cells(true, scores, rows, positive=positive)


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
        if batch.scored.any():
            self.counts.add_cells(batch.parts(self.rows))

    def snapshot(self, now: float | None, k: int, positive: int | None) -> ScoreTally:
        """A read-only copy of the first ``k`` classes' tally as of ``now``."""
        return self.counts.snapshot(k, positive)

    def state(self) -> dict[str, Any]:
        return {"tally": self.counts.state()}

    def restore(self, state: dict[str, Any]) -> None:
        self.counts.restore(state["tally"])


class SlidingScores(ScoreWindow):
    """The scores of the last ``size`` samples: a ring of classes and scores, NaN where a sample had none."""

    def __init__(self, size: int, rows: int, columns: int, positive: int) -> None:
        super().__init__(rows, columns, positive)
        self.size = size
        self._true = np.zeros(size, np.int32)
        self._scores = np.full((size, columns), np.nan)  # the slots before the first score hold none
        self._head = 0

    def ingest(self, batch: ScoredBatch) -> None:
        m, size = len(batch), self.size
        if m == 0:
            return
        if m >= size:
            self._true[:] = batch.true[m - size:]
            self._scores[:] = batch.scores[m - size:]
            self._head = 0
            self.counts = ScoreCounts(self.rows, self.counts.columns)
            self.counts.add_cells(tally_of(self._true.astype(np.intp), self._scores, self.rows, self.positive))
            return
        where = (self._head + np.arange(m)) % size if self._head + m > size else slice(self._head, self._head + m)
        old_scores = self._scores[where]
        leaving = ~np.isnan(old_scores[:, 0])
        if leaving.any():  # the oldest samples leave: their scores are subtracted exactly
            self.counts.add_cells(tally_of(self._true[where].astype(np.intp), old_scores, self.rows,
                                           self.positive, leaving), sign=-1)
        self._true[where] = batch.true
        self._scores[where] = batch.scores
        self._head = (self._head + m) % size
        if batch.scored.any():
            self.counts.add_cells(batch.parts(self.rows))

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
        self._head = head
        recount = ScoreCounts(self.rows, self.counts.columns)
        recount.add_cells(tally_of(self._true.astype(np.intp), self._scores, self.rows, self.positive))
        if not np.array_equal(recount.hist, self.counts.hist):
            raise ValueError("saved score tally does not match its ring")


class TimedScores(ScoreWindow):
    """The scores of the samples of the last ``seconds``, in the buckets of the ``Timed`` window it follows."""

    def __init__(self, window: Timed, rows: int, columns: int, positive: int) -> None:
        super().__init__(rows, columns, positive)
        self.window = window
        self._buckets: dict[int, Parts] = {}  # bucket id -> its tally (histogram as non-zero cells)

    def grow(self, rows: int) -> None:
        super().grow(rows)
        self._buckets = {b: (c, n, _pad(s, rows), _pad(t, rows)) for b, (c, n, s, t) in self._buckets.items()}

    def _expire(self, newest: int) -> None:
        for bucket in [b for b in self._buckets if b <= newest - self.window.buckets]:
            self.counts.add_cells(self._buckets.pop(bucket), sign=-1)

    def _add(self, bucket: int, parts: Parts) -> None:
        self._expire(bucket)
        if bucket <= max(self._buckets, default=EMPTY_BUCKET) - self.window.buckets:
            return  # already out of the window (times never decrease: only possible within one batch)
        self.counts.add_cells(parts)
        held = self._buckets.get(bucket)
        self._buckets[bucket] = parts if held is None else _merged(held, parts)

    def ingest(self, batch: ScoredBatch) -> None:
        if not batch.scored.any():
            return
        if batch.times is None:
            raise ValueError("a timed window's scores need sample times")
        if not isinstance(batch.times, np.ndarray):
            self._add(math.floor(batch.times / self.window.width), batch.parts(self.rows))
            return
        where = np.flatnonzero(batch.scored)
        ids = np.floor(batch.times[where] / self.window.width).astype(np.int64)
        newest = int(ids[-1])
        live = ids > newest - self.window.buckets
        starts = np.flatnonzero(np.diff(ids)) + 1
        for lo, hi in zip([0, *starts.tolist()], [*starts.tolist(), len(ids)], strict=True):
            if live[lo]:
                rows = where[lo:hi]
                self._add(int(ids[lo]), tally_of(batch.true[rows], batch.scores[rows], self.rows, self.positive))

    def snapshot(self, now: float | None, k: int, positive: int | None) -> ScoreTally:
        if now is not None:
            self._expire(math.floor(now / self.window.width))
        return super().snapshot(now, k, positive)

    def state(self) -> dict[str, Any]:
        buckets = []
        for bucket, (cells, counts, sums, top) in sorted(self._buckets.items()):
            live = np.flatnonzero(top[:, :, 0].sum(axis=1))
            buckets.append({"id": bucket, "cells": cells.tolist(), "counts": counts.tolist(), "rows": live.tolist(),
                            "sums": sums[live].tolist(), "top": top[live].tolist()})
        return {**super().state(), "buckets": buckets}

    def restore(self, state: dict[str, Any]) -> None:
        super().restore(state)
        items = state["buckets"]
        if not isinstance(items, list) or len(items) > self.window.buckets:
            raise ValueError(f"saved score buckets must be a list of at most {self.window.buckets}")
        recount = ScoreCounts(self.rows, self.counts.columns)
        buckets: dict[int, Parts] = {}
        for item in items:
            part = ScoreCounts(self.rows, self.counts.columns)
            part.restore(item)
            flat = part.hist.reshape(-1)
            cells = np.flatnonzero(flat)
            bucket = item["id"]
            if type(bucket) is not int or bucket in buckets:
                raise ValueError(f"saved score bucket id {bucket!r} must be an int, once")
            buckets[bucket] = (cells, flat[cells], part.sums, part.top)
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


def _merged(a: Parts, b: Parts) -> Parts:
    """Two tallies in ``sample_cells`` form as one."""
    cells, inverse = np.unique(np.concatenate([a[0], b[0]]), return_inverse=True)
    counts = np.bincount(inverse, weights=np.concatenate([a[1], b[1]]), minlength=len(cells)).astype(np.int64)
    return cells, counts, a[2] + b[2], a[3] + b[3]


def score_window(window: Window, *, rows: int, columns: int, positive: int) -> ScoreWindow:
    """The score window that follows ``window``."""
    if isinstance(window, Sliding):
        return SlidingScores(window.size, rows, columns, positive)
    if isinstance(window, Timed):
        return TimedScores(window, rows, columns, positive)
    if isinstance(window, Cumulative):
        return ScoreWindow(rows, columns, positive)
    raise TypeError(f"no score window for {type(window).__name__}")
