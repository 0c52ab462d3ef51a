"""Monitor behaviour: edge cases decided once, bad input rejected without side effects, reference handling."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from streammon import Cumulative, Monitor, Policy, Sliding, Timed
from streammon.metrics import applicable


def _state(monitor: Monitor) -> tuple:
    report = monitor.report()
    return report.labels, report.samples, {n: w.confusion.cells() for n, w in report.windows.items()}


BAD_CALLS = [
    (lambda m: m.update(None, "a"), ValueError, "None"),
    (lambda m: m.update("a", float("nan")), ValueError, "NaN"),
    (lambda m: m.update(["a"], "a"), TypeError, "not a class label"),
    (lambda m: m.update("new-class", "a", t=-5.0), ValueError, "earlier than the last sample time"),
    (lambda m: m.update("a", "a", t=float("inf")), ValueError, "finite"),
    (lambda m: m.update("a", "a", t=1.5e19), ValueError, "within"),  # found by the fuzzer: overflowed a bucket id
    (lambda m: m.update_many([0], ["a"], t=1.5e19), ValueError, "within"),
    (lambda m: m.update_many(["a"], ["a"], t=[-2e12]), ValueError, "within"),
    (lambda m: m.update("a", "a", t="noon"), TypeError, "real number"),
    (lambda m: m.update_many(["a", "b"], ["a"]), ValueError, "same length"),
    (lambda m: m.update_many(np.array([["a", "b"]]), np.array([["a", "b"]])), ValueError, "1-D"),
    (lambda m: m.update_many(["a", None], ["a", "b"]), ValueError, "None"),
    (lambda m: m.update_many(np.array([1.0, np.nan]), np.array([1.0, 1.0])), ValueError, "NaN"),
    (lambda m: m.update_many(["a", "b"], ["a", "b"], t=[10.0, 9.0]), ValueError, "never decrease"),
    (lambda m: m.update_many(["a", "b"], ["a", "b"], t=[1.0]), ValueError, "one time per sample"),
    (lambda m: m.update_many(["x1", "x2", "x3", "x4"], ["a"] * 4), ValueError, "max_classes=4"),
    (lambda m: m.update_many("ab", "ab"), TypeError, "sequence"),
    (lambda m: m.update_many(np.array([1 + 2j]), np.array([1 + 2j])), TypeError, "dtype"),
    (lambda m: m.update_many([{"k": 1}], ["a"]), TypeError, "not a class label"),
]


@pytest.mark.parametrize(("call", "error", "message"), BAD_CALLS)
def test_bad_input_raises_a_clear_error_and_changes_nothing(call, error, message) -> None:  # type: ignore[no-untyped-def]
    """Every rejected sample or batch raises a named error and leaves every window and the class index as it was."""
    monitor = Monitor([Cumulative(), Sliding(3), Timed(60)], reference={"a": 3, "b": 1}, max_classes=4)
    monitor.update_many(["a", "b", "a"], ["a", "a", "b"], t=[1.0, 2.0, 3.0])
    before = _state(monitor)
    with pytest.raises(error, match=message):
        call(monitor)
    assert _state(monitor) == before


def test_empty_batch_is_a_no_op() -> None:
    """update_many with empty inputs counts nothing and raises nothing."""
    monitor = Monitor([Cumulative()])
    monitor.update_many([], [])
    monitor.update_many(np.array([], dtype=int), np.array([], dtype=int))
    assert monitor.report().samples == 0


def test_empty_window_reads_nan_never_zero() -> None:
    """An empty window has n = 0 and every score, RRT and prior shift NaN."""
    report = Monitor([Sliding(10)], reference={"neg": 9, "pos": 1}).report()
    w = report.windows["sliding_10"]
    assert w.n == 0 and set(w.scores) == set(applicable(2))
    assert all(math.isnan(v) for v in w.scores.values())
    assert math.isnan(w.rrt) and w.prior_shift is not None and math.isnan(w.prior_shift.js)
    assert w.flags == () and w.absent == ("neg", "pos")


def test_reference_names_the_positive_class_and_ir() -> None:
    """The reference minority is the positive class unless positive= names one; IR is max/min prior."""
    monitor = Monitor([Cumulative()], reference={"legit": 99_000, "fraud": 1_000})
    monitor.update_many(["fraud", "legit", "legit"], ["fraud", "legit", "fraud"])
    w = monitor.report().windows["cumulative"]
    assert w.positive == "fraud" and w.ir == pytest.approx(99.0) and w.rrt == 2.0
    assert w.scores["tpr"] == 1.0 and w.scores["tnr"] == 0.5
    named = Monitor([Cumulative()], reference={"legit": 99_000, "fraud": 1_000}, positive="legit")
    named.update_many(["fraud", "legit", "legit"], ["fraud", "legit", "fraud"])
    assert named.report().windows["cumulative"].scores["tpr"] == 0.5
    with pytest.raises(ValueError, match="not a class of the reference"):
        Monitor([Cumulative()], reference={"legit": 99_000, "fraud": 1_000}, positive="Fraud")
    priors = Monitor([Cumulative()], reference={"x": 0.25, "y": 0.75})
    assert priors.reference is not None and priors.reference.priors == {"x": 0.25, "y": 0.75}


def test_warmup_learns_the_reference_from_the_first_samples() -> None:
    """Without a reference, the true labels of the first `warmup` samples become it; until then it is None."""
    monitor = Monitor([Cumulative()], warmup=10)
    monitor.update_many(["n"] * 7 + ["p"] * 1, ["n"] * 8)
    early = monitor.report()
    assert early.reference is None and early.warmup_remaining == 2
    assert math.isnan(early.windows["cumulative"].ir)
    assert math.isnan(early.windows["cumulative"].corrected["precision"])
    monitor.update_many(["p", "n", "p", "p"], ["p"] * 4)  # only the first two count for the warm-up
    later = monitor.report()
    assert later.reference is not None and later.reference.source == "warmup"
    assert later.reference.priors == {"n": 0.8, "p": 0.2}
    assert later.positive == "p" and later.windows["cumulative"].ir == pytest.approx(4.0)


def test_new_class_mid_stream_raises_type2_flags_on_condition2_violators() -> None:
    """A class the reference lacks appearing makes the class set differ: auroc_ovo/auroc_ova are Type-2-flagged."""
    monitor = Monitor([Sliding(1000)], reference={"a": 50, "b": 30, "c": 20})
    rng = np.random.default_rng(0)
    truth = rng.choice(["a", "b", "c"], size=600, p=[0.5, 0.3, 0.2])
    monitor.update_many(truth, truth)
    assert monitor.report().windows["sliding_1000"].flagged("type2") == ()
    monitor.update_many(["d"] * 100, ["d"] * 90 + ["a"] * 10)
    w = monitor.report().windows["sliding_1000"]
    assert set(w.flagged("type2")) == {"auroc_ovo", "auroc_ova"}
    flag = next(f for f in w.flags if f.metric == "auroc_ovo")
    assert flag.magnitude == pytest.approx(2 / 6 - 1 / 4)  # floor (C−2)/(2(C−1)) from C = 3 to C = 4
    assert "4 classes present instead of the reference's 3" in flag.reason
    assert w.present == ("a", "b", "c", "d") and w.absent == ()


def test_vanished_class_is_listed_absent_and_type2_flagged() -> None:
    """A reference class with no sample in the window is absent; recall averages skip it."""
    monitor = Monitor([Sliding(100)], reference={"a": 1, "b": 1, "c": 1})
    monitor.update_many(["a"] * 50 + ["b"] * 50, ["a"] * 40 + ["b"] * 10 + ["b"] * 50)
    w = monitor.report().windows["sliding_100"]
    assert w.absent == ("c",) and math.isnan(w.recall["c"])
    assert w.scores["acsa"] == pytest.approx((0.8 + 1.0) / 2)
    assert set(w.flagged("type2")) == {"auroc_ovo", "auroc_ova"}


def test_collapsed_recall_raises_condition3_flags_on_gmean_like_indices_only() -> None:
    """A class recalled at ≤ 5 %: gmean, hmean, min_recall are Condition-3-flagged; acsa and holder(p=0.5) are not."""
    monitor = Monitor([Cumulative()], reference={"a": 1, "b": 1, "c": 1})
    truth = ["a"] * 100 + ["b"] * 100 + ["c"] * 100
    preds = ["a"] * 95 + ["b"] * 5 + ["b"] * 100 + ["b"] * 97 + ["c"] * 3  # recalls 0.95, 1.0, 0.03
    monitor.update_many(truth, preds)
    w = monitor.report().windows["cumulative"]
    assert set(w.flagged("condition3")) == {"gmean", "hmean", "min_recall"}
    gmean_flag = next(f for f in w.flags if f.metric == "gmean")
    assert gmean_flag.magnitude == pytest.approx(math.sqrt(0.95 * 1.0) - (0.95 * 1.0 * 0.03) ** (1 / 3))
    assert "'c' (0.030)" in gmean_flag.reason
    monitor.update_many(["c"] * 100, ["c"] * 100)  # recall of c recovers to 0.515
    assert monitor.report().windows["cumulative"].flagged("condition3") == ()


def test_competitiveness_of_hoelder_scores() -> None:
    """Hölder-family scores are classed against seed 001's bounds for the classes present."""
    monitor = Monitor([Cumulative()], reference={"a": 1, "b": 1})
    monitor.update_many(["a"] * 10 + ["b"] * 10, ["a"] * 9 + ["b"] + ["b"] * 4 + ["a"] * 6)
    w = monitor.report().windows["cumulative"]
    assert w.competitiveness["min_recall"] == "incompetent"  # recall of b = 0.4 < 1/2
    assert w.competitiveness["max_recall"] == "undecided"  # S_sup = 1 at p = +∞: max is inadequate (seed 001)
    assert w.competitiveness["acsa"] == "undecided"  # (0.9 + 0.4)/2 = 0.65 lies in [1/2, 3/4]
    assert set(w.competitiveness) == {"acsa", "gmean", "hmean", "min_recall", "max_recall", "holder"}


