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
from collections.abc import Callable
from typing import Any

import numpy as np

from streammon.counting.batch import Batch
from streammon.counting.labels import as_label_array, code_labels
from streammon.counting.score_input import as_float_array
from streammon.counting.timing import MAX_TIME, as_times, check_time, check_times, clock_time
from streammon.findings.label_stats import DUPLICATE_BUCKET, ORPHAN_BUCKET
from streammon.findings.label_view import LabelView
from streammon.intake import FLUSH_EVERY, Intake
from streammon.pending import Journal, PendingRecords, check_key, check_keys
from streammon.pending.keys import KEY_INT_BOUND, MAX_KEY_LENGTH
from streammon.pending.memory import ORPHAN
from streammon.pending.scores import PredictionScores
from streammon.pending.sides import LABELLED, LabelSide, latency_bucket, latency_bucket_of
from streammon.pending.sqlite import LABEL, PREDICT, SAMPLES
from streammon.tally import Tally


class Labelling(Intake):
    """The write side of a monitor, plus predictions whose labels come later (see the module docstring)."""

    def __init__(self, tally: Tally, clock: Callable[[], float], records: PendingRecords,
                 journal: Journal | None) -> None:
        super().__init__(tally, clock)
        self._records = records
        self._use_journal(journal)
        self._side_windows: LabelSide | None = None  # made by the first predict or label (see _side)
        self._pred_t = -math.inf  # the latest prediction time (never decreases)
        self._repeated = 0
        self._p_codes: list[int] = []  # accepted predictions not yet in the prediction-side windows
        self._p_times = array("d")
        self._moves: list[tuple[int, int, float]] = []  # joined (seq, class, predicted at): cells move to "labelled"
        self._events: list[int] = []  # label events since the last flush (stamped like the buffered cells)
        self._queued: list[tuple[str | int, int, float]] = []  # lock-free predictions, not yet in the store
        self._pred_scores = PredictionScores()  # the scores of predictions (streammon.pending.scores)

    def _now(self, last: float) -> float:
        """The clock's time, no earlier than ``last`` (a plain float in range takes no conversion)."""
        now = self._clock()
        if type(now) is float and last <= now <= MAX_TIME and now >= -MAX_TIME:
            return now
        return clock_time(now, last)

    # -- predictions --------------------------------------------------------------------------

    def predict(self, key: str | int, y_pred: Any, t: Any = None, *, y_score: Any = None) -> None:
        """Record one prediction whose label will come later (``key``: a str or int id; ``t``: seconds;
        ``y_score``: the model's score, as ``update`` takes it — kept with the prediction and counted with it when
        its label joins it, and at once in the prediction side's score tallies).

        The hot path (a plain key, a known class, no ``t``, the in-memory store) takes no lock: a
        dict lookup, a clock read and one ``list.append`` of ``(key, class, time)``, as ``update``
        buffers samples. The queue is moved into the store, in order, under the lock before
        anything else reads or changes the store (``_drain``); a clock time behind an earlier
        queued one is clamped to it there, as ``clock_time`` clamps a clock that stepped back.
        """
        kind = type(key)
        plain = (0 < len(key) <= MAX_KEY_LENGTH if kind is str  # type: ignore[arg-type]
                 else kind is int and -KEY_INT_BOUND <= key < KEY_INT_BOUND)  # type: ignore[operator]
        if t is None and plain and self._journal is None and y_score is None:
            try:
                code = self._ids[y_pred]
                now = self._clock()
                fast = type(now) is float and self._pred_t <= now <= MAX_TIME and now >= -MAX_TIME
            except (KeyError, TypeError):  # a new or invalid label, or a broken clock: the slow path says which
                fast = False
            if fast:
                queued = self._queued
                queued.append((key, code, now))
                if len(queued) >= FLUSH_EVERY:
                    self.flush()
                return
        self._predict_checked(key if plain else check_key(key), y_pred, t, y_score)

    def _predict_checked(self, key: str | int, y_pred: Any, t: Any, y_score: Any = None) -> None:
        """``predict`` with every check, under the lock (after the queued predictions)."""
        with self._lock:
            if self._queued:
                self._drain()
            scoring = row = None
            if y_score is not None:
                scoring, row = self._score_of_one(y_score)  # validates, or raises: nothing changed
            ids = self._ids
            try:
                code = ids[y_pred]
            except (KeyError, TypeError):
                code = -1
            now = self._now(self._pred_t) if t is None else check_time(t, self._pred_t)
            if code < 0:
                new = self._tally.index.new_labels((y_pred,))  # validates, or raises: nothing changed
                if self._journal is not None:
                    self._journal.append(PREDICT, [key], new, [now], scores=None if row is None else np.array([row]))
                self._tally.register(new)
                code = ids[y_pred]
            elif self._journal is not None:
                self._journal.append(PREDICT, [key], [self._tally.index.labels[code]], [now],
                                     scores=None if row is None else np.array([row]))
            self._pred_t = now
            if scoring is not None:
                self._tally.start_scoring(scoring)
            seq = self._records.put(key, code, now)
            if seq < 0:
                self._repeated += 1
                return
            self._p_codes.append(code)
            self._p_times.append(now)
            if row is not None:
                self._records.attach_score(seq, row[0] if len(row) == 1 else row)
                self._pred_scores.buffered.append((len(self._p_codes) - 1, row))
            if len(self._p_codes) >= FLUSH_EVERY:
                self._flush()

    def _use_journal(self, journal: Journal | None) -> None:
        """Attach (or detach, None) the durable journal. With one, ``update`` takes the journalled path below (the
        lock-free one is the class's ``update``, which this instance attribute shadows: no test on the hot path).

        A monitor without a journal never gets the instance attribute, nor has its ``__dict__`` touched: CPython
        keeps such an instance's attributes inline, which the lock-free ``predict`` and ``update`` paths read
        (asking for ``__dict__`` made every attribute read of the monitor ~20 % slower)."""
        self._journal = journal
        if journal is not None:
            self.update = self._update_durably  # type: ignore[method-assign]
        elif getattr(self, "_durable_update", False):
            del self.update
        self._durable_update = journal is not None

    def _update_durably(self, y_true: Any, y_pred: Any, t: Any = None, *, y_score: Any = None) -> None:
        """``update`` with a journal: the sample is committed first, as a batch of one (a commit per call)."""
        self.update_many([y_true], [y_pred], t=None if t is None else [t],
                         y_score=None if y_score is None else [y_score])

    def predict_many(self, keys: Any, y_pred: Any, t: Any = None, *, y_score: Any = None,
                     batch_id: str | None = None) -> None:
        """Record a batch of predictions: keys and predicted labels of equal length; ``t`` and ``y_score`` as in
        ``update_many`` (each score kept with its prediction until its label joins it).

        Validated in full before anything is recorded (store included); keys already pending are repeats.
        ``batch_id`` as in ``update_many``: a batch the journal remembers is not recorded again.
        """
        batch_id = self._check_batch_id(batch_id)
        keys = check_keys(keys)
        preds = as_label_array(y_pred, "y_pred")
        if len(keys) != len(preds):
            raise ValueError(f"keys and y_pred must have the same length, got {len(keys)} and {len(preds)}")
        times = None if t is None or np.ndim(t) == 0 else as_times(t, len(keys))
        given = None
        if y_score is not None:
            given = as_float_array(y_score)
            if given.ndim not in (1, 2) or len(given) != len(keys):
                raise ValueError(f"y_score must be 1-D or 2-D with one score (row) per prediction: {len(keys)} "
                                 f"predictions, got shape {given.shape}")
        if not keys:
            return
        index = self._tally.index
        known = len(index)
        encoded = code_labels(preds, preds[:0], index)
        with self._lock:
            self._drain()
            if len(index) != known:
                encoded = code_labels(preds, preds[:0], index)
            if times is None:
                stamp = clock_time(self._clock(), self._pred_t) if t is None else check_time(t, self._pred_t)
                stamps: list[float] = [stamp] * len(keys)
            else:
                check_times(times, self._pred_t)
                stamps = times.tolist()
            scoring, scores = None, None
            if given is not None:  # checked in full before anything changes
                scoring, scores = self._tally.batch_scores(y_score, given, len(keys))
            codes, _, lut, new = encoded
            idx = (codes if lut is None else lut[codes]).tolist()
            if self._journal is not None:
                if batch_id is not None and self._journal.accepted(batch_id) is not None:
                    return  # a retried batch: recorded once already
                self._journal.append(PREDICT, keys, _plain(preds, index, idx, new), stamps, batch_id, scores=scores)
            self._tally.register(new)
            if scoring is not None:
                self._tally.start_scoring(scoring)
            self._accept(keys, idx, stamps, scores)

    def _drain(self) -> None:
        """Move the lock-free predictions into the store and the prediction buffer, in order (caller holds the lock).

        ``predict`` calls of other threads may append meanwhile: exactly the ones read here are removed.
        """
        queued = self._queued
        n = len(queued)
        if not n:
            return
        items = queued[:n]
        del queued[:n]
        repeated, self._pred_t = self._records.put_queued(items, self._pred_t, self._p_codes, self._p_times)
        self._repeated += repeated

    def _accept(self, keys: list[Any], codes: list[int], stamps: list[float],
                scores: np.ndarray | None = None) -> None:
        """Put validated predictions (and their checked scores) in the store and the prediction buffer (caller holds
        the lock)."""
        if scores is None:
            self._repeated += self._records.put_many(keys, codes, stamps, self._p_codes, self._p_times)
        else:
            rows = scores[:, 0].tolist() if scores.shape[1] == 1 else [tuple(r) for r in scores.tolist()]
            start = len(self._p_codes)
            repeated, accepted = self._records.put_scored(keys, codes, stamps, rows, out_codes=self._p_codes,
                                                          out_times=self._p_times)
            self._repeated += repeated
            self._pred_scores.buffered += [(start + rank, scores[i]) for rank, i in enumerate(accepted)]
        self._pred_t = stamps[-1]
        if len(self._p_codes) >= FLUSH_EVERY:
            self._flush()

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


def _plain(labels: np.ndarray, index: Any, idx: list[int] | None, new: list[Any]) -> list[Any]:
    """Labels as plain Python values for the journal (the canonical class when known)."""
    if idx is not None and not new:
        known = index.labels
        return [known[i] for i in idx]
    return [v.item() if isinstance(v, np.generic) else v for v in labels.tolist()]
