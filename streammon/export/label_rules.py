"""PromQL rules for predictions and late labels (the families of ``streammon.export.label_families``).

Recording, summed over replicas like the other rules (``sum by (...) (increase(...))``):
the windowed predicted-class mix, the mix the reference implies (averaged over replicas),
their total-variation distance, label latency p50/p90/p99 from the histogram, the lifetime
coverage and the coverage of the timed windows' predictions older than the typical latency.

Alerts:

- ``StreammonLabelCoverageLow`` (warning) — the label pipeline broke: among a timed window's
  predictions older than the typical label latency (at least ``min_aged_predictions`` over the
  replicas), the share that got labels is below ``label_coverage_fraction`` (default one half)
  of the lifetime coverage. The same condition as the in-report ``label_coverage_low``, on the
  replicas' summed counts, with its hysteresis: once firing, held while the share is below
  ``label_coverage_clear_fraction`` (0.75, the process's clear level) with at least ``hold_aged_predictions``
  (50) aged predictions (``streammon.export.hysteresis``).
- ``StreammonPredictedMixShift`` (info) — the predicted-class mix over the window moved from the
  mix the reference implies by more than ``predicted_mix_tv`` (total variation). No label is
  needed; informational, like ``StreammonPriorShift``.

>>> from streammon.export.rules import RuleSettings
>>> [r["alert"] for r in label_alerting_rules(RuleSettings())]
['StreammonLabelCoverageLow', 'StreammonPredictedMixShift']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streammon.export.hysteresis import held

if TYPE_CHECKING:
    from streammon.export.rules import RuleSettings

LIFETIME_COVERAGE = "streammon:label_coverage:ratio"
AGED_COVERAGE = "streammon:aged_label_coverage:ratio"
AGED = "streammon:aged_predictions:sum"
IMPLIED = "streammon:implied_mix:ratio"


def label_recording_rules(s: RuleSettings) -> list[dict[str, str]]:
    """Predicted and implied mix, their distance, latency quantiles, lifetime and aged coverage."""
    w = s.window
    predictions = f"streammon:predictions:increase_{w}"
    mix = f"streammon:predicted_mix:ratio_{w}"
    rules = [
        {"record": predictions, "expr": f"sum by (model, class) (increase(streammon_predictions_total[{w}]))"},
        {"record": mix,
         "expr": f"{predictions} / ignoring (class) group_left () (sum by (model) ({predictions}) > 0)"},
        {"record": IMPLIED, "expr": "avg by (model, class) (streammon_implied_prior)"},
        {"record": f"streammon:predicted_mix_tv:ratio_{w}",
         "expr": f"0.5 * sum by (model) (abs({mix} - on (model, class) {IMPLIED}))"},
    ]
    for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        rules.append({"record": f"streammon:label_latency_seconds:{name}_{w}",
                      "expr": (f"histogram_quantile({q}, sum by (model, le) "
                               f"(rate(streammon_label_latency_seconds_bucket[{w}])))")})
    rules += [
        {"record": LIFETIME_COVERAGE,
         "expr": ("sum by (model) (streammon_label_joined_total)"
                  " / (sum by (model) (streammon_predictions_total) > 0)")},
        {"record": AGED, "expr": "sum by (model, window) (streammon_aged_predictions)"},
        {"record": AGED_COVERAGE,
         "expr": f"sum by (model, window) (streammon_aged_labelled_predictions) / ({AGED} > 0)"},
    ]
    return rules


def label_alerting_rules(s: RuleSettings) -> list[dict[str, Any]]:
    """``StreammonLabelCoverageLow`` and ``StreammonPredictedMixShift``."""
    w = s.window
    runbook = s.runbook
    return [
        {
            "alert": "StreammonLabelCoverageLow",
            "expr": held(f"{AGED_COVERAGE} < on (model) group_left () "
                         f"({s.label_coverage_fraction} * {LIFETIME_COVERAGE})"
                         f" and on (model, window) {AGED} >= {s.min_aged_predictions}",
                         f"{AGED_COVERAGE} < on (model) group_left () "
                         f"({s.label_coverage_clear_fraction} * {LIFETIME_COVERAGE})"
                         f" and on (model, window) {AGED} >= {s.hold_aged_predictions}",
                         "StreammonLabelCoverageLow", w, "model, window"),
            "for": s.label_coverage_for,
            "keep_firing_for": s.keep_firing_for,
            "labels": {"severity": "warning"},
            "annotations": {
                "summary": "Labels of model {{ $labels.model }} stopped arriving ({{ $labels.window }})",
                "description": ("Only {{ $value | humanizePercentage }} of the predictions older than the typical "
                                f"label latency got their label: below {s.label_coverage_fraction} of the lifetime "
                                f"coverage, with at least {s.min_aged_predictions} such predictions over the replicas "
                                f"(once firing, held below {s.label_coverage_clear_fraction} with at least "
                                f"{s.hold_aged_predictions}). "
                                "The label pipeline (chargebacks, reviews, the join key) is probably broken: "
                                "labelled scores now describe an ever smaller, older subset. Check the label "
                                "source and streammon_label_orphans_total (keys that do not match)."),
                "runbook_url": f"{runbook}#streammonlabelcoveragelow",
            },
        },
        {
            "alert": "StreammonPredictedMixShift",
            "expr": f"streammon:predicted_mix_tv:ratio_{w} > {s.predicted_mix_tv}",
            "for": s.predicted_mix_for,
            "keep_firing_for": s.keep_firing_for,
            "labels": {"severity": "info"},
            "annotations": {
                "summary": "Predicted-class mix of model {{ $labels.model }} moved from what the reference implies",
                "description": ("Total variation distance between the predicted-class mix and the mix the reference "
                                f"implies is {{{{ printf \"%.3f\" $value }}}}, above {s.predicted_mix_tv}, over {w}. "
                                "Known before any label: production's class mix moved, or the model's behaviour did. "
                                "Informational; watch the recall alerts once labels arrive."),
                "runbook_url": f"{runbook}#streammonpredictedmixshift",
            },
        },
    ]
