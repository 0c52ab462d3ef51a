"""The counting layer against independent recounts and its written rules: exact counts, boundaries, messages.

Written to kill mutants of ``streammon/counting/`` (``bash .ci/mutation counting``).
"""

from __future__ import annotations

import math
import os
import re
import time
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import numpy as np
import pytest

from streammon.counting.batch import CHUNK, Batch, chunk_bounds, count_pairs
from streammon.counting.counts import ClassIndex, ConfusionCounts, is_missing, show
from streammon.counting.labels import as_label_array, map_labels
from streammon.counting.timing import MAX_TIME, as_seconds, as_times, check_time, check_times, clock_time
from streammon.counting.windows import Cumulative, Sliding, Timed


def test_evict_removes_exactly_what_it_is_asked_to_and_refuses_more() -> None:
    """evict(t, p, n) leaves count - n in the cell; all of it may go; more, or an unknown label, raises."""
    c = ConfusionCounts()
    c.add("a", "b", count=3)
    c.add("b", "b")
    c.evict("a", "b")
    assert c.to_dict() == {"a": {"b": 2}, "b": {"b": 1}}
    c.evict("a", "b", count=2)  # everything there is: allowed
    assert c.to_dict() == {"b": {"b": 1}}
    with pytest.raises(ValueError, match=r"cannot evict 1 sample\(s\) of \(true='a', pred='b'\): only 0 counted"):
        c.evict("a", "b")
    for t, p in (("zzz", "b"), ("b", "zzz"), ("zzz", "yyy")):  # never counted: nothing to evict
        with pytest.raises(ValueError, match=r"only 0 counted"):
            c.evict(t, p)
    assert c.to_dict() == {"b": {"b": 1}} and c.n == 1


def test_merge_and_subtract_are_exact_beyond_float_precision_and_beyond_the_default_class_cap() -> None:
    """Counts past 2**53 merge exactly (integers, not floats); merging needs no default max_classes cap."""
    big = 2**53 + 1
    a = ConfusionCounts(["x", "y"], [[big, 0], [0, 1]])
    b = ConfusionCounts(["y", "z"], [[2, 0], [0, big]])
    total = a + b
    assert total.cells() == {("x", "x"): big, ("y", "y"): 3, ("z", "z"): big}
    assert (total - b).cells() == a.cells() and (total - a).cells() == b.cells()
    many = ConfusionCounts([f"c{i}" for i in range(200)])
    more = ConfusionCounts([f"d{i}" for i in range(100)], np.eye(100, dtype=np.int64))
    merged = many + more
    assert len(merged.labels) == 300 and merged.n == 100
    with pytest.raises(ValueError, match=r"^cannot subtract counts that were never added \(a cell would go below 0\)$"):
        a - b


def test_is_missing_handles_values_that_refuse_to_compare() -> None:
    """A signalling Decimal NaN is missing; an array (ambiguous truth) and a plain Decimal are not."""
    assert is_missing(Decimal("sNaN")) is True
    assert is_missing(Decimal("1.5")) is False
    assert is_missing(np.array([1, 2])) is False


def test_float_labels_are_whole_numbers_within_int64_or_refused_naming_the_first_bad_one() -> None:
    """Whole floats become ints; a fraction, 2**63 itself or NaN is refused, the message naming its position."""
    assert as_label_array(np.array([1.0, -3.0, 2.0**62]), "y").tolist() == [1, -3, 2**62]
    with pytest.raises(ValueError, match=r"label 0\.5 is a float that is not a whole number"):
        as_label_array(np.array([0.5]), "y")
    with pytest.raises(ValueError, match=r"label 0\.5 is a float that is not a whole number"):
        as_label_array(np.array([1.0, 0.5, 0.25]), "y")
    for bound in (2.0**63, -(2.0**63)):
        with pytest.raises(ValueError, match="out of range"):
            as_label_array(np.array([1.0, bound]), "y")
    with pytest.raises(ValueError, match=r"^y_true\[1\] is missing \(NaN, None or NA\)"):
        as_label_array(np.array([1.0, np.nan, np.nan]), "y_true")


def _utc(*args: int) -> float:
    return datetime(*args, tzinfo=timezone.utc).timestamp()


