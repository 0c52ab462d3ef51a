"""``streammon rules``: the flags that set the generated rules' windows, thresholds and ``for:`` durations."""

from __future__ import annotations

import argparse

from streammon.export.rules import PROFILES

RULE_FLAGS: dict[str, tuple[str, type, str]] = {
    "window": ("--window", str, "recall window of the cross-replica rules (default 1h; demo 1m)"),
    "baseline": ("--baseline-window", str,
                 "long window standing in for a class's baseline where no exporter reports one (default 1d)"),
    "recall_drop": ("--recall-drop", float, "StreammonClassRecallDegraded: drop below the baseline (default 0.15)"),
    "min_class_samples": ("--min-class-samples", int,
                          "StreammonClassRecallDegraded: labelled samples of the class in the window (default 100)"),
    "recall_clear_drop": ("--recall-clear-drop", float,
                          "StreammonClassRecallDegraded, once firing, stays on while recall is this far below the "
                          "baseline (default 0.075)"),
    "hold_class_samples": ("--hold-class-samples", int,
                           "StreammonClassRecallDegraded, once firing, stays on with this many samples of the class "
                           "in the window (default 50)"),
    "min_samples_per_class": ("--min-samples-per-class", int,
                              "StreammonIncompetent: samples of every present class in the window (default 30)"),
    "hold_samples_per_class": ("--hold-samples-per-class", int,
                               "StreammonIncompetent, once firing, stays on with this many samples of every present "
                               "class (default 15)"),
    "incompetent_confidence": ("--incompetent-confidence", float,
                               "StreammonIncompetent: level of the minimum recall's interval, whose upper bound must "
                               "be below 1/K (default 0.95, the Policy's confidence)"),
    "shift_alpha": ("--shift-alpha", float, "StreammonPriorShift: significance level (default 0.01)"),
    "shift_min_ratio": ("--shift-min-ratio", float,
                        "StreammonPriorShift: least largest per-class prior ratio (default 1.5)"),
    "shift_clear_alpha": ("--shift-clear-alpha", float,
                          "StreammonPriorShift, once firing, stays on while beyond chance at this level (default 0.5)"),
    "shift_clear_ratio": ("--shift-clear-ratio", float,
                          "StreammonPriorShift, once firing, stays on while the ratio is at least this (default 1.25)"),
    "cusum_replicas": ("--cusum-replicas", int,
                       "StreammonClassDegraded: replicas whose in-process CUSUM flags the class (default 1)"),
    "cusum_for": ("--cusum-for", str, "for: of StreammonClassDegraded (default 1m; demo 3s)"),
    "degradation_for": ("--degradation-for", str, "for: of StreammonClassRecallDegraded (default 10m; demo 15s)"),
    "incompetent_for": ("--incompetent-for", str, "for: of StreammonIncompetent (default 10m; demo 15s)"),
    "class_set_for": ("--class-set-for", str, "for: of StreammonClassSetChanged (default 5m; demo 5s)"),
    "shift_for": ("--shift-for", str, "for: of StreammonPriorShift (default 2h, two windows; demo 15s)"),
    "keep_firing_for": ("--keep-firing-for", str,
                        "keep_firing_for: of every alert, its hysteresis (default 1h, the window; demo 1m)"),
    "shift_keep_firing_for": ("--shift-keep-firing-for", str,
                              "keep_firing_for: of StreammonPriorShift, its hold after the clear levels fail "
                              "(default 6h; demo 1m)"),
    "label_coverage_fraction": ("--label-coverage-fraction", float,
                                "StreammonLabelCoverageLow: aged coverage below this share of the lifetime's (0.5)"),
    "min_aged_predictions": ("--min-aged-predictions", int,
                             "StreammonLabelCoverageLow: predictions older than the typical latency (default 100)"),
    "label_coverage_clear_fraction": ("--label-coverage-clear-fraction", float,
                                      "StreammonLabelCoverageLow, once firing, stays on below this share of the "
                                      "lifetime's (0.75)"),
    "hold_aged_predictions": ("--hold-aged-predictions", int,
                              "StreammonLabelCoverageLow, once firing, stays on with this many aged predictions (50)"),
    "label_coverage_for": ("--label-coverage-for", str, "for: of StreammonLabelCoverageLow (default 30m; demo 15s)"),
    "predicted_mix_tv": ("--predicted-mix-tv", float,
                         "StreammonPredictedMixShift: total variation threshold (default 0.1)"),
    "predicted_mix_for": ("--predicted-mix-for", str, "for: of StreammonPredictedMixShift (default 15m; demo 15s)"),
    "label_shift_p_value": ("--label-shift-p-value", float,
                            "StreammonNotPriorShift: lowest label-shift p-value over the replicas (default 0.01)"),
    "not_prior_shift_for": ("--not-prior-shift-for", str, "for: of StreammonNotPriorShift (default 10m; demo 15s)"),
    "expected_drop": ("--expected-drop", float,
                      "StreammonExpectedPerformanceDrop: expected balanced accuracy's upper bound this far below "
                      "the validation's (default 0.05)"),
    "expected_drop_for": ("--expected-drop-for", str,
                          "for: of StreammonExpectedPerformanceDrop (default 15m; demo 15s)"),
    "runbook": ("--runbook", str, "page the runbook_url annotations point into, + '#<alert name>' (default README.md)"),
}


def add_rule_flags(parser: argparse.ArgumentParser) -> None:
    """``--profile`` and one flag per ``RuleSettings`` field (durations are Prometheus durations: 90s, 1h, 1d)."""
    parser.add_argument("--profile", choices=sorted(PROFILES), default="default",
                        help="starting values: default (production) or demo (for `streammon demo`)")
    for field, (flag, kind, text) in RULE_FLAGS.items():
        metavar = {str: "DURATION", float: "X", int: "N"}[kind] if field != "runbook" else "URL"
        parser.add_argument(flag, dest=field, type=kind, default=None, metavar=metavar, help=text)


