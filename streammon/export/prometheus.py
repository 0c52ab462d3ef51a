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

import threading
from collections.abc import Iterable, Iterator, Mapping

from prometheus_client import generate_latest
from prometheus_client.core import Metric
from prometheus_client.samples import Sample

from streammon.export.estimate_families import empty_families
from streammon.export.families import FAMILIES, Family, build_families, exported_families
from streammon.findings.report import Report
from streammon.monitor import Monitor


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


# The family table lives in families.py; these names stay importable from here.
__all__ = ["FAMILIES", "Family", "MonitorCollector", "build_families", "exported_families"]

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
                # (mutation testing: strict=False/None is equivalent, the lengths were compared just before)
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
