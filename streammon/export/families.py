"""The exported families: one table (name, kind, labels, help) and how a ``Report`` fills them.

``MonitorCollector`` (``streammon.export.prometheus``) turns each model's report into these
families on every scrape; the table is also what ``describe()`` and the rule and dashboard
generators' tests read.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric

from streammon.export.estimate_families import FAMILIES as ESTIMATE_FAMILIES
from streammon.export.estimate_families import add_estimate_families
from streammon.export.label_families import LABEL_FAMILY_ROWS, add_label_families
from streammon.export.series import KEPT_SERIES, class_rows, names, pair_rows, rows
from streammon.export.sink import Sink
from streammon.findings.report import TYPE1, TYPE2, Report, WindowReport
from streammon.findings.window_table import Deferred
from streammon.metrics import spec
from streammon.metrics.metric_spec import CONFUSION

WINDOW = ("model", "window")


@dataclass(frozen=True)
class Family:
    """One exported family: its name (without ``_total``), kind, labels and help."""

    name: str
    kind: str  # "gauge", "counter" or "histogram"
    labels: tuple[str, ...]
    help: str

    @property
    def sample_name(self) -> str:
        """The name as it appears in the exposition."""
        return {"counter": f"{self.name}_total", "histogram": f"{self.name}_bucket"}.get(self.kind, self.name)

    def empty(self) -> GaugeMetricFamily | CounterMetricFamily | HistogramMetricFamily:
        """A new family with no samples."""
        if self.kind == "histogram":
            return HistogramMetricFamily(self.name, self.help, labels=list(self.labels))
        if self.kind == "counter":
            return CounterMetricFamily(self.name, self.help, labels=list(self.labels))
        return GaugeMetricFamily(self.name, self.help, labels=list(self.labels))


FAMILIES: Mapping[str, Family] = {
    f.name: f
    for f in (
        Family("streammon_score", "gauge", (*WINDOW, "metric"),
               "Condition-1-invariant score (safe under prior shift)."),
        Family("streammon_distortion_prone_score", "gauge", (*WINDOW, "metric"),
               "Score that violates Condition 1 or 2: read it with streammon_distortion (opt-in)."),
        Family("streammon_corrected_score", "gauge", (*WINDOW, "metric"),
               "Distortion-prone score at the reference class mix (prior-corrected, f_pi)."),
        Family("streammon_distortion", "gauge", (*WINDOW, "metric", "type"),
               "Measured distortion: type1 = score - corrected score; type2 = shift of the metric's floor."),
        Family("streammon_distortion_flag", "gauge", (*WINDOW, "metric", "type"),
               "1 while the metric is flagged as distorted in the window, else 0."),
        Family("streammon_recall", "gauge", (*WINDOW, "class"), "Recall of each class in the window."),
        Family("streammon_corrected_class_precision", "gauge", (*WINDOW, "class"),
               "Precision of each class at the reference class mix (prior-corrected)."),
        Family("streammon_class_precision_distortion", "gauge", (*WINDOW, "class"),
               "Precision of each class as read minus at the reference mix (Type 1 distortion)."),
        Family("streammon_class_prior", "gauge", (*WINDOW, "class"), "Share of each true class in the window."),
        Family("streammon_reference_prior", "gauge", ("model", "class"), "Share of each class in the reference mix."),
        Family("streammon_imbalance_ratio", "gauge", ("model",), "Reference imbalance ratio max prior / min prior."),
        Family("streammon_rrt", "gauge", WINDOW,
               "Ratio of representatives in the window (Mullick et al., Definition 2)."),
        Family("streammon_prior_shift", "gauge", WINDOW,
               "Jensen-Shannon divergence (bits) between the window's and the reference class mix."),
        Family("streammon_window_samples", "gauge", WINDOW, "Samples in the window."),
        Family("streammon_class_samples", "counter", ("model", "class"), "Labelled samples of each true class."),
        Family("streammon_class_correct", "counter", ("model", "class"), "Correct predictions of each true class."),
        Family("streammon_class_predicted", "counter", ("model", "class"), "Predictions of each class."),
        Family("streammon_samples", "counter", ("model",), "Labelled samples."),
        Family("streammon_alert", "gauge", (*WINDOW, "kind", "subject"),
               "1 for each active alert: degradation, prior_shift, class_set_change, incompetent."),
        Family("streammon_baseline_recall", "gauge", ("model", "class"),
               "In-control recall p0 of each class's degradation detector (Wilson lower bound of its baseline)."),
        Family("streammon_detector_arl_samples", "gauge", ("model", "class"),
               "In-control run length of each watched class's degradation detector, in samples of the class."),
        Family("streammon_detector_class_rate", "gauge", ("model", "class"),
               "Measured arrival rate of each watched class, samples per second (NaN before time has passed)."),
        Family("streammon_detector_false_alarm_interval_seconds", "gauge", ("model", "class"),
               "Expected seconds between false degradation alerts of each watched class (run length / rate)."),
        Family("streammon_score_interval", "gauge", (*WINDOW, "metric", "bound"),
               "Interval bounds (low/high) of acsa, gmean and min_recall from the window's own counts, and of roc_auc "
               "(binary, DeLong) from its scores."),
        Family("streammon_recall_interval", "gauge", (*WINDOW, "class", "bound"),
               "Wilson interval bounds (low/high) of each class's recall."),
        Family("streammon_confusion", "counter", ("model", "true_class", "pred_class"),
               "Samples of each (true class, predicted class) pair (opt-in)."),
        *(Family(*row) for row in LABEL_FAMILY_ROWS),  # predictions and late labels: label_families.py
    )
}


def exported_families(*, distortion_prone: bool = False, confusion: bool = False) -> tuple[Family, ...]:
    """The families a collector with these options emits."""
    skip = set()
    if not distortion_prone:
        skip.add("streammon_distortion_prone_score")
    if not confusion:
        skip.add("streammon_confusion")
    return tuple(f for name, f in FAMILIES.items() if name not in skip)


def _distortion_types(metric: str, invariant: bool) -> tuple[str, ...]:
    """The distortion types a metric is prone to: type1 (violates Condition 1: not ``invariant``), type2
    (violates Condition 2, for the confusion metrics whose floor ``type2_flags`` measures; a score metric's floor
    is not modelled, so it has no type2 series)."""
    s = spec(metric)
    prone = ((TYPE1, not invariant), (TYPE2, s.condition2 is False and s.needs == CONFUSION))
    return tuple(kind for kind, violates in prone if violates)


def _invariant(metric: str, w: WindowReport) -> bool:
    """Whether ``metric`` keeps Condition 1 in window ``w`` (a score metric's may depend on K and its
    parameters: ``WindowReport.condition1``; the others' is the catalog's)."""
    keeps = w.condition1.get(metric)
    return spec(metric).condition1 if keeps is None else bool(keeps)


class _Metrics:
    """A sink filling prometheus_client families."""

    def __init__(self, families: Iterable[Family]) -> None:
        self.families = {f.name: f.empty() for f in families}

    def add(self, family: str, labels: Sequence[str], value: float) -> None:
        metric = self.families[family]
        assert not isinstance(metric, HistogramMetricFamily)
        metric.add_metric(labels, float(value))

    def add_buckets(self, family: str, labels: Sequence[str], buckets: Sequence[tuple[str, float]]) -> None:
        metric = self.families[family]
        assert isinstance(metric, HistogramMetricFamily)
        metric.add_metric(labels, buckets, None)

    def add_series(self, family: str, rows: tuple[tuple[str, ...], ...], values: Sequence[float]) -> None:
        for row, value in zip(rows, values, strict=True):
            self.add(family, row, value)


class _Families:
    """Writes one model's samples to a sink, family by family in exposition order."""

    def __init__(self, sink: Sink, *, distortion_prone: bool, confusion: bool) -> None:
        self.sink = sink
        self.distortion_prone = distortion_prone
        self.confusion = confusion

    def add(self, family: str, labels: Iterable[object], value: float) -> None:
        self.sink.add(family, [str(v) for v in labels], value)

    def add_model(self, model: str, report: Report) -> None:
        """Reference mix and lifetime counters of one model."""
        reference = report.reference
        series = self.sink.add_series
        series("streammon_imbalance_ratio", rows((model,)), [math.nan if reference is None else reference.ir])
        if reference is not None:
            series("streammon_reference_prior", class_rows(model, names(reference.labels)),
                   list(reference.priors.values()))
        # classes still learning their baseline are absent
        series("streammon_baseline_recall", class_rows(model, names(report.baseline)), list(report.baseline.values()))
        watched = class_rows(model, names(report.detector))  # (classes whose detector watches)
        series("streammon_detector_arl_samples", watched, [b.arl for b in report.detector.values()])
        series("streammon_detector_class_rate", watched, [b.rate for b in report.detector.values()])
        series("streammon_detector_false_alarm_interval_seconds", watched,
               [b.interval for b in report.detector.values()])
        totals = report.totals.matrix
        series("streammon_samples", rows((model,)), [int(totals.sum())])
        classes = class_rows(model, names(report.labels))
        series("streammon_class_samples", classes, totals.sum(axis=1).tolist())
        series("streammon_class_correct", classes, np.diagonal(totals).tolist())
        series("streammon_class_predicted", classes, totals.sum(axis=0).tolist())
        if self.confusion:
            series("streammon_confusion", pair_rows(model, names(report.labels)), totals.ravel().tolist())

    def add_window(self, model: str, w: WindowReport) -> None:
        """Mix, per-class values, scores and distortion of one window (each family's series at once)."""
        metrics = tuple(w.scores)
        rows = _window_rows(model, w.name, names(w.labels), metrics, tuple(w.intervals),
                            keeps=tuple(_invariant(m, w) for m in metrics))
        series = self.sink.add_series
        series("streammon_window_samples", rows.window, [w.n])
        series("streammon_rrt", rows.window, [w.rrt])
        series("streammon_prior_shift", rows.window, [math.nan if w.prior_shift is None else w.prior_shift.js])
        series("streammon_score_interval", rows.intervals, [bound for pair in _row(w.intervals) for bound in pair])
        precision, corrected_precision = _row(w.precision), _row(w.corrected_precision)
        series("streammon_recall", rows.classes, _row(w.recall))
        series("streammon_recall_interval", rows.class_bounds,
               [bound for pair in _row(w.recall_interval) for bound in pair])
        series("streammon_class_prior", rows.classes, _row(w.priors))
        series("streammon_corrected_class_precision", rows.classes, corrected_precision)
        series("streammon_class_precision_distortion", rows.classes,
               [read - at_reference for read, at_reference in zip(precision, corrected_precision, strict=True)])
        scores, corrected, distortion = _row(w.scores), _row(w.corrected), _row(w.distortion)
        series("streammon_score", rows.invariant, [scores[i] for i in rows.invariant_index])
        series("streammon_corrected_score", rows.prone, [corrected[i] for i in rows.prone_index])
        if self.distortion_prone:
            series("streammon_distortion_prone_score", rows.prone, [scores[i] for i in rows.prone_index])
        flags = {(f.metric, f.kind): f for f in w.flags}
        magnitudes, flagged = [], []
        for (metric, kind), i in zip(rows.distortion_types, rows.distortion_index, strict=True):
            flag = flags.get((metric, kind))
            if kind == TYPE1:
                magnitudes.append(distortion[i])
            else:
                magnitudes.append(flag.magnitude if flag else (0.0 if w.n else math.nan))
            flagged.append(1.0 if flag else 0.0)
        series("streammon_distortion", rows.distortion, magnitudes)
        series("streammon_distortion_flag", rows.distortion, flagged)


