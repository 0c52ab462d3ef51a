"""From a copy of a monitor's counts to its frozen ``Report`` (pure: the monitor copies, this reads).

``CountsView`` is what the monitor copies under its lock; ``evaluate_view`` turns each
window's counts into a ``WindowReport`` and lists the alert conditions that hold;
``assemble_report`` adds since-when (kept by the monitor) and freezes the result.

>>> import numpy as np
>>> from streammon.findings.distortion import Policy
>>> view = CountsView(labels=("neg", "pos"), windows=(("w", "cumulative", np.array([[8, 2], [1, 9]])),),
...                   lifetime=np.array([[8, 2], [1, 9]]), reference=None, positive=None, samples=20,
...                   warmup_remaining=980, degraded={}, baseline={}, now=None)
>>> windows, conditions = evaluate_view(view, Policy())
>>> report = assemble_report(view, windows, conditions, {})
>>> round(report.windows["w"].scores["acsa"], 12), report.samples, report.alerts
(0.85, 20, ())
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

from streammon.counting.counts import ConfusionCounts, IntMatrix
from streammon.counting.score_tally import ScoreTally
from streammon.findings.alerts import AlertKey, Condition, degradation_reason, window_conditions
from streammon.findings.distortion import Policy
from streammon.findings.evaluate import Setting, evaluate_windows
from streammon.findings.frozen import FrozenMap
from streammon.findings.reference import Reference
from streammon.findings.report import DEGRADATION, STREAM, Alert, ClassBudget, Report, WindowReport

Since = Mapping[tuple[str, str, str], tuple[int, float]]


@dataclass(frozen=True)
class CountsView:
    """A consistent copy of everything a report reads: K×K counts per window (name, kind, counts),
    the lifetime counts, the classes, and the detectors' state (``degraded``: label -> (p0, since
    sample, since time, change point, recall since) of the classes alarming now; ``baseline``: label ->
    in-control recall)."""

    labels: tuple[Hashable, ...]
    windows: tuple[tuple[str, str, IntMatrix], ...]
    lifetime: IntMatrix
    reference: Reference | None
    positive: int | None
    samples: int
    warmup_remaining: int
    degraded: Mapping[Hashable, tuple[float, int, float, int, float]]
    baseline: Mapping[Hashable, float]
    now: float | None
    scores: tuple[ScoreTally, ...] | None = None  # each window's score tally, in window order (None: no score yet)
    prediction_scores: tuple[ScoreTally, ...] | None = None  # the prediction side's, rows by predicted class
    budget: Mapping[Hashable, tuple[float, float, float]] = field(default_factory=dict)  # (rate, arl, interval)


class WindowCache:
    """The last report of each window, returned again while its inputs are unchanged.

    A window report is a pure function of the window's counts, classes, reference, positive class and
    policy; the key holds the counts themselves (compared, not hashed: K² integers), so a window whose
    counts did not change — a cumulative window between scrapes without traffic, an idle model, a timed
    window whose expired buckets held nothing — costs one comparison, and no version has to be kept in
    step with ingestion or the clock. The reference and policy are compared by identity (both frozen; a
    monitor replaces its reference when it learns one). Safe to share between threads: an entry is
    replaced whole.
    """

    def __init__(self) -> None:
        self._entries: dict[str, tuple[tuple[object, ...], Reference | None, Policy, WindowReport]] = {}
        self._setting: Setting | None = None  # what the windows share, kept while it holds

    def windows(self, view: CountsView, policy: Policy) -> dict[str, WindowReport]:
        """The report of every window of ``view``: the cached one where nothing it depends on changed, the others
        computed together (``evaluate_windows``)."""
        return evaluate_pending([self.pending(view, policy)])[0]

    def pending(self, view: CountsView, policy: Policy) -> Pending:
        """The cached reports of ``view``'s unchanged windows, and the windows to compute (``evaluate_pending``)."""
        cached: dict[str, WindowReport] = {}
        changed: list[tuple[tuple[object, ...], tuple[str, str, IntMatrix]]] = []
        for name, kind, counts in view.windows:
            key = (kind, view.labels, view.positive, counts.shape, counts.tobytes())
            entry = self._entries.get(name)
            if entry is not None and entry[0] == key and entry[1] is view.reference and entry[2] is policy:
                cached[name] = entry[3]
            else:
                changed.append((key, (name, kind, counts)))
        setting = self._setting
        if changed and (setting is None or not setting.fits(view.labels, view.reference, view.positive, policy)):
            setting = self._setting = Setting.of(view.labels, view.reference, view.positive, policy)
        return Pending(self, view, policy, cached, changed, setting)

    def store(self, pending: Pending, key: tuple[object, ...], report: WindowReport) -> None:
        """Keep a window report computed for ``pending``."""
        self._entries[report.name] = (key, pending.view.reference, pending.policy, report)


