"""One server's lane of a client: its buffer, its sender thread and its keep-alive HTTP connection.

Callers append rows ``(kind, first, second, t)`` to ``buffer`` (a ``deque``: ``append`` is atomic, no lock) and
call ``grew`` when its length reaches ``threshold``: that starts the thread on first use (again in a forked
child), drops the oldest waiting rows beyond ``max_buffer`` (counted per kind, under ``lock``) and wakes the
sender once a batch is ready. The sender wakes every ``flush_interval`` seconds or when woken, takes the oldest
``batch_size`` rows and sends them as one batch per kind, predictions first (a label never overtakes its
prediction: both are in this chunk or the prediction in an earlier one); rows with times keep the arrival order of
samples and labels (they share the server's time line), as runs of one kind. A scored row carries its score as a
fifth element, ``(kind, first, second, t, y_score)``; since the server reads a batch's ``y_score`` as one array (a
score for every row, all numbers or all rows of K), a batch is also cut where that form changes, in arrival order
(rows that alternate between scored and unscored make small batches). Each batch is sent until the server
answers: ``200`` acknowledges it; a connection error, ``408``, ``429`` or ``5xx`` is retried
with exponential backoff and jitter under the same ``Idempotency-Key`` (the server counts a retried batch
once); a ``413`` (over the server's ``max_body_bytes``) sends the batch again in halves; any other answer
(``400``: a row the server refuses) drops the batch, counts it in ``rejected`` and logs the server's message on
logger ``streammon.client``, never retrying it. ``Streammon-Dropped`` tells the server
how many rows were dropped since the last acknowledged batch (an empty batch carries it if no rows are left).

>>> lane = Lane(Target("http", "127.0.0.1", 9, ""), "fraud", Settings())
>>> lane.buffer.append((PREDICTIONS, "tx-1", "legit", None)); lane.grew()
>>> lane.stop(0.0); lane.dropped  # nothing listens on port 9: the row is lost at close, and counted
[1, 0, 0]
"""

from __future__ import annotations

import logging
import math
import os
import random
import threading
import time
from collections import deque
from itertools import groupby
from operator import itemgetter
from typing import Any

from streammon.client.options import Settings, Target
from streammon.client.wire import CONNECTION_ERRORS, Connection, body, pack

logger = logging.getLogger("streammon.client")

PREDICTIONS, SAMPLES, LABELS, MARK = 0, 1, 2, 3  # a chunk sorted by kind sends predictions first, marks last
KINDS = ("predictions", "samples", "labels")
FIELDS = (("keys", "y_pred"), ("y_true", "y_pred"), ("keys", "y_true"))
RETRIED = frozenset({408, 425, 429, 500, 502, 503, 504})
_kind, _time, _score = itemgetter(0), itemgetter(3), itemgetter(4)
_UNSCORED, _SCORED, _NUMBERS, _ROWS = {4}, {5}, {float}, {tuple}  # row lengths and score types of one form


