"""Which alert conditions hold now (pure); the monitor adds since-when.

Window alerts are read off a ``WindowReport``; degradation alerts come from the
per-class detectors of ``detect``, which see only class-conditional evidence.

**Hysteresis.** Every condition function takes ``active``, the keys ``(kind, window, subject)`` of the alerts
on now (the monitor's ``_alert_since``), and holds an alert that is on at a looser level than the one that
turns it on, so that one episode is one alert and a window hovering at the edge does not flap. A key never seen
(a fresh monitor, a new window) is judged at the "on" level only: a fresh monitor raises the prior-shift alert
at rate ≤ ``shift_alpha`` under no shift, at every window size. The levels per kind are in
``docs/reference/alerts.md`` (``holds`` is the one rule they share).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Mapping

from streammon.findings.distortion import Policy
from streammon.findings.reference import Reference
from streammon.findings.report import CLASS_SET_CHANGE, INCOMPETENT, PRIOR_SHIFT, WindowReport
from streammon.findings.shift import PriorShift, is_shifted

# The Hölder scores that have intervals; an incompetence alert needs the whole interval below 1/K.
HOLDER_WITH_INTERVALS = ("min_recall", "gmean", "acsa")

Condition = tuple[str, str, str, str]  # kind, window, subject, reason
AlertKey = tuple[str, str, str]  # kind, window, subject
_DEFAULT = Policy()


def holds(on: bool, turns_on: bool, stays_on: bool) -> bool:
    """The one hysteresis rule: an alert that is ``on`` holds while ``stays_on`` (its looser level); one that is
    off turns on only at ``turns_on`` (its strict level, which implies the looser one).

    >>> holds(False, False, True), holds(True, False, True), holds(True, True, False), holds(False, True, True)
    (False, True, False, True)
    """
    return stays_on if on else turns_on


def shift_holds(shift: PriorShift, policy: Policy, on: bool) -> bool:
    """The prior-shift criterion with hysteresis: on at p < ``shift_alpha`` and ratio ≥ ``shift_min_ratio``,
    held while p < ``shift_clear_alpha`` and ratio ≥ ``shift_clear_ratio``."""
    return holds(on, shift.shifted, is_shifted(shift.p_value, shift.prior_ratio, policy.shift_clear_alpha,
                                                policy.shift_clear_ratio))


def window_conditions(w: WindowReport, reference: Reference | None, *, policy: Policy = _DEFAULT,
                      active: Collection[AlertKey] = ()) -> list[Condition]:
    """Prior shift, class-set change and incompetence conditions of one window (``active``: the alert keys on
    now, held at their looser levels).

    A class-set change is a class present that the reference lacks (it cannot appear by chance), or a reference
    class absent where chance alone would hardly leave it out: ``n`` samples at the reference mix hold none of a
    class of prior ``π`` with probability ``(1 − π)ⁿ``, and the class counts as lost when that is below
    ``shift_alpha`` (held while below ``shift_clear_alpha``). Without that test an hourly window of 50 samples,
    where a 5 % class is missing one hour in thirteen, raised and cleared the alert all year. The window's Type 2
    flags still say whenever the classes present differ (its numbers are not comparable then, whatever the cause).
    An incompetence alert turns on when a Hölder score's whole interval lies below 1/K and holds while the score
    itself stays below 1/K."""
    out: list[Condition] = []
    if w.n == 0:
        return out
    shift = w.prior_shift
    if shift is not None and shift_holds(shift, policy, (PRIOR_SHIFT, w.name, "class_mix") in active):
        out.append((PRIOR_SHIFT, w.name, "class_mix",
                    f"class mix moved from the reference: largest prior ratio {shift.prior_ratio:.3g}, exact "
                    f"test p = {shift.p_value:.2g} (JS {shift.js:.3f} bits, TV {shift.tv:.3f}; RRT {w.rrt:.3g} vs "
                    f"IR {w.ir:.3g})"))
    if reference is not None:
        out += _class_set_change(w, reference, policy, active)
    k = len(w.present)
    for metric in HOLDER_WITH_INTERVALS:
        # incompetent (seed 001): below the random classifier's 1/K. The interval is read only then: a report
        # computes intervals when first read.
        if k < 2 or not w.scores[metric] < 1 / k or w.competitiveness.get(metric) != "incompetent":
            continue
        high = w.intervals[metric][1]
        if (INCOMPETENT, w.name, metric) in active or (not math.isnan(high) and high < 1 / k):
            out.append((INCOMPETENT, w.name, metric,
                        f"{metric} = {w.scores[metric]:.3f} and its interval up to {high:.3f} lie below 1/K = "
                        f"{1 / k:.3f}: some class is recalled worse than random guessing (Ortigosa-Hernández et al.)"))
    return out


def _class_set_change(w: WindowReport, reference: Reference, policy: Policy,
                      active: Collection[AlertKey]) -> list[Condition]:
    """The class-set change of a window: classes the reference lacks, and reference classes lost beyond chance —
    at ``shift_alpha``, or at ``shift_clear_alpha`` for a class the window's alert on now names (``-c``)."""
    expected = reference.expected
    present = set(w.present)
    held = {part[1:] for kind, window, subject in active if kind == CLASS_SET_CHANGE and window == w.name
            for part in subject.split(",") if part.startswith("-")}
    # (Mutation testing: `<=` for `<` differs only where (1 − π)ⁿ equals alpha exactly: equivalent in practice.)
    lost = {c for c in expected - present
            if (1.0 - reference.priors[c]) ** w.n < (policy.shift_clear_alpha if str(c) in held
                                                        else policy.shift_alpha)}
    if not (present - expected or lost):
        return []
    change = sorted(f"+{c}" for c in present - expected) + sorted(f"-{c}" for c in lost)
    return [(CLASS_SET_CHANGE, w.name, ",".join(change),
             f"{len(present)} classes present instead of the reference's {len(expected)} "
             f"({', '.join(change)}): AUROC-OVO/OVA are not comparable across this change")]


