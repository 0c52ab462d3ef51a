"""What a replay sees over time: snapshots, and the alerts that turned on and cleared between them.

``AlertLog`` follows the active alerts from snapshot to snapshot and gives each as an ``AlertSpan``;
the replayer makes them, ``ReplayResult`` carries them, the HTML report draws them.

>>> log = AlertLog(timed=False)
>>> log.spans()
()
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from streammon.findings.report import Alert


@dataclass(frozen=True)
class Snapshot:
    """One point of the timeline: its ``time`` (the period's end for ``every`` as a duration, else the last
    row's time; None without a time column) and the rows counted by then."""

    time: float | None
    samples: int


@dataclass(frozen=True)
class AlertSpan:
    """An alert seen during the replay.

    ``since_sample``/``since_time`` say when it turned on (stream index, data time; NaN without
    times), ``first_seen`` the first snapshot showing it, ``cleared`` the first snapshot after it no
    longer showed (None if it was still on at the end).
    """

    kind: str
    window: str
    subject: str
    since_sample: int
    since_time: float
    reason: str
    first_seen: Snapshot
    cleared: Snapshot | None


class AlertLog:
    """Follows the active alerts from snapshot to snapshot."""

    def __init__(self, timed: bool) -> None:
        self._timed = timed
        self._open: dict[tuple[str, str, str, int], AlertSpan] = {}
        self._done: list[AlertSpan] = []

    def see(self, snapshot: Snapshot, alerts: tuple[Alert, ...]) -> None:
        """Record the alerts active at ``snapshot``."""
        now = {(a.kind, a.window, a.subject, a.since_sample): a for a in alerts}
        for key in [k for k in self._open if k not in now]:
            span = self._open.pop(key)
            self._done.append(dataclasses.replace(span, cleared=snapshot))
        for key, a in now.items():
            if key not in self._open:
                since = a.since_time if self._timed else math.nan
                self._open[key] = AlertSpan(a.kind, a.window, a.subject, a.since_sample, since, a.reason, snapshot,
                                            None)

    def spans(self) -> tuple[AlertSpan, ...]:
        """Every alert seen, in the order they turned on."""
        return tuple(sorted([*self._done, *self._open.values()], key=lambda s: (s.since_sample, s.kind, s.subject)))
