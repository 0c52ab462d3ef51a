"""A monitor's score side: the score layout fixed by its first score, and one score window per window.

The layout is decided when the first score arrives, and every later score must fit it:

- a binary monitor (2 classes) keeps C = 1 column, the score of its positive class. That class must be known
  then — ``positive=`` given, or the reference (given, or learned once the warm-up ends): before that the
  positive class is the warm-up minority so far and could change, so a first score is refused with a
  ``ValueError`` naming the fix (``positive=`` or ``reference=``);
- a monitor of K > 2 classes keeps C = K columns in the order of its classes, which must have been given up
  front (``reference=``, ``classes=``, ``positive=``, ``baseline=``): a class learned from the data could take
  any place, so (n, K) scores are refused while fewer than 3 classes were declared, or when K differs from
  their number. In an open monitor a stray label met later is a class of its own (a row of the tallies) but
  has no score column.

Samples without a score count in the confusion windows and not in the score tallies (``ScoreTally.n_scored``).

The score side also keeps the last ``EXACT_RANKING_LIMIT`` scored samples exact (``streammon.counting.exact_scores``):
a window holding at most that many scored samples gets them with its tally (``ScoreTally.samples``), and its ROC
AUC and average precision are read from them instead of its bins.

>>> s = Scoring.of_first(declared=2, labels=2, positive=1, ndim=1, columns=None)
>>> s.columns, s.positive
(1, 1)
>>> Scoring.of_first(declared=0, labels=3, positive=None, ndim=2, columns=3)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: (n, 3) scores need the classes given up front, in the order of the columns: ...; it declared 0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.census_file import check_binned, check_sample
from streammon.counting.exact_scores import ScoreRing
from streammon.counting.score_census import ValueCensus
from streammon.counting.score_records import ScoreRecords
from streammon.counting.score_tally import ScoreCounts, ScoreTally
from streammon.counting.windows import Cumulative, Sliding, Timed, Window
from streammon.counting.windows.scored import ScoreWindow
from streammon.counting.windows.scored_batch import ScoredBatch
from streammon.counting.windows.scored_sliding import SlidingScores
from streammon.counting.windows.scored_timed import TimedScores
from streammon.metrics.bin_span import empty_span, occupied, union, widen
from streammon.metrics.bin_values import BinValues
from streammon.metrics.exact_ranking import EXACT_RANKING_LIMIT
from streammon.metrics.score_bins import BINS

MAX_SCORE_CLASSES = 64  # K × K × 2,048 bins × 8 B: 64 MiB a window at K = 64


class Scoring:
    """The score layout (``columns``, ``positive``), the records ``update`` buffers scored samples as
    (``streammon.counting.score_records``) and the score windows, allocated by ``attach``."""

    def __init__(self, columns: int, positive: int, *, exact: bool = True, limit: int = EXACT_RANKING_LIMIT,
                 distinct: bool = True) -> None:
        """``exact``: keep the last scored samples exact for the windows that hold few (``ScoreRing``; on the
        prediction side, ``streammon.pending.scores``, its rows are the predicted classes). ``distinct``: give the
        windows that read their bins the bins holding distinct scores, as the exact samples show them
        (``ScoreTally.distinct``: average precision's reading; the prediction side, which reads none, does not)."""
        self.columns = columns
        self.positive = positive
        self.records = ScoreRecords(columns)
        self.windows: list[ScoreWindow] = []
        # ``limit``: the samples it keeps, with their bins (which bins hold distinct scores: ``ScoreTally.distinct``)
        self.ring = ScoreRing(columns, limit, bins=distinct) if exact else None
        # every distinct value a few-valued model's column takes, per class: what a window that holds every sample
        # (a cumulative one) splits its bins by (``streammon.counting.score_census``; the labelled side only)
        self.census = ValueCensus(columns) if exact and distinct else None
        self._views: dict[int, tuple[Any, ScoreTally]] = {}  # window position -> (read key, its last snapshot)
        # the bins of every scored sample taken, per column: where any window's counts can be non-zero (what a
        # snapshot copies and the metrics read: ``metrics.bin_span``), shared by the windows and widened in place
        self.span = empty_span(columns)

    @classmethod
    def of_first(cls, *, declared: int, labels: int, positive: int | None, ndim: int,
                 columns: int | None) -> Scoring:
        """The layout of a monitor whose first score arrives: ``declared`` classes given up front, ``labels``
        known now, its binary ``positive`` class index if known; the score's ``ndim`` and ``columns``."""
        if labels <= 2 and (ndim == 1 or columns == 2):
            if positive is None:
                raise ValueError("a binary score is the probability of the positive class, which is not known yet "
                                 "(the reference is still being learned from the warm-up): pass positive= or "
                                 "reference= to Monitor")
            return cls(1, positive)
        if ndim == 1:
            raise ValueError(f"a 1-D y_score is a binary model's positive-class score; this monitor has {labels} "
                             "classes: pass (n, K) class probabilities in the order of Monitor.labels")
        if declared < 3:
            raise ValueError(f"({'n'}, {columns}) scores need the classes given up front, in the order of the "
                             "columns: pass reference= or classes= (with closed=True to refuse any other class) "
                             f"to Monitor; it declared {declared}")
        if columns != declared:
            raise ValueError(f"(n, {columns}) scores for a monitor of {declared} classes: pass one column per class, "
                             "in the order of Monitor.labels")
        if declared > MAX_SCORE_CLASSES:
            raise ValueError(f"scores of {declared} classes are over the limit of {MAX_SCORE_CLASSES} "
                             "(streammon.counting.scoring.MAX_SCORE_CLASSES): the per-window histograms would take "
                             f"{declared * declared * 2048 * 8 / 2**20:.0f} MiB each")
        return cls(declared, -1)

    def attach(self, windows: Sequence[Window], rows: int, *, link: bool = True) -> None:
        """One score window per window, ``rows`` true classes wide (``link``: cumulative windows follow a timed
        one, ``_link``)."""
        self.windows = [score_window(w, rows=rows, columns=self.columns, positive=max(self.positive, 0))
                        for w in windows]
        for w in self.windows:
            w.span = self.span
        self._views.clear()
        if link:
            self._link()

    def _link(self, *, holding: bool = False) -> None:
        """Cumulative score windows take their histograms through the first window sliding by time, if any
        (``ScoreWindow.follow``): one histogram increment a score instead of two. ``holding``: their restored
        tallies hold the timed window's open bucket already."""
        timed = next((w for w in self.windows if isinstance(w, TimedScores)), None)
        if timed is None:
            return
        for w in self.windows:
            if type(w) is ScoreWindow:
                w.follow(timed.open_bucket, holding=holding)
                timed.lead(w.counts)

    def grow(self, rows: int) -> None:
        for w in self.windows:
            w.grow(rows)

    def ingest(self, true: npt.NDArray[np.intp], scores: npt.NDArray[np.float64] | None,
               times: npt.NDArray[np.float64] | float | None, *, rows: int | None = None) -> None:
        """Feed a batch (``scores`` None: none of its samples carried one; ``rows``: the classes known, more than
        any index in ``true``, if the caller knows it)."""
        targets: list[ScoreCounts] = []
        first = 0 if self.ring is None else self.ring.total
        if scores is None:
            scores = np.full((len(true), self.columns), np.nan)
        else:  # the windows that take the whole batch get its bins in the pass that makes them
            targets = [t for t in (w.whole_target(times, len(true)) for w in self.windows) if t is not None]
        batch = ScoredBatch(true, scores, times, positive=max(self.positive, 0), targets=targets, rows=rows,
                            first=first)
        if self.ring is not None and batch.scored:
            unscored = np.isnan(scores[:, 0])
            kept = ~unscored if unscored.any() else None
            if kept is not None:
                self.ring.append(true[kept], scores[kept], None if batch.bins is None else batch.bins[kept])
            else:
                self.ring.append(true, scores, batch.bins)
            self._count_values(batch, kept)
        if batch.scored:  # every scored sample's bins, before a read can copy them (none made: every bin)
            if batch.bins is None:
                self.span[:, 0], self.span[:, 1] = 0, BINS
            else:
                widen(self.span, batch.bins, batch.scores)
        for w in self.windows:
            w.ingest(batch)
        if self.census is not None:
            self.census.forget_batch()

    def _count_values(self, batch: ScoredBatch, kept: npt.NDArray[np.bool_] | None) -> None:
        """The batch's scored samples (``kept``; None: all) into the census, and the census onto the batch while
        it counts (for the windows sliding by time: ``streammon.counting.windows.timed_values``)."""
        if self.census is None:
            return
        if kept is None:
            self.census.add(batch.true, batch.scores)
        else:
            self.census.add(batch.true[kept], batch.scores[kept])
        batch.counted_by(self.census, kept)

    def view(self, now: float | None, k: int, stamp: int | None = None) -> tuple[ScoreTally, ...]:
        """Each window's tally as of ``now`` (its first ``k`` classes). ``stamp`` (the count of samples ingested,
        say) changes whenever a batch came: a window read again at the same stamp, ``k`` and — timed — bucket of
        ``now`` holds the same samples, so it returns the same read-only snapshot instead of copying its
        histogram again (K × C × 2,048 counts: 1.6 MB at K = 10)."""
        positive = None if self.positive < 0 else self.positive
        out = []
        fresh: dict[int, Any] = {}  # window position -> its read key (None: not kept)
        for i, w in enumerate(self.windows):
            key = None if stamp is None else (stamp, k, w.read_key(now))
            last = self._views.get(i)
            if key is not None and last is not None and last[0] == key:
                out.append(last[1])
                continue
            out.append(w.snapshot(now, k, positive))
            fresh[i] = key
        if self.ring is not None and fresh:
            self._attach_samples(out, list(fresh), k)
            for i in fresh:  # what a window that reads its bins finds in them (``ScoreTally.values``, ``distinct``)
                if out[i].samples is None and out[i].n_scored > 0:
                    values = self._bin_values(self.windows[i], out[i].n_scored, k)
                    if values is not None:
                        out[i] = out[i].with_values(values)
        for i, key in fresh.items():
            if key is not None:
                self._views[i] = (key, out[i])
        return tuple(out)

    def _bin_values(self, window: ScoreWindow, n_scored: int, k: int) -> BinValues | None:
        """What ``window``'s bins (of ``n_scored`` samples) hold, split where they hold repeated values
        (``streammon.metrics.bin_values``): a window that holds every sample the census counted — a cumulative
        one, or any other before a sample left it — by the census while it is complete (exact); else a window
        sliding by count by its own samples, one sliding by time by the census's counts less those before its
        oldest bucket (``timed_values``; both exact); else by the ring's last samples (``ScoreRing.values``: a
        sample of the window's; made once per ring total, and only where a census that counts every column does
        not stand in for it — its flags and splits for the closed columns)."""
        census = self.census
        shown = None if census is not None and census.every_column else self._shown(k)
        if census is not None and n_scored == census.total:  # its samples are the census's
            counted = census.values(k, shown)
            if counted is not None:
                return counted
        if isinstance(window, SlidingScores):  # (``shown`` None: the census counts every column)
            return window.exact_values(k, shown, census)
        if isinstance(window, TimedScores) and census is not None \
                and n_scored <= census.total - window.broken_at:  # its samples a suffix of the census's
            counts = window.values.counts(census.counts)  # the census's less the census's as it began
            if counts is not None and (counts.sum(axis=(1, 2)) == n_scored)[census.open_columns].all():
                counted = census.values_counted(counts, k, shown)
                if counted is not None:
                    return counted
        return self._shown(k) if shown is None else shown

    def _shown(self, k: int) -> BinValues | None:
        """What the ring's last samples show in the bins (``ScoreRing.values``, cached per ring total)."""
        return None if self.ring is None else self.ring.values(k)

    def _attach_samples(self, tallies: list[ScoreTally], positions: list[int], k: int) -> None:
        """Give each tally at ``positions`` whose window holds at most what the ring holds its exact samples: the
        ring's last ``n_scored`` (a suffix: ``streammon.counting.exact_scores``), one copy shared by every window.
        A window whose samples do not recount its class counts (never, by the suffix argument; a safety net)
        keeps its bins."""
        assert self.ring is not None
        ring = self.ring
        wanted = {i: tallies[i].n_scored for i in positions}
        wanted = {i: n for i, n in wanted.items()
                  if 0 < n <= ring.held and n <= ring.total - self.windows[i].broken_at}
        if not wanted:
            return
        most = max(wanted.values())
        true, scores = ring.last(most)
        for i, n in wanted.items():
            mine = true[most - n:], scores[most - n:]
            if np.array_equal(np.bincount(mine[0], minlength=k)[:k], tallies[i].class_counts) and mine[0].max() < k:
                tallies[i] = tallies[i].with_samples(mine)

    def state(self) -> dict[str, Any]:
        """Plain data: the layout, each window's tally and — keeping them — the exact scores (``exact``)."""
        out = {"columns": self.columns, "positive": self.positive, "windows": [w.state() for w in self.windows]}
        if self.ring is not None:
            out["exact"] = self.ring.state()
        if self.census is not None:
            out["census"] = self.census.state()
        return out

    @classmethod
    def restored(cls, state: Any, windows: Sequence[Window], rows: int, labels: int, *,
                 exact: bool = True, limit: int = EXACT_RANKING_LIMIT, distinct: bool = True) -> Scoring:
        """``state()`` loaded for these windows (``ValueError`` naming what does not fit). ``exact`` (optional:
        absent from files written before it) is loaded where this side keeps exact scores; without it the ring
        starts empty and every window reads its bins until it holds only samples that came since."""
        if not isinstance(state, dict) or not {"columns", "positive", "windows"} <= set(state) \
                or not set(state) <= {"columns", "positive", "windows", "exact", "census"}:
            raise ValueError("saved scores must hold columns, positive and windows (and exact and census, "
                             "optionally)")
        columns, positive = state["columns"], state["positive"]
        if type(columns) is not int or not (columns == 1 or 3 <= columns <= min(labels, MAX_SCORE_CLASSES)):
            raise ValueError(f"saved score columns {columns!r} do not fit {labels} classes")
        if type(positive) is not int or not (positive in (0, 1) if columns == 1 else positive == -1):
            raise ValueError(f"saved score positive class {positive!r} does not fit {columns} columns")
        if not isinstance(state["windows"], list) or len(state["windows"]) != len(windows):
            raise ValueError(f"saved scores must hold one entry per window ({len(windows)})")
        scoring = cls(columns, positive, exact=exact, limit=limit, distinct=distinct)
        scoring.attach(windows, rows, link=False)
        if scoring.ring is not None and "exact" in state:
            scoring.ring.restore(state["exact"], rows)
        total = 0 if scoring.ring is None else scoring.ring.total
        for w, item in zip(scoring.windows, state["windows"], strict=True):
            w.restore(item)
            if scoring.ring is None or "exact" not in state:
                # no exact scores kept, or none saved (a file written before the prediction side kept them, whose
                # marks numbered no ring): the mark means nothing against this ring, which starts empty
                w.broken_at = 0
            elif w.broken_at > total:
                raise ValueError(f"a saved timed score window's out-of-order mark {w.broken_at} is past the "
                                 f"{total} exact samples counted")
        scoring._link(holding=True)
        scoring.span[:, 0], scoring.span[:, 1] = 0, BINS  # every bin copied while the restored counts are read
        found = empty_span(columns)
        for w in scoring.windows:  # where the restored counts are (each later sample widens it as it comes)
            found = union(found, occupied(w.snapshot(None, rows, None).hist))
        scoring.span[:] = found
        scoring._check_ring(rows)
        if "census" in state and (state["census"] is None or scoring.census is None):
            raise ValueError("saved scores hold a census where none is kept (or null): only a save's own")
        scoring._restore_census(state.get("census"), rows)
        return scoring

    def _restore_census(self, state: Any, rows: int) -> None:
        """Load the census saved (None: a file written before it was kept — every window reads the ring's values,
        as before) and check it against the histogram of every window that will read it, those that hold as many
        samples as it counted (``ValueError``)."""
        if self.census is None:
            return
        if state is None:
            self.census.complete = False
            return
        self.census.restore(state, rows)
        if not self.census.complete:
            return
        if self.ring is not None:  # the ring's samples are the last the census counted
            check_sample(self.census, *self.ring.last(min(self.ring.held, self.census.total)))
        for w in self.windows:
            tally = w.snapshot(None, rows, None)
            if tally.n_scored > self.census.total or (type(w) is ScoreWindow and tally.n_scored < self.census.total):
                raise ValueError(f"a saved score census of {self.census.total} samples does not fit a window of "
                                 f"{tally.n_scored}")
            if tally.n_scored == self.census.total:
                check_binned(self.census, tally.hist)

    def _check_ring(self, rows: int) -> None:
        """``ValueError`` unless every window that will read the restored ring's exact samples holds exactly
        them: their histogram is the window's (a ring that does not belong to the saved tallies is refused)."""
        if self.ring is None:
            return
        ring = self.ring
        for w in self.windows:
            tally = w.snapshot(None, rows, None if self.positive < 0 else self.positive)
            n = tally.n_scored
            if 0 < n <= ring.held and n <= ring.total - w.broken_at:
                true, scores = ring.last(n)
                recount = ScoreTally.of(true, scores, rows, positive=max(self.positive, 0))
                if not np.array_equal(recount.hist, tally.hist):
                    raise ValueError(f"saved exact scores are not the last {n} scored samples of a window that "
                                     "holds that many (its histogram differs)")


def score_window(window: Window, *, rows: int, columns: int, positive: int) -> ScoreWindow:
    """The score window that follows ``window``."""
    if isinstance(window, Sliding):
        return SlidingScores(window.size, rows, columns, positive)
    if isinstance(window, Timed):
        return TimedScores(window, rows, columns, positive)
    if isinstance(window, Cumulative):
        return ScoreWindow(rows, columns, positive)
    raise TypeError(f"no score window for {type(window).__name__}")