def test_datetime64_arrays_of_every_unit_are_unix_seconds() -> None:
    """Year and month units are calendar dates (converted through days); other units scale by their step."""
    assert as_times(np.array(["2024", "2025"], "datetime64[Y]"), 2).tolist() == [_utc(2024, 1, 1), _utc(2025, 1, 1)]
    months = np.array(["2024-01", "2024-02", "2024-03"], "datetime64[M]")
    assert as_times(months, 3).tolist() == [_utc(2024, 1, 1), _utc(2024, 2, 1), _utc(2024, 3, 1)]
    assert as_times(np.array([1500], "datetime64[ms]"), 1).tolist() == [1.5]
    assert as_times(np.array([3], "datetime64[25ms]"), 1)[0] == pytest.approx(0.075)
    assert as_times(np.array([2], "datetime64[m]"), 1).tolist() == [120.0]
    times = as_times(np.array(["NaT", "2024-01-01"], "datetime64[s]"), 2)
    assert times.dtype == np.float64 and np.isnan(times[0]) and times[1] == _utc(2024, 1, 1)


def test_a_batch_of_new_str_labels_matches_declared_str_classes() -> None:
    """A NumPy str batch is of kind 'str': its new labels join declared str classes; an int batch does not."""
    index = ClassIndex(["legit", "fraud"])
    index.declare()
    true, pred, new = map_labels(np.array(["chargeback", "legit"]), np.array(["legit", "spam"]), index)
    assert new == ["chargeback", "spam"] and true.tolist() == [2, 0] and pred.tolist() == [0, 3]
    with pytest.raises(ValueError, match=r"share no type with the declared classes"):
        map_labels(np.array([7, 8]), np.array([7, 8]), index)
    numbers = ClassIndex([0, 1])
    numbers.declare()
    assert map_labels(np.array([2, 0]), np.array([True, False]), numbers)[2] == [2]


def test_reprs_name_the_parameters() -> None:
    """Windows and counts print as their constructor call / labels and n."""
    assert repr(Sliding(5)) == "Sliding(name='sliding_5', size=5)"
    assert repr(Timed(60, buckets=6)) == "Timed(name='timed_60s', seconds=60.0, buckets=6)"
    assert repr(Cumulative()) == "Cumulative(name='cumulative')"
    assert repr(ConfusionCounts(["a", "b"], [[1, 2], [0, 3]])) == "ConfusionCounts(labels=['a', 'b'], n=6)"


class _Repr:
    def __init__(self, text: str | None) -> None:
        self.text = text

    def __repr__(self) -> str:
        if self.text is None:
            raise RuntimeError("no repr")
        return self.text


def test_show_keeps_error_messages_short_at_its_exact_limits() -> None:
    """Ints over 64 bits, str over 40 characters and reprs over 80 characters are shortened; at the limit, not."""
    assert show(2**64) == "<an int of 65 bits>"
    assert show(2**64 - 1) == repr(2**64 - 1)  # 64 bits: shown whole
    assert show(True) == "True"
    forty, forty_one = "x" * 40, "y" * 41
    assert show(forty) == repr(forty)
    assert show(forty_one) == f"{'y' * 40!r}… (41 characters)"
    assert show(_Repr("r" * 80)) == "r" * 80
    assert show(_Repr("r" * 81)) == "r" * 77 + "..."
    assert show(_Repr(None)) == "<_Repr>"


def test_add_counts_exactly_with_one_new_label_on_either_side() -> None:
    """add() with the true, the predicted or both labels new registers them and adds to one cell only."""
    c = ConfusionCounts()
    c.add("a", "a")
    c.add("a", "b")  # new predicted label
    c.add("c", "a", count=2)  # new true label
    c.add("a", "b")
    c.add("b", "b", count=0)  # counts nothing, both known
    assert c.to_dict() == {"a": {"a": 1, "b": 2}, "c": {"a": 2}} and c.labels == ("a", "b", "c")
    assert c.matrix.dtype == np.int64 and c.n == 5
    c.add("a", "a", count=2**53 + 1)
    assert c.to_dict()["a"]["a"] == 2**53 + 2  # integers, not floats, after growing
    c.add("a", "a", count=np.int64(3))
    assert c.to_dict()["a"]["a"] == 2**53 + 5


