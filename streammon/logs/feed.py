"""Feeding a monitor chunk by chunk and snapshotting its report: what every replay path shares.

``Replayer`` counts chunks of rows (``update_many``, or ``predict_many``/``label_many`` for a joined
log) and takes a snapshot every ``Every``; ``replay_monitor`` builds (or checks) the monitor a replay
feeds; ``duration_seconds`` reads ``"15m"``. ``streammon.logs.replayer`` (one log of labelled
predictions), ``joined`` (predictions and labels joined on a key) and ``counts_table`` (bucket counts)
build on it; it imports none of them.

>>> Every.parse("1h", timed=True).seconds
3600.0
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammon.counting.coded import Coded
from streammon.counting.windows import Cumulative, Sliding, Timed, Window
from streammon.detection.baseline import DetectorSettings
from streammon.findings.distortion import Policy
from streammon.findings.report import Report
from streammon.logs.errors import ReplayError
from streammon.logs.reference_check import CHECK_ROWS, check, distinct
from streammon.logs.result import ReplayResult
from streammon.logs.spans import AlertLog, Snapshot
from streammon.logs.timeline import Timeline
from streammon.monitor import Monitor, default_windows

UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86_400.0, "w": 604_800.0}
DEFAULT_EVERY_TIMED = "1d"
DEFAULT_EVERY_ROWS = 100_000
OnSnapshot = Callable[[Snapshot, Report], None]
Feed = Callable[..., None]


@dataclass(frozen=True)
class Every:
    """Snapshot spacing: ``rows`` or ``seconds`` (one of them), and how it was ``given``.

    >>> Every.parse("15m", timed=True).seconds, Every.parse("10000", timed=False).rows
    (900.0, 10000)
    """

    rows: int | None
    seconds: float | None
    given: str | int

    @classmethod
    def parse(cls, every: str | int | None, *, timed: bool) -> Every:
        """``every`` as rows (an int, or digits) or a duration (a number and a unit: s, m, h, d, w)."""
        if every is None:
            every = DEFAULT_EVERY_TIMED if timed else DEFAULT_EVERY_ROWS
        if isinstance(every, str) and every.strip().replace("_", "").isdigit():
            every = int(every.strip().replace("_", ""))
        if isinstance(every, int) and not isinstance(every, bool):
            if every < 1:
                raise ValueError(f"every must be >= 1 row, got {every}")
            return cls(every, None, every)
        match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*(s|m|min|h|d|w)\s*", every) if isinstance(every, str) else None
        if match is None:
            raise ValueError(f"every must be a number of rows (10000) or a duration (90s, 15m, 1h, 1d, 1w), "
                             f"got {every!r}")
        seconds = float(match.group(1)) * UNITS[match.group(2)]
        if seconds <= 0:
            raise ValueError(f"every must be a positive duration, got {every!r}")
        if not timed:
            raise ValueError(f"every={every!r} is a duration: it needs a time column")
        return cls(None, seconds, every)


class Replayer:
    """Feeds chunks of rows to a monitor in order and snapshots its report every ``every``."""

    def __init__(self, monitor: Monitor, every: Every, *, timed: bool, on_snapshot: OnSnapshot | None = None
                 ) -> None:
        self.monitor = monitor
        self.every = every
        self.timed = timed
        self.on_snapshot = on_snapshot
        self.timeline = Timeline()
        self.snapshots: list[Snapshot] = []
        self.alerts = AlertLog(timed)
        self.samples = 0
        self.first_time: float | None = None
        self.last_time: float | None = None
        self._unreported = 0
        self._period_end: float | None = None
        self.report: Report | None = None
        self._method: Feed = monitor.update_many
        self._scores: np.ndarray | None = None  # the scores of the rows being fed (feed)
        reference = monitor.reference
        given = () if reference is None or reference.source != "given" else tuple(reference.priors)
        # only text classes can be mistyped: a reference without one is not checked (int logs pay nothing)
        self._check_against = given if any(isinstance(c, str) for c in given) else None
        self._seen: set[Hashable] = set()
        self._looked = 0  # rows whose labels are in _seen

    def feed(self, true: np.ndarray | Coded, pred: np.ndarray | Coded, times: np.ndarray | None, file: str,
             first_row: int, *, method: Feed | None = None, scores: np.ndarray | None = None) -> None:
        """Count the rows ``first_row...`` of ``file`` (times None without a time column) with ``method``
        (default ``monitor.update_many``; ``predict_many``/``label_many`` take keys as ``true``), with the rows'
        ``scores`` if given (``y_score``)."""
        self._scores = scores
        self._method = self.monitor.update_many if method is None else method
        if self._check_against is not None:
            self._see(true, pred, last=False)
        n, start = len(true), 0
        while start < n:
            if self.every.rows is not None:
                stop = min(n, start + self.every.rows - self.samples % self.every.rows)
                self._count(true[start:stop], pred[start:stop], None if times is None else times[start:stop],
                            file, first_row + start, offset=start)
                if self.samples % self.every.rows == 0:
                    self._snapshot(self.last_time)
            else:
                assert times is not None and self.every.seconds is not None
                if self._period_end is None:
                    self._period_end = _period_end(float(times[start]), self.every.seconds)
                stop = start + int(np.searchsorted(times[start:], self._period_end, side="left"))
                if stop > start:
                    self._count(true[start:stop], pred[start:stop], times[start:stop], file, first_row + start,
                                offset=start)
                if stop < n:
                    self._snapshot(self._period_end)
                    self._period_end = _period_end(float(times[stop]), self.every.seconds)
            start = stop

    def _count(self, true: np.ndarray | Coded, pred: np.ndarray | Coded, times: np.ndarray | None, file: str,
               row: int, *, offset: int = 0) -> None:
        scored = {} if self._scores is None else {"y_score": self._scores[offset:offset + len(true)]}
        try:
            self._method(true, pred, t=times, **scored)
        except (ValueError, TypeError) as exc:
            raise ReplayError(f"rows {row}–{row + len(true) - 1} were refused by the monitor: {exc}", file=file,
                              row=row) from exc
        if times is not None:
            if self.first_time is None:
                self.first_time = float(times[0])
            self.last_time = float(times[-1])
        self.samples += len(true)
        self._unreported += len(true)

    def _see(self, true: np.ndarray | Coded, pred: np.ndarray | Coded, *, last: bool) -> None:
        """Gather the labels of the first ``CHECK_ROWS`` rows given to ``feed``, then check the reference's classes
        against them once (at the end when the log is shorter): a likely typo raises ``ReferenceMismatch`` before
        the chunk that completes them counts (a log's chunks are up to ``BATCH_ROWS`` rows: before any row)."""
        assert self._check_against is not None
        if not last:
            taken = CHECK_ROWS - self._looked
            self._seen |= distinct(pred[:taken])
            if self._method == self.monitor.update_many:  # predict_many/label_many take keys first
                self._seen |= distinct(true[:taken])
            self._looked += min(taken, len(pred))
        if last or self._looked >= CHECK_ROWS:
            reference, self._check_against = self._check_against, None
            check(reference, self._seen, self._looked)
            self._seen = set()

    def _snapshot(self, time: float | None) -> None:
        if self._check_against is not None:  # no snapshot is shown before the reference is checked
            self._see(np.empty(0), np.empty(0), last=True)
        if not self._unreported and self.snapshots:
            return
        report = self.monitor.report()
        snapshot = Snapshot(time, report.samples)
        self.timeline.add(time, report)
        self.snapshots.append(snapshot)
        self.alerts.see(snapshot, report.alerts)
        self.report = report
        self._unreported = 0
        if self.on_snapshot is not None:
            self.on_snapshot(snapshot, report)

    def finish(self, source: str) -> ReplayResult:
        """Snapshot the last rows and return the result."""
        self._snapshot(self._period_end if self.every.seconds is not None else self.last_time)
        assert self.report is not None
        return ReplayResult(
            source=source, report=self.report, timeline=self.timeline, snapshots=tuple(self.snapshots),
            alerts=self.alerts.spans(), samples=self.samples, first_time=self.first_time, last_time=self.last_time,
            classes=self.monitor.labels, reference=self.report.reference, baseline=self.report.baseline,
            windows=self.monitor.window_names, every=self.every.given, monitor=self.monitor)


def duration_seconds(value: float | str) -> float:
    """Seconds of a duration given as a number of seconds or as text with a unit (s, m, h, d, w).

    >>> duration_seconds("1h"), duration_seconds(30)
    (3600.0, 30.0)
    """
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*(s|m|min|h|d|w)?\s*", value)
        seconds = float(match.group(1)) * UNITS[match.group(2) or "s"] if match else math.nan
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise TypeError(f"a duration must be seconds or text such as '1h', got {value!r}")
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"a duration must be positive seconds or text such as '90s', '15m', '1h', got {value!r}")
    return seconds


