"""Distortion flags: which scores not to trust in a window, by how much, and why.

Thin: reads the catalog's Condition 1/2/3 facts and the window's numbers.

- **Type 1** — the metric violates Condition 1, its measured distortion
  ``|f − f_π|`` exceeds ``type1_tolerance`` (default 0.01, in the metric's own
  units), **and** the window's class mix differs from the reference beyond
  sampling noise (the exact test of ``shift`` rejects at ``shift_alpha``).
  Without the last condition a small window at the reference mix would flag
  precision for the few samples its mix is off by chance. A Condition-1 metric
  is never Type-1-flagged.
- **Type 2** — the number of classes present differs from the reference's and
  the metric violates Condition 2 (seed 004: AUROC-OVO, AUROC-OVA). The
  magnitude is how far the metric's lower bound moved.
- **Condition 3** — a present class's recall is at most ``collapse_recall``
  (default 0.05) while another class is present, and the metric is a mean that
  violates Condition 3 (G-mean, H-mean, minimum recall, Hölder p ≤ 0). The
  magnitude is the same index over the other classes minus the index.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from streammon.findings.frozen import FrozenMap
from streammon.findings.report import CONDITION3, TYPE1, TYPE2, Flag
from streammon.metrics import Confusion, spec

_NO_PARAMS: Mapping[str, Any] = FrozenMap(noun="parameter")
DEFAULT_METRIC_PARAMS: Mapping[str, Mapping[str, Any]] = FrozenMap(
    {"holder": FrozenMap({"p": 0.5}, noun="parameter")}, noun="metric"
)


@dataclass(frozen=True)
class Policy:
    """Tolerances and metric parameters used when reports are built.

    ``confidence`` is the level of the intervals in reports (and of the evidence
    behind incompetence alerts).

    ``metric_params`` gives parameters per metric (default: ``holder`` at
    p = 0.5, between the a-mean and the g-mean, which keeps Condition 3). A metric it does not name keeps its
    default: ``{"roc_auc": {"multi_class": "ovr"}}`` alone leaves ``holder`` at p = 0.5. Each entry is checked
    against the catalog when the policy is made (an unknown metric, parameter or choice raises then, naming
    it), so that no report or scrape fails on it later.

    The prior-shift criterion (``streammon.findings.shift``): a window is shifted when the exact test's
    p-value is below ``shift_alpha`` and the largest per-class prior ratio is at least ``shift_min_ratio``;
    an alert already on stays on while p < ``shift_clear_alpha`` and the ratio ≥ ``shift_clear_ratio``
    (hysteresis: one episode, one alert; ``docs/reference/alerts.md``). ``shift_alpha`` and
    ``shift_clear_alpha`` are also the on and off levels of the other test-based alerts. (``shift_min_js``,
    the JS gate of earlier versions, is gone; state files holding it load without it.)

    ``alert_hold``: a prior-shift, class-set-change or incompetence alert whose condition no longer holds stays
    on for this many turnovers of its window (a sliding window's samples, a timed window's seconds; the
    cumulative window holds nothing; 0: no hold), so that a window whose mix moves slowly across the test's
    level raises one alert, not one per crossing (``streammon.findings.alerts.held_alerts``). A prior-shift alert
    turns off only when, besides, the samples since its condition failed, pooled, show every class within
    ``shift_clear_ratio`` of its reference share at level ``1 − confidence`` (``streammon.findings.shift_hold``).

    ``alert_confirm``: such an alert that is off is raised only once its condition has held at every read across
    this many turnovers of its window, and at ``1 + ceil(alert_confirm)`` reads at least (0: at once) — confirmed
    on fresh samples, as a Prometheus rule's ``for:`` —
    unless its evidence alone reaches level ``shift_alpha ** (1 + alert_confirm)`` — ``shift_alpha³`` by default
    (``streammon.findings.alerts.confirmed_alerts``).
    Hourly reads of a small window are independent tests: at level α each they cry wolf every 1/α reads.

    >>> Policy(shift_clear_alpha=0.001)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: shift_clear_alpha must be a number in [shift_alpha, 1] = [0.01, 1] (the off level is ...got 0.001
    >>> dict(Policy(metric_params={"roc_auc": {"multi_class": "ovr"}}).params("holder"))
    {'p': 0.5}
    >>> Policy(metric_params={"roc_auc": {"multi_class": "ovo_"}})
    Traceback (most recent call last):
    ...
    ValueError: metric_params: metric 'roc_auc' parameter 'multi_class' must be one of ('ovo', 'ovr'), got 'ovo_'
    """

    type1_tolerance: float = 0.01
    collapse_recall: float = 0.05
    shift_alpha: float = 0.01
    shift_min_ratio: float = 1.5
    shift_clear_alpha: float = 0.5
    shift_clear_ratio: float = 1.25
    alert_hold: float = 3.0
    alert_confirm: float = 2.0
    confidence: float = 0.95
    metric_params: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: DEFAULT_METRIC_PARAMS)

    def __post_init__(self) -> None:
        def number(name: str, low: float, high: float, why: str = "") -> None:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise ValueError(f"{name} must be a number in {why or f'[{low:g}, {high:g}]'}, got {value!r}")

        number("shift_alpha", 0.0, 1.0)
        number("shift_clear_alpha", self.shift_alpha, 1.0, f"[shift_alpha, 1] = [{self.shift_alpha:g}, 1] "
               "(the off level is looser than the on level)")
        number("shift_min_ratio", 1.0, math.inf)
        number("alert_hold", 0.0, 1e6)
        number("alert_confirm", 0.0, 1e6)
        number("shift_clear_ratio", 1.0, self.shift_min_ratio, f"[1, shift_min_ratio] = [1, "
               f"{self.shift_min_ratio:g}] (the off level is looser than the on level)")
        object.__setattr__(self, "metric_params", _checked_params(self.metric_params))

    @classmethod
    def of_saved(cls, saved: Mapping[str, Any]) -> Policy:
        """The policy a state file's ``policy`` object describes. Files written before the prior ratio lack its
        three fields (the defaults apply) and hold ``shift_min_js``, which is dropped: the JS gate is gone.

        >>> Policy.of_saved({"shift_alpha": 0.05, "shift_min_js": 0.01}).shift_alpha
        0.05
        """
        return cls(**{name: value for name, value in saved.items() if name != "shift_min_js"})

    def params(self, metric: str) -> Mapping[str, Any]:
        """The parameters for ``metric`` (empty when it takes none)."""
        return self.metric_params.get(metric, _NO_PARAMS)

    def as_dict(self) -> dict[str, Any]:
        """The policy as plain data: ``Policy(**policy.as_dict()) == policy``.

        >>> Policy(**Policy().as_dict()) == Policy()
        True
        """
        # (Mutation testing: a mutated "metric_params" here is an equivalent mutant, the key set after it wins.)
        fields = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "metric_params"}
        return {**fields, "metric_params": {k: dict(v) for k, v in self.metric_params.items()}}


def _checked_params(given: Any) -> Mapping[str, Mapping[str, Any]]:
    """``given`` over the defaults, each metric's entry checked by its spec (the check a report would make, made
    once, here), frozen."""
    if not isinstance(given, Mapping):
        raise TypeError(f"metric_params must map metric names to parameter mappings, got {given!r:.80}")
    out: dict[str, Mapping[str, Any]] = {}
    for metric, values in {**DEFAULT_METRIC_PARAMS, **given}.items():
        if not isinstance(values, Mapping):
            raise TypeError(f"metric_params[{metric!r:.60}] must map parameter names to values, got {values!r:.80}")
        try:
            spec(metric).resolve_params(values)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"metric_params: {exc}") from None
        out[metric] = FrozenMap(values, noun="parameter")
    return FrozenMap(out, noun="metric")


def type1_flags(
    scores: Mapping[str, float],
    corrected: Mapping[str, float],
    distortion: Mapping[str, float],
    *,
    rrt: float,
    ir: float,
    tolerance: float,
    mix_differs: bool,
    condition1: Mapping[str, bool] | None = None,
) -> list[Flag]:
    """Type 1: Condition-1 violators whose distortion is material while the mix really differs. ``condition1``
    gives a metric's Condition 1 where it depends on its parameters and K (``roc_auc`` one-vs-rest at K > 2:
    ``MetricSpec.satisfies_condition1``); the others' is the catalog's."""
    if not mix_differs:
        return []
    flags = []
    why = f" comes from the mix (RRT {rrt:.3g} vs IR {ir:.3g}), not from the model"  # (the same for every metric)
    for metric, d in distortion.items():
        keeps = spec(metric).condition1 if condition1 is None else condition1.get(metric, spec(metric).condition1)
        if keeps or math.isnan(d) or abs(d) <= tolerance:
            continue
        reason = (f"{metric} reads {scores[metric]:.3f} but would read {corrected[metric]:.3f} at the "
                  f"reference class mix: {d:+.3f}{why}")
        flags.append(Flag(metric, TYPE1, d, reason))
    return flags


def type2_flags(scores: Iterable[str], *, present: int, reference: int) -> list[Flag]:
    """Type 2: Condition-2 violators among the metrics ``scores`` (names, or a mapping by name) when the number of
    classes present changed."""
    if present == reference or present < 2 or reference < 2:
        return []
    flags = []
    for metric in scores:
        s = spec(metric)
        # (Mutation testing: `and` for `or` is an equivalent mutant while only Condition-2 violators have a
        # lower bound in the catalog, a fact tests/test_flags_mutants.py checks.)
        if s.condition2 is not False or s.lower_bound is None:
            continue
        before, now = s.lower_bound(reference), s.lower_bound(present)
        reason = (
            f"{present} classes present instead of the reference's {reference}: the floor of "
            f"{metric} moved from {before:.3f} to {now:.3f}, so its values are not comparable"
        )
        flags.append(Flag(metric, TYPE2, now - before, reason))
    return flags


def condition3_flags(
    scores: Mapping[str, float],
    c: Confusion,
    labels: Sequence[Hashable],
    policy: Policy,
) -> list[Flag]:
    """Condition 3: a collapsed class recall wiping out a G-mean-like index (``c``: the window's counts)."""
    collapsed = c.present & ~np.isnan(c.recalls) & (c.recalls <= policy.collapse_recall)
    if not collapsed.any() or c.n_present - int(collapsed.sum()) < 1:
        return []
    others = c.matrix.copy()
    others[collapsed, :] = 0
    rest = Confusion.of(others)
    names = ", ".join(f"{labels[int(i)]!r} ({c.recalls[i]:.3f})" for i in np.flatnonzero(collapsed))
    flags = []
    for metric, value in scores.items():
        s = spec(metric)
        params = policy.params(metric)
        if s.kind != "multiclass" or s.satisfies_condition3(params) is not False:
            continue
        over_rest = s.evaluate(rest, **params)
        reason = (
            f"{metric} reads {value:.3f} because the recall of {names} collapsed; "
            f"over the other classes it reads {over_rest:.3f}"
        )
        flags.append(Flag(metric, CONDITION3, over_rest - value, reason))
    return flags