def _row(values: Mapping[Any, Any]) -> list[Any]:
    """A report mapping's values in key order (from the report's arrays when it holds them)."""
    return values.row() if isinstance(values, Deferred) else list(values.values())


@dataclass(frozen=True)
class _WindowRows:
    """The label values of every series of one window, family by family (in exposition order)."""

    window: tuple[tuple[str, ...], ...]
    intervals: tuple[tuple[str, ...], ...]
    classes: tuple[tuple[str, ...], ...]
    class_bounds: tuple[tuple[str, ...], ...]
    invariant: tuple[tuple[str, ...], ...]
    invariant_index: tuple[int, ...]  # positions in the window's scores
    prone: tuple[tuple[str, ...], ...]
    prone_index: tuple[int, ...]
    distortion: tuple[tuple[str, ...], ...]
    distortion_types: tuple[tuple[str, str], ...]
    distortion_index: tuple[int, ...]


@functools.lru_cache(maxsize=KEPT_SERIES)
def _window_rows(model: str, window: str, labels: tuple[str, ...], metrics: tuple[str, ...],
                 interval_metrics: tuple[str, ...], *, keeps: tuple[bool, ...]) -> _WindowRows:
    """The series of a window of these classes and metrics (``keeps``: whether each keeps Condition 1 there):
    the same objects scrape after scrape (kept)."""
    key = (model, window)
    invariant = tuple(i for i, yes in enumerate(keeps) if yes)
    prone = tuple(i for i, yes in enumerate(keeps) if not yes)
    types = tuple((i, m, kind) for i, m in enumerate(metrics) for kind in _distortion_types(m, keeps[i]))
    return _WindowRows(
        window=(key,),
        intervals=tuple((*key, m, bound) for m in interval_metrics for bound in ("low", "high")),
        classes=tuple((*key, label) for label in labels),
        class_bounds=tuple((*key, label, bound) for label in labels for bound in ("low", "high")),
        invariant=tuple((*key, metrics[i]) for i in invariant), invariant_index=invariant,
        prone=tuple((*key, metrics[i]) for i in prone), prone_index=prone,
        distortion=tuple((*key, m, kind) for _, m, kind in types), distortion_types=tuple((m, k) for _, m, k in types),
        distortion_index=tuple(i for i, _, _ in types),
    )


