"""Every catalog score of a stack of confusion matrices in one compiled loop (the read path's arithmetic).

A report scores the whole catalog for each of its W windows, as read and reweighted to the
reference mix: 2W small matrices, about thirty metrics each. As NumPy array operations that is
a fixed ~100 calls of 1–3 µs whatever the sizes — more than river takes to read its eight
metrics. Here each matrix is one pass: its margins, diagonal and recalls, the per-class terms of
every mean over the classes present (METRICS.md: a class with no samples is left out; a NaN row —
unknown rates at a reweighted mix — counts as present and makes what reads it NaN), the binary
cells at the positive class, then each metric asked for by its code. The formulas are those of
``streammon.metrics.binary`` and ``multiclass`` (only the order of summation differs; the tests
compare every metric with its own function to 1e-12, as read and reweighted).

The loop is plain Python compiled by numba on first use (``compiled``), so it also runs — slowly
— uncompiled (``NUMBA_DISABLE_JIT=1``), for coverage and mutation testing. ``error_model="numpy"``:
a division by zero gives inf or NaN as in NumPy, never an exception.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np

# The metrics the loop knows, by code (the catalog's names; ``streammon.metrics.specs``). A metric added to the
# catalog after this module has no code: ``window_math`` scores it with its own function.
METRICS = ("tpr", "tnr", "npv", "f1", "balanced_accuracy", "informedness", "dominance", "iba",
           "optimized_precision", "ac_score", "hmnc", "aurpc", "mprecision", "maurpc", "recall", "precision",
           "acsa", "gmean", "hmean", "min_recall", "max_recall", "holder", "auroc_ovo", "auroc_ova", "nauroc_ova",
           "aurpc_ova", "maurpc_ova", "accuracy", "mcc", "kappa", "macro_f1")
CODES = {name: code for code, name in enumerate(METRICS)}
(TPR, TNR, NPV, F1, BALANCED_ACCURACY, INFORMEDNESS, DOMINANCE, IBA, OPTIMIZED_PRECISION, AC_SCORE, HMNC, AURPC,
 MPRECISION, MAURPC, RECALL, PRECISION, ACSA, GMEAN, HMEAN, MIN_RECALL, MAX_RECALL, HOLDER, AUROC_OVO, AUROC_OVA,
 NAUROC_OVA, AURPC_OVA, MAURPC_OVA, ACCURACY, MCC, KAPPA, MACRO_F1) = range(len(METRICS))
UNKNOWN = -1  # a metric without a code: left NaN here

# Hölder exponents whose powers of a recall (0 or >= 2**-63) stay inside float64: the direct formula. Others (the
# limits 0 and ±inf, |p| > 10) take ``holder_mean``'s path: min/max, the zero test, logs.
_DIRECT_POWER = 10.0


def _score_stack(  # noqa: PLR0912, PLR0915, PLR0917 - one compiled loop; numba takes its arrays positionally
        counts: Any, priors: Any, with_mix: bool, codes: Any, first: Any, second: Any, positive: int,
        scores: Any, recalls: Any, precisions: Any) -> None:
    """Score W matrices ``counts`` (W, K, K) and, with ``with_mix``, each reweighted to its row of ``priors``
    (W, K, normalised) — matrix ``j`` of 2W is window ``j`` as read for ``j < W``, window ``j − W`` at its
    priors after.

    ``codes`` (M): each row's metric; ``first``/``second`` (M): its parameters (``holder``: p; ``iba``: α and
    squared as 0/1). Written: ``scores`` (M, W or 2W), ``recalls`` and ``precisions`` (W or 2W, K).
    """
    windows, k = counts.shape[0], counts.shape[1]
    m = np.empty((k, k))
    n_i = np.empty(k)
    k_i = np.empty(k)
    diag = np.empty(k)
    r = np.empty(k)
    present = np.empty(k, np.bool_)
    columns = np.empty(k)

    def divide(a: float, b: float) -> float:  # NaN where the denominator is 0
        return math.nan if b == 0 else a / b

    def pair_mean(a: float, b: float, p: float) -> float:  # Hölder mean of two values, p = 0 or −1
        if np.isnan(a) or np.isnan(b):
            return math.nan
        if a == 0 or b == 0:
            return 0.0
        if p == 0:
            return float(np.exp((np.log(a) + np.log(b)) / 2))
        return float(((a**-1.0 + b**-1.0) / 2) ** -1.0)

    def holder_limit(p: float, classes: int, any_nan: bool, smallest: float, largest: float) -> float:  # noqa: PLR0912
        """``holder_mean`` of the present recalls for p = 0, ±inf or |p| > 10 (min, max, the zero test, logs)."""
        if classes == 0 or any_nan or np.isnan(p):
            return math.nan
        if p == math.inf:
            return largest
        if p == -math.inf:
            return smallest
        if p <= 0 and smallest == 0:
            return 0.0
        size = np.float64(classes)
        if p == 0:
            logs = 0.0
            for i in range(k):
                if present[i]:
                    logs += np.log(r[i])
            return float(np.exp(logs / size))
        power = 0.0
        for i in range(k):
            if present[i]:
                power += r[i] ** p
        direct = (power / size) ** (1.0 / p)
        if 0.0 < direct < math.inf or not largest > 0:
            return float(direct)
        # the powers overflowed or underflowed: M_p = exp((log Σ exp(p·log r) − log C) / p), shifted by the largest term
        top = -math.inf
        for i in range(k):
            if present[i]:
                top = max(top, p * np.log(r[i]))
        shifted = 0.0
        for i in range(k):
            if present[i]:
                shifted += np.exp(p * np.log(r[i]) - top)
        return float(np.exp((top + np.log(shifted / size)) / p))

    for j in range(windows * 2 if with_mix else windows):
        w = j % windows
        # the matrix: as read, or reweighted (row i to priors_i · n keeping its rates; NaN rows for a class the mix
        # has but the window lacks, zero rows for one the mix lacks)
        if j < windows:
            for i in range(k):
                for c in range(k):
                    m[i, c] = counts[w, i, c]
        else:
            for i in range(k):
                n_i[i] = 0.0
                for c in range(k):
                    n_i[i] += counts[w, i, c]
            n = 0.0
            for i in range(k):
                n += n_i[i]
            for i in range(k):
                for c in range(k):
                    if n_i[i] > 0:
                        m[i, c] = counts[w, i, c] / n_i[i] * (priors[w, i] * n)
                    else:
                        m[i, c] = math.nan if priors[w, i] > 0 else 0.0
        # margins, diagonal, recalls, the classes present
        total = 0.0
        trace = 0.0
        classes = 0
        for i in range(k):
            n_i[i] = 0.0
            k_i[i] = 0.0
        for i in range(k):
            for c in range(k):
                n_i[i] += m[i, c]
                k_i[c] += m[i, c]
        for i in range(k):
            diag[i] = m[i, i]
            total += n_i[i]
            trace += diag[i]
            present[i] = n_i[i] != 0  # a NaN row is present (NaN != 0): unknown, not absent
            classes += present[i]
            r[i] = divide(diag[i], n_i[i])
            recalls[j, i] = r[i]
            precisions[j, i] = divide(diag[i], k_i[i])
        size = np.float64(classes)
        # Σ over the present rows of the row-normalised matrix, per column
        for c in range(k):
            columns[c] = 0.0
        for i in range(k):
            if present[i]:
                for c in range(k):
                    columns[c] += m[i, c] / n_i[i]
        # Σ over the classes present of each mean's per-class term
        s_recall = s_log = s_inverse = s_ova = s_aurpc = s_maurpc = s_ovo = s_f1 = 0.0
        smallest, largest = math.inf, -math.inf
        any_nan = False
        for i in range(k):
            if present[i]:
                ri = r[i]
                s_recall += ri
                s_log += np.log(ri)
                s_inverse += ri**-1.0
                s_ova += 1 + ri - divide(k_i[i] - diag[i], total - n_i[i])
                s_aurpc += divide(diag[i], k_i[i]) + ri
                s_maurpc += divide(ri, columns[i]) + ri
                s_ovo += 1 + ri - (columns[i] - ri) / max(classes - 1, 1)
                s_f1 += divide(2 * diag[i], n_i[i] + k_i[i])
                any_nan = any_nan or np.isnan(ri)
                smallest = min(smallest, ri)
                largest = max(largest, ri)
        auroc_ova = s_ova / (2 * size)
        # the binary cells at the positive class (K = 2)
        tp = fn = fp = tn = tpr = tnr = cells = 0.0
        if k == 2:
            neg = 1 - positive
            tp, fn, fp, tn = m[positive, positive], m[positive, neg], m[neg, positive], m[neg, neg]
            tpr, tnr = divide(tp, tp + fn), divide(tn, tn + fp)
            cells = tp + fn + fp + tn
        safe = 1.0 if cells == 0 else cells
        for row in range(len(codes)):
            code = codes[row]
            if code == UNKNOWN:
                value = math.nan
            elif code == TPR:
                value = tpr
            elif code == TNR:
                value = tnr
            elif code == NPV:
                value = divide(tn, tn + fn)
            elif code == F1:
                value = divide(2 * tp, 2 * tp + fp + fn)
            elif code == BALANCED_ACCURACY:
                value = (tpr + tnr) / 2
            elif code == INFORMEDNESS:
                value = tpr + tnr - 1
            elif code == DOMINANCE:
                value = tpr - tnr
            elif code == IBA:
                g = pair_mean(tpr, tnr, 0.0)
                value = (1 + first[row] * (tpr - tnr)) * (g * g if second[row] else g)
            elif code == OPTIMIZED_PRECISION:
                value = divide(tp + tn, tp + fn + fp + tn) - divide(abs(tnr - tpr), tnr + tpr)
            elif code == AC_SCORE:
                value = pair_mean(tpr, tnr, -1.0)
            elif code == HMNC:
                value = math.nan if cells == 0 else divide(pair_mean(tp / safe, tn / safe, -1.0),
                                                          pair_mean((tp + fn) / safe, (fp + tn) / safe, -1.0))
            elif code == AURPC:
                value = (tpr + divide(tp, tp + fp)) / 2
            elif code == MPRECISION:
                value = divide(tpr, tpr + (1 - tnr))
            elif code == MAURPC:
                value = (tpr + divide(tpr, tpr + (1 - tnr))) / 2
            elif code == RECALL:
                value = r[positive]
            elif code == PRECISION:
                value = divide(diag[positive], k_i[positive])
            elif code == ACSA:
                value = s_recall / size
            elif code == GMEAN:
                value = np.exp(s_log / size)
            elif code == HMEAN:
                value = (s_inverse / size) ** -1.0
            elif code == MIN_RECALL:
                value = math.nan if classes == 0 or any_nan else smallest
            elif code == MAX_RECALL:
                value = math.nan if classes == 0 or any_nan else largest
            elif code == HOLDER:
                p = first[row]
                if p != 0 and abs(p) <= _DIRECT_POWER:
                    power = 0.0
                    for i in range(k):
                        if present[i]:
                            power += r[i] ** p
                    value = (power / size) ** (1.0 / p)
                else:
                    value = holder_limit(p, classes, any_nan, smallest, largest)
            elif code == AUROC_OVO:
                value = math.nan if classes < 2 else s_ovo / (2 * size)
            elif code == AUROC_OVA:
                value = auroc_ova
            elif code == NAUROC_OVA:
                lam = (size - 2) / (2 * size)
                value = (auroc_ova - lam) / (1 - lam)
            elif code == AURPC_OVA:
                value = s_aurpc / (2 * size)
            elif code == MAURPC_OVA:
                value = s_maurpc / (2 * size)
            elif code == ACCURACY:
                value = divide(trace, total)
            elif code == MCC:
                t_p = t_t = p_p = 0.0
                for i in range(k):
                    t_p += n_i[i] * k_i[i]
                    t_t += n_i[i] * n_i[i]
                    p_p += k_i[i] * k_i[i]
                value = divide(trace * total - t_p, np.sqrt((total * total - t_t) * (total * total - p_p)))
            elif code == KAPPA:
                if total == 0:
                    value = math.nan
                else:
                    t_p = 0.0
                    for i in range(k):
                        t_p += n_i[i] * k_i[i]
                    expected = t_p / (total * total)
                    value = divide(trace / total - expected, 1 - expected)
            else:  # MACRO_F1
                value = s_f1 / size
            scores[row, j] = value


@cache
def compiled() -> Any:
    """``_score_stack`` compiled by numba (once per process; the machine code is cached on disk where it can be)."""
    import numba  # noqa: PLC0415 - heavy (~0.4 s): imported by the first report, not with streammon

    return numba.njit(cache=True, nogil=True, error_model="numpy")(_score_stack)
