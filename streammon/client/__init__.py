"""A light client for Python workers that feed a ``streammon serve`` server (``docs/reference/http-api.md``).

``Client(url, model)`` has the monitor's feeding methods — ``update``, ``predict``, ``label`` and their ``_many``
forms. A call checks its values (the server's rules: a bad one raises at the call, before anything is buffered) and
appends one row to a bounded in-memory buffer: no I/O, no lock. A background thread per server sends the rows in
batches (see ``streammon.client.lane``): every ``flush_interval`` seconds or once ``batch_size`` rows wait, the
oldest first and predictions before labels (a label never overtakes its prediction), retried with backoff under an
``Idempotency-Key`` while the server is unreachable, so each acknowledged batch is counted exactly once. While the
server does not acknowledge, at most ``max_buffer`` rows wait (plus the batch being sent); beyond, the oldest
waiting rows are dropped and counted (``dropped``, and the server exports what clients report as
``streammon_client_dropped_total``). ``flush`` waits for the buffer, ``close`` flushes and stops; open clients are
flushed at exit (``exit_timeout``), and a client created before a ``fork`` starts afresh in the child (gunicorn
``--preload``). A client stays referenced (and its threads alive) until ``close``: make one per process and model,
not one per request. This package imports only the standard library.

Several URLs spread one model over several servers: ``predict`` and ``label`` go to server
``route(key, len(urls))`` — ``zlib.crc32`` of the key's UTF-8 text (an int key as its decimal text) modulo the
number of servers, so a key's prediction and label meet on one server, from any worker or language — and
``update`` goes round-robin.

Times: ``t=None`` rows are stamped by the server when their batch arrives (at most ``flush_interval`` late), as
the server keeps each model's times non-decreasing across all its workers. ``stamp=True`` stamps them at the call
instead (exact event times): only for a single client per model and server, since the server refuses (400) a batch
whose times precede another worker's later batch. An explicit ``t`` is always sent.

Scores (``y_score=``, issue 28): a binary model's positive-class probability, or a row of K class probabilities in
the model's class order, checked at the call (``checks.score``) and sent as the batch's ``"y_score"``; the sender
cuts a batch where the form of score changes (none, a number, a row of K), as the server reads it as one array.

>>> client = Client("http://127.0.0.1:9", "fraud", flush_interval=60)  # nothing listens on port 9
>>> client.predict("tx-1", "legit")
>>> client.predict("tx-2", "legit", y_score=0.12)  # the model's probability of its positive class
>>> client.label("tx-1", 0.5)
Traceback (most recent call last):
...
ValueError: y_true 0.5 is a float that is not a whole number: it looks like a score: threshold it first
>>> client.update("legit", "legit", y_score=[0.7, 0.4])
Traceback (most recent call last):
...
ValueError: y_score [0.7, 0.4] sums to 1.1: a row of class probabilities must sum to 1 (within 0.0001)
>>> client.buffered
2
>>> client.close(timeout=0.0), client.dropped  # not sent within the timeout: dropped, and counted
(False, 2)
"""

from __future__ import annotations

import atexit
import itertools
import math
import os
import ssl
import threading
import time
import zlib
from collections.abc import Sequence
from typing import Any

from streammon.client import checks, options
from streammon.client.lane import KINDS, LABELS, MARK, PREDICTIONS, SAMPLES, Lane

__all__ = ["Client", "route"]

_B = checks.INT_BOUND
_now = time.time
_label, _key, _when, _score = checks.label, checks.key, checks.when, checks.score
_open: set[Client] = set()  # clients not closed: flushed at exit, reset in a forked child
_open_lock = threading.Lock()


def route(key: str | int, servers: int) -> int:
    """The server (0 to ``servers - 1``) of a key: ``zlib.crc32`` of its UTF-8 text (an int as decimal) mod ``servers``.

    >>> route("tx-1", 3), zlib.crc32("tx-1".encode("utf-8")) % 3, route(-42, 3), route("-42", 3)
    (2, 2, 2, 2)
    """
    return zlib.crc32(str(key).encode()) % servers