@pytest.mark.parametrize("count", [-1, True, False, 1.0, "2", None])
def test_counts_must_be_ints_of_at_least_zero(count: object) -> None:
    """add and evict take int counts >= 0 (not bool, not float), saying what they got."""
    c = ConfusionCounts(["a"], [[5]])
    for method in (c.add, c.evict):
        with pytest.raises(ValueError, match=rf"^count must be an int >= 0, got {re.escape(repr(count))}$"):
            method("a", "a", count)  # type: ignore[operator]
    assert c.to_dict() == {"a": {"a": 5}}


def test_check_time_accepts_exactly_the_bounds_and_says_what_it_refused() -> None:
    """Times within ±MAX_TIME, the bounds included, pass; beyond, the message names the time given."""
    assert check_time(-MAX_TIME, last=-math.inf) == -MAX_TIME
    assert check_time(MAX_TIME, last=0.0) == MAX_TIME
    with pytest.raises(ValueError, match=r"^t must be finite seconds within ±1e\+12, got 10000000000000\.0$"):
        check_time(1e13, last=0.0)
    with pytest.raises(ValueError, match=r"^t must be finite seconds within ±1e\+12, got -1000000000001$"):
        check_time(-(10**12) - 1, last=-math.inf)


def _saved_sliding(size: int, true: list[int], pred: list[int], stride: int = 4) -> tuple[Sliding, dict]:
    w = Sliding(size)
    w.attach(stride, stride)
    w.ingest(Batch(np.array(true, np.intp), np.array(pred, np.intp), None, stride))
    return w, w.state()


def _restored(size: int, state: dict, stride: int = 4) -> Sliding:
    w = Sliding(size)
    w.attach(stride, stride)
    w.restore(state)
    return w


def test_sliding_restore_takes_full_and_partial_rings_back_exactly() -> None:
    """A saved ring, full (filled == size) or not, restores to the same counts and keeps sliding the same."""
    for true, pred in (([0, 1, 2], [0, 2, 2]), ([0, 1, 2, 3, 3], [1, 1, 3, 3, 0])):
        w, state = _saved_sliding(3, true, pred)
        again = _restored(3, state)
        assert again.snapshot(None).tolist() == w.snapshot(None).tolist()
        for window in (w, again):
            window.ingest(Batch(np.array([3], np.intp), np.array([3], np.intp), None, 4))
        assert again.snapshot(None).tolist() == w.snapshot(None).tolist()
    assert state["filled"] == 3


@pytest.mark.parametrize(("change", "message"), [
    ({"ring": [0, 0]}, "does not fit a window of 3"),
    ({"head": 3}, "does not fit a window of 3"),
    ({"head": -1}, "does not fit a window of 3"),
    ({"filled": 4}, "does not fit a window of 3"),
    ({"filled": -1}, "does not fit a window of 3"),
    ({"ring": [0, 5, -1]}, "holds cell ids outside the class range"),
    ({"ring": [0, 5, 16]}, "holds cell ids outside the class range"),
    ({"ring": [0, 5, 15]}, "do not match its ring"),
])
def test_sliding_restore_refuses_a_ring_that_does_not_fit_naming_the_window(change: dict, message: str) -> None:
    """Ring shape, head in [0, size), filled in [0, size], cell ids in [0, stride²) and counts are all checked."""
    _, state = _saved_sliding(3, [0, 1, 2], [0, 1, 2])
    with pytest.raises(ValueError, match=rf"^saved (ring|counts) of 'sliding_3' {message}"):
        _restored(3, {**state, **change})


def test_timed_window_keeps_expiring_buckets_after_growing() -> None:
    """Counts added before the window grew still leave it when their bucket expires."""
    w = Timed(10, buckets=2)
    w.attach(4, 2)
    w.ingest(Batch(np.array([0, 1], np.intp), np.array([0, 0], np.intp), 1.0, 4))
    w.grow(3)
    w.ingest(Batch(np.array([2], np.intp), np.array([2], np.intp), 6.0, 4))
    assert w.snapshot(6.0).tolist() == [[1, 0, 0], [1, 0, 0], [0, 0, 1]]
    assert w.snapshot(12.0).tolist() == [[0, 0, 0], [0, 0, 0], [0, 0, 1]]
    assert w.snapshot(30.0).tolist() == [[0, 0, 0]] * 3


