"""Multi-class indices (any K ≥ 2) of seeds 001 and 004, as pure functions.

Recall-based indices average over the classes **present** (``n_i > 0``); ``C``
is their number (METRICS.md, "absent classes"). Predictions of an absent class
still count as errors of the classes present. Indices built on the whole matrix
(accuracy, MCC, kappa) use every cell.

>>> c = Confusion.of([[8, 2, 0], [1, 6, 3], [0, 0, 10]])
>>> round(acsa(c), 4), round(gmean(c), 4)
(0.8, 0.783)
>>> abs(auroc_ovo(c) - (3 / 4 * acsa(c) + 1 / 4)) < 1e-12  # seed 004, Lemma 2
True
"""

from __future__ import annotations

import math

import numpy as np

from streammon.metrics.confusion import Confusion, divide_arrays, safe_divide
from streammon.metrics.holder import holder_mean


def _present_block(c: Confusion) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The present classes' rows and columns, their row sums and column sums."""
    keep = c.present
    block = c.matrix[np.ix_(keep, keep)]
    return block, c.true_counts[keep], c.predicted_counts[keep]


def recall(c: Confusion, cls: int) -> float:
    """Recall of class ``cls``: m_ii/n_i (NaN when the class is absent)."""
    return float(c.recalls[cls])


def class_precision(c: Confusion, cls: int) -> float:
    """Precision of class ``cls``: m_ii/k_i (NaN when never predicted)."""
    return safe_divide(float(c.matrix[cls, cls]), float(c.predicted_counts[cls]))


def holder(c: Confusion, *, p: float) -> float:
    """Hölder mean of the recalls of the classes present, exponent ``p``."""
    return holder_mean(c.present_recalls(), p)


def acsa(c: Confusion) -> float:
    """Average class-specific accuracy (seed 004, α): the mean recall."""
    return holder_mean(c.present_recalls(), 1)


def gmean(c: Confusion) -> float:
    """Geometric mean of recalls (seed 004, γ_C); √(TPR·TNR) for K = 2."""
    return holder_mean(c.present_recalls(), 0)


def hmean(c: Confusion) -> float:
    """Harmonic mean of recalls (seed 001, Hölder p = −1)."""
    return holder_mean(c.present_recalls(), -1)


def min_recall(c: Confusion) -> float:
    """Minimum recall (seed 001, Hölder p = −∞)."""
    return holder_mean(c.present_recalls(), -math.inf)


def max_recall(c: Confusion) -> float:
    """Maximum recall (seed 001, Hölder p = +∞; inadequate under imbalance)."""
    return holder_mean(c.present_recalls(), math.inf)


def auroc_ovo(c: Confusion) -> float:
    """AUROC one-vs-one (seed 004, ρ_o, eq. 12), over the classes present."""
    block, n_i, _ = _present_block(c)
    size = len(n_i)
    if size < 2:
        return math.nan
    rates = block / n_i[:, None]  # row-normalised: R
    off_diagonal_in = rates.sum(axis=0) - np.diagonal(rates)  # Σ_{j≠i} m_ji/n_j
    # (Summed over i, row sums give the same total, so mutation testing's axis=1 is an equivalent mutant.)
    terms = 1 + np.diagonal(rates) - off_diagonal_in / (size - 1)
    return float(terms.sum() / (2 * size))


def _present_margins(c: Confusion) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Diagonal, true counts n_i and predicted counts k_i of the classes present."""
    keep = c.present
    return np.diagonal(c.matrix)[keep], c.true_counts[keep], c.predicted_counts[keep]


def auroc_ova(c: Confusion) -> float:
    """AUROC one-vs-all (seed 004, ρ_a, eq. 13), over the classes present."""
    diag, n_i, k_i = _present_margins(c)
    if len(diag) == 0:
        return math.nan
    terms = 1 + diag / n_i - divide_arrays(k_i - diag, c.total - n_i)
    return float(terms.sum() / (2 * len(diag)))


def nauroc_ova(c: Confusion) -> float:
    """Normalised AUROC-OVA (seed 004): (ρ_a − λ_C)/(1 − λ_C), λ_C = (C−2)/(2C)."""
    size = c.n_present
    if size == 0:
        return math.nan
    lam = (size - 2) / (2 * size)
    return (auroc_ova(c) - lam) / (1 - lam)


def aurpc_ova(c: Confusion) -> float:
    """AURPC one-vs-all (seed 004, κ_a, eq. 14): mean of (precision_i + recall_i)/2."""
    diag, n_i, k_i = _present_margins(c)
    if len(diag) == 0:
        return math.nan
    return float((divide_arrays(diag, k_i) + diag / n_i).sum() / (2 * len(diag)))


def maurpc_ova(c: Confusion) -> float:
    """mAURPC-OVA (seed 004, κ̂_a, Definition 7): precision on the row-normalised matrix."""
    block, n_i, _ = _present_block(c)
    size = len(n_i)
    if size == 0:
        return math.nan
    rates = block / n_i[:, None]
    r = np.diagonal(rates)
    m_precisions = divide_arrays(r, rates.sum(axis=0))
    return float((m_precisions + r).sum() / (2 * size))


def accuracy(c: Confusion) -> float:
    """Accuracy: Σ m_ii / n (the prior-weighted mean of recalls)."""
    return safe_divide(float(np.trace(c.matrix)), c.total)


def mcc(c: Confusion) -> float:
    """Matthews correlation coefficient, Gorodkin's R_K (scikit-learn's multi-class MCC).

    NaN when undefined (a constant truth or prediction); scikit-learn returns 0.
    """
    t, p, s = c.true_counts, c.predicted_counts, c.total
    correct = float(np.trace(c.matrix))
    cov_tp = correct * s - float(t @ p)
    # both are ≥ 0 exactly; on a float matrix (an expected confusion) whose predictions all but ~1e-15 fall in one
    # class, rounding can leave one at −1e-13: that is 0 (undefined), not a math domain error
    cov_pp = max(s * s - float(p @ p), 0.0)
    cov_tt = max(s * s - float(t @ t), 0.0)
    return safe_divide(cov_tp, math.sqrt(cov_tt * cov_pp))


def kappa(c: Confusion) -> float:
    """Cohen's kappa (seed 003, eq. 8, for any K): (p_o − p_e)/(1 − p_e)."""
    s = c.total
    if s == 0:
        return math.nan
    observed = float(np.trace(c.matrix)) / s
    expected = float(c.true_counts @ c.predicted_counts) / (s * s)
    return safe_divide(observed - expected, 1 - expected)


def macro_f1(c: Confusion) -> float:
    """Mean over the classes present of per-class F1 = 2·m_ii/(n_i + k_i)."""
    diag, n_i, k_i = _present_margins(c)
    if len(diag) == 0:
        return math.nan
    return float(divide_arrays(2 * diag, n_i + k_i).mean())
