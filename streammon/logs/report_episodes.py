"""Alerts as episodes, most severe first, and the window where the most severe one is clearest.

A replay sees an alert turn on and off (``AlertSpan``); a flapping alert is many spans. For the report, the
on-periods of one (kind, window, subject) are one **episode** while the alert comes back within the **hold**:

- it was off at a single snapshot only (the report cannot tell a shorter gap), or
- it came back sooner than the window's span after the snapshot that found it off: ``size`` samples for
  ``sliding_<size>``, ``seconds`` of data time for ``timed_<seconds>s`` (the samples that raised it may still be in
  the window). The cumulative window and the degradation detector (window ``stream``) have no span: one snapshot.

Episodes are ordered by **severity** — ``degradation``, ``not_prior_shift``, ``class_set_change``,
``prior_shift``, then ``incompetent``, ``label_coverage_low``, ``predicted_mix_shift`` (another kind last) — then
by start. ``first_window`` picks the window the report shows first: among the episodes of the most severe kind,
the window where it is clearest — for a degradation, the window whose recall of the class stays furthest below
its baseline with its whole interval (the baseline minus the interval's upper end, its median over the snapshots
while the episode lasts: a median, not a minimum, so a short window's chance dips do not win); for a prior
shift, the smallest p-value; ties (or no evidence) go to the shortest window (fewest
samples at the end). Everything here is pure: spans, snapshots and series in, values out.

>>> from streammon.logs.spans import AlertSpan, Snapshot
>>> snaps = [Snapshot(None, n) for n in (100, 200, 300, 400, 500)]
>>> flap = [AlertSpan("prior_shift", "sliding_50", "class_mix", s, math.nan, "", snaps[i], snaps[i + 1])
...         for i, s in ((0, 50), (2, 250))]
>>> [(e.kind, e.toggles, e.end.samples) for e in episodes(flap, snaps)]
[('prior_shift', 2, 400)]
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from streammon.findings.report import (
    CLASS_SET_CHANGE,
    DEGRADATION,
    INCOMPETENT,
    LABEL_COVERAGE_LOW,
    NOT_PRIOR_SHIFT,
    PREDICTED_MIX_SHIFT,
    PRIOR_SHIFT,
)
from streammon.logs.report_series import WindowSeries
from streammon.logs.spans import AlertSpan, Snapshot

SEVERITY = (DEGRADATION, NOT_PRIOR_SHIFT, CLASS_SET_CHANGE, PRIOR_SHIFT, INCOMPETENT, LABEL_COVERAGE_LOW,
            PREDICTED_MIX_SHIFT)


@dataclass(frozen=True)
class Hold:
    """How long an alert may be off and still be the same episode: ``samples`` counted or ``seconds`` of data
    time after the snapshot that found it off (besides the one-snapshot rule)."""

    samples: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Episode:
    """One alert episode: its on-periods merged.

    ``start_sample``/``start_time`` — when its first on-period turned on (time NaN without times);
    ``first_seen`` — the first snapshot showing it; ``end`` — the snapshot that found its last on-period
    cleared (None: still on at the end, *ongoing*); ``toggles`` — the on-periods merged into it; ``reason`` —
    its latest on-period's; ``evidence`` — its evidence (larger is stronger, NaN when not measured) and
    ``evidence_text`` how a person reads it.
    """

    kind: str
    window: str
    subject: str
    start_sample: int
    start_time: float
    first_seen: Snapshot
    end: Snapshot | None
    toggles: int
    reason: str
    evidence: float = math.nan
    evidence_text: str = ""

    @property
    def ongoing(self) -> bool:
        """Still on at the end of the replay."""
        return self.end is None

    def duration(self, last: Snapshot) -> tuple[float, str]:
        """How long it lasted (up to ``last``, the replay's last snapshot, when ongoing), and the unit:
        ``"s"`` of data time when times are known, else ``"samples"``."""
        until = last if self.end is None else self.end
        if math.isfinite(self.start_time) and until.time is not None:
            return until.time - self.start_time, "s"
        return float(until.samples - self.start_sample), "samples"


def severity(kind: str) -> int:
    """The rank of an alert kind, 0 the most severe (``SEVERITY``); an unknown kind after every known one."""
    return SEVERITY.index(kind) if kind in SEVERITY else len(SEVERITY)


def hold_of(window: str) -> Hold:
    """The hold of a window by its name: ``sliding_<size>`` its size, ``timed_<seconds>s`` its seconds, else none.

    >>> hold_of("sliding_1000"), hold_of("timed_3600s"), hold_of("cumulative")
    (Hold(samples=1000, seconds=0.0), Hold(samples=0, seconds=3600.0), Hold(samples=0, seconds=0.0))
    """
    sliding = re.fullmatch(r"sliding_(\d+)", window)
    if sliding:
        return Hold(samples=int(sliding.group(1)))
    timed = re.fullmatch(r"timed_(\d+(?:\.\d*)?(?:e[-+]?\d+)?)s", window)
    return Hold(seconds=float(timed.group(1))) if timed else Hold()


def episodes(spans: Sequence[AlertSpan], snapshots: Sequence[Snapshot],
             holds: Mapping[str, Hold] | None = None) -> list[Episode]:
    """The episodes of ``spans`` (a replay's alerts; ``snapshots`` its snapshots, in order), most severe first,
    then by start. ``holds``: per window (default ``hold_of`` its name)."""
    where = {s.samples: i for i, s in enumerate(snapshots)}
    groups: dict[tuple[str, str, str], list[AlertSpan]] = {}
    for span in sorted(spans, key=lambda s: (s.since_sample, where.get(s.first_seen.samples, 0))):
        groups.setdefault((span.kind, span.window, span.subject), []).append(span)
    found: list[Episode] = []
    for (_, window, _), periods in groups.items():
        hold = holds.get(window, hold_of(window)) if holds is not None else hold_of(window)
        current: Episode | None = None
        for period in periods:
            if current is not None and _continues(current, period, hold, where):
                later = current.end if period.cleared is None or current.end is None else (
                    max(current.end, period.cleared, key=lambda s: s.samples))
                current = replace(current, end=None if period.cleared is None or current.end is None else later,
                                  toggles=current.toggles + 1, reason=period.reason)
            else:
                if current is not None:
                    found.append(current)
                current = Episode(period.kind, period.window, period.subject, period.since_sample,
                                  period.since_time, period.first_seen, period.cleared, 1, period.reason)
        if current is not None:
            found.append(current)
    return sorted(found, key=lambda e: (severity(e.kind), e.start_sample, e.window, e.subject))


def _continues(episode: Episode, period: AlertSpan, hold: Hold, where: Mapping[int, int]) -> bool:
    """Whether ``period`` turned on within the hold of ``episode``'s end (or overlaps it)."""
    if episode.end is None:
        return True  # still on: the period overlaps it
    off_at, back_at = where.get(episode.end.samples), where.get(period.first_seen.samples)
    if off_at is not None and back_at is not None and back_at <= off_at + 1:
        return True  # off at one snapshot at most
    if period.since_sample - episode.end.samples < hold.samples:
        return True
    end_time = episode.end.time
    return end_time is not None and math.isfinite(period.since_time) and period.since_time - end_time < hold.seconds


def with_evidence(found: Sequence[Episode], snapshots: Sequence[Snapshot], series: Mapping[str, WindowSeries],
                  baseline: Mapping[str, float]) -> list[Episode]:
    """The episodes with their evidence read from the windows' series (``report_series.window_series``): a prior
    shift's smallest p-value in its window; a degradation's ``clarity`` in the window where it is largest."""
    where = Positions(snapshots)
    return [_evidence(e, where, series, baseline) for e in found]


def _evidence(e: Episode, where: Positions, series: Mapping[str, WindowSeries],
              baseline: Mapping[str, float]) -> Episode:
    first, last = where.range(e)
    if e.kind == PRIOR_SHIFT and e.window in series:
        p = series[e.window].get("value", "prior_shift_p")[first:last + 1]
        finite = p[np.isfinite(p)]
        if finite.size:
            low = float(finite.min())
            text = f"p = {low:.2g}" if low > 0 else "p < 1e-300"
            return replace(e, evidence=-math.log10(low) if low > 0 else math.inf, evidence_text=text)
    elif e.kind == DEGRADATION:
        by_window = clarity(e, where, series, baseline)
        if by_window:
            best = max(by_window, key=lambda w: by_window[w])
            drop = by_window[best]
            text = (f"recall interval {drop:.3f} below the baseline {baseline[e.subject]:.3f} (median over the "
                    f"episode; window {best})" if drop > 0 else
                    f"recall interval mostly not wholly below the baseline (closest: window {best})")
            return replace(e, evidence=drop, evidence_text=text)
    return e


def clarity(e: Episode, snapshots: Sequence[Snapshot] | Positions, series: Mapping[str, WindowSeries],
            baseline: Mapping[str, float]) -> dict[str, float]:
    """Per window: how far below the class's baseline the upper end of its recall interval stayed while the
    degradation episode ``e`` lasted — the median over its snapshots (negative: mostly not wholly below); windows
    without a value are left out."""
    base = baseline.get(e.subject, math.nan)
    if not math.isfinite(base):
        return {}
    first, last = (snapshots if isinstance(snapshots, Positions) else Positions(snapshots)).range(e)
    out = {}
    for window, s in series.items():
        upper = s.get("upper", "class_recall", e.subject)[first:last + 1]
        finite = upper[np.isfinite(upper)]
        if finite.size:
            out[window] = float(base - np.median(finite))
    return out


def first_window(found: Sequence[Episode], windows: Sequence[str], sizes: Mapping[str, float], *,
                 snapshots: Sequence[Snapshot] = (), series: Mapping[str, WindowSeries] | None = None,
                 baseline: Mapping[str, float] | None = None) -> str:
    """The window the report shows first (``found`` ordered by ``episodes``): see the module docstring.
    ``sizes``: each window's samples at the end (the tie-break: fewer first). Without episodes, ``windows[0]``."""
    if not found or not windows:
        return windows[0] if windows else ""
    top = [e for e in found if e.kind == found[0].kind]
    score: dict[str, float] = {}
    if top[0].kind == DEGRADATION and series is not None and baseline is not None:
        where = Positions(snapshots)
        for e in top:
            for window, value in clarity(e, where, series, baseline).items():
                score[window] = max(score.get(window, -math.inf), value)
    else:
        for e in top:
            value = e.evidence if not math.isnan(e.evidence) else -math.inf
            score[e.window] = max(score.get(e.window, -math.inf), value)
    shown = [w for w in windows if w in score] or list(windows)
    return max(shown, key=lambda w: (score.get(w, -math.inf), -sizes.get(w, math.inf)))


class Positions:
    """Where each snapshot sits in the replay's sequence (built once: a long replay has thousands)."""

    def __init__(self, snapshots: Sequence[Snapshot]) -> None:
        self.count = len(snapshots)
        self.index = {s.samples: i for i, s in enumerate(snapshots)}

    def range(self, e: Episode) -> tuple[int, int]:
        """The indices of the first and last snapshots showing ``e`` (its last: the one before ``end``)."""
        first = self.index.get(e.first_seen.samples, 0)
        last = self.count - 1 if e.end is None else self.index.get(e.end.samples, self.count) - 1
        return first, max(first, last)