def test_nested_labels_are_refused_naming_their_position() -> None:
    """A list holding a non-scalar among labels is refused with the item and its position."""
    with pytest.raises(ValueError, match=r"^labels must be scalars \(one per sample\), got \[1, 2\] at position 0$"):
        as_label_array([[1, 2], [3, 4]], "y")


def _saved_timed() -> tuple[Timed, dict]:
    w = Timed(10, buckets=2)
    w.attach(3, 3)
    w.ingest(Batch(np.array([0, 1, 2], np.intp), np.array([0, 0, 2], np.intp), np.array([1.0, 2.0, 6.0]), 3))
    return w, w.state()


def _restored_timed(state: dict) -> Timed:
    w = Timed(10, buckets=2)
    w.attach(3, 3)
    w.restore(state)
    return w


def test_timed_restore_takes_buckets_back_and_keeps_expiring_them() -> None:
    """A restored timed window holds the same counts and drops the same buckets as time moves on."""
    w, state = _saved_timed()
    again = _restored_timed(state)
    expected = {6.0: [[1, 0, 0], [1, 0, 0], [0, 0, 1]], 11.0: [[0, 0, 0], [0, 0, 0], [0, 0, 1]], 30.0: [[0] * 3] * 3}
    for now, counts in expected.items():
        assert again.snapshot(now).tolist() == w.snapshot(now).tolist() == counts
    fresh = _restored_timed(_saved_timed()[1])
    fresh.ingest(Batch(np.array([1], np.intp), np.array([1], np.intp), 12.0, 3))
    assert fresh.snapshot(12.0).tolist() == [[0, 0, 0], [0, 1, 0], [0, 0, 1]]


@pytest.mark.parametrize(("change", "message"), [
    ({"ids": [0]}, r"saved buckets of 'timed_10s' do not fit 2 buckets"),
    ({"slots": [None]}, r"saved buckets of 'timed_10s' do not fit 2 buckets"),
    ({"counts": {"cells": [0, 3], "counts": [1, 1]}}, r"saved counts of 'timed_10s' do not match its buckets"),
    ({"counts": {"cells": [0, 9], "counts": [1, 1]}},  # a cell of a 4×4 matrix, beyond this window's 3×3
     r"a saved count matrix must hold cells in \[0, 9\) with counts > 0, sorted and unique"),
    ({"counts": {"cells": [0, 3, 8], "counts": [1, 1, -1]}},
     r"a saved count matrix must hold cells in \[0, 9\) with counts > 0, sorted and unique"),
    ({"counts": [[1, 0, 0], [1, 0, 0], [0, 0, 1]]}, r"a saved count matrix must be its non-zero cells and counts, "
                                                    r"got list"),
])
def test_timed_restore_refuses_what_does_not_fit(change: dict, message: str) -> None:
    """Bucket ids and slots must number `buckets`; counts must be cells of a K×K matrix, > 0, stored sparse, and the
    sum of the slots."""
    _, state = _saved_timed()
    with pytest.raises(ValueError, match=rf"^{message}$"):
        _restored_timed({**state, **change})


@pytest.mark.parametrize("times", [[1.0, 6.0, 7.0], [1.0, 2.0, 6.0], [4.0, 5.0, 9.0, 10.0], [6.0, 7.0, 9.5], [3.0]])
def test_a_timed_batch_spanning_buckets_fills_each_sample_s_bucket(times: list[float]) -> None:
    """Each sample of a batch lands in the bucket of its own time, in one bucket or wherever the bucket changes."""
    n = len(times)
    w = Timed(10, buckets=2)  # buckets of 5 s
    w.attach(2, 2)
    w.ingest(Batch(np.zeros(n, np.intp), np.zeros(n, np.intp), np.array(times), 2))
    last_bucket = math.floor(times[-1] / 5)
    for now in (times[-1], (last_bucket + 1) * 5.0, (last_bucket + 2) * 5.0):
        # the window at `now` holds the buckets after now's bucket minus 2
        kept = sum(math.floor(t / 5) > math.floor(now / 5) - 2 for t in times)
        assert w.snapshot(now).tolist() == [[kept, 0], [0, 0]], (times, now)
    with pytest.raises(ValueError, match=r"^timed window 'timed_10s' needs sample times$"):
        w.ingest(Batch(np.zeros(1, np.intp), np.zeros(1, np.intp), None, 2))


