"""Predictions now, labels later: ``predict``/``label`` and their batch forms, joined on a key.

A prediction is recorded under its key (``streammon.pending``) and counted at once in the
prediction-side windows (by prediction time). Its label, whenever it comes, is joined with it
and counted in the labelled windows exactly as ``update(y_true, y_pred)`` would count it, at
the label's time (so labelled windows stay exact and times monotone, shared with ``update``).

The edges, decided once:

- a label for a key never predicted, or whose prediction already expired or was evicted, is an
  *orphan*; a second label for a joined key is a *duplicate* (while the joined key is still
  remembered: its record's lifetime, see below; after that, an orphan). Neither is counted in
  the labelled windows and neither raises: the rest of the batch goes on.
- a key predicted again while its prediction is pending is *repeated*: the first prediction
  stands, the repeat is counted (``repeated``) and otherwise ignored. Once joined or expired, the
  key can be predicted afresh.
- a prediction leaves unlabelled when ``max_pending`` newer predictions were accepted after it, or
  the store would account for more than ``max_pending_bytes`` (*evicted*), or when any time more than
  ``label_ttl`` seconds after it is seen — a label's or an ``update``'s, another prediction's, or the
  clock at a read of a clock-driven monitor (*expired*): it is counted, per predicted class, as never
  labelled, and a report never shows a prediction older than ``label_ttl`` as pending. A label later
  than ``label_ttl`` (by its own time, or after a later prediction expired its key) is an orphan.
- keys are str or int (``streammon.pending.keys``); ``1`` and ``"1"`` are different keys.
- prediction times never decrease (among predictions); label times share the time of ``update``.

>>> from streammon import Monitor, Cumulative
>>> m = Monitor([Cumulative()], reference={"legit": 9, "fraud": 1})
>>> m.predict_many(["t1", "t2", "t3"], ["fraud", "legit", "legit"], t=0.0)
>>> m.label_many(["t1", "t9", "t1"], ["fraud", "legit", "fraud"], t=5.0)
>>> s = m.report().windows["cumulative"].label_stats
>>> s.predictions, s.labelled, s.pending, s.orphans, s.duplicates, round(s.coverage, 3)
(3, 1, 2, 1, 1, 0.333)
"""

from __future__ import annotations

import math
from array import array
from typing import Any

import numpy as np

from streammon.counting.batch import Batch
from streammon.counting.labels import as_label_array, code_labels
from streammon.counting.timing import as_times, check_time, check_times
from streammon.findings.label_stats import DUPLICATE_BUCKET, ORPHAN_BUCKET
from streammon.findings.label_view import LabelView
from streammon.intake import FLUSH_EVERY
from streammon.labelling.predictions import Predictions, _plain
from streammon.pending import Journal, check_key, check_keys
from streammon.pending.keys import KEY_INT_BOUND, MAX_KEY_LENGTH
from streammon.pending.memory import ORPHAN
from streammon.pending.sides import LABELLED, LabelSide, latency_bucket, latency_bucket_of
from streammon.pending.sqlite import LABEL, PREDICT, SAMPLES


