"""The durable side of the pending store: an SQLite journal of every accepted predict/label call.

Each accepted ``predict``/``predict_many``/``label``/``label_many`` call appends its validated
rows (kind, key, label, time — times resolved, so replaying needs no clock) in one transaction,
committed before the call returns: an acknowledged call (one that returned) survives ``kill -9``
of the process (WAL mode, ``synchronous=NORMAL``; pass ``synchronous="FULL"`` to survive a power
loss too, at the cost of an fsync per call). Labels come back with their type (``True`` stays a
bool, not ``1``). ``Monitor.save`` records the last journal row in the state file, then deletes
the rows it covers (``truncate``); on restart the rows after the state file's mark are replayed
through the same code that accepted them, so nothing acknowledged is lost and nothing is counted
twice (``docs/explanation/durability.md`` says why, step by step).

One journal has one writer. Opening takes an exclusive ``flock`` on the database file, which
the OS releases when the process dies: a second opener — another worker process, or a restart
while the old process still runs — is refused at once (``JournalBusy``), never on the prediction
path. Every use of the connection holds the journal's own lock, so an append and a truncation
never interleave their transactions whichever threads they come from. A database that is not a
streammon journal (other tables, renamed or extra columns) is refused before anything is written.
Errors are logged on the ``streammon.pending`` logger and raised; a failed append changes nothing
(it is rolled back before the monitor counts anything).

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "pending.sqlite")
>>> j = Journal(path)
>>> j.append(PREDICT, ["a", 2], ["fraud", True], [1.0, 2.0]), j.append(LABEL, ["a"], ["fraud"], [5.0])
(2, 3)
>>> [(kind, keys, labels) for kind, keys, labels, _, _ in j.replay(after=1)]
[(1, [2], [True]), (2, ['a'], ['fraud'])]
>>> Journal(path)
Traceback (most recent call last):
...
streammon.pending.sqlite.JournalBusy: the pending store ... is open in another monitor ...
>>> j.truncate(3); j.truncated_to, j.last_id
(3, 3)
>>> j.close()
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import sqlite3
import threading
import weakref
from collections.abc import Generator, Hashable, Sequence
from typing import Any

import numpy as np

from streammon.pending.journal_format import (
    _COLUMNS,
    _INSERT,
    _INSERT_SCORED,
    _INSERT_TYPED,
    _OPS_COLUMNS,
    _REPLAY,
    _SAMPLES_COLUMNS,
    _SCHEMA,
    FORMAT,
    VERSION,
    _rows,
    _samples,
)
from streammon.pending.journal_format import Samples as Samples  # noqa: PLC0414 (re-exported: moved there)
from streammon.state import encode_label

logger = logging.getLogger("streammon.pending")

PREDICT = 1
LABEL = 2
SAMPLES = 3
MAX_REMEMBERED = 100_000  # batch ids (Idempotency-Key) remembered: a retry after this many newer batches counts again
REPLAY_CHUNK = 1 << 16
TRUNCATE_CHUNK = 1 << 14  # rows deleted per transaction: appends wait at most one chunk's deletion


class JournalBusy(ValueError):
    """The journal is open in another monitor, of this process or another: one journal has one writer."""


class Journal:
    """An append-only SQLite log of accepted predict/label rows since the last checkpoint (one writer)."""

    def __init__(self, path: str | os.PathLike[str], *, synchronous: str = "NORMAL") -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be 'NORMAL' or 'FULL', got {synchronous!r}")
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._owner = _lock_file(self.path)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            os.close(self._owner)
            raise ValueError(f"cannot open the pending store {self.path}: {exc}") from exc
        try:
            self.truncated_to, top = self._open(synchronous)
        except (sqlite3.Error, ValueError) as exc:
            self._db.close()
            os.close(self._owner)
            if isinstance(exc, ValueError):
                raise
            logger.error("cannot open the pending store %s: %r", self.path, exc)
            raise ValueError(f"cannot open the pending store {self.path}: {exc}") from exc
        self.last_id = max(self.truncated_to, top)
        self._closer = weakref.finalize(self, _release, self._db, self._owner)  # a monitor dropped unclosed
        self._accepting = True

    def _open(self, synchronous: str) -> tuple[int, int]:
        """Check (or create) the schema, upgrading version 1; the truncation mark and the highest row id."""
        db = self._db
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("BEGIN")
            for statement in _SCHEMA.values():
                db.execute(statement)
            db.executemany("INSERT INTO meta VALUES (?, ?)",
                           [("format", FORMAT), ("version", VERSION), ("truncated_to", 0)])
            db.execute("COMMIT")
            tables = set(_SCHEMA)
        if not tables <= set(_SCHEMA) or not {"meta", "ops"} <= tables:
            raise ValueError(f"{self.path} is not a streammon pending store: it holds the tables {sorted(tables)}, "
                             f"expected {', '.join(_SCHEMA)} (point pending= at a file of its own)")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={synchronous}")
        meta = dict(db.execute("SELECT name, value FROM meta").fetchall())
        version = meta.get("version")
        if meta.get("format") != FORMAT or version not in (1, 2, VERSION):
            raise ValueError(f"{self.path} is not a streammon pending store (format {meta.get('format')!r:.60}, "
                             f"version {version!r:.60}; this streammon reads versions 1 to {VERSION})")
        expected = dict(_COLUMNS)
        if version == 1:
            expected = {"meta": _COLUMNS["meta"], "ops": _OPS_COLUMNS[:-2]}
        elif version == 2:
            expected = {**_COLUMNS, "ops": _OPS_COLUMNS[:-1], "samples": _SAMPLES_COLUMNS[:-1]}
        for table in sorted(tables | set(expected)):
            columns = tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})"))
            if columns != expected.get(table):
                raise ValueError(f"{self.path} is not a streammon pending store of version {version}: its {table} "
                                 f"table has the columns {list(columns)}, expected {list(expected.get(table, ()))}")
        if version != VERSION:  # version 1: bools were stored as ints, they stay so; new rows say which are bools
            db.execute("BEGIN")
            if version == 1:
                db.execute("ALTER TABLE ops ADD COLUMN label_bool INTEGER NOT NULL DEFAULT 0")
                db.execute(_SCHEMA["samples"])
                db.execute(_SCHEMA["seen"])
            else:  # version 2: rows without scores
                db.execute("ALTER TABLE samples ADD COLUMN scores BLOB")
            db.execute("ALTER TABLE ops ADD COLUMN score BLOB")
            db.execute("UPDATE meta SET value = ? WHERE name = 'version'", (VERSION,))
            db.execute("COMMIT")
        truncated = meta.get("truncated_to")
        if isinstance(truncated, bool) or not isinstance(truncated, int) or truncated < 0:
            raise ValueError(f"{self.path}: truncated_to must be an int >= 0, got {truncated!r:.60}")
        top = db.execute("SELECT max(m) FROM (SELECT max(id) AS m FROM ops UNION ALL SELECT max(id) FROM samples)"
                         ).fetchone()[0]
        return truncated, top or 0

    def append(self, kind: int, keys: Sequence[Any], labels: Sequence[Any], times: Sequence[float],
               batch: str | None = None, *, scores: np.ndarray | None = None) -> int:
        """Write and commit one predict/label call's rows (and its batch id, and its predictions' checked scores,
        (n, C)); the id of its last row.

        Nothing is written on error.
        """
        n = len(keys)
        with self._lock:
            first = self._check_open()
            ids = range(first, first + n)
            if scores is not None:
                flags = [int(type(label) is bool) for label in labels]
                blobs = [row.tobytes() for row in np.asarray(scores, "<f8")]
                scored = zip(ids, [kind] * n, keys, labels, times, flags, blobs, strict=True)
                return self._commit(_INSERT_SCORED, scored, n, batch, n)
            if bool in set(map(type, labels)):  # rare: the column is left to its default otherwise (faster)
                flags = [int(type(label) is bool) for label in labels]  # ints: no adapter lookup per bool
                rows: Any = zip(ids, [kind] * n, keys, labels, times, flags, strict=True)
                return self._commit(_INSERT_TYPED, rows, n, batch, n)
            return self._commit(_INSERT, zip(ids, [kind] * n, keys, labels, times, strict=True), n, batch, n)

    def append_samples(self, classes: Sequence[Hashable], y_true: np.ndarray, y_pred: np.ndarray,
                       t: float | np.ndarray | None, *, clocked: bool, batch: str | None = None,
                       scores: np.ndarray | None = None) -> int:
        """Write and commit one ``update_many`` batch as one row (``y_true``/``y_pred``: indices into ``classes``,
        ``t``: one time, one per sample, or None; ``scores``: its checked (n, C) scores, or None); the row's id."""
        row = (json.dumps([encode_label(label) for label in classes]), np.asarray(y_true, "<i4").tobytes(),
               np.asarray(y_pred, "<i4").tobytes(), t if isinstance(t, float) else None,
               None if t is None or isinstance(t, float) else np.asarray(t, "<f8").tobytes(), int(clocked),
               None if scores is None else np.asarray(scores, "<f8").tobytes())
        with self._lock:
            first = self._check_open()
            return self._commit("INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [(first, *row)], 1, batch,
                                len(y_true))

    def _check_open(self) -> int:
        """The next row's id; ``ValueError`` once closed (caller holds the lock)."""
        if not self._accepting:
            raise ValueError(f"the pending store {self.path} is closed (Monitor.close): nothing was recorded")
        return self.last_id + 1

    def _commit(self, sql: str, rows: Any, count: int, batch: str | None, accepted: int) -> int:
        """Insert ``rows`` (``count`` of them, ids from ``last_id + 1``) and record ``batch``, in one transaction
        (caller holds the lock); the id of the last row."""
        db = self._db
        try:
            db.execute("BEGIN")
            db.executemany(sql, rows)
            if batch is not None:
                db.execute("INSERT INTO seen VALUES (?, ?, ?)", (batch, self.last_id + count, accepted))
            db.execute("COMMIT")
        except (sqlite3.Error, ValueError, OverflowError) as exc:
            logger.error("pending store %s: append of %d rows failed: %r", self.path, accepted, exc)
            self._roll_back()
            raise
        self.last_id += count
        return self.last_id

    def accepted(self, batch: str) -> int | None:
        """How many rows the batch of id ``batch`` brought, if it is one of the last ``MAX_REMEMBERED``."""
        with self._lock:
            found = self._db.execute("SELECT accepted FROM seen WHERE batch = ?", (batch,)).fetchone()
        return None if found is None else int(found[0])

    def _roll_back(self) -> None:
        """Undo an open transaction and read back where the rows end (caller holds the lock)."""
        with contextlib.suppress(sqlite3.Error):
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            top = self._db.execute("SELECT max(m) FROM (SELECT max(id) AS m FROM ops UNION ALL "
                                   "SELECT max(id) FROM samples)").fetchone()[0]
            self.last_id = max(self.truncated_to, top or 0)

    def truncate(self, upto: int) -> None:
        """Delete the rows up to ``upto`` (a state file now holds them), ``TRUNCATE_CHUNK`` rows a transaction.

        The mark ``truncated_to`` advances with each chunk's deletion, in its transaction: a crash
        between chunks leaves a journal whose rows up to the mark are gone and after it are whole.
        Appends go on between chunks.
        """
        while self._truncate_chunk(upto):
            pass

    def _truncate_chunk(self, upto: int) -> bool:
        """Delete the next chunk of rows up to ``upto``; whether rows up to it remain."""
        with self._lock:
            upto = min(upto, self.last_id)
            if upto <= self.truncated_to:
                return False
            step = min(upto, self.truncated_to + TRUNCATE_CHUNK)
            try:
                self._db.execute("BEGIN")
                self._db.execute("DELETE FROM ops WHERE id <= ?", (step,))
                self._db.execute("DELETE FROM samples WHERE id <= ?", (step,))
                self._db.execute("DELETE FROM seen WHERE id <= (SELECT id FROM seen ORDER BY id DESC LIMIT 1 OFFSET ?)",
                                 (MAX_REMEMBERED,))
                self._db.execute("UPDATE meta SET value = ? WHERE name = 'truncated_to'", (step,))
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                logger.error("pending store %s: truncate to %d failed: %r", self.path, step, exc)
                self._roll_back()
                raise
            self.truncated_to = step
            return step < upto

    def replay(self, after: int) -> Generator[tuple[int, Any, Any, Any, int], None, None]:
        """The rows after ``after`` in order, predictions and labels as runs of one kind ``(kind, keys, labels,
        times, last id)``, a batch of samples as ``(SAMPLES, Samples, None, None, its id)`` (``replay_scored``
        without the scores)."""
        for kind, first, second, times, last, _ in self.replay_scored(after):
            yield kind, first, second, times, last

    def replay_scored(self, after: int) -> Generator[tuple[int, Any, Any, Any, int, np.ndarray | None], None, None]:
        """``replay`` with each run's scores: (n, C) float64 for a run of scored predictions (a run is all scored
        or all not), else None; a batch of samples carries its own (``Samples.scores``)."""
        with self._lock:
            cursor = self._db.execute(_REPLAY, (after, after))
            chunks = iter(lambda: cursor.fetchmany(REPLAY_CHUNK), [])
            run: tuple[int, list[Any], list[Any], list[float], list[bytes]] | None = None
            last = after
            for rows in chunks:
                for row_id, kind, key, label, t, flag, y_pred, times, score in rows:
                    if run is not None and (run[0] != kind or len(run[1]) >= REPLAY_CHUNK
                                            or bool(run[4]) != (score is not None)):
                        yield (*run[:4], last, _rows(run[4]))
                        run = None
                    if kind == SAMPLES:
                        samples = _samples(key, label, y_pred, t, times=times, clocked=flag, scores=score)
                        yield SAMPLES, samples, None, None, row_id, None
                        last = row_id
                        continue
                    if run is None:
                        run = (kind, [], [], [], [])
                    run[1].append(key)
                    run[2].append(bool(label) if flag else label)
                    run[3].append(t)
                    if score is not None:
                        run[4].append(score)
                    last = row_id
            if run is not None:
                yield (*run[:4], last, _rows(run[4]))

    def close(self) -> None:
        """Close the database (every acknowledged row is committed already) and let another monitor open it."""
        with self._lock:
            self._accepting = False
            self._closer()


def _release(db: sqlite3.Connection, owner: int) -> None:
    """Close the connection, then the descriptor holding the ``flock`` (SQLite's own POSIX locks go first:
    closing another descriptor of the file would drop them)."""
    db.close()
    os.close(owner)


def _lock_file(path: str) -> int:
    """A descriptor of ``path`` (created if missing) holding an exclusive ``flock``; ``JournalBusy`` if taken."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise ValueError(f"cannot open the pending store {path}: {exc.strerror}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        raise JournalBusy(
            f"the pending store {path} is open in another monitor (this process or another): a journal has one "
            "writer. Close the other monitor first; to share predictions and late labels across worker processes, "
            "send them to one `streammon serve`") from exc
    return fd
