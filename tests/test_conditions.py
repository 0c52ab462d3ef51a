"""Condition 1 (invariance under prior shift) checked numerically for every metric, and prior correction."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from streammon.metrics import applicable, catalog, compute, reweight
from tests.strategies import confusion_matrices, row_scales

PARAMS = {"holder": {"p": 0.5}}


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@given(st.data())
def test_condition1_metrics_are_invariant_under_row_rescaling(data: st.DataObject) -> None:
    """Every metric the catalog declares Condition-1 invariant reads the same after random positive row rescaling."""
    cm = data.draw(confusion_matrices(k_min=2, k_max=6))
    scaled = cm * np.array(data.draw(row_scales(cm.shape[0])))[:, None]
    for name in applicable(cm.shape[0]):
        spec = catalog()[name]
        if not spec.condition1:
            continue
        for positive in range(cm.shape[0]) if spec.kind != "multiclass" else [1]:
            before = compute(name, cm, positive=positive, **PARAMS.get(name, {}))
            after = compute(name, scaled, positive=positive, **PARAMS.get(name, {}))
            assert _same(before, after), (name, positive, before, after)


@pytest.mark.parametrize("name", [n for n, s in catalog().items() if not s.condition1])
def test_condition1_violators_move_under_some_rescaling(name: str) -> None:
    """Every metric the catalog declares not invariant changes under some row rescaling (K = 2, or 3 if multi)."""
    spec = catalog()[name]
    rng = np.random.default_rng(4)
    k = 2 if spec.binary_only else 3
    cm = rng.integers(5, 40, size=(k, k)).astype(float)
    moved = 0.0
    for _ in range(20):
        scaled = cm * rng.uniform(0.1, 10, size=k)[:, None]
        params = PARAMS.get(name, {})
        moved = max(moved, abs(compute(name, scaled, **params) - compute(name, cm, **params)))
    assert moved > 1e-3, name


@given(confusion_matrices(k_min=2, k_max=2))
def test_precision_at_uniform_priors_is_mprecision(cm: np.ndarray) -> None:
    """METRICS.md identity: precision(reweight(M, uniform)) == mprecision(M)."""
    assert _same(compute("precision", reweight(cm, [0.5, 0.5])), compute("mprecision", cm))
    assert _same(compute("aurpc", reweight(cm, [0.5, 0.5])), compute("maurpc", cm))


@given(confusion_matrices(k_min=2, k_max=6))
def test_aurpc_ova_at_uniform_priors_is_maurpc_ova(cm: np.ndarray) -> None:
    """METRICS.md identity: aurpc_ova(reweight(M, uniform)) == maurpc_ova(M)."""
    k = cm.shape[0]
    assert _same(compute("aurpc_ova", reweight(cm, np.ones(k) / k)), compute("maurpc_ova", cm))


@given(st.data())
def test_reweight_keeps_class_conditional_rates_and_sets_row_sums(data: st.DataObject) -> None:
    """reweight rescales row i to π_i·n and keeps every m_ij/n_i."""
    cm = data.draw(confusion_matrices(k_min=2, k_max=6)).astype(float)
    k = cm.shape[0]
    priors = np.array(data.draw(st.lists(st.floats(0.01, 1.0), min_size=k, max_size=k)))
    out = reweight(cm, priors)
    np.testing.assert_allclose(out.sum(axis=1), priors / priors.sum() * cm.sum())
    np.testing.assert_allclose(out / out.sum(axis=1, keepdims=True), cm / cm.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(reweight(cm, cm.sum(axis=1)), cm)  # own mix: unchanged


def test_reweight_marks_unknown_rows_nan_and_rejects_bad_priors() -> None:
    """A class with a prior but no samples has unknown rates (NaN row); bad priors raise."""
    out = reweight([[0, 0], [2, 8]], [0.3, 0.7])
    assert np.isnan(out[0]).all() and np.allclose(out[1], [1.4, 5.6])
    assert math.isnan(compute("accuracy", out))
    assert np.array_equal(reweight([[0, 0], [2, 8]], [0.0, 1.0]), [[0, 0], [2, 8]])
    with pytest.raises(ValueError, match="one weight per class"):
        reweight(np.eye(2), [1.0])
    with pytest.raises(ValueError, match="finite, >= 0"):
        reweight(np.eye(2), [-1.0, 2.0])
