"""The pending store bounded by bytes (``max_pending_bytes``): evictions equal a recount of the documented
accounting, survive save/load, bad bounds are refused, and an evicted record's key is freed."""

from __future__ import annotations

import gc
import json
import math
import tracemalloc
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streammon import Cumulative, Monitor, Sliding, StateError, state
from streammon.pending import DEFAULT_MAX_PENDING_BYTES, PendingRecords
from tests.label_oracle import Oracle, Record
from tests.strategies import SIZED_KEYS, label_events
from tests.test_delayed_labels import check_against, run

# the documented accounting (README, streammon.pending.memory), written out again here
RECORD, INT_KEY, ASCII_KEY, WIDE_KEY, WIDE_CHAR = 160, 32, 64, 80, 4
LEAST = RECORD + WIDE_KEY + WIDE_CHAR * 512


def accounted(key: Any) -> int:
    """A record's accounted bytes, by the documented rule: ASCII found by encoding, not by ``str.isascii``."""
    if isinstance(key, int):
        return RECORD + INT_KEY
    try:
        return RECORD + ASCII_KEY + len(key.encode("ascii"))
    except UnicodeEncodeError:
        return RECORD + WIDE_KEY + WIDE_CHAR * len(key)


@dataclass
class ByteOracle(Oracle):
    """``Oracle`` plus the byte bound: ``held`` mirrors which record of each key the store keeps (pending or
    joined, until the oldest-first eviction or an expiry drops it); the oldest go while their sum is over ``limit``."""

    limit: int = LEAST
    held: dict[Any, Record] = field(default_factory=dict)
    head: int = 0

    def predict(self, key: Any, pred: Any, t: float) -> None:
        n = len(self.records)
        super().predict(key, pred, t)
        if len(self.records) == n:
            return  # repeated
        record = self.records[-1]
        self.held[key] = record
        if record.seq >= self.max_pending:
            self._release(self.records[record.seq - self.max_pending])
        while sum(accounted(r.key) for r in self.held.values()) > self.limit:
            old = self.records[self.head]
            self.head += 1
            if self.live.get(old.key) is old:
                del self.live[old.key]
                if old.status == "pending":
                    old.status = "evicted"
            self._release(old)

    def label(self, key: Any, true: Any, t: float) -> None:
        record = self.live.get(key)
        super().label(key, true, t)
        if record is not None and record.status == "expired":  # a pending record expired by its late label
            self._release(record)

    def read(self, now: float | None) -> None:
        super().read(now)
        if now is not None:  # the store drops every record (joined ones too) older than label_ttl
            for key, record in list(self.held.items()):
                if record.t + self.label_ttl < now:
                    del self.held[key]

    def _release(self, record: Record) -> None:
        if self.held.get(record.key) is record:
            del self.held[record.key]


@settings(max_examples=150, deadline=None)
@given(events=label_events(pool=SIZED_KEYS), max_pending=st.integers(1, 30),
       limit=st.integers(LEAST, 4 * LEAST), ttl=st.sampled_from([2.0, 5.0, math.inf]))
def test_eviction_by_bytes_equals_a_recount(events: list[Any], max_pending: int, limit: int, ttl: float) -> None:
    """Random predict/label interleavings over keys of very different sizes (save/load among them), bounded by count
    and bytes: every count equals a recount that evicts the oldest records while the documented bytes are over."""
    m = Monitor([Cumulative(), Sliding(3)], max_pending=max_pending, label_ttl=ttl, max_pending_bytes=limit)
    oracle = ByteOracle(max_pending, ttl, limit=limit)
    m, now = run(events, m, oracle)
    check_against(m, oracle, now, 3)


def test_the_bound_holds_as_many_records_as_their_bytes_allow() -> None:
    """Four 512-character ASCII keys fit 2,944 B (736 B each): the fifth and sixth evict the two oldest, whose labels
    are then orphans; one 512-character non-ASCII key fills the least bound (2,288 B) alone."""
    keys = [f"{i}".ljust(512, "k") for i in range(6)]
    m = Monitor([Cumulative()], max_pending_bytes=4 * accounted(keys[0]), label_ttl=math.inf)
    assert accounted(keys[0]) == 736
    m.predict_many(keys, ["a"] * 6, t=0.0)
    m.label_many(keys, ["a"] * 6, t=1.0)
    s = m.report().label_stats
    assert (s.predictions, s.evicted, s.labelled, s.orphans) == (6, 2, 4, 2)
    wide = Monitor([Cumulative()], max_pending_bytes=LEAST, label_ttl=math.inf)
    wide.predict("é" * 512, "a", t=0.0)
    wide.predict("b", "a", t=0.0)  # 2,288 + 225 > 2,288: the wide key goes
    wide.label("b", "a", t=1.0)
    s = wide.report().label_stats
    assert (s.evicted, s.labelled) == (1, 1)


