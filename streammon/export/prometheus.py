"""Prometheus export: a custom collector that reads ``Monitor.report()`` on every scrape.

Nothing is registered at import. Build a ``MonitorCollector`` with one or more
monitors (the ``model`` label tells them apart) and register it with your own
``CollectorRegistry`` — or use ``streammon.export.server.serve``.

Families (names and labels are public; dashboards and rules depend on them):

======================================================  ====================================================
``streammon_score{model,window,metric}``                Condition-1-invariant scores only (safe under prior shift)
``streammon_distortion_prone_score{...}``               the other scores — only with ``distortion_prone=True``
``streammon_corrected_score{model,window,metric}``      distortion-prone scores at the reference mix (``f_π``)
``streammon_distortion{model,window,metric,type}``      measured distortion: type1 ``f − f_π``; type2 floor shift
``streammon_distortion_flag{model,window,metric,type}`` 1 while the metric is flagged, else 0
``streammon_recall{model,window,class}``                per-class recall
``streammon_corrected_class_precision{...,class}``      per-class precision at the reference mix
``streammon_class_precision_distortion{...,class}``     per-class precision as read minus at the reference mix
``streammon_class_prior{model,window,class}``           the window's class mix
``streammon_reference_prior{model,class}``              the reference (training) mix
``streammon_imbalance_ratio{model}``                    reference IR
``streammon_rrt{model,window}``                         ratio of representatives in the window
``streammon_prior_shift{model,window}``                 Jensen–Shannon divergence (bits) against the reference
``streammon_window_samples{model,window}``              samples in the window
``streammon_class_samples_total{model,class}``          lifetime labelled samples per class (mergeable)
``streammon_class_correct_total{model,class}``          lifetime correct predictions per class
``streammon_class_predicted_total{model,class}``        lifetime predictions per class
``streammon_samples_total{model}``                      lifetime samples
``streammon_alert{model,window,kind,subject}``          1 per active alert (window ``stream`` for degradation)
``streammon_baseline_recall{model,class}``              in-control recall ``p0`` of each class's degradation CUSUM
``streammon_score_interval{...,metric,bound}``          low/high of acsa, gmean, min_recall
``streammon_recall_interval{...,class,bound}``          Wilson low/high of each class's recall
``streammon_confusion_total{model,true_class,pred_class}``  full K² counts — only with ``confusion=True``
======================================================  ====================================================

Predictions and late labels (``predict``/``label``: coverage, latency histogram, pending/expired/orphan/
duplicate counters, predicted and implied mix): their table is in ``streammon.export.label_families``.

Undefined values (empty window, absent class, no reference yet) are NaN, never 0.
``streammon_baseline_recall`` is the baseline the recall alert rules compare
with: present from the first scrape when the monitor got ``baseline=`` counts
(else once a class has learned it), so the rules need no day of history; a class
still learning its baseline has no series.
Counters carry no ``_created`` series.

Custom collectors do not work in prometheus_client's multiprocess mode. Under
gunicorn-style workers, run one monitor per worker, serve each on its own port (its
own scrape target: Prometheus's ``instance`` label tells them apart), and aggregate
the ``_total`` counters in PromQL (the rules under ``grafana/rules`` do exactly that).

>>> from prometheus_client import CollectorRegistry, generate_latest
>>> from streammon import Monitor, Sliding
>>> monitor = Monitor([Sliding(100)], reference={"legit": 9, "fraud": 1})
>>> monitor.update_many(["legit", "fraud"], ["legit", "fraud"])
>>> registry = CollectorRegistry()
>>> registry.register(MonitorCollector({"fraud-model": monitor}))
>>> text = generate_latest(registry).decode()
>>> 'streammon_score{metric="gmean",model="fraud-model",window="sliding_100"} 1.0' in text
True
>>> 'metric="precision"' in text.split("# HELP streammon_corrected_score")[0]  # not a safe score
False
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from prometheus_client import generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.samples import Sample

from streammon.export.estimate_families import empty_families, estimate_families
from streammon.export.label_families import LABEL_FAMILY_ROWS, add_label_families
from streammon.findings.report import TYPE1, TYPE2, Report, WindowReport
from streammon.metrics import catalog
from streammon.monitor import Monitor

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
        Family("streammon_rrt", "gauge", WINDOW, "Ratio of representatives in the window (seed 004, Definition 2)."),
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
        Family("streammon_score_interval", "gauge", (*WINDOW, "metric", "bound"),
               "Interval bounds (low/high) of acsa, gmean and min_recall from the window's own counts."),
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


def _distortion_types(metric: str) -> tuple[str, ...]:
    """The distortion types a metric is prone to: type1 (violates Condition 1), type2 (Condition 2)."""
    spec = catalog()[metric]
    prone = ((TYPE1, not spec.condition1), (TYPE2, spec.condition2 is False))
    return tuple(kind for kind, violates in prone if violates)


class _Families:
    """The families being filled for one scrape."""

    def __init__(self, *, distortion_prone: bool, confusion: bool) -> None:
        self.distortion_prone = distortion_prone
        self.confusion = confusion
        self.families = {
            f.name: f.empty() for f in exported_families(distortion_prone=distortion_prone, confusion=confusion)
        }

    def add(self, family: str, labels: Iterable[object], value: float) -> None:
        metric = self.families[family]
        assert not isinstance(metric, HistogramMetricFamily)
        metric.add_metric([str(v) for v in labels], float(value))

    def add_model(self, model: str, report: Report) -> None:
        """Reference mix and lifetime counters of one model."""
        reference = report.reference
        self.add("streammon_imbalance_ratio", [model], math.nan if reference is None else reference.ir)
        for label, prior in (reference.priors.items() if reference is not None else ()):
            self.add("streammon_reference_prior", [model, label], prior)
        for label, p0 in report.baseline.items():  # classes still learning their baseline are absent
            self.add("streammon_baseline_recall", [model, label], p0)
        totals = report.totals.matrix
        self.add("streammon_samples", [model], int(totals.sum()))
        for i, label in enumerate(report.labels):
            self.add("streammon_class_samples", [model, label], int(totals[i].sum()))
            self.add("streammon_class_correct", [model, label], int(totals[i, i]))
            self.add("streammon_class_predicted", [model, label], int(totals[:, i].sum()))
            if self.confusion:
                for j, pred in enumerate(report.labels):
                    self.add("streammon_confusion", [model, label, pred], int(totals[i, j]))

    def add_window(self, model: str, w: WindowReport) -> None:
        """Mix, per-class values, scores and distortion of one window."""
        key = [model, w.name]
        self.add("streammon_window_samples", key, w.n)
        self.add("streammon_rrt", key, w.rrt)
        self.add("streammon_prior_shift", key, math.nan if w.prior_shift is None else w.prior_shift.js)
        for metric, (low, high) in w.intervals.items():
            self.add("streammon_score_interval", [*key, metric, "low"], low)
            self.add("streammon_score_interval", [*key, metric, "high"], high)
        for label in w.labels:
            self.add("streammon_recall", [*key, label], w.recall[label])
            low, high = w.recall_interval[label]
            self.add("streammon_recall_interval", [*key, label, "low"], low)
            self.add("streammon_recall_interval", [*key, label, "high"], high)
            self.add("streammon_class_prior", [*key, label], w.priors[label])
            self.add("streammon_corrected_class_precision", [*key, label], w.corrected_precision[label])
            distortion = w.precision[label] - w.corrected_precision[label]
            self.add("streammon_class_precision_distortion", [*key, label], distortion)
        flags = {(f.metric, f.kind): f for f in w.flags}
        for metric, value in w.scores.items():
            if catalog()[metric].condition1:
                self.add("streammon_score", [*key, metric], value)
            else:
                self.add("streammon_corrected_score", [*key, metric], w.corrected[metric])
                if self.distortion_prone:
                    self.add("streammon_distortion_prone_score", [*key, metric], value)
            for kind in _distortion_types(metric):
                flag = flags.get((metric, kind))
                if kind == TYPE1:
                    magnitude = w.distortion[metric]
                else:
                    magnitude = flag.magnitude if flag else (0.0 if w.n else math.nan)
                self.add("streammon_distortion", [*key, metric, kind], magnitude)
                self.add("streammon_distortion_flag", [*key, metric, kind], 1.0 if flag else 0.0)


def build_families(
    reports: Sequence[tuple[str, Report]], *, distortion_prone: bool = False, confusion: bool = False
) -> list[Metric]:
    """Fresh metric families for ``(model, report)`` pairs (pure: no state is kept)."""
    out = _Families(distortion_prone=distortion_prone, confusion=confusion)
    for model, report in reports:
        out.add_model(model, report)
        add_label_families(out.families, model, report)
        for w in report.windows.values():
            out.add_window(model, w)
        for alert in report.alerts:
            out.add("streammon_alert", [model, alert.window, alert.kind, alert.subject], 1.0)
    return [*out.families.values(), *estimate_families(reports)]  # label-free estimates: estimate_families.py


def _same_exports(old: Report, new: Report) -> bool:
    """Whether ``build_families`` reads the same from both reports (window reports, reference and label
    statistics compared by identity — frozen, and returned again by the monitor's window cache while their
    counts are unchanged; alerts by the labels they export, not by their since-when)."""
    return (
        old.labels == new.labels
        and old.reference is new.reference
        and old.label_stats is new.label_stats
        and old.windows.keys() == new.windows.keys()
        and all(w is new.windows[name] for name, w in old.windows.items())
        and dict(old.baseline) == dict(new.baseline)
        and old.totals.matrix.shape == new.totals.matrix.shape
        and bool((old.totals.matrix == new.totals.matrix).all())
        and [(a.window, a.kind, a.subject) for a in old.alerts] == [(a.window, a.kind, a.subject) for a in new.alerts]
    )


Samples = dict[str, list[Sample]]


def _model_samples(model: str, report: Report, *, distortion_prone: bool, confusion: bool) -> Samples:
    """Each family's samples of one model (in the order ``build_families`` adds them)."""
    families = build_families([(model, report)], distortion_prone=distortion_prone, confusion=confusion)
    return {f.name: f.samples for f in families}