def test_as_times_refuses_the_wrong_shape_or_type_saying_which() -> None:
    """One time per sample, of numbers or datetimes; the message names the size, shape, position or dtype."""
    with pytest.raises(ValueError, match=r"^t must be None, a scalar or one time per sample \(3\), got shape \(2,\)$"):
        as_times([1.0, 2.0], 3)
    with pytest.raises(ValueError, match=r"one time per sample \(2\), got shape \(2, 1\)$"):
        as_times([[1.0], [2.0]], 2)
    with pytest.raises(TypeError, match=r"^t\[1\] must be a real number of seconds, a datetime or None, got 'x'$"):
        as_times(np.array([1.0, "x"], dtype=object), 2)
    with pytest.raises(TypeError, match=r"^t must hold real numbers of seconds or datetimes, got dtype <U1$"):
        as_times(np.array(["a", "b"]), 2)
    mixed = as_times(np.array([1, 2.5, datetime(1970, 1, 1, 0, 1, tzinfo=timezone.utc)], dtype=object), 3)
    assert mixed.dtype == np.float64 and mixed.tolist() == [1.0, 2.5, 60.0]


@pytest.mark.parametrize(("args", "error", "message"), [
    ((True,), TypeError, r"Timed seconds must be a number, got True"),
    (("10",), TypeError, r"Timed seconds must be a number, got '10'"),
    ((10**12 + 1,), ValueError, r"Timed seconds must be finite and > 0, got an int of 40 bits"),
    ((-(10**12),), ValueError, r"Timed seconds must be finite and > 0, got -1000000000000"),
    ((0,), ValueError, r"Timed seconds must be finite and > 0, got 0"),
    ((math.inf,), ValueError, r"Timed seconds must be finite and > 0, got inf"),
    ((10, 0), ValueError, r"Timed buckets must be an int >= 1, got 0"),
    ((10, True), ValueError, r"Timed buckets must be an int >= 1, got True"),
    ((10, 2.0), ValueError, r"Timed buckets must be an int >= 1, got 2\.0"),
    ((2e-7, 2), ValueError, r"Timed buckets of 1e-07 s \(2e-07 s / 2\) are too fine: bucket ids of times within "
                            r"±1e\+12 s must fit int64, so a bucket must last >= 2\.2e-07 s"),
])
def test_timed_parameters_are_refused_with_their_reason(args: tuple, error: type, message: str) -> None:
    """Timed(seconds, buckets) checks type, range (the int bound included) and bucket width, saying why."""
    with pytest.raises(error, match=rf"^{message}$"):
        Timed(*args[:1], **({"buckets": args[1]} if len(args) > 1 else {}))


def test_timed_accepts_the_extremes_of_its_parameters() -> None:
    """seconds = 10**12 (an int at the bound), one bucket, and buckets just wide enough are accepted."""
    assert Timed(10**12).seconds == 1e12
    assert Timed(10, buckets=1).width == 10.0
    widest_refused = MAX_TIME / 2**62  # a bucket this wide gives ids up to 2**62: refused
    if MAX_TIME / widest_refused == 2**62:
        with pytest.raises(ValueError, match="too fine"):
            Timed(widest_refused, buckets=1)
    with pytest.raises(ValueError, match="too fine"):
        Timed(MAX_TIME / 2**62.5, buckets=1)  # ids up to 2**62.5: beyond 2**62, below 2**63
    assert Timed(math.nextafter(widest_refused, 1.0) * 2, buckets=2).buckets == 2


def test_count_pairs_is_int64_and_exact_on_both_sides_of_a_chunk() -> None:
    """count_pairs gives int64 counts equal to np.add.at, for CHUNK - 1, CHUNK and CHUNK + 1 samples."""
    rng = np.random.default_rng(3)
    for n in (CHUNK - 1, CHUNK, CHUNK + 1):
        true, pred = rng.integers(0, 3, n).astype(np.intp), rng.integers(0, 3, n).astype(np.intp)
        expected = np.zeros((4, 4), np.int64)
        np.add.at(expected, (true, pred), 1)
        got = count_pairs(true, pred, 4)
        assert got.dtype == np.int64 and got.tolist() == expected.tolist()


