"""Replay a log of predictions and labels through a ``Monitor``, snapshotting a report as it goes.

The rows are fed, chunk by chunk in file order, to ``Monitor.update_many`` with their times, so
the result is exactly that of a monitor fed the same rows by hand. A snapshot (a ``report()``,
turned into timeline rows) is taken every ``every``: a number of rows (``10000``), or a duration
of data time (``"90s"``, ``"15m"``, ``"1h"``, ``"1d"``, ``"1w"``) — then at the end of every
period of that length (aligned to multiples of it since time 0, like timed windows' buckets) that
holds rows, reporting the rows before the period's end; a period without rows has no snapshot.
The last rows always get a snapshot. Without a time column timed windows are refused and the
default windows are ``cumulative``, ``sliding_1000`` and ``sliding_10000``.

>>> import pyarrow as pa
>>> log = pa.table({"t": [0.0, 30.0, 70.0, 130.0], "y": ["a", "b", "a", "a"], "p": ["a", "b", "b", "a"]})
>>> result = replay(log, true="y", pred="p", time="t", every="1m", reference={"a": 1, "b": 1})
>>> [(s.time, s.samples) for s in result.snapshots]
[(60.0, 2), (120.0, 3), (180.0, 4)]
>>> result.report.windows["cumulative"].recall["a"]
0.6666666666666666
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
from streammon.findings.report import Report
from streammon.logs.errors import ReplayError
from streammon.logs.result import AlertLog, ReplayResult, Snapshot
from streammon.logs.sources import BATCH_ROWS, open_log
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

    def feed(self, true: np.ndarray | Coded, pred: np.ndarray | Coded, times: np.ndarray | None, file: str,
             first_row: int, *, method: Feed | None = None) -> None:
        """Count the rows ``first_row...`` of ``file`` (times None without a time column) with ``method``
        (default ``monitor.update_many``; ``predict_many``/``label_many`` take keys as ``true``)."""
        self._method = self.monitor.update_many if method is None else method
        n, start = len(true), 0
        while start < n:
            if self.every.rows is not None:
                stop = min(n, start + self.every.rows - self.samples % self.every.rows)
                self._count(true[start:stop], pred[start:stop], None if times is None else times[start:stop],
                            file, first_row + start)
                if self.samples % self.every.rows == 0:
                    self._snapshot(self.last_time)
            else:
                assert times is not None and self.every.seconds is not None
                if self._period_end is None:
                    self._period_end = _period_end(float(times[start]), self.every.seconds)
                stop = start + int(np.searchsorted(times[start:], self._period_end, side="left"))
                if stop > start:
                    self._count(true[start:stop], pred[start:stop], times[start:stop], file, first_row + start)
                if stop < n:
                    self._snapshot(self._period_end)
                    self._period_end = _period_end(float(times[stop]), self.every.seconds)
            start = stop

    def _count(self, true: np.ndarray | Coded, pred: np.ndarray | Coded, times: np.ndarray | None, file: str,
               row: int) -> None:
        try:
            self._method(true, pred, t=times)
        except (ValueError, TypeError) as exc:
            raise ReplayError(f"rows {row}–{row + len(true) - 1} were refused by the monitor: {exc}", file=file,
                              row=row) from exc
        if times is not None:
            if self.first_time is None:
                self.first_time = float(times[0])
            self.last_time = float(times[-1])
        self.samples += len(true)
        self._unreported += len(true)

    def _snapshot(self, time: float | None) -> None:
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
                   label_kind: str, text_labels: bool) -> Monitor:
    """The monitor a replay feeds: the one given, or a new one (its clock unused: times come from the log)."""
    if monitor is not None:
        if windows is not None or reference is not None or baseline is not None or positive is not None:
            raise ValueError("give either a monitor or windows/reference/baseline/positive, not both")
    else:
        if windows is None:
            windows = default_windows() if timed else [Cumulative(), Sliding(1000), Sliding(10_000)]
        if text_labels:
            reference = None if reference is None else {_typed(k, label_kind): v for k, v in reference.items()}
            baseline = None if baseline is None else {
                _typed(k, label_kind): {_typed(j, label_kind): c for j, c in row.items()} for k, row in
                baseline.items()}
            positive = None if positive is None else _typed(positive, label_kind)
        monitor = Monitor(windows, reference=reference, baseline=baseline, positive=positive, clock=lambda: 0.0)
    if not timed:
        kinds = {w.name: w.kind for w in monitor.report().windows.values()}
        refused = [name for name, kind in kinds.items() if kind == Timed.kind]
        if refused:
            raise ValueError(f"timed windows {refused} need sample times: name the time column")
    return monitor


def _typed(label: Hashable, kind: str) -> Hashable:
    """A label given as text (the command line) in the log's label type."""
    if isinstance(label, str):
        if kind == "int" and re.fullmatch(r"[-+]?\d+", label.strip()):
            return int(label)
        if kind == "bool" and label.strip().lower() in ("true", "false"):
            return label.strip().lower() == "true"
    return label