def test_a_saved_store_evicts_at_the_same_point() -> None:
    """A store near its byte bound, saved and loaded, evicts the same records as the one that went on: the bound
    is in the state file and the held bytes are recounted from the records."""
    keys = [("x" * (37 * i % 500 + 1)) if i % 3 else "é" * (i % 40 + 1) for i in range(200)]
    a = Monitor([Cumulative(), Sliding(7)], max_pending_bytes=20_000, label_ttl=math.inf)
    a.predict_many(keys[:60], ["p"] * 60, t=0.0)
    a.label_many(keys[10:30:2], ["p"] * 10, t=1.0)
    text = a.dumps()
    assert json.loads(text)["body"]["pending"]["max_pending_bytes"] == 20_000
    b = Monitor.loads(text)
    for m in (a, b):
        m.predict_many(keys[60:], ["q"] * 140, t=2.0)
        m.label_many(keys, ["q"] * 200, t=3.0)
    ra, rb = a.report(), b.report()
    assert ra.label_stats == rb.label_stats
    assert ra.label_stats.evicted > 0 and ra.totals.to_dict() == rb.totals.to_dict()


def test_a_state_file_saved_before_the_byte_bound_loads_with_the_default() -> None:
    """A pending section without ``max_pending_bytes`` (an older file) loads with the documented default."""
    m = Monitor([Cumulative()])
    m.predict("k", "a", t=0.0)
    body = json.loads(m.dumps())["body"]
    del body["pending"]["max_pending_bytes"]
    again = Monitor.loads(state.dumps(body))
    assert again._records.max_pending_bytes == DEFAULT_MAX_PENDING_BYTES == 256 * 2**20
    assert again.report().label_stats.pending == 1


BAD = [(0, ValueError), (-1, ValueError), (LEAST - 1, ValueError), (2**53 + 1, ValueError), (True, TypeError),
       (1.5e6, TypeError), (float("inf"), TypeError), ("1000000", TypeError), (None, TypeError)]


@pytest.mark.parametrize(("bad", "error"), BAD)
def test_a_bad_byte_bound_is_refused(bad: Any, error: type[Exception]) -> None:
    """0, negative, below one longest record, beyond 2**53, bool, float, str and None are refused by the monitor and
    the store with an error naming the value and the expected range."""
    for make in (lambda: Monitor(max_pending_bytes=bad), lambda: PendingRecords(max_pending_bytes=bad)):
        with pytest.raises(error, match="max_pending_bytes must be an int") as caught:
            make()
        assert repr(bad) in str(caught.value)


@pytest.mark.parametrize(("bad", "error"), BAD)
def test_a_bad_byte_bound_in_a_state_file_is_a_state_error(bad: Any, error: type[Exception]) -> None:
    """A state file whose ``pending.max_pending_bytes`` is out of range or not an int is refused, naming the field."""
    m = Monitor([Cumulative()])
    m.predict("k", "a", t=0.0)
    body = json.loads(m.dumps())["body"]
    body["pending"]["max_pending_bytes"] = bad
    with pytest.raises(StateError, match=r"pending\.max_pending_bytes"):
        Monitor.loads(state.dumps(body))


def test_evicted_records_free_their_keys() -> None:
    """At its count bound after 3 n predictions of 512-character keys, the store holds n keys, not the evicted
    ones too: below a key plus 250 B per record (tracemalloc; holding the evicted keys costs a key more)."""
    n = 20_000
    m = Monitor([Cumulative()], max_pending=n, label_ttl=math.inf)
    m.predict_many(["warm"], ["a"], t=0.0)
    m.report()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for start in range(0, 3 * n, 5000):
            m.predict_many([f"{i:0512d}" for i in range(start, start + 5000)], ["a"] * 5000, t=1.0)
        assert m.report().label_stats.evicted == 2 * n + 1
        gc.collect()
        held = (tracemalloc.get_traced_memory()[0] - before) / n
    finally:
        tracemalloc.stop()
    assert held < 561 + 250, held


def test_a_store_over_a_smaller_bound_is_trimmed_when_loaded() -> None:
    """A state file whose records exceed its ``max_pending_bytes`` (saved under a larger bound, then edited) loads
    with the oldest evicted until they fit, as the next prediction would have evicted them."""
    keys = [f"{i}".ljust(512, "k") for i in range(10)]
    m = Monitor([Cumulative()], max_pending_bytes=10 * accounted(keys[0]), label_ttl=math.inf)
    m.predict_many(keys, ["a"] * 10, t=0.0)
    body = json.loads(m.dumps())["body"]
    body["pending"]["max_pending_bytes"] = 4 * accounted(keys[0])
    again = Monitor.loads(state.dumps(body))
    again.label_many(keys, ["a"] * 10, t=1.0)
    s = again.report().label_stats
    assert (s.predictions, s.evicted, s.labelled, s.orphans, s.pending) == (10, 6, 4, 6, 0)
    assert again.report().totals.to_dict() == {"a": {"a": 4}}
