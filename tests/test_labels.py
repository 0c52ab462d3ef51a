"""Batch label mapping (the numpy fast paths) equals mapping each label with the class index's dict."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streammon import Cumulative, Monitor
from streammon.counting.counts import ClassIndex
from streammon.counting.labels import code_labels, map_labels

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint64", "bool"]


def _one_by_one(truth: list, preds: list, index: ClassIndex) -> tuple[list[int], list[int], list]:
    """What update would do sample by sample: look up, else register in first-seen order."""
    ids = dict(index.ids)
    new: list = []
    out_t, out_p = [], []
    for y, p in zip(truth, preds, strict=True):
        for label, out in ((y, out_t), (p, out_p)):
            if label not in ids:
                ids[label] = len(ids)
                new.append(label)
            out.append(ids[label])
    return out_t, out_p, new


@settings(max_examples=200, deadline=None)
@given(
    registered=st.lists(st.integers(-3, 12), unique=True, max_size=8),
    dtype=st.sampled_from(DTYPES),
    values=st.lists(st.tuples(st.integers(-3, 12), st.integers(-3, 12)), max_size=60),
)
def test_integer_arrays_map_like_the_dict(registered: list[int], dtype: str, values: list) -> None:
    """Any registration order (identity 0..K-1 or not), any integer dtype, negative and unknown labels."""
    if dtype == "bool":
        values = [(bool(t % 2), bool(p % 2)) for t, p in values]
        registered = list(dict.fromkeys(bool(r % 2) for r in registered))
    elif dtype.startswith("u"):
        values = [(abs(t), abs(p)) for t, p in values]
        registered = list(dict.fromkeys(abs(r) for r in registered))
    if not values:
        return
    index = ClassIndex(registered)
    truth = np.array([t for t, _ in values], dtype=dtype)
    preds = np.array([p for _, p in values], dtype=dtype)
    true_idx, pred_idx, new = map_labels(truth, preds, index)
    expected_t, expected_p, expected_new = _one_by_one(truth.tolist(), preds.tolist(), index)
    assert true_idx.tolist() == expected_t
    assert pred_idx.tolist() == expected_p
    assert new == expected_new
    codes_t, codes_p, lut, coded_new = code_labels(truth, preds, index)
    assert coded_new == expected_new
    as_index = (lambda c: c) if lut is None else (lambda c: lut[c])
    assert as_index(codes_t).tolist() == expected_t
    assert as_index(codes_p).tolist() == expected_p
    assert len(index) == len(registered)  # mapping registers nothing


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_strided_and_identity_arrays_count_exactly(dtype: str) -> None:
    """A strided view and labels 0..K-1 registered in order (the one-pass path) are counted exactly;
    a label outside 0..K-1 still registers as a new class."""
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 5, 2_000).astype(dtype)[::2]
    preds = rng.integers(0, 5, 2_000).astype(dtype)[::2]
    monitor = Monitor([Cumulative()], classes=range(5))
    monitor.update_many(truth, preds)
    expected = np.zeros((5, 5), np.int64)
    np.add.at(expected, (truth.astype(int), preds.astype(int)), 1)
    assert np.array_equal(monitor.counts()["cumulative"].matrix, expected)
    monitor.update_many(np.array([7], dtype=dtype), np.array([0], dtype=dtype))
    assert monitor.labels == (0, 1, 2, 3, 4, 7)


def test_labels_registered_out_of_order_are_counted_over_codes_exactly() -> None:
    """Labels 0..K-1 first seen in a scrambled order (no lookup per sample: counts are permuted) give the
    windows, the warm-up reference and the lifetime totals exactly what a recount gives."""
    from streammon import Sliding, Timed

    rng = np.random.default_rng(5)
    for k in (3, 12, 40):
        order = rng.permutation(k)
        truth = np.concatenate([order, rng.integers(0, k, 5_000)])
        preds = np.concatenate([order[::-1], rng.integers(0, k, 5_000)])
        monitor = Monitor([Cumulative(), Sliding(700), Timed(60, buckets=3)], warmup=2_000)
        monitor.update_many(truth[:k], preds[:k], t=0.0)  # registers in the scrambled order
        assert monitor.labels[:2] == (int(order[0]), int(order[-1]))
        times = np.linspace(0.0, 90.0, len(truth) - k)
        monitor.update_many(truth[k:], preds[k:], t=times)
        labels = list(monitor.labels)
        for name, lo in (("cumulative", 0), ("sliding_700", len(truth) - 700)):
            expected = np.zeros((k, k), np.int64)
            np.add.at(expected, ([labels.index(v) for v in truth[lo:]], [labels.index(v) for v in preds[lo:]]), 1)
            assert np.array_equal(monitor.counts()[name].matrix, expected), (k, name)
        live = k + np.flatnonzero(times >= 40.0)  # buckets of 20 s: the window at t=90 keeps [40, 100)
        expected = np.zeros((k, k), np.int64)
        np.add.at(expected, ([labels.index(v) for v in truth[live]], [labels.index(v) for v in preds[live]]), 1)
        assert np.array_equal(monitor.counts()["timed_60s"].matrix, expected), k
        warm = np.bincount([labels.index(v) for v in truth[:2_000]], minlength=k)
        assert [monitor.reference.priors[label] for label in labels] == pytest.approx(warm / 2_000)


def test_sliding_window_with_a_cap_that_is_not_a_power_of_two() -> None:
    """max_classes=6 gives cell ids of stride 6 while the count matrices grow to 8×8 (found by the fuzzer)."""
    from streammon import Sliding

    monitor = Monitor([Sliding(3)], max_classes=6)
    monitor.update_many(list("abcde"), list("edcba"))
    assert monitor.counts()["sliding_3"].to_dict() == {"c": {"c": 1}, "d": {"b": 1}, "e": {"a": 1}}