class MonitorCollector:
    """A prometheus_client collector serving many monitors, told apart by the ``model`` label.

    ``distortion_prone=True`` also exports the scores that violate Condition 1
    (precision, F1, accuracy, MCC, …) under their own family;
    ``confusion=True`` exports the full K² confusion counter.
    """

    def __init__(
        self,
        monitors: Mapping[str, Monitor] | None = None,
        *,
        distortion_prone: bool = False,
        confusion: bool = False,
    ) -> None:
        self._monitors: dict[str, Monitor] = {}
        self._samples: dict[str, tuple[Report, Samples]] = {}  # model -> its last report and samples from it
        self._text: tuple[list[tuple[str, Samples]], bytes] | None = None  # the last exposition() and its samples
        self._lock = threading.Lock()
        self.distortion_prone = distortion_prone
        self.confusion = confusion
        for model, monitor in (monitors or {}).items():
            self.add(model, monitor)

    def add(self, model: str, monitor: Monitor) -> None:
        """Serve ``monitor`` under ``model`` (a new name, a non-empty str)."""
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty str, got {model!r}")
        if not isinstance(monitor, Monitor):
            raise TypeError(f"monitor must be a streammon.Monitor, got {monitor!r}")
        with self._lock:
            if model in self._monitors:
                raise ValueError(f"model {model!r} is already served by this collector")
            self._monitors[model] = monitor

    def remove(self, model: str) -> None:
        """Stop serving ``model``."""
        with self._lock:
            self._monitors.pop(model)
            self._samples.pop(model, None)

    @property
    def models(self) -> tuple[str, ...]:
        """The served model names."""
        with self._lock:
            return tuple(self._monitors)

    def describe(self) -> Iterator[Metric]:
        """The families this collector emits (names and types, no samples)."""
        for family in exported_families(distortion_prone=self.distortion_prone, confusion=self.confusion):
            yield family.empty()
        yield from empty_families()

    def collect(self) -> Iterator[Metric]:
        """Families from a new report of every monitor; a model whose report exports the same values as at the
        last scrape (every window report unchanged, same totals and alerts) reuses its samples from then."""
        yield from self._families(self._refresh())

    def exposition(self) -> bytes:
        """``generate_latest`` of a registry holding only this collector (the Prometheus text format); the bytes
        of the last call again when no model's samples changed since (nor the served models)."""
        per_model = self._refresh()
        with self._lock:
            cached = self._text
        if cached is not None and len(cached[0]) == len(per_model) and all(
                model == old_model and samples is old
                for (model, samples), (old_model, old) in zip(per_model, cached[0], strict=True)):
            return cached[1]
        text: bytes = generate_latest(_Fixed(self._families(per_model)))
        with self._lock:
            self._text = (per_model, text)
        return text

    def _families(self, per_model: list[tuple[str, Samples]]) -> Iterator[Metric]:
        for family in self.describe():
            family.samples = [s for _, samples in per_model for s in samples[family.name]]
            yield family

    def _refresh(self) -> list[tuple[str, Samples]]:
        """Each model's samples from its new report (the same list objects as last time where unchanged)."""
        with self._lock:
            monitors = list(self._monitors.items())
        per_model = []
        for model, monitor in monitors:
            report = monitor.report()
            with self._lock:
                cached = self._samples.get(model)
            if cached is not None and _same_exports(cached[0], report):
                samples = cached[1]
            else:
                samples = _model_samples(model, report, distortion_prone=self.distortion_prone,
                                         confusion=self.confusion)
            with self._lock:
                if model in self._monitors:
                    self._samples[model] = (report, samples)
            per_model.append((model, samples))
        return per_model


class _Fixed:
    """A collector yielding given families once (for ``generate_latest``)."""

    def __init__(self, families: Iterable[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterable[Metric]:
        return self._families
