"""The monitor: per-sample confusion counts in several windows at once.

``update`` appends one sample to a small buffer (no numpy on the per-sample
path); the buffer is flushed into every window's count matrix before any read
and whenever it fills, so reads always see every sample already given.
``update_many`` validates a whole batch, maps labels with numpy and counts it
with one ``bincount`` shared by the windows. A rejected sample or batch raises
``ValueError``/``TypeError`` and changes nothing.

>>> m = Monitor([Cumulative(), Sliding(4)], reference={"legit": 900, "fraud": 100})
>>> m.update_many(["legit"] * 6 + ["fraud"] * 2, ["legit"] * 5 + ["fraud"] * 3)
>>> r = m.report()
>>> r.positive, r.windows["cumulative"].n, r.windows["sliding_4"].n
('fraud', 8, 4)
>>> r.windows["cumulative"].scores["tpr"], round(r.windows["cumulative"].scores["tnr"], 3)
(1.0, 0.833)
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from streammon import state
from streammon.alerts import active_since, degradation_reason, window_conditions
from streammon.batch import Batch
from streammon.blocks import block_counts
from streammon.counts import DEFAULT_MAX_CLASSES, ClassIndex, ConfusionCounts, IntMatrix
from streammon.detect import DegradationWatch, DetectorSettings, baseline_counts
from streammon.distortion import Policy
from streammon.evaluate import evaluate_window
from streammon.labels import as_label_array, code_labels
from streammon.reference import Reference
from streammon.report import DEGRADATION, STREAM, Alert, Report
from streammon.timing import MAX_TIME, check_time, check_times, clock_time
from streammon.windows import Cumulative, Sliding, Timed, Window

FLUSH_EVERY = 4096
DEFAULT_WARMUP = 1000


def default_windows() -> list[Window]:
    """cumulative, sliding_1000, sliding_10000 and timed_3600s."""
    return [Cumulative(), Sliding(1000), Sliding(10_000), Timed(3600)]


def _capacity_for(k: int) -> int:
    return max(2, 1 << (k - 1).bit_length())


class Monitor:
    """Confusion counts of a live classifier in several windows, and their reports.

    Parameters
    ----------
    windows
        The windows to keep (default: ``default_windows()``). Names must be unique.
    reference
        The training class mix as counts or priors per label. It defines IR, the
        priors for prior correction, and for binary problems the positive class
        (the reference minority unless ``positive`` names one). Without it the
        reference is learned from the true labels of the first ``warmup`` samples
        (every known class included, zeros too); until then reference-based
        values are NaN and the binary positive class is the warm-up minority so far.
    positive
        The label of the positive class for binary metrics.
    classes
        Labels to register up front (in this order), so K is known before data.
    warmup
        Samples used to learn the reference when none is given.
    max_classes
        Cap on distinct labels (default 256): a new label beyond it is rejected.
    baseline
        Each class's expected performance for degradation alerts: a validation
        confusion matrix as ``ConfusionCounts``, ``{true: {pred: count}}``, or a K×K
        array in the order of the classes known at construction (reference, then
        ``classes``). A class it does not cover learns its baseline from its first
        ``detector.baseline_samples`` labelled samples.
    detector
        ``DetectorSettings`` of the per-class degradation CUSUM.
    clock
        Time source for samples given without ``t`` (default ``time.time``).
    policy
        Tolerances and metric parameters (``Policy``).

    Samples carry an optional time ``t`` (seconds); times must never decrease.
    Timed windows follow the sample times when given, else the clock — then a
    quiet period empties them too.
    """

    def __init__(
        self,
        windows: Iterable[Window] | None = None,
        *,
        reference: Mapping[Any, Any] | None = None,
        positive: Any = None,
        classes: Iterable[Any] | None = None,
        warmup: int = DEFAULT_WARMUP,
        max_classes: int = DEFAULT_MAX_CLASSES,
        baseline: ConfusionCounts | Mapping[Any, Mapping[Any, int]] | None = None,
        detector: DetectorSettings | None = None,
        clock: Callable[[], float] = time.time,
        policy: Policy | None = None,
    ) -> None:
        self._windows = list(default_windows() if windows is None else windows)
        if not self._windows:
            raise ValueError("a monitor needs at least one window")
        for w in self._windows:
            if not isinstance(w, Window):
                raise TypeError(f"windows must be Window objects (Cumulative, Sliding, Timed), got {w!r}")
        names = [w.name for w in self._windows]
        if len(set(names)) != len(names):
            raise ValueError(f"window names must be unique, got {names}")
        if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 1:
            raise ValueError(f"warmup must be an int >= 1, got {warmup!r}")
        if not callable(clock):
            raise TypeError(f"clock must be a callable returning seconds, got {clock!r}")
        self._policy = policy or Policy()
        self._clock = clock
        self._index = ClassIndex(max_classes=max_classes)
        self._reference = None if reference is None else Reference.of(reference)
        initial: list[Any] = list(self._reference.labels) if self._reference else []
        initial += list(classes or [])
        if positive is not None:
            initial.append(positive)
        if positive is not None and self._reference is not None and positive not in self._reference.priors:
            raise ValueError(
                f"positive={positive!r} is not a class of the reference {list(self._reference.labels)}"
            )
        given = baseline_counts(baseline, list(dict.fromkeys(initial)))
        initial += [label for label, _, _ in given]
        self._index.register(initial)
        self._watch = DegradationWatch(
            detector or DetectorSettings(),
            {self._index.ids[label]: (correct, total) for label, correct, total in given},
        )
        self._alert_since: dict[tuple[str, str, str], tuple[int, float]] = {}
        self._positive = None if positive is None else self._index.labels[self._index.ids[positive]]
        self._stride = max_classes
        self._capacity = _capacity_for(max(len(self._index), 2))
        self._lifetime = Cumulative(name="lifetime")  # every sample ever: the exported _total counters
        for w in [*self._windows, self._lifetime]:
            w.attach(self._stride, self._capacity)
        self._timed = any(isinstance(w, Timed) for w in self._windows)
        self._lock = threading.Lock()
        self._ids = self._index.ids  # the live label -> index dict (ClassIndex only ever adds to it)
        self._cells: list[int] = []  # buffered samples as cell ids true * stride + pred
        self._last_t = -math.inf
        self._open_until = -math.inf  # buffered samples share a bucket of every timed window until this time
        self._clock_driven = False
        self._ingested = 0  # samples already moved from the buffer into the windows
        self._warmup_left = 0 if self._reference else warmup
        self._warm_counts = np.zeros(self._capacity, np.int64)

    # -- properties ---------------------------------------------------------------------------

    @property
    def labels(self) -> tuple[Hashable, ...]:
        """The known classes in index order."""
        return self._index.labels

    @property
    def window_names(self) -> tuple[str, ...]:
        """The windows' names, in order."""
        return tuple(w.name for w in self._windows)

    @property
    def reference(self) -> Reference | None:
        """The reference mix (None while it is still being learned)."""
        return self._reference

    @property
    def samples(self) -> int:
        """Samples counted so far (buffered ones included)."""
        return self._ingested + len(self._cells)

    def counts(self) -> dict[str, ConfusionCounts]:
        """The raw counts of every window now (no metrics computed: cheap).

        >>> m = Monitor([Sliding(2)])
        >>> m.update_many(["a", "b", "b"], ["a", "a", "b"])
        >>> m.counts()["sliding_2"].to_dict()
        {'b': {'a': 1, 'b': 1}}
        """
        with self._lock:
            self._flush()
            labels = self._index.labels
            windows = self._snapshots(self._read_time())[:-1]  # the last is the lifetime counter
            return {w.name: ConfusionCounts(labels, counts) for w, counts in windows}

    def flush(self) -> None:
        """Move buffered samples into the windows now (reads do this by themselves)."""
        with self._lock:
            self._flush()

    def save(self, path: str | os.PathLike[str]) -> None:
        """Save the monitor's whole state to ``path`` atomically (see ``streammon.state``)."""
        state.write_atomically(path, state.dumps(self))

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, clock: Callable[[], float] = time.time) -> Monitor:
        """A monitor restored from ``save``: same reports, and its windows continue exactly.

        Raises ``streammon.state.StateError`` (a ``ValueError``) for a truncated, tampered
        or foreign file.
        """
        return state.loads(Path(path).read_text(encoding="utf-8"), cls, clock)

    def _locked_state(self) -> dict[str, Any]:
        with self._lock:
            self._flush()
            return state.monitor_state(self)

    @property
    def max_classes(self) -> int:
        """The cap on distinct labels."""
        return self._index.max_classes

    # -- validation helpers (change nothing) -------------------------------------------------

    def _clock_time(self, now: Any = None) -> float:
        """The clock's time (or the ``now`` it returned), checked; a clock that stepped back is clamped."""
        return clock_time(self._clock() if now is None else now, self._last_t)

    def _resolve_time(self, t: Any) -> float:
        if t is None:
            return self._clock_time() if self._timed else self._last_t
        return check_time(t, self._last_t)

    def _register(self, labels: Sequence[Any]) -> None:
        """Register new labels (validated, all or nothing) and grow every window."""
        self._index.register(labels)
        needed = _capacity_for(len(self._index))
        if needed > self._capacity:
            for w in [*self._windows, self._lifetime]:
                w.grow(needed)
            grown = np.zeros(needed, np.int64)
            grown[: self._capacity] = self._warm_counts
            self._warm_counts = grown
            self._capacity = needed

    # -- updates ------------------------------------------------------------------------------

    def update(self, y_true: Any, y_pred: Any, t: float | None = None) -> None:
        """Count one labelled prediction (``t``: its time in seconds, optional).

        The hot path (known labels, no ``t``) takes no lock: two dict lookups, a
        clock read when a timed window needs it, and one ``list.append`` — atomic in
        CPython, with or without the GIL (Python FAQ, "What kinds of global value
        mutation are thread-safe?"). Buffered samples carry no time of their own:
        the buffer is flushed whenever a sample's time leaves the bucket it shares
        with them in every timed window (a sample racing that switch in another
        thread may be counted one bucket late). New labels, bad labels, explicit
        times and bucket switches take the validating path, under the lock.
        """
        if t is None:
            ids = self._ids
            try:
                cell = ids[y_true] * self._stride + ids[y_pred]
                if self._timed:
                    now = self._clock()
                    fast = self._last_t <= now < self._open_until
                else:
                    fast = self._clock_driven
            except (KeyError, TypeError):  # a new or invalid label, or a broken clock: the slow path says which
                fast = False
            if fast:
                if self._timed:
                    self._last_t = now
                cells = self._cells
                cells.append(cell)
                if len(cells) >= FLUSH_EVERY:
                    self.flush()
                return
        self._update_checked(y_true, y_pred, t)

    def _update_checked(self, y_true: Any, y_pred: Any, t: Any) -> None:
        """``update`` with every check, under the lock; opens a new time bucket when needed."""
        with self._lock:
            now = self._resolve_time(t)
            ids = self._ids
            try:
                i, j = ids[y_true], ids[y_pred]
            except (KeyError, TypeError):
                self._register(self._index.new_labels((y_true, y_pred)))  # validates, or raises
                i, j = ids[y_true], ids[y_pred]
            if t is None:
                self._clock_driven = True
            if not now < self._open_until:
                self._flush()  # the buffered samples keep the bucket of the last time
                self._open_until = self._bucket_end(now)
            self._last_t = now
            self._cells.append(i * self._stride + j)
            if len(self._cells) >= FLUSH_EVERY:
                self._flush()

    def _bucket_end(self, t: float) -> float:
        """The earliest time after ``t`` that some timed window puts in a later bucket."""
        ends = [w.bucket_end(t) for w in self._windows if isinstance(w, Timed)]
        return min([*ends, math.nextafter(MAX_TIME, math.inf)]) if ends else math.inf

    def update_many(self, y_true: Any, y_pred: Any, t: Any = None) -> None:
        """Count a batch: two equal-length 1-D sequences or arrays of labels.

        ``t`` is None (the clock, once for the batch), one time for the whole
        batch, or one non-decreasing time per sample. The batch is validated in
        full before anything is counted; an empty batch is a no-op.
        """
        truth = as_label_array(y_true, "y_true")
        preds = as_label_array(y_pred, "y_pred")
        if len(truth) != len(preds):
            raise ValueError(f"y_true and y_pred must have the same length, got {len(truth)} and {len(preds)}")
        size = len(truth)
        times = None if t is None or np.ndim(t) == 0 else np.asarray(t)
        if times is not None and (times.ndim != 1 or len(times) != size):
            raise ValueError(f"t must be None, a scalar or one time per sample ({size}), got shape {times.shape}")
        if times is not None and times.dtype.kind not in "iuf":
            raise TypeError(f"t must hold real numbers of seconds, got dtype {times.dtype}")
        if size == 0:
            return
        with self._lock:
            if times is None:
                stamp = self._resolve_time(t)
                batch_times: np.ndarray | float | None = stamp if self._timed else None
                last = stamp
            else:
                batch_times = times.astype(np.float64)
                check_times(batch_times, self._last_t)
                last = float(batch_times[-1])
            true_codes, pred_codes, lut, new = code_labels(truth, preds, self._index)  # validates; changes nothing
            self._register(new)  # gives the new labels the indices code_labels announced
            if t is None:
                self._clock_driven = True
            self._flush()
            self._last_t = last
            self._open_until = -math.inf  # the next update finds its bucket anew
            self._ingest(Batch(true_codes, pred_codes, batch_times, self._stride, lut))

    def _flush(self) -> None:
        """Move the per-sample buffer into every window (caller holds the lock).

        Lock-free ``update`` calls may append meanwhile: exactly the samples read
        here are deleted from the buffer's front. They all lie in the bucket of
        ``_last_t``, which stamps them.
        """
        buffer = self._cells
        n = len(buffer)
        if not n:
            return
        cells = np.fromiter(buffer[:n], dtype=np.intp, count=n)
        del buffer[:n]
        true_idx, pred_idx = np.divmod(cells, self._stride)
        self._ingest(Batch(true_idx, pred_idx, self._last_t if self._timed else None, self._stride))

    def _ingest(self, batch: Batch) -> None:
        if self._warmup_left:
            take = min(self._warmup_left, len(batch))
            self._warm_counts += np.bincount(batch.indices(0, take)[0], minlength=self._capacity)
            self._warmup_left -= take
            if not self._warmup_left:
                counts = {label: int(self._warm_counts[i]) for i, label in enumerate(self._index.labels)}
                self._reference = Reference.of(counts, source="warmup")
        k = len(self._index)
        detecting = self._watch.settings.enabled and len(batch) > 0
        if detecting:  # before the windows: for few classes it counts the batch for them too
            right, total = block_counts(batch, self._ingested, k, self._capacity)
        for w in self._windows:
            w.ingest(batch)
        self._lifetime.ingest(batch)
        if detecting:
            self._watch.ingest(right, total, len(batch), batch.times)
        else:
            self._watch.skip(len(batch))
        self._ingested += len(batch)

    # -- reads --------------------------------------------------------------------------------

    def _positive_index(self, labels: tuple[Hashable, ...]) -> int | None:
        if len(labels) != 2:
            return None
        if self._positive is not None:
            return labels.index(self._positive)
        if self._reference is not None:
            priors = self._reference.aligned(labels)
        else:
            priors = self._warm_counts[:2].astype(np.float64)
        return 0 if priors[0] < priors[1] else 1

    def _read_time(self) -> float | None:
        """The time reads are made at: the clock for clock-driven monitors, else the last sample's time."""
        if self._clock_driven:
            return self._clock_time()
        return None if self._last_t == -math.inf else self._last_t

    def _snapshots(self, now: float | None) -> list[tuple[Window, IntMatrix]]:
        """Each window with a K×K copy of its counts as of ``now`` (caller holds the lock, buffer flushed)."""
        k = len(self._index)
        return [(w, w.snapshot(now)[:k, :k].copy()) for w in [*self._windows, self._lifetime]]

    def report(self) -> Report:
        """A frozen report of every window (counts copied under the lock, math outside it)."""
        with self._lock:
            self._flush()
            now = self._read_time()
            *snapshots, (_, lifetime) = self._snapshots(now)
            labels = self._index.labels
            reference = self._reference
            positive = self._positive_index(labels)
            samples = self._ingested
            warmup_left = self._warmup_left
            degraded = {labels[c]: (d.p0, d.since, d.since_time) for c, d in self._watch.active().items()}
            baseline = {labels[c]: d.p0 for c, d in self._watch.detectors.items()}
        windows = {
            w.name: evaluate_window(w.name, w.kind, counts, labels, reference, positive=positive, policy=self._policy)
            for w, counts in snapshots
        }
        conditions = [c for w in windows.values() for c in window_conditions(w, reference)]
        with self._lock:
            stamp = self._last_t if now is None else now
            self._alert_since = active_since(self._alert_since, conditions, samples, stamp)
            since = dict(self._alert_since)
        drop = self._watch.settings.drop
        alerts = [Alert(DEGRADATION, STREAM, str(label), at, at_time, degradation_reason(label, p0, drop))
                  for label, (p0, at, at_time) in degraded.items()]
        alerts += [Alert(kind, window, subject, *since[(kind, window, subject)], reason)
                   for kind, window, subject, reason in conditions]
        return Report(
            windows=_frozen(windows),
            labels=labels,
            reference=reference,
            positive=None if positive is None else labels[positive],
            samples=samples,
            warmup_remaining=warmup_left,
            totals=ConfusionCounts(labels, lifetime),
            alerts=tuple(alerts),
            baseline=_frozen(baseline),
        )

    def __repr__(self) -> str:
        return f"Monitor(windows={self.window_names!r}, classes={len(self._index)}, samples={self.samples})"


def _frozen(mapping: Mapping[Any, Any]) -> Mapping[Any, Any]:
    return MappingProxyType(dict(mapping))
