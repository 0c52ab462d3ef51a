"""A batch of scored samples as every score window takes it (``streammon.counting.windows.scored``): its class
indices, scores and times, with each score's bin and the batch's sums and confidence bins made once, in one pass.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from streammon.counting.score_tally import ScoreCounts
from streammon.metrics.score_bins import BINS
from streammon.metrics.score_kernel import accumulate_scores, add_hist, prepared_tally

if TYPE_CHECKING:
    from streammon.counting.score_census import ValueCensus


class ScoredBatch:
    """A batch's class indices, scores ((n, C), a NaN row for a sample without a score) and times, with the
    bins of its scores, and its sums and confidence bins, made once
    (``streammon.metrics.score_kernel.prepared_tally``) and shared by every window."""

    __slots__ = ("_binned", "_delta", "bins", "census", "entries", "first", "positive", "scored", "scores", "sums",
                 "times", "top", "true")

    def __init__(self, true: npt.NDArray[np.intp], scores: npt.NDArray[np.float64],
                 times: npt.NDArray[np.float64] | float | None, *, positive: int,
                 targets: Sequence[ScoreCounts] = (), rows: int | None = None, first: int = 0) -> None:
        """``first``: the number of scored samples the monitor took before this batch (``ScoreRing.total``).
        ``targets``: the tallies of (at most two) windows that will add the whole batch (``add_whole``), whose
        histograms get the samples' bins in the pass that makes them (unless the batch's dense histogram pays).
        ``rows``: more than the largest class index of ``true``, if the caller knows it (else it is looked up)."""
        self.true = np.ascontiguousarray(true, dtype=np.intp)
        self.scores = np.ascontiguousarray(scores, dtype=np.float64)
        self.times = times
        self.positive = positive
        self.first = first
        # the monitor's census once it counted the batch, while it counts (``Scoring``): what a window sliding by
        # time marks as a bucket opens (``streammon.counting.windows.timed_values``)
        self.census: ValueCensus | None = None
        self.entries: npt.NDArray[np.int32] | None = None  # with it, each score's census entry (C, n: -1 none)
        # whether any sample has a score: a scored first sample settles it (the usual batch), else every one is read
        self.scored = len(true) > 0 and (not math.isnan(self.scores[0, 0])
                                         or bool((~np.isnan(self.scores[:, 0])).any()))
        self.bins: npt.NDArray[np.int16] | None = None
        self.sums: npt.NDArray[np.float64] | None = None
        self.top: npt.NDArray[np.float64] | None = None
        self._delta: tuple[int, ScoreCounts | None] | None = None
        self._binned: tuple[ScoreCounts, ...] = ()
        if self.scored:  # one pass: bins and the whole batch's sums and confidence bins
            rows = int(self.true.max()) + 1 if rows is None else rows
            columns = self.scores.shape[1]
            dense = ScoreCounts(rows, columns) if self._dense_pays(rows) else None  # its histogram in that pass
            if dense is None:
                self._binned = tuple(targets[:2])
            into = [dense.hist] if dense is not None else [t.hist for t in self._binned]
            self.bins, self.sums, self.top = prepared_tally(
                self.true, self.scores, positive, rows, hist=into[0] if into else None,
                hist2=into[1] if len(into) > 1 else None)
            if dense is not None:
                dense.sums, dense.top = self.sums, self.top
                self._delta = (-1, dense)  # rows -1: good for any window (``ScoreCounts.add`` takes fewer rows)

    def counted_by(self, census: ValueCensus, kept: npt.NDArray[np.bool_] | None) -> None:
        """``census`` counted the batch's rows ``kept`` (None: all): while it counts, it and each score's entry in
        it (``census.entries``, as the batch's rows: -1 for a row without a score) are the batch's."""
        entries = census.entries
        if not census.counting or entries is None:
            return
        self.census = census
        if kept is None:
            self.entries = entries
        else:
            self.entries = np.full((len(entries), len(self)), -1, np.int32)
            self.entries[:, kept] = entries

    def _dense_pays(self, rows: int) -> bool:
        """Whether adding a dense tally of ``rows`` rows costs less than adding the samples one by one."""
        return rows * BINS <= DENSE_RATIO * len(self.true)

    def __len__(self) -> int:
        return len(self.true)

    def numbered(self, stop: int) -> int:
        """The monitor's count of scored samples once this batch's samples ``[0, stop)`` are taken."""
        if not self.scored:
            return self.first
        return self.first + int(np.count_nonzero(~np.isnan(self.scores[:stop, 0])))

    def delta(self, rows: int) -> ScoreCounts | None:
        """The whole batch's tally as one dense ``ScoreCounts`` when adding that to a window is cheaper than adding
        the samples one by one (its histogram has at most ``DENSE_RATIO`` cells a sample), else None. Made once and
        shared by the windows that add the whole batch."""
        if self._delta is None or self._delta[0] not in (rows, -1):
            columns = self.scores.shape[1]
            delta = None
            if self._dense_pays(rows):
                delta = ScoreCounts(rows, columns)
                self._add_sample_bins(delta)
            self._delta = (rows, delta)
        return self._delta[1]

    def _add_sample_bins(self, counts: ScoreCounts) -> None:
        """Add the whole batch: its samples' bins one by one, its sums and confidence bins as made once."""
        assert self.bins is not None and self.sums is not None and self.top is not None
        add_hist(self.true, self.scores, self.bins, counts.hist)
        k = len(self.sums)
        counts.sums[:k] += self.sums
        counts.top[:k] += self.top

    def add_whole(self, counts: ScoreCounts) -> None:
        """Add every sample to ``counts``: the dense delta where it pays (``delta``), else the samples' bins (made
        already if ``counts`` was a target)."""
        if any(counts is target for target in self._binned):
            assert self.sums is not None and self.top is not None
            k = len(self.sums)
            counts.sums[:k] += self.sums
            counts.top[:k] += self.top
            return
        delta = self.delta(len(counts.hist))
        if delta is None:
            self._add_sample_bins(counts)
        else:
            counts.add(delta.hist, delta.sums, delta.top)

    def add_sums(self, counts: ScoreCounts) -> None:
        """Add every sample's sums and confidence bins to ``counts``, not its histogram (a window whose histogram
        takes the batch through another window's: ``ScoreWindow.follow``)."""
        assert self.sums is not None and self.top is not None
        k = len(self.sums)
        counts.sums[:k] += self.sums
        counts.top[:k] += self.top

    def add_bins(self, hist: npt.NDArray[np.int64], start: int, stop: int) -> None:
        """Add samples ``start:stop``'s bins to ``hist``: their histogram only."""
        assert self.bins is not None
        add_hist(self.true[start:stop], self.scores[start:stop], self.bins[start:stop], hist)

    def add_to(self, counts: ScoreCounts, start: int = 0, stop: int | None = None) -> None:
        """Add samples ``start:stop`` to ``counts``, one by one (their logarithms made again: the same floats)."""
        assert self.bins is not None
        part = slice(start, stop)
        accumulate_scores(self.true[part], self.scores[part], self.bins[part], self.positive, 1, counts.hist,
                          counts.sums, counts.top)


DENSE_RATIO = 2  # a batch's dense tally is added to windows when its histogram has at most this many cells a sample
