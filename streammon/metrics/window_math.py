"""Every catalog metric of a stack of matrices at once (the read path's evaluator).

``MetricSpec.evaluate`` computes one metric of one ``Confusion``; a report needs the whole
catalog, twice (as read and at the reference mix), for every window. ``evaluate_stack`` takes
the W windows of a monitor as one (W, K, K) array, derives what the metrics share once — margins,
the diagonal, the recalls, which classes are present and how many, the row-normalised matrix —
and reads every metric from them for all W windows together, so a report costs a fixed number of
array operations rather than some per metric and window. The averages over "the classes present"
(METRICS.md) are one masked sum of every mean's per-class terms. Each metric follows the formula of
its own function (``streammon.metrics.binary``, ``multiclass``; only the order of summation differs)
and agrees with it to 1e-12 on random matrices, as read and reweighted with NaN rows
(tests/test_window_math.py); a metric this module does not know falls back to ``MetricSpec.evaluate``
window by window.

>>> c = Confusion.of([[8, 2, 0], [1, 6, 3], [0, 0, 10]])
>>> values = evaluate_all(c, ("acsa", "gmean", "mcc"), positive=0)
>>> all(abs(values[name] - spec(name).evaluate(c)) < 1e-12 for name in values)
True
>>> stack = np.array([[[8, 2], [1, 9]], [[0, 0], [3, 7]]], dtype=float)
>>> evaluate_stack(stack, ("acsa", "tpr"), positive=1)["tpr"].tolist()
[0.9, 0.7]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.confusion import Confusion, FloatArray, divide_quietly
from streammon.metrics.holder import holder_mean
from streammon.metrics.specs import spec

_NO_PARAMS: Mapping[str, Any] = {}
BoolArray = npt.NDArray[np.bool_]


# A recall is 0 or at least 1/n_i >= 2**-63 (int64 counts; reweighting keeps the rates): for |p| <= 10 its p-th
# power lies within 2**±630, far inside float64, so only larger exponents need holder_mean's log-domain path.
_NO_OVERFLOW = 10.0


class Stack:
    """The shared quantities of W prepared K×K matrices (each computed once, on first use)."""

    def __init__(self, matrices: FloatArray) -> None:
        self.m = matrices
        self.n_i: FloatArray = matrices.sum(axis=2)  # true counts, (W, K)
        self.k_i: FloatArray = matrices.sum(axis=1)  # predicted counts
        self.total: FloatArray = self.n_i.sum(axis=1)  # (W,)
        self.present: BoolArray = ~(self.n_i == 0)  # NaN rows count as present (unknown, not absent)
        self.count = self.present.sum(axis=1)  # C, the classes present
        self.diag: FloatArray = np.diagonal(matrices, axis1=1, axis2=2)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.recalls = divide_quietly(self.diag, self.n_i)
        self.trace: FloatArray = self.diag.sum(axis=1)
        self._cells: dict[int, Cells] = {}

    @cached_property
    def rate_columns(self) -> FloatArray:
        """Σ over the present rows of the row-normalised matrix R, per column."""
        rates = np.where(self.present[:, :, None], self.m / np.where(self.present, self.n_i, 1.0)[:, :, None], 0.0)
        out: FloatArray = rates.sum(axis=1)
        return out

    @cached_property
    def sums(self) -> dict[str, FloatArray]:
        """Σ over the classes present of the per-class term of every mean over classes, in one masked sum.

        A NaN term of a present class makes its sum NaN; a zero recall makes Σ log r = −inf and Σ 1/r = inf,
        so the G- and H-mean reach their limit 0 without a test. R's diagonal is the recalls.
        """
        r = self.recalls
        columns = self.rate_columns
        terms = {
            "recall": r,
            "log_recall": np.log(r),
            "inverse_recall": r**-1.0,
            "ova": 1 + r - divide_quietly(self.k_i - self.diag, self.total[:, None] - self.n_i),
            "aurpc_ova": divide_quietly(self.diag, self.k_i) + r,
            "maurpc_ova": divide_quietly(r, columns) + r,
            "ovo": 1 + r - (columns - r) / np.maximum(self.count - 1, 1)[:, None],
            "f1": divide_quietly(2 * self.diag, self.n_i + self.k_i),
        }
        totals = np.where(self.present, np.stack(list(terms.values())), 0.0).sum(axis=-1)
        return dict(zip(terms, totals, strict=True))

    @cached_property
    def classes(self) -> FloatArray:
        """C as a float (a sum over no class divided by it is NaN)."""
        out: FloatArray = self.count.astype(np.float64)
        return out

    @cached_property
    def auroc_ova(self) -> FloatArray:
        out: FloatArray = self.sums["ova"] / (2 * self.classes)
        return out

    def holder(self, p: float) -> FloatArray:
        """The Hölder mean with exponent ``p`` of the recalls of the classes present (NaN with none)."""
        if p in (0.0, math.inf, -math.inf) or not abs(p) <= _NO_OVERFLOW:
            # the limits, a NaN exponent (refused there), powers that may overflow: holder_mean, window by window
            return np.array([holder_mean(r[keep], p) for r, keep in zip(self.recalls, self.present, strict=True)])
        total = np.where(self.present, self.recalls**p, 0.0).sum(axis=1)  # a zero recall: 0 or, for p < 0, inf
        out: FloatArray = (total / self.classes) ** (1.0 / p)
        return out

    def extreme(self, p: float) -> FloatArray:
        """The least (``p`` = −inf) or greatest (+inf) recall of the classes present; NaN with none."""
        fill = math.inf if p < 0 else -math.inf
        kept = np.where(self.present, self.recalls, fill)
        values = kept.min(axis=1, initial=fill) if p < 0 else kept.max(axis=1, initial=fill)
        out: FloatArray = np.where(self.count == 0, math.nan, values)
        return out

    def cells(self, positive: int) -> Cells:
        """``(TP, FN, FP, TN, TPR, TNR)`` of 2×2 matrices, each (W,), and the three harmonic means the binary
        metrics read — of (TPR, TNR), of the hits (TP/n, TN/n), of the class sizes (P/n, N/n) — in one pass."""
        if positive not in self._cells:
            m, neg = self.m, 1 - positive
            tp, fn, fp, tn = m[:, positive, positive], m[:, positive, neg], m[:, neg, positive], m[:, neg, neg]
            tpr, tnr = divide_quietly(tp, tp + fn), divide_quietly(tn, tn + fp)
            n = tp + fn + fp + tn
            safe = np.where(n == 0, 1.0, n)
            harmonic = _pair_mean(np.stack([tpr, tp / safe, (tp + fn) / safe]),
                                  np.stack([tnr, tn / safe, (fp + tn) / safe]), -1)
            self._cells[positive] = (tp, fn, fp, tn, tpr, tnr, harmonic[0], harmonic[1], harmonic[2])
        return self._cells[positive]


# TP, FN, FP, TN, TPR, TNR, and the harmonic means of (TPR, TNR), of (TP/n, TN/n), of (P/n, N/n)
Cells = tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray,
              FloatArray]


def _pair_mean(a: FloatArray, b: FloatArray, p: float) -> FloatArray:
    """``holder_mean([a, b], p)`` of each window, for p = 0 or −1: NaN if either is NaN, 0 if either is 0."""
    either_zero = (a == 0) | (b == 0)
    a1, b1 = np.where(either_zero, 1.0, a), np.where(either_zero, 1.0, b)
    mean = np.exp((np.log(a1) + np.log(b1)) / 2) if p == 0 else ((a1**-1.0 + b1**-1.0) / 2) ** -1.0
    out: FloatArray = np.where(np.isnan(a) | np.isnan(b), math.nan, np.where(either_zero, 0.0, mean))
    return out


def _iba(x: Cells, params: Mapping[str, Any]) -> FloatArray:
    g = _pair_mean(x[4], x[5], 0)
    out: FloatArray = (1 + params["alpha"] * (x[4] - x[5])) * (g * g if params["squared"] else g)
    return out


def _hmnc(x: Cells, params: Mapping[str, Any]) -> FloatArray:
    n = x[0] + x[1] + x[2] + x[3]
    return np.where(n == 0, math.nan, divide_quietly(x[7], x[8]))


def _mprecision(x: Cells) -> FloatArray:
    return divide_quietly(x[4], x[4] + (1 - x[5]))


_BINARY: Mapping[str, Callable[[Cells, Mapping[str, Any]], FloatArray]] = {
    "tpr": lambda x, _: x[4],
    "tnr": lambda x, _: x[5],
    "npv": lambda x, _: divide_quietly(x[3], x[3] + x[1]),
    "f1": lambda x, _: divide_quietly(2 * x[0], 2 * x[0] + x[2] + x[1]),
    "balanced_accuracy": lambda x, _: (x[4] + x[5]) / 2,
    "informedness": lambda x, _: x[4] + x[5] - 1,
    "dominance": lambda x, _: x[4] - x[5],
    "iba": _iba,
    "optimized_precision": lambda x, _: (divide_quietly(x[0] + x[3], x[0] + x[1] + x[2] + x[3])
                                         - divide_quietly(np.abs(x[5] - x[4]), x[5] + x[4])),
    "ac_score": lambda x, _: x[6],
    "hmnc": _hmnc,
    "aurpc": lambda x, _: (x[4] + divide_quietly(x[0], x[0] + x[2])) / 2,
    "mprecision": lambda x, _: _mprecision(x),
    "maurpc": lambda x, _: (x[4] + _mprecision(x)) / 2,
}


def _nauroc_ova(s: Stack) -> FloatArray:
    lam = (s.classes - 2) / (2 * s.classes)
    out: FloatArray = (s.auroc_ova - lam) / (1 - lam)
    return out


def _mcc(s: Stack) -> FloatArray:
    t, p, n = s.n_i, s.k_i, s.total
    cov_tp = s.trace * n - (t * p).sum(axis=1)
    return divide_quietly(cov_tp, np.sqrt((n * n - (t * t).sum(axis=1)) * (n * n - (p * p).sum(axis=1))))


def _kappa(s: Stack) -> FloatArray:
    n = s.total
    safe = np.where(n == 0, 1.0, n)
    expected = (s.n_i * s.k_i).sum(axis=1) / (safe * safe)
    return np.where(n == 0, math.nan, divide_quietly(s.trace / safe - expected, 1 - expected))


_MULTICLASS: Mapping[str, Callable[[Stack], FloatArray]] = {
    "acsa": lambda s: s.sums["recall"] / s.classes,
    "gmean": lambda s: np.exp(s.sums["log_recall"] / s.classes),
    "hmean": lambda s: (s.sums["inverse_recall"] / s.classes) ** -1.0,
    "min_recall": lambda s: s.extreme(-math.inf),
    "max_recall": lambda s: s.extreme(math.inf),
    "auroc_ovo": lambda s: np.where(s.count < 2, math.nan, s.sums["ovo"] / (2 * s.classes)),
    "auroc_ova": lambda s: s.auroc_ova,
    "nauroc_ova": _nauroc_ova,
    "aurpc_ova": lambda s: s.sums["aurpc_ova"] / (2 * s.classes),
    "maurpc_ova": lambda s: s.sums["maurpc_ova"] / (2 * s.classes),
    "accuracy": lambda s: divide_quietly(s.trace, s.total),
    "mcc": _mcc,
    "kappa": _kappa,
    "macro_f1": lambda s: s.sums["f1"] / s.classes,
}


def evaluate_stack(
    matrices: FloatArray | Stack,
    names: Iterable[str],
    *,
    positive: int = 1,
    params: Callable[[str], Mapping[str, Any]] | None = None,
) -> dict[str, FloatArray]:
    """``{name: [spec(name).evaluate(Confusion.of(m), positive=positive, **params(name)) for m in matrices]}``
    as one array per metric, the work shared between metrics and windows.

    Like ``evaluate``, no applicability check: callers pass the names that apply to the stack's K.
    """
    s = matrices if isinstance(matrices, Stack) else Stack(matrices)
    out: dict[str, FloatArray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for name in names:
            given = _NO_PARAMS if params is None else params(name)
            metric = spec(name)
            # (Mutation testing: a fast path missed — a mutated name test, or resolving the parameters of a
            # metric without any — sends the metric on to the next test and at last to its own function below,
            # which gives the same value (tests/test_window_math.py compares every catalog metric with
            # MetricSpec.evaluate); the fallback itself serves only metrics added after this module, so no
            # catalog metric reaches it. Those lines are not mutated: every mutant of them is equivalent.)
            resolved = metric.resolve_params(given) if metric.params else _NO_PARAMS  # pragma: no mutate
            if name == "holder":  # pragma: no mutate
                out[name] = s.holder(float(resolved["p"]))
            elif name in _MULTICLASS:
                out[name] = _MULTICLASS[name](s)
            elif name == "recall":  # pragma: no mutate
                out[name] = s.recalls[:, positive]
            elif name == "precision":  # pragma: no mutate
                out[name] = divide_quietly(s.diag[:, positive], s.k_i[:, positive])
            elif name in _BINARY:  # pragma: no mutate
                out[name] = _BINARY[name](s.cells(positive), resolved)
            else:  # a metric added to the catalog after this module: its own function
                out[name] = np.array([metric.evaluate(Confusion.of(m), positive=positive, **given)  # pragma: no mutate
                                      for m in s.m])
    return out


def evaluate_all(
    c: Confusion,
    names: Iterable[str],
    *,
    positive: int = 1,
    params: Callable[[str], Mapping[str, Any]] | None = None,
) -> dict[str, float]:
    """``{name: spec(name).evaluate(c, positive=positive, **params(name))}`` for ``names``: ``evaluate_stack``
    of one matrix."""
    values = evaluate_stack(c.matrix[None], names, positive=positive, params=params)
    return {name: float(v[0]) for name, v in values.items()}
