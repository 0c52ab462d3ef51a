"""Predictions waiting for their labels: an in-memory record store and a durable SQLite journal.

``PendingRecords`` (``memory.py``) is the working set — the key of every prediction still
waiting for its label, its predicted class and time — bounded by a count (``max_pending``), by
accounted bytes (``max_pending_bytes``, ``sizes.py``) and by an age (``label_ttl``).
``Journal`` (``sqlite.py``) makes it durable: every accepted ``predict``/``label`` call is
appended to an SQLite log and committed before the call returns, and the log since the last
``Monitor.save`` is replayed on restart. See ``Monitor`` for the
rules a caller sees (what is an orphan, a duplicate, an expired prediction).

>>> records = PendingRecords(max_pending=2, label_ttl=60.0)
>>> records.put("tx-1", 0, 10.0), records.put("tx-2", 1, 11.0), records.put("tx-1", 1, 12.0)
(0, 1, -1)
>>> records.take("tx-1", 20.0), records.take("tx-1", 21.0), records.take("nope", 21.0)
((0, 0, 10.0), 'duplicate', 'orphan')
"""

from __future__ import annotations

from streammon.pending.keys import MAX_KEY_LENGTH, check_key, check_keys
from streammon.pending.memory import DEFAULT_LABEL_TTL, DEFAULT_MAX_PENDING, PendingRecords, Settled
from streammon.pending.sizes import DEFAULT_MAX_PENDING_BYTES, record_bytes
from streammon.pending.sqlite import Journal, JournalBusy

__all__ = [
    "DEFAULT_LABEL_TTL",
    "DEFAULT_MAX_PENDING",
    "DEFAULT_MAX_PENDING_BYTES",
    "MAX_KEY_LENGTH",
    "Journal",
    "JournalBusy",
    "PendingRecords",
    "Settled",
    "check_key",
    "check_keys",
    "record_bytes",
]
