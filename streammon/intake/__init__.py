"""The write side of a monitor: validation, the lock-free per-sample buffer, time, and batches.

``update`` appends one sample to a small buffer (no numpy on the per-sample path); the
buffer is flushed into the tally before any read and whenever it fills, so reads always see
every sample already given. ``update_many`` validates a whole batch, encodes its labels with
numpy and hands it to the tally (see ``streammon.tally``). A rejected sample or batch raises
``ValueError``/``TypeError`` and changes nothing. Times never decrease: each sample's time is checked against the last.

>>> from streammon.counting.counts import ClassIndex
>>> from streammon.counting.windows import Cumulative
>>> from streammon.detection.baseline import DetectorSettings
>>> from streammon.detection.watch import DegradationWatch
>>> intake = Intake(Tally([Cumulative()], ClassIndex(), DegradationWatch(DetectorSettings()),
...                       reference=None, positive=None, warmup=10),
...                 clock=lambda: 0.0)
>>> intake.update("a", "b")
>>> intake.update_many(["a", "b"], ["a", "b"])
>>> intake.samples, intake.tally.view(None).windows[0][2].tolist()
(3, [[1, 1], [0, 1]])
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from streammon.counting.batch import Batch
from streammon.counting.score_input import as_float_array, as_score_row, check_index_names
from streammon.counting.scoring import Scoring
from streammon.counting.timing import MAX_TIME, as_times, check_time, check_times, clock_time
from streammon.counting.windows import Timed
from streammon.intake.label_columns import _Encoder
from streammon.pending.sqlite import Journal
from streammon.tally import Tally

FLUSH_EVERY = 4096
MAX_BATCH_ID = 200  # characters of an idempotency key


class Intake:
    """Feeds a ``Tally`` from ``update``/``update_many`` calls of any number of threads."""

    def __init__(self, tally: Tally, clock: Callable[[], float]) -> None:
        self._tally = tally
        self._clock = clock
        self._stride = tally.stride
        self._timed = any(isinstance(w, Timed) for w in tally.windows)
        self._lock = threading.Lock()
        self._ids = tally.index.ids  # the live label -> index dict (ClassIndex only ever adds to it)
        self._cells: list[int | bytes] = []  # buffered samples: cell ids true * stride + pred; scored ones as records
        self._last_t = -math.inf  # the latest sample time: written under the lock only, never decreases
        self._fast_t = -math.inf  # the clock time the lock-free path read last (see _catch_up)
        self._open_until = -math.inf  # buffered samples share a bucket of every timed window until this time
        self._clock_driven = False
        self._journal: Journal | None = None  # with one, every accepted call is committed to it first
        # a scored sample's record if its score is proved valid, else None (score_records.ScoreRecords.lock_free)
        self._score_record: Callable[[int, Any], bytes | None] = self._first_score_record
        self._binary_pack: Callable[..., bytes] | None = None  # a binary layout's pack, once set

    @property
    def tally(self) -> Tally:
        """The counts fed so far (read them under ``flush``: the buffer may hold more)."""
        return self._tally

    @property
    def samples(self) -> int:
        """Samples counted so far (buffered ones included)."""
        return self._tally.ingested + len(self._cells)

    def flush(self) -> None:
        """Move buffered samples into the windows now (reads do this by themselves)."""
        with self._lock:
            self._flush()

    def _clock_time(self, now: Any = None) -> float:
        """The clock's time (or the ``now`` it returned), checked; a clock that stepped back is clamped."""
        return clock_time(self._clock() if now is None else now, self._last_t)

    def _resolve_time(self, t: Any) -> float:
        if t is None:
            return self._clock_time() if self._timed else self._last_t
        return check_time(t, self._last_t)

    # -- updates ------------------------------------------------------------------------------

    def update(self, y_true: Any, y_pred: Any, t: float | None = None, *, y_score: Any = None) -> None:
        """Count one labelled prediction (``t``: its time in seconds, optional; ``y_score``: the model's score,
        see ``streammon.counting.score_input`` and ``streammon.counting.scoring``).

        The hot path (known labels, no ``t``) takes no lock: two dict lookups, a
        clock read when a timed window needs it, and one ``list.append`` — atomic in
        CPython, with or without the GIL (Python FAQ, "What kinds of global value
        mutation are thread-safe?"). Buffered samples carry no time of their own: the
        buffer is flushed whenever a sample's time leaves the bucket it shares with
        them in every timed window (a sample racing that switch in another thread may
        be counted one bucket late). The time it read is left as a hint only, which
        the lock holder caps to the open bucket and never lets move back
        (``_catch_up``), so no thread switch can rewind time. New labels, bad labels,
        explicit times and bucket switches take the validating path, under the lock. A score of plain floats
        (a binary model's float in [0, 1], or a list or tuple of K numbers in [0, 1] summing to 1) rides the same
        path once the monitor's score layout is set, its sample buffered as one bytes record
        (``streammon.counting.score_records``); the first score, and any other, are checked under the lock.
        """
        if t is None:
            ids = self._ids
            try:
                cell = ids[y_true] * self._stride + ids[y_pred]
                item: int | bytes | None = cell
                if self._timed:
                    now = self._clock()
                    fast = self._last_t <= now < self._open_until
                else:
                    fast = self._clock_driven
            except (KeyError, TypeError):  # a new or invalid label, or a broken clock: the slow path says which
                fast = False
            if fast and y_score is not None:  # a scored sample is buffered as one bytes record (score_records)
                pack = self._binary_pack  # a binary model's float: checked here, no call (K = 2 stays ~1.5x)
                if pack is not None and (type(y_score) is float or type(y_score) is np.float64) \
                        and 0.0 <= y_score <= 1.0:
                    item = pack(cell, y_score)
                else:
                    item = self._score_record(cell, y_score)  # None: not proved valid, or the first score: locked
                fast = item is not None
            if fast:
                if self._timed:
                    self._fast_t = now  # a hint only: _last_t is written under the lock alone
                cells = self._cells
                cells.append(item)  # type: ignore[arg-type]  # not None where fast
                if len(cells) >= FLUSH_EVERY:
                    self.flush()
                return
        self._update_checked(y_true, y_pred, t, y_score)

    def _first_score_record(self, cell: int, y_score: Any) -> bytes | None:
        """``_score_record`` until the score layout is set (by the first score, under the lock): None (the
        checked path) until then, and from then on the layout's own check, which replaces this one."""
        scoring = self._tally.scoring
        if scoring is None:
            return None
        self._score_record = scoring.records.lock_free
        if scoring.columns == 1:
            self._binary_pack = scoring.records.pack
        return self._score_record(cell, y_score)

    def _score_of_one(self, y_score: Any) -> tuple[Scoring, tuple[float, ...]]:
        """One sample's score, checked, and the score side it fits (a new one if it is the first score, not
        started yet: ``Tally.start_scoring``). Changes nothing; the caller holds the lock."""
        arr = as_float_array(y_score)  # a TypeError for what is no number at all
        if arr.ndim == 1 and len(arr) == len(self._tally.index.labels):
            check_index_names(y_score, self._tally.index.labels)  # a named row (a Series) in the classes' order
        scoring = self._tally.score_layout(1 if arr.ndim == 0 else 2, len(arr) if arr.ndim == 1 else -1)
        return scoring, as_score_row(y_score, columns=scoring.columns, positive=scoring.positive)

    def _update_checked(self, y_true: Any, y_pred: Any, t: Any, y_score: Any = None) -> None:
        """``update`` with every check, under the lock; opens a new time bucket when needed."""
        with self._lock:
            self._catch_up()  # a time must not precede the buffered samples
            now = self._resolve_time(t)
            ids = self._ids
            scoring = None
            if y_score is not None:
                scoring, score = self._score_of_one(y_score)  # validates, or raises: nothing changed
            try:
                i, j = ids[y_true], ids[y_pred]
            except (KeyError, TypeError):
                self._tally.register(self._tally.index.new_labels((y_true, y_pred)))  # validates, or raises
                i, j = ids[y_true], ids[y_pred]
            if scoring is not None:
                self._tally.start_scoring(scoring)
            if t is None:
                self._clock_driven = True
            if not now < self._open_until:
                self._flush()  # the buffered samples keep the bucket they share
                self._open_until = self._bucket_end(now)
            self._last_t = now
            cell = i * self._stride + j
            self._cells.append(cell if y_score is None else self._record(cell, score))
            if len(self._cells) >= FLUSH_EVERY:
                self._flush()

    def _record(self, cell: int, score: float | tuple[float, ...]) -> bytes:
        """A scored sample as the buffer holds it (``streammon.counting.score_records``): its score checked."""
        scoring = self._tally.scoring
        assert scoring is not None  # the score was taken: scoring started
        return scoring.records.record(cell, score)

    def _bucket_end(self, t: float) -> float:
        """The earliest time after ``t`` that some timed window puts in a later bucket."""
        ends = [w.bucket_end(t) for w in self._tally.windows if isinstance(w, Timed)]
        return min([*ends, math.nextafter(MAX_TIME, math.inf)]) if ends else math.inf

    def update_many(self, y_true: Any, y_pred: Any, t: Any = None, *, y_score: Any = None,
                    batch_id: str | None = None) -> None:
        """Count a batch: two equal-length 1-D sequences or arrays of labels (and, optionally, the model's
        scores ``y_score``: 1-D or (n, K), see ``streammon.counting.score_input`` and ``streammon.counting.scoring``).

        Lists, tuples, NumPy arrays, pandas Series/Index, polars Series and pyarrow
        (chunked) arrays are accepted; tables, dicts, sets and iterators of unknown
        length are refused (see ``streammon.counting.labels.as_label_array``). Dictionary-encoded
        columns (pandas categorical, Arrow dictionary) are mapped once per used category
        (``streammon.counting.coded``).
        ``t`` is None (the clock, once for the batch), one time for the whole
        batch, or one non-decreasing time per sample: seconds or datetimes
        (``streammon.counting.timing``). The batch is validated in
        full before anything is counted; an empty batch is a no-op. Labels are encoded before
        the lock is taken (again under it only if another thread added classes meanwhile), so a
        large or hostile batch does not hold up reports and scrapes.

        With a durable journal (``pending=``) the batch is committed to it, as one row, before it is
        counted; ``batch_id`` (e.g. an HTTP ``Idempotency-Key``) is recorded in the same transaction,
        and a batch whose id the journal remembers is not counted again (see ``Monitor.accepted``).
        """
        batch_id = self._check_batch_id(batch_id)
        encode = _Encoder(y_true, y_pred)
        size = encode.size
        times = None if t is None or np.ndim(t) == 0 else as_times(t, size)
        given = None
        if y_score is not None:
            given = as_float_array(y_score)
            if given.ndim not in (1, 2) or len(given) != size:
                raise ValueError(f"y_score must be 1-D or 2-D with one score (row) per sample: {size} samples, "
                                 f"got shape {given.shape}")
        if size == 0:
            return
        index = self._tally.index
        known = len(index)
        try:
            encoded = encode(index)  # outside the lock: validates (linear), changes nothing
        except ValueError:  # (or a thread registering these very labels meanwhile: told again under the lock)
            encoded = None
        with self._lock:
            if encoded is None or len(index) != known:  # another thread added classes meanwhile: against them
                encoded = encode(index)
            self._catch_up()
            if times is None:
                stamp = self._resolve_time(t)
                batch_times: np.ndarray | float | None = stamp if self._timed else None
                last = stamp
            else:
                batch_times = times
                check_times(batch_times, self._last_t)
                last = float(batch_times[-1])
            scoring, scores = None, None
            if given is not None:  # checked in full before anything changes
                scoring, scores = self._tally.batch_scores(y_score, given, size)
            true_codes, pred_codes, lut, new = encoded
            if self._journal is not None:
                if batch_id is not None and self._journal.accepted(batch_id) is not None:
                    return  # a retried batch: counted once already
                recorded = batch_times if batch_times is not None or not math.isfinite(last) else last
                self._journal.append_samples(
                    (*index.labels, *new), true_codes if lut is None else lut[true_codes],
                    pred_codes if lut is None else lut[pred_codes], recorded, clocked=t is None, batch=batch_id,
                    scores=scores)
            self._tally.register(new)  # gives the new labels the indices code_labels announced
            if t is None:
                self._clock_driven = True
            self._flush()
            if scoring is not None:
                self._tally.start_scoring(scoring)
            self._last_t = last
            self._open_until = -math.inf  # the next update finds its bucket anew
            now = self._detector_time() if t is None and not self._timed else last
            self._tally.ingest(Batch(true_codes, pred_codes, batch_times, self._stride, lut, scores=scores),
                               now=now)

    def _check_batch_id(self, batch_id: Any) -> str | None:
        """A batch id as given (a str of 1 to 200 printable ASCII characters), or None; checked before anything."""
        if batch_id is None:
            return None
        if type(batch_id) is not str or not 0 < len(batch_id) <= MAX_BATCH_ID or not batch_id.isascii() \
                or not batch_id.isprintable():
            raise ValueError(f"batch_id {batch_id!r:.80} must be a str of 1 to {MAX_BATCH_ID} printable ASCII "
                             "characters")
        if self._journal is None:
            raise ValueError("batch_id needs a durable journal (Monitor(..., pending=path)): the ids of recent "
                             "batches are remembered there")
        return batch_id

    def accepted(self, batch_id: str) -> int | None:
        """The size of the batch of id ``batch_id`` if the journal remembers it (one of its last
        ``streammon.pending.sqlite.MAX_REMEMBERED``), else None: a retry of it will not be counted again."""
        checked = self._check_batch_id(batch_id)
        assert self._journal is not None and checked is not None
        return self._journal.accepted(checked)

    def _catch_up(self) -> None:
        """Move ``_last_t`` up to the time the lock-free path read last (caller holds the lock).

        That hint may be stale (a thread switched out between its clock read and its write
        leaves an older time, even one of an earlier bucket), so it only ever moves
        ``_last_t`` forward, and never past the open bucket the buffered samples share.
        """
        self._last_t = max(self._last_t, min(self._fast_t, math.nextafter(self._open_until, -math.inf)))

    def _flush(self) -> None:
        """Move the per-sample buffer into every window (caller holds the lock).

        Lock-free ``update`` calls may append meanwhile: exactly the samples read
        here are deleted from the buffer's front. They all lie in the bucket of
        ``_last_t`` once caught up (``_catch_up``), which stamps them.
        """
        buffer = self._cells
        n = len(buffer)
        if not n:
            return
        self._catch_up()
        now = self._detector_time() if self._clock_driven and not self._timed else self._last_t
        items = buffer[:n]
        del buffer[:n]
        scores = None
        if self._tally.scoring is None:  # no score taken yet: the buffer holds cell ids only
            cells = np.fromiter(items, dtype=np.intp, count=n)
        else:
            cells, scores = self._tally.scoring.records.unpack(items)
        true_idx, pred_idx = np.divmod(cells, self._stride)
        self._tally.ingest(Batch(true_idx, pred_idx, self._last_t if self._timed else None, self._stride,
                                 scores=scores), now=now)

    def _detector_time(self) -> float | None:
        """The clock's time for the degradation detector's class rates (``streammon.detection.rates``) where the
        samples have no time of their own and no window reads the clock: None if it returned no valid time (the
        rates then skip this batch; a read reports the clock's error)."""
        try:
            return self._clock_time()
        except ValueError:
            return None

    def _read_time(self) -> float | None:
        """The time reads are made at: the clock for clock-driven monitors, else the last sample's time."""
        if self._clock_driven:
            return self._clock_time()
        return None if self._last_t == -math.inf else self._last_t
