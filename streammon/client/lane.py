"""One server's lane of a client: its buffer, its sender thread and its keep-alive HTTP connection.

Callers append rows ``(kind, first, second, t)`` to ``buffer`` (a ``deque``: ``append`` is atomic, no lock) and
call ``grew`` when its length reaches ``threshold``: that starts the thread on first use (again in a forked
child), drops the oldest waiting rows beyond ``max_buffer`` (counted per kind, under ``lock``) and wakes the
sender once a batch is ready. The sender wakes every ``flush_interval`` seconds or when woken, cuts the buffer
into runs of one kind (so a label never overtakes its prediction) of at most ``batch_size`` rows, and sends each
run until the server answers: ``200`` acknowledges it; a connection error, ``408``, ``429`` or ``5xx`` is retried
with exponential backoff and full jitter under the same ``Idempotency-Key`` (the server counts a retried batch
once); any other answer (``400``: a row the server refuses) drops the batch, counts it in ``rejected`` and logs
the server's message on logger ``streammon.client``, never retrying it. ``Streammon-Dropped`` tells the server
how many rows were dropped since the last acknowledged batch (an empty batch carries it if no rows are left).

>>> lane = Lane(Target("http", "127.0.0.1", 9, ""), "fraud", Settings())
>>> lane.buffer.append((PREDICTIONS, "tx-1", "legit", None)); lane.grew()
>>> lane.stop(0.0); lane.dropped  # nothing listens on port 9: the row is lost at close, and counted
[0, 1, 0]
"""

from __future__ import annotations

import http.client
import json
import logging
import math
import os
import random
import ssl
import threading
import time
import zlib
from collections import deque
from typing import Any

from streammon.client.options import Settings, Target

logger = logging.getLogger("streammon.client")

