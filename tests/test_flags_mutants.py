"""The distortion flags, the alert conditions and the prior-shift decision, each against its rule written out.

Written to kill mutants of ``findings/distortion.py``, ``findings/alerts.py`` and ``findings/shift.py``
(``bash .ci/mutation flags``): exact boundaries, exact magnitudes and the exact reason texts.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from streammon import Cumulative, Monitor
from streammon.findings.alerts import active_since, degradation_reason, window_conditions
from streammon.findings.distortion import DEFAULT_METRIC_PARAMS, Policy, condition3_flags, type1_flags, type2_flags
from streammon.findings.reference import Reference
from streammon.findings.report import CLASS_SET_CHANGE, CONDITION3, INCOMPETENT, PRIOR_SHIFT, TYPE1, TYPE2, Flag
from streammon.findings.shift import DEFAULT_ALPHA, DEFAULT_MIN_RATIO, PriorShift, js_divergence, prior_shift
from streammon.metrics import Confusion, catalog


def test_policy_defaults_are_the_documented_numbers() -> None:
    """Policy() holds the tolerances the module documents, and holder's p = 0.5."""
    policy = Policy()
    assert (policy.type1_tolerance, policy.collapse_recall, policy.shift_alpha, policy.shift_min_ratio,
            policy.shift_clear_alpha, policy.shift_clear_ratio, policy.alert_hold, policy.alert_confirm,
            policy.confidence) == (0.01, 0.05, 0.01, 1.5, 0.5, 1.25, 3.0, 2.0, 0.95)
    assert dict(policy.params("holder")) == {"p": 0.5} and dict(DEFAULT_METRIC_PARAMS["holder"]) == {"p": 0.5}
    assert dict(policy.params("gmean")) == {}
    with pytest.raises(KeyError, match=r"no parameter 'p' here: there are none"):
        policy.params("gmean")["p"]
    assert policy.as_dict() == {"type1_tolerance": 0.01, "collapse_recall": 0.05, "shift_alpha": 0.01,
                                "shift_min_ratio": 1.5, "shift_clear_alpha": 0.5, "shift_clear_ratio": 1.25,
                                "alert_hold": 3.0, "alert_confirm": 2.0, "confidence": 0.95,
                                "metric_params": {"holder": {"p": 0.5}}}


SCORES = {"precision": 0.8, "accuracy": 0.6, "f1": 0.7, "mcc": 0.5, "recall": 0.9, "kappa": 0.4}
CORRECTED = {"precision": 0.7, "accuracy": 0.62, "f1": 0.69, "mcc": 0.5, "recall": 0.4, "kappa": 0.4}


def test_type1_flags_condition1_violators_beyond_the_tolerance_only_while_the_mix_differs() -> None:
    """Type 1: |d| > tolerance (not >=), NaN never, Condition-1 metrics never, nothing while the mix is the same."""
    distortion = {"precision": 0.1, "accuracy": -0.02, "f1": 0.01, "mcc": math.nan, "recall": 0.5, "kappa": 0.0}
    flags = type1_flags(SCORES, CORRECTED, distortion, rrt=2.5, ir=9.0, tolerance=0.01, mix_differs=True)
    assert flags == [
        Flag("precision", TYPE1, 0.1, "precision reads 0.800 but would read 0.700 at the reference class mix: "
             "+0.100 comes from the mix (RRT 2.5 vs IR 9), not from the model"),
        Flag("accuracy", TYPE1, -0.02, "accuracy reads 0.600 but would read 0.620 at the reference class mix: "
             "-0.020 comes from the mix (RRT 2.5 vs IR 9), not from the model"),
    ]
    assert type1_flags(SCORES, CORRECTED, distortion, rrt=2.5, ir=9.0, tolerance=0.01, mix_differs=False) == []
    just_over = type1_flags(SCORES, CORRECTED, {"f1": 0.0101}, rrt=1, ir=1, tolerance=0.01, mix_differs=True)
    assert [f.metric for f in just_over] == ["f1"]
    # a metric passed over (Condition 1, NaN, within the tolerance) does not end the search
    later = {"recall": 0.5, "mcc": math.nan, "kappa": 0.0, "precision": 0.1}
    assert [f.metric for f in type1_flags(SCORES, CORRECTED, later, rrt=1, ir=1, tolerance=0.01,
                                          mix_differs=True)] == ["precision"]


