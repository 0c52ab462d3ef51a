"""Binary (K = 2) indices of the seed papers, as pure functions of the 2×2 matrix.

``positive`` is the row/column index of the positive class (seed 004,
Property 4: the reference minority unless the user names one). ``TP, FN`` are the
positive row, ``FP, TN`` the negative row. Every ratio follows the package's
zero-division policy (NaN when undefined; see ``confusion``).

>>> c = Confusion.of([[90, 10], [20, 80]])  # class 1 positive: TP=80, FN=20
>>> tpr(c, 1), tnr(c, 1), round(precision(c, 1), 4)
(0.8, 0.9, 0.8889)
"""

from __future__ import annotations

import math

from streammon.metrics.confusion import Confusion, safe_divide
from streammon.metrics.holder import holder_mean


def cells(c: Confusion, positive: int) -> tuple[float, float, float, float]:
    """``(TP, FN, FP, TN)`` of a 2×2 matrix with ``positive`` as the positive class.

    >>> cells(Confusion.of([[5, 1], [2, 7]]), 1)
    (7.0, 2.0, 1.0, 5.0)
    """
    neg = 1 - positive
    m = c.matrix
    return (
        float(m[positive, positive]),
        float(m[positive, neg]),
        float(m[neg, positive]),
        float(m[neg, neg]),
    )


def tpr(c: Confusion, positive: int) -> float:
    """True positive rate (recall, sensitivity): TP/(TP+FN)."""
    tp, fn, _, _ = cells(c, positive)
    return safe_divide(tp, tp + fn)


def tnr(c: Confusion, positive: int) -> float:
    """True negative rate (specificity): TN/(TN+FP)."""
    _, _, fp, tn = cells(c, positive)
    return safe_divide(tn, tn + fp)


def precision(c: Confusion, positive: int) -> float:
    """Precision of the positive class: TP/(TP+FP); violates Condition 1."""
    tp, _, fp, _ = cells(c, positive)
    return safe_divide(tp, tp + fp)


def npv(c: Confusion, positive: int) -> float:
    """Negative predictive value: TN/(TN+FN)."""
    _, fn, _, tn = cells(c, positive)
    return safe_divide(tn, tn + fn)


def f1(c: Confusion, positive: int) -> float:
    """F1 of the positive class, as 2TP/(2TP+FP+FN).

    Equal to ``2·precision·tpr/(precision+tpr)`` wherever that is defined, and
    0 (not NaN) when the model never predicts a positive that exists: then
    TP = 0 and the score is truly 0. NaN only with no positive in truth or
    predictions.
    """
    tp, fn, fp, _ = cells(c, positive)
    return safe_divide(2 * tp, 2 * tp + fp + fn)


def balanced_accuracy(c: Confusion, positive: int) -> float:
    """(TPR + TNR)/2, the single-point AUROC of seeds 000 and 004."""
    return (tpr(c, positive) + tnr(c, positive)) / 2


def informedness(c: Confusion, positive: int) -> float:
    """Bookmaker informedness: TPR + TNR − 1."""
    return tpr(c, positive) + tnr(c, positive) - 1


def dominance(c: Confusion, positive: int) -> float:
    """Dominance (seed 000): TPR − TNR."""
    return tpr(c, positive) - tnr(c, positive)


def iba(c: Confusion, positive: int, *, alpha: float, squared: bool) -> float:
    """Index of balanced accuracy (seed 000): (1 + α·dominance)·M.

    ``M`` is the G-mean, or its square with ``squared=True`` (imbalanced-learn's
    ``make_index_balanced_accuracy`` defaults: α = 0.1, squared). The defaults
    (seed 000: α = 0.05, M = G-mean) are the catalog's, in ``specs``.
    """
    g = holder_mean([tpr(c, positive), tnr(c, positive)], 0)
    m = g * g if squared else g
    return (1 + alpha * dominance(c, positive)) * m


def optimized_precision(c: Confusion, positive: int) -> float:
    """Optimized precision (seed 000): accuracy − |TNR − TPR|/(TNR + TPR)."""
    tp, fn, fp, tn = cells(c, positive)
    a, b = tpr(c, positive), tnr(c, positive)
    return safe_divide(tp + tn, tp + fn + fp + tn) - safe_divide(abs(b - a), b + a)


def ac_score(c: Confusion, positive: int) -> float:
    """AC-score (seed 002): the harmonic mean of TPR and TNR."""
    return holder_mean([tpr(c, positive), tnr(c, positive)], -1)


def hmnc(c: Confusion, positive: int) -> float:
    """HMNC (seed 003, eqs. 10–11): TP·TN·n/((TP+TN)·P·N).

    Computed as seed 003's eq. 10, ``HM(TP/n, TN/n)/HM(P/n, N/n)``, so that
    TP = TN = 0 gives 0 (the harmonic mean's limit) and an absent class gives NaN.
    """
    tp, fn, fp, tn = cells(c, positive)
    n = tp + fn + fp + tn
    if n == 0:
        return math.nan
    hm_hits = holder_mean([tp / n, tn / n], -1)
    hm_sizes = holder_mean([(tp + fn) / n, (fp + tn) / n], -1)
    return safe_divide(hm_hits, hm_sizes)


def aurpc(c: Confusion, positive: int) -> float:
    """Discrete AURPC (seed 004, κ): (TPR + precision)/2."""
    return (tpr(c, positive) + precision(c, positive)) / 2


def mprecision(c: Confusion, positive: int) -> float:
    """Bradley's mPrecision (seed 004, ζ̂): TPR/(TPR + FPR)."""
    a = tpr(c, positive)
    fpr = 1 - tnr(c, positive)
    return safe_divide(a, a + fpr)


def maurpc(c: Confusion, positive: int) -> float:
    """mAURPC (seed 004, κ̂): (TPR + mPrecision)/2."""
    return (tpr(c, positive) + mprecision(c, positive)) / 2
