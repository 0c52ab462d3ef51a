"""Prometheus export: a custom collector that reads ``Monitor.report()`` on every scrape.

Nothing is registered at import. Build a ``MonitorCollector`` with one or more
monitors (the ``model`` label tells them apart) and register it with your own
``CollectorRegistry`` — or use ``streammon.export.server.serve``, which answers from
``MonitorCollector.exposition()``: the text (or OpenMetrics) written by ``streammon.export.text``, each
model's lines formatted once per change of its report, the same bytes again while nothing changed.

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
``streammon_detector_arl_samples{model,class}``         each watched class's in-control run length (class samples)
``streammon_detector_class_rate{model,class}``          each watched class's measured rate (samples/s)
``streammon_detector_false_alarm_interval_seconds``     ``{model,class}``: expected seconds between its false alerts
``streammon_score_interval{...,metric,bound}``          low/high of acsa, gmean, min_recall; binary roc_auc (DeLong)
``streammon_recall_interval{...,class,bound}``          Wilson low/high of each class's recall
``streammon_confusion_total{model,true_class,pred_class}``  full K² counts — only with ``confusion=True``
======================================================  ====================================================

Predictions and late labels (``predict``/``label``: coverage, latency histogram, pending/expired/orphan/
duplicate counters, predicted and implied mix): their table is in ``streammon.export.label_families``.

Undefined values (empty window, absent class, no reference yet) are NaN, never 0.
A monitor that takes scores (``y_score=``) exports its score metrics in the same families, by the same rule:
``roc_auc`` (Condition 1 at K = 2 and with one-vs-one) in ``streammon_score``; ``average_precision``, ``brier``,
``log_loss``, ``ece`` (and a one-vs-rest ``roc_auc`` at K > 2) in ``streammon_corrected_score`` and
``streammon_distortion{type="type1"}`` (and ``streammon_distortion_prone_score`` when asked).
``streammon_baseline_recall`` is the baseline the recall alert rules compare
with: present from the first scrape when the monitor got ``baseline=`` counts
(else once a class has learned it), so the rules need no day of history; a class
still learning its baseline has no series.
Counters carry no ``_created`` series.

Custom collectors do not work in prometheus_client's multiprocess mode. Under
gunicorn-style workers, run one ``streammon serve`` beside the service and send every
worker's predictions and labels to it (``streammon.serve``, ``streammon.client``); several
servers are summed in PromQL over their ``_total`` counters (the rules under ``grafana/rules``).

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
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from prometheus_client.core import Metric
from prometheus_client.samples import Sample

from streammon.counting.user_text import check_text
from streammon.export.families import (
    FAMILIES,
    Family,
    build_families,
    collector_families,
    exported_families,
    write_model,
)
from streammon.export.text import Lines, document
from streammon.findings.report import Report
from streammon.monitor import Monitor, reports


def _same_exports(old: Report, new: Report) -> bool:
    """Whether ``build_families`` reads the same from both reports (window reports, reference and label
    statistics compared by identity — frozen, and returned again by the monitor's window cache while their
    counts are unchanged; alerts by the labels they export, not by their since-when)."""
    return old is new or (  # (a monitor with nothing new returns the same report)
        old.labels == new.labels
        and old.reference is new.reference
        and old.label_stats is new.label_stats
        and old.windows.keys() == new.windows.keys()
        and all(w is new.windows[name] for name, w in old.windows.items())
        and dict(old.baseline) == dict(new.baseline)
        and old.detector is new.detector
        and old.totals.matrix.shape == new.totals.matrix.shape
        and bool((old.totals.matrix == new.totals.matrix).all())
        and [(a.window, a.kind, a.subject) for a in old.alerts] == [(a.window, a.kind, a.subject) for a in new.alerts]
    )


# The family table lives in families.py; these names stay importable from here.
__all__ = ["FAMILIES", "Family", "MonitorCollector", "build_families", "exported_families"]

Samples = dict[str, list[Sample]]  # family name -> one model's samples
Pieces = dict[str, str]  # family name -> one model's exposition lines
Options = tuple[bool, bool]  # (distortion_prone, confusion)
T = TypeVar("T")


class MonitorCollector:
    """A prometheus_client collector serving many monitors, told apart by the ``model`` label.

    ``distortion_prone=True`` also exports the scores that violate Condition 1
    (precision, F1, accuracy, MCC, …) under their own family;
    ``confusion=True`` exports the full K² confusion counter.

    A scrape asks every monitor for its report (``streammon.monitor.reports``: the changed windows of all models
    evaluated as one stack; cheap when a model's counts did not change: it returns its cached window reports) and
    rebuilds only the models whose report exports something new. ``collect()``
    gives prometheus_client families (for a ``CollectorRegistry``); ``exposition()`` gives the formatted text
    from per-model pieces formatted once (what ``streammon.export.serve`` answers with).
    """

    def __init__(
        self,
        monitors: Mapping[str, Monitor] | None = None,
        *,
        distortion_prone: bool = False,
        confusion: bool = False,
    ) -> None:
        self._monitors: dict[str, Monitor] = {}
        # model -> its last report, the options then and what was built from it: samples, text pieces
        self._samples: dict[str, tuple[Report, Options, Samples]] = {}
        self._pieces: dict[str, tuple[Report, Options, Pieces]] = {}
        # openmetrics? -> the last exposition() of that format and the pieces it joined
        self._documents: dict[bool, tuple[list[tuple[str, Pieces]], bytes]] = {}
        self._lock = threading.Lock()
        self.distortion_prone = distortion_prone
        self.confusion = confusion
        for model, monitor in (monitors or {}).items():
            self.add(model, monitor)

    def add(self, model: str, monitor: Monitor) -> None:
        """Serve ``monitor`` under ``model`` (a new name: a str of 1 to 256 characters, valid Unicode, as for labels;
        see ``streammon.counting.user_text``).

        >>> MonitorCollector({"fraud\\ud800": Monitor()})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: model name 'fraud\\ud800' holds a lone surrogate: it is not valid Unicode ...
        """
        model = check_text(model, "model name")
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
            self._pieces.pop(model, None)

    @property
    def models(self) -> tuple[str, ...]:
        """The served model names."""
        with self._lock:
            return tuple(self._monitors)

    def _options(self) -> Options:
        return bool(self.distortion_prone), bool(self.confusion)

    def _order(self, options: Options) -> tuple[Family, ...]:
        return collector_families(distortion_prone=options[0], confusion=options[1])

    def describe(self) -> Iterator[Metric]:
        """The families this collector emits (names and types, no samples)."""
        for family in self._order(self._options()):
            yield family.empty()

    def collect(self) -> Iterator[Metric]:
        """Families from a new report of every monitor; a model whose report exports the same values as at the
        last scrape (every window report unchanged, same totals and alerts) reuses its samples from then."""
        options = self._options()
        per_model = self._refresh(self._samples, options, self._build_samples)
        for family in self._order(options):
            metric = family.empty()
            metric.samples = [s for _, samples in per_model for s in samples[family.name]]
            yield metric

    def exposition(self, *, openmetrics: bool = False) -> bytes:
        """What ``generate_latest`` (``openmetrics=True``: OpenMetrics ``generate_latest``) writes for a registry
        holding only this collector, byte for byte. Each model's lines are formatted once per new report and
        kept; when no model changed since the last call of the format (nor the served models), its bytes
        again.

        >>> from streammon import Monitor, Sliding
        >>> collector = MonitorCollector({"m": Monitor([Sliding(10)])})
        >>> text = collector.exposition()
        >>> 'streammon_window_samples{model="m",window="sliding_10"} 0.0' in text.decode()
        True
        >>> collector.exposition() is text  # nothing changed: the same bytes
        True
        >>> collector.exposition(openmetrics=True).endswith(b"# EOF\\n")
        True
        """
        options = self._options()
        per_model = self._refresh(self._pieces, options, self._build_pieces)
        with self._lock:
            cached = self._documents.get(openmetrics)
        if cached is not None and len(cached[0]) == len(per_model) and all(
                model == old_model and pieces is old
                # (mutation testing: strict=False/None is equivalent, the lengths were compared just before)
                for (model, pieces), (old_model, old) in zip(per_model, cached[0], strict=True)):
            return cached[1]
        text = document(self._order(options), [pieces for _, pieces in per_model], openmetrics=openmetrics)
        with self._lock:
            self._documents[openmetrics] = (per_model, text)
        return text

    def _build_samples(self, model: str, report: Report, options: Options) -> Samples:
        families = build_families([(model, report)], distortion_prone=options[0], confusion=options[1])
        return {f.name: f.samples for f in families}

    def _build_pieces(self, model: str, report: Report, options: Options) -> Pieces:
        lines = Lines(self._order(options))
        write_model(lines, model, report, distortion_prone=options[0], confusion=options[1])
        return lines.pieces()

    def _refresh(self, cache: dict[str, tuple[Report, Options, T]], options: Options,
                 build: Callable[[str, Report, Options], T]) -> list[tuple[str, T]]:
        """What ``build`` makes of each model's new report (the same object as last time where the report
        exports the same, under the same options)."""
        with self._lock:
            monitors = list(self._monitors.items())
        per_model = []
        fresh = reports([monitor for _, monitor in monitors])  # every model's windows evaluated together
        for (model, _), report in zip(monitors, fresh, strict=True):
            with self._lock:
                cached = cache.get(model)
            if cached is not None and cached[1] == options and _same_exports(cached[0], report):
                built = cached[2]
            else:
                built = build(model, report, options)
            with self._lock:
                if model in self._monitors:
                    cache[model] = (report, options, built)
            per_model.append((model, built))
        return per_model
