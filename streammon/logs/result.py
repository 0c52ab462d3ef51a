"""What a replay returns: the timeline, the final report, the alerts with their times, and the data's range.

``ReplayResult`` carries everything a report of the replay needs (the HTML report builds on it):
the tidy ``timeline``, the final ``report``, ``alerts`` (each alert raised, when it turned on in
data time, and the snapshots that first and last showed it), ``snapshots`` (time and samples of
each), the data range, the classes, the reference and the baselines, and the ``monitor`` itself
(to save, or to keep feeding).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from streammon.findings.reference import Reference
from streammon.findings.report import Report
from streammon.logs.spans import AlertLog, AlertSpan, Snapshot
from streammon.logs.timeline import Timeline
from streammon.monitor import Monitor

__all__ = ["AlertLog", "AlertSpan", "ReplayResult", "Snapshot"]


@dataclass(frozen=True)
class ReplayResult:
    """The result of ``replay`` / ``replay_counts``.

    ``first_time``/``last_time`` are the data's time range (seconds; None without a time column);
    ``classes`` the monitor's classes in index order; ``reference`` the reference mix (given, or
    learned from the warm-up); ``baseline`` each class's in-control recall used by the detector;
    ``every`` the snapshot spacing as given (``"1d"``, ``10000``).
    """

    source: str
    report: Report
    timeline: Timeline
    snapshots: tuple[Snapshot, ...]
    alerts: tuple[AlertSpan, ...]
    samples: int
    first_time: float | None
    last_time: float | None
    classes: tuple[Hashable, ...]
    reference: Reference | None
    baseline: Mapping[Hashable, float]
    windows: tuple[str, ...]
    every: str | int
    monitor: Monitor

    def write_timeline(self, path: Any) -> None:
        """Write the timeline to ``path`` (``.parquet``: Parquet, else JSON); see ``Timeline.write``."""
        self.timeline.write(path)

    def write_html(self, path: Any, *, title: str | None = None, marks: Sequence[tuple[float, str]] = (),
                   dates: bool | None = None) -> None:
        """Write the HTML report to ``path`` (one self-contained page; needs plotly: ``streammon[report]``).

        ``marks``: labelled vertical lines at data times in seconds (samples without a time column);
        ``dates``: read times as UTC timestamps (default: when they fall after 2000). Written to a
        temporary file beside it and renamed. See ``streammon.logs.report_page``.
        """
        from streammon.logs.report_page import write_html

        write_html(self, path, title=title, marks=marks, dates=dates)

    def __repr__(self) -> str:
        return (f"ReplayResult(source={self.source!r}, samples={self.samples}, snapshots={len(self.snapshots)}, "
                f"alerts={len(self.alerts)}, classes={self.classes!r})")
