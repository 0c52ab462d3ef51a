"""MCC of a float confusion matrix (an expected confusion) whose predictions sit, but for rounding, in one class."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from streammon.metrics import compute

# Predictions all in class 1 but for ~1e-15: in floats, s² − Σ pₖ² rounds to −2.3e-13 (found by a random search).
NEAR_CONSTANT = np.array([[6.025797701067091e-18, 31.718497983225674, 1.7203117273743759e-16],
                          [5.142095934355734e-16, 1.8079621999765337e-15, 6.230249802576388e-17],
                          [1.153585422665305e-17, 2.3689142889870885e-15, 1.0998561486375603e-15]])


def _exact_mcc(m: np.ndarray) -> float:
    """Gorodkin's R_K in exact rational arithmetic."""
    q = [[Fraction(float(v)) for v in row] for row in m]
    k = len(q)
    t = [sum(row) for row in q]
    p = [sum(q[i][j] for i in range(k)) for j in range(k)]
    s = sum(t)
    cov_tp = sum(q[i][i] for i in range(k)) * s - sum(a * b for a, b in zip(t, p, strict=True))
    cov_pp = s * s - sum(b * b for b in p)
    cov_tt = s * s - sum(a * a for a in t)
    return float(cov_tp) / math.sqrt(float(cov_tt) * float(cov_pp))


def test_a_near_constant_prediction_reads_undefined_not_a_math_error() -> None:
    """Where rounding makes a covariance negative (exactly it is 1e-30 of s²: below what floats resolve) MCC is
    NaN, the catalog's undefined, instead of raising ``math domain error`` inside a report."""
    s = float(NEAR_CONSTANT.sum())
    p = NEAR_CONSTANT.sum(axis=0)
    assert s * s - float(p @ p) < 0  # the rounding this test is about
    assert math.isnan(compute("mcc", NEAR_CONSTANT))


def test_a_float_matrix_resolved_by_floats_keeps_its_exact_mcc() -> None:
    """A float matrix away from that edge: MCC equals the exact rational computation."""
    m = NEAR_CONSTANT.copy()
    m[2, 2] += 0.5
    m[0, 0] += 2.0
    assert math.isclose(compute("mcc", m), _exact_mcc(m), rel_tol=1e-9)