def degradation_reason(label: Hashable, baseline: float, change_at: int, recall: float) -> str:
    """Why a degradation alert is on."""
    return (f"recall of {label!r} fell below its baseline {baseline:.3f}: about {recall:.3f} since sample "
            f"{change_at} (CUSUM bank on the class's own samples; the mix plays no part)")


HELD_KINDS = (PRIOR_SHIFT, CLASS_SET_CHANGE, INCOMPETENT)  # the window alerts a hold keeps on (see held_alerts)
CONFIRMED_KINDS = (PRIOR_SHIFT, CLASS_SET_CHANGE)  # the test-based window alerts (see confirmed_alerts)
Hold = tuple[int, float]  # a window's turnover: samples (sliding by count) or seconds (sliding by time); 0: none
Waiting = tuple[int, float, int]  # an alert waiting for confirmation: first sample and time it held, reads it held


def held_alerts(  # noqa: PLR0917 (the monitor's bookkeeping, passed as it is kept)
    since: Mapping[AlertKey, tuple[int, float]],
    clearing: Mapping[AlertKey, tuple[int, float]],
    conditions: list[Condition],
    sample: int,
    time: float,
    turnover: Mapping[str, Hold],
) -> tuple[list[Condition], dict[AlertKey, tuple[int, float]]]:
    """The window alerts on (``since``) whose condition no longer holds but which stay on for a hold: until the
    window has turned over once since the condition first failed (``turnover``: its samples for a sliding window,
    its seconds for a timed one; the cumulative window holds nothing). A window whose mix moves slowly across the
    test's level fails and passes it many times while the shift goes on; each pass would be a new alert without
    the hold. Returns the held conditions and, per held alert, when its condition first failed (``clearing``
    carries that between reports; a condition that holds again resets it).

    >>> on = {("prior_shift", "sliding_100", "class_mix"): (50, 0.0)}
    >>> held, clearing = held_alerts(on, {}, [], 120, 0.0, {"sliding_100": (100, 0.0)})
    >>> [c[:3] for c in held], clearing
    ([('prior_shift', 'sliding_100', 'class_mix')], {('prior_shift', 'sliding_100', 'class_mix'): (120, 0.0)})
    >>> held_alerts(on, clearing, [], 220, 0.0, {"sliding_100": (100, 0.0)})
    ([], {})
    """
    holding = {(kind, window, subject) for kind, window, subject, _ in conditions}
    held: list[Condition] = []
    still: dict[AlertKey, tuple[int, float]] = {}
    for key in since:
        kind, window, subject = key
        if key in holding or kind not in HELD_KINDS:
            continue
        samples, seconds = turnover.get(window, (0, 0.0))
        first_sample, first_time = clearing.get(key, (sample, time))
        if (samples and sample - first_sample < samples) or (seconds and time - first_time < seconds):
            still[key] = (first_sample, first_time)
            span = f"{samples} samples" if samples else f"{seconds:g} s"
            held.append((kind, window, subject, f"no longer holds since sample {first_sample}; held until the window "
                                                f"has turned over ({span}) so that one episode is one alert"))
    return held, still


def raised_at_once(condition: Condition, w: WindowReport, reference: Reference | None, policy: Policy) -> bool:
    """Whether a window condition's evidence alone raises its alert, without confirmation (``confirmed_alerts``):
    evidence at level ``shift_alpha ** (1 + alert_confirm)`` (``shift_alpha³`` by default) — a prior-shift p-value
    below it, a class the reference lacks (chance cannot bring one), a reference class lost where ``(1 − π)ⁿ`` is
    below it. ``1 + alert_confirm`` disjoint windows each at level ``shift_alpha`` are evidence at about that level
    too: that is what confirmation asks for the rest."""
    kind, _, subject, _ = condition
    strict = policy.shift_alpha ** (1.0 + policy.alert_confirm)
    if kind == PRIOR_SHIFT:
        return w.prior_shift is not None and w.prior_shift.p_value < strict
    if kind == CLASS_SET_CHANGE and reference is not None:
        priors = {str(c): p for c, p in reference.priors.items()}
        parts = subject.split(",")
        # (a part that names no reference class — a label holding a comma splits the subject — is not strong)
        return any(part.startswith("+") or (1.0 - priors.get(part[1:], 0.0)) ** w.n < strict for part in parts)
    return False