@pytest.mark.parametrize(("present", "reference", "flagged"), [
    (2, 3, True), (3, 2, True), (4, 3, True), (3, 3, False), (2, 2, False), (1, 3, False), (3, 1, False),
    (0, 2, False),
])
def test_type2_flags_only_condition2_violators_when_the_number_of_classes_changed(
    present: int, reference: int, flagged: bool
) -> None:
    """Type 2 needs present != reference with both >= 2; it flags AUROC-OVO/OVA by how far their floor moved."""
    scores = {"auroc_ovo": 0.8, "auroc_ova": 0.7, "precision": 0.5, "mcc": 0.3, "gmean": 0.6}
    floors = {"auroc_ovo": {2: 0.0, 3: 0.25, 4: 1 / 3}, "auroc_ova": {2: 0.0, 3: 1 / 6, 4: 0.25}}  # seed 004
    flags = type2_flags(scores, present=present, reference=reference)
    if not flagged:
        assert flags == []
        return
    assert [(f.metric, f.kind) for f in flags] == [("auroc_ovo", TYPE2), ("auroc_ova", TYPE2)]
    for f in flags:
        before, now = floors[f.metric][reference], floors[f.metric][present]
        assert f.magnitude == pytest.approx(now - before, abs=1e-12)
        assert f.reason == (f"{present} classes present instead of the reference's {reference}: the floor of "
                            f"{f.metric} moved from {before:.3f} to {now:.3f}, so its values are not comparable")


def test_only_condition2_violators_have_a_lower_bound_in_the_catalog() -> None:
    """The catalog gives a floor (lower_bound) to exactly the metrics that violate Condition 2."""
    assert {name for name, s in catalog().items() if s.lower_bound is not None} == {
        name for name, s in catalog().items() if s.condition2 is False} == {"auroc_ovo", "auroc_ova"}


def _recalls_gmean(recalls: list[float]) -> float:
    return float(np.prod(recalls) ** (1 / len(recalls)))


def test_condition3_flags_a_collapsed_recall_at_the_threshold_with_the_index_over_the_other_classes() -> None:
    """Recall <= collapse_recall (0.05 itself included) flags G-mean-like indices by (index over the rest - index)."""
    m = np.array([[9, 1, 0], [1, 4, 0], [10, 9, 1]])  # recalls 0.9, 0.8, 0.05
    c = Confusion.of(m)
    gmean = _recalls_gmean([0.9, 0.8, 0.05])
    scores = {"gmean": gmean, "min_recall": 0.05, "acsa": 0.5833, "precision": 0.4, "auroc_ovo": 0.7, "holder": 0.3}
    flags = condition3_flags(scores, c, ["a", "b", "c"], Policy())
    rest_gmean, rest_min = _recalls_gmean([0.9, 0.8]), 0.8
    assert [(f.metric, f.kind) for f in flags] == [("gmean", CONDITION3), ("min_recall", CONDITION3)]
    assert flags[0].magnitude == pytest.approx(rest_gmean - gmean)
    assert flags[1].magnitude == pytest.approx(rest_min - 0.05)
    assert flags[0].reason == (f"gmean reads {gmean:.3f} because the recall of 'c' (0.050) collapsed; "
                               f"over the other classes it reads {rest_gmean:.3f}")
    # holder at p = 0.5 keeps Condition 3; at p = -1 it does not, and is flagged too
    low_p = Policy(metric_params={"holder": {"p": -1.0}})
    assert [f.metric for f in condition3_flags(scores, c, ["a", "b", "c"], low_p)] == ["gmean", "min_recall", "holder"]
    # a tighter threshold: 0.05 is no longer a collapse
    assert condition3_flags(scores, c, ["a", "b", "c"], Policy(collapse_recall=0.04)) == []