def _period_end(t: float, every: float) -> float:
    """The end of the period of ``every`` seconds holding ``t`` (periods aligned to multiples of ``every``)."""
    return (math.floor(t / every) + 1) * every


def replay_monitor(monitor: Monitor | None, *, timed: bool, windows: Iterable[Window] | None,
                   reference: Mapping[Any, Any] | None, baseline: Any, positive: Any,
                   label_kind: str, text_labels: bool, detector: DetectorSettings | None = None,
                   policy: Policy | None = None) -> Monitor:
    """The monitor a replay feeds: the one given, or a new one (its clock unused: times come from the log).

    ``baseline`` may be a callable ``(classes, positive) -> baseline``, called with the reference's classes (None
    without a reference) and ``positive`` in the log's label type: a validation file whose text labels must
    match the log's (the command line's ``--validation``) is read once that type is known."""
    if monitor is not None:
        if any(option is not None for option in (windows, reference, baseline, positive, detector, policy)):
            raise ValueError("give either a monitor or windows/reference/baseline/positive/detector/policy, "
                             "not both")
    else:
        if windows is None:
            windows = default_windows() if timed else [Cumulative(), Sliding(1000), Sliding(10_000)]
        if text_labels:
            reference = None if reference is None else {_typed(k, label_kind): v for k, v in reference.items()}
            baseline = baseline if baseline is None or callable(baseline) else {
                _typed(k, label_kind): {_typed(j, label_kind): c for j, c in row.items()} for k, row in
                baseline.items()}
            positive = None if positive is None else _typed(positive, label_kind)
        if callable(baseline):
            baseline = _read_baseline(baseline, None if reference is None else tuple(reference), positive,
                                      label_kind if text_labels else None)
        monitor = Monitor(windows, reference=reference, baseline=baseline, positive=positive, detector=detector,
                          policy=policy, clock=lambda: 0.0)
    if not timed:
        kinds = {w.name: w.kind for w in monitor.report().windows.values()}
        refused = [name for name, kind in kinds.items() if kind == Timed.kind]
        if refused:
            raise ValueError(f"timed windows {refused} need sample times: name the time column")
    return monitor


def _read_baseline(read: Callable[[tuple[Hashable, ...] | None, Any], Any], classes: tuple[Hashable, ...] | None,
                   positive: Any, kind: str | None) -> Any:
    """A baseline read by ``read(classes, positive)``; without classes, a validation read as text whose labels
    are numbers or booleans in the log (``kind``) is read again with them in the log's type."""
    baseline = read(classes, positive)
    if classes is None and kind is not None:
        typed = tuple(_typed(label, kind) for label in baseline.labels)
        if typed != tuple(baseline.labels):
            baseline = read(typed, positive)
    return baseline


def _typed(label: Hashable, kind: str) -> Hashable:
    """A label given as text (the command line) in the log's label type."""
    if isinstance(label, str):
        if kind == "int" and re.fullmatch(r"[-+]?\d+", label.strip()):
            return int(label)
        if kind == "bool" and label.strip().lower() in ("true", "false"):
            return label.strip().lower() == "true"
    return label
