"""The prediction half of ``streammon.labelling``: a prediction recorded under its key now, its label joined later.

``predict`` (lock-free on its hot path: a queue moved into the store under the lock before anything reads it) and
``predict_many`` record predictions in the pending store (``streammon.pending``) and buffer them for the
prediction-side windows; the journal, when there is one, commits each call first. ``Labelling`` builds on it with
the labels, the buffers' flush, expiry and the saved state (the edges are told in ``streammon.labelling``).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable
from typing import Any

import numpy as np

from streammon.counting.labels import as_label_array, code_labels
from streammon.counting.score_input import as_float_array
from streammon.counting.timing import MAX_TIME, as_times, check_time, check_times, clock_time
from streammon.intake import FLUSH_EVERY, Intake
from streammon.pending import Journal, PendingRecords, check_key, check_keys
from streammon.pending.keys import KEY_INT_BOUND, MAX_KEY_LENGTH
from streammon.pending.scores import PredictionScores
from streammon.pending.sides import LabelSide
from streammon.pending.sqlite import PREDICT
from streammon.tally import Tally


class Predictions(Intake):
    """The write side of a monitor, plus predictions recorded under their keys (see the module docstring)."""

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
        try:
            encoded = code_labels(preds, preds[:0], index)  # outside the lock: validates, changes nothing
        except ValueError:  # (or a thread registering these very labels meanwhile: told again under the lock)
            encoded = None
        with self._lock:
            self._drain()
            if encoded is None or len(index) != known:
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


def _plain(labels: np.ndarray, index: Any, idx: list[int] | None, new: list[Any]) -> list[Any]:
    """Labels as plain Python values for the journal (the canonical class when known)."""
    if idx is not None and not new:
        known = index.labels
        return [known[i] for i in idx]
    return [v.item() if isinstance(v, np.generic) else v for v in labels.tolist()]