def test_condition3_needs_another_present_class_and_ignores_absent_ones() -> None:
    """Two present classes, one collapsed: flagged; every present class collapsed, or absent classes only: not."""
    scores = {"gmean": 0.2}
    two = Confusion.of(np.array([[8, 2, 0], [19, 1, 0], [0, 0, 0]]))  # recall 0.8, 0.05, class c absent
    flags = condition3_flags(scores, two, ["a", "b", "c"], Policy())
    assert [(f.metric, f.magnitude) for f in flags] == [("gmean", pytest.approx(0.8 - 0.2))]
    assert "'b' (0.050)" in flags[0].reason and "'c'" not in flags[0].reason
    all_collapsed = Confusion.of(np.array([[0, 10], [10, 0]]))
    assert condition3_flags(scores, all_collapsed, ["a", "b"], Policy()) == []
    healthy = Confusion.of(np.array([[9, 1, 0], [1, 9, 0], [0, 0, 0]]))
    assert condition3_flags(scores, healthy, ["a", "b", "c"], Policy()) == []
    both_named = Confusion.of(np.array([[0, 10, 0], [10, 0, 0], [0, 0, 5]]))  # a and b collapsed, c fine
    reason = condition3_flags(scores, both_named, ["a", "b", "c"], Policy())[0].reason
    assert "recall of 'a' (0.000), 'b' (0.000) collapsed" in reason


def _window(update: tuple[list[str], list[str]], reference: dict[str, int] | None = None):  # type: ignore[no-untyped-def]
    monitor = Monitor([Cumulative()], reference=reference)
    monitor.update_many(*update)
    return monitor.report().windows["cumulative"]


def test_window_conditions_prior_shift_with_its_reason() -> None:
    """A shifted window gives one prior_shift condition on class_mix with the ratio, p, JS, TV and RRT/IR in its
    reason."""
    w = _window((["a"] * 90 + ["b"] * 10, ["a"] * 90 + ["b"] * 10), {"a": 1, "b": 1})
    ref = Reference.of({"a": 1, "b": 1})
    shift = PriorShift(js=0.25, tv=0.4, chi2=64.0, df=1, p_value=1e-15, shifted=True, prior_ratio=5.0)
    w = dataclasses.replace(w, prior_shift=shift, rrt=9.0, ir=1.0)
    conditions = [c for c in window_conditions(w, ref) if c[0] == PRIOR_SHIFT]
    assert conditions == [(PRIOR_SHIFT, "cumulative", "class_mix",
                           "class mix moved from the reference: largest prior ratio 5, exact test p = 1e-15 "
                           "(JS 0.250 bits, TV 0.400; RRT 9 vs IR 1)")]
    unshifted = dataclasses.replace(w, prior_shift=dataclasses.replace(shift, shifted=False))
    assert [c for c in window_conditions(unshifted, ref) if c[0] == PRIOR_SHIFT] == []
    no_shift = dataclasses.replace(w, prior_shift=None)
    assert [c for c in window_conditions(no_shift, ref) if c[0] == PRIOR_SHIFT] == []


def test_window_conditions_class_set_change_lists_gained_then_lost_classes() -> None:
    """Present classes against the reference's non-zero ones: '+new' sorted, then '-gone' sorted, with counts."""
    w = _window((["a", "d", "c"] * 10, ["a", "d", "c"] * 10))  # 30 samples: b (0.25) and e (0.5) missed by chance
    ref = Reference.of({"a": 1, "b": 1, "e": 2, "z": 0}, source="warmup")  # p 0.75³⁰, 0.5³⁰; z: prior 0
    conditions = [c for c in window_conditions(w, ref) if c[0] == CLASS_SET_CHANGE]
    assert conditions == [(CLASS_SET_CHANGE, "cumulative", "+c,+d,-b,-e",
                           "3 classes present instead of the reference's 3 (+c, +d, -b, -e): "
                           "AUROC-OVO/OVA are not comparable across this change")]
    same = _window((["a", "b"], ["a", "b"]))
    same_reference = Reference.of({"a": 1, "b": 1, "z": 0}, source="warmup")
    assert [c for c in window_conditions(same, same_reference) if c[0] == CLASS_SET_CHANGE] == []
    assert [c for c in window_conditions(w, None) if c[0] == CLASS_SET_CHANGE] == []


