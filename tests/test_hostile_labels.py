"""Labels and times that would break a later stage are refused up front, and refusing them changes nothing."""

from __future__ import annotations

import math
import tempfile
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from streammon import Cumulative, Monitor, Sliding, Timed
from streammon.counting import counts
from streammon.counting.counts import MAX_LABEL_LENGTH, ClassIndex
from streammon.export.prometheus import MonitorCollector
from tests.strategies import hostile_labels


def _state(monitor: Monitor) -> tuple:
    return monitor.labels, monitor.samples, {name: c.cells() for name, c in monitor.counts().items()}


def _monitor() -> Monitor:
    monitor = Monitor([Cumulative(), Sliding(5), Timed(100)], max_classes=8, clock=lambda: 1.0)
    monitor.update_many(["a", "b", "a"], ["a", "a", "b"], t=[1.0, 2.0, 3.0])
    return monitor


def _every_read_works(monitor: Monitor, tmp_path: Path) -> None:
    """Report, exposition (parsed back) and a save/load round trip all succeed and agree with the counts."""
    report = monitor.report()
    registry = CollectorRegistry()
    registry.register(MonitorCollector({"m": monitor}))
    text = generate_latest(registry).decode("utf-8")
    exported = {s.labels["class"] for f in text_string_to_metric_families(text) if f.name == "streammon_class_samples"
                for s in f.samples}
    assert exported == {str(label) for label in report.labels}
    monitor.save(tmp_path / "m.json")
    assert Monitor.load(tmp_path / "m.json").labels == monitor.labels


ATTACKS: list[Any] = [10**5000, "\udc80", math.inf, -math.inf, Decimal("NaN"), Decimal("sNaN"), Decimal("Infinity"),
                      complex("nan"), np.float64("nan"), np.float32("nan"), float("nan"), None, b"a", ("a", 1),
                      "x" * (MAX_LABEL_LENGTH + 1), "", "a\ud800b", 0.73, np.float64(0.5), 2**63, -(2**63),
                      Fraction(1, 2), 1 + 2j, np.datetime64("NaT"), frozenset({1})]


@pytest.mark.parametrize("label", ATTACKS, ids=lambda x: type(x).__name__)
@pytest.mark.parametrize("batch", [False, True])
def test_labels_no_stage_can_carry_are_refused_and_change_nothing(label: Any, batch: bool, tmp_path: Path) -> None:
    """Each attack of issue 12 (and its siblings) raises ValueError/TypeError on update and update_many, on
    either side; the monitor is exactly as before, and report, exposition and state still work."""
    monitor = _monitor()
    before = _state(monitor)
    for y_true, y_pred in ((label, "a"), ("a", label)):
        with pytest.raises((ValueError, TypeError)):
            if batch:
                monitor.update_many(np.array([y_true, "b"], dtype=object), np.array([y_pred, "b"], dtype=object))
            else:
                monitor.update(y_true, y_pred)
        assert _state(monitor) == before
    _every_read_works(monitor, tmp_path)


def test_the_longest_allowed_labels_and_int64_extremes_go_through_every_stage(tmp_path: Path) -> None:
    """What is accepted is carried: labels of MAX_LABEL_LENGTH characters (non-ASCII too), ±(2**63 - 1) and
    whole floats (stored as ints) survive the report, the exposition and a save/load round trip."""
    monitor = Monitor([Cumulative()], max_classes=8)
    monitor.update_many(["é" * MAX_LABEL_LENGTH, "z" * MAX_LABEL_LENGTH], ["z" * MAX_LABEL_LENGTH] * 2)
    monitor.update(2**63 - 1, -(2**63) + 1)
    monitor.update(np.float64(3.0), 4.0)
    assert monitor.labels[2:] == (2**63 - 1, -(2**63) + 1, 3, 4)
    assert all(type(label) is int for label in monitor.labels[2:])
    _every_read_works(monitor, tmp_path)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.booleans(), hostile_labels(), st.sampled_from(["a", "b", 1, True])), min_size=1,
                max_size=6))