@pytest.mark.parametrize("size", [1, 3, 5])
@pytest.mark.parametrize("lut", [None, np.array([2, 0, 3, 1])])
def test_sliding_window_equals_a_recount_of_its_last_samples(size: int, lut: np.ndarray | None) -> None:
    """After every batch (empty, shorter, as long as or longer than the window), a sliding window holds the
    counts of exactly its last `size` samples, and its saved ring restores to the same."""
    rng = np.random.default_rng(size)
    w = Sliding(size)
    w.attach(4, 4)
    seen: list[tuple[int, int]] = []
    for m in (0, 1, 1, 2, 1, 2, size, size + 2, 1, 3, 0, 2 * size, size - 1, 1):  # evicts before full too
        codes_t, codes_p = rng.integers(0, 4, m).astype(np.intp), rng.integers(0, 4, m).astype(np.intp)
        batch = Batch(codes_t, codes_p, None, 4, lut)
        w.ingest(batch)
        t, p = batch.indices()
        seen.extend(zip(t.tolist(), p.tolist(), strict=True))
        expected = np.zeros((4, 4), np.int64)
        for i, j in seen[-size:]:
            expected[i, j] += 1
        assert w.snapshot(None).tolist() == expected.tolist(), (size, m)
        again = Sliding(size)
        again.attach(4, 4)
        again.restore(w.state())
        assert again.snapshot(None).tolist() == expected.tolist()


@pytest.mark.parametrize(("size", "message"), [(0, "0"), (True, "True"), (2.0, "2.0"), ("3", "'3'")])
def test_sliding_size_is_an_int_of_at_least_one(size: object, message: str) -> None:
    """Sliding(size) takes an int >= 1 (1 included), saying what it got otherwise."""
    assert Sliding(1).size == 1
    with pytest.raises(ValueError, match=rf"^Sliding size must be an int >= 1, got {message}$"):
        Sliding(size)  # type: ignore[arg-type]


def test_batch_reads_by_range_through_its_table_and_recounts_for_a_new_capacity() -> None:
    """indices/cells honour start and stop; code_span is the table's length; delta follows the capacity asked."""
    lut = np.array([2, 0])
    b = Batch(np.array([0, 1, 1]), np.array([1, 1, 0]), None, 4, lut)
    assert [x.tolist() for x in b.indices()] == [[2, 0, 0], [0, 0, 2]]
    assert [x.tolist() for x in b.indices(1, 2)] == [[0], [0]]
    assert b.cells(1, 3).tolist() == [0 * 4 + 0, 0 * 4 + 2] and b.cells(0).tolist() == [8, 0, 2]
    assert b.cells(0, 2).tolist() == [8, 0]
    assert b.code_span(3) == 2 and Batch(np.array([0]), np.array([0]), None, 4).code_span(3) == 3
    assert b.delta(3).tolist() == [[1, 0, 1], [0, 0, 0], [1, 0, 0]]
    assert b.delta(4).shape == (4, 4) and b.delta(4)[:3, :3].tolist() == b.delta(3).tolist()


def test_as_seconds_refuses_non_numbers_and_reads_time_zones() -> None:
    """A str is refused by type; an aware datetime keeps its zone, a naive one is UTC whatever the local zone."""
    with pytest.raises(TypeError, match=r"^t must be a real number of seconds, a datetime or None, got 'x'$"):
        as_seconds("x")
    with pytest.raises(TypeError, match=r"^when must be a real number of seconds, a datetime or None, got b'1'$"):
        as_seconds(b"1", "when")
    plus_two = timezone(timedelta(hours=2))
    assert as_seconds(datetime(2024, 1, 1, 2, 0, tzinfo=plus_two)) == _utc(2024, 1, 1)
    old = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
    try:
        assert as_seconds(datetime(2024, 1, 1)) == _utc(2024, 1, 1)
        assert as_seconds(datetime(2024, 1, 1, tzinfo=plus_two)) == _utc(2024, 1, 1) - 7200
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()