def confirmed_alerts(  # noqa: PLR0917 (the monitor's bookkeeping, passed as it is kept)
    since: Collection[AlertKey],
    pending: Mapping[AlertKey, Waiting],
    conditions: list[Condition],
    at_once: Collection[AlertKey],
    sample: int,
    time: float,
    turnover: Mapping[str, Hold],
    reads: int = 2,
    *,
    look: bool = True,
) -> tuple[list[Condition], dict[AlertKey, Waiting]]:
    """The conditions whose alert may be raised (or stay on) now, and the *pending* ones: a window alert that is
    off is raised only when its condition has held at every read across one confirmation span of its window
    (``turnover``: ``Policy.alert_confirm`` turnovers — samples of a sliding window, seconds of a timed one) and at
    ``reads`` reads at least (``confirming_reads``: reads farther apart than a turnover span it in fewer), so
    that it rests on fresh samples as well as on those that first raised it (a Prometheus rule's ``for:``), unless
    its evidence is strong enough alone (``at_once``: ``raised_at_once``). Hourly reads of a small window under no
    shift are independent tests: at level α each, one false alarm every 1/α reads; confirmed across c turnovers,
    about one in 1/α^(c+1).
    The cumulative window (nothing turns over) and the alerts on now (``since``) pass unchanged. Returns the
    conditions to raise or keep and, per pending alert, when its condition first held and at how many reads
    (``pending`` carries that between reports; a read where the condition fails drops it). A read of the samples
    the previous read saw (``look=False``: no sample counted since) is no new look: it counts for no pending alert
    already waiting — else the same samples read twice (two scrapers, a dashboard) would confirm an alert.

    >>> key = ("prior_shift", "sliding_100", "class_mix")
    >>> c = [(*key, "class mix moved")]
    >>> confirmed_alerts(set(), {}, c, set(), 100, 0.0, {"sliding_100": (100, 0.0)})
    ([], {('prior_shift', 'sliding_100', 'class_mix'): (100, 0.0, 1)})
    >>> confirmed_alerts(set(), {key: (100, 0.0, 1)}, c, set(), 200, 0.0, {"sliding_100": (100, 0.0)})[0] == c
    True
    >>> confirmed_alerts(set(), {key: (100, 0.0, 1)}, c, set(), 200, 0.0, {"sliding_100": (100, 0.0)}, reads=3)[1]
    {('prior_shift', 'sliding_100', 'class_mix'): (100, 0.0, 2)}
    >>> confirmed_alerts(set(), {key: (100, 0.0, 2)}, c, set(), 200, 0.0, {"sliding_100": (100, 0.0)}, reads=3,
    ...                  look=False)[1]  # the same samples read again
    {('prior_shift', 'sliding_100', 'class_mix'): (100, 0.0, 2)}
    """
    out: list[Condition] = []
    still: dict[AlertKey, Waiting] = {}
    for condition in conditions:
        key = condition[:3]
        samples, seconds = turnover.get(key[1], (0, 0.0))
        if key in since or key[0] not in CONFIRMED_KINDS or key in at_once or not (samples or seconds):
            out.append(condition)
            continue
        first_sample, first_time, seen = pending.get(key, (sample, time, 0))
        seen += 1 if look or key not in pending else 0
        spanned = (samples and sample - first_sample >= samples) or (seconds and time - first_time >= seconds)
        if spanned and seen >= reads:
            out.append(condition)
        else:
            still[key] = (first_sample, first_time, seen)
    return out, still


def confirming_reads(turnovers: float) -> int:
    """The reads a confirmation across ``turnovers`` turnovers needs at least: one more than the whole turnovers
    it spans (``1 + ceil(turnovers)``; 1 when nothing is confirmed), so that reads farther apart than a turnover
    — an hourly read of a 30-minute window — still confirm on as many disjoint looks as close ones.

    >>> confirming_reads(2.0), confirming_reads(0.5), confirming_reads(0.0)
    (3, 2, 1)
    """
    return 1 + math.ceil(turnovers)


def active_since(
    previous: Mapping[tuple[str, str, str], tuple[int, float]],
    conditions: list[Condition],
    sample: int,
    time: float,
) -> dict[tuple[str, str, str], tuple[int, float]]:
    """Carry over since-when for conditions still on; start it now for new ones."""
    return {
        (kind, window, subject): previous.get((kind, window, subject), (sample, time))
        for kind, window, subject, _ in conditions
    }
