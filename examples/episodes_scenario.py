"""The 90-day fraud scenario of issue #27, replayed hourly, and the alert episodes the replay shows.

Helpers of ``bench_alert_episodes.py`` (imported from this folder). A binary fraud model watched for 90 days:
the fraud share is flat at the training mix (1 %) for two weeks, rises linearly to 6 % over five weeks and stays
there; recalls are constant (fraud 0.80, legit 0.965) until a sustained drop of fraud recall to 0.60 for the
last three weeks. One alert **episode** is one on-period: consecutive snapshots where an alert of one
(kind, window, subject) is active. Alerts are read generically from each snapshot's ``report().alerts``, so the
counts measure whatever alert logic the monitor has.

>>> on = [frozenset(), frozenset({"a"}), frozenset({"a", "b"}), frozenset({"b"}), frozenset({"a"})]
>>> sorted(episodes(on).items())
[('a', [(1, 3), (4, 5)]), ('b', [(2, 4)])]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

import streammon
from streammon.findings.report import Report

START = 1_767_225_600.0  # 2026-01-01 00:00 UTC: the log's times are UTC seconds
HOUR, DAY = 3600.0, 86_400.0
Key = tuple[str, str, str]  # an alert's (kind, window, subject)


@dataclass(frozen=True)
class Scenario:
    """The log's shape (days from the start). ``rate``: samples an hour (Poisson each hour)."""

    days: float = 90.0
    rate: float = 1500.0
    shift_start: float = 14.0
    shift_end: float = 49.0
    share_before: float = 0.01
    share_after: float = 0.06
    drop_at: float = 69.0
    recall_legit: float = 0.965
    recall_fraud: float = 0.80
    recall_fraud_after: float = 0.60

    @property
    def reference(self) -> dict[str, int]:
        """The training mix (the fraud share before the shift), as class counts."""
        fraud = round(self.share_before * 10_000)
        return {"legit": 10_000 - fraud, "fraud": fraud}

    @property
    def baseline(self) -> dict[str, dict[str, int]]:
        """Validation counts at the in-control recalls (100,000 legit, 10,000 fraud): the detector's baseline."""
        legit, fraud = round(self.recall_legit * 100_000), round(self.recall_fraud * 10_000)
        return {"legit": {"legit": legit, "fraud": 100_000 - legit}, "fraud": {"fraud": fraud, "legit": 10_000 - fraud}}

    def share(self, day: np.ndarray) -> np.ndarray:
        """The fraud share at each time (days)."""
        return np.interp(day, [0.0, self.shift_start, self.shift_end, self.days],
                         [self.share_before, self.share_before, self.share_after, self.share_after])

    def rows(self, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(time in seconds since START, fraud truth, fraud predicted) of every row, in time order."""
        rng = np.random.default_rng(seed)
        hours = round(self.days * 24)
        hour = np.repeat(np.arange(hours, dtype=np.float64), rng.poisson(self.rate, hours))
        seconds = np.sort(hour + rng.random(hour.size)) * HOUR
        day = seconds / DAY
        fraud = rng.random(seconds.size) < self.share(day)
        recall = np.where(fraud, np.where(day >= self.drop_at, self.recall_fraud_after, self.recall_fraud),
                          self.recall_legit)
        right = rng.random(seconds.size) < recall
        return seconds, fraud, right == fraud  # predicted fraud: a right fraud or a wrong legit

    def log(self, seed: int) -> Any:
        """The log as an Arrow table (``t``: UTC seconds, ``y``/``p``: "legit"/"fraud"), as a user's file reads."""
        seconds, fraud, predicted = self.rows(seed)
        names = pa.array(["legit", "fraud"])
        return pa.table({"t": START + seconds,
                         "y": pa.DictionaryArray.from_arrays(pa.array(fraud.astype(np.int8)), names),
                         "p": pa.DictionaryArray.from_arrays(pa.array(predicted.astype(np.int8)), names)})


def windows() -> list[streammon.Window]:
    """The windows the issue names: cumulative, sliding 1,000 and 10,000 samples, the last hour."""
    return [streammon.Cumulative(), streammon.Sliding(1000), streammon.Sliding(10_000), streammon.Timed(3600)]


@dataclass
class Run:
    """What one replay showed at each snapshot: its time (days since START), the active alerts and when each
    turned on (data time in days, NaN if unknown)."""

    days: list[float] = field(default_factory=list)
    active: list[frozenset[Key]] = field(default_factory=list)
    since: list[dict[Key, float]] = field(default_factory=list)

    def see(self, time: float, report: Report) -> None:
        """Record one snapshot's alerts, keyed by (kind, window, subject)."""
        keys = {(a.kind, a.window, str(a.subject)): (a.since_time - START) / DAY for a in report.alerts}
        self.days.append((time - START) / DAY)
        self.active.append(frozenset(keys))
        self.since.append(keys)


def replay(scenario: Scenario, seed: int, *, every: str = "1h",
           on_report: Callable[[float, Report], None] | None = None,
           monitor: streammon.Monitor | None = None) -> Run:
    """Replay the seed's log through ``streammon.replay`` with the scenario's reference and baseline and the
    default detector and policy; ``on_report(time, report)`` sees each snapshot too."""
    run = Run()

    def snapshot(snap: Any, report: Report) -> None:
        run.see(snap.time, report)
        if on_report is not None:
            on_report(snap.time, report)

    if monitor is None:
        monitor = monitor_for(scenario)
    streammon.replay(scenario.log(seed), true="y", pred="p", time="t", every=every, monitor=monitor,
                     on_snapshot=snapshot)
    return run


def monitor_for(scenario: Scenario) -> streammon.Monitor:
    """The monitor a user builds for the scenario: its windows, the training mix and the validation counts."""
    return streammon.Monitor(windows(), reference=scenario.reference, baseline=scenario.baseline)


def episodes(active: Sequence[frozenset[Hashable]]) -> dict[Hashable, list[tuple[int, int]]]:
    """Each key's on-periods as (first snapshot on, first snapshot off — ``len(active)`` if still on)."""
    out: dict[Hashable, list[tuple[int, int]]] = {}
    previous: frozenset[Hashable] = frozenset()
    for i, now in enumerate([*active, frozenset()]):
        for key in now - previous:
            out.setdefault(key, []).append((i, -1))
        for key in previous - now:
            start, _ = out[key][-1]
            out[key][-1] = (start, i)
        previous = now
    return out


@dataclass(frozen=True)
class Degradation:
    """The real drop: ``found`` (the class alerted at a snapshot after the drop), ``delay_hours`` (from the drop
    to the ``since_time`` of an alert turned on after it; NaN if none did), ``already_on`` (a false alert from
    before the drop was still on when it came); and the false degradation episodes (class, start day, hours)."""

    found: bool
    delay_hours: float
    already_on: bool
    false: tuple[tuple[str, float, float], ...]


def degradation(run: Run, scenario: Scenario, cls: str = "fraud") -> Degradation:
    """The degradation episodes of ``run``: on ``cls`` turned on after the drop is the real one (delay from its
    ``since_time``); every other — another class, or ``cls`` before the drop — is false (its length in hours,
    to the end of the run if still on)."""
    delay, already, false = float("nan"), False, []
    end = run.days[-1] if run.days else 0.0
    for key, spans in episodes(run.active).items():
        kind, _, subject = key
        if kind != "degradation":
            continue
        for first, stop in spans:
            since = run.since[first][key]
            began = run.days[first] if math.isnan(since) else since
            if subject == cls and began >= scenario.drop_at:
                hours = (began - scenario.drop_at) * 24
                delay = delay if delay <= hours else hours  # the first (delay starts NaN)
                continue
            last = run.days[stop] if stop < len(run.days) else end
            already = already or (subject == cls and last > scenario.drop_at)
            false.append((subject, began, (last - run.days[first]) * 24))
    found = already or not math.isnan(delay)
    return Degradation(found, delay, already, tuple(sorted(false, key=lambda f: f[1])))
