"""The read side of a monitor: its reports, computed for many monitors together, and the alerts kept across reads.

A report copies the counts under the lock (``_begin_report``), computes the changed windows outside it, stacked with
those of other monitors (``reports``), and then, under the lock again, decides which alert conditions are raised,
held, confirming or cleared (``_finish_report``, with ``streammon.findings.alerts`` and ``shift_hold``); the alerts
that turn on or off are logged. ``Reading`` is the base of ``streammon.monitor.Monitor``, which adds the
construction, the counts and the saved state.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable, Hashable, Iterable
from dataclasses import replace

from streammon.counting.windows import Sliding, Timed, Window
from streammon.findings.alerts import Hold, Waiting, active_since, confirmed_alerts, confirming_reads, raised_at_once
from streammon.findings.assemble import (
    Assembled,
    Pending,
    WindowCache,
    assemble_report,
    evaluate_pending,
    window_alerts,
)
from streammon.findings.distortion import Policy
from streammon.findings.expected import PriorBaselines, estimate_reports
from streammon.findings.label_view import LabelView, label_reports
from streammon.findings.report import Alert, Report, WindowReport
from streammon.findings.score_window import ScoreCache, attach_scores
from streammon.findings.shift_hold import Pool, hold_window_alerts
from streammon.labelling import Labelling
from streammon.metrics.column_hint import column_order_hint
from streammon.pending import Journal, PendingRecords
from streammon.tally import Tally

ALERT_LOG = logging.getLogger("streammon.alerts")


class Reading(Labelling):
    """A monitor's reports and the alert bookkeeping between them (see the module docstring)."""

    def __init__(self, tally: Tally, clock: Callable[[], float], records: PendingRecords, journal: Journal | None, *,
                 policy: Policy, prior_baselines: PriorBaselines) -> None:
        super().__init__(tally, clock, records, journal)
        self._policy = policy
        self._prior_baselines = prior_baselines
        self._window_cache = WindowCache()  # unchanged windows are not evaluated again
        self._score_cache = ScoreCache()  # nor their score metrics, while the score tallies stay
        self._alert_since: dict[tuple[str, str, str], tuple[int, float]] = {}
        self._alert_clearing: dict[tuple[str, str, str], tuple[int, float]] = {}  # held alerts: when they failed
        self._alert_pools: dict[tuple[str, str, str], Pool] = {}  # held prior-shift alerts' evidence (shift_hold)
        # alerts waiting for confirmation: when their condition first held, at how many reads
        # (findings.alerts.confirmed_alerts)
        self._alert_pending: dict[tuple[str, str, str], Waiting] = {}
        self._spans(tally.windows)
        self._alerts_on: dict[tuple[str, str, str], Alert] = {}  # as of the latest report, for the alert log
        # reads that changed the alert bookkeeping above: a server saves soon after one (serve.hub), as reads are
        # not journalled and a kill -9 would otherwise lose a raised, held or confirming alert
        self._alert_changes = 0
        self._looked_at = -1  # the labelled samples at the latest read (saved): a read of the same ones is no new look
        self._last_report: Assembled | None = None  # returned again while its inputs stay the same
        self._columns_hinted = False  # whether a report warned that the score columns read as if meant otherwise

    def report(self) -> Report:
        """A frozen report of every window (counts copied under the lock, math outside it).

        Alerts that turn on or off are logged on the ``"streammon.alerts"`` logger by the
        first report that sees the change: a WARNING when one is raised, INFO when it
        clears (the ``Alert`` is the record's ``alert`` attribute). The library adds no
        handlers; configure ``logging`` to see them. A monitor restored by ``load``
        logs the alerts still on at its first report.
        """
        return reports([self])[0]

    def _begin_report(self) -> tuple[Pending, LabelView | None]:
        """A consistent copy of the counts (under the lock) and which window reports must be computed."""
        with self._lock:
            now = self._read_time()
            self._expire(now)
            view = self._tally.view(now)
            if self._pred_scores.tallies is not None:
                view = replace(view, prediction_scores=self._pred_scores.tallies.view(now, len(self._tally.index)))
            labelling = self._label_view(now)
        return self._window_cache.pending(view, self._policy), labelling

    def _finish_report(self, pending: Pending, labelling: LabelView | None,
                       windows: dict[str, WindowReport]) -> Report:
        """The report from its window reports: alert conditions, their since-when, the alerts logged."""
        view = pending.view
        last = self._last_report
        if labelling is None and last is not None and last.holds_for(view, windows):
            return last.report  # nothing new: the same conditions, the same alerts since the same samples
        computed = windows
        if view.scores is not None:  # each window's score tallies and score metrics, beside its (cached) report
            windows = attach_scores(windows, view.scores, view.prediction_scores, labels=view.labels,
                                    reference=view.reference, policy=self._policy, cache=self._score_cache)
            if not self._columns_hinted:
                self._hint_columns(windows, view.labels)
        with self._lock:
            active = set(self._alert_since)  # the alerts on now: held at their looser levels (hysteresis)
        conditions = window_alerts(view, windows, self._policy, active)
        lifetime_stats = None
        if labelling is not None:
            windows, lifetime_stats, extra = label_reports(windows, view, labelling, self._policy, active)
            windows, estimated = estimate_reports(windows, view, self._prior_baselines, self._policy, active)
            conditions = conditions + extra + estimated
        with self._lock:
            stamp = self._last_t if view.now is None else view.now
            strong = {c[:3] for c in conditions
                      if c[1] in windows and raised_at_once(c, windows[c[1]], view.reference, self._policy)}
            before = (self._alert_since, self._alert_pending, self._alert_clearing, self._alert_pools)
            # a confirmed alert is on since it first held
            first = {**{k: v[:2] for k, v in self._alert_pending.items()}, **self._alert_since}
            look, self._looked_at = view.samples != self._looked_at, view.samples
            conditions, self._alert_pending = confirmed_alerts(self._alert_since, self._alert_pending, conditions,
                                                               strong, view.samples, stamp, self._confirm,
                                                               self._confirm_reads, look=look)
            conditions, self._alert_clearing, self._alert_pools = hold_window_alerts(
                self._alert_since, self._alert_clearing, self._alert_pools, conditions, windows, view, self._policy,
                stamp, self._turnover)
            self._alert_since = active_since(first, conditions, view.samples, stamp)
            since = dict(self._alert_since)
            if before != (self._alert_since, self._alert_pending, self._alert_clearing, self._alert_pools):
                self._alert_changes += 1
        report = assemble_report(view, windows, conditions, since)
        if lifetime_stats is not None:
            report = replace(report, label_stats=lifetime_stats)
        on = {(a.kind, a.window, a.subject): a for a in report.alerts}
        with self._lock:
            raised = [alert for key, alert in on.items() if key not in self._alerts_on]
            cleared = [alert for key, alert in self._alerts_on.items() if key not in on]
            self._alerts_on = on
            self._last_report = None if labelling is not None else Assembled(tuple(computed.values()), view, report)
        for alert in raised:
            ALERT_LOG.warning("alert raised: %s in %s on %s since sample %d: %s", alert.kind, alert.window,
                              alert.subject, alert.since_sample, alert.reason, extra={"alert": alert})
        for alert in cleared:
            ALERT_LOG.info("alert cleared: %s in %s on %s (raised at sample %d), at sample %d", alert.kind,
                           alert.window, alert.subject, alert.since_sample, report.samples, extra={"alert": alert})
        return report

    def _hint_columns(self, windows: dict[str, WindowReport], labels: tuple[Hashable, ...]) -> None:
        """Warn once (``UserWarning``) where the window with the most scored samples reads its scores as if their
        columns were meant in another order (``metrics.column_hint``: scikit-learn's sorted ``classes_``)."""
        tallies = [w.score_tally for w in windows.values() if w.score_tally is not None]
        if not tallies:
            return
        tally = max(tallies, key=lambda t: t.n_scored)
        k = len(labels)
        hint = column_order_hint(tally.sums[:k, :, 0], tally.class_counts[:k], labels, positive=tally.positive,
                                 squares=tally.sums[:k, :, 1])
        if hint is not None:
            self._columns_hinted = True
            warnings.warn(hint, UserWarning, stacklevel=6)  # the caller of report() (reports, its comprehension)

    def _spans(self, windows: Iterable[Window]) -> None:
        """Each window's hold (``findings.alerts.held_alerts``) and confirmation span, from the policy."""
        self._turnover = {w.name: _turnover(w, self._policy.alert_hold) for w in windows}
        self._confirm = {w.name: _turnover(w, self._policy.alert_confirm) for w in windows}
        self._confirm_reads = confirming_reads(self._policy.alert_confirm)

    def _use_policy(self, policy: Policy) -> None:
        """Read with ``policy`` from now on — a server's configuration over the policy its checkpoint was saved
        with: the holds and confirmations in progress then count in this policy's turnovers and reads."""
        with self._lock:
            self._policy = policy
            self._spans(self._tally.windows)
            self._last_report = None