def test_reports_are_frozen_snapshots() -> None:
    """A report never changes after it is made, and cannot be mutated."""
    monitor = Monitor([Cumulative()], reference={0: 1, 1: 1})
    monitor.update(0, 0)
    report = monitor.report()
    monitor.update(1, 0)
    assert report.windows["cumulative"].n == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.samples = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        report.windows["cumulative"].scores["acsa"] = 1.0  # type: ignore[index]


def test_labels_of_many_types_are_accepted() -> None:
    """str, int, bool and numpy scalar labels all work; numpy scalars merge with equal Python values."""
    monitor = Monitor([Cumulative()], warmup=1)
    monitor.update(np.int64(3), 3)
    monitor.update(4, np.int32(4))
    monitor.update_many(np.array([3, 4]), [4, 3])
    assert monitor.report().labels == (3, 4)
    strings = Monitor([Cumulative()], classes=["x", "y"])
    strings.update_many(np.array(["x", "y"]), ("y", "y"))
    assert strings.report().windows["cumulative"].confusion.to_dict() == {"x": {"y": 1}, "y": {"y": 1}}


def test_policy_tolerance_and_parameters_are_used() -> None:
    """The Type 1 tolerance and metric parameters come from the monitor's Policy."""
    strict = Monitor([Cumulative()], reference={"n": 9, "p": 1}, policy=Policy(type1_tolerance=10.0))
    strict.update_many(["n"] * 500 + ["p"] * 500, ["n"] * 450 + ["p"] * 50 + ["p"] * 400 + ["n"] * 100)
    assert strict.report().windows["cumulative"].flagged("type1") == ()
    custom = Monitor([Cumulative()], reference={"n": 1, "p": 1}, policy=Policy(metric_params={"holder": {"p": -1}}))
    custom.update_many(["n", "p", "p"], ["n", "p", "n"])
    w = custom.report().windows["cumulative"]
    assert w.scores["holder"] == pytest.approx(w.scores["hmean"])


