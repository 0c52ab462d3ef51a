"""The journal's file format (``streammon.pending.sqlite``): its tables and their columns, the statements that
write rows and read them back in order, and a row read back as it was accepted (``Samples``, score rows).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from streammon.state import decode_label

FORMAT = "streammon.pending"
VERSION = 3  # 2: a column says which labels are bools (version 1 stored True as 1); 3: predictions and batches
# carry their scores (y_score=); older versions are upgraded on open

_OPS_COLUMNS = ("id", "kind", "key", "label", "t", "label_bool", "score")
_SAMPLES_COLUMNS = ("id", "classes", "y_true", "y_pred", "t", "times", "clocked", "scores")
_SEEN_COLUMNS = ("batch", "id", "accepted")
_SCHEMA = {
    "meta": "CREATE TABLE meta (name TEXT PRIMARY KEY, value)",
    # score: a prediction's score row as little-endian float64s (NULL: none)
    "ops": "CREATE TABLE ops (id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, key NOT NULL, label NOT NULL, "
           "t REAL NOT NULL, label_bool INTEGER NOT NULL DEFAULT 0, score BLOB)",
    # a batch of labelled samples, one row: its classes (typed JSON) and two int32 columns of indices into them;
    # scores: its (n, C) scores as little-endian float64s (NULL: none)
    "samples": "CREATE TABLE samples (id INTEGER PRIMARY KEY, classes TEXT NOT NULL, y_true BLOB NOT NULL, "
               "y_pred BLOB NOT NULL, t REAL, times BLOB, clocked INTEGER NOT NULL, scores BLOB)",
    # the ids of recent batches (HTTP Idempotency-Key), written in the batch's own transaction
    "seen": "CREATE TABLE seen (batch TEXT PRIMARY KEY, id INTEGER NOT NULL, accepted INTEGER NOT NULL)",
}
_COLUMNS = {"meta": ("name", "value"), "ops": _OPS_COLUMNS, "samples": _SAMPLES_COLUMNS, "seen": _SEEN_COLUMNS}
_INSERT = "INSERT INTO ops (id, kind, key, label, t) VALUES (?, ?, ?, ?, ?)"
_INSERT_TYPED = "INSERT INTO ops (id, kind, key, label, t, label_bool) VALUES (?, ?, ?, ?, ?, ?)"
_INSERT_SCORED = "INSERT INTO ops (id, kind, key, label, t, label_bool, score) VALUES (?, ?, ?, ?, ?, ?, ?)"
_REPLAY = ("SELECT id, kind, key, label, t, label_bool, NULL, NULL, score FROM ops WHERE id > ? "
           "UNION ALL SELECT id, 3, classes, y_true, t, clocked, y_pred, times, scores FROM samples WHERE id > ? "
           "ORDER BY id")


@dataclass(frozen=True)
class Samples:
    """A journalled ``update_many`` batch: the labels as object arrays, its time(s), and whether the clock gave it."""

    y_true: np.ndarray
    y_pred: np.ndarray
    t: float | np.ndarray | None
    clocked: bool
    scores: np.ndarray | None = None  # (n, C) float64, as update_many checked them


def _samples(classes: str, y_true: bytes, y_pred: bytes, t: float | None, *, times: bytes | None,
             clocked: int, scores: bytes | None = None) -> Samples:
    """A ``samples`` row back as labels (checked again when replayed through ``update_many``)."""
    labels = np.empty(0, dtype=object)
    labels = np.array([decode_label(item) for item in json.loads(classes)] or labels, dtype=object)
    true = labels[np.frombuffer(y_true, "<i4")]
    given = None if scores is None else np.frombuffer(scores, "<f8").reshape(len(true), -1)
    return Samples(true, labels[np.frombuffer(y_pred, "<i4")], t if times is None else np.frombuffer(times, "<f8"),
                   bool(clocked), given)


def _rows(blobs: list[bytes]) -> np.ndarray | None:
    """Score rows stored one a prediction back as an (n, C) array (None for a run without scores)."""
    if not blobs:
        return None
    return np.frombuffer(b"".join(blobs), "<f8").reshape(len(blobs), -1)
