"""The Grafana dashboard, generated so that every query names only families the collector emits.

``streammon dashboard`` prints it; ``grafana/dashboards/streammon.json`` is the
checked-in output. It uses a ``datasource`` template variable (not ``__inputs``,
which file provisioning leaves unresolved) and ``model``/``window`` variables.

>>> board = dashboard()
>>> [v["name"] for v in board["templating"]["list"]]
['datasource', 'model', 'window']
>>> sorted(metric_names(board))[2:5]
['streammon_alert', 'streammon_class_correct_total', 'streammon_class_precision_distortion']
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
SEL = 'model=~"$model",window=~"$window"'
MODEL = 'model=~"$model"'


def _target(expr: str, legend: str, ref: str) -> dict[str, Any]:
    return {"datasource": DATASOURCE, "expr": expr, "legendFormat": legend, "refId": ref, "range": True}


def _panel(kind: str, title: str, description: str, grid: tuple[int, int, int, int],
           targets: list[tuple[str, str]], *, unit: str = "none", minmax: tuple[float, float] | None = None
           ) -> dict[str, Any]:
    x, y, w, h = grid
    defaults: dict[str, Any] = {"unit": unit}
    if minmax is not None:
        defaults["min"], defaults["max"] = minmax
    return {
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "gridPos": {"x": x, "y": y, "w": w, "h": h},
        "targets": [_target(expr, legend, chr(ord("A") + i)) for i, (expr, legend) in enumerate(targets)],
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": _options(kind),
    }


def _options(kind: str) -> dict[str, Any]:
    legend = {"displayMode": "list", "placement": "bottom", "showLegend": True, "calcs": []}
    tooltip = {"mode": "multi", "sort": "none"}
    if kind == "timeseries":
        return {"legend": legend, "tooltip": tooltip}
    if kind == "statetimeline":
        return {"showValue": "never", "rowHeight": 0.8, "legend": legend, "tooltip": tooltip}
    if kind == "stat":
        return {
            "graphMode": "area", "colorMode": "value", "justifyMode": "auto", "textMode": "auto",
            "wideLayout": True, "showPercentChange": False, "percentChangeColorMode": "standard",
            "orientation": "auto", "reduceOptions": {"calcs": ["lastNotNull"], "values": False},
        }
    raise ValueError(f"no options for panel type {kind!r}")


def _variable(name: str, label: str, query: str) -> dict[str, Any]:
    return {
        "type": "query", "name": name, "label": label, "datasource": DATASOURCE,
        "query": query, "definition": query,
        "refresh": 2, "multi": True, "includeAll": True, "sort": 1,
        "current": {"text": "All", "value": "$__all"},
    }


def _one(selector: str) -> str:
    """A gauge as one line per series across the instances that export it (``streammon serve`` replicas or
    key-hash shards of one model): their mean, so a model reads as one line per window, not one per instance."""
    return f"avg without (instance, job) ({selector})"


def _panels() -> list[dict[str, Any]]:
    return [
        _panel("timeseries", "Scores invariant under prior shift",
               "Condition-1-invariant scores (Mullick et al.): they move only when the model's per-class behaviour "
               "moves.",
               (0, 0, 12, 8),
               [(_one(f'streammon_score{{{SEL},metric=~"acsa|gmean|min_recall|maurpc_ova"}}'),
                 "{{window}} {{metric}}")],
               unit="percentunit", minmax=(0, 1)),
        _panel("timeseries", "Per-class recall", "Recall of each class; a class absent from the window has none.",
               (12, 0, 12, 8), [(_one(f"streammon_recall{{{SEL}}}"), "{{window}} {{class}}")],
               unit="percentunit", minmax=(0, 1)),
        _panel("stat", "Minimum recall above random (1/K)",
               "Minimum recall minus 1/K (Ortigosa-Hernández et al.): below 0, some class is recalled worse than "
               "random guessing.",
               (0, 8, 6, 6),
               [(_one(f'streammon_score{{{SEL},metric="min_recall"}}') + " - on (model, window) group_left () "
                 f"(1 / count by (model, window) (max by (model, window, class) (streammon_recall{{{SEL}}} >= 0)))",
                 "{{model}} {{window}}")],
               unit="percentunit"),
        _panel("stat", "Active alerts", "Alerts active now, by kind: degradation (class-conditional), prior_shift, "
               "class_set_change, incompetent. Each (model, kind, subject) counts once, whatever the windows and "
               "replicas that report it.", (6, 8, 6, 6),
               [(f"count by (kind) (max by (model, kind, subject) (streammon_alert{{{MODEL}}})) or on () vector(0)",
                 "{{kind}}")]),
        _panel("timeseries", "RRT against the reference IR",
               "Ratio of representatives in the window (Mullick et al.) against the training imbalance ratio.",
               (12, 8, 12, 6),
               [(_one(f"streammon_rrt{{{SEL}}}"), "RRT {{window}}"),
                (_one(f"streammon_imbalance_ratio{{{MODEL}}}"), "IR")]),
        _panel("timeseries", "Class mix against the reference",
               "Share of each class in the window, and in the reference (training) mix.", (0, 14, 12, 8),
               [(_one(f"streammon_class_prior{{{SEL}}}"), "{{window}} {{class}}"),
                (_one(f"streammon_reference_prior{{{MODEL}}}"), "reference {{class}}")],
               unit="percentunit", minmax=(0, 1)),
        _panel("timeseries", "Prior shift (Jensen–Shannon divergence)",
               "Divergence in bits between the window's class mix and the reference mix.", (12, 14, 12, 8),
               [(_one(f"streammon_prior_shift{{{SEL}}}"), "{{window}}")]),
        _panel("statetimeline", "Distortion flags: metrics not to trust now",
               "1 while a metric is flagged: type1 = the class mix distorts it; type2 = the class set changed.",
               (0, 22, 12, 8), [(f"max without (instance, job) (streammon_distortion_flag{{{SEL}}})",
                                 "{{window}} {{metric}} {{type}}")]),
        _panel("timeseries", "Distortion: how much of each reading is the class mix",
               "type1: score as read minus the score at the reference mix. type2: shift of the metric's floor.",
               (12, 22, 12, 8), [(_one(f"streammon_distortion{{{SEL}}}"), "{{window}} {{metric}} {{type}}")]),
        _panel("timeseries", "Precision as read vs at the reference mix",
               "Per-class precision: as read (moves with the class mix) and prior-corrected (moves with the model).",
               (0, 30, 12, 8),
               [(_one(f"streammon_corrected_class_precision{{{SEL}}}") + " + "
                 + _one(f"streammon_class_precision_distortion{{{SEL}}}"), "as read {{window}} {{class}}"),
                (_one(f"streammon_corrected_class_precision{{{SEL}}}"), "at reference mix {{window}} {{class}}")],
               unit="percentunit", minmax=(0, 1)),
        _panel("timeseries", "Per-class recall across replicas",
               "Recall from the summed lifetime counters of every replica (what the PromQL rules compute).",
               (12, 30, 12, 8),
               [(f"sum by (model, class) (increase(streammon_class_correct_total{{{MODEL}}}[5m])) / "
                 f"(sum by (model, class) (increase(streammon_class_samples_total{{{MODEL}}}[5m])) > 0)",
                 "{{model}} {{class}}")],
               unit="percentunit", minmax=(0, 1)),
        *_label_panels(38),
        *_estimate_panels(54),
        *_expected_panels(EXPECTED_ROW),
        *_score_panels(SCORE_ROW),
    ]


def _label_panels(y: int) -> list[dict[str, Any]]:
    """Predictions and late labels (``streammon.export.label_families``): coverage, latency, the predicted mix
    against the mix the reference implies, and what never joins."""
    latency = f"sum by (model, le) (rate(streammon_label_latency_seconds_bucket{{{MODEL}}}[5m]))"
    return [
        _panel("timeseries", "Label coverage",
               "Share of the window's predictions that got their label, and of the timed windows' predictions "
               "older than the typical latency (label_coverage_low fires below half the lifetime coverage).",
               (0, y, 12, 8),
               [(f"streammon_label_coverage{{{SEL}}}", "{{window}}"),
                (f"streammon_aged_labelled_predictions{{{MODEL}}} / streammon_aged_predictions{{{MODEL}}}",
                 "aged {{window}}")],
               unit="percentunit", minmax=(0, 1)),
        _panel("timeseries", "Label latency",
               "Seconds from prediction to label of the labels joined over 5 minutes, summed over replicas "
               "(streammon_label_latency_seconds: one bucket edge per doubling).", (12, y, 12, 8),
               [(f"histogram_quantile({q}, {latency})", f"p{round(q * 100)} {{{{model}}}}") for q in (0.5, 0.9)],
               unit="s"),
        _panel("timeseries", "Predicted mix against the reference-implied mix",
               "Predicted-class mix of every prediction in the window (known before any label), and the mix the "
               "reference implies through the labelled confusion: apart, production or the model moved.",
               (0, y + 8, 12, 8),
               [(f"streammon_predicted_prior{{{SEL}}}", "{{window}} {{class}}"),
                (f"streammon_implied_prior{{{MODEL}}}", "implied {{class}}")],
               unit="percentunit", minmax=(0, 1)),
        _panel("timeseries", "Pending predictions, orphans and duplicates",
               "Predictions waiting for their label; labels per second that matched no pending prediction "
               "(orphans: a broken join key?) or repeated a joined one.", (12, y + 8, 12, 8),
               [(f"sum without (instance, job) (streammon_predictions_pending{{{MODEL}}})", "pending {{model}}"),
                (f"sum by (model) (rate(streammon_label_orphans_total{{{MODEL}}}[5m]))", "orphans/s {{model}}"),
                (f"sum by (model) (rate(streammon_label_duplicates_total{{{MODEL}}}[5m]))",
                 "duplicates/s {{model}}")]),
    ]


def _estimate_panels(y: int) -> list[dict[str, Any]]:
    """The label-free estimate (``streammon.export.estimate_families``): the class mix read from the predictions
    against the labelled mix and the reference, and the p-value of "only the class mix changed"."""
    estimated = f'streammon_estimated_prior{{{SEL},bound="estimate"}}'
    return [
        _panel("timeseries", "Class mix: estimated from predictions vs labelled vs reference",
               "Class mix estimated from the window's predictions alone (known before any label), with its "
               "confidence bounds: by EM on the scores with a Validation baseline (any K), else through the "
               "baseline's class-conditional rates of the decisions; the labelled window's mix, and the reference "
               "mix.", (0, y, 12, 8),
               [(estimated, "estimated {{window}} {{class}}"),
                (f'streammon_estimated_prior{{{SEL},bound=~"lower|upper"}}', "{{bound}} {{window}} {{class}}"),
                (f"streammon_class_prior{{{SEL}}}", "labelled {{window}} {{class}}"),
                (f"streammon_reference_prior{{{MODEL}}}", "reference {{class}}")],
               unit="percentunit", minmax=(0, 1)),
        _panel("timeseries", "Label-shift p-value: does a class-mix change explain the predictions?",
               "P-value of 'only the class mix changed' per window (lowest over replicas). Small (below the "
               "policy's shift_alpha, 0.01 by default): the model or its inputs changed (not_prior_shift).",
               (12, y, 12, 8),
               [(f"min by (model, window) (streammon_label_shift_p_value{{{SEL}}})", "{{model}} {{window}}")],
               minmax=(0, 1)),
    ]


EXPECTED_ROW = 62  # the performance expected without labels sits below the label-free mix
SCORE_ROW = 70  # the panels of a model's scores sit below the label-free estimate's
EXPECTED = "streammon_expected_performance"


def _expected(metric: str, bound: str) -> str:
    """One expected-performance series per window across the instances, ``bound`` a label matcher value."""
    op = "=~" if "|" in bound else "="
    return _one(f'{EXPECTED}{{{SEL},metric=~"{metric}",bound{op}"{bound}"}}')


def _expected_panels(y: int) -> list[dict[str, Any]]:
    """The performance expected without labels (``streammon_expected_performance``: a ``Validation`` baseline and
    scored predictions, any K): the mean recall the rule ``StreammonExpectedPerformanceDrop`` watches against the
    validation set's own, and the scores' ROC AUC and average precision, each with its bounds over the mix's
    interval. A model without scores or without a Validation baseline has none of these series."""
    none = (" Empty without scores and a streammon.Validation baseline, and at K > 2 for a window of more than "
            "10,000 scored predictions (a cumulative window soon): EM reads the window's exact scores. "
            "streammon_estimate_from_scores says which estimator each window used (0: the hard-label one).")
    return [
        _panel("timeseries", "Expected balanced accuracy without labels (scores, EM)",
               "Mean recall (ACSA; at K = 2 the balanced accuracy) expected from the window's scores alone at the "
               "class mix EM estimates, with its bounds over the mix's interval, against the validation "
               "set's own value (what StreammonExpectedPerformanceDrop compares the upper bound with) and, once "
               "labels arrive, the labelled window's value." + none, (0, y, 12, 8),
               [(_expected("acsa", "estimate"), "expected {{window}}"),
                (_expected("acsa", "lower|upper"), "{{bound}} {{window}}"),
                (f'avg by (model) ({EXPECTED}{{{MODEL},metric="acsa",bound="validation"}})', "validation {{model}}"),
                (_one(f'streammon_score{{{SEL},metric="acsa"}}'), "labelled {{window}}")],
               unit="percentunit", minmax=(0, 1)),
        _panel("timeseries", "Expected ROC AUC and average precision without labels (scores, EM)",
               "ROC AUC and average precision (K > 2: macro one-vs-rest) expected from the window's scores alone: "
               "the mix-adjusted posteriors stand in for the labels. With its bounds over the mix's interval." + none,
               (12, y, 12, 8),
               [(_expected("roc_auc|average_precision", "estimate"), "expected {{window}} {{metric}}"),
                (_expected("roc_auc|average_precision", "lower|upper"), "{{bound}} {{window}} {{metric}}")],
               unit="percentunit", minmax=(0, 1)),
    ]


def expected_queries() -> set[str]:
    """The dashboard's queries that read the performance expected without labels (no data for a model that sends
    no scores or has no ``Validation`` baseline)."""
    return {expr for panel in _expected_panels(EXPECTED_ROW) for expr in (t["expr"] for t in panel["targets"])
            if EXPECTED in expr}


CALIBRATION = "ece|brier"


def _as_read(metric: str) -> str:
    """A mix-sensitive score as read, from what the exporter sends by default: its value at the reference mix
    plus its type-1 distortion (read − at reference), one line per window across the instances."""
    return (_one(f'streammon_corrected_score{{{SEL},metric=~"{metric}"}}') + " + ignoring (type) "
            + _one(f'streammon_distortion{{{SEL},metric=~"{metric}",type="type1"}}'))


def _score_panels(y: int) -> list[dict[str, Any]]:
    """A model's scores (``y_score=``; the score metrics of METRICS.md, "Scores"): ROC AUC, safe under prior
    shift, with its interval; ECE and Brier score, and log loss, as read and at the reference mix. A model that
    sends no scores has none of these series: the panels show no data (no fake zero line)."""
    none = " Empty for a model that sends no scores (y_score)."
    return [
        _panel("timeseries", "ROC AUC of the scores (safe under prior shift)",
               "Area under the ROC curve of the model's scores, with its 95 % DeLong interval: it depends only on "
               "each class's score distribution (Condition 1), so a change of class mix cannot move it." + none,
               (0, y, 8, 8),
               [(_one(f'streammon_score{{{SEL},metric="roc_auc"}}'), "{{window}}"),
                (_one(f'streammon_score_interval{{{SEL},metric="roc_auc"}}'), "{{bound}} {{window}}")]),
        _panel("timeseries", "Calibration: ECE and Brier score, as read vs at the reference mix",
               "Expected calibration error (15 top-label bins) and Brier score: means over samples, so the class "
               "mix moves them; at the reference mix they move only with the model. Lower is better." + none,
               (8, y, 8, 8),
               [(_as_read(CALIBRATION), "as read {{window}} {{metric}}"),
                (_one(f'streammon_corrected_score{{{SEL},metric=~"{CALIBRATION}"}}'),
                 "at reference mix {{window}} {{metric}}")]),
        _panel("timeseries", "Log loss, as read vs at the reference mix",
               "Log loss of the scores (clipped to [1e-15, 1 - 1e-15]): as read, and at the reference mix." + none,
               (16, y, 8, 8),
               [(_as_read("log_loss"), "as read {{window}}"),
                (_one(f'streammon_corrected_score{{{SEL},metric="log_loss"}}'), "at reference mix {{window}}")]),
    ]


def score_queries() -> set[str]:
    """The dashboard's queries that read a model's scores (no data for a model that sends none)."""
    return {expr for panel in _score_panels(SCORE_ROW) for expr in (t["expr"] for t in panel["targets"])}


def dashboard() -> dict[str, Any]:
    """The streammon dashboard as a Grafana JSON model."""
    panels = _panels()
    for i, panel in enumerate(panels, start=1):
        panel["id"] = i
    return {
        "uid": "streammon",
        "title": "streammon: model quality under class imbalance",
        "description": "Did the model get worse, or did only the class mix change?",
        "tags": ["streammon", "ml-monitoring"],
        "editable": True,
        "schemaVersion": 39,
        "version": 1,
        "time": {"from": "now-1h", "to": "now"},
        "refresh": "30s",
        "graphTooltip": 1,
        "annotations": {"list": []},
        "templating": {"list": [
            {"type": "datasource", "name": "datasource", "label": "Data source", "query": "prometheus",
             "current": {"text": "Prometheus", "value": "Prometheus"}, "hide": 0},
            _variable("model", "Model", "label_values(streammon_samples_total, model)"),
            _variable("window", "Window", 'label_values(streammon_window_samples{model=~"$model"}, window)'),
        ]},
        "panels": panels,
    }


def queries(board: dict[str, Any]) -> Iterator[str]:
    """Every PromQL expression in the dashboard (panel targets and variable queries)."""
    for panel in board["panels"]:
        for target in panel["targets"]:
            yield str(target["expr"])
    for variable in board["templating"]["list"]:
        if variable["type"] == "query":
            yield str(variable["definition"])


def metric_names(board: dict[str, Any]) -> set[str]:
    """The metric names used by the dashboard's queries."""
    return {name for q in queries(board) for name in re.findall(r"\b(streammon_[a-z_]+)\b", q)}


def render_dashboard() -> str:
    """The dashboard as indented JSON text."""
    return json.dumps(dashboard(), indent=2, ensure_ascii=False) + "\n"
