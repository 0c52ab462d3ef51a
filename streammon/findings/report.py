"""Frozen reports: what a ``Monitor`` knows at one moment, safe to share and keep.

Every mapping is read-only (a ``FrozenMap``: asking for a missing key names the
valid ones); undefined values are NaN. Reports pickle, deep-copy and go through
``dataclasses.asdict``. ``to_dict()`` gives JSON-ready data: NaN becomes
``None``, ±inf the strings ``"Infinity"``/``"-Infinity"``, classes are keyed by
``str(label)`` and listed with their types under ``labels`` (the rules are in
``streammon.findings.encode``); confusion matrices are lists of rows (true class)
in the order of ``labels``. See ``Monitor.report``.

>>> import json
>>> from streammon import Monitor, Sliding
>>> m = Monitor([Sliding(3)], reference={"legit": 9, "fraud": 1})
>>> m.update_many(["legit", "legit", "legit"], ["legit", "fraud", "legit"])
>>> report = m.report()
>>> report
Report(samples=3, windows=['sliding_3'], labels=['legit', 'fraud'], alerts=0, warmup_remaining=0)
>>> w = report.to_dict()["windows"]["sliding_3"]
>>> w["confusion"], w["recall"], w["rrt"]
([[2, 1], [0, 0]], {'legit': 0.6666666666666666, 'fraud': None}, 'Infinity')
>>> report.windows["sliding"]
Traceback (most recent call last):
...
KeyError: "no window 'sliding' here; the windows are 'sliding_3'"
>>> len(json.dumps(report.to_dict(), allow_nan=False)) > 0
True
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from streammon.counting.counts import ConfusionCounts
from streammon.counting.score_tally import ScoreTally
from streammon.findings.encode import (
    by_label,
    floats,
    json_float,
    label_entries,
    label_keys,
    matrix,
    pair,
)
from streammon.findings.estimate import LabelFreeEstimate
from streammon.findings.frozen import FrozenMap
from streammon.findings.label_stats import LabelStats
from streammon.findings.reference import Reference
from streammon.findings.shift import PriorShift

_NO_COUNTS: Mapping[Hashable, int] = FrozenMap({})
_NO_SCORES: Mapping[str, float] = FrozenMap({}, noun="metric")
_NO_FLAGS: Mapping[str, bool] = FrozenMap({}, noun="metric")
TYPE1 = "type1"
TYPE2 = "type2"
CONDITION3 = "condition3"


@dataclass(frozen=True)
class Flag:
    """A metric not to trust in this window, by how much, and why.

    ``kind`` is ``"type1"`` (prior shift distorts a metric that violates
    Condition 1; magnitude = measured distortion ``f − f_π``), ``"type2"`` (the
    number of classes present differs from the reference and the metric violates
    Condition 2; magnitude = how far the metric's floor moved), or
    ``"condition3"`` (a class's recall collapsed and a mean that violates
    Condition 3 lost the information about the other classes; magnitude = the
    index over the other classes minus the index).
    """

    metric: str
    kind: str
    magnitude: float
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``metric``, ``kind``, ``magnitude``, ``reason``."""
        return {"metric": self.metric, "kind": self.kind, "magnitude": json_float(self.magnitude),
                "reason": self.reason}


DEGRADATION = "degradation"
PRIOR_SHIFT = "prior_shift"
CLASS_SET_CHANGE = "class_set_change"
INCOMPETENT = "incompetent"
LABEL_COVERAGE_LOW = "label_coverage_low"
PREDICTED_MIX_SHIFT = "predicted_mix_shift"
NOT_PRIOR_SHIFT = "not_prior_shift"
# every alert kind, in one place: what a state file's alert memory may hold, what the HTML report ranks
ALERT_KINDS = (DEGRADATION, PRIOR_SHIFT, CLASS_SET_CHANGE, INCOMPETENT, LABEL_COVERAGE_LOW, PREDICTED_MIX_SHIFT,
               NOT_PRIOR_SHIFT)
STREAM = "stream"  # the window of the sequential degradation detector: every sample, in order


@dataclass(frozen=True)
class Alert:
    """Something to act on now.

    ``kind``: ``"degradation"`` (a class's recall fell below its baseline — the
    per-class CUSUM of ``detect``; window ``"stream"``, subject the class),
    ``"prior_shift"`` (the window's class mix differs from the reference, beyond
    chance and materially; subject ``"class_mix"``), ``"class_set_change"`` (the
    classes present differ from the reference's; subject like ``"+chargeback"``),
    ``"incompetent"`` (a Hölder score is confidently below 1/K, seed 001 — its
    whole interval lies below; subject the metric), ``"not_prior_shift"`` (no class mix
    explains the window's predicted counts through the baseline's class-conditional rates —
    the label-shift p-value of ``WindowReport.estimate`` is below the policy's ``shift_alpha``:
    the model or its inputs changed, before any label; subject ``"predictions"``). ``since_sample`` is the stream
    index (samples counted before it) when the alert turned on, ``since_time`` its
    time (NaN if unknown). A degradation's ``since_sample`` is the sample at which its CUSUM
    crossed; fed by per-sample ``update`` calls, its time is that of the latest sample buffered
    with it (samples are buffered without times until the next read, 4,096 samples or timed
    bucket), so it can be late by up to that much; ``update_many`` with per-sample ``t`` gives
    the crossing sample's time. A degradation also carries its incident: ``change_at``, the
    estimated change point (stream index of the first sample of the alarming excursion), and
    ``recall_after``, the class's recall estimated since then (both ``None`` for other kinds).
    """

    kind: str
    window: str
    subject: str
    since_sample: int
    since_time: float
    reason: str
    change_at: int | None = None
    recall_after: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the fields by name (``since_time`` ``None`` when unknown)."""
        return {"kind": self.kind, "window": self.window, "subject": self.subject, "since_sample": self.since_sample,
                "since_time": json_float(self.since_time), "reason": self.reason, "change_at": self.change_at,
                "recall_after": self.recall_after}


@dataclass(frozen=True, repr=False)
class WindowReport:
    """One window: counts, class mix, scores, prior correction and flags.

    ``scores`` holds every catalog metric that applies to the window's K (binary
    metrics only for K = 2, about ``positive``); ``corrected`` each of them at the
    reference mix (``f_π``), ``distortion`` their difference (Type 1 distortion,
    exactly 0 for Condition-1 metrics). ``recall`` and ``precision`` are per class;
    ``corrected_precision`` is each class's precision at the reference mix.
    ``recall_interval`` holds Wilson intervals per class and ``intervals`` those of
    ``acsa``, ``gmean`` and ``min_recall`` (see ``metrics.intervals``).
    ``prediction_counts`` counts every ``predict`` call's prediction in the window by predicted
    class (by prediction time), labelled or not, and ``label_stats`` says how many got labels,
    how late, and how the predicted mix compares with the reference (``LabelStats``); both are
    empty / None until the first ``predict``.

    Before any label: ``estimate`` is the class mix read from ``prediction_counts`` through the
    baseline's class-conditional rates (``LabelFreeEstimate``; None without a usable baseline or
    predictions), ``expected`` every catalog metric's expected value at that mix with the model
    unchanged (the baseline reweighted to the estimated priors) — put it beside ``scores``, the
    labelled value, once labels arrive — and ``expected_distortion`` the expected value minus the
    value at the reference mix (the Type 1 distortion to expect; NaN without a reference).

    ``score_tally`` is the window's score distribution by true class (``streammon.counting.score_tally``,
    read-only arrays; None until the monitor's first ``y_score``), ``n_scored`` how many of the window's ``n``
    samples carried a score (samples given without one are in ``confusion`` only).
    ``prediction_score_tally`` is the same over the window's ``predict`` calls (by prediction time, labelled or
    not), its rows the *predicted* class (sum them for the distribution of every prediction's score: what a
    label-free estimate reads); None until a monitor that predicts takes its first score.

    Once the monitor takes scores, every window's ``scores``, ``corrected`` and ``distortion`` also hold the score
    metrics (``roc_auc``, ``average_precision``, ``brier``, ``log_loss``, ``ece``: ``catalog("scores")``; NaN
    without a scored sample), ``intervals`` DeLong's interval of a binary ``roc_auc``, and ``flags`` their Type 1
    flags (``streammon.findings.score_window``). ``condition1`` says whether each score metric keeps Condition 1
    in this window (``roc_auc``'s depends on K and its ``multi_class``); empty before the first score.
    """

    name: str
    kind: str
    n: int
    labels: tuple[Hashable, ...]
    confusion: ConfusionCounts
    counts: Mapping[Hashable, int]
    predicted: Mapping[Hashable, int]
    priors: Mapping[Hashable, float]
    present: tuple[Hashable, ...]
    absent: tuple[Hashable, ...]
    positive: Hashable | None
    rrt: float
    ir: float
    prior_shift: PriorShift | None
    recall: Mapping[Hashable, float]
    precision: Mapping[Hashable, float]
    corrected_precision: Mapping[Hashable, float]
    scores: Mapping[str, float]
    corrected: Mapping[str, float]
    distortion: Mapping[str, float]
    competitiveness: Mapping[str, str]
    flags: tuple[Flag, ...]
    recall_interval: Mapping[Hashable, tuple[float, float]]
    intervals: Mapping[str, tuple[float, float]]
    prediction_counts: Mapping[Hashable, int] = field(default_factory=lambda: _NO_COUNTS)
    label_stats: LabelStats | None = None
    estimate: LabelFreeEstimate | None = None
    expected: Mapping[str, float] = field(default_factory=lambda: _NO_SCORES)
    expected_distortion: Mapping[str, float] = field(default_factory=lambda: _NO_SCORES)
    score_tally: ScoreTally | None = None
    prediction_score_tally: ScoreTally | None = None
    condition1: Mapping[str, bool] = field(default_factory=lambda: _NO_FLAGS)

    @property
    def n_scored(self) -> int:
        """The window's samples that came with a score (``y_score=``); 0 before the monitor's first score."""
        return 0 if self.score_tally is None else self.score_tally.n_scored

    def flagged(self, kind: str | None = None) -> tuple[str, ...]:
        """The names of the flagged metrics (of one ``kind`` if given)."""
        return tuple(dict.fromkeys(f.metric for f in self.flags if kind in (None, f.kind)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data: every field by name, per-class values keyed as the module says."""
        return self._json(label_keys(self.labels))

    def _json(self, keys: Mapping[Hashable, str]) -> dict[str, Any]:
        def key(label: Hashable | None) -> str | None:
            return None if label is None else keys[label]

        return {
            "name": self.name,
            "kind": self.kind,
            "n": self.n,
            "labels": label_entries(self.labels, keys),
            "confusion": matrix(self.confusion, self.labels),
            "counts": by_label(self.counts, keys, int),
            "predicted": by_label(self.predicted, keys, int),
            "priors": by_label(self.priors, keys),
            "present": [keys[label] for label in self.present],
            "absent": [keys[label] for label in self.absent],
            "positive": key(self.positive),
            "rrt": json_float(self.rrt),
            "ir": json_float(self.ir),
            "prior_shift": None if self.prior_shift is None else self.prior_shift.to_dict(),
            "recall": by_label(self.recall, keys),
            "precision": by_label(self.precision, keys),
            "corrected_precision": by_label(self.corrected_precision, keys),
            "scores": floats(self.scores),
            "corrected": floats(self.corrected),
            "distortion": floats(self.distortion),
            "competitiveness": dict(self.competitiveness),
            "flags": [f.to_dict() for f in self.flags],
            "recall_interval": by_label(self.recall_interval, keys, pair),
            "intervals": {metric: pair(interval) for metric, interval in self.intervals.items()},
            "prediction_counts": by_label(self.prediction_counts, keys, int),
            "label_stats": None if self.label_stats is None else self.label_stats.to_dict(keys),
            "estimate": None if self.estimate is None else self.estimate.to_dict(keys),
            "expected": floats(self.expected),
            "expected_distortion": floats(self.expected_distortion),
            "n_scored": self.n_scored,
            "condition1": dict(self.condition1),
        }

    def __repr__(self) -> str:
        return (f"WindowReport(name={self.name!r}, kind={self.kind!r}, n={self.n}, labels={_short(self.labels)}, "
                f"flags={len(self.flags)})")


@dataclass(frozen=True)
class ClassBudget:
    """The false-alarm rate a class's degradation detector runs at (``streammon.detection.rates``).

    ``rate``: the class's measured arrival rate, samples per second (NaN while no time has passed);
    ``arl``: its in-control run length, in samples of the class (derived from the model's
    ``false_alarm_interval``, or the fixed ``arl=``); ``interval``: the expected seconds between the
    class's own false degradation alerts, ``arl / rate`` (the model's are ``1 / Σ 1/interval``).
    """

    rate: float
    arl: float
    interval: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``rate``, ``arl``, ``false_alarm_interval`` (seconds)."""
        return {"rate": json_float(self.rate), "arl": json_float(self.arl),
                "false_alarm_interval": json_float(self.interval)}


@dataclass(frozen=True, repr=False)
class Report:
    """Everything a monitor knows now: one ``WindowReport`` per window.

    ``totals`` counts every sample since the monitor started, whatever the
    windows: the source of the mergeable counters exported to Prometheus.
    ``alerts`` are the alerts active now; ``baseline`` is each class's in-control
    recall used by the degradation detector (classes still learning it are absent), ``detector`` the false-alarm
    rate each watched class's detector runs at (``ClassBudget``).
    ``label_stats`` covers every prediction since start (None until the first ``predict``).
    """

    windows: Mapping[str, WindowReport]
    labels: tuple[Hashable, ...]
    reference: Reference | None
    positive: Hashable | None
    samples: int
    warmup_remaining: int
    totals: ConfusionCounts
    alerts: tuple[Alert, ...]
    baseline: Mapping[Hashable, float]
    label_stats: LabelStats | None = None
    detector: Mapping[Hashable, ClassBudget] = field(default_factory=dict)

    def alerting(self, kind: str | None = None) -> tuple[Alert, ...]:
        """The active alerts (of one ``kind`` if given)."""
        return tuple(a for a in self.alerts if kind in (None, a.kind))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data for ``json.dumps(..., allow_nan=False)`` (rules in the module docstring).

        Keys: ``labels`` (``[{"key", "value", "type"}]`` in class-index order), ``positive``
        (a class key or ``None``), ``samples``, ``warmup_remaining``, ``reference``
        (``{"priors": {key: prior}, "source"}`` or ``None``), ``totals`` (lifetime K×K counts),
        ``baseline`` (``{key: recall}``), ``detector`` (``{key: ClassBudget.to_dict()}``), ``alerts`` (a list of
        ``Alert.to_dict()``) and
        ``windows`` (``{name: WindowReport.to_dict()}``).
        """
        keys = label_keys(self.labels)
        return {
            "labels": label_entries(self.labels, keys),
            "positive": None if self.positive is None else keys[self.positive],
            "samples": self.samples,
            "warmup_remaining": self.warmup_remaining,
            "reference": None if self.reference is None else self.reference.to_dict(keys),
            "totals": matrix(self.totals, self.labels),
            "baseline": by_label(self.baseline, keys),
            "detector": by_label(self.detector, keys, ClassBudget.to_dict),
            "alerts": [a.to_dict() for a in self.alerts],
            "windows": {name: w._json(keys) for name, w in self.windows.items()},
            "label_stats": None if self.label_stats is None else self.label_stats.to_dict(keys),
        }

    def __repr__(self) -> str:
        return (f"Report(samples={self.samples}, windows={list(self.windows)!r}, "
                f"labels={_short(self.labels)}, alerts={len(self.alerts)}, warmup_remaining={self.warmup_remaining})")


def _short(labels: tuple[Hashable, ...], shown: int = 8) -> str:
    """The labels for a repr: all of a few, else the first ``shown`` and how many more."""
    if len(labels) <= shown:
        return repr(list(labels))
    return repr(list(labels[:shown]))[:-1] + f", ... {len(labels) - shown} more]"
