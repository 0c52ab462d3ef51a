"""Frozen reports: what a ``Monitor`` knows at one moment, safe to share and keep.

Every mapping is read-only; undefined values are NaN. See ``Monitor.report``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from streammon.counting.counts import ConfusionCounts
from streammon.findings.label_stats import LabelStats
from streammon.findings.reference import Reference
from streammon.findings.shift import PriorShift

_NO_COUNTS: Mapping[Hashable, int] = MappingProxyType({})
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


DEGRADATION = "degradation"
PRIOR_SHIFT = "prior_shift"
CLASS_SET_CHANGE = "class_set_change"
INCOMPETENT = "incompetent"
LABEL_COVERAGE_LOW = "label_coverage_low"
PREDICTED_MIX_SHIFT = "predicted_mix_shift"
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
    whole interval lies below; subject the metric). ``since_sample`` is the stream
    index (samples counted before it) when the alert turned on, ``since_time`` its
    time (NaN if unknown). For a degradation fed by per-sample ``update`` calls, the
    time is that of the latest sample buffered with the switching one (samples are
    buffered without times until the next read, 4,096 samples or timed bucket), so it
    can be late by up to that much; ``update_many`` with per-sample ``t`` gives the
    switching block's last sample time.
    """

    kind: str
    window: str
    subject: str
    since_sample: int
    since_time: float
    reason: str


@dataclass(frozen=True)
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

    def flagged(self, kind: str | None = None) -> tuple[str, ...]:
        """The names of the flagged metrics (of one ``kind`` if given)."""
        return tuple(dict.fromkeys(f.metric for f in self.flags if kind in (None, f.kind)))


@dataclass(frozen=True)
class Report:
    """Everything a monitor knows now: one ``WindowReport`` per window.

    ``totals`` counts every sample since the monitor started, whatever the
    windows: the source of the mergeable counters exported to Prometheus.
    ``alerts`` are the alerts active now; ``baseline`` is each class's in-control
    recall used by the degradation detector (classes still learning it are absent).
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

    def alerting(self, kind: str | None = None) -> tuple[Alert, ...]:
        """The active alerts (of one ``kind`` if given)."""
        return tuple(a for a in self.alerts if kind in (None, a.kind))
