"""Edge cases and error paths of the pure metric functions: undefined values, boundaries, and what errors say."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given

from streammon.metrics import (
    Confusion,
    applicable,
    catalog,
    competitiveness,
    compute,
    holder_bounds,
    holder_mean,
    names,
    normalise_priors,
)
from streammon.metrics.confusion import as_matrix, divide_arrays
from tests.strategies import confusion_matrices

PARAMS = {"holder": {"p": 0.5}}


@pytest.mark.parametrize("k", [2, 3, 4])
def test_every_metric_of_an_empty_matrix_is_nan(k: int) -> None:
    """An empty window: every applicable metric (every positive class) is NaN, never 0 and never a crash."""
    empty = np.zeros((k, k))
    for name in applicable(k):
        for positive in range(k) if catalog()[name].kind != "multiclass" else [0]:
            value = compute(name, empty, positive=positive, **PARAMS.get(name, {}))
            assert math.isnan(value), (name, positive, value)


def test_one_class_present() -> None:
    """With one class present (C = 1), recall means are that recall, mAURPC-OVA is (1 + r)/2 (its one mPrecision
    is 1), AURPC-OVA is (precision + recall)/2, and AUROC-OVA/OVO, nAUROC-OVA are undefined."""
    cm = [[0, 0, 0], [1, 6, 3], [0, 0, 0]]  # only class 1 in truth; r = 0.6, precision 6/6
    for name in ("acsa", "gmean", "hmean", "min_recall", "max_recall"):
        assert compute(name, cm) == pytest.approx(0.6), name
    assert compute("maurpc_ova", cm) == pytest.approx(0.8)
    assert compute("aurpc_ova", cm) == pytest.approx(0.8)
    for name in ("auroc_ova", "auroc_ovo", "nauroc_ova"):
        assert math.isnan(compute(name, cm)), name


@given(confusion_matrices(k_min=2, k_max=2))
def test_hmnc_is_defined_whenever_both_classes_are_present(cm: np.ndarray) -> None:
    """HMNC (seed 003) is a number in [0, 1] whenever both classes have samples, and equals TP·TN·n/((TP+TN)·P·N)."""
    tp, fn, fp, tn = (float(x) for x in (cm[1, 1], cm[1, 0], cm[0, 1], cm[0, 0]))
    value = compute("hmnc", cm)
    assert 0 <= value <= 1
    expected = 0.0 if tp + tn == 0 else tp * tn * (tp + fn + fp + tn) / ((tp + tn) * (tp + fn) * (fp + tn))
    assert value == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("cm", [[[3, 1], [1, 1]], [[1, 3], [1, 1]], [[1, 1], [3, 1]]])
def test_hmnc_when_one_cell_equals_the_other_three(cm: list[list[int]]) -> None:
    """HMNC stays the seed 003 value when one cell equals the sum of the other three (no cancellation to 0/0)."""
    tn, fp, fn, tp = cm[0][0], cm[0][1], cm[1][0], cm[1][1]
    expected = tp * tn * 6 / ((tp + tn) * (tp + fn) * (fp + tn))
    assert compute("hmnc", cm) == pytest.approx(expected, abs=1e-12)


def test_holder_mean_edge_cases() -> None:
    """Empty or NaN-holding values give NaN (even with a zero beside the NaN), one value is its own mean,
    integer inputs work with integer exponents, and a NaN exponent is an error that names p."""
    for p in (-math.inf, -1, 0, 0.5, 1, math.inf):
        assert math.isnan(holder_mean([], p))
        assert math.isnan(holder_mean([0.0, math.nan], p))
        assert math.isnan(holder_mean([0.5, math.nan], p))
        assert holder_mean([0.3], p) == pytest.approx(0.3)
    assert holder_mean([1, 2], -1) == pytest.approx(4 / 3)
    assert holder_mean([1, 4], 2) == pytest.approx(math.sqrt(8.5))
    with pytest.raises(ValueError, match="Hölder exponent p must be a number"):
        holder_mean([0.5], math.nan)


def test_holder_bounds_need_an_integer_number_of_classes_of_at_least_two() -> None:
    """K must be an int ≥ 2: 1, 3.0, 2.5 and True are rejected with a message naming k."""
    for k in (1, 0, 3.0, 2.5, True):
        with pytest.raises(ValueError, match="k must be an integer number of classes >= 2"):
            holder_bounds(1, k)  # type: ignore[arg-type]
    assert holder_bounds(1, np.int64(4)) == (0.25, pytest.approx(13 / 16))


def test_competitiveness_boundaries_are_undecided() -> None:
    """Seed 001: 1/K ≤ S_p ≤ S_sup is undecided, both ends included; K < 2 is undefined."""
    assert competitiveness(0.5, p=1, k=2) == "undecided"
    assert competitiveness(0.75, p=1, k=2) == "undecided"
    assert competitiveness(0.4999, p=1, k=2) == "incompetent"
    assert competitiveness(0.7501, p=1, k=2) == "competitive"
    assert competitiveness(0.9, p=1, k=1) == "undefined"


def test_divide_arrays_broadcasts_and_marks_zero_denominators_nan() -> None:
    """Element-wise division broadcasts like numpy (a scalar denominator divides every element); x/0 is NaN."""
    assert divide_arrays(np.array([1.0, 3.0]), np.array(2.0)).tolist() == [0.5, 1.5]
    assert divide_arrays(np.array(6.0), np.array([2.0, 3.0])).tolist() == [3.0, 2.0]
    out = divide_arrays(np.array([1.0, 0.0]), np.array([0.0, 0.0]))
    assert np.isnan(out).all()


def test_matrix_validation_messages() -> None:
    """Non-numeric cells are a TypeError, infinite or negative counts a ValueError, each saying what is expected."""
    with pytest.raises(TypeError, match="confusion matrix must be a K×K array of counts"):
        as_matrix([["a", "b"], ["c", "d"]])
    with pytest.raises(ValueError, match="finite and >= 0"):
        compute("acsa", [[math.inf, 1], [1, 1]])
    with pytest.raises(ValueError, match="finite and >= 0"):
        as_matrix([[1, -1], [1, 1]])


def test_prior_validation_messages() -> None:
    """Priors must be K finite non-negative numbers, not all 0; each failure says so."""
    with pytest.raises(TypeError, match="priors must be 2 numbers"):
        normalise_priors(["a", "b"], 2)
    with pytest.raises(ValueError, match="not all 0"):
        normalise_priors([0, 0], 2)
    with pytest.raises(ValueError, match="not all 0"):
        normalise_priors([1, math.nan], 2)
    assert normalise_priors([0, 2], 2).tolist() == [0.0, 1.0]


def test_lookup_and_parameter_messages_list_what_is_valid() -> None:
    """Errors name the valid choices in full: metric names, the metrics for that K, a metric's parameters."""
    with pytest.raises(ValueError, match=r"valid names: tpr, tnr, npv, f1, "):
        compute("nope", np.eye(2))
    no_metric_for_k1 = r"^metric 'acsa' does not apply to K=1; valid for K=1: none \(K must be >= 2\)$"
    with pytest.raises(ValueError, match=no_metric_for_k1):
        compute("acsa", [[3]])
    with pytest.raises(TypeError, match=r"^metric 'tpr' got unknown parameter\(s\) \['p'\]; it takes: none$"):
        compute("tpr", np.eye(2), p=1)
    assert names() == tuple(catalog()) and len(names()) == 31


def test_positive_must_be_a_plain_int() -> None:
    """positive is an int class index: a bool or a float is a TypeError that says so."""
    for positive in (True, 1.0, "1"):
        with pytest.raises(TypeError, match=r"positive must be an int class index in \[0, 2\)"):
            compute("tpr", np.eye(2), positive=positive)  # type: ignore[arg-type]


def test_evaluate_defaults_to_the_same_positive_class_as_compute() -> None:
    """MetricSpec.evaluate without positive reads class 1 as positive, like compute."""
    cm = np.array([[5, 1], [2, 2]])
    for name in ("tpr", "precision", "iba"):
        assert catalog()[name].evaluate(Confusion.of(cm)) == compute(name, cm)