class Client:
    """Feeds one model of one or more ``streammon serve`` servers from a worker (see the module docstring).

    >>> client = Client(["http://a:9464", "http://b:9464/streammon"], "fraud", batch_size=5_000)
    >>> client.urls, client.sent, client.dropped_by_kind
    (('http://a:9464', 'http://b:9464/streammon'), 0, {'predictions': 0, 'samples': 0, 'labels': 0})
    >>> client.close()
    True
    """

    def __init__(self, url: str | Sequence[str], model: str, *, token: str | None = None,
                 batch_size: int = 10_000, max_buffer: int = 100_000, flush_interval: float = 1.0,
                 timeout: float = 10.0, max_backoff: float = 5.0, compress_above: int | None = None,
                 ssl_context: ssl.SSLContext | None = None, stamp: bool = False, exit_timeout: float = 5.0) -> None:
        settings, targets = options.check(url, model, token=token, batch_size=batch_size, max_buffer=max_buffer,
                                          flush_interval=flush_interval, timeout=timeout, max_backoff=max_backoff,
                                          compress_above=compress_above, ssl_context=ssl_context,
                                          exit_timeout=exit_timeout)
        self.model, self.urls = model, tuple(str(t) for t in targets)
        self._lanes = [Lane(t, model, settings, str(i)) for i, t in enumerate(targets)]
        self._lane = self._lanes[0] if len(self._lanes) == 1 else None  # the fast path of one server
        self._servers = len(self._lanes)
        self._turn = itertools.count()
        self._stamp = bool(stamp)
        self.exit_timeout = float(exit_timeout)
        self.closed = False
        with _open_lock:
            _open.add(self)

    # -- the worker's calls: checks inline for plain values, one deque.append --------------------------------

    def update(self, y_true: Any, y_pred: Any, t: Any = None, y_score: Any = None) -> None:
        """Send one labelled prediction (``t``: its time in seconds or a datetime, optional; ``y_score``: the
        model's score, optional — see ``streammon.client.checks.score``)."""
        cls = type(y_true)
        if cls is str:
            if not (0 < len(y_true) <= 256 and y_true.isprintable()):
                y_true = _label(y_true, "y_true")
        elif cls is not bool and not (cls is int and -_B < y_true < _B):
            y_true = _label(y_true, "y_true")
        cls = type(y_pred)
        if cls is str:
            if not (0 < len(y_pred) <= 256 and y_pred.isprintable()):
                y_pred = _label(y_pred, "y_pred")
        elif cls is not bool and not (cls is int and -_B < y_pred < _B):
            y_pred = _label(y_pred, "y_pred")
        if t is None:
            if self._stamp:
                t = _now()
        else:
            t = _when(t)
        if y_score is None:
            row: tuple[Any, ...] = (SAMPLES, y_true, y_pred, t)
        else:  # checked here, before anything is buffered
            row = (SAMPLES, y_true, y_pred, t, y_score if type(y_score) is float and 0.0 <= y_score <= 1.0
                   else _score(y_score))
        lane = self._lane or self._lanes[next(self._turn) % self._servers]
        buffer = lane.buffer
        buffer.append(row)
        if len(buffer) >= lane.threshold:
            lane.grew()

    def predict(self, key: Any, y_pred: Any, t: Any = None, y_score: Any = None) -> None:
        """Send the prediction ``y_pred`` made for ``key`` (a str or an int), whose label comes later, with the
        model's score ``y_score`` (optional: see ``streammon.client.checks.score``), counted with the label."""
        cls = type(key)
        if cls is str:
            if not (0 < len(key) <= 512 and key.isprintable()):
                key = _key(key)
        elif cls is not int or not -_B <= key < _B:
            key = _key(key)
        cls = type(y_pred)
        if cls is str:
            if not (0 < len(y_pred) <= 256 and y_pred.isprintable()):
                y_pred = _label(y_pred, "y_pred")
        elif cls is not bool and not (cls is int and -_B < y_pred < _B):
            y_pred = _label(y_pred, "y_pred")
        if t is None:
            if self._stamp:
                t = _now()
        else:
            t = _when(t)
        if y_score is None:
            row: tuple[Any, ...] = (PREDICTIONS, key, y_pred, t)
        else:  # checked here, before anything is buffered
            row = (PREDICTIONS, key, y_pred, t, y_score if type(y_score) is float and 0.0 <= y_score <= 1.0
                   else _score(y_score))
        lane = self._lane or self._lanes[zlib.crc32(str(key).encode()) % self._servers]
        buffer = lane.buffer
        buffer.append(row)
        if len(buffer) >= lane.threshold:
            lane.grew()

    def label(self, key: Any, y_true: Any, t: Any = None) -> None:
        """Send the true label ``y_true`` of the prediction made for ``key``."""
        cls = type(key)
        if cls is str:
            if not (0 < len(key) <= 512 and key.isprintable()):
                key = _key(key)
        elif cls is not int or not -_B <= key < _B:
            key = _key(key)
        cls = type(y_true)
        if cls is str:
            if not (0 < len(y_true) <= 256 and y_true.isprintable()):
                y_true = _label(y_true, "y_true")
        elif cls is not bool and not (cls is int and -_B < y_true < _B):
            y_true = _label(y_true, "y_true")
        if t is None:
            if self._stamp:
                t = _now()
        else:
            t = _when(t)
        lane = self._lane or self._lanes[zlib.crc32(str(key).encode()) % self._servers]
        buffer = lane.buffer
        buffer.append((LABELS, key, y_true, t))
        if len(buffer) >= lane.threshold:
            lane.grew()

    def update_many(self, y_true: Any, y_pred: Any, t: Any = None, y_score: Any = None) -> None:
        """Send a batch of labelled predictions: two equal-length sequences (lists, tuples, 1-D arrays); ``t`` None,
        one time for all, or one per row; ``y_score`` None or one score per row (a 1-D array of a binary model's
        positive-class scores, or an (n, K) array of class probabilities: see ``streammon.client.checks.score``).
        Every value is checked before any row is buffered."""
        self._many(SAMPLES, y_true, y_pred, t, ("y_true", "y_pred"), y_score=y_score)

    def predict_many(self, keys: Any, y_pred: Any, t: Any = None, y_score: Any = None) -> None:
        """Send a batch of predictions whose labels come later (``keys``: str or int each; ``y_score`` as in
        ``update_many``)."""
        self._many(PREDICTIONS, keys, y_pred, t, ("keys", "y_pred"), y_score=y_score)

    def label_many(self, keys: Any, y_true: Any, t: Any = None) -> None:
        """Send a batch of true labels of earlier predictions."""
        self._many(LABELS, keys, y_true, t, ("keys", "y_true"))

    def _many(self, kind: int, first: Any, second: Any, t: Any, names: tuple[str, str], *,
              y_score: Any = None) -> None:
        a, b = checks.column(first, names[0]), checks.column(second, names[1])
        if len(a) != len(b):
            raise ValueError(f"{names[0]} and {names[1]} must have the same length, got {len(a)} and {len(b)}")
        a = [_key(v) for v in a] if kind != SAMPLES else [_label(v, names[0]) for v in a]
        b = [_label(v, names[1]) for v in b]
        if t is None:
            times: list[Any] = [_now()] * len(a) if self._stamp else [None] * len(a)
        elif isinstance(t, (list, tuple, range)) or hasattr(t, "tolist"):
            times = [_when(v) for v in checks.column(t, "t")]
            if len(times) != len(a):
                raise ValueError(f"t must have one time per row ({len(a)}), got {len(times)}")
            later = next((i for i in range(1, len(times)) if times[i] < times[i - 1]), None)
            if later is not None:  # the server refuses the whole batch: say so now, naming the row
                raise ValueError(f"t must never decrease, but t[{later}]={times[later]!r} < "
                                 f"t[{later - 1}]={times[later - 1]!r}")
        else:
            times = [_when(t)] * len(a)
        rows: list[tuple[Any, ...]]
        if y_score is None:
            rows = [(kind, x, y, s) for x, y, s in zip(a, b, times, strict=True)]
        else:
            given = checks.scores(y_score, len(a))
            rows = [(kind, x, y, s, p) for x, y, s, p in zip(a, b, times, given, strict=True)]
        if self._lane is not None:
            self._lane.buffer.extend(rows)
            self._lane.grew()
            return
        parts: list[list[Any]] = [[] for _ in self._lanes]
        for row in rows:
            index = zlib.crc32(str(row[1]).encode()) % self._servers if kind != SAMPLES else \
                next(self._turn) % self._servers
            parts[index].append(row)
        for lane, part in zip(self._lanes, parts, strict=True):
            if part:
                lane.buffer.extend(part)
                lane.grew()

    # -- flushing, counters, lifecycle ------------------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every row buffered before the call is acknowledged by its server (or dropped or refused, and
        counted), at most ``timeout`` seconds (None: no limit); True if all were, False on timeout."""
        if self.closed:
            return not self.buffered
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        marks = [lane.mark() for lane in self._lanes]
        for mark in marks:
            if mark is not None and not mark.wait(None if deadline == math.inf else
                                                  max(0.0, deadline - time.monotonic())):
                return False
        return True

    def close(self, timeout: float = 5.0) -> bool:
        """Flush (at most ``timeout`` seconds), then stop sending (a request under way gets up to one more second):
        rows still unsent are dropped and counted. Returns what ``flush`` returned. Later calls raise
        ``RuntimeError``."""
        if self.closed:
            return not self.buffered
        flushed = self.flush(timeout)
        self.closed = True
        for lane in self._lanes:
            lane.stop(1.0)
        with _open_lock:
            _open.discard(self)
        return flushed

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(self.exit_timeout)

    @property
    def dropped(self) -> int:
        """Rows dropped: the buffer was full while the server did not acknowledge, or still unsent at close."""
        return sum(sum(lane.dropped) for lane in self._lanes)

    @property
    def dropped_by_kind(self) -> dict[str, int]:
        """``dropped`` by kind of row: samples, predictions, labels."""
        return {kind: sum(lane.dropped[i] for lane in self._lanes) for i, kind in enumerate(KINDS)}

    @property
    def rejected(self) -> int:
        """Rows of batches a server refused (a 400 names the bad row; logged on logger ``streammon.client``)."""
        return sum(lane.rejected for lane in self._lanes)

    @property
    def sent(self) -> int:
        """Rows the servers acknowledged (committed to their journals and counted)."""
        return sum(lane.sent for lane in self._lanes)

    @property
    def buffered(self) -> int:
        """Rows waiting in the buffers (the batches being sent not included)."""
        return sum(sum(1 for row in lane.buffer if row[0] != MARK) for lane in self._lanes)

    def __repr__(self) -> str:
        return (f"Client({list(self.urls)!r}, {self.model!r}, sent={self.sent}, buffered={self.buffered}, "
                f"dropped={self.dropped}, rejected={self.rejected}{', closed' if self.closed else ''})")


def _close_all() -> None:
    """At exit: flush and close every open client, each within its ``exit_timeout``."""
    with _open_lock:
        clients = list(_open)
    for client in clients:
        client.close(client.exit_timeout)


def _after_fork_in_child() -> None:
    """In a forked child: every client starts afresh (empty buffers, new locks, no thread, no connection)."""
    global _open_lock  # noqa: PLW0603 - the parent's lock may have been held at the fork
    _open_lock = threading.Lock()
    for client in list(_open):
        for lane in client._lanes:
            lane.reset()
        client._turn = itertools.count()


atexit.register(_close_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
