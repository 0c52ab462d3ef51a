"""Counts kept for predictions whose labels come later: prediction-side windows and label-event windows.

Prediction-side windows are fresh copies of the monitor's windows fed the pair (predicted
class, status) at prediction time, status 0 = pending, 1 = labelled, 2 = expired, 3 = evicted.
When a prediction's status changes (its label joins, it expires), its cell is moved in every
window that still holds it — the Sliding ring slot of its sequence number, the Timed bucket of
its prediction time — so each window counts *its own* predictions by status, exactly, with the
same Sliding/Timed semantics as the labelled windows (by prediction time).

Label-event windows count every label call by label time: a joined label in the bucket of its
latency (``latency_bucket``), an orphan in ``ORPHAN_BUCKET``, a duplicate in ``DUPLICATE_BUCKET``
(bucket ``b`` is the cell ``(b // 16, b % 16)`` of a 16×16 count matrix).

>>> from streammon.counting.windows import Cumulative
>>> side = LabelSide([Cumulative()], capacity=2)
>>> side.add_predictions([0, 1, 1], [0.0, 1.0, 2.0])
>>> side.move([1], [1], [1.0], 1)
>>> side.predictions(None)[0][1][:2, :4].tolist()
[[1, 0, 0, 0], [1, 1, 0, 0]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.batch import Batch
from streammon.counting.counts import IntMatrix
from streammon.counting.windows import Cumulative, Sliding, Timed, Window
from streammon.findings.label_stats import LATENCY_BUCKETS, LOWEST, PER_OCTAVE, latency_quantiles
from streammon.findings.label_view import LabelView

PRED_STRIDE = 1 << 15  # cell id of a prediction = class * PRED_STRIDE + status (int32 for 46,340 classes)
STATUSES = 4  # pending, labelled, expired, evicted
LABELLED = 1
EVENT_SIDE = 16
def latency_bucket(seconds: npt.ArrayLike) -> npt.NDArray[np.intp]:
    """The event bucket of each latency: 6 per doubling from 2**-10 s (~1 ms) to 2**32 s (~136 years).

    Bucket ``b`` holds latencies below ``bucket_upper(b)`` and at least ``bucket_upper(b - 1)``.

    >>> latency_bucket([0.0, 1.0, 1.2, 3600.0]).tolist()
    [0, 61, 62, 131]
    >>> from streammon.findings.label_stats import bucket_upper
    >>> bucket_upper(0), round(bucket_upper(61), 4), round(bucket_upper(131))
    (0.0009765625, 1.1225, 3649)
    """
    lat = np.asarray(seconds, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = 1 + np.floor(PER_OCTAVE * (np.log2(np.maximum(lat, 2.0**LOWEST)) - LOWEST))
    raw = np.where(lat < 2.0**LOWEST, 0, raw)
    return np.clip(raw, 0, LATENCY_BUCKETS - 1).astype(np.intp)


def latency_bucket_of(seconds: float) -> int:
    """``latency_bucket`` of one latency, without numpy (the per-call ``label`` path).

    >>> xs = [0.0, 1.0, 1.2, 3600.0, 1e30]
    >>> [latency_bucket_of(x) for x in xs] == latency_bucket(xs).tolist()
    True
    """
    if not seconds >= 2.0**LOWEST:
        return 0
    return min(LATENCY_BUCKETS - 1, 1 + math.floor(PER_OCTAVE * (math.log2(seconds) - LOWEST)))


class LabelSide:
    """Prediction-side and label-event windows (plus a lifetime copy of each), fed under the monitor's lock."""

    def __init__(self, windows: Sequence[Window], capacity: int) -> None:
        self.capacity = max(capacity, STATUSES)
        self.pred_windows = [w.fresh() for w in windows] + [Cumulative(name="lifetime")]
        self.event_windows = [w.fresh() for w in windows] + [Cumulative(name="lifetime")]
        for w in self.pred_windows:
            w.attach(PRED_STRIDE, self.capacity)
        for w in self.event_windows:
            w.attach(EVENT_SIDE, EVENT_SIDE)
        self.fed = 0  # predictions given to the prediction-side windows (the next one's sequence number)

    def view(self, now: float | None, pred_t: float, repeated: int) -> LabelView | None:
        """A copy of the counts as of ``now`` for a report (None before any prediction or label event);
        ``pred_t`` is the latest prediction time, ``repeated`` the lifetime count of repeated keys."""
        if not self.fed and not bool(self.events(None)[-1][1].sum()):
            return None
        side_now = max(pred_t, -math.inf if now is None else now)
        stamp = None if side_now == -math.inf else side_now
        events = self.events(now)
        predictions = self.predictions(stamp)  # expires old buckets before aged_counts reads them
        typical = latency_quantiles(events[-1][1][:LATENCY_BUCKETS])["p50"]
        aged = [None if stamp is None or math.isnan(typical) else aged_counts(w, stamp - typical)
                for w in self.pred_windows]
        return LabelView(predictions=tuple(m for _, m in predictions),
                         events=tuple(e.copy() for _, e in events), aged=tuple(aged),
                         repeated=repeated, typical_latency=typical)

    def fit(self, capacity: int) -> None:
        """Grow the prediction-side windows to ``capacity`` classes."""
        if capacity > self.capacity:
            for w in self.pred_windows:
                w.grow(capacity)
            self.capacity = capacity

    def add_predictions(self, codes: Sequence[int], times: Sequence[float]) -> None:
        """Count accepted predictions (sequence numbers ``fed`` on) as pending, at their times."""
        n = len(codes)
        if not n:
            return
        pred = np.asarray(codes, dtype=np.intp)
        stamps = np.asarray(times, dtype=np.float64)
        batch = Batch(pred, np.zeros(n, np.intp), stamps, PRED_STRIDE)
        for w in self.pred_windows:
            w.ingest(batch)
        self.fed += n

    def move(self, seqs: Sequence[int], codes: Sequence[int], times: Sequence[float], status: int | Sequence[int]
             ) -> None:
        """Change pending predictions (by sequence number, class, time) to ``status`` in every window holding them."""
        if not len(seqs):
            return
        s = np.asarray(seqs, dtype=np.int64)
        c = np.asarray(codes, dtype=np.intp)
        t = np.asarray(times, dtype=np.float64)
        to = np.broadcast_to(np.asarray(status, dtype=np.intp), s.shape)
        for w in self.pred_windows:
            _move(w, (s, c, t, to), self.fed)

    def add_events(self, buckets: Sequence[int] | npt.NDArray[np.intp],
                   times: npt.NDArray[np.float64] | float | None) -> None:
        """Count label events (latency buckets, orphans, duplicates) at their label times."""
        if not len(buckets):
            return
        b = np.asarray(buckets, dtype=np.intp)
        batch = Batch(b // EVENT_SIDE, b % EVENT_SIDE, times, EVENT_SIDE)
        for w in self.event_windows:
            w.ingest(batch)

    def predictions(self, now: float | None) -> list[tuple[str, IntMatrix]]:
        """Each prediction-side window's ``capacity × capacity`` counts (columns 0-3: the statuses)."""
        return [(w.name, w.snapshot(now)) for w in self.pred_windows]

    def events(self, now: float | None) -> list[tuple[str, npt.NDArray[np.int64]]]:
        """Each label-event window's 256 bucket counts."""
        return [(w.name, w.snapshot(now).reshape(-1)) for w in self.event_windows]

    def state(self) -> dict[str, Any]:
        """Plain data for ``streammon.state``."""
        return {"capacity": self.capacity, "fed": self.fed,
                "predictions": [w.state() for w in self.pred_windows],
                "events": [w.state() for w in self.event_windows]}

    def restore(self, state: dict[str, Any]) -> None:
        """Load ``state()`` (``ValueError`` if it does not fit these windows)."""
        self.fit(int(state["capacity"]))
        for w, item in zip(self.pred_windows, state["predictions"], strict=True):
            w.restore(item)
        for w, item in zip(self.event_windows, state["events"], strict=True):
            w.restore(item)
        self.fed = int(state["fed"])


def _move(w: Window, moves: tuple[npt.NDArray[np.int64], npt.NDArray[np.intp], npt.NDArray[np.float64],
                                  npt.NDArray[np.intp]], fed: int) -> None:
    """Move pending cells ``(code, 0)`` to ``(code, to)`` wherever ``w`` still holds them (window internals);
    ``moves``: sequence numbers, classes, prediction times and new statuses."""
    seqs, codes, times, to = moves
    counts = w._counts
    if isinstance(w, Sliding):
        live = fed - seqs <= w._filled
        pos = (w._head - (fed - seqs[live])) % w.size
        w._ring[pos] = (codes[live] * w._stride + to[live]).astype(np.int32)
        codes, to = codes[live], to[live]
    elif isinstance(w, Timed):
        buckets = np.floor(times / w.width).astype(np.int64)
        slots = buckets % w.buckets
        live = w._ids[slots] == buckets
        for slot in np.unique(slots[live]).tolist():
            here = live & (slots == slot)
            matrix = w._slots[slot]
            assert matrix is not None
            np.subtract.at(matrix, (codes[here], np.zeros_like(codes[here])), 1)
            np.add.at(matrix, (codes[here], to[here]), 1)
        codes, to = codes[live], to[live]
    np.subtract.at(counts, (codes, np.zeros_like(codes)), 1)
    np.add.at(counts, (codes, to), 1)
    if (counts < 0).any():  # pragma: no cover - a bug, never data
        raise AssertionError(f"prediction window {w.name!r} moved a prediction it did not hold")


def aged_counts(w: Window, cutoff: float) -> npt.NDArray[np.int64] | None:
    """A timed prediction-side window's counts over the buckets that ended by ``cutoff`` (None: not timed)."""
    if not isinstance(w, Timed):
        return None
    total = np.zeros_like(w._counts)
    for bucket, matrix in zip(w._ids.tolist(), w._slots, strict=True):
        if matrix is not None and (bucket + 1) * w.width <= cutoff:
            total += matrix
    return total
