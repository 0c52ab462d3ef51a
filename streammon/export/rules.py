"""PromQL recording and alerting rules for the cross-replica view.

Every replica exports lifetime counters per class (``streammon_class_samples_total``,
``streammon_class_correct_total``, ``streammon_class_predicted_total``); these
rules sum their increases over replicas — always ``sum by (...) (increase(...[w]))``,
never ``increase(sum(...))``, which breaks on counter resets — and derive windowed
per-class recall, ACSA, G-mean (``exp(avg(ln ...))``), minimum recall, the class mix,
RRT and the total-variation distance from the reference mix. Prometheus, Thanos
or Mimir are the distributed engine; streammon builds none of its own.

Alerts: a class's recall fell well below its baseline with enough labelled
evidence (class-conditional only, so a pure prior shift cannot fire it); the
model is incompetent (minimum recall below 1/K — seed 001: some class is
recalled worse than the uniformly random classifier); the class set changed; the
mix moved far from the reference (informational).

``streammon rules`` prints the YAML; ``grafana/rules/streammon.rules.yml`` is its
checked-in output, validated by ``promtool check rules`` and unit-tested with
``promtool test rules``.

>>> text = render_rules()
>>> 'record: "streammon:class_recall:ratio_1h"' in text and 'alert: "StreammonIncompetent"' in text
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RuleSettings:
    """Windows and thresholds of the generated rules."""

    window: str = "1h"
    baseline: str = "1d"
    recall_drop: float = 0.15  # alert when a class's recall falls this far below its baseline
    min_class_samples: int = 100  # evidence: labelled samples of that class in the window
    min_samples_per_class: int = 30  # evidence for incompetence: every class present has this many
    prior_shift_tv: float = 0.1  # informational alert threshold on total variation distance
    degradation_for: str = "10m"
    shift_for: str = "15m"


def recording_rules(s: RuleSettings) -> list[dict[str, str]]:
    """The recording rules for the window and the baseline."""
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
    ]
    return rules


def alerting_rules(s: RuleSettings) -> list[dict[str, Any]]:
    """Degradation, incompetence, class-set change and prior-shift alerts."""
    w, b = s.window, s.baseline
    recall, samples = f"streammon:class_recall:ratio_{w}", f"streammon:class_samples:increase_{w}"
    return [
        {
            "alert": "StreammonClassRecallDegraded",
            "expr": (f"{recall} < on (model, class) (streammon:class_recall:ratio_{b} - {s.recall_drop})"
                     f" and on (model, class) {samples} >= {s.min_class_samples}"),
            "for": s.degradation_for,
            "labels": {"severity": "warning"},
            "annotations": {
                "summary": "Recall of class {{ $labels.class }} of model {{ $labels.model }} degraded",
                "description": (f"Recall over {w} is more than {s.recall_drop} below its {b} baseline, with at least "
                                f"{s.min_class_samples} labelled samples of the class. Class-conditional: a class-mix "
                                "shift alone cannot fire this."),
            },
        },
        {
            "alert": "StreammonIncompetent",
            "expr": (f"streammon:min_recall:ratio_{w} < on (model) (1 / streammon:classes_present:count_{w})"
                     f" and on (model) min by (model) ({samples} > 0) >= {s.min_samples_per_class}"),
            "for": s.degradation_for,
            "labels": {"severity": "critical"},
            "annotations": {
                "summary": "Model {{ $labels.model }} recalls some class worse than random guessing",
                "description": (f"The minimum recall over {w} is below 1/K (seed 001): some class is recalled worse "
                                "than by the uniformly random classifier."),
            },
        },
        {
            "alert": "StreammonClassSetChanged",
            "expr": (f"streammon:classes_present:count_{w}"
                     " != on (model) count by (model) (max by (model, class) (streammon_reference_prior) > 0)"),
            "for": "5m",
            "labels": {"severity": "info"},
            "annotations": {
                "summary": "Model {{ $labels.model }} sees a different set of classes than its reference",
                "description": ("A class appeared or vanished: indices that violate Condition 2 (AUROC-OVO, "
                                "AUROC-OVA) are not comparable across this change (Type 2 distortion)."),
            },
        },
        {
            "alert": "StreammonPriorShift",
            "expr": f"streammon:prior_shift_tv:ratio_{w} > {s.prior_shift_tv}",
            "for": s.shift_for,
            "labels": {"severity": "info"},
            "annotations": {
                "summary": "Class mix of model {{ $labels.model }} moved away from its reference",
                "description": ("Total variation distance from the reference mix is above "
                                f"{s.prior_shift_tv}. Informational: trust Condition-1-invariant scores, not "
                                "precision, F1, accuracy or MCC."),
            },
        },
    ]


def rule_groups(settings: RuleSettings | None = None) -> dict[str, Any]:
    """The rule file as a data structure."""
    s = settings or RuleSettings()
    return {"groups": [
        {"name": "streammon.recording", "rules": recording_rules(s)},
        {"name": "streammon.alerts", "rules": alerting_rules(s)},
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
