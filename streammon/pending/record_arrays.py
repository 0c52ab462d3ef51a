"""The records of the pending store (``streammon.pending.memory``) and how they leave it, oldest first.

Records sit in arrays indexed by sequence number (key, time, class), a dict from key to sequence number beside
them (a joined record as a tombstone, ``-(seq + 1)``). A record leaves when a time more than ``label_ttl`` after
its prediction is seen (*expired*), when ``max_pending`` newer predictions were accepted or the records account
for more than ``max_pending_bytes`` (*evicted*), or when its key is predicted afresh after its label (a tombstone
*superseded*); a pending one that leaves is kept, with its status, until drained (``Settled``).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from streammon.pending.sizes import (
    DEFAULT_MAX_PENDING_BYTES,
    INT_BYTES,
    RECORD_BYTES,
    STR_BYTES,
    WIDE_CHAR_BYTES,
    WIDE_STR_BYTES,
    check_max_pending_bytes,
    record_bytes,
    score_bytes,
)

DEFAULT_MAX_PENDING = 1_000_000
DEFAULT_LABEL_TTL = 90 * 86_400.0  # seconds: 90 days, the far end of chargeback delays
EXPIRED = 2  # status of a record that outlived label_ttl (prediction-side windows: column 2)
EVICTED = 3  # status of a record pushed out by max_pending newer predictions (column 3)


@dataclass(frozen=True)
class Settled:
    """Records that left the store unlabelled, as parallel lists (drained by the caller)."""

    seqs: list[int]
    codes: list[int]
    times: list[float]
    status: list[int]


class RecordArrays:
    """The records held and how they leave (see the module docstring); ``PendingRecords`` puts and joins them."""

    def __init__(self, *, max_pending: int = DEFAULT_MAX_PENDING, label_ttl: float = DEFAULT_LABEL_TTL,
                 max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES) -> None:
        if isinstance(max_pending, bool) or not isinstance(max_pending, int) or max_pending < 1:
            raise ValueError(f"max_pending must be an int >= 1, got {max_pending!r}")
        if isinstance(label_ttl, bool) or not isinstance(label_ttl, (int, float)) or not label_ttl > 0:
            raise ValueError(f"label_ttl must be seconds > 0 (math.inf: never), got {label_ttl!r}")
        self.max_pending = max_pending
        self.label_ttl = float(label_ttl)
        self.max_pending_bytes = check_max_pending_bytes(max_pending_bytes)
        self._keys: dict[Hashable, int] = {}  # seq >= 0: pending; -(seq + 1): joined (a tombstone)
        self._order: list[Any] = []  # key of each sequence number from _base (None: the record left or was superseded)
        self._times = array("d")
        self._codes = array("H")  # class indices: below HARD_MAX_CLASSES (46,340)
        self._base = 0  # sequence number of _order[0]
        self._head = 0  # every record before it has left
        self.next_seq = 0
        self.pending = 0
        self.held_bytes = 0  # accounted bytes of the records in _keys (pending and tombstones: see record_bytes)
        self.gone_seqs: list[int] = []
        self.gone_codes: list[int] = []
        self.gone_times: list[float] = []
        self.gone_status: list[int] = []
        self.scores: dict[int, Any] = {}  # seq -> the score of a pending prediction given one (y_score=)

    def __len__(self) -> int:
        """Records held (pending and tombstones)."""
        return self.next_seq - self._head

    def pop_score(self, seq: int) -> Any:
        """The score of prediction ``seq`` (None if it had none), forgotten."""
        row = self.scores.pop(seq, None)
        if row is not None:
            self.held_bytes -= score_bytes(1 if type(row) is float else len(row))
        return row

    def expire(self, now: float) -> None:
        """Expire every pending record predicted more than ``label_ttl`` seconds before ``now`` (and forget
        joined ones as old): ``now`` is the latest time seen, a label's, an update's, a prediction's or a read's."""
        ttl = self.label_ttl
        while self._head < self.next_seq and self._times[self._head - self._base] + ttl < now:
            self._drop_head(EXPIRED)

    def _evict(self) -> None:
        """Evict the oldest records until at most ``max_pending`` are held within ``max_pending_bytes`` (the newest
        always fits: the bound is at least one record of the longest key)."""
        while self.next_seq - self._head > self.max_pending or self.held_bytes > self.max_pending_bytes:
            self._drop_head(EVICTED)

    def _drop_head(self, status: int) -> None:
        """Let the oldest record go: a pending one leaves with ``status`` (as ``_leave``), a tombstone is forgotten.

        Every slot still holding a key is that key's record in ``_keys``: a record that leaves early or is
        superseded gives its slot's key up at once (``_leave``, ``_supersede``), so no lookup is needed here."""
        seq = self._head
        at = seq - self._base
        order = self._order
        key = order[at]
        if key is not None:
            order[at] = None
            self.held_bytes -= (RECORD_BYTES + (len(key) + STR_BYTES if key.isascii() else WIDE_CHAR_BYTES * len(key)
                                                + WIDE_STR_BYTES) if type(key) is str else RECORD_BYTES + INT_BYTES)
            if self._keys.pop(key) >= 0:
                self.pending -= 1
                if self.scores:
                    self.pop_score(seq)
                self.gone_seqs.append(seq)
                self.gone_codes.append(self._codes[at])
                self.gone_times.append(self._times[at])
                self.gone_status.append(status)
        self._head = seq + 1
        if at > 4096 and 4 * at > len(order):  # a quarter has gone: 3 moves per record, amortized
            del order[: at + 1], self._times[: at + 1], self._codes[: at + 1]
            self._base = seq + 1

    def _supersede(self, key: Hashable, seq: int) -> None:
        """Forget the joined record ``seq`` of ``key`` (predicted afresh): its slot holds no key any more."""
        del self._keys[key]  # the dict then keeps the new key object, not this record's
        self._order[seq - self._base] = None
        self.held_bytes -= record_bytes(key)

    def _leave(self, key: Hashable, seq: int, status: int) -> None:
        del self._keys[key]
        self.pending -= 1
        at = seq - self._base
        self._order[at] = None  # the key object is freed now, not when the head passes
        self.held_bytes -= (RECORD_BYTES + (len(key) + STR_BYTES if key.isascii() else WIDE_CHAR_BYTES * len(key)
                                            + WIDE_STR_BYTES) if type(key) is str else RECORD_BYTES + INT_BYTES)
        if self.scores:
            self.pop_score(seq)
        self.gone_seqs.append(seq)
        self.gone_codes.append(self._codes[at])
        self.gone_times.append(self._times[at])
        self.gone_status.append(status)

    def drain(self) -> Settled:
        """The records that left unlabelled since the last drain."""
        out = Settled(self.gone_seqs, self.gone_codes, self.gone_times, self.gone_status)
        self.gone_seqs, self.gone_codes, self.gone_times, self.gone_status = [], [], [], []
        return out

    def oldest_time(self) -> float:
        """The prediction time of the oldest record still held (``inf`` when empty)."""
        return self._times[self._head - self._base] if self._head < self.next_seq else math.inf