SAMPLES, PREDICTIONS, LABELS = 0, 1, 2
KINDS = ("samples", "predictions", "labels")
FIELDS = (("y_true", "y_pred"), ("keys", "y_pred"), ("keys", "y_true"))
RETRIED = frozenset({408, 425, 429, 500, 502, 503, 504})
_CONNECTION_ERRORS = (OSError, http.client.HTTPException)


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
        self.buffer: deque[Any] = deque()
        self.threshold = 0  # 0 while the thread is not running: the first row starts it
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.halt = threading.Event()
        self.woken = False
        self.thread: threading.Thread | None = None
        self.connection: http.client.HTTPConnection | None = None
        self.client_id = os.urandom(8).hex()
        self.sequence = 0
        self.deadline = math.inf  # set by stop: after it, rows still unsent are dropped (and counted)
        self.orphans: list[threading.Event] = []  # flush marks dropped with the rows before them
        self.dropped = [0, 0, 0]  # rows dropped per kind: buffer full, or still unsent at close
        self.reported = 0  # of them, told to the server in an acknowledged Streammon-Dropped header
        self.sent = 0  # rows the server acknowledged
        self.rejected = 0  # rows of batches the server refused (400 ...)
        self.failing = False

    # -- the callers' side --------------------------------------------------------------------------------

    def grew(self) -> None:
        """The buffer reached ``threshold``: start the thread, drop beyond ``max_buffer``, wake the sender."""
        settings = self.settings
        if self.thread is None:
            self._start()
        if len(self.buffer) > settings.max_buffer:
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
            while len(buffer) > self.settings.max_buffer:
                row = buffer.popleft()
                if type(row) is tuple:
                    first = first or not any(dropped)
                    dropped[row[0]] += 1
                else:
                    self.orphans.append(row)
        if first:
            logger.warning("streammon client: buffer full (%d rows) while %s does not acknowledge: dropping the "
                           "oldest rows, counted in client.dropped", self.settings.max_buffer, self.target)

    def mark(self) -> threading.Event | None:
        """A flush mark behind every row buffered now: set once they are all acknowledged, rejected or dropped."""
        if self.thread is None and not self.buffer:
            return None
        marker = threading.Event()
        self.buffer.append(marker)
        self.grew()
        self.wake.set()
        return marker

    def stop(self, grace: float) -> None:
        """Stop the thread: rows it cannot send within ``grace`` seconds are dropped and counted."""
        with self.lock:
            self.closed = True
            thread = self.thread
        self.deadline = time.monotonic()
        self.halt.set()
        self.wake.set()
        if thread is not None:
            thread.join(grace + self.settings.timeout + 1.0)
        with self.lock:
            self.thread = None  # a later row finds the lane closed (``_start`` raises)
            for row in self.buffer:
                if type(row) is tuple:
                    self.dropped[row[0]] += 1
                else:
                    row.set()
            self.buffer.clear()
        self.threshold = 0
        if self.connection is not None:
            self.connection.close()
            self.connection = None

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
        while True:
            self._release_orphans()
            with self.lock:
                batch = self._cut()
            if batch is None:
                return
            if isinstance(batch, threading.Event):
                if self.unreported() and time.monotonic() < self.deadline:
                    self._deliver(SAMPLES, [], unreported=self.unreported())  # an empty batch tells the drops
                batch.set()
                continue
            self._deliver(batch[0][0], batch, unreported=self.unreported())

    def unreported(self) -> int:
        """Dropped rows not yet told to the server."""
        return sum(self.dropped) - self.reported

    def _release_orphans(self) -> None:
        if self.orphans:
            with self.lock:
                orphans, self.orphans = self.orphans, []
            for marker in orphans:
                marker.set()

    def _cut(self) -> list[Any] | threading.Event | None:
        """The next run of rows of one kind (and all timed or all untimed), up to ``batch_size``; or a flush mark."""
        buffer = self.buffer
        if not buffer:
            return None
        first = buffer.popleft()
        if type(first) is not tuple:
            return first  # type: ignore[no-any-return]
        kind, timed = first[0], first[3] is not None
        rows = [first]
        most = self.settings.batch_size
        while buffer and len(rows) < most:
            row = buffer[0]
            if type(row) is not tuple or row[0] != kind or (row[3] is not None) != timed:
                break
            rows.append(buffer.popleft())
        return rows

    def _body(self, kind: int, rows: list[Any]) -> tuple[bytes, dict[str, str]]:
        first, second = FIELDS[kind]
        document: dict[str, Any] = {first: [row[1] for row in rows], second: [row[2] for row in rows]}
        if rows and rows[0][3] is not None:
            document["t"] = [row[3] for row in rows]
        body = json.dumps(document, separators=(",", ":"), allow_nan=False).encode()
        headers = {"Content-Type": "application/json"}
        if self.settings.token is not None:
            headers["Authorization"] = f"Bearer {self.settings.token}"
        limit = self.settings.compress_above
        if limit is not None and len(body) > limit:
            packer = zlib.compressobj(1, zlib.DEFLATED, 31)  # gzip framing, fastest level
            body = packer.compress(body) + packer.flush()
            headers["Content-Encoding"] = "gzip"
        return body, headers

    def _deliver(self, kind: int, rows: list[Any], *, unreported: int) -> None:
        """Send one batch until the server acknowledges or refuses it, or ``deadline`` passes."""
        body, headers = self._body(kind, rows)
        self.sequence += 1
        headers["Idempotency-Key"] = f"{self.client_id}-{self.name}-{self.sequence}"
        if unreported:
            headers["Streammon-Dropped"] = str(unreported)
        attempt = 0
        while True:
            if time.monotonic() >= self.deadline:
                self.dropped[kind] += len(rows)
                return
            try:
                status, answer = self._post(self.paths[kind], body, headers)
            except _CONNECTION_ERRORS as exc:
                status, answer = 0, f"{type(exc).__name__}: {exc}"
            if status == 200:
                self.sent += len(rows)
                self.reported += unreported
                if self.failing:
                    self.failing = False
                    logger.info("streammon client: %s acknowledges batches again", self.target)
                return
            if status and status not in RETRIED:
                self.rejected += len(rows)
                logger.error("streammon client: %s refused a batch of %d %s (HTTP %d), dropped, not retried: %s",
                             self.target, len(rows), KINDS[kind], status, answer)
                return
            if not self.failing:
                self.failing = True
                logger.warning("streammon client: %s did not acknowledge a batch (%s): retrying with backoff, "
                               "buffering up to %d rows", self.target, answer or f"HTTP {status}",
                               self.settings.max_buffer)
            delay = min(self.settings.max_backoff, 0.05 * 2.0 ** min(attempt, 30))
            attempt += 1
            self.halt.wait(min(random.uniform(delay / 2, delay), max(0.0, self.deadline - time.monotonic())))

    def _post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
        """One request on the keep-alive connection (reconnecting once if the server closed an idle one)."""
        for reused in (True, False):
            connection = self.connection
            fresh = connection is None
            if connection is None:
                connection = self._connect()
            try:
                connection.request("POST", path, body, headers)
                response = connection.getresponse()
                answer = response.read()
            except _CONNECTION_ERRORS:
                connection.close()
                self.connection = None
                if reused and not fresh:
                    continue  # an idle connection the server closed: once more on a new one, at once
                raise
            if response.will_close:
                connection.close()
                self.connection = None
            return response.status, _message(answer)
        raise AssertionError("unreachable")  # pragma: no cover

    def _connect(self) -> http.client.HTTPConnection:
        target, settings = self.target, self.settings
        if target.scheme == "https":
            context = settings.ssl_context or ssl.create_default_context()
            self.connection = http.client.HTTPSConnection(target.host, target.port, timeout=settings.timeout,
                                                          context=context)
        else:
            self.connection = http.client.HTTPConnection(target.host, target.port, timeout=settings.timeout)
        return self.connection


def _message(answer: bytes) -> str:
    """The server's ``{"error": ...}`` (or the start of its answer), for the log."""
    try:
        document = json.loads(answer)
        text = str(document["error"]) if isinstance(document, dict) and "error" in document else answer.decode()
    except (ValueError, UnicodeDecodeError):
        text = answer[:500].decode("utf-8", "replace")
    return text[:500]