def test_clock_time_clamps_and_refuses_what_is_no_time() -> None:
    """The clock's time is kept within ±MAX_TIME (bounds included), never before last; other values raise."""
    assert clock_time(-MAX_TIME, last=-math.inf) == -MAX_TIME
    assert clock_time(MAX_TIME, last=0.0) == MAX_TIME
    assert clock_time(3.0, last=5.0) == 5.0
    for bad, shown in (("x", "'x'"), (math.nan, "nan"), (2e12, "2000000000000.0")):
        with pytest.raises(ValueError, match=rf"^the clock returned {shown}: expected finite seconds within ±1e\+12$"):
            clock_time(bad, last=0.0)


@pytest.mark.parametrize(("seconds", "buckets"), [(60, 6), (1, 10), (3, 10), (1, 3), (0.7, 7)])
def test_bucket_end_is_the_first_time_of_the_next_bucket(seconds: float, buckets: int) -> None:
    """bucket_end(t) lies in the bucket after t's, and the float just below it in t's bucket (exactly)."""
    w = Timed(seconds, buckets=buckets)
    for t in [0.0, w.width / 3, w.width, 2.5 * w.width, 7 * w.width, 123.456, -2.5 * w.width]:
        bucket = math.floor(t / w.width)
        end = w.bucket_end(t)
        assert math.floor(end / w.width) == bucket + 1, (t, end)
        assert math.floor(math.nextafter(end, -math.inf) / w.width) == bucket, (t, end)


def _float(number: str) -> str:
    """A NumPy float's repr as a pattern: np.float64(x) (NumPy 2) or x (NumPy 1)."""
    return rf"(np\.float64\()?{re.escape(number)}\)?"


def test_check_times_accepts_the_bounds_and_equal_times_and_names_the_first_bad_one() -> None:
    """Per-sample times: ±MAX_TIME included, equal times allowed; a bad value, an early first time or the first
    decrease is named with its position."""
    check_times(np.array([-MAX_TIME, -MAX_TIME, 0.0, MAX_TIME]), last=-math.inf)
    check_times(np.array([5.0]), last=5.0)
    big, four, one, one_half, two = (_float(x) for x in ("2000000000000.0", "4.0", "1.0", "1.5", "2.0"))
    with pytest.raises(ValueError, match=rf"^t must be finite seconds within ±1e\+12, got {big} at position 2$"):
        check_times(np.array([0.0, 1.0, 2e12, 3e12]), last=0.0)
    with pytest.raises(ValueError, match=r"^t\[1\] is missing \(NaN or NaT\)"):
        check_times(np.array([0.0, np.nan, np.nan]), last=0.0)
    with pytest.raises(ValueError, match=rf"^t\[0\]={four} is earlier than the last sample time 5\.0: "
                                         r"sample times must never decrease$"):
        check_times(np.array([4.0, 6.0]), last=5.0)
    with pytest.raises(ValueError, match=rf"^t must never decrease, but t\[3\]={one_half} < t\[2\]={two}$"):
        check_times(np.array([1.0, 2.0, 2.0, 1.5, 1.0]), last=0.0)
    with pytest.raises(ValueError, match=rf"^t must never decrease, but t\[1\]={one} < t\[0\]={two}$"):
        check_times(np.array([2.0, 1.0]), last=0.0)


def test_labels_too_wide_for_int64_fall_back_to_objects_and_are_refused_there() -> None:
    """A list of ints one of which overflows int64 is kept as objects, so the label check names the bad one."""
    arr = as_label_array([1, 2**70], "y")
    assert arr.dtype == object and arr.tolist() == [1, 2**70]
    with pytest.raises(ValueError, match=r"^label <an int of 71 bits> is out of range"):
        map_labels(arr, np.array([1, 1], dtype=object), ClassIndex())


@pytest.mark.parametrize(("name", "error", "says"), [
    ("", ValueError, "has 0 characters: a str window name must have 1 to 256"),
    ("w" * 257, ValueError, "has 257 characters"),
    ("w\udc80", ValueError, "holds a lone surrogate"),
    (3, TypeError, r"\(int\) is not a str"),
    (None, TypeError, r"\(NoneType\) is not a str")])