def test_fuzzed_hostile_labels_never_reach_a_stage(calls: list[tuple[bool, Any, Any]]) -> None:
    """Fuzzing update/update_many with hostile labels: each raises ValueError/TypeError and changes nothing;
    afterwards the report, the exposition and the JSON state body are produced without error."""
    monitor = _monitor()
    for batch, hostile, good in calls:
        before = _state(monitor)
        with pytest.raises((ValueError, TypeError)):
            if batch:
                monitor.update_many([good, hostile], [hostile, good])
            else:
                monitor.update(hostile, good)
        assert _state(monitor) == before
    with tempfile.TemporaryDirectory() as folder:
        _every_read_works(monitor, Path(folder))


def test_scores_given_as_labels_are_refused_with_a_hint() -> None:
    """Issue 13 §3: probabilities as labels are refused with the score hint, even fewer than the cap."""
    monitor = Monitor([Cumulative()], classes=[0, 1])
    for call in (lambda: monitor.update(0, 0.73), lambda: monitor.update_many([0, 1], [0.2, 0.9]),
                 lambda: monitor.update_many(np.array([0, 1]), np.array([0.2, 0.9]))):
        with pytest.raises(ValueError, match="looks like a score: threshold it first"):
            call()
    assert monitor.samples == 0 and monitor.labels == (0, 1)


def test_whole_floats_bool_and_numpy_scalars_are_the_int_classes() -> None:
    """1.0, True and numpy.int64(1) count as class 1 (dict-key equality, documented): a float column of whole
    numbers (pandas' int column with gaps) gives the same counts as the int column, recounted by hand."""
    ints, floats = Monitor([Cumulative()], classes=[0, 1]), Monitor([Cumulative()], classes=[0, 1])
    truth, preds = [0, 1, 1, 0, 1], [0, 1, 0, 0, 1]
    ints.update_many(truth, preds)
    floats.update_many(np.array(truth, float), np.array(preds, float))
    floats.update(True, np.int64(1))
    assert floats.labels == (0, 1)
    cells = floats.counts()["cumulative"].cells()
    assert cells == {(0, 0): 2, (1, 1): 3, (1, 0): 1}  # recount: (0,0)×2, (1,1)×2 + the bool sample, (1,0)×1
    assert ints.counts()["cumulative"].cells() == {(0, 0): 2, (1, 1): 2, (1, 0): 1}


@pytest.mark.parametrize(("declared", "batch"), [
    ({"reference": {"legit": 9, "fraud": 1}}, ([0, 1], [0, 1])),
    ({"classes": [0, 1]}, (["0", "1"], ["1", "1"])),
    ({"classes": [0, 1]}, (np.array(["0", "1"]), np.array(["1", "1"]))),
    ({"reference": {"legit": 9, "fraud": 1}}, (np.array([False, True]), np.array([True, True]))),
])
def test_labels_sharing_no_type_with_the_declared_classes_are_refused(declared: dict, batch: tuple) -> None:
    """Issue 13 §3: a batch of ints against str classes (or the reverse) is refused, both sets in the message."""
    monitor = Monitor([Cumulative()], **declared)
    before = _state(monitor)
    with pytest.raises(ValueError, match="share no type with the declared classes") as caught:
        monitor.update_many(*batch)
    assert str(monitor.labels[0]) in str(caught.value) and _state(monitor) == before
    with pytest.raises(ValueError, match="share no type"):
        monitor.update(batch[0][0], batch[1][0])
    assert _state(monitor) == before


def test_a_mixed_batch_sharing_a_type_may_add_classes_but_not_two_with_one_exported_name() -> None:
    """A new int class next to the declared str ones is allowed; "1" and 1 would share class="1" and are refused."""
    monitor = Monitor([Cumulative()], classes=["a", "b"])
    monitor.update_many(["a", 7], ["b", 7])
    assert monitor.labels == ("a", "b", 7)
    for pair in (("7", "a"), (True, "a")):
        monitor_before = _state(monitor)
        if pair[0] is True:
            monitor.update("True", "a")  # fine alone: the name 'True' is free
            monitor_before = _state(monitor)
            with pytest.raises(ValueError, match="exported as class='True'"):
                monitor.update(True, "a")
        else:
            with pytest.raises(ValueError, match="exported as class='7'"):
                monitor.update(*pair)
        assert _state(monitor) == monitor_before


