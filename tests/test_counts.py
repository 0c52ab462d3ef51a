"""Confusion counts form a group under merge/evict, and the class index validates labels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from streammon import ClassIndex, ConfusionCounts

LABELS = ["a", "b", "c", "d"]


@st.composite
def counts(draw: st.DrawFn) -> ConfusionCounts:
    labels = draw(st.lists(st.sampled_from(LABELS), unique=True, max_size=4))
    k = len(labels)
    matrix = draw(st.lists(st.integers(0, 9), min_size=k * k, max_size=k * k))
    return ConfusionCounts(labels, np.array(matrix, dtype=np.int64).reshape(k, k))


@given(counts(), counts(), counts())
def test_merge_is_commutative_and_associative_with_identity(a: ConfusionCounts, b: ConfusionCounts,
                                                            c: ConfusionCounts) -> None:
    """merge is + on label-aligned counts: commutative, associative, with the empty counts as identity."""
    assert a + b == b + a
    assert (a + b) + c == a + (b + c)
    assert a + ConfusionCounts() == a
    assert (a + b).n == a.n + b.n


@given(counts(), counts())
def test_evict_undoes_merge(a: ConfusionCounts, b: ConfusionCounts) -> None:
    """(a + b) − b == a: evicting is the exact inverse of adding."""
    assert (a + b) - b == a


@given(counts())
def test_subtracting_more_than_was_added_raises(a: ConfusionCounts) -> None:
    """Counts never go below zero: subtracting anything not added raises and leaves the operand alone."""
    extra = ConfusionCounts(["z"], [[1]])
    before = a.cells()
    with pytest.raises(ValueError, match="below 0"):
        a - extra
    assert a.cells() == before


def test_add_and_evict_single_samples() -> None:
    """add/evict move one cell; evicting an uncounted cell raises without changing anything."""
    c = ConfusionCounts()
    c.add("x", "y", count=2)
    c.evict("x", "y")
    assert c.to_dict() == {"x": {"y": 1}}
    with pytest.raises(ValueError, match="only 0 counted"):
        c.evict("y", "x")
    assert c.to_dict() == {"x": {"y": 1}}


def test_class_index_validates_labels_and_cap() -> None:
    """Labels must be hashable, not None/NaN; numpy scalars become Python values; the cap is enforced."""
    idx = ClassIndex(max_classes=3)
    idx.register([np.int64(7), "a"])
    assert idx.labels == (7, "a") and type(idx.labels[0]) is int
    with pytest.raises(ValueError, match="None"):
        idx.register([None])
    with pytest.raises(TypeError, match="not a class label"):
        idx.register([{"a": 1}])
    with pytest.raises(ValueError, match="max_classes=3"):
        idx.register(["b", "c"])
    assert idx.labels == (7, "a")
    with pytest.raises(ValueError, match="max_classes"):
        ClassIndex(max_classes=1)


def test_counts_reject_bad_matrices() -> None:
    """A matrix must be K×K non-negative integers for K distinct labels."""
    with pytest.raises(ValueError, match="2×2"):
        ConfusionCounts(["a", "b"], [[1, 2, 3]])
    with pytest.raises(TypeError, match="integers"):
        ConfusionCounts(["a"], [[0.5]])
    with pytest.raises(ValueError, match=">= 0"):
        ConfusionCounts(["a"], [[-1]])
    with pytest.raises(ValueError, match="distinct"):
        ConfusionCounts(["a", "a"], [[1, 0], [0, 1]])
