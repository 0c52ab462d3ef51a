"""A scored sample of ``update`` as one bytes record: what the per-sample buffer holds, and how it is read back.

``Monitor.update`` buffers a sample without taking the lock (``streammon.intake``). A scored sample used to be a
``(cell, scores)`` tuple: two objects the garbage collector tracks, and ten Python floats to convert one by one
when the buffer is flushed — at K = 10 that was most of the cost of a score. A record is instead the sample's
cell id (int64) and its C scores (float64), little-endian, packed by one ``struct`` call:

- packing converts every score to a machine double in C, and the record is one immutable ``bytes`` object,
  appended in one atomic ``list.append`` as the cell ids are, and not tracked by the garbage collector;
- a buffer of records becomes the cell ids and the (n, C) scores with one ``bytes.join`` and ``np.frombuffer``.

``packed_row`` is the lock-free path's check of a K-class row (``ScoreRecords.lock_free``, the same check with
its constants bound, is what ``update`` calls): it returns the record only for a row it proves valid — every
score in [0, 1], the row summing to 1 within ``SUM_TOLERANCE`` — from the packed doubles' sign bits (the top
byte of each: all below 0x80, one ``bytes.isascii`` in C, where ``min`` or ``sorted`` compare ten Python floats)
and ``sum``: a finite sum within the tolerance rules out NaN and inf, non-negative terms of a sum at most 1 are
each at most 1 (a float sum of non-negative terms is at least each of them). A row whose sum is above 1 (by at
most the tolerance) could hold one score in (1, 1 + ``SUM_TOLERANCE``]; each of those has 0x3F, 0xF0 as its top
two bytes, so where no score's second byte is 0xF0 (one ``in`` over a slice, in C) there is none, and ``max``
decides only where one is. Anything else (None) goes to the checked path, which accepts it or refuses it with
the error naming the value (``streammon.counting.score_input``).

>>> r = ScoreRecords(3)
>>> record = packed_row(r.pack, 7, [0.2, 0.3, 0.5])
>>> len(record), packed_row(r.pack, 7, [0.2, 0.3, 0.6]), packed_row(r.pack, 7, [1.2, -0.2, 0.0])
(32, None, None)
>>> cells, scores = r.unpack([record, 4, r.pack(9, 0.0, 1.0, 0.0)])
>>> cells.tolist(), scores.tolist()
([7, 4, 9], [[0.2, 0.3, 0.5], [nan, nan, nan], [0.0, 1.0, 0.0]])
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.score_input import SUM_TOLERANCE

LOW, HIGH = 1.0 - SUM_TOLERANCE, 1.0 + SUM_TOLERANCE


class ScoreRecords:
    """The record layout of a monitor with ``columns`` score columns: ``pack(cell, *scores)`` and ``unpack``."""

    __slots__ = ("columns", "dtype", "lock_free", "pack")

    def __init__(self, columns: int) -> None:
        self.columns = columns
        self.pack: Callable[..., bytes] = struct.Struct(f"<q{columns}d").pack
        # update's record of a sample whose score it proves valid, else None: a K-class row or a binary float
        self.lock_free: Callable[[int, Any], bytes | None] = (row_records(self.pack) if columns > 1
                                                               else float_records(self.pack))
        self.dtype = np.dtype([("cell", "<i8"), ("score", "<f8", (columns,))])

    def record(self, cell: int, score: float | Sequence[float]) -> bytes:
        """The record of a sample whose score was checked already (a float if binary, else a row)."""
        if isinstance(score, (int, float)):
            return self.pack(cell, score)
        return self.pack(cell, *score)

    def unpack(self, items: list[Any]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64] | None]:
        """Buffered samples — cell ids (int) and records — as cell ids and (n, C) scores (NaN rows for the samples
        without a score; None if none has one)."""
        n = len(items)
        try:  # every sample scored (a user who passes scores passes them all): one join, no loop
            parts = np.frombuffer(b"".join(items), dtype=self.dtype)
        except TypeError:  # some sample without a score: an int among the records
            pass
        else:
            return parts["cell"].astype(np.intp), np.ascontiguousarray(parts["score"])
        scored = np.array([type(item) is bytes for item in items], dtype=np.bool_)
        if not scored.any():
            return np.fromiter(items, dtype=np.intp, count=n), None
        where = np.flatnonzero(scored)
        plain = np.flatnonzero(~scored)
        parts = np.frombuffer(b"".join([items[i] for i in where.tolist()]), dtype=self.dtype)
        cells = np.empty(n, np.intp)
        cells[where] = parts["cell"]
        cells[plain] = np.fromiter([items[i] for i in plain.tolist()], dtype=np.intp, count=len(plain))
        scores = np.full((n, self.columns), np.nan)
        scores[where] = parts["score"]
        return cells, scores


def row_records(pack: Callable[..., bytes]) -> Callable[[int, Any], bytes | None]:
    """``packed_row`` for one record layout, its constants bound once: what ``update`` calls for every K-class
    row (a closure's cells are read faster than a module's globals, and two arguments passed fewer)."""
    low, high, ndarray = LOW, HIGH, np.ndarray
    errors = (struct.error, TypeError, ValueError, OverflowError)  # another length, or not real numbers

    def packed(cell: int, row: Any) -> bytes | None:
        kind = type(row)
        if kind is not list and kind is not tuple:  # any other iterable (a set, a generator) is the checked path's
            if kind is not ndarray or row.ndim != 1:
                return None
            row = row.tolist()  # a row of predict_proba: its values as Python numbers, as the checked path reads them
        try:
            record = pack(cell, *row)
            total = sum(row)
        except errors:
            return None
        # the top byte of double i, byte 15 + 8i (little-endian, after the cell's 8), is below 0x80 where the sign
        # is clear: every score is >= +0 or a NaN/inf, which makes the sum fail its test
        if low <= total <= 1.0:
            if record[15::8].isascii():
                return record
        # a sum above 1: a score above 1 would be in (1, high], every one of which has 0x3F, 0xF0 as its top two
        # bytes (as long as high < 1 + 1/16); where no score's second byte (14 + 8i) is 0xF0 none is (else max)
        elif 1.0 < total <= high and record[15::8].isascii() and (0xF0 not in record[14::8] or max(row) <= 1.0):
            return record
        return None

    return packed


def float_records(pack: Callable[..., bytes]) -> Callable[[int, Any], bytes | None]:
    """The record of a binary monitor's score, a Python or numpy float in [0, 1], else None (the checked path:
    an int, a NaN, a string... is judged there)."""
    double = np.float64

    def packed(cell: int, score: Any) -> bytes | None:
        if (type(score) is float or type(score) is double) and 0.0 <= score <= 1.0:
            return pack(cell, score)
        return None

    return packed


def packed_row(pack: Callable[..., bytes], cell: int, row: Any) -> bytes | None:
    """The record of ``cell`` and a K-class ``row`` (a list, tuple or 1-D array of K numbers, K the record's
    columns) if the row is valid, else None (see the module docstring: None also for some valid rows, which the
    checked path then accepts). ``pack`` refuses a row of another length."""
    return row_records(pack)(cell, row)
