"""Prometheus families for predictions whose labels come later (``Monitor.predict``/``label``).

Read from ``Report.label_stats`` (lifetime) and each ``WindowReport.label_stats``. The lifetime
counters, ``streammon_predictions_pending`` and the histogram are exported from the first scrape,
zeros until the first ``predict`` (a counter that appears at its first value would lose that
value to ``increase()``); the window gauges and the implied mix only once ``predict`` was called.

==========================================================  ==================================================
``streammon_predictions_total{model,class}``                predictions per predicted class (a key predicted
                                                            again while pending counts once)
``streammon_label_joined_total{model}``                     labels joined with their prediction
``streammon_label_orphans_total{model}``                    labels with no pending prediction
``streammon_label_duplicates_total{model}``                 second labels of a joined key
``streammon_predictions_expired_total{model}``              predictions that outlived ``label_ttl`` unlabelled
``streammon_predictions_evicted_total{model}``              predictions pushed out by ``max_pending``
``streammon_predictions_repeated_total{model}``             predictions of a key already pending (ignored)
``streammon_predictions_pending{model}``                    predictions waiting for their label now
``streammon_label_latency_seconds{model,le}``               histogram of label latency (``_bucket`` only)
``streammon_implied_prior{model,class}``                    predicted mix the reference implies
``streammon_window_predictions{model,window}``              predictions in the window (by prediction time)
``streammon_label_coverage{model,window}``                  labelled / predictions of the window
``streammon_predicted_prior{model,window,class}``           predicted-class mix of every prediction
``streammon_labelled_predicted_prior{model,window,class}``  the same over the labelled predictions
``streammon_predicted_mix_shift{model,window}``             JS divergence (bits) of it from the implied mix
``streammon_window_label_latency_seconds{...,percentile}``  latency of the window's joined labels: p50/p90/p99
``streammon_aged_predictions{model,window}``                timed windows: predictions older than the typical
                                                            latency (lifetime median) — what
                                                            ``label_coverage_low`` judges
``streammon_aged_labelled_predictions{model,window}``       of them, how many got a label
==========================================================  ==================================================

**The latency histogram.** The pending store counts latencies in log buckets, 6 per doubling
(within 12 %); the exposition gives the cumulative count at one edge per doubling,
``le`` = 2⁻⁴ s (62.5 ms) … 2²⁶ s (777 days), and ``+Inf`` — 32 series per model, and each
edge is an exact bucket edge, so every count is exact: the labels joined with latency below
``le`` (a latency of exactly ``le`` counts in the next edge). It has no ``_sum`` and ``_count``
(latencies are kept as bucket counts, not summed): ``histogram_quantile`` works, an average does
not; ``streammon_label_joined_total`` is the count.

Counters are lifetime totals: sum their ``increase()`` over replicas. The two alert inputs are
gauges summed over replicas: ``label_coverage_low`` fires when
``sum(aged_labelled) / sum(aged) < COVERAGE_FRACTION × lifetime coverage`` with at least
``MIN_AGED`` aged predictions (``streammon.findings.label_view``; the rules do the same in PromQL).

>>> from streammon import Monitor, Cumulative
>>> m = Monitor([Cumulative()], reference={"a": 1, "b": 1})
>>> m.predict("k1", "a", t=0.0); m.predict("k2", "b", t=0.0); m.label("k1", "a", t=3.0)
>>> edges = dict(latency_buckets(m.report().label_stats))
>>> edges["2.0"], edges["4.0"], edges["+Inf"]
(0, 1, 1)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import cast

from prometheus_client.utils import floatToGoString

from streammon.export.series import class_rows, names
from streammon.export.sink import Sink
from streammon.findings.label_stats import LOWEST, PER_OCTAVE, LabelStats
from streammon.findings.report import Report, WindowReport

LATENCY = "streammon_label_latency_seconds"
EDGE_POWERS = tuple(range(-4, 27))  # le = 2**k seconds; bucket b's upper edge is 2 ** (b / PER_OCTAVE + LOWEST)


WINDOW = ("model", "window")
Add = Callable[[str, Sequence[str], float], None]
_go_float = cast(Callable[[float], str], floatToGoString)  # Prometheus's float format (untyped upstream)
# (name, kind, labels, help) rows; streammon.export.prometheus makes them ``Family`` objects.
LABEL_FAMILY_ROWS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("streammon_predictions", "counter", ("model", "class"), "Predictions (Monitor.predict) per predicted class."),
    ("streammon_label_joined", "counter", ("model",), "Labels joined with their pending prediction."),
    ("streammon_label_orphans", "counter", ("model",), "Labels whose key had no pending prediction."),
    ("streammon_label_duplicates", "counter", ("model",), "Second labels of an already joined key."),
    ("streammon_predictions_expired", "counter", ("model",), "Predictions that outlived label_ttl unlabelled."),
    ("streammon_predictions_evicted", "counter", ("model",), "Predictions pushed out by max_pending newer ones."),
    ("streammon_predictions_repeated", "counter", ("model",), "Predictions of a key already pending (ignored)."),
    ("streammon_predictions_pending", "gauge", ("model",), "Predictions waiting for their label."),
    (LATENCY, "histogram", ("model",),
     "Seconds from prediction to label of joined labels (le: latency below it; no _sum)."),
    ("streammon_implied_prior", "gauge", ("model", "class"),
     "Predicted-class mix the reference implies (sum_j pi_j P(pred | true j), lifetime confusion)."),
    ("streammon_window_predictions", "gauge", WINDOW, "Predictions in the window (by prediction time)."),
    ("streammon_label_coverage", "gauge", WINDOW, "Share of the window's predictions that got their label."),
    ("streammon_predicted_prior", "gauge", (*WINDOW, "class"), "Predicted-class mix of the window's predictions."),
    ("streammon_labelled_predicted_prior", "gauge", (*WINDOW, "class"),
     "Predicted-class mix of the window's labelled predictions (the labelled subset)."),
    ("streammon_predicted_mix_shift", "gauge", WINDOW,
     "Jensen-Shannon divergence (bits) of the window's predicted mix from the implied mix."),
    ("streammon_window_label_latency_seconds", "gauge", (*WINDOW, "percentile"),
     "Label latency quantiles of the labels joined in the window (within 12 percent)."),
    ("streammon_aged_predictions", "gauge", WINDOW,
     "Predictions of a timed window older than the typical label latency."),
    ("streammon_aged_labelled_predictions", "gauge", WINDOW,
     "Of the window's predictions older than the typical latency, those labelled."),
)


def latency_buckets(stats: LabelStats | None) -> list[tuple[str, int]]:
    """Cumulative ``(le, count)`` pairs of the latency histogram: one exact bucket edge per doubling, then +Inf."""
    if stats is None:
        return list(_no_latencies())
    return _buckets(stats.latency_counts)


@functools.lru_cache(maxsize=1)
def _no_latencies() -> tuple[tuple[str, int], ...]:
    """The histogram of a model without labels yet (every scrape of it asks again)."""
    return tuple(_buckets(()))


def _buckets(counts: Sequence[int]) -> list[tuple[str, int]]:
    out, total, upto = [], 0, 0
    for k in EDGE_POWERS:
        last = PER_OCTAVE * (k - LOWEST)  # the bucket whose upper edge is 2**k
        total += sum(counts[upto:last + 1])
        upto = last + 1
        out.append((_go_float(2.0**k), total))
    out.append(("+Inf", total + sum(counts[upto:])))
    return out


def add_label_families(sink: Sink, model: str, report: Report) -> None:
    """Add one model's label families (the lifetime counters as zeros before the first ``predict``)."""
    life = report.label_stats
    add = sink.add

    predicted = life.predicted_counts if life is not None else dict.fromkeys(report.labels, 0)
    sink.add_series("streammon_predictions", class_rows(model, names(predicted)),
                    list(predicted.values()))
    for name, field in (("streammon_label_joined", "joined"), ("streammon_label_orphans", "orphans"),
                        ("streammon_label_duplicates", "duplicates"), ("streammon_predictions_expired", "expired"),
                        ("streammon_predictions_evicted", "evicted"), ("streammon_predictions_repeated", "repeated"),
                        ("streammon_predictions_pending", "pending")):
        add(name, [model], 0 if life is None else getattr(life, field))
    sink.add_buckets(LATENCY, [model], [(le, float(n)) for le, n in latency_buckets(life)])
    if life is None:
        return
    for label, q in life.implied_mix.items():
        add("streammon_implied_prior", [model, str(label)], q)
    for w in report.windows.values():
        _add_window(add, model, w)


def _add_window(add: Add, model: str, w: WindowReport) -> None:
    s = w.label_stats
    if s is None:
        return
    key = [model, w.name]
    add("streammon_window_predictions", key, s.predictions)
    add("streammon_label_coverage", key, s.coverage)
    add("streammon_predicted_mix_shift", key, math.nan if s.mix_shift is None else s.mix_shift.js)
    for label, share in s.predicted_mix.items():
        add("streammon_predicted_prior", [*key, str(label)], share)
    for label, share in s.labelled_predicted_mix.items():
        add("streammon_labelled_predicted_prior", [*key, str(label)], share)
    for name, seconds in s.latency.items():
        add("streammon_window_label_latency_seconds", [*key, name], seconds)
    # (mutation testing: `or` is equivalent, aged and aged_labelled are None together, label_stats.py)
    if s.aged is not None and s.aged_labelled is not None:
        add("streammon_aged_predictions", key, s.aged)
        add("streammon_aged_labelled_predictions", key, s.aged_labelled)