def test_an_over_cap_batch_is_refused_after_at_most_cap_label_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12 §4: 60 000 distinct new labels against max_classes=256 are refused after validating no more than
    the cap's worth of labels (the old code scanned the batch once per pending label: quadratic)."""
    calls = 0
    original = counts.check_label

    def counting(label: Any) -> Any:
        nonlocal calls
        calls += 1
        return original(label)

    monkeypatch.setattr(counts, "check_label", counting)
    monkeypatch.setattr("streammon.counting.labels.check_label", counting)
    for make in (lambda n: np.array([f"c{i}" for i in range(n)]), lambda n: np.arange(n) * 7,
                 lambda n: np.array([f"c{i}" for i in range(n)], dtype=object)):
        calls = 0
        monitor = Monitor([Cumulative()])
        with pytest.raises(ValueError, match="too many classes"):
            monitor.update_many(make(60_000), make(60_000))
        assert calls <= 2 * (monitor.max_classes + 1)
        assert monitor.samples == 0 and monitor.labels == ()


def test_new_labels_in_a_batch_get_first_seen_order_like_one_by_one() -> None:
    """The linear first-seen ordering equals the order of one-by-one updates (true then pred, sample by sample)."""
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 40, 500).astype(str)
    preds = rng.integers(0, 40, 500).astype(str)
    one_by_one = ClassIndex(max_classes=100)
    for t, p in zip(truth.tolist(), preds.tolist(), strict=True):
        one_by_one.register([t, p])
    batched = Monitor([Cumulative()], max_classes=100)
    batched.update_many(truth, preds)
    assert batched.labels == one_by_one.labels


@pytest.mark.parametrize("t", [10**400, Fraction(10**400), -(10**400), math.inf, math.nan, Decimal(1), "1", True])
def test_times_out_of_range_or_of_a_wrong_type_raise_value_or_type_error(t: Any) -> None:
    """Issue 12 §3: huge ints and Fractions as t raise ValueError (not OverflowError), for update and for a scalar
    t in update_many; nothing is counted."""
    monitor = _monitor()
    before = _state(monitor)
    with pytest.raises((ValueError, TypeError)):
        monitor.update("a", "a", t=t)
    with pytest.raises((ValueError, TypeError)):
        monitor.update_many(["a"], ["a"], t=t)
    with pytest.raises((ValueError, TypeError)):
        monitor.update_many(["a"], ["a"], t=np.array([t], dtype=object))
    assert _state(monitor) == before


def test_timed_buckets_too_fine_for_int64_ids_are_refused_at_construction() -> None:
    """Issue 12 §3: Timed(1e-4, buckets=1000) made bucket ids overflow int64 at t=1e12 after other windows counted
    the sample; such a window is refused when built, and the finest allowed one takes t=1e12 in every window."""
    with pytest.raises(ValueError, match="too fine"):
        Timed(1e-4, buckets=1000)
    monitor = Monitor([Cumulative(), Timed(1e-4, buckets=400)])
    monitor.update("a", "a", t=1e12)
    monitor.update_many(["a", "b"], ["a", "b"], t=1e12)
    assert {name: c.n for name, c in monitor.counts().items()} == {"cumulative": 3, "timed_0.0001s": 3}


def test_trailing_nuls_survive_a_batch_as_they_survive_single_updates() -> None:
    """numpy's fixed-width str arrays drop trailing NULs: a list of such labels must not lose them (the oracle:
    the same labels one ``update`` at a time)."""
    truth, preds = ["a\x00\x00", "\x00", "a", "b\x00"], ["b\x00", "a", "a\x00\x00", "\x00"]
    one, batch = Monitor([Cumulative()]), Monitor([Cumulative()])
    for y, p in zip(truth, preds, strict=True):
        one.update(y, p)
    batch.update_many(truth, preds)
    assert batch.labels == one.labels == ("a\x00\x00", "b\x00", "\x00", "a")
    assert batch.counts()["cumulative"].to_dict() == one.counts()["cumulative"].to_dict()
