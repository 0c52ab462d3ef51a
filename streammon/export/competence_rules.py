"""``StreammonIncompetent`` in PromQL: some class recalled worse than random guessing, decided as the process does.

Seed 001: a Hölder mean of the per-class recalls below 1/K means some class is recalled worse than by the
uniformly random classifier. The process (``streammon.findings.alerts``) raises its ``incompetent`` alert when
the minimum recall's whole interval lies below 1/K and holds it while the minimum recall itself stays below 1/K;
the minimum recall's interval is ``[min_c L_c, min_c U_c]`` from per-class Wilson intervals at level
``1 − (1 − confidence)/C`` (Bonferroni over the C classes present; ``streammon.metrics.intervals``). The rule
records the same upper bound from the replicas' summed counters — per class, with ``a = z²/n``,

    ``U = (r + a/2 + √(a·(r(1 − r) + a/4))) / (1 + a)``,  ``z = Φ⁻¹(1 − (1 − confidence)/(2C))``

(the quantile by Abramowitz–Stegun 26.2.23, |error| < 4.5e-4, as the prior-shift rule's) — and fires on
``min_c U_c < 1/K``, so that a minority class whose recall of 0.6 dips below ½ in one window of 90 samples does
not page anyone; once firing, it is held while the minimum recall is below 1/K (``streammon.export.hysteresis``).
Both need evidence: at least ``min_samples_per_class`` samples of every class present to turn on, at least
``hold_samples_per_class`` to stay on.

>>> from streammon.export.rules import RuleSettings
>>> [r["record"] for r in competence_rules(RuleSettings())][-1]
'streammon:min_recall:upper_1h'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streammon.export.hysteresis import held
from streammon.export.shift_rules import quantile_expr

if TYPE_CHECKING:
    from streammon.export.rules import RuleSettings


def competence_rules(s: RuleSettings) -> list[dict[str, str]]:
    """Recording rules: the Bonferroni z per model, and each class's and the minimum recall's Wilson upper bound."""
    w = s.window
    z, a = f"streammon:min_recall_z:threshold_{w}", f"streammon:class_recall_z2n:ratio_{w}"
    recall = f"streammon:class_recall:ratio_{w}"
    upper = f"streammon:class_recall:upper_{w}"
    return [
        {"record": z, "expr": quantile_expr(f"{(1 - s.incompetent_confidence) / 2:.12g} / "
                                            f"streammon:classes_present:count_{w}")},
        {"record": a,
         "expr": f"(1 / (streammon:class_samples:increase_{w} > 0)) * on (model) group_left () ({z} ^ 2)"},
        {"record": upper,
         "expr": f"({recall} + {a} / 2 + sqrt({a} * ({recall} * (1 - {recall}) + {a} / 4))) / (1 + {a})"},
        {"record": f"streammon:min_recall:upper_{w}", "expr": f"min by (model) ({upper})"},
    ]


def incompetent_alert(s: RuleSettings) -> dict[str, Any]:
    """``StreammonIncompetent`` (critical): its value is the minimum recall."""
    w = s.window
    chance = f"(1 / streammon:classes_present:count_{w})"
    below = f"streammon:min_recall:ratio_{w} < on (model) {chance}"
    least = f"min by (model) (streammon:class_samples:increase_{w} > 0)"  # the least counted class present
    confident = f"streammon:min_recall:upper_{w} < on (model) {chance}"
    return {
        "alert": "StreammonIncompetent",
        "expr": held(f"{below} and on (model) {confident} and on (model) {least} >= {s.min_samples_per_class}",
                     f"{below} and on (model) {least} >= {s.hold_samples_per_class}",
                     "StreammonIncompetent", w, "model"),
        "for": s.incompetent_for,
        "keep_firing_for": s.keep_firing_for,
        "labels": {"severity": "critical"},
        "annotations": {
            "summary": "Model {{ $labels.model }} recalls some class worse than random guessing",
            "description": (f"The minimum recall over {w} is {{{{ $value | humanizePercentage }}}}, and its "
                            f"{s.incompetent_confidence:g} upper bound (Wilson, Bonferroni over the classes) is "
                            "below 1/K (Ortigosa-Hernández et al.): some class is recalled worse than by the "
                            f"uniformly random classifier, with at least {s.min_samples_per_class} samples of every "
                            f"class present (once firing, held while the minimum recall is below 1/K with at least "
                            f"{s.hold_samples_per_class}). "
                            "Find the class in the per-class recall panel; roll back to the last good model."),
            "runbook_url": f"{s.runbook}#streammonincompetent",
        },
    }