def collector_families(*, distortion_prone: bool = False, confusion: bool = False) -> tuple[Family, ...]:
    """Every family a collector with these options emits, in exposition order (the label-free estimate's last)."""
    estimate = (Family(name, "gauge", tuple(labels), text) for name, (labels, text) in ESTIMATE_FAMILIES.items())
    return (*exported_families(distortion_prone=distortion_prone, confusion=confusion), *estimate)


def write_model(sink: Sink, model: str, report: Report, *, distortion_prone: bool = False,
              confusion: bool = False) -> None:
    """Write one model's samples of every family to ``sink``."""
    out = _Families(sink, distortion_prone=distortion_prone, confusion=confusion)
    out.add_model(model, report)
    add_label_families(sink, model, report)
    for w in report.windows.values():
        out.add_window(model, w)
    for alert in report.alerts:
        out.add("streammon_alert", [model, alert.window, alert.kind, alert.subject], 1.0)
    add_estimate_families(sink, model, report)  # label-free estimates: estimate_families.py


def build_families(
    reports: Sequence[tuple[str, Report]], *, distortion_prone: bool = False, confusion: bool = False
) -> list[Metric]:
    """Fresh metric families for ``(model, report)`` pairs (pure: no state is kept)."""
    sink = _Metrics(collector_families(distortion_prone=distortion_prone, confusion=confusion))
    for model, report in reports:
        write_model(sink, model, report, distortion_prone=distortion_prone, confusion=confusion)
    return list(sink.families.values())
