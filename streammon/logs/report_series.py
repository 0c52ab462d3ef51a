"""The replay timeline read back as per-window series for the HTML report: one array per (metric, class).

``window_series(result)`` turns the tidy rows into, per window, arrays indexed by snapshot (NaN
where a snapshot has no value). ``Axis`` says what the horizontal axis is: UTC dates (timestamp
logs), seconds of data time, or samples counted (logs without a time column). ``thin`` picks at
most ``MAX_POINTS`` snapshots evenly, always the first and last; ``spans`` turns a per-snapshot
mask into shaded intervals, read at full resolution so thinning never hides a flag.

>>> thin(5), len(thin(8_760)), thin(8_760)[-1]
([0, 1, 2, 3, 4], 2000, 8759)
>>> spans([0.0, 1.0, 2.0, 3.0, 4.0], [False, True, True, False, True])
[(0.0, 2.0), (3.0, 4.0)]
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from streammon.findings.reference import Reference
from streammon.findings.report import Report
from streammon.logs.columns import DATES_FROM
from streammon.logs.spans import AlertSpan, Snapshot
from streammon.logs.timeline import Timeline

MAX_POINTS = 2_000  # snapshots drawn per trace: a 1-year hourly replay (8,760) is thinned to this
MAX_SPANS = 200  # shaded intervals per panel; closer ones are merged
Key = tuple[str, str | None]


class Replayed(Protocol):
    """What the report draws from a replay (``ReplayResult`` has it): the renderer depends on these fields,
    not on the result's module, whose ``write_html`` calls the renderer."""

    @property
    def source(self) -> str: ...
    @property
    def report(self) -> Report: ...
    @property
    def timeline(self) -> Timeline: ...
    @property
    def snapshots(self) -> tuple[Snapshot, ...]: ...
    @property
    def alerts(self) -> tuple[AlertSpan, ...]: ...
    @property
    def samples(self) -> int: ...
    @property
    def first_time(self) -> float | None: ...
    @property
    def last_time(self) -> float | None: ...
    @property
    def classes(self) -> tuple[Hashable, ...]: ...
    @property
    def reference(self) -> Reference | None: ...
    @property
    def baseline(self) -> Mapping[Hashable, float]: ...
    @property
    def windows(self) -> tuple[str, ...]: ...
    @property
    def every(self) -> str | int: ...


@dataclass(frozen=True)
class Axis:
    """The horizontal axis: ``kind`` "date" (values in ms since 1970, UTC), "seconds" or "samples"."""

    kind: str
    values: tuple[float, ...]  # one per snapshot, in axis units

    @property
    def title(self) -> str:
        """The axis title a reader understands."""
        return {"date": "time of the data (UTC)", "seconds": "time of the data (seconds)",
                "samples": "labelled samples counted"}[self.kind]

    def at(self, time: float | None, samples: int) -> float:
        """Where a moment (data time in seconds, or stream index) sits on this axis."""
        if self.kind == "samples" or time is None or not math.isfinite(time):
            return float(samples)
        return time * 1000.0 if self.kind == "date" else time


def axis_of(result: Replayed, dates: bool | None = None) -> Axis:
    """The axis of a replay: samples without times, else dates (``dates``, or times after 2000) or seconds."""
    times = [s.time for s in result.snapshots]
    if any(t is None for t in times):
        return Axis("samples", tuple(float(s.samples) for s in result.snapshots))
    timed = [float(t) for t in times if t is not None]
    if dates is None:
        dates = min(timed) >= DATES_FROM
    return Axis("date", tuple(t * 1000.0 for t in timed)) if dates else Axis("seconds", tuple(timed))