@pytest.mark.parametrize(("reference", "message"), [
    ({"legit": 99_000, "fraud": 0}, "reference class 'fraud' has weight 0"),
    ({"legit": 0.85, "fraud": 0.05}, "reference priors sum to 0.9"),
    ({"legit": 0.5}, "reference priors sum to 0.5"),
])
def test_a_given_reference_with_a_zero_class_or_priors_not_summing_to_1_is_refused(
        reference: dict[str, float], message: str) -> None:
    """A zero weight or priors that do not sum to 1 raise ValueError at construction instead of an infinite IR or
    a silent renormalisation; counts with any total and priors summing to 1 are accepted alike."""
    with pytest.raises(ValueError, match=message):
        Monitor(reference=reference)
    counts = Monitor(reference={"legit": 99_000, "fraud": 1_000}).reference
    priors = Monitor(reference={"legit": 0.99, "fraud": 0.01}).reference
    assert counts is not None and priors is not None and counts.priors == pytest.approx(priors.priors)


def test_a_closed_class_set_refuses_a_stray_label_everywhere_and_is_saved() -> None:
    """closed=True: a mistyped 'Fraud' is refused by update, update_many, predict and label alike, nothing counted
    (the windows recount to the accepted samples only); the binary metrics stay; a saved and loaded monitor stays
    closed. An open monitor takes the stray label as a third class (K = 3, no precision any more)."""
    m = Monitor(reference={"legit": 99, "fraud": 1}, closed=True)
    m.update_many(["legit", "fraud"], ["legit", "fraud"])
    for call in (lambda: m.update("Fraud", "legit"), lambda: m.update_many(["legit", "Fraud"], ["legit", "legit"]),
                 lambda: m.predict("k", "Fraud"), lambda: m.label_many(["k"], ["Fraud"])):
        with pytest.raises(ValueError, match="'Fraud' is not one of the classes"):
            call()
    assert m.samples == 2 and m.labels == ("legit", "fraud")
    assert "precision" in m.report().windows["cumulative"].scores
    again = Monitor.loads(m.dumps())
    with pytest.raises(ValueError, match="class set is closed"):
        again.update("Fraud", "legit")
    opened = Monitor(reference={"legit": 99, "fraud": 1})
    opened.update_many(["legit", "fraud", "Fraud"], ["legit", "fraud", "legit"])
    assert len(opened.labels) == 3 and "precision" not in opened.report().windows["cumulative"].scores
    with pytest.raises(ValueError, match="needs at least 2 classes"):
        Monitor(closed=True)
