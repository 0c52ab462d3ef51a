"""What the ``pending`` part of a state file may hold, checked before anything is built from it.

Absent (a file saved before predictions existed) means no pending prediction. Otherwise: the
store's records (``[seq, key, class index, time, joined]`` rows, sequence numbers in
``[head, next_seq)``, at most ``max_pending`` apart), the label-side windows (one per monitor
window and a lifetime one each, the prediction side ``max(capacity, 4)`` wide), the journal
mark and the settings (``max_pending_bytes`` absent: a file saved before it existed, the default); every count
matrix as its non-zero cells (``streammon.counting.sparse``).
Restoring costs about 20 bytes per sequence number between ``head`` and
``next_seq`` (at most ``max_pending``) besides the records themselves.

>>> check_pending(None, 2, 1, 2)["records"] is None
True
>>> check_pending({"records": 1}, 2, 1, 2)
Traceback (most recent call last):
...
streammon.state.StateError: pending: missing label_ttl, mark, max_pending, pred_t, repeated, side; unexpected none
>>> check_pending(None, 2, 1, 2)["max_pending_bytes"] == DEFAULT_MAX_PENDING_BYTES
True
"""

from __future__ import annotations

import math
from typing import Any

from streammon.counting.timing import MAX_TIME
from streammon.pending.keys import check_key
from streammon.pending.memory import DEFAULT_LABEL_TTL, DEFAULT_MAX_PENDING
from streammon.pending.sides import EVENT_SIDE, STATUSES
from streammon.pending.sizes import DEFAULT_MAX_PENDING_BYTES, MAX_PENDING_BYTES, MIN_PENDING_BYTES
from streammon.state import StateError
from streammon.state_schema.fields import MAX_COUNT, _fields, _int, _list, _matrix, _real

PENDING = ("records", "side", "mark", "pred_t", "repeated", "max_pending", "label_ttl")
MAX_PENDING = 2**31 - 1


def check_pending(value: Any, capacity: int, windows: int, k: int) -> dict[str, Any]:
    """The checked ``pending`` section (defaults when absent); ``StateError`` naming the first bad field."""
    if value is None:
        return {"records": None, "side": None, "mark": 0, "pred_t": None, "repeated": 0,
                "max_pending": DEFAULT_MAX_PENDING, "label_ttl": DEFAULT_LABEL_TTL,
                "max_pending_bytes": DEFAULT_MAX_PENDING_BYTES}
    if isinstance(value, dict) and "max_pending_bytes" not in value:  # saved before the byte bound existed
        value = {**value, "max_pending_bytes": DEFAULT_MAX_PENDING_BYTES}
    body = _fields(value, "pending", (*PENDING, "max_pending_bytes"))
    _int(body["max_pending_bytes"], "pending.max_pending_bytes", MIN_PENDING_BYTES, MAX_PENDING_BYTES)
    max_pending = _int(body["max_pending"], "pending.max_pending", 1, MAX_PENDING)
    ttl = body["label_ttl"]
    if not (isinstance(ttl, float) and (ttl == math.inf or 0 < ttl <= MAX_COUNT)):
        raise StateError(f"pending.label_ttl must be seconds > 0 (or inf), got {ttl!r:.60}")
    _int(body["mark"], "pending.mark", 0, MAX_COUNT)
    _int(body["repeated"], "pending.repeated", 0, MAX_COUNT)
    if body["pred_t"] is not None:
        _real(body["pred_t"], "pending.pred_t", -MAX_TIME, MAX_TIME)
    records = _fields(body["records"], "pending.records", ("next_seq", "head", "records"))
    next_seq = _int(records["next_seq"], "pending.records.next_seq", 0, MAX_COUNT)
    head = _int(records["head"], "pending.records.head", max(0, next_seq - max_pending), next_seq)
    for i, row in enumerate(_list(records["records"], "pending.records.records", most=next_seq - head)):
        where = f"pending.records.records[{i}]"
        seq, key, code, t, joined = _list(row, where, 5)
        _int(seq, f"{where} seq", head, next_seq - 1)
        try:
            check_key(key)
        except (TypeError, ValueError) as exc:
            raise StateError(f"{where} key: {exc}") from None
        _int(code, f"{where} class", 0, k - 1)
        _real(t, f"{where} time", -MAX_TIME, MAX_TIME)
        if type(joined) is not bool:
            raise StateError(f"{where} joined must be true or false, got {joined!r:.60}")
    _check_side(body["side"], capacity, windows, next_seq)
    return body


def _check_side(value: Any, capacity: int, windows: int, next_seq: int) -> None:
    """The label-side windows: null when never allocated (nothing predicted), else one per window and lifetime."""
    if value is None:
        if next_seq:
            raise StateError(f"pending.side is null but the store holds {next_seq} predictions")
        return
    side = _fields(value, "pending.side", ("capacity", "fed", "predictions", "events"))
    if side["capacity"] != max(capacity, STATUSES) or type(side["capacity"]) is not int:
        raise StateError(f"pending.side.capacity must be {max(capacity, STATUSES)}, got {side['capacity']!r:.60}")
    if _int(side["fed"], "pending.side.fed", 0, MAX_COUNT) != next_seq:
        raise StateError(f"pending.side.fed ({side['fed']}) must equal the store's next_seq ({next_seq})")
    for part, width, most in (("predictions", side["capacity"], next_seq), ("events", EVENT_SIDE, MAX_COUNT)):
        for j, item in enumerate(_list(side[part], f"pending.side.{part}", windows + 1)):
            if _window_counts(item, f"pending.side.{part}[{j}]", width) > most:
                raise StateError(f"pending.side.{part}[{j}] counts more than {most} {part}")


def _window_counts(item: Any, where: str, side: int) -> int:
    """Check a label-side window's counts (and its Timed buckets' counts, which must add up to them); their sum.
    (Its ring or bucket ids are the window's own to check, ``streammon.counting.windows``.)"""
    if not isinstance(item, dict) or "counts" not in item:
        raise StateError(f"{where} must be a window state with counts")
    total = _matrix(item["counts"], f"{where}.counts", side)
    if "slots" in item:
        slots = _list(item["slots"], f"{where}.slots", most=MAX_PENDING)
        if total != sum(_matrix(m, f"{where}.slots[{i}]", side) for i, m in enumerate(slots) if m is not None):
            raise StateError(f"{where}: the counts of its buckets do not add up to its counts")
    return total
