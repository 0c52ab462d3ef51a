"""The pending predictions in memory: key -> predicted class and time, bounded by count, bytes and age.

Every accepted prediction gets the next sequence number (its rank among accepted predictions:
the prediction-side windows count them in the same order). A record lives until its label
joins it, until ``max_pending`` newer predictions have been accepted or the records held
account for more than ``max_pending_bytes`` (``streammon.pending.sizes``) with it (it is
*evicted*, oldest first), or until a time more than ``label_ttl`` seconds after its prediction
is seen (it *expires*). A joined record stays as a tombstone for the same lifetime, so that a
repeated label is told apart (a *duplicate*) from a label for a key never seen or already gone
(an *orphan*).

Memory per record (``examples/bench_pending_memory.py``, 1,000,000 records, the key object
included: the store keeps it alive), tracemalloc; RSS in brackets; "before": the store of
issue 25, which kept the keys of evicted records until half the arrays had gone:

=========  ======  =======  =================  ==================  =========
key        object  filled   at the bound       before, at it       accounted
=========  ======  =======  =================  ==================  =========
int        32 B    125 B    172 B (204 B)      221 B (263 B)       192 B
str 8      57 B    138 B    175 B (204 B)      —                   232 B
str 12     61 B    142 B    179 B (207 B)      257 B (290 B)       236 B
UUID 36    85 B    166 B    203 B (235 B)      305 B (350 B)       260 B
str 64     113 B   194 B    231 B (265 B)      —                   288 B
str 256    305 B   386 B    423 B (461 B)      —                   480 B
str 512    561 B   642 B    679 B (734 B)      1,257 B (1,314 B)   736 B
=========  ======  =======  =================  ==================  =========

A record is a dict entry (24 B; 16 B while every key is a str) with its share of the dict's
spare slots — CPython resizes a dict that deletes as it inserts to 3 times what it holds, so at
the bound a record carries 45–90 B of dict — a sequence number (an int object, 32 B), and 8 B
of key reference, 8 B of time and 2 B of class in arrays indexed by sequence, compacted once a
quarter of them has gone. A joined record costs the same; one that left costs its 18 B of array
slots until compaction. "filled": 1,000,000 predictions into an empty store (no deletions yet,
so a smaller dict); "at the bound": 3,000,000 into ``max_pending=1_000_000``; joined records
measure the same as pending ones (within 1 B).

>>> r = PendingRecords(max_pending=10, label_ttl=5.0)
>>> r.put(1, 0, 0.0), r.put(2, 1, 1.0)
(0, 1)
>>> r.take(2, 3.0), r.take(1, 9.0), r.pending, r.gone_status
((1, 1, 1.0), 'orphan', 0, [2])
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Hashable, Iterable, MutableSequence
from typing import Any

from streammon.pending.record_arrays import DEFAULT_LABEL_TTL as DEFAULT_LABEL_TTL  # noqa: PLC0414 (re-exported)
from streammon.pending.record_arrays import DEFAULT_MAX_PENDING as DEFAULT_MAX_PENDING  # noqa: PLC0414 (re-exported)
from streammon.pending.record_arrays import EVICTED as EVICTED  # noqa: PLC0414 (re-exported: moved there)
from streammon.pending.record_arrays import EXPIRED as EXPIRED  # noqa: PLC0414 (re-exported: moved there)
from streammon.pending.record_arrays import RecordArrays
from streammon.pending.record_arrays import Settled as Settled  # noqa: PLC0414 (re-exported: moved there)
from streammon.pending.sizes import (
    INT_BYTES,
    RECORD_BYTES,
    STR_BYTES,
    WIDE_CHAR_BYTES,
    WIDE_STR_BYTES,
    record_bytes,
    score_bytes,
)

ORPHAN = "orphan"
DUPLICATE = "duplicate"


class PendingRecords(RecordArrays):
    """Pending predictions (and recently joined tombstones), oldest first. Not thread-safe: the monitor locks."""

    def put(self, key: Hashable, code: int, t: float) -> int:
        """Accept a prediction (times never decrease); its sequence number, or -1 if ``key`` is pending already."""
        if self._head < self.next_seq and self._times[self._head - self._base] + self.label_ttl < t:
            self.expire(t)  # one time line: a prediction expires by a later prediction's time too
        keys = self._keys
        old = keys.get(key)
        if old is not None:
            if old >= 0:
                return -1
            self._supersede(key, -old - 1)
        seq = self.next_seq
        keys[key] = seq
        self._order.append(key)
        self._times.append(t)
        self._codes.append(code)
        self.next_seq = seq + 1
        self.pending += 1
        self.held_bytes += record_bytes(key)
        if seq - self._head >= self.max_pending or self.held_bytes > self.max_pending_bytes:
            self._evict()
        return seq

    def put_many(self, keys: list[Any], codes: list[int], times: list[float], out_codes: list[int],
                 out_times: MutableSequence[float]) -> int:
        """``put`` each key with its class and time (checked, never decreasing) in order; the accepted classes and
        times are appended to ``out_codes`` and ``out_times``. Returns the number of repeated keys."""
        return self._put_all(zip(keys, codes, times, strict=True), -math.inf, out_codes, out_times,
                             times[0] if times else math.inf)[0]

    def put_queued(self, items: list[tuple[Any, int, float]], last: float, codes: list[int],
                   times: MutableSequence[float]) -> tuple[int, float]:
        """``put`` each ``(key, class, time)`` in order, a time behind ``last`` (or an earlier one) clamped up to
        it; the accepted classes and times are appended to ``codes`` and ``times``. Returns (repeats, last time)."""
        return self._put_all(items, last, codes, times, items[0][2] if items else math.inf)

    def _put_all(self, items: Iterable[tuple[Any, int, float]], last: float, out_codes: list[int],
                 out_times: MutableSequence[float], first: float) -> tuple[int, float]:
        """``put`` in a loop, the counters in locals (written back before anything else reads them)."""
        keys = self._keys
        get = keys.get
        order, stamps, classes = self._order.append, self._times.append, self._codes.append
        accept_code, accept_time = out_codes.append, out_times.append
        seq, total, added = self.next_seq, self.held_bytes, 0
        most, limit, drop = self.max_pending, self.max_pending_bytes, self._drop_head
        last_seq = self._head + most
        # when the oldest record expires (a store empty so far: a lower bound, the first time of the batch, which the
        # first check corrects); one comparison a row while no record expires
        ttl, head = self.label_ttl, self._head
        expire_after = (self._times[head - self._base] if head < seq else max(first, last)) + ttl
        repeated = 0
        for key, code, when in items:
            now = last if when < last else when
            last = now
            if now > expire_after:  # the oldest record expires at this prediction's time (as ``put``)
                self.next_seq, self.held_bytes, self.pending = seq, total, self.pending + added
                added = 0
                self.expire(now)
                total, head = self.held_bytes, self._head
                last_seq = head + most
                expire_after = (self._times[head - self._base] if head < seq else now) + ttl
            old = get(key)
            if old is not None:
                if old >= 0:
                    repeated += 1
                    continue
                self.held_bytes = total
                self._supersede(key, -old - 1)
                total = self.held_bytes
            keys[key] = seq
            order(key)
            stamps(now)
            classes(code)
            seq += 1
            added += 1
            total += (RECORD_BYTES + (len(key) + STR_BYTES if key.isascii() else WIDE_CHAR_BYTES * len(key)
                                      + WIDE_STR_BYTES) if type(key) is str else RECORD_BYTES + INT_BYTES)
            if seq > last_seq or total > limit:
                self.next_seq, self.held_bytes = seq, total
                drop(EVICTED)  # over by count: by one record; over by bytes: as many as it takes
                while self.held_bytes > limit:
                    drop(EVICTED)
                total, head = self.held_bytes, self._head
                last_seq = head + most
            accept_code(code)
            accept_time(now)
        self.next_seq, self.held_bytes = seq, total
        self.pending += added
        return repeated, last

    def put_scored(self, keys: list[Any], codes: list[int], times: list[float], rows: list[Any], *,
                   out_codes: list[int], out_times: MutableSequence[float]) -> tuple[int, list[int]]:
        """``put_many`` with a score per prediction (``attach_score``), one ``put`` at a time; returns the number of
        repeated keys and the positions (in ``keys``) of the accepted predictions."""
        repeated, accepted = 0, []
        for i, (key, code, when, row) in enumerate(zip(keys, codes, times, rows, strict=True)):
            seq = self.put(key, code, when)
            if seq < 0:
                repeated += 1
                continue
            out_codes.append(code)
            out_times.append(when)
            self.attach_score(seq, row)
            accepted.append(i)
        return repeated, accepted

    def attach_score(self, seq: int, row: Any) -> None:
        """Keep the score of the pending prediction ``seq`` (just put) until its label takes it (``pop_score``) or it
        leaves; its bytes count against ``max_pending_bytes`` (``sizes.score_bytes``), evicting older records."""
        self.scores[seq] = row
        self.held_bytes += score_bytes(1 if type(row) is float else len(row))
        if self.held_bytes > self.max_pending_bytes:
            self._evict()

    def holds_pending(self, seq: int) -> bool:
        """Whether prediction ``seq`` is pending (held, not joined)."""
        if not self._head <= seq < self.next_seq:
            return False
        key = self._order[seq - self._base]
        return key is not None and self._keys.get(key) == seq

    def take(self, key: Hashable, t: float) -> tuple[int, int, float] | str:
        """Join a label at time ``t``: ``(seq, code, predicted at)``, else ``"orphan"`` or ``"duplicate"``."""
        seq = self._keys.get(key)
        if seq is None:
            return ORPHAN
        if seq < 0:  # joined already: a duplicate while the joined record lives (its ttl), then an orphan
            return DUPLICATE if self._times[-seq - 1 - self._base] + self.label_ttl >= t else ORPHAN
        at = seq - self._base
        predicted = self._times[at]
        if predicted + self.label_ttl < t:  # expired before its label came: counted so, the label is an orphan
            self._leave(key, seq, EXPIRED)
            return ORPHAN
        self._keys[key] = -seq - 1
        self.pending -= 1
        return seq, self._codes[at], predicted

    # -- state ---------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """Every record held, as ``[seq, key, class index, time, joined]`` rows (for ``streammon.state``)."""
        rows = []
        for seq in range(self._head, self.next_seq):
            at = seq - self._base
            key = self._order[at]
            current = self._keys.get(key) if key is not None else None
            if current == seq or current == -seq - 1:
                rows.append([seq, key, self._codes[at], self._times[at], current < 0])
        return {"next_seq": self.next_seq, "head": self._head, "records": rows}

    def restore(self, state: dict[str, Any]) -> None:
        """Load ``state()`` (already checked by ``streammon.state_schema``) into this empty store."""
        head, next_seq = int(state["head"]), int(state["next_seq"])
        self._base = self._head = head
        self.next_seq = next_seq
        span = next_seq - head
        self._order = [None] * span
        self._times = array("d", [-math.inf]) * span  # a gap (a superseded record) never stops expiry
        self._codes = array("H", bytes(2 * span))
        self._keys = {}
        self.pending = 0
        self.held_bytes = 0
        for seq, key, code, t, joined in state["records"]:
            at = seq - head
            if key in self._keys or not 0 <= at < span or self._order[at] is not None:
                raise ValueError(f"pending record {seq} ({key!r}) is out of range or repeated")
            self._order[at] = key
            self._times[at] = t
            self._codes[at] = code
            self._keys[key] = -seq - 1 if joined else seq
            self.pending += not joined
            self.held_bytes += record_bytes(key)
        self._evict()  # a store saved under a larger bound (or before max_pending_bytes) is trimmed to this one
