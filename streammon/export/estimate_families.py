"""Prometheus families of the label-free estimate (``WindowReport.estimate``, ``expected``): early Type 1 warnings.

Per window holding predictions and a usable baseline (``streammon.findings.expected``):

- ``streammon_estimated_prior{model,window,class,bound}`` — the estimated class mix from the
  predictions alone, ``bound`` ``estimate``, ``lower`` or ``upper`` (the report's confidence);
- ``streammon_estimated_rrt{model,window}`` — the RRT of the estimated mix;
- ``streammon_estimate_from_scores{model,window}`` — 1 when the mix was estimated from the scores (EM after
  BCTS, ``method == "em"``), 0 when from the decisions (the hard-label estimate: no scores, no ``Validation``, or
  at K > 2 a window of more than 10,000 scored predictions; the report's ``estimate.reason`` says why) — so a
  dashboard can tell an empty ``streammon_expected_performance`` panel from a missing estimate;
- ``streammon_label_shift_p_value{model,window}`` — p-value of "only the class mix changed"
  (the ``not_prior_shift`` alert holds below the policy's ``shift_alpha``);
- ``streammon_expected_score{model,window,metric}`` and ``streammon_expected_distortion{...}`` —
  each distortion-prone (Condition-1-violating) score's expected value at the estimated mix with
  the model unchanged, and that minus its value at the reference mix;
- ``streammon_expected_performance{model,window,metric,bound}`` — only for an estimate with scores
  (``method == "em"``: ``Monitor(baseline=streammon.Validation(...))``; binary, or K > 2 in a window of at most
  10,000 scored predictions — ``streammon.findings.score_estimate``): every confusion metric that applies,
  ``roc_auc`` and ``average_precision`` (K > 2: macro one-vs-rest) expected without labels from the
  mix-adjusted posteriors, ``bound`` ``estimate``, ``lower`` or ``upper`` (over the mix's interval), and
  ``validation`` for the confusion metrics of the validation set itself (what ``StreammonExpectedPerformanceDrop``
  compares with).

Every family is emitted on every scrape (empty without predictions), as ``describe`` lists it.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily

from streammon.export.sink import Sink
from streammon.findings.report import Report
from streammon.metrics import catalog

_WINDOW = ["model", "window"]
FAMILIES: dict[str, tuple[list[str], str]] = {
    "streammon_estimated_prior": ([*_WINDOW, "class", "bound"],
                                  "Class mix estimated from the window's predictions alone (estimate/lower/upper)."),
    "streammon_estimated_rrt": (_WINDOW, "RRT of the class mix estimated from the predictions."),
    "streammon_estimate_from_scores": (_WINDOW, "1: the class mix was estimated from the scores (EM); 0: from the "
                                                "decisions (the hard-label estimate; the report says why)."),
    "streammon_label_shift_p_value": (_WINDOW, "P-value of 'only the class mix changed' (small: the model or "
                                               "its inputs changed)."),
    "streammon_expected_score": ([*_WINDOW, "metric"], "Distortion-prone score expected at the estimated mix "
                                                       "with the model unchanged."),
    "streammon_expected_distortion": ([*_WINDOW, "metric"], "Expected score minus its value at the reference mix "
                                                            "(expected Type 1 distortion)."),
    "streammon_expected_performance": ([*_WINDOW, "metric", "bound"],
                                       "Metric expected without labels from the scores' mix-adjusted posteriors "
                                       "(estimate/lower/upper over the mix's interval; validation: the validation "
                                       "set's own value)."),
}


def empty_families() -> Iterator[GaugeMetricFamily]:
    """The families with no samples (for a collector's ``describe``)."""
    for name, (labels, text) in FAMILIES.items():
        yield GaugeMetricFamily(name, text, labels=labels)


def add_estimate_families(sink: Sink, model: str, report: Report) -> None:
    """Add one model's estimate families."""
    add = sink.add
    for w in report.windows.values():
        e = w.estimate
        if e is None:
            continue
        key = [model, w.name]
        for label in e.priors:
            for bound, values in (("estimate", e.priors), ("lower", e.lower), ("upper", e.upper)):
                add("streammon_estimated_prior", [*key, str(label), bound], values[label])
        add("streammon_estimated_rrt", key, e.rrt)
        add("streammon_estimate_from_scores", key, 1.0 if e.method == "em" else 0.0)
        add("streammon_label_shift_p_value", key, e.p_value)
        table = catalog()
        for metric, value in w.expected.items():
            if metric in table and not table[metric].condition1:
                add("streammon_expected_score", [*key, metric], value)
                add("streammon_expected_distortion", [*key, metric], w.expected_distortion[metric])
        if e.method != "em":
            continue
        for metric, value in w.expected.items():
            for bound, v in (("estimate", value), ("lower", e.expected_lower.get(metric)),
                             ("upper", e.expected_upper.get(metric)), ("validation", e.validation_scores.get(metric))):
                if v is not None:
                    add("streammon_expected_performance", [*key, metric, bound], v)