@dataclass
class Pending:
    """One view's window reports on their way: those unchanged (from the cache), those to compute (``changed``:
    cache key and ``(name, kind, counts)``, under ``setting``)."""

    cache: WindowCache
    view: CountsView
    policy: Policy
    cached: dict[str, WindowReport]
    changed: list[tuple[tuple[object, ...], tuple[str, str, IntMatrix]]]
    setting: Setting | None


def evaluate_pending(pending: Sequence[Pending]) -> list[dict[str, WindowReport]]:
    """Every window report of each pending view, in view order: the changed windows of all views computed together
    wherever their settings stack (the monitors of one exporter: one stack per scrape instead of one per model),
    each kept in its view's cache."""
    Member = tuple[Pending, Setting, tuple[object, ...], tuple[str, str, IntMatrix]]
    groups: list[list[Member]] = []  # each: windows whose settings stack with its first one's
    for p in pending:
        setting = p.setting
        if setting is None or not p.changed:
            continue
        group = next((members for members in groups if setting.stacks_with(members[0][1])), None)
        if group is None:
            groups.append(group := [])
        group.extend((p, setting, key, window) for key, window in p.changed)
    for members in groups:
        fresh = evaluate_windows([window for _, _, _, window in members], [setting for _, setting, _, _ in members])
        for (p, _, key, _), report in zip(members, fresh, strict=True):
            p.cache.store(p, key, report)
            p.cached[report.name] = report
    return [{name: p.cached[name] for name, _, _ in p.view.windows} for p in pending]


@dataclass(frozen=True)
class Assembled:
    """A report with what it was assembled from, returned again while those stay the same (a monitor read again
    with nothing new: a scrape of an idle model)."""

    windows: tuple[WindowReport, ...]
    view: CountsView
    report: Report

    def holds_for(self, view: CountsView, windows: Mapping[str, WindowReport]) -> bool:
        """Whether a report of ``view`` from ``windows`` is this one: the same window reports (by identity: the
        window cache returns the same report while a window's counts stay), samples, lifetime counts, reference,
        positive class and detector state."""
        last = self.view
        return (len(windows) == len(self.windows)
                and all(a is b for a, b in zip(windows.values(), self.windows, strict=True))
                and view.samples == last.samples and view.warmup_remaining == last.warmup_remaining
                and view.reference is last.reference and view.positive == last.positive
                and view.labels == last.labels and view.degraded == last.degraded and view.baseline == last.baseline
                and _same_budget(view.budget, last.budget)
                and view.lifetime.shape == last.lifetime.shape and bool((view.lifetime == last.lifetime).all()))


def _same_budget(a: Mapping[Hashable, tuple[float, ...]], b: Mapping[Hashable, tuple[float, ...]]) -> bool:
    """The same class budgets, NaN (a rate not measured yet) equal to NaN."""
    return a.keys() == b.keys() and all(x == y or (x != x and y != y)  # noqa: PLR0124 - x != x: NaN
                                        for label in a for x, y in zip(a[label], b[label], strict=True))


def evaluate_view(view: CountsView, policy: Policy,
                  cache: WindowCache | None = None) -> tuple[dict[str, WindowReport], list[Condition]]:
    """Every window's report (from ``cache`` where its counts did not change), and the window alert conditions
    that hold now."""
    windows = (cache or WindowCache()).windows(view, policy)
    return windows, window_alerts(view, windows, policy)


def window_alerts(view: CountsView, windows: Mapping[str, WindowReport], policy: Policy,
                  active: Collection[AlertKey] = ()) -> list[Condition]:
    """The window alert conditions that hold now (``active``: the alerts on now, held at their looser levels)."""
    return [c for w in windows.values()
            for c in window_conditions(w, view.reference, policy=policy, active=active)]


def assemble_report(
    view: CountsView,
    windows: Mapping[str, WindowReport],
    conditions: list[Condition],
    since: Since,
) -> Report:
    """The frozen report: window reports, degradation alerts first, then window alerts with their since-when."""
    alerts = [Alert(DEGRADATION, STREAM, str(label), at, at_time, degradation_reason(label, p0, change_at, recall),
                    change_at, recall)
              for label, (p0, at, at_time, change_at, recall) in view.degraded.items()]
    alerts += [Alert(kind, window, subject, *since[(kind, window, subject)], reason)
               for kind, window, subject, reason in conditions]
    return Report(
        windows=FrozenMap(windows, noun="window"),
        labels=view.labels,
        reference=view.reference,
        positive=None if view.positive is None else view.labels[view.positive],
        samples=view.samples,
        warmup_remaining=view.warmup_remaining,
        totals=ConfusionCounts.of_known(view.labels, view.lifetime),
        alerts=tuple(alerts),
        baseline=FrozenMap(view.baseline, noun="class"),
        detector=FrozenMap({label: ClassBudget(*values) for label, values in view.budget.items()}, noun="class"),
    )
