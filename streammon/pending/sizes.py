"""What a pending record accounts for, in bytes: the measure ``max_pending_bytes`` bounds.

An estimate from the key alone, the same on every machine and Python version (so a store saved
and loaded evicts at the same point): ``RECORD_BYTES`` for the record (its dict entry and index,
sequence number, time, class and order slot, as measured at the bound by
``examples/bench_pending_memory.py``) plus its key object: an int 32 B; an ASCII str 64 B and
1 B a character; any other str 80 B and 4 B a character (its widest form). A record counts
while the store keeps its key: pending, or joined (a tombstone); a record that left counts nothing.

>>> record_bytes(7), record_bytes("tx-81723"), record_bytes("z" * 512), record_bytes("é" * 512)
(192, 232, 736, 2288)
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from streammon.pending.keys import MAX_KEY_LENGTH

DEFAULT_MAX_PENDING_BYTES = 256 * 2**20

# accounted bytes of a record (key_bytes, record_bytes): an estimate from the key alone, the same on every machine
RECORD_BYTES = 160  # dict entry and index, sequence number, time, class and order slot
INT_BYTES = 32  # an int key
STR_BYTES = 64  # an ASCII str key: this + 1 B per character
WIDE_STR_BYTES, WIDE_CHAR_BYTES = 80, 4  # any other str key: this + 4 B per character
MAX_KEY_BYTES = WIDE_STR_BYTES + WIDE_CHAR_BYTES * MAX_KEY_LENGTH
SCORE_BYTES = 128  # a pending prediction's binary score: its dict entry, sequence number and float
ROW_BYTES, COLUMN_BYTES = 136, 32  # a K-class score row: dict entry, sequence number, tuple; per column a float
MIN_PENDING_BYTES = RECORD_BYTES + MAX_KEY_BYTES  # one record of the longest key
MAX_PENDING_BYTES = 2**53


def key_bytes(key: Hashable) -> int:
    """The bytes a record accounts for its key (the key object it keeps alive).

    >>> key_bytes(12345), key_bytes("tx-1"), key_bytes("tx-é")
    (32, 68, 96)
    """
    if type(key) is str:
        return len(key) + STR_BYTES if key.isascii() else WIDE_CHAR_BYTES * len(key) + WIDE_STR_BYTES
    return INT_BYTES


def record_bytes(key: Hashable) -> int:
    """The bytes a record of ``key`` accounts for while it is held: ``RECORD_BYTES`` and ``key_bytes``.

    >>> record_bytes("tx-1") == RECORD_BYTES + 68
    True
    """
    return RECORD_BYTES + key_bytes(key)


def check_max_pending_bytes(value: Any) -> int:
    """``value`` if it is a valid ``max_pending_bytes``, else ``TypeError``/``ValueError`` saying what is expected.

    >>> check_max_pending_bytes(2**20)
    1048576
    >>> check_max_pending_bytes(0)
    Traceback (most recent call last):
    ...
    ValueError: max_pending_bytes must be an int in [2,288, 2**53] (bytes; the least holds one longest key), got 0
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"max_pending_bytes must be an int (bytes), got {value!r} ({type(value).__name__})")
    if not MIN_PENDING_BYTES <= value <= MAX_PENDING_BYTES:
        raise ValueError(f"max_pending_bytes must be an int in [{MIN_PENDING_BYTES:,}, 2**53] (bytes; the least holds "
                         f"one longest key), got {value!r}")
    return int(value)


def score_bytes(columns: int) -> int:
    """The bytes a pending prediction's score accounts for (``y_score=``), on top of its record's.

    >>> score_bytes(1), score_bytes(3)
    (128, 232)
    """
    return SCORE_BYTES if columns == 1 else ROW_BYTES + COLUMN_BYTES * columns
