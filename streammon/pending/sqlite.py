"""The durable side of the pending store: an SQLite journal of every accepted predict/label call.

Each accepted ``predict``/``predict_many``/``label``/``label_many`` call appends its validated
rows (kind, key, label, time — times resolved, so replaying needs no clock) in one transaction,
committed before the call returns: an acknowledged call (one that returned) survives ``kill -9``
of the process (WAL mode, ``synchronous=NORMAL``; pass ``synchronous="FULL"`` to survive a power
loss too, at the cost of an fsync per call). ``Monitor.save`` records the last journal row in
the state file, then deletes the rows it covers (``truncate``); on restart the rows after the
state file's mark are replayed through the same code that accepted them, so nothing acknowledged
is lost and nothing is counted twice. Errors are logged on the ``streammon.pending`` logger and
raised; a failed append changes nothing (it is rolled back before the monitor counts anything).

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "pending.sqlite")
>>> j = Journal(path)
>>> j.append(PREDICT, ["a", 2], ["fraud", "legit"], [1.0, 2.0]), j.append(LABEL, ["a"], ["fraud"], [5.0])
(2, 3)
>>> [(kind, keys, labels) for kind, keys, labels, _, _ in j.replay(after=1)]
[(1, [2], ['legit']), (2, ['a'], ['fraud'])]
>>> j.truncate(3); j.truncated_to, j.last_id
(3, 3)
>>> j.close()
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

logger = logging.getLogger("streammon.pending")

FORMAT = "streammon.pending"
VERSION = 1
PREDICT = 1
LABEL = 2
REPLAY_CHUNK = 1 << 16

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value)",
    "CREATE TABLE IF NOT EXISTS ops (id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, key NOT NULL, "
    "label NOT NULL, t REAL NOT NULL)",
)


class Journal:
    """An append-only SQLite log of accepted predict/label rows since the last checkpoint."""

    def __init__(self, path: str | os.PathLike[str], *, synchronous: str = "NORMAL") -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be 'NORMAL' or 'FULL', got {synchronous!r}")
        self.path = os.fspath(path)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            for statement in _SCHEMA:
                self._db.execute(statement)
            meta = dict(self._db.execute("SELECT name, value FROM meta").fetchall())
            if not meta:
                self._db.executemany("INSERT INTO meta VALUES (?, ?)",
                                     [("format", FORMAT), ("version", VERSION), ("truncated_to", 0)])
                meta = {"format": FORMAT, "version": VERSION, "truncated_to": 0}
            if meta.get("format") != FORMAT or meta.get("version") != VERSION:
                raise ValueError(f"{self.path} is not a streammon pending store (format {meta.get('format')!r}, "
                                 f"version {meta.get('version')!r})")
            truncated = meta.get("truncated_to")
            if isinstance(truncated, bool) or not isinstance(truncated, int) or truncated < 0:
                raise ValueError(f"{self.path}: truncated_to must be an int >= 0, got {truncated!r}")
            self.truncated_to = truncated
            top = self._db.execute("SELECT max(id) FROM ops").fetchone()[0]
        except sqlite3.Error as exc:
            logger.error("cannot open the pending store %s: %r", self.path, exc)
            raise ValueError(f"cannot open the pending store {self.path}: {exc}") from exc
        self.last_id = max(truncated, top or 0)

    def append(self, kind: int, keys: Sequence[Any], labels: Sequence[Any], times: Sequence[float]) -> int:
        """Write and commit one call's rows; the id of its last row. Nothing is written on error."""
        first = self.last_id + 1
        rows = zip(range(first, first + len(keys)), [kind] * len(keys), keys, labels, times, strict=True)
        try:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT INTO ops VALUES (?, ?, ?, ?, ?)", rows)
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            logger.error("pending store %s: append of %d rows failed: %r", self.path, len(keys), exc)
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self.last_id = first + len(keys) - 1
        return self.last_id

    def truncate(self, upto: int) -> None:
        """Delete the rows up to ``upto`` (a checkpoint now holds them)."""
        upto = min(upto, self.last_id)
        if upto <= self.truncated_to:
            return
        try:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM ops WHERE id <= ?", (upto,))
            self._db.execute("UPDATE meta SET value = ? WHERE name = 'truncated_to'", (upto,))
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            logger.error("pending store %s: truncate to %d failed: %r", self.path, upto, exc)
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self.truncated_to = upto

    def replay(self, after: int) -> Iterator[tuple[int, list[Any], list[Any], list[float], int]]:
        """The rows after ``after``, as runs of one kind: ``(kind, keys, labels, times, last id)``."""
        cursor = self._db.execute("SELECT id, kind, key, label, t FROM ops WHERE id > ? ORDER BY id", (after,))
        run: tuple[int, list[Any], list[Any], list[float]] | None = None
        last = after
        while rows := cursor.fetchmany(REPLAY_CHUNK):
            for row_id, kind, key, label, t in rows:
                if run is not None and (run[0] != kind or len(run[1]) >= REPLAY_CHUNK):
                    yield (*run, last)
                    run = None
                if run is None:
                    run = (kind, [], [], [])
                run[1].append(key)
                run[2].append(label)
                run[3].append(t)
                last = row_id
        if run is not None:
            yield (*run, last)

    def close(self) -> None:
        """Close the database (every acknowledged row is committed already)."""
        self._db.close()
