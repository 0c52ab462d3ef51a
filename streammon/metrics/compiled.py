"""The read path's loops in machine code: every number of a report's windows in one compiled call.

A report scores the whole catalog for each of its W windows, as read and reweighted to the
reference mix, and tests each window's class mix against the reference. As NumPy array operations
that is a fixed ~150 calls of 1–3 µs whatever the sizes — more than river takes to read its eight
metrics. Here each window is one pass (``window_numbers``): its matrix's margins, diagonal and
recalls, the per-class terms of every mean over the classes present (METRICS.md: a class with no
samples is left out; a NaN row — unknown rates at a reweighted mix — counts as present and makes
what reads it NaN), the binary cells at the positive class, each metric asked for by its code; the
same of the matrix reweighted to the window's priors; the prior-corrected values; the window's mix,
RRT and chi-square test against its reference. The formulas are those of ``streammon.metrics.binary``,
``multiclass``, ``prior`` and ``streammon.findings.shift`` (only the order of summation differs; the
tests compare every value with its own function to 1e-12).

This module imports numba (~0.2 s) and compiles on first call (a few seconds once; the machine code
is cached on disk where it can be: ``streammon.metrics.jitting``): the pure-Python modules import it on first use
(``streammon.metrics.window_math``, ``mix_shift``, ``tails``), never with ``streammon``. With
``NUMBA_DISABLE_JIT=1`` the same functions run as Python, for coverage and mutation testing.
``error_model="numpy"``: a division by zero gives inf or NaN as in NumPy, never an exception. The
loops stay in one module on purpose: numba's disk cache of a function is invalidated when its own
file changes, not when a jitted function it calls from another file does, nor a constant it reads
from one (numba freezes the globals it reads at compile time); ``tests/test_compiled_scope.py``
checks that every loop reaches only this file's loops and constants.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import numba
import numpy as np

from streammon.metrics.jitting import compiled


def jit(function: Any) -> Any:
    """A loop of this module compiled (cached on disk where it can be: ``streammon.metrics.jitting``)."""
    return compiled(function, error_model="numpy")



def quiet() -> contextlib.AbstractContextManager[Any]:
    """The floating-point state for a call of these loops: NumPy's warnings off where they run as Python
    (``NUMBA_DISABLE_JIT=1``: NaN and inf are their results); nothing to switch where they are compiled."""
    return np.errstate(all="ignore") if numba.config.DISABLE_JIT else contextlib.nullcontext()  # type: ignore[attr-defined]

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

# window_numbers' outputs: per metric (3, M, W), per class (4, W, K), per window (5, W)
SCORES, CORRECTED, DISTORTION = range(3)
RECALLS, PRECISIONS, CORRECTED_PRECISIONS, MIXES = range(4)
RRT, JS, TV, CHI2, P_VALUE = range(5)


@jit
def _divide(a: float, b: float) -> float:
    """``a / b``, NaN where ``b`` is 0."""
    return math.nan if b == 0 else a / b


@jit
def _pair_mean(a: float, b: float, p: float) -> float:
    """The Hölder mean of two values for p = 0 or −1: NaN if either is NaN, 0 if either is 0."""
    if np.isnan(a) or np.isnan(b):
        return math.nan
    if a == 0 or b == 0:
        return 0.0
    if p == 0:
        return float(np.exp((np.log(a) + np.log(b)) / 2))
    return float(((a**-1.0 + b**-1.0) / 2) ** -1.0)


@jit
def _holder_limit(r: Any, present: Any, classes: int, any_nan: bool, smallest: float, largest: float,  # noqa: PLR0912, PLR0917
                  p: float) -> float:
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
        for i in range(len(r)):
            if present[i]:
                logs += np.log(r[i])
        return float(np.exp(logs / size))
    power = 0.0
    for i in range(len(r)):
        if present[i]:
            power += r[i] ** p
    direct = (power / size) ** (1.0 / p)
    if 0.0 < direct < math.inf or not largest > 0:
        return float(direct)
    # the powers overflowed or underflowed: M_p = exp((log Σ exp(p·log r) − log C) / p), shifted by the largest term
    top = -math.inf
    for i in range(len(r)):
        if present[i]:
            top = max(top, p * np.log(r[i]))
    shifted = 0.0
    for i in range(len(r)):
        if present[i]:
            shifted += np.exp(p * np.log(r[i]) - top)
    return float(np.exp((top + np.log(shifted / size)) / p))


@jit
def score_matrix(m: Any, codes: Any, first: Any, second: Any, positive: int,  # noqa: PLR0912, PLR0915, PLR0917
                 scores: Any, recalls: Any, precisions: Any, scratch: Any, present: Any) -> None:
    """Score one K×K matrix ``m`` (counts, or rates with NaN rows): ``scores[row]`` the metric ``codes[row]`` with
    its parameters ``first``/``second`` (``holder``: p; ``iba``: α and squared as 0/1), ``recalls`` and
    ``precisions`` (K) each class's. ``scratch`` (5 × K floats) and ``present`` (K bools): working space."""
    k = m.shape[0]
    n_i, k_i, diag, r, columns = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4]
    for i in range(k):
        n_i[i] = k_i[i] = columns[i] = 0.0
    for i in range(k):
        for c in range(k):
            n_i[i] += m[i, c]
            k_i[c] += m[i, c]
    total = trace = 0.0
    classes = 0
    for i in range(k):
        diag[i] = m[i, i]
        total += n_i[i]
        trace += diag[i]
        present[i] = n_i[i] != 0  # a NaN row is present (NaN != 0): unknown, not absent
        classes += present[i]
        r[i] = _divide(diag[i], n_i[i])
        recalls[i] = r[i]
        precisions[i] = _divide(diag[i], k_i[i])
    size = np.float64(classes)
    for i in range(k):  # Σ over the present rows of the row-normalised matrix, per column
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
            s_ova += 1 + ri - _divide(k_i[i] - diag[i], total - n_i[i])
            s_aurpc += _divide(diag[i], k_i[i]) + ri
            s_maurpc += _divide(ri, columns[i]) + ri
            s_ovo += 1 + ri - (columns[i] - ri) / max(classes - 1, 1)
            s_f1 += _divide(2 * diag[i], n_i[i] + k_i[i])
            any_nan = any_nan or np.isnan(ri)
            smallest = min(smallest, ri)
            largest = max(largest, ri)
    auroc_ova = s_ova / (2 * size)
    # the binary cells at the positive class (K = 2)
    tp = fn = fp = tn = tpr = tnr = cells = 0.0
    if k == 2:
        neg = 1 - positive
        tp, fn, fp, tn = m[positive, positive], m[positive, neg], m[neg, positive], m[neg, neg]
        tpr, tnr = _divide(tp, tp + fn), _divide(tn, tn + fp)
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
            value = _divide(tn, tn + fn)
        elif code == F1:
            value = _divide(2 * tp, 2 * tp + fp + fn)
        elif code == BALANCED_ACCURACY:
            value = (tpr + tnr) / 2
        elif code == INFORMEDNESS:
            value = tpr + tnr - 1
        elif code == DOMINANCE:
            value = tpr - tnr
        elif code == IBA:
            g = _pair_mean(tpr, tnr, 0.0)
            value = (1 + first[row] * (tpr - tnr)) * (g * g if second[row] else g)
        elif code == OPTIMIZED_PRECISION:
            value = _divide(tp + tn, tp + fn + fp + tn) - _divide(abs(tnr - tpr), tnr + tpr)
        elif code == AC_SCORE:
            value = _pair_mean(tpr, tnr, -1.0)
        elif code == HMNC:
            value = math.nan if cells == 0 else _divide(_pair_mean(tp / safe, tn / safe, -1.0),
                                                        _pair_mean((tp + fn) / safe, (fp + tn) / safe, -1.0))
        elif code == AURPC:
            value = (tpr + _divide(tp, tp + fp)) / 2
        elif code == MPRECISION:
            value = _divide(tpr, tpr + (1 - tnr))
        elif code == MAURPC:
            value = (tpr + _divide(tpr, tpr + (1 - tnr))) / 2
        elif code == RECALL:
            value = r[positive]
        elif code == PRECISION:
            value = _divide(diag[positive], k_i[positive])
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
                value = _holder_limit(r, present, classes, any_nan, smallest, largest, p)
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
            value = _divide(trace, total)
        elif code == MCC:
            t_p = t_t = p_p = 0.0
            for i in range(k):
                t_p += n_i[i] * k_i[i]
                t_t += n_i[i] * n_i[i]
                p_p += k_i[i] * k_i[i]
            value = _divide(trace * total - t_p, np.sqrt((total * total - t_t) * (total * total - p_p)))
        elif code == KAPPA:
            if total == 0:
                value = math.nan
            else:
                t_p = 0.0
                for i in range(k):
                    t_p += n_i[i] * k_i[i]
                expected = t_p / (total * total)
                value = _divide(trace / total - expected, 1 - expected)
        else:  # MACRO_F1
            value = s_f1 / size
        scores[row] = value