class Lane:
    """The rows for one server and the thread that sends them (see the module docstring)."""

    def __init__(self, target: Target, model: str, settings: Settings, name: str = "0") -> None:
        self.target, self.settings, self.name = target, settings, name
        self.paths = tuple(f"{target.prefix}/v1/models/{model}/{kind}" for kind in KINDS)
        self.closed = False
        self.reset()

    def reset(self) -> None:
        """A fresh lane: empty buffer, new lock and events, no thread, no connection, counters at 0 (what a forked
        child starts from: the parent's rows and connection are the parent's)."""
        self.buffer: deque[tuple[Any, ...]] = deque()  # rows (kind, first, second, t) and marks (MARK, event, ...)
        self.threshold = 0  # 0 while the thread is not running: the first row starts it
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.halt = threading.Event()
        self.woken = False
        self.thread: threading.Thread | None = None
        self.connection = Connection(self.target, self.settings)  # the parent's socket is left to the parent
        self.client_id = os.urandom(8).hex()
        self.sequence = 0
        self.deadline = math.inf  # set by stop: after it, rows still unsent are dropped (and counted)
        self.orphans: list[threading.Event] = []  # flush marks dropped with the rows before them
        self.marks = 0  # flush marks in the buffer (they take no row's place: not counted against max_buffer)
        self.dropped = [0, 0, 0]  # rows dropped per kind: buffer full, or still unsent at close
        self.reported = 0  # of them, told to the server in an acknowledged Streammon-Dropped header
        self.sent = 0  # rows the server acknowledged
        self.rejected = 0  # rows of batches the server refused (400 ...)
        self.failing = False
        self.most = self.settings.batch_size  # rows a chunk: batch_size, less after a 413

    # -- the callers' side --------------------------------------------------------------------------------

    def grew(self) -> None:
        """The buffer reached ``threshold``: start the thread, drop beyond ``max_buffer``, wake the sender."""
        settings = self.settings
        if self.thread is None:
            self._start()
        if len(self.buffer) - self.marks > settings.max_buffer:
            self._trim()
        if len(self.buffer) >= settings.batch_size and not self.woken:
            self.woken = True
            self.wake.set()

    def _start(self) -> None:
        with self.lock:
            if self.closed:
                self.buffer.clear()
                raise RuntimeError(f"this client of {self.target} is closed: create a new one")
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name=f"streammon-client-{self.name}", daemon=True)
                self.thread.start()
                self.threshold = min(self.settings.batch_size, self.settings.max_buffer + 1)

    def _trim(self) -> None:
        """Drop the oldest waiting rows beyond ``max_buffer`` (the batch being sent is kept), counting them."""
        first = False
        with self.lock:
            buffer, dropped = self.buffer, self.dropped
            while len(buffer) - self.marks > self.settings.max_buffer:
                row = buffer.popleft()
                if row[0] == MARK:
                    self.marks -= 1
                    self.orphans.append(row[1])
                else:
                    first = first or not any(dropped)
                    dropped[row[0]] += 1
        if first:
            logger.warning("streammon client: buffer full (%d rows) while %s does not acknowledge: dropping the "
                           "oldest rows, counted in client.dropped", self.settings.max_buffer, self.target)

    def mark(self) -> threading.Event | None:
        """A flush mark behind every row buffered now: set once they are all acknowledged, rejected or dropped."""
        if self.thread is None and not self.buffer:
            return None
        marker = threading.Event()
        with self.lock:
            self.buffer.append((MARK, marker, None, None))
            self.marks += 1
        if self.thread is None:
            self._start()
        self.wake.set()
        return marker

    def stop(self, grace: float) -> None:
        """Stop the thread: no new attempt to send; a request under way may finish within ``grace`` seconds, then
        its socket is shut down; rows not acknowledged are dropped and counted."""
        with self.lock:
            self.closed = True
            thread = self.thread
        self.deadline = time.monotonic()
        self.halt.set()
        self.wake.set()
        if thread is not None:
            thread.join(grace)
            if thread.is_alive():  # blocked on a server that does not answer
                self.connection.abort()
                thread.join(1.0)
        with self.lock:
            self.thread = None  # a later row finds the lane closed (``_start`` raises)
            for row in self.buffer:
                if row[0] == MARK:
                    row[1].set()
                else:
                    self.dropped[row[0]] += 1
            self.buffer.clear()
            self.marks = 0
        self.threshold = 0
        self.connection.close()

    # -- the sender thread --------------------------------------------------------------------------------

    def _run(self) -> None:
        while not self.closed or self.buffer:
            self.wake.wait(self.settings.flush_interval)
            self.wake.clear()
            self.woken = False
            try:
                self._drain()
            except Exception:  # pragma: no cover - a bug must not end the thread that every later row needs
                logger.exception("streammon client: the sender failed; it goes on with the next batch")
                self.halt.wait(1.0)

    def _drain(self) -> None:
        """Send chunks until the buffer is empty."""
        while True:
            if self.orphans:
                with self.lock:
                    orphans, self.orphans = self.orphans, []
                for marker in orphans:
                    marker.set()
            with self.lock:
                buffer = self.buffer
                chunk = [buffer.popleft() for _ in range(min(len(buffer), self.most))]
                if self.marks:
                    self.marks -= sum(1 for row in chunk if row[0] == MARK)
            if not chunk:
                return
            for kind, rows in _batches(chunk):
                if kind != MARK:
                    self._deliver(kind, rows)
                    continue
                if self.unreported() and time.monotonic() < self.deadline:
                    self._deliver(SAMPLES, [])  # an empty batch tells the server the drops
                for mark in rows:
                    mark[1].set()

    def unreported(self) -> int:
        """Dropped rows not yet told to the server."""
        return sum(self.dropped) - self.reported

    def _deliver(self, kind: int, rows: list[tuple[Any, ...]]) -> None:
        """Send one batch until the server acknowledges or refuses it, or ``deadline`` passes."""
        unreported = self.unreported()
        data, headers = pack(body(rows, FIELDS[kind]), self.settings)
        self.sequence += 1
        headers["Idempotency-Key"] = f"{self.client_id}-{self.name}-{self.sequence}"
        if unreported:
            headers["Streammon-Dropped"] = str(unreported)
        attempt = 0
        while True:
            if time.monotonic() >= self.deadline:
                with self.lock:  # the callers' threads count their drops under it too
                    self.dropped[kind] += len(rows)
                return
            try:
                status, answer = self.connection.post(self.paths[kind], data, headers)
            except CONNECTION_ERRORS as exc:
                status, answer = 0, f"{type(exc).__name__}: {exc}"
            if status == 200:
                self.sent += len(rows)
                self.reported += unreported
                if self.failing:
                    self.failing = False
                    logger.info("streammon client: %s acknowledges batches again", self.target)
                return
            if status == 413 and len(rows) > 1:  # over this server's max_body_bytes: halves (a 413 counted
                if self.most > len(rows) // 2:  # nothing, so their new keys are safe), and smaller chunks from now
                    self.most = len(rows) // 2
                    logger.warning("streammon client: %s refused %d rows as too large (413): sending at most %d "
                                   "rows a batch from now on", self.target, len(rows), self.most)
                self._deliver(kind, rows[:len(rows) // 2])
                self._deliver(kind, rows[len(rows) // 2:])
                return
            if status and status not in RETRIED:
                self.rejected += len(rows)
                logger.error("streammon client: %s refused a batch of %d %s (HTTP %d), dropped, not retried: %r",
                             self.target, len(rows), KINDS[kind], status, answer)
                return
            if not self.failing:
                self.failing = True
                logger.warning("streammon client: %s did not acknowledge a batch (%r): retrying with backoff, "
                               "buffering up to %d rows", self.target, answer or f"HTTP {status}",
                               self.settings.max_buffer)
            delay = min(self.settings.max_backoff, 0.05 * 2.0 ** min(attempt, 30))
            attempt += 1
            self.halt.wait(min(random.uniform(delay / 2, delay), max(0.0, self.deadline - time.monotonic())))


def _form(row: tuple[Any, ...]) -> int:
    """-1 for a row without a score, 0 for one number, K for a row of K class probabilities."""
    return -1 if len(row) == 4 else 0 if type(row[4]) is float else len(row[4])


def _untimed(row: tuple[Any, ...]) -> bool:
    return row[3] is None


def _run_of(row: tuple[Any, ...]) -> tuple[int, bool]:
    return row[0], row[3] is None


def _cut(kind: int, rows: list[tuple[Any, ...]]) -> list[tuple[int, list[tuple[Any, ...]]]]:
    """Rows of one batch cut into runs of one form of score (``_form``), in order. A batch of one form — the
    usual case — is told in C-level passes (``map``), without a Python call per row."""
    lengths = set(map(len, rows))
    if lengths == _UNSCORED:
        return [(kind, rows)]
    if lengths == _SCORED:
        scores = list(map(_score, rows))
        types = set(map(type, scores))
        if types == _NUMBERS or (types == _ROWS and len(set(map(len, scores))) == 1):
            return [(kind, rows)]
    return [(kind, list(run)) for _, run in groupby(rows, key=_form)]


def _batches(chunk: list[tuple[Any, ...]]) -> list[tuple[int, list[tuple[Any, ...]]]]:
    """A chunk's batches, in sending order, the marks last. Without times: one batch per kind, predictions first
    (a sort by kind, stable: each in arrival order). With times: the predictions (runs with and without times),
    then samples and labels in arrival order as runs of one kind, since they share the server's time line.

    >>> [(k, [r[1] for r in rows]) for k, rows in _batches([(2, "a", 0, None), (0, "a", 0, None), (1, 0, 0, None)])]
    [(0, ['a']), (1, [0]), (2, ['a'])]
    >>> [(k, [r[1] for r in rows]) for k, rows in _batches([(2, "a", 0, 5.0), (0, "a", 0, 4.0), (1, 0, 0, 6.0)])]
    [(0, ['a']), (2, ['a']), (1, [0])]

    Scored rows (a fifth element) are cut into runs of one form of score, in arrival order:

    >>> [(k, [r[1] for r in rows]) for k, rows in _batches([(1, 0, 0, None, 0.5), (1, 1, 1, None),
    ...                                                     (1, 2, 2, None), (1, 3, 3, None, (0.5, 0.5))])]
    [(1, [0]), (1, [1, 2]), (1, [3])]
    """
    times = list(map(_time, chunk))
    if times.count(None) == len(chunk):
        chunk.sort(key=_kind)
        if max(map(len, chunk)) == 4:  # no scores: one batch per kind
            return [(kind, list(rows)) for kind, rows in groupby(chunk, key=_kind)]
        return [part for kind, rows in groupby(chunk, key=_kind) for part in _cut(kind, list(rows))]
    predictions = [row for row in chunk if row[0] == PREDICTIONS]
    others = [row for row in chunk if row[0] == SAMPLES or row[0] == LABELS]
    marks = [row for row in chunk if row[0] == MARK]
    batches = [part for _, rows in groupby(predictions, key=_untimed) for part in _cut(PREDICTIONS, list(rows))]
    batches += [part for run, rows in groupby(others, key=_run_of) for part in _cut(run[0], list(rows))]
    return [*batches, (MARK, marks)] if marks else batches
