"""The score tally of a window sliding by count (``streammon.counting.windows.scored``): a ring of its last samples'
classes and scores, written by each batch, and a tally brought up to date when read.

>>> from streammon.counting.windows.scored_batch import ScoredBatch
>>> s = SlidingScores(2, rows=2, columns=1, positive=1)
>>> s.ingest(ScoredBatch(np.array([0, 1, 1]), np.array([[0.1], [np.nan], [0.8]]), None, positive=1))
>>> s.snapshot(None, 2, 1).n_scored, s.snapshot(None, 2, 1).class_counts.tolist()
(1, [0, 1])
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.score_census import ValueCensus
from streammon.counting.score_tally import ScoreCounts, ScoreTally, count_type
from streammon.counting.windows.scored import ScoreWindow
from streammon.counting.windows.scored_batch import ScoredBatch
from streammon.metrics.bin_values import BinValues, bin_values
from streammon.metrics.score_kernel import accumulate, accumulate_scores, add_hist, prepared


class SlidingScores(ScoreWindow):
    """The scores of the last ``size`` samples, brought up to date when read (``catch_up``), not per batch.

    A ring of ``2 × size`` slots keeps each sample's class and scores (NaN where it had none) with the bins of its
    scores (their logarithms, numpy's, are made again when read: the same floats); sample number p (counted from
    the window's start) sits in slot ``p mod 2·size``.
    ``counts`` holds the samples ``[applied − size, applied)``; a batch only writes its samples into the ring
    (``written`` grows). A read catches up: if fewer than ``size`` samples came since, it subtracts the ones that
    left — still in the ring, which is twice the window — and adds the new ones, exactly what it had added for
    each; else it counts the last ``size`` samples afresh. Samples that came and left between two reads cost a
    ring write only, and each read at most ``2 × size`` samples' work, whatever the batches were.

    A batch's sums and confidence bins, which it makes once for every window (``ScoredBatch``), are kept beside
    the ring while all its samples are there (``_batches``; only for a batch no larger than the window whose two
    arrays hold no more numbers than its scores): a catch-up that adds or subtracts the whole batch takes those
    two small arrays and the samples' stored bins, instead of making every sample's logarithms again and adding
    its sums one by one (K = 10, in cache: ~25 instead of ~70 ns a sample). The sums then differ from a sample-by-sample
    count by rounding only, as they do anyway between windows."""

    def __init__(self, size: int, rows: int, columns: int, positive: int) -> None:
        super().__init__(rows, columns, positive)
        # counts of at most ``size`` samples: int16 up to 32,767 (the default windows), a quarter of the memory
        # the catch-up scatters into and a read copies (K = 10: 0.4 MB, not 1.6)
        self.counts = ScoreCounts(rows, columns, count_type(size))
        self.size = size
        slots = 2 * size
        self._true = np.zeros(slots, np.intp)
        self._scores = np.full((slots, columns), np.nan)  # the slots before the first score hold none
        self._bins = np.zeros((slots, columns), np.int16)
        self._written = 0  # samples written into the ring
        self._applied = 0  # counts holds samples [applied - size, applied)
        # (first, stop, sums, top) of the batches ``[first, stop)`` still wholly in the ring, oldest first: their
        # ``ScoredBatch`` sums and confidence bins (read-only)
        self._batches: deque[tuple[int, int, npt.NDArray[np.float64], npt.NDArray[np.float64]]] = deque()

    def whole_target(self, times: npt.NDArray[np.float64] | float | None, size: int) -> ScoreCounts | None:
        return None  # batches only write the ring

    def _span(self, lo: int, hi: int, sign: int) -> None:
        """Add (``sign`` 1) or subtract (-1) the samples ``lo:hi`` (sample numbers, at most the ring's length): the
        batches wholly among them by their kept sums and their samples' bins, the others one by one."""
        lo = max(lo, 0)
        counts = self.counts
        for first, stop, sums, top in self._batches:
            if stop > hi:
                break
            if first < lo:
                continue
            self._pass(lo, first, sign)
            self._pass(first, stop, sign, sums_too=False)
            k = len(sums)
            if sign > 0:
                counts.sums[:k] += sums
                counts.top[:k] += top
            else:
                counts.sums[:k] -= sums
                counts.top[:k] -= top
            lo = stop
        self._pass(lo, hi, sign)

    def _pass(self, lo: int, hi: int, sign: int, *, sums_too: bool = True) -> None:
        """Add (``sign`` 1) or subtract (-1) the samples ``lo:hi`` (sample numbers, at most the ring's length) one
        by one (``sums_too`` False: their histogram only)."""
        slots = len(self._true)
        while lo < hi:
            start = lo % slots
            stop = min(start + hi - lo, slots)
            part = slice(start, stop)
            if sums_too:  # the logarithms made again from the ring's scores: the same floats as when added (numpy's)
                accumulate_scores(self._true[part], self._scores[part], self._bins[part], self.positive, sign,
                                  self.counts.hist, self.counts.sums, self.counts.top)
            else:
                add_hist(self._true[part], self._scores[part], self._bins[part], self.counts.hist, sign)
            lo += stop - start

    def catch_up(self) -> None:
        """Make ``counts`` the tally of the last ``size`` samples written."""
        written, applied, size = self._written, self._applied, self.size
        if written == applied:
            return
        # count afresh when the samples that left are no longer all in the ring, or when clearing the histogram (a
        # memset) and adding ``size`` samples costs less than subtracting and adding ``changed`` (a report after
        # each batch of a window's size: one pass, not two) — not for a small window of many classes, whose
        # histogram is large beside its samples
        changed = written - applied
        saved = (2 * changed - size) * self.counts.columns  # the per-sample updates counting afresh saves
        if changed > size or self.counts.hist.nbytes < CLEAR_BYTES * saved:
            if applied:  # (a window never caught up holds nothing to clear)
                self.counts.clear()
            self._span(written - size, written, 1)
        else:
            self._span(applied - size, written - size, -1)
            self.counts.settle()
            self._span(applied, written, 1)
        self._applied = written
        batches = self._batches  # a batch that began before the window no longer stands in for its samples
        while batches and batches[0][0] < written - size:
            batches.popleft()

    def ingest(self, batch: ScoredBatch) -> None:
        m = len(batch)
        if m == 0:
            return
        skip = max(0, m - self.size)  # samples that would leave within this batch are never written
        slots = len(self._true)
        at = self._written + skip
        start = skip
        while start < m:
            slot = at % slots
            stop = min(m, start + slots - slot)
            end = slot + stop - start
            self._true[slot:end] = batch.true[start:stop]
            self._scores[slot:end] = batch.scores[start:stop]
            if batch.bins is not None:
                self._bins[slot:end] = batch.bins[start:stop]
            at += stop - start
            start = stop
        if not skip and batch.sums is not None and batch.top is not None \
                and batch.sums.size + batch.top.size <= m * batch.scores.shape[1]:
            self._batches.append((self._written, self._written + m, batch.sums, batch.top))
        self._written += m
        slots = len(self._true)
        while self._batches and self._batches[0][0] < self._written - slots:  # overwritten in the ring
            self._batches.popleft()

    def snapshot(self, now: float | None, k: int, positive: int | None) -> ScoreTally:
        self.catch_up()
        return super().snapshot(now, k, positive)

    def exact_values(self, k: int, shown: BinValues | None, census: ValueCensus | None = None) -> BinValues | None:
        """What this window's bins hold, from its own samples, which are the whole window: by the monitor's
        ``census`` where it counts every one of its columns (a lookup a score: ``ValueCensus.values_of``), exact;
        else by ``bin_values`` (a sort a column: K = 10, 10,000 samples, ~3 ms) where the monitor's last samples
        (``shown``) show some bin split — in each column where they do (a few-valued model's) every bin of two values
        or more split over them, exact; in any other only the bins that repeat a value —; else ``shown`` (a
        continuous model's window reads its bins as every other, and no report pays for a pass over its
        samples)."""
        counts_all = census is not None and census.every_column
        if not counts_all and (shown is None or shown.split == 0):
            return shown
        self.catch_up()
        ring = np.arange(max(self._written - self.size, 0), self._written) % len(self._true)
        scores = self._scores[ring]
        scored = ~np.isnan(scores[:, 0])
        ring = ring[scored]
        if census is not None and counts_all:
            counted = census.values_of(self._true[ring], scores[scored], k, shown)
            if counted is not None:
                return counted
        if shown is None:  # (never: a census that counts every column knows every sample of the window)
            return None
        few = shown.starts[:, -1] > 0  # the columns of a few-valued model: every bin of two values split
        return bin_values(self._bins[ring], scores[scored], self._true[ring], k, complete=few,
                          flags=np.where(few[:, None], False, shown.flags))  # there, a bin not split is one value

    def state(self) -> dict[str, Any]:
        """The tally and the ring in the window's own slots (sample p in slot ``p mod size``, ``head`` the next)."""
        self.catch_up()
        numbers = np.arange(max(self._written - self.size, 0), self._written)
        ring = numbers % len(self._true)
        scored = ~np.isnan(self._scores[ring, 0])
        own = numbers[scored] % self.size
        order = np.argsort(own)
        return {**super().state(), "head": self._written % self.size, "slots": own[order].tolist(),
                "true": self._true[ring[scored][order]].tolist(), "scores": self._scores[ring[scored][order]].tolist()}

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
        # the saved window is samples head .. head + size - 1 (the oldest at head), its slots taken mod size
        numbers = np.where(slots >= head, slots, slots + self.size)
        self._true[:] = 0
        self._scores[:] = np.nan
        self._true[numbers] = true
        self._scores[numbers] = scores
        self._bins[:], logs, log1ms = prepared(self._scores)
        self._written = self._applied = head + self.size
        self._batches.clear()  # the restored samples are counted one by one
        recount = ScoreCounts(self.rows, self.counts.columns)
        accumulate(self._true, self._scores, self._bins, logs, log1ms, self.positive, 1, recount.hist, True,
                   recount.sums, recount.top)
        if not np.array_equal(recount.hist, self.counts.hist):
            raise ValueError("saved score tally does not match its ring")


CLEAR_BYTES = 100  # a memset clears ~100 bytes in the time of one sample's update of a histogram cell, its sums
# and confidence bin (measured, K = 10: 0.4 MB cleared in ~20 µs; 10,000 updates ~40 µs in cache, ~100 µs not)
# (rows × BINS per sample: per score the same, C cells for C scores). Measured (CPU time, the default windows): at
# K = 10 a flush of 4,096 samples costs 215 ns a sample with the dense tally (8 cells a score: allocated, zeroed,
# added twice) and 140-150 sample by sample; at K = 2, 4,096 samples, the two are level (~30 ns)
