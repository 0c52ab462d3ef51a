"""PromQL recording and alerting rules for the cross-replica view.

Every replica exports lifetime counters per class (``streammon_class_samples_total``,
``streammon_class_correct_total``, ``streammon_class_predicted_total``); these
rules sum their increases over replicas — always ``sum by (...) (increase(...[w]))``,
never ``increase(sum(...))``, which breaks on counter resets — and derive windowed
per-class recall, ACSA, G-mean (``exp(avg(ln ...))``), minimum recall, the class mix,
RRT, the total-variation distance from the reference mix and the prior-shift criterion
(``prior_shift_rules``). Prometheus, Thanos or Mimir are the distributed engine; streammon
builds none of its own.

Alerts: each replica's in-process per-class CUSUM (``streammon_alert{kind="degradation"}``)
flags a class, counted once per replica (``StreammonClassDegraded``); a class's
windowed recall, summed over replicas, fell well below the baseline the exporters
report (``streammon_baseline_recall``, so it works from the first scrape; the long
``baseline`` window only where no exporter has one) with enough labelled evidence
(``StreammonClassRecallDegraded``; once firing, held at half the drop and half the evidence, so that a gate near
the class's expected count per window does not split one drop into many alerts). Both are class-conditional only,
so a pure prior shift cannot fire them. Then: the model is incompetent (minimum recall below 1/K —
seed 001: some class is recalled worse than the uniformly random classifier); the
class set changed; the class mix shifted by the process's own criterion — the largest per-class prior ratio,
and a per-class significance test (``StreammonPriorShift``, informational, confirmed for one window and held
at the clear levels); late labels stopped arriving or the predicted mix moved (``streammon.export.label_rules``);
the predictions moved in a way no class-mix change explains (``streammon.export.estimate_rules``). Every alert
has ``summary``, ``description`` (what to do) and ``runbook_url``; the held ones (``streammon.export.hysteresis``)
turn on at one level and off at a looser one.

``streammon rules`` prints the YAML (its flags set windows, thresholds and ``for:``;
``--profile demo`` suits ``streammon demo``); ``grafana/rules/streammon.rules.yml``
is its checked-in default output, validated by ``promtool check rules`` and
unit-tested with ``promtool test rules``; ``examples/prometheus/streammon.demo.rules.yml``
is the demo profile's.

>>> text = render_rules()
>>> 'record: "streammon:class_recall:ratio_1h"' in text and 'alert: "StreammonIncompetent"' in text
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from streammon.export.competence_rules import competence_rules, incompetent_alert
from streammon.export.durations import milliseconds
from streammon.export.estimate_rules import estimate_alerting_rules, estimate_recording_rules
from streammon.export.hysteresis import held
from streammon.export.label_rules import label_alerting_rules, label_recording_rules
from streammon.export.shift_rules import prior_shift_alert, prior_shift_rules

DURATION_FIELDS = ("window", "baseline", "cusum_for", "degradation_for", "incompetent_for", "class_set_for",
                   "shift_for", "keep_firing_for", "shift_keep_firing_for", "label_coverage_for", "predicted_mix_for",
                   "not_prior_shift_for", "expected_drop_for")
DEGRADED = "streammon:class_degraded:replicas"
REPLICAS = "streammon:replicas:count"
BASELINE = "streammon:class_recall:baseline"


@dataclass(frozen=True)
class RuleSettings:
    """Windows, thresholds and ``for:`` durations of the generated rules.

    ``window`` is the recall window of the cross-replica rules; ``baseline`` the
    long window whose recall stands in for a class's baseline only where no
    replica exports ``streammon_baseline_recall`` yet. ``cusum_replicas`` is how
    many replicas' in-process CUSUM must flag a class. ``runbook`` is the page the
    ``runbook_url`` annotations point into (``#<alert name in lower case>``).

    >>> RuleSettings(window="1 hour")
    Traceback (most recent call last):
    ...
    ValueError: window must be a Prometheus duration like '1h' or '90s', got '1 hour': ...
    """

    window: str = "1h"
    baseline: str = "1d"
    recall_drop: float = 0.15  # alert when a class's recall falls this far below its baseline
    min_class_samples: int = 100  # evidence: labelled samples of that class in the window
    # once firing, StreammonClassRecallDegraded stays on while the recall is still this far below the baseline
    # with this much evidence: a gate at the class's expected count per window opens and shuts at random
    recall_clear_drop: float = 0.075
    hold_class_samples: int = 50
    min_samples_per_class: int = 30  # evidence for incompetence: every class present has this many
    hold_samples_per_class: int = 15  # once firing, StreammonIncompetent stays on with this much evidence
    incompetent_confidence: float = 0.95  # StreammonIncompetent: level of the minimum recall's interval (the Policy's)
    shift_alpha: float = 0.01  # StreammonPriorShift: the significance level (the Policy's shift_alpha)
    shift_min_ratio: float = 1.5  # StreammonPriorShift: the least largest prior ratio (the Policy's shift_min_ratio)
    shift_clear_alpha: float = 0.5  # once firing, it stays on at these looser levels (the Policy's clear levels)
    shift_clear_ratio: float = 1.25
    cusum_replicas: int = 1  # replicas whose in-process CUSUM flags the class
    cusum_for: str = "1m"
    degradation_for: str = "10m"
    incompetent_for: str = "10m"
    class_set_for: str = "5m"
    shift_for: str = "2h"  # two windows: the on-level confirmed on two windows of samples disjoint from the first
    keep_firing_for: str = "1h"  # every alert stays firing this long after its condition ends (hysteresis: the
    # process holds a window alert for `Policy.alert_hold` turnovers of its window, and the rules' window is `window`)
    shift_keep_firing_for: str = "6h"  # StreammonPriorShift's: a 1 % class has ~15 samples in an hour at 1,500 an
    # hour, too few for one window to tell a prior ratio of 1.4 from the clear level 1.25
    runbook: str = "README.md"
    # Late labels (streammon.export.label_rules)
    label_coverage_fraction: float = 0.5  # of the lifetime coverage, among predictions older than the typical latency
    min_aged_predictions: int = 100
    label_coverage_clear_fraction: float = 0.75  # once firing, held below this share (the process's clear level)
    hold_aged_predictions: int = 50  # once firing, held with this many aged predictions
    label_coverage_for: str = "30m"
    predicted_mix_tv: float = 0.1
    predicted_mix_for: str = "15m"
    # Label-free estimate (streammon.export.estimate_rules)
    label_shift_p_value: float = 0.01  # lowest p-value of "only the class mix changed" over the replicas
    not_prior_shift_for: str = "10m"
    expected_drop: float = 0.05  # expected balanced accuracy's upper bound this far below the validation's
    expected_drop_for: str = "15m"

    def __post_init__(self) -> None:
        for name in DURATION_FIELDS:
            value = getattr(self, name)
            try:
                length = milliseconds(value)
            except ValueError as error:
                raise ValueError(f"{name} must be a Prometheus duration like '1h' or '90s', got {value!r}: "
                                 f"{error}") from None
            if name in ("window", "baseline") and length == 0:
                raise ValueError(f"{name} must be a positive Prometheus duration (a range [{value}] holds no "
                                 f"samples), got {value!r}")
        for name in ("recall_drop", "recall_clear_drop", "incompetent_confidence", "shift_alpha", "shift_clear_alpha",
                     "label_coverage_fraction", "label_coverage_clear_fraction", "predicted_mix_tv",
                     "label_shift_p_value", "expected_drop"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
                raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
        ratio = self.shift_min_ratio
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 1 <= ratio < float("inf"):
            raise ValueError(f"shift_min_ratio must be a number >= 1, got {ratio!r}")
        clear = self.shift_clear_ratio
        if isinstance(clear, bool) or not isinstance(clear, (int, float)) or not 1 <= clear <= ratio:
            raise ValueError(f"shift_clear_ratio must be a number in [1, shift_min_ratio = {ratio}], got {clear!r}")
        for name in ("min_class_samples", "min_samples_per_class", "hold_class_samples", "hold_samples_per_class",
                     "cusum_replicas", "min_aged_predictions", "hold_aged_predictions"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        self._check_off_levels()
        if milliseconds(self.window) == milliseconds(self.baseline):
            raise ValueError(f"window and baseline must differ, got {self.window!r} and {self.baseline!r}")
        if not isinstance(self.runbook, str) or not self.runbook or any(c.isspace() for c in self.runbook):
            raise ValueError(f"runbook must be a non-empty URL without spaces, got {self.runbook!r}")

    def _check_off_levels(self) -> None:
        """Each alert's off level (hysteresis) is looser than its on level, or equal to it (no hysteresis)."""
        for off, on, looser in (("shift_clear_alpha", "shift_alpha", "at least"),
                                ("recall_clear_drop", "recall_drop", "at most"),
                                ("hold_class_samples", "min_class_samples", "at most"),
                                ("hold_samples_per_class", "min_samples_per_class", "at most"),
                                ("label_coverage_clear_fraction", "label_coverage_fraction", "at least"),
                                ("hold_aged_predictions", "min_aged_predictions", "at most")):
            low, high = getattr(self, off), getattr(self, on)
            if low < high if looser == "at least" else low > high:
                raise ValueError(f"{off} must be {looser} {on} = {high} (the off level is looser), got {low!r}")


# ``streammon rules --profile NAME``: ``demo`` suits ``streammon demo`` (phases of a minute or less, scraped every
# second or few): one-minute windows, ``for:`` of seconds.
PROFILES: dict[str, RuleSettings] = {
    "default": RuleSettings(),
    "demo": RuleSettings(window="1m", baseline="10m", cusum_for="3s", degradation_for="15s", incompetent_for="15s",
                         class_set_for="5s", shift_for="15s", keep_firing_for="1m", shift_keep_firing_for="1m",
                         label_coverage_for="15s", predicted_mix_for="15s", not_prior_shift_for="15s",
                         expected_drop_for="15s"),
}


def recording_rules(s: RuleSettings) -> list[dict[str, str]]:
    """The recording rules for the window and the baseline, the baseline recall and the CUSUM aggregation."""
    rules: list[dict[str, str]] = []
    for w in (s.window, s.baseline):
        for what in ("samples", "correct", "predicted"):
            rules.append({
                "record": f"streammon:class_{what}:increase_{w}",
                "expr": f"sum by (model, class) (increase(streammon_class_{what}_total[{w}]))",
            })
        rules.append({
            "record": f"streammon:class_recall:ratio_{w}",
            "expr": f"streammon:class_correct:increase_{w} / (streammon:class_samples:increase_{w} > 0)",
        })
    w = s.window
    recall = f"streammon:class_recall:ratio_{w}"
    samples = f"streammon:class_samples:increase_{w}"
    prior = f"streammon:class_prior:ratio_{w}"
    reference = "max by (model, class) (streammon_reference_prior)"
    rules += [
        {"record": f"streammon:acsa:ratio_{w}", "expr": f"avg by (model) ({recall})"},
        {"record": f"streammon:gmean:ratio_{w}", "expr": f"exp(avg by (model) (ln({recall})))"},
        {"record": f"streammon:min_recall:ratio_{w}", "expr": f"min by (model) ({recall})"},
        {"record": f"streammon:classes_present:count_{w}", "expr": f"count by (model) ({recall})"},
        {"record": prior, "expr": f"{samples} / ignoring (class) group_left sum by (model) ({samples})"},
        {"record": f"streammon:rrt:ratio_{w}",
         "expr": f"max by (model) ({samples} > 0) / min by (model) ({samples} > 0)"},
        {"record": f"streammon:prior_shift_tv:ratio_{w}",
         "expr": (f"0.5 * (sum by (model) (abs({prior} - on (model, class) {reference}))"
                  f" + (sum by (model) ({prior} unless on (model, class) streammon_reference_prior)"
                  f" or sum by (model) ({prior}) * 0))")},
        # The baseline each class's recall is compared with: the exporters' own (validation counts or the class's
        # first samples, averaged over replicas) from the first scrape on; the long window only where none exists.
        {"record": BASELINE,
         "expr": (f"avg by (model, class) (streammon_baseline_recall)"
                  f" or on (model, class) streammon:class_recall:ratio_{s.baseline}")},
        # Each replica's in-process CUSUM, one series per (model, class): the number of replicas flagging it.
        # The degradation alert has the single window "stream"; counting by (model, class) drops instance and job,
        # so a replica counts once whatever else it exports.
        {"record": DEGRADED,
         "expr": ('count by (model, class) (label_replace(streammon_alert{kind="degradation"} == 1,'
                  ' "class", "$1", "subject", "(.*)"))')},
        {"record": REPLICAS, "expr": "count by (model) (streammon_samples_total)"},
    ]
    return rules + competence_rules(s) + prior_shift_rules(s)


def _runbook(s: RuleSettings, alert: str) -> str:
    return f"{s.runbook}#{alert.lower()}"


def alerting_rules(s: RuleSettings) -> list[dict[str, Any]]:
    """CUSUM and windowed degradation, incompetence, class-set change and prior-shift alerts."""
    w = s.window
    recall, samples = f"streammon:class_recall:ratio_{w}", f"streammon:class_samples:increase_{w}"
    return [
        {
            "alert": "StreammonClassDegraded",
            "expr": f"{DEGRADED} >= {s.cusum_replicas}",
            "for": s.cusum_for,
            "keep_firing_for": s.keep_firing_for,
            "labels": {"severity": "warning"},
            "annotations": {
                "summary": "Recall of class {{ $labels.class }} of model {{ $labels.model }} dropped (CUSUM)",
                "description": ("The in-process CUSUM of {{ $value }} replica(s) signals that recall of class "
                                "{{ $labels.class }} fell below its baseline. Class-conditional: a class-mix shift "
                                "alone cannot fire this. Check the recall of the class by replica "
                                "(streammon_recall) and recent model, feature or upstream changes; "
                                "retrain or roll back if it persists."),
                "runbook_url": _runbook(s, "StreammonClassDegraded"),
            },
        },
        {
            "alert": "StreammonClassRecallDegraded",
            "expr": held(f"{recall} < on (model, class) ({BASELINE} - {s.recall_drop})"
                         f" and on (model, class) {samples} >= {s.min_class_samples}",
                         f"{recall} < on (model, class) ({BASELINE} - {s.recall_clear_drop})"
                         f" and on (model, class) {samples} >= {s.hold_class_samples}",
                         "StreammonClassRecallDegraded", w, "model, class"),
            "for": s.degradation_for,
            "keep_firing_for": s.keep_firing_for,
            "labels": {"severity": "warning"},
            "annotations": {
                "summary": "Recall of class {{ $labels.class }} of model {{ $labels.model }} degraded",
                "description": (f"Recall over {w}, summed over replicas, is {{{{ $value | humanizePercentage }}}}: "
                                f"more than {s.recall_drop} below the baseline the exporters report (or its "
                                f"{s.baseline} value where none does), with at least {s.min_class_samples} labelled "
                                f"samples of the class; once firing, held while more than {s.recall_clear_drop} below "
                                f"with at least {s.hold_class_samples}. Class-conditional: a class-mix shift alone "
                                "cannot fire this. Compare replicas and recent changes; retrain or roll back if it "
                                "persists."),
                "runbook_url": _runbook(s, "StreammonClassRecallDegraded"),
            },
        },
        incompetent_alert(s),
        {
            "alert": "StreammonClassSetChanged",
            "expr": (f"streammon:classes_present:count_{w}"
                     " != on (model) count by (model) (max by (model, class) (streammon_reference_prior) > 0)"),
            "for": s.class_set_for,
            "keep_firing_for": s.keep_firing_for,
            "labels": {"severity": "info"},
            "annotations": {
                "summary": "Model {{ $labels.model }} sees a different set of classes than its reference",
                "description": ("A class appeared or vanished: indices that violate Condition 2 (AUROC-OVO, "
                                "AUROC-OVA) are not comparable across this change (Type 2 distortion). Check the "
                                "labelling pipeline; if the class is real, retrain with it and a new reference mix."),
                "runbook_url": _runbook(s, "StreammonClassSetChanged"),
            },
        },
        prior_shift_alert(s),
    ]


def rule_groups(settings: RuleSettings | None = None) -> dict[str, Any]:
    """The rule file as a data structure."""
    s = settings or RuleSettings()
    return {"groups": [
        {"name": "streammon.recording", "rules": recording_rules(s)},
        {"name": "streammon.alerts", "rules": alerting_rules(s)},
        {"name": "streammon.labels.recording", "rules": label_recording_rules(s)},
        {"name": "streammon.labels.alerts", "rules": label_alerting_rules(s)},
        {"name": "streammon.estimate.recording", "rules": estimate_recording_rules(s)},
        {"name": "streammon.estimate.alerts", "rules": estimate_alerting_rules(s)},
    ]}


def _yaml(value: Any, indent: int) -> list[str]:
    """A tiny YAML emitter for the rule structure: block mappings and lists, JSON-quoted scalars."""
    pad = "  " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}{key}:")
                lines += _yaml(item, indent + 1)
            else:
                lines.append(f"{pad}{key}: {json.dumps(item, ensure_ascii=False)}")
    elif isinstance(value, list):
        for item in value:
            first, *rest = _yaml(item, indent + 1)
            lines.append(f"{pad}- {first.strip()}")
            lines += rest
    else:
        lines.append(f"{pad}{json.dumps(value, ensure_ascii=False)}")
    return lines


def render_rules(settings: RuleSettings | None = None) -> str:
    """The rule file as YAML text."""
    header = "# Generated by `streammon rules`; do not edit by hand.\n"
    return header + "\n".join(_yaml(rule_groups(settings), 0)) + "\n"
