"""An independent recount of the documented predict/label rules, for the delayed-label tests.

It keeps every prediction as a plain record and applies the rules of ``streammon.labelling``
one event at a time, with no shared code: a prediction is accepted unless its key is pending
(then it is *repeated*); accepting prediction number ``n`` evicts the record numbered
``n - max_pending``; a label joins a pending record whose prediction is at most ``label_ttl``
seconds older, else it expires it (orphan label); a label for a joined record within its ttl is
a duplicate, any other label an orphan; a prediction at time ``t`` and a read at time ``now``
expire the pending records older than ``label_ttl`` at that time.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Record:
    seq: int
    key: Any
    pred: Any
    t: float
    status: str = "pending"  # pending, labelled, expired, evicted


@dataclass
class Oracle:
    max_pending: int
    label_ttl: float
    records: list[Record] = field(default_factory=list)
    live: dict[Any, Record] = field(default_factory=dict)  # key -> its current record (pending or labelled)
    pairs: Counter[tuple[Any, Any]] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    orphans: int = 0
    duplicates: int = 0
    repeated: int = 0

    def predict(self, key: Any, pred: Any, t: float) -> None:
        self.read(t)  # one time line: a prediction's time expires the pending records older than label_ttl
        current = self.live.get(key)
        if current is not None and current.status == "pending":
            self.repeated += 1
            return
        record = Record(len(self.records), key, pred, t)
        self.records.append(record)
        self.live[key] = record
        gone = record.seq - self.max_pending
        if gone >= 0:
            old = self.records[gone]
            if self.live.get(old.key) is old:
                del self.live[old.key]
                if old.status == "pending":
                    old.status = "evicted"

    def label(self, key: Any, true: Any, t: float) -> None:
        record = self.live.get(key)
        if record is None:
            self.orphans += 1
        elif record.t + self.label_ttl < t:
            del self.live[key]
            if record.status == "pending":
                record.status = "expired"
            self.orphans += 1
        elif record.status == "labelled":
            self.duplicates += 1
        else:
            record.status = "labelled"
            self.pairs[(true, record.pred)] += 1
            self.latencies.append(t - record.t)

    def read(self, now: float | None) -> None:
        if now is None:
            return
        for record in self.records:
            if record.t + self.label_ttl < now and self.live.get(record.key) is record:
                del self.live[record.key]  # a joined one is forgotten: a later label of its key is an orphan
                if record.status == "pending":
                    record.status = "expired"

    def status_counts(self, last: int | None = None) -> Counter[str]:
        chosen = self.records if last is None else self.records[max(0, len(self.records) - last):]
        return Counter(r.status for r in chosen)

    def predicted(self, last: int | None = None) -> Counter[Any]:
        chosen = self.records if last is None else self.records[max(0, len(self.records) - last):]
        return Counter(r.pred for r in chosen)