def test_a_class_missing_by_chance_is_not_a_class_set_change() -> None:
    """A 5 % class is absent from n samples at the reference mix with probability 0.95ⁿ: 0.0104 at n = 89, 0.0099
    at n = 90 — lost (an alert) only from n = 90 on at alpha 0.01, at n = 45 already at alpha 0.1. The window's
    Type 2 flags (its numbers are not comparable) stand either way."""
    ref = Reference.of({"a": 90, "b": 5, "c": 5})
    assert 0.95**89 > 0.01 > 0.95**90 and 0.95**44 > 0.1 > 0.95**45
    for n, alpha, alerted in ((89, 0.01, False), (90, 0.01, True), (44, 0.1, False), (45, 0.1, True)):
        w = _window((["c"] + ["a"] * (n - 1), ["c"] + ["a"] * (n - 1)), {"a": 90, "b": 5, "c": 5})
        policy = Policy(shift_alpha=alpha, shift_clear_alpha=max(alpha, 0.1))
        conditions = [c for c in window_conditions(w, ref, policy=policy) if c[0] == CLASS_SET_CHANGE]
        assert conditions == ([(CLASS_SET_CHANGE, "cumulative", "-b", "2 classes present instead of the reference's "
                                "3 (-b): AUROC-OVO/OVA are not comparable across this change")] if alerted else [])
        assert any(f.kind == TYPE2 for f in w.flags)
        if alpha == 0.01:  # the default is the policy's default shift_alpha
            assert window_conditions(w, ref) == window_conditions(w, ref, policy=Policy())
            assert [c for c in window_conditions(w, ref) if c[0] == CLASS_SET_CHANGE] == conditions


def test_window_conditions_incompetent_needs_the_whole_interval_below_one_over_k() -> None:
    """Incompetent: K >= 2, judged incompetent, interval high < 1/K strictly (not NaN), per Hölder score."""
    w = _window((["a", "b"] * 5, ["b", "a"] * 5))
    k = len(w.present)
    assert k == 2
    comp = {"min_recall": "incompetent", "gmean": "incompetent", "acsa": "incompetent"}
    intervals = {"min_recall": (0.0, 0.49), "gmean": (0.0, 0.5), "acsa": (0.0, math.nan)}
    scores = {**w.scores, "min_recall": 0.1, "gmean": 0.2, "acsa": 0.3}
    crafted = dataclasses.replace(w, competitiveness=comp, intervals=intervals, scores=scores)
    assert [c for c in window_conditions(crafted, None) if c[0] == INCOMPETENT] == [
        (INCOMPETENT, "cumulative", "min_recall",
         "min_recall = 0.100 and its interval up to 0.490 lie below 1/K = 0.500: some class is recalled worse "
         "than random guessing (Ortigosa-Hernández et al.)")]
    undecided = dataclasses.replace(crafted, competitiveness={**comp, "min_recall": "undecided"})
    assert [c for c in window_conditions(undecided, None) if c[0] == INCOMPETENT] == []
    every = dataclasses.replace(crafted, intervals={m: (0.0, 0.4) for m in comp})
    assert [c[2] for c in window_conditions(every, None) if c[0] == INCOMPETENT] == ["min_recall", "gmean", "acsa"]
    one_class = dataclasses.replace(every, present=("a",))
    assert [c for c in window_conditions(one_class, None) if c[0] == INCOMPETENT] == []


def test_an_empty_window_has_no_conditions() -> None:
    """n == 0: no condition at all, whatever the rest of the report says."""
    w = _window((["a", "b"] * 5, ["b", "a"] * 5))
    shift = PriorShift(js=0.5, tv=0.5, chi2=math.inf, df=1, p_value=0.0, shifted=True)
    crafted = dataclasses.replace(w, n=0, prior_shift=shift, intervals={m: (0.0, 0.1) for m in w.intervals},
                                  competitiveness=dict.fromkeys(w.intervals, "incompetent"))
    assert window_conditions(crafted, Reference.of({"x": 1})) == []
    assert window_conditions(dataclasses.replace(crafted, n=1), Reference.of({"x": 1})) != []


def test_degradation_reason_and_since_when() -> None:
    """The degradation reason names the drop target (floored at 0); since-when is kept for conditions still on."""
    assert degradation_reason("fraud", 0.9, 1234, 0.61234) == (
        "recall of 'fraud' fell below its baseline 0.900: about 0.612 since sample 1234 (CUSUM bank on the "
        "class's own samples; the mix plays no part)")
    previous = {("prior_shift", "w", "class_mix"): (5, 1.5), ("gone", "w", "s"): (1, 0.0)}
    conditions = [("prior_shift", "w", "class_mix", "r1"), ("incompetent", "w", "gmean", "r2")]
    assert active_since(previous, conditions, 42, 9.0) == {
        ("prior_shift", "w", "class_mix"): (5, 1.5), ("incompetent", "w", "gmean"): (42, 9.0)}