def _turnover(window: Window, turnovers: float) -> Hold:
    """``turnovers`` turnovers of ``window``: how long an alert is held after its condition fails
    (``Policy.alert_hold``), or must hold before it is raised (``Policy.alert_confirm``)."""
    if isinstance(window, Sliding):
        return math.ceil(window.size * turnovers), 0.0
    if isinstance(window, Timed):
        return 0, window.seconds * turnovers
    return 0, 0.0


def reports(monitors: Iterable[Reading]) -> list[Report]:
    """``[m.report() for m in monitors]``, the windows of all of them computed together where they stack (the same
    number of classes, positive class and policy: one stack for the models of an exporter instead of one each).

    >>> from streammon import Monitor, Sliding
    >>> a, b = Monitor([Sliding(10)]), Monitor([Sliding(10)])
    >>> a.update_many(["x", "y", "x"], ["x", "y", "y"]); b.update_many(["x", "y"], ["x", "x"])
    >>> [round(r.windows["sliding_10"].scores["acsa"], 3) for r in reports([a, b])]
    [0.75, 0.5]
    """
    begun = [(monitor, *monitor._begin_report()) for monitor in monitors]
    windows = evaluate_pending([pending for _, pending, _ in begun])
    return [monitor._finish_report(pending, labelling, w)
            for (monitor, pending, labelling), w in zip(begun, windows, strict=True)]