def replay(
    source: Any,
    *,
    true: str | None = None,
    pred: str,
    time: str | None = None,
    key: str | None = None,
    labels: Any = None,
    label_time: str | None = None,
    every: str | int | None = None,
    windows: Iterable[Window] | None = None,
    reference: Mapping[Any, Any] | None = None,
    baseline: Any = None,
    positive: Any = None,
    monitor: Monitor | None = None,
    on_snapshot: OnSnapshot | None = None,
    text_labels: bool = False,
    batch_rows: int = BATCH_ROWS,
) -> ReplayResult:
    """Replay a log of labelled predictions and return its timeline, final report and alerts.

    ``source``: a path (a Parquet file or folder, a CSV or an Arrow IPC file), an Arrow table, a
    pandas or polars DataFrame. ``true``/``pred``/``time`` name the columns (time: timestamps, dates or
    seconds; rows in time order). ``every``: snapshot spacing (default one day of data time, or
    100,000 rows without times). ``windows``/``reference``/``baseline``/``positive`` build the monitor
    as ``Monitor`` does (default windows: ``default_windows()``), or pass a ready ``monitor``.
    ``on_snapshot(snapshot, report)`` sees every snapshot's full report. ``text_labels``: labels in
    ``reference``/``baseline``/``positive`` are text (as on the command line) and are read in the
    log's label type. Raises ``ReplayError`` (a ``ValueError``) naming the file, column and row of a
    malformed log; nothing is written by ``replay`` itself.

    With ``key`` and ``labels`` (a second source, as ``source``): ``source`` holds predictions (``key``,
    ``pred``, ``time``) and ``labels`` the labels (``key``, ``true``, and ``label_time``, default ``time``),
    joined through ``Monitor.predict_many``/``label_many`` in time order (see ``streammon.logs.joined``).
    """
    if key is not None or labels is not None:
        if key is None or labels is None or true is None:
            raise ValueError("joining predictions and labels needs key, labels and true (the labels' column)")
        from streammon.logs.joined import replay_joined  # joined imports this module

        return replay_joined(source, labels, key=key, true=true, pred=pred, time=time, label_time=label_time,
                             every=every, batch_rows=batch_rows, windows=windows, reference=reference,
                             baseline=baseline, positive=positive, monitor=monitor, on_snapshot=on_snapshot,
                             text_labels=text_labels)
    if true is None:
        raise ValueError("true names the column of the true labels")
    if label_time is not None:
        raise ValueError("label_time names the time column of a labels log: give labels and key too")
    log = open_log(source, true=true, pred=pred, time=time, batch_rows=batch_rows)
    timed = time is not None
    every_ = Every.parse(every, timed=timed)
    fed = replay_monitor(monitor, timed=timed, windows=windows, reference=reference, baseline=baseline,
                         positive=positive, label_kind=log.label_kind, text_labels=text_labels)
    replayer = Replayer(fed, every_, timed=timed, on_snapshot=on_snapshot)
    for chunk in log.chunks(coded=True):
        replayer.feed(chunk.true, chunk.pred, chunk.times, chunk.file, chunk.first_row)
    if not replayer.samples:
        raise ReplayError("the log holds no rows", file=log.name)
    return replayer.finish(log.name)