class Labelling(Predictions):
    """The write side of a monitor, plus predictions whose labels come later (see the module docstring)."""

    # -- labels ---------------------------------------------------------------------------------

    def label(self, key: str | int, y_true: Any, t: Any = None) -> None:
        """The label of an earlier prediction: joined and counted as ``update(y_true, y_pred)`` at time ``t``."""
        kind = type(key)
        if not (0 < len(key) <= MAX_KEY_LENGTH if kind is str  # type: ignore[arg-type]
                else kind is int and -KEY_INT_BOUND <= key < KEY_INT_BOUND):  # type: ignore[operator]
            key = check_key(key)
        with self._lock:
            if self._queued:
                self._drain()
            last = self._last_t
            if self._fast_t > last:
                self._catch_up()
                last = self._last_t
            now = self._now(last) if t is None else check_time(t, last)
            ids = self._ids
            try:
                true = ids[y_true]
                new: list[Any] = []
            except (KeyError, TypeError):
                new = self._tally.index.new_labels((y_true,))  # validates, or raises: nothing changed
                true = -1
            if self._journal is not None:
                self._journal.append(LABEL, [key], new or [self._tally.index.labels[true]], [now])
            if t is None:
                self._clock_driven = True
            if not now < self._open_until:
                self._flush()  # the buffered samples and events keep the bucket they share
                self._open_until = self._bucket_end(now)
            self._last_t = now
            found = self._records.take(key, now)
            if isinstance(found, str):
                self._events.append(ORPHAN_BUCKET if found == ORPHAN else DUPLICATE_BUCKET)
            else:
                code = found[1]
                if true < 0:
                    self._tally.register(new)
                    true = ids[y_true]
                score = self._records.pop_score(found[0]) if self._records.scores else None
                cell = true * self._stride + code
                self._cells.append(cell if score is None else self._record(cell, score))
                self._events.append(latency_bucket_of(now - found[2]))
                self._moves.append(found)
            if len(self._events) >= FLUSH_EVERY or len(self._cells) >= FLUSH_EVERY:
                self._flush()

    def label_many(self, keys: Any, y_true: Any, t: Any = None, *, batch_id: str | None = None) -> None:
        """Labels of earlier predictions, in arrival order: each joined as ``label`` would join it.

        Validated in full before anything is joined (store included); orphans and duplicates are
        counted and the rest of the batch goes on. ``batch_id`` as in ``update_many``.
        """
        batch_id = self._check_batch_id(batch_id)
        keys = check_keys(keys)
        truth = as_label_array(y_true, "y_true")
        if len(keys) != len(truth):
            raise ValueError(f"keys and y_true must have the same length, got {len(keys)} and {len(truth)}")
        times = None if t is None or np.ndim(t) == 0 else as_times(t, len(keys))
        if not keys:
            return
        index = self._tally.index
        code_labels(truth, truth[:0], index)  # validates every label (and the class cap): changes nothing
        with self._lock:
            self._drain()
            self._catch_up()
            if times is None:
                stamp = self._clock_time() if t is None else check_time(t, self._last_t)
                stamps: list[float] = [stamp] * len(keys)
            else:
                check_times(times, self._last_t)
                stamps = times.tolist()
            if self._journal is not None:
                if batch_id is not None and self._journal.accepted(batch_id) is not None:
                    return  # a retried batch: joined once already
                self._journal.append(LABEL, keys, _plain(truth, index, None, []), stamps, batch_id)
            self._join(keys, truth, stamps)
            if t is None:
                self._clock_driven = True

    def _join(self, keys: list[Any], truth: np.ndarray, stamps: list[float]) -> None:
        """Join validated labels with their predictions and count them (caller holds the lock)."""
        take = self._records.take
        at: list[int] = []
        codes: list[int] = []
        events: list[int] = []
        latencies: list[float] = []
        seqs: list[int] = []
        predicted_at: list[float] = []
        scored: list[tuple[int, Any]] = []  # (rank among the joined, score) of joined predictions given a score
        pop_score = self._records.pop_score if self._records.scores else None
        for i, (key, now) in enumerate(zip(keys, stamps, strict=True)):
            found = take(key, now)
            if isinstance(found, str):
                events.append(ORPHAN_BUCKET if found == ORPHAN else DUPLICATE_BUCKET)
            else:
                seq, code, predicted = found
                if pop_score is not None and (row := pop_score(seq)) is not None:
                    scored.append((len(at), row))
                at.append(i)
                seqs.append(seq)
                codes.append(code)
                predicted_at.append(predicted)
                events.append(-1)
                latencies.append(now - predicted)
        self._flush()
        self._side.move(seqs, codes, predicted_at, LABELLED)
        all_times = np.asarray(stamps, dtype=np.float64)
        self._last_t = stamps[-1]
        self._open_until = -math.inf
        bucket = np.asarray(events, dtype=np.intp)
        bucket[bucket < 0] = latency_bucket(latencies)
        self._side.add_events(bucket, all_times if self._timed else None)
        if at:
            where = np.asarray(at, dtype=np.intp)
            true_codes, _, lut, new = code_labels(truth[where], truth[:0], self._tally.index)
            self._tally.register(new)
            true_idx = true_codes if lut is None else lut[true_codes]
            pred_idx = np.asarray(codes, dtype=np.intp)
            scores = None
            if scored and self._tally.scoring is not None:
                scores = np.full((len(at), self._tally.scoring.columns), np.nan)
                for rank, row in scored:
                    scores[rank] = row
            self._tally.ingest(Batch(true_idx, pred_idx, all_times[where] if self._timed else None, self._stride,
                                     scores=scores), now=float(stamps[-1]))

    # -- buffers, expiry and reads ----------------------------------------------------------------------

    def _flush(self) -> None:
        """Move every buffer into its windows (caller holds the lock): samples, predictions, moves, events."""
        self._drain()
        super()._flush()
        gone = self._records.drain()
        if self._side_windows is None and not (self._p_codes or self._moves or self._events or gone.seqs):
            return  # no prediction or label yet: the prediction-side windows are not even allocated
        side = self._side
        side.fit(self._tally.capacity)
        if self._p_codes:
            side.add_predictions(self._p_codes, self._p_times)
            if self._tally.scoring is not None:  # from the monitor's first score on
                self._pred_scores.feed(self._tally.scoring, self._tally.windows, self._tally.capacity, self._p_codes,
                                       self._p_times)
            self._p_codes, self._p_times = [], array("d")
        if self._moves:
            moves = self._moves
            side.move([m[0] for m in moves], [m[1] for m in moves], [m[2] for m in moves], LABELLED)
            self._moves = []
        if gone.seqs:
            side.move(gone.seqs, gone.codes, gone.times, gone.status)
        if self._events:
            self._catch_up()
            side.add_events(self._events, self._last_t if self._timed else None)
            self._events = []

    def _expire(self, now: float | None) -> None:
        """Expire predictions older than ``label_ttl`` at the read time (caller holds the lock).

        The read time is the latest time seen: the label side's (the latest label or ``update`` time, or
        the clock of a clock-driven monitor) or the latest prediction's, whichever is later. Predictions
        expire at each other's times as they are accepted too, and no later label precedes the label
        side's time: so whether a label joins, and whether its prediction expired, never depends on when
        reports were made.
        """
        self._drain()
        latest = self._pred_t if now is None else max(now, self._pred_t)
        if latest > -math.inf:
            self._records.expire(latest)
        self._flush()

    @property
    def _side(self) -> LabelSide:
        """The prediction-side and label-event windows, allocated on first use: a monitor that never
        predicts or labels keeps no copy of its windows."""
        if self._side_windows is None:
            self._side_windows = LabelSide(self._tally.windows, self._tally.capacity)
        return self._side_windows

    def _label_view(self, now: float | None) -> LabelView | None:
        """A copy of the prediction-side and label-event counts (caller holds the lock, flushed)."""
        return None if self._side_windows is None else self._side_windows.view(now, self._pred_t, self._repeated)

    def _pending_state(self, mark: int) -> dict[str, Any]:
        """The pending store and the label-side counts as plain data (caller holds the lock, flushed)."""
        side = None if self._side_windows is None else self._side_windows.state()  # none allocated for a save
        return {"records": self._records.state(), "side": side, "mark": mark,
                "pred_t": None if self._pred_t == -math.inf else self._pred_t, "repeated": self._repeated,
                "max_pending": self._records.max_pending, "label_ttl": self._records.label_ttl,
                "max_pending_bytes": self._records.max_pending_bytes}

    def _restore_pending(self, saved: dict[str, Any]) -> None:
        """Load ``_pending_state`` (checked by ``streammon.pending.schema``)."""
        if saved["records"] is None:
            return
        self._records.restore(saved["records"])
        if saved["side"] is None:
            return
        self._side.restore(saved["side"])
        if self._side.fed != self._records.next_seq:
            raise ValueError(f"the prediction-side windows counted {self._side.fed} predictions, the store "
                             f"{self._records.next_seq}")
        self._pred_t = -math.inf if saved["pred_t"] is None else float(saved["pred_t"])
        self._repeated = saved["repeated"]

    def _prediction_scores_state(self) -> dict[str, Any] | None:
        """The pending predictions' scores and the prediction side's score tallies (caller holds the lock, flushed)."""
        return self._pred_scores.state(self._records)

    def _restore_prediction_scores(self, saved: Any) -> None:
        """Load ``_prediction_scores_state`` (``ValueError`` naming what does not fit)."""
        tally = self._tally
        self._pred_scores.restore(saved, self._records, tally.scoring, windows=tally.windows, capacity=tally.capacity,
                                  labels=len(tally.index))

    def _replay(self, journal: Journal, after: int) -> None:
        """Apply the journal's rows after ``after`` (validated again, not journalled again)."""
        rows = journal.replay_scored(after)  # holds the journal's lock while it runs: closed below if a row is refused
        self._use_journal(None)
        try:
            for kind, first, second, times, _, scores in rows:
                if kind == PREDICT:
                    self.predict_many(first, second, times, y_score=_as_given(scores))
                elif kind == LABEL:
                    self.label_many(first, second, times)
                elif kind == SAMPLES:
                    self.update_many(first.y_true, first.y_pred, first.t, y_score=_as_given(first.scores))
                    self._clock_driven = self._clock_driven or first.clocked
                else:
                    raise ValueError(f"pending store {journal.path} holds a row of unknown kind {kind!r}")
        except BaseException:
            rows.close()
            journal.close()
            raise
        finally:
            self._use_journal(journal)


def _as_given(scores: np.ndarray | None) -> np.ndarray | None:
    """Journalled (n, C) scores as ``y_score`` takes them again: 1-D for a binary monitor's single column."""
    return None if scores is None else scores[:, 0] if scores.shape[1] == 1 else scores
