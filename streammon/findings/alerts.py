"""Which alert conditions hold now (pure); the monitor adds since-when.

Window alerts are read off a ``WindowReport``; degradation alerts come from the
per-class detectors of ``detect``, which see only class-conditional evidence.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping

from streammon.findings.distortion import Policy
from streammon.findings.reference import Reference
from streammon.findings.report import CLASS_SET_CHANGE, INCOMPETENT, PRIOR_SHIFT, WindowReport

# The Hölder scores that have intervals; an incompetence alert needs the whole interval below 1/K.
HOLDER_WITH_INTERVALS = ("min_recall", "gmean", "acsa")

Condition = tuple[str, str, str, str]  # kind, window, subject, reason


def window_conditions(w: WindowReport, reference: Reference | None, *,
                      alpha: float = Policy.shift_alpha) -> list[Condition]:
    """Prior shift, class-set change and incompetence conditions of one window.

    A class-set change is a class present that the reference lacks (it cannot appear by chance), or a reference
    class absent where chance alone would hardly leave it out: ``n`` samples at the reference mix hold none of a
    class of prior ``π`` with probability ``(1 − π)ⁿ``, and the class counts as lost when that is below ``alpha``
    (the policy's ``shift_alpha``). Without that test an hourly window of 50 samples, where a 5 % class is missing
    one hour in thirteen, raised and cleared the alert all year. The window's Type 2 flags still say whenever
    the classes present differ (its numbers are not comparable then, whatever the cause)."""
    out: list[Condition] = []
    if w.n == 0:
        return out
    if w.prior_shift is not None and w.prior_shift.shifted:
        out.append((PRIOR_SHIFT, w.name, "class_mix",
                    f"class mix moved from the reference: JS {w.prior_shift.js:.3f} bits, "
                    f"TV {w.prior_shift.tv:.3f}, p = {w.prior_shift.p_value:.2g} (RRT {w.rrt:.3g} vs IR {w.ir:.3g})"))
    if reference is not None:
        expected = reference.expected
        present = set(w.present)
        # (Mutation testing: `<=` for `<` differs only where (1 − π)ⁿ equals alpha exactly: equivalent in practice.)
        lost = {c for c in expected - present if (1.0 - reference.priors[c]) ** w.n < alpha}
        if present - expected or lost:
            change = sorted(f"+{c}" for c in present - expected) + sorted(f"-{c}" for c in lost)
            out.append((CLASS_SET_CHANGE, w.name, ",".join(change),
                        f"{len(present)} classes present instead of the reference's {len(expected)} "
                        f"({', '.join(change)}): AUROC-OVO/OVA are not comparable across this change"))
    k = len(w.present)
    for metric in HOLDER_WITH_INTERVALS:
        # incompetent (seed 001): below the random classifier's 1/K. The interval is read only then: a report
        # computes intervals when first read.
        if k < 2 or not w.scores[metric] < 1 / k or w.competitiveness.get(metric) != "incompetent":
            continue
        high = w.intervals[metric][1]
        if not math.isnan(high) and high < 1 / k:
            out.append((INCOMPETENT, w.name, metric,
                        f"{metric} = {w.scores[metric]:.3f} and its interval up to {high:.3f} lie below 1/K = "
                        f"{1 / k:.3f}: some class is recalled worse than random guessing (Ortigosa-Hernández et al.)"))
    return out


def degradation_reason(label: Hashable, baseline: float, change_at: int, recall: float) -> str:
    """Why a degradation alert is on."""
    return (f"recall of {label!r} fell below its baseline {baseline:.3f}: about {recall:.3f} since sample "
            f"{change_at} (CUSUM bank on the class's own samples; the mix plays no part)")


def active_since(
    previous: Mapping[tuple[str, str, str], tuple[int, float]],
    conditions: list[Condition],
    sample: int,
    time: float,
) -> dict[tuple[str, str, str], tuple[int, float]]:
    """Carry over since-when for conditions still on; start it now for new ones."""
    return {
        (kind, window, subject): previous.get((kind, window, subject), (sample, time))
        for kind, window, subject, _ in conditions
    }