@jit
def reweighted(counts: Any, priors: Any, out: Any) -> None:
    """``counts`` (K×K) with row i rescaled to ``priors[i] · n`` keeping its rates, into ``out``: NaN rows for a
    class the priors have but the counts lack, zero rows for one the priors lack (``streammon.metrics.prior``)."""
    k = counts.shape[0]
    n = 0.0
    rows = np.zeros(k)
    for i in range(k):
        for c in range(k):
            rows[i] += counts[i, c]
        n += rows[i]
    for i in range(k):
        for c in range(k):
            if rows[i] > 0:
                out[i, c] = counts[i, c] / rows[i] * (priors[i] * n)
            else:
                out[i, c] = math.nan if priors[i] > 0 else 0.0


@jit
def score_stack(matrices: Any, codes: Any, first: Any, second: Any, positive: int, scores: Any, recalls: Any,  # noqa: PLR0917
                precisions: Any) -> None:
    """Score N matrices (N, K, K; counts, or rates with NaN rows): ``scores`` (M, N), ``recalls`` and
    ``precisions`` (N, K) written."""
    k = matrices.shape[1]
    m = np.empty((k, k))
    column = np.empty(len(codes))
    scratch, present = np.empty((5, k)), np.empty(k, np.bool_)
    for j in range(matrices.shape[0]):
        m[:, :] = matrices[j]
        score_matrix(m, codes, first, second, positive, column, recalls[j], precisions[j], scratch, present)
        scores[:, j] = column