def test_window_names_follow_the_label_rule(name: object, error: type[Exception], says: str) -> None:
    """A window's name follows the rule for user strings: the error's type fits, its message shows what was given."""
    shown = re.escape(repr(name) if not isinstance(name, str) or len(name) <= 40 else f"{name[:40]!r}…")
    with pytest.raises(error, match=rf"^window name {shown}.* {says}"):
        Cumulative(name=name)  # type: ignore[arg-type]


def test_only_the_leading_run_of_self_indexed_ints_skips_the_mapping() -> None:
    """With classes [0, 5, 2], only 0 is its own index: an unknown 1 or 3 is a new class, 2 maps to index 2."""
    index = ClassIndex([0, 5, 2])
    true, pred, new = map_labels(np.array([1, 0, 3]), np.array([2, 5, 1]), index)
    assert new == [1, 3] and true.tolist() == [3, 0, 4] and pred.tolist() == [2, 1, 3]


def test_chunk_bounds_cut_whole_chunks_from_zero() -> None:
    """chunk_bounds(n) cuts whole CHUNKs from 0, the last one short."""
    assert list(chunk_bounds(CHUNK)) == [(0, CHUNK)]
    assert list(chunk_bounds(CHUNK + 1)) == [(0, CHUNK), (CHUNK, CHUNK + 1)]
    assert list(chunk_bounds(0)) == []


def test_uint64_bytes_and_other_dtypes_are_refused_naming_the_problem() -> None:
    """uint64 labels must stay below 2**63 (the first one beyond is named); bytes and other dtypes are refused."""
    assert as_label_array(np.array([1, 2**63 - 1], dtype=np.uint64), "y").tolist() == [1, 2**63 - 1]
    assert as_label_array(np.array([1, 2], dtype=np.uint32), "y").tolist() == [1, 2]
    with pytest.raises(ValueError, match=r"^y\[1\] = 9223372036854775808 is out of range: int labels must be "
                                         r"within ±2\*\*63 \(int64\)$"):
        as_label_array(np.array([1, 2**63, 2**64 - 1], dtype=np.uint64), "y")
    with pytest.raises(TypeError, match=r"^y holds bytes \(\|S1\): decode them to str first, "
                                        r"e\.g\. arr\.astype\(str\)$"):
        as_label_array(np.array([b"a"]), "y")
    with pytest.raises(TypeError, match=r"^y has dtype complex128: expected class labels \(str, int or bool; "
                                        r"whole-number floats\)$"):
        as_label_array(np.array([1 + 2j]), "y")


class _ArrayOnly:
    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return np.array([1, 2])


class _FakeTable:
    column_names = ("a",)

    def __len__(self) -> int:
        return 1


def test_containers_that_would_miscount_are_refused_saying_what_to_pass() -> None:
    """A scalar, an array-like of unknown length and a table (column_names) are refused with their own reason."""
    with pytest.raises(TypeError, match=r"^y must be a sequence or 1-D array of labels, got 5$"):
        as_label_array(5, "y")
    with pytest.raises(TypeError, match=r"^y is a _ArrayOnly of unknown length: pass a list or an array"):
        as_label_array(_ArrayOnly(), "y")
    with pytest.raises(TypeError, match=r"^y is a _FakeTable \(a table, its column names would be counted\)"):
        as_label_array(_FakeTable(), "y")


def test_an_unattached_window_holds_an_empty_int_matrix() -> None:
    """Before a monitor attaches it, a window's counts are an empty 0×0 int64 matrix."""
    w = Cumulative()
    assert w.snapshot(None).shape == (0, 0) and w.snapshot(None).dtype == np.int64
    assert w.state() == {"counts": {"cells": [], "counts": []}}


@pytest.mark.parametrize("k", [2, 40])
def test_count_pairs_over_several_chunks_equals_a_recount(k: int) -> None:
    """Three chunks and a remainder: count_pairs equals np.add.at over every (true, pred) pair."""
    rng = np.random.default_rng(k)
    t, p = rng.integers(0, k, 3 * CHUNK + 77), rng.integers(0, k, 3 * CHUNK + 77)
    expected = np.zeros((k, k), np.int64)
    np.add.at(expected, (t, p), 1)
    assert np.array_equal(count_pairs(t, p, k), expected)