def test_prior_shift_decision_is_p_below_alpha_and_ratio_at_least_min_ratio() -> None:
    """shifted = p < alpha (strictly) and prior_ratio >= min_ratio (inclusive); the defaults are 0.01 and 1.5."""
    assert (DEFAULT_ALPHA, DEFAULT_MIN_RATIO) == (0.01, 1.5)
    counts, ref = [80, 20], [0.5, 0.5]
    s = prior_shift(counts, ref)
    assert s.p_value < 0.01 and s.prior_ratio == pytest.approx(2.5) and s.shifted
    assert prior_shift(counts, ref, alpha=s.p_value).shifted is False  # p == alpha is not below it
    assert prior_shift(counts, ref, min_ratio=s.prior_ratio).shifted is True  # ratio == min_ratio is enough
    assert prior_shift(counts, ref, min_ratio=math.nextafter(s.prior_ratio, 9.0)).shifted is False
    assert prior_shift(counts, ref, alpha=math.nextafter(s.p_value, 1.0)).shifted is True


def test_prior_shift_statistics_by_hand() -> None:
    """JS, TV, chi-square and df of a small window recomputed by hand; reference weights are normalised."""
    s = prior_shift([6, 2, 2], [2.0, 1.0, 1.0])  # reference 0.5/0.25/0.25, window 0.6/0.2/0.2
    assert s.tv == pytest.approx(0.1) and s.df == 2
    assert s.chi2 == pytest.approx((6 - 5) ** 2 / 5 + (2 - 2.5) ** 2 / 2.5 * 2)
    p, q = np.array([0.6, 0.2, 0.2]), np.array([0.5, 0.25, 0.25])
    mid = (p + q) / 2
    kl = lambda a, b: float(np.sum(a * np.log2(a / b)))  # noqa: E731
    assert s.js == pytest.approx(0.5 * kl(p, mid) + 0.5 * kl(q, mid), rel=1e-12)
    # the exact test: class 0 (6 of 10 at 0.5) has the smallest two-sided p, 2·P(X >= 6) = 0.754; times m = 3
    assert s.p_value == 1.0 and s.prior_ratio == pytest.approx(1.25)


def test_prior_shift_edge_cases() -> None:
    """Empty window: all NaN, not shifted; one-class reference: chi2 0, p 1 (nothing to test); zero-prior class
    seen: p = 0, ratio inf."""
    empty = prior_shift([0, 0], [0.5, 0.5])
    assert math.isnan(empty.js) and math.isnan(empty.tv) and math.isnan(empty.chi2) and math.isnan(empty.p_value)
    assert empty.df == 0 and empty.shifted is False
    single = prior_shift([5, 0], [1.0, 0.0])
    assert (single.chi2, single.df, single.shifted, single.p_value, single.prior_ratio) == (0.0, 0, False, 1.0, 1.0)
    assert single.js == 0.0 and single.tv == 0.0
    unseen = prior_shift([5, 1], [1.0, 0.0])
    assert (unseen.chi2, unseen.p_value, unseen.df, unseen.shifted) == (math.inf, 0.0, 0, True)
    assert unseen.to_dict() == {"js": unseen.js, "tv": pytest.approx(1 / 6), "chi2": "Infinity", "df": 0,
                                "p_value": 0.0, "prior_ratio": "Infinity", "shifted": True}
    assert empty.to_dict()["js"] is None and empty.to_dict()["p_value"] is None


def test_js_divergence_skips_zero_mass_and_is_never_negative() -> None:
    """Zero entries of p contribute nothing; identical distributions give exactly 0."""
    assert js_divergence(np.array([1.0, 0.0]), np.array([1.0, 0.0])) == 0.0
    assert js_divergence(np.array([0.5, 0.5, 0.0]), np.array([0.0, 0.5, 0.5])) == pytest.approx(0.5)
