"""From a copy of the label-side counts to ``LabelStats`` per window and the two label alerts (pure).

Alerts (conditions, given since-when by the monitor like the others):

- ``label_coverage_low`` — the label pipeline broke. For a timed window, the predictions of its
  buckets that ended at least the typical latency ago (the lifetime median latency) are old
  enough to have their labels; the alert turns on when at least ``MIN_AGED`` of them exist and
  their coverage is below ``COVERAGE_FRACTION`` (one half) of the lifetime coverage, and holds
  until it is back to ``CLEAR_FRACTION`` (three quarters) of it. Windows that are not timed (or
  younger than the typical latency) are not judged.
- ``predicted_mix_shift`` (informational) — the window's predicted-class counts differ from the
  mix the reference implies, by the prior-shift criterion (``LabelStats.mix_shift``: the exact
  test at ``shift_alpha`` and the largest ratio ≥ ``shift_min_ratio``, held at the clear levels,
  as ``prior_shift``). It needs no label at all.

>>> view = LabelView(predictions=(np.array([[6, 4, 0, 0], [0, 0, 0, 0]]),), events=(np.zeros(256, np.int64),),
...                  aged=(None,), repeated=0, typical_latency=float("nan"))
>>> stats, conditions = window_label_stats(view, ("a", "b"), None, None, Policy(), names=("lifetime",))
>>> stats["lifetime"].coverage, conditions
(0.4, [])
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.counts import IntMatrix
from streammon.findings.alerts import AlertKey, Condition, shift_holds
from streammon.findings.distortion import Policy
from streammon.findings.frozen import FrozenMap
from streammon.findings.label_stats import LabelStats, implied_mix, label_stats
from streammon.findings.reference import Reference
from streammon.findings.report import LABEL_COVERAGE_LOW, PREDICTED_MIX_SHIFT, WindowReport

MIN_AGED = 100
COVERAGE_FRACTION = 0.5
CLEAR_FRACTION = 0.75


@dataclass(frozen=True)
class LabelView:
    """Prediction-side counts (K' × K', columns = statuses) and label-event counts (256) of each window and
    then the lifetime, the aged prediction counts of timed windows, repeats, and the typical latency."""

    predictions: tuple[IntMatrix, ...]
    events: tuple[npt.NDArray[np.int64], ...]
    aged: tuple[IntMatrix | None, ...]
    repeated: int
    typical_latency: float


def window_label_stats(view: LabelView, labels: tuple[Hashable, ...], reference: Reference | None,
                       lifetime: IntMatrix | None, policy: Policy, *, names: Sequence[str],
                       active: Collection[AlertKey] = ()) -> tuple[dict[str, LabelStats], list[Condition]]:
    """``LabelStats`` per name (the windows', then ``"lifetime"``) and the label alert conditions (``active``:
    the alerts on now, held at their looser levels)."""
    implied = None
    if reference is not None and lifetime is not None:
        implied = implied_mix(lifetime, reference.aligned(labels))
    k = len(labels)
    life_pred = view.predictions[-1][:k, :4]
    life_coverage = float(life_pred[:, 1].sum() / life_pred.sum()) if life_pred.sum() else math.nan
    stats: dict[str, LabelStats] = {}
    conditions: list[Condition] = []
    for i, name in enumerate(names):
        is_life = i == len(names) - 1
        aged = view.aged[i] if i < len(view.aged) else None
        old = None if aged is None else aged[:k, :4]
        judged = None if old is None else (int(old.sum()), int(old[:, 1].sum()))
        s = label_stats(view.predictions[i], view.events[i], labels, implied, alpha=policy.shift_alpha,
                        min_ratio=policy.shift_min_ratio, repeated=view.repeated if is_life else 0, aged=judged)
        stats[name] = s
        if is_life:
            continue
        if s.mix_shift is not None and shift_holds(s.mix_shift, policy,
                                                   (PREDICTED_MIX_SHIFT, name, "predicted_mix") in active):
            conditions.append((PREDICTED_MIX_SHIFT, name, "predicted_mix",
                               f"the predicted-class mix moved from the mix the reference implies (largest "
                               f"ratio {s.mix_shift.prior_ratio:.3g}, p={s.mix_shift.p_value:.2g}); informational"))
        if judged is not None and not math.isnan(life_coverage):
            n_old, n_lab = judged
            on = (LABEL_COVERAGE_LOW, name, "labels") in active
            if n_old >= MIN_AGED and n_lab / n_old < (CLEAR_FRACTION if on else COVERAGE_FRACTION) * life_coverage:
                conditions.append((LABEL_COVERAGE_LOW, name, "labels",
                                   f"only {n_lab / n_old:.1%} of {n_old} predictions older than the "
                                   f"typical latency ({view.typical_latency:.3g} s) got labels, against "
                                   f"{life_coverage:.1%} over the monitor's life: is the label pipeline broken?"))
    return stats, conditions


def label_reports(windows: Mapping[str, WindowReport], counts_view: Any, view: LabelView, policy: Policy,
                  active: Collection[AlertKey] = ()) -> tuple[dict[str, WindowReport], LabelStats, list[Condition]]:
    """Window reports with ``prediction_counts`` and ``label_stats`` filled in, the lifetime stats, and the
    label alert conditions (``counts_view``: the ``CountsView`` the window reports came from; ``active``: the
    alerts on now)."""
    labels = counts_view.labels
    names = [*windows, "lifetime"]
    stats, conditions = window_label_stats(view, labels, counts_view.reference, counts_view.lifetime, policy,
                                           names=names, active=active)
    out = {}
    k = len(labels)
    for i, (name, w) in enumerate(windows.items()):
        per_class = view.predictions[i][:k, :4].sum(axis=1)
        out[name] = replace(w, prediction_counts=_frozen({c: int(v) for c, v in zip(labels, per_class, strict=True)}),
                            label_stats=stats[name])
    return out, stats["lifetime"], conditions


def _frozen(mapping: dict[Any, Any]) -> Mapping[Any, Any]:
    return FrozenMap(mapping)