@dataclass
class WindowSeries:
    """One window's timeline: ``value``/``corrected``/``lower``/``upper`` arrays and ``flags`` per (metric, class)."""

    size: int
    value: dict[Key, np.ndarray] = field(default_factory=dict)
    corrected: dict[Key, np.ndarray] = field(default_factory=dict)
    lower: dict[Key, np.ndarray] = field(default_factory=dict)
    upper: dict[Key, np.ndarray] = field(default_factory=dict)
    flags: dict[Key, list[str]] = field(default_factory=dict)

    def get(self, column: str, metric: str, label: str | None = None) -> np.ndarray:
        """The column (``value``, ``corrected``, ``lower``, ``upper``) of a metric; all NaN if never reported."""
        found: dict[Key, np.ndarray] = getattr(self, column)
        return found.get((metric, label), np.full(self.size, math.nan))

    def flagged(self, metric: str, kind: str) -> list[bool]:
        """Per snapshot: was ``metric`` flagged with ``kind``."""
        raised = self.flags.get((metric, None), [""] * self.size)
        return [kind in text.split(",") for text in raised]

    def has(self, metric: str, label: str | None = None) -> bool:
        """Whether the metric has any finite value in this window."""
        return bool(np.isfinite(self.get("value", metric, label)).any())

    def _put(self, i: int, key: Key, row: tuple[float, float | None, str | None, float | None, float | None]
             ) -> None:
        value, corrected, flag, lower, upper = row
        for column, number in ((self.value, value), (self.corrected, corrected), (self.lower, lower),
                               (self.upper, upper)):
            if number is not None:
                if key not in column:
                    column[key] = np.full(self.size, math.nan)
                column[key][i] = number
        if flag:
            self.flags.setdefault(key, [""] * self.size)[i] = flag


def window_series(result: Replayed) -> dict[str, WindowSeries]:
    """Per window, the timeline's rows as arrays indexed by snapshot."""
    index = {s.samples: i for i, s in enumerate(result.snapshots)}
    size = len(result.snapshots)
    out: dict[str, WindowSeries] = {}
    c = result.timeline.columns
    for samples, window, metric, label, value, corrected, flag, lower, upper in zip(
            c["samples"], c["window"], c["metric"], c["class"], c["value"], c["corrected"], c["flag"], c["lower"],
            c["upper"], strict=True):
        series = out.get(window) or out.setdefault(window, WindowSeries(size))
        series._put(index[samples], (metric, label), (value, corrected, flag, lower, upper))
    return out


def thin(size: int, limit: int = MAX_POINTS) -> list[int]:
    """At most ``limit`` snapshot indices, evenly spaced, first and last included."""
    if size <= limit:
        return list(range(size))
    return [int(i) for i in np.unique(np.linspace(0, size - 1, limit).round().astype(np.int64))]


def spans(x: Sequence[float], mask: Sequence[bool], limit: int = MAX_SPANS) -> list[tuple[float, float]]:
    """Intervals to shade where ``mask`` holds: snapshot ``i`` covers ``(x[i-1], x[i]]``; at most ``limit``.

    Runs closer than the axis range over ``limit`` are merged, then the nearest pairs until ``limit`` remain.
    """
    runs: list[tuple[float, float]] = []
    for i, on in enumerate(mask):
        if not on:
            continue
        start = x[i - 1] if i > 0 else x[0]
        if runs and runs[-1][1] >= start:
            runs[-1] = (runs[-1][0], x[i])
        else:
            runs.append((start, x[i]))
    gap = (x[-1] - x[0]) / limit if len(x) > 1 else 0.0
    runs = _merge(runs, gap)
    while len(runs) > limit:
        gap *= 2
        runs = _merge(runs, gap)
    return runs


def _merge(runs: list[tuple[float, float]], gap: float) -> list[tuple[float, float]]:
    """Runs joined where the space between them is under ``gap``."""
    merged = runs[:1]
    for run in runs[1:]:
        if run[0] - merged[-1][1] < gap:
            merged[-1] = (merged[-1][0], run[1])
        else:
            merged.append(run)
    return merged


def rounded(values: np.ndarray | Sequence[float], keep: Sequence[int]) -> list[float | None]:
    """The kept values to 4 significant digits (a smaller page), NaN/inf as None (a gap in the line)."""
    out: list[float | None] = []
    for i in keep:
        v = float(values[i])
        out.append(float(f"{v:.4g}") if math.isfinite(v) else None)
    return out
