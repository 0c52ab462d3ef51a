"""The score distribution of each window (``streammon.counting.score_tally``), kept beside its confusion counts.

One score window follows one confusion window and holds exactly the scored samples that window holds:

- cumulative: one tally, added to — beside a window sliding by time, its histogram is the samples that left that
  window's open bucket plus the open bucket's (``ScoreWindow.follow``): each score is binned into one histogram,
  not two;
- sliding by count: a ring of the last ``2 × size`` samples' true classes and scores (NaN for a sample that came
  without one) with the bin each was counted with, so each evicted sample's score is subtracted exactly — 10 bytes
  a score column and 8 bytes of class a slot, allocated only once the monitor's first score
  arrives; batches only write the ring, and a read brings the tally up to date
  (``streammon.counting.windows.scored_sliding``);
- sliding by time: the buckets of the confusion window (``Timed``), so both hold the same samples
  (``streammon.counting.windows.scored_timed``).

Samples without a score are in the confusion counts but not in the tally: ``ScoreTally.n_scored`` says how many
of a window's samples carried one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.score_tally import ScoreCounts, ScoreTally, count_type
from streammon.counting.windows.scored_batch import ScoredBatch
from streammon.metrics.bin_span import Span
from streammon.metrics.score_bins import BINS


class ScoreWindow:
    """The score tally of one window (base: the cumulative one)."""

    # the monitor's count of scored samples at this window's last sample out of time order (``TimedScores``):
    # the window is a suffix of the scored samples only while it holds none up to it (``counting.exact_scores``)
    broken_at = 0
    # the bins, per score column, of every sample the monitor's windows took (``metrics.bin_span``; the score
    # side's, shared: ``Scoring``), outside which this window's counts are 0; None: not known, every bin copied
    span: Span | None = None

    def __init__(self, rows: int, columns: int, positive: int) -> None:
        self.counts = ScoreCounts(rows, columns)
        self.positive = positive
        self._bucket: ScoreCounts | None = None  # following a timed window: its open bucket (follow)

    def follow(self, bucket: ScoreCounts, *, holding: bool = False) -> None:
        """Take the histogram of every sample through a timed window (``TimedScores.lead``) instead of binning
        each score again: from now on ``counts.hist`` holds the samples that left that window's open ``bucket``
        (the timed window adds them as they leave) and a read adds the bucket's; the sums and confidence bins
        stay this window's own (the batch's, made once). ``holding``: ``counts`` holds the bucket's samples
        already (a restored state), whose histogram is taken out — ``ValueError`` if it holds fewer."""
        if holding:
            k = len(bucket.hist)
            if (self.counts.hist[:k] < bucket.hist).any():
                raise ValueError("the cumulative score tally holds fewer scores than the timed window's newest bucket")
            self.counts.hist[:k] -= bucket.hist
        self._bucket = bucket

    @property
    def rows(self) -> int:
        return len(self.counts.hist)

    def grow(self, rows: int) -> None:
        """Room for more true classes."""
        self.counts.grow(rows)

    def whole_target(self, times: npt.NDArray[np.float64] | float | None, size: int) -> ScoreCounts | None:
        """The tally this window adds a whole batch (of these sample times, ``size`` samples) to, made ready for
        it; None if it adds the batch otherwise."""
        return self.counts if self._bucket is None else None

    def ingest(self, batch: ScoredBatch) -> None:
        if batch.scored:
            if self._bucket is None:
                batch.add_whole(self.counts)
            else:  # the histogram comes through the timed window followed
                batch.add_sums(self.counts)

    def snapshot(self, now: float | None, k: int, positive: int | None) -> ScoreTally:
        """A read-only copy of the first ``k`` classes' tally as of ``now``."""
        if self._bucket is None:
            return self._frozen(k, positive, self.counts)
        # following: the histogram is ``counts.hist`` (the samples that left the open bucket: as many as the window
        # holds beyond the bucket's, counted exactly by the confidence bins) plus the bucket's; one that holds no
        # sample is all 0 and not read (a window whose samples are all in the open bucket copies one histogram)
        bucket = self._bucket
        held, in_bucket = self.counts.top[:, :, 0].sum(), bucket.top[:, :, 0].sum()
        hists = ((bucket.hist,) if held == in_bucket else (self.counts.hist,) if in_bucket == 0
                 else (self.counts.hist, bucket.hist))
        return self._frozen(k, positive, self.counts, hists=hists)

    def _frozen(self, k: int, positive: int | None, counts: ScoreCounts, other: ScoreCounts | None = None,
                hists: tuple[npt.NDArray[np.signedinteger[Any]], ...] | None = None) -> ScoreTally:
        """A read-only copy of the first ``k`` rows of ``counts`` (plus ``other``'s), its histogram in the
        narrowest integer type that holds the samples of its fullest row (``count_type``: a bin of row r counts
        samples of row r only, each once a column, so no bin holds more than its row's samples — the confidence
        bins' exact count; a window of 20,000–60,000 samples whose largest class is under 32,768 reads int16,
        not int32). The copy is
        what a read moves through memory (K = 10: the whole histogram is 1.6 MB in int64), so only the bins the
        monitor's samples fall in are copied (``span``: the tally's ``slab``), and the metrics read only those.
        ``hists``: the (one or two) histograms whose sum is the window's, if not ``counts``' and ``other``'s."""
        top = counts.top[:k].copy() if other is None else counts.top[:k] + other.top[:k]
        dtype = count_type(int(top[:, :, 0].sum(axis=1).max(initial=0)))  # exact integers in float64
        sums = counts.sums[:k].copy() if other is None else counts.sums[:k] + other.sums[:k]
        span = np.array([[0, BINS]] * counts.columns, np.int64) if self.span is None else self.span.copy()
        lo, hi = int(span[:, 0].min()), max(int(span[:, 1].max()), 1)
        lo = min(lo, hi - 1)  # (no sample yet: an empty span, a slab of one bin)
        slab = np.empty((k, counts.columns, hi - lo), dtype)
        first, *more = hists or ((counts.hist,) if other is None else (counts.hist, other.hist))
        if more and len(first) >= k and len(more[0]) >= k:
            np.add(first[:k, :, lo:hi], more[0][:k, :, lo:hi], out=slab, casting="unsafe")  # fits: no bin exceeds
        else:  # (a timed window's bucket may have fewer rows than the window: rows of classes learned since)
            rows = min(k, len(first))
            np.copyto(slab[:rows], first[:rows, :, lo:hi], casting="unsafe")
            slab[rows:] = 0
            for h in more:
                rows = min(k, len(h))
                np.add(slab[:rows], h[:rows, :, lo:hi], out=slab[:rows], casting="unsafe")
        return ScoreTally.frozen(slab, sums, top, positive, span=span, offset=lo)

    def read_key(self, now: float | None) -> Any:
        """What besides the samples ingested decides ``snapshot(now, ...)``: nothing here (a timed window: the
        bucket of ``now``, past which buckets expire)."""
        return None

    def state(self) -> dict[str, Any]:
        """The window's whole tally (following a timed window, its open bucket's histogram included)."""
        if self._bucket is None:
            return {"tally": self.counts.state()}
        whole = ScoreCounts(self.rows, self.counts.columns)
        whole.hist += self.counts.hist
        whole.hist[: len(self._bucket.hist)] += self._bucket.hist
        whole.sums, whole.top = self.counts.sums, self.counts.top
        return {"tally": whole.state()}

    def restore(self, state: dict[str, Any]) -> None:
        """Load ``state()`` (not following a window yet: ``follow(..., holding=True)`` comes after)."""
        self.counts.restore(state["tally"])