@jit
def chi2_tail(x: float, df: int, log_gammas: Any) -> float:
    """The chi-square survival function at ``x`` with ``df`` degrees of freedom: for even ``df`` the Poisson sum
    Σ_{i<df/2} hⁱe⁻ʰ/i!, for odd ``df`` erfc(√h) + Σ_{i=1}^{(df−1)/2} h^(i−½)e⁻ʰ/Γ(i+½), h = x/2, every term in
    the log domain (``log_gammas[i]`` = lgamma(i/2 + 1)). NaN for a NaN ``x`` or ``df`` < 1 (but 0 at inf)."""
    if np.isnan(x):
        return math.nan
    if np.isinf(x):
        return 0.0
    if df < 1:
        return math.nan
    if x <= 0:
        return 1.0
    half = x / 2
    log_half = np.log(half)
    total = 0.0
    if df % 2 == 0:
        for i in range(df // 2):
            total += np.exp(i * log_half - log_gammas[2 * i] - half)
    else:
        for i in range(1, (df + 1) // 2):
            total += np.exp((i - 0.5) * log_half - log_gammas[2 * i - 1] - half)
        total += math.erfc(math.sqrt(half))
    return min(1.0, total)


@jit
def chi2_tails(x: Any, dfs: Any, log_gammas: Any, out: Any) -> None:
    """``chi2_tail`` of each element of ``x`` with its ``dfs``, into ``out``."""
    for j in range(len(x)):
        out[j] = chi2_tail(x[j], dfs[j], log_gammas)


@jit
def mix_shift(observed: Any, reference: Any, minority: int, mix: Any) -> tuple[float, float, float, float, int]:
    """One window's class ``observed`` counts (K) against its ``reference`` weights (K; all 0: no reference):
    its ``mix`` (written; NaN when empty) and ``(rrt, js, tv, chi2, df)`` (``streammon.metrics.mix_shift``)."""
    k = len(observed)
    n = weight = 0.0
    largest, smallest = 0.0, math.inf
    for i in range(k):
        n += observed[i]
        weight += reference[i]
        largest = max(largest, observed[i])
        if observed[i] > 0:
            smallest = min(smallest, observed[i])
    for i in range(k):
        mix[i] = observed[i] / n  # (0/0: NaN for an empty window)
    if n == 0:
        rrt = math.nan
    elif minority >= 0:  # binary: the other class over the named minority
        rrt = math.inf if observed[minority] == 0 else observed[1 - minority] / observed[minority]
    else:
        rrt = largest / smallest
    support = 0
    for i in range(k):
        support += reference[i] > 0
    if weight == 0 or n == 0:
        return rrt, math.nan, math.nan, math.nan, support - 1
    left = right = distance = statistic = 0.0
    unseen = False
    for i in range(k):
        p = mix[i]
        q = reference[i] / weight
        middle = (p + q) / 2
        if p > 0:  # the Kullback–Leibler terms against the midpoint; a zero weight's term is 0
            left += p * np.log2(p / middle)
        if q > 0:
            right += q * np.log2(q / middle)
            expected = n * q
            statistic += (observed[i] - expected) ** 2 / expected
        elif observed[i] > 0:
            unseen = True
        distance += abs(p - q)
    chi2 = math.inf if unseen else (0.0 if support < 2 else statistic)
    return rrt, max(0.0, 0.5 * left + 0.5 * right), distance / 2, chi2, support - 1


@jit
def mix_shifts(observed: Any, reference: Any, minority: Any, log_gammas: Any, mix: Any, per_window: Any,  # noqa: PLR0917
               df: Any) -> None:
    """``mix_shift`` of each row: ``mix`` (W × K), ``per_window`` (5, W: RRT, JS, TV, chi2 and its p-value), ``df``
    (W)."""
    for w in range(observed.shape[0]):
        rrt, js, tv, chi2, freedom = mix_shift(observed[w], reference[w], minority[w], mix[w])
        per_window[RRT, w], per_window[JS, w], per_window[TV, w], per_window[CHI2, w] = rrt, js, tv, chi2
        per_window[P_VALUE, w] = chi2_tail(chi2, freedom, log_gammas)
        df[w] = freedom


@jit
def window_numbers(counts: Any, priors: Any, has_reference: Any, minority: Any, keeps: Any, codes: Any,  # noqa: PLR0917
                   first: Any, second: Any, positive: int, log_gammas: Any, per_metric: Any, per_class: Any,
                   per_window: Any, df: Any) -> None:
    """Every number of W windows ``counts`` (W, K, K, int; K >= 2), each with its reference ``priors`` (W × K,
    normalised) where ``has_reference``, its RRT ``minority`` (−1: none), the metrics ``codes`` (with
    ``first``/``second``; ``keeps``: satisfies Condition 1), the ``positive`` class.

    Written: ``per_metric`` (3, M, W) the scores, their values at the reference mix (``f_π``: a Condition-1
    metric's is its score when the same classes are present, by theorem; the others' read from the reweighted
    matrix; NaN without a reference or samples) and the distortion (score − corrected); ``per_class`` (4, W, K)
    the recalls, precisions, precisions at the reference mix (NaN likewise) and the mix; ``per_window`` (5, W)
    RRT, JS, TV, chi2 and its p-value; ``df`` (W) the test's degrees of freedom (−1 without a reference).
    """
    windows, k = counts.shape[0], counts.shape[1]
    metrics = len(codes)
    m = np.empty((k, k))
    observed = np.empty(k)
    reference, mix, recalls, precisions = np.empty(k), np.empty(k), np.empty(k), np.empty(k)
    column, at_mix = np.empty(metrics), np.empty(metrics)
    scratch, present = np.empty((5, k)), np.empty(k, np.bool_)
    for w in range(windows):
        size = 0.0
        for i in range(k):
            observed[i] = 0.0
            for c in range(k):
                m[i, c] = counts[w, i, c]
                observed[i] += m[i, c]
            size += observed[i]
        score_matrix(m, codes, first, second, positive, column, recalls, precisions, scratch, present)
        same_classes = True
        for i in range(k):
            per_class[RECALLS, w, i] = recalls[i]
            per_class[PRECISIONS, w, i] = precisions[i]
            per_class[CORRECTED_PRECISIONS, w, i] = math.nan
            reference[i] = priors[w, i] if has_reference[w] else 0.0
            same_classes = same_classes and (observed[i] > 0) == (reference[i] > 0)
        for row in range(metrics):
            at_mix[row] = math.nan
        if has_reference[w] and size > 0:  # values at the reference mix
            reweighted(counts[w], priors[w], m)
            score_matrix(m, codes, first, second, positive, at_mix, recalls, precisions, scratch, present)
            for i in range(k):
                per_class[CORRECTED_PRECISIONS, w, i] = precisions[i]
            for row in range(metrics):
                if keeps[row] and same_classes:
                    at_mix[row] = column[row]
        for row in range(metrics):
            per_metric[SCORES, row, w] = column[row]
            per_metric[CORRECTED, row, w] = at_mix[row]
            per_metric[DISTORTION, row, w] = column[row] - at_mix[row]
        rrt, js, tv, chi2, freedom = mix_shift(observed, reference, minority[w], mix)
        for i in range(k):
            per_class[MIXES, w, i] = mix[i]
        per_window[RRT, w] = rrt
        per_window[JS, w] = js
        per_window[TV, w] = tv
        per_window[CHI2, w] = chi2
        per_window[P_VALUE, w] = chi2_tail(chi2, freedom, log_gammas)
        df[w] = freedom
