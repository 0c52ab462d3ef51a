"""The prior-shift criterion in PromQL: ``StreammonPriorShift`` decides as the process does, from the per-class
counters summed over replicas.

The process's criterion (``streammon.findings.shift``; ``docs/explanation/prior-shift.md``) on a window's
true-class counts ``x_c`` (n in all) against the reference priors ``π_c``:

- **effect** — the largest per-class prior ratio ``max_c max(p̂_c/π_c, π_c/p̂_c)`` with ``p̂_c = x_c/n``: here
  exactly (``streammon:prior_ratio:max_<w>``; +Inf for an absent reference class or a class the reference lacks);
- **significance** — the process uses each class's exact two-sided binomial p-value and Bonferroni over the
  classes (m = 1 for two classes, m = K otherwise). PromQL has no binomial tail, so the rule uses each class's
  normal approximation with continuity correction, ``z_c = (|x_c − nπ_c| − ½) / √(nπ_c(1 − π_c))``, against the
  Bonferroni-corrected quantile ``z* = Φ⁻¹(1 − α/(2m))`` (Abramowitz–Stegun 26.2.23, |error| < 4.5e-4; PromQL
  has no inverse normal either): significant when ``max_c z_c > z*``
  (``streammon:prior_shift_z:max_<w>`` against ``streammon:prior_shift_z:threshold``).

Where every expected count ``nπ_c`` is large (≳ 10), the corrected normal tail is within a few per cent of the
exact one and the two decide alike except for windows whose p-value sits at α itself. Where an expected count is
small (a 1 % class in a window of a few hundred samples), the normal tail of a rare class's excess is too thin:
the rule can call significant what the exact test does not (it may fire early on a small window), and a deficit
of a rare class can never reach z* (fewer than z*² expected samples: the rule cannot see a vanished 1 % class
below ~700 samples, where the process's exact test can). Keep the rule's ``window`` long enough for the
expected counts of the rarest class to reach 10 or more.

Hysteresis, so that one episode is one alert: ``for:`` (``RuleSettings.shift_for``) is two windows, two hours,
so the on-level must hold on the window's samples at t and on the disjoint ones at t + 1h and t + 2h — a
confirmation on fresh samples, where a 15-minute ``for:`` confirmed on windows three-quarters shared (on the
90-day scenario, two false alerts in the 14 days before the mix moved); once firing, the alert is held at the
process's clear levels (``shift_clear_ratio``, ``shift_clear_alpha``) read from its own ``ALERTS`` series
(``streammon.export.hysteresis``);
and it keeps firing for ``shift_keep_firing_for`` (six hours) after those fail: at a 1 % class and 1,500 samples an
hour the window holds ~15 samples of the class, so an hour's prior ratio has a standard deviation of ~0.3 and one
window cannot tell the ramp's 1.4 from the clear level 1.25 (with one hour the alert lapsed and came back twice in
the scenario's ramp). The process holds its alert at the same levels and for three turnovers of its window
(``Policy.alert_hold``; then until its pooled samples show the mix back), and confirms it across two
(``Policy.alert_confirm``), as ``for:`` does here.

>>> from streammon.export.rules import RuleSettings
>>> [r["record"] for r in prior_shift_rules(RuleSettings())][-2:]
['streammon:prior_shift_z:clear_threshold', 'streammon:prior_shift_z:max_1h']
>>> round(normal_quantile(0.005), 3)  # Φ⁻¹(0.995) = 2.576
2.576
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from streammon.export.hysteresis import held

if TYPE_CHECKING:
    from streammon.export.rules import RuleSettings

# Abramowitz & Stegun 26.2.23: Φ⁻¹(1 − q) ≈ t − (c0 + c1 t + c2 t²)/(1 + d1 t + d2 t² + d3 t³), t = √(−2 ln q)
C0, C1, C2 = 2.515517, 0.802853, 0.010328
D1, D2, D3 = 1.432788, 0.189269, 0.001308
PRIOR = "streammon:reference_prior:ratio"
BONFERRONI = "streammon:prior_shift_bonferroni:count"
THRESHOLD = "streammon:prior_shift_z:threshold"
CLEAR_THRESHOLD = "streammon:prior_shift_z:clear_threshold"


def normal_quantile(q: float) -> float:
    """``Φ⁻¹(1 − q)`` for 0 < q ≤ ½ by the formula the rule evaluates in PromQL (absolute error < 4.5e-4)."""
    t = math.sqrt(-2 * math.log(q))
    return t - (C0 + C1 * t + C2 * t * t) / (1 + D1 * t + D2 * t * t + D3 * t**3)


def prior_shift_rules(s: RuleSettings) -> list[dict[str, str]]:
    """The recording rules of the criterion for the rule window (after ``streammon:class_samples:increase_<w>``)."""
    w = s.window
    counts = f"streammon:class_count:increase_{w}"
    share = f"streammon:class_share:ratio_{w}"
    expected = f"streammon:class_expected:increase_{w}"
    t = "streammon:prior_shift_t:ratio"
    new_class = f"(({counts} unless on (model, class) {PRIOR}) > 0) * +Inf"
    return [
        # the reference's classes with a positive prior, one series per (model, class) whatever the replicas
        {"record": PRIOR, "expr": "max by (model, class) (streammon_reference_prior) > 0"},
        # every class counted in the window or in the reference (0 where the reference has it and no replica
        # counted it: an absent reference class)
        {"record": counts,
         "expr": f"streammon:class_samples:increase_{w} or on (model, class) ({PRIOR} * 0)"},
        {"record": share, "expr": f"{counts} / ignoring (class) group_left sum by (model) ({counts})"},
        {"record": expected, "expr": f"{PRIOR} * ignoring (class) group_left sum by (model) ({counts})"},
        {"record": f"streammon:prior_ratio:max_{w}",
         "expr": (f"max by (model) ((({share} / {PRIOR}) >= ({PRIOR} / {share})) or ({PRIOR} / {share})"
                  f" or {new_class})")},
        {"record": BONFERRONI, "expr": f"count by (model) ({PRIOR}) - (count by (model) ({PRIOR}) == bool 2)"},
        {"record": t, "expr": f"sqrt(-2 * ln({s.shift_alpha} / (2 * {BONFERRONI})))"},
        {"record": THRESHOLD,
         "expr": f"{t} - ({C0} + {C1} * {t} + {C2} * {t} ^ 2) / (1 + {D1} * {t} + {D2} * {t} ^ 2 + {D3} * {t} ^ 3)"},
        {"record": CLEAR_THRESHOLD, "expr": quantile_expr(f"{s.shift_clear_alpha} / (2 * {BONFERRONI})")},
        {"record": f"streammon:prior_shift_z:max_{w}",
         "expr": (f"max by (model) ((abs({counts} - {expected}) - 0.5) / sqrt({expected} * (1 - {PRIOR}))"
                  f" or {new_class})")},
    ]


def quantile_expr(q: str) -> str:
    """PromQL for ``Φ⁻¹(1 − q)`` (``normal_quantile``), ``q`` an expression at most ½."""
    t = f"sqrt(-2 * ln({q}))"
    return f"{t} - ({C0} + {C1} * {t} + {C2} * {t} ^ 2) / (1 + {D1} * {t} + {D2} * {t} ^ 2 + {D3} * {t} ^ 3)"


def prior_shift_alert(s: RuleSettings) -> dict[str, Any]:
    """``StreammonPriorShift``: the ratio at least ``shift_min_ratio`` and the largest z above the threshold for
    ``shift_for`` (the window); once firing, held while the ratio is at least ``shift_clear_ratio`` and the largest
    z above the clear threshold (the process's hysteresis levels: the rule reads its own ``ALERTS`` series over the
    window)."""
    w = s.window
    on = (f"streammon:prior_ratio:max_{w} >= {s.shift_min_ratio}"
          f" and on (model) (streammon:prior_shift_z:max_{w} > on (model) {THRESHOLD})")
    hold = (f"streammon:prior_ratio:max_{w} >= {s.shift_clear_ratio}"
            f" and on (model) (streammon:prior_shift_z:max_{w} > on (model) {CLEAR_THRESHOLD})")
    return {
        "alert": "StreammonPriorShift",
        "expr": held(on, hold, "StreammonPriorShift", w, "model"),
        "for": s.shift_for,
        "keep_firing_for": s.shift_keep_firing_for,
        "labels": {"severity": "info"},
        "annotations": {
            "summary": "Class mix of model {{ $labels.model }} moved away from its reference",
            "description": ("Over " + w + " summed over replicas, a class's share is {{ printf \"%.3g\" $value }} "
                            f"times (or 1/that) its reference prior, at least {s.shift_min_ratio}, and beyond chance "
                            f"at level {s.shift_alpha} (Bonferroni over the classes). Informational: trust "
                            "Condition-1-invariant scores, not precision, F1, accuracy or MCC; no action unless a "
                            "degradation alert fires too."),
            "runbook_url": f"{s.runbook}#streammonpriorshift",
        },
    }
