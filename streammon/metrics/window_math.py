"""Every catalog metric of one matrix from quantities computed once (the read path's evaluator).

``MetricSpec.evaluate`` computes one metric from a ``Confusion``; a report needs the whole
catalog, twice (as read and at the reference mix), for every window. ``WindowMath`` derives
what the metrics share once — the recalls of the classes present, their NaN check, the
present block's margins and diagonal, the row-normalised block, the trace, the binary cells
and rates — and ``evaluate_all`` reads every metric from them, vectorised over the classes.
Each value is computed by the same floating-point operations, in the same order, as the
metric's own function, so the two paths agree bit for bit (pinned in the tests to 1e-12 on
random matrices); a metric this module does not know falls back to ``MetricSpec.evaluate``.

>>> c = Confusion.of([[8, 2, 0], [1, 6, 3], [0, 0, 10]])
>>> values = evaluate_all(c, ("acsa", "gmean", "mcc"), positive=0)
>>> values == {name: spec(name).evaluate(c) for name in values}
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from typing import Any

import numpy as np

from streammon.metrics.confusion import Confusion, FloatArray, divide_arrays, safe_divide
from streammon.metrics.holder import defined_holder_mean, holder_mean
from streammon.metrics.specs import spec

_NO_PARAMS: Mapping[str, Any] = {}
Cells = tuple[float, float, float, float, float, float]  # TP, FN, FP, TN, TPR, TNR


class WindowMath:
    """The shared quantities of one prepared matrix (each computed on first use, then kept)."""

    def __init__(self, c: Confusion) -> None:
        self.c = c
        keep = c.present
        self.recalls: FloatArray = c.recalls[keep]  # the recalls of the classes present
        self.undefined = self.recalls.size == 0 or bool(np.any(np.isnan(self.recalls)))
        self.diag: FloatArray = np.diagonal(c.matrix)[keep]
        self.n_i: FloatArray = c.true_counts[keep]
        self.k_i: FloatArray = c.predicted_counts[keep]
        self.size = len(self.n_i)

    def holder(self, p: float) -> float:
        """``holder_mean(recalls of the classes present, p)`` with the NaN check done once."""
        return math.nan if self.undefined else defined_holder_mean(self.recalls, p)

    @cached_property
    def rates(self) -> FloatArray:
        """The present block, row-normalised (R)."""
        keep = self.c.present
        return self.c.matrix[np.ix_(keep, keep)] / self.n_i[:, None]

    @cached_property
    def trace(self) -> float:
        return float(np.trace(self.c.matrix))

    @cached_property
    def auroc_ova(self) -> float:
        if self.size == 0:
            return math.nan
        terms = 1 + self.diag / self.n_i - divide_arrays(self.k_i - self.diag, self.c.total - self.n_i)
        return float(terms.sum() / (2 * self.size))

    def cells(self, positive: int) -> Cells:
        """``(TP, FN, FP, TN, TPR, TNR)`` of a 2×2 matrix."""
        m, neg = self.c.matrix, 1 - positive
        tp, fn = float(m[positive, positive]), float(m[positive, neg])
        fp, tn = float(m[neg, positive]), float(m[neg, neg])
        return tp, fn, fp, tn, safe_divide(tp, tp + fn), safe_divide(tn, tn + fp)


def _iba(x: Cells, params: Mapping[str, Any]) -> float:
    g = holder_mean([x[4], x[5]], 0)
    return float((1 + params["alpha"] * (x[4] - x[5])) * (g * g if params["squared"] else g))


def _hmnc(x: Cells, params: Mapping[str, Any]) -> float:
    tp, fn, fp, tn = x[:4]
    n = tp + fn + fp + tn
    if n == 0:
        return math.nan
    hm_hits = holder_mean([tp / n, tn / n], -1)
    return safe_divide(hm_hits, holder_mean([(tp + fn) / n, (fp + tn) / n], -1))


def _mprecision(x: Cells) -> float:
    return safe_divide(x[4], x[4] + (1 - x[5]))


_BINARY: Mapping[str, Callable[[Cells, Mapping[str, Any]], float]] = {
    "tpr": lambda x, _: x[4],
    "tnr": lambda x, _: x[5],
    "npv": lambda x, _: safe_divide(x[3], x[3] + x[1]),
    "f1": lambda x, _: safe_divide(2 * x[0], 2 * x[0] + x[2] + x[1]),
    "balanced_accuracy": lambda x, _: (x[4] + x[5]) / 2,
    "informedness": lambda x, _: x[4] + x[5] - 1,
    "dominance": lambda x, _: x[4] - x[5],
    "iba": _iba,
    "optimized_precision": lambda x, _: (safe_divide(x[0] + x[3], x[0] + x[1] + x[2] + x[3])
                                         - safe_divide(abs(x[5] - x[4]), x[5] + x[4])),
    "ac_score": lambda x, _: holder_mean([x[4], x[5]], -1),
    "hmnc": _hmnc,
    "aurpc": lambda x, _: (x[4] + safe_divide(x[0], x[0] + x[2])) / 2,
    "mprecision": lambda x, _: _mprecision(x),
    "maurpc": lambda x, _: (x[4] + _mprecision(x)) / 2,
}


def _ovo(w: WindowMath) -> float:
    if w.size < 2:
        return math.nan
    rates = w.rates
    terms = 1 + np.diagonal(rates) - (rates.sum(axis=0) - np.diagonal(rates)) / (w.size - 1)
    return float(terms.sum() / (2 * w.size))


def _maurpc_ova(w: WindowMath) -> float:
    if w.size == 0:
        return math.nan
    r = np.diagonal(w.rates)
    return float((divide_arrays(r, w.rates.sum(axis=0)) + r).sum() / (2 * w.size))


def _nauroc_ova(w: WindowMath) -> float:
    if w.size == 0:
        return math.nan
    lam = (w.size - 2) / (2 * w.size)
    return (w.auroc_ova - lam) / (1 - lam)


def _aurpc_ova(w: WindowMath) -> float:
    if w.size == 0:
        return math.nan
    return float((divide_arrays(w.diag, w.k_i) + w.diag / w.n_i).sum() / (2 * w.size))


def _macro_f1(w: WindowMath) -> float:
    if w.size == 0:
        return math.nan
    return float(divide_arrays(2 * w.diag, w.n_i + w.k_i).mean())


def _mcc(w: WindowMath) -> float:
    t, p, s = w.c.true_counts, w.c.predicted_counts, w.c.total
    cov_tp = w.trace * s - float(t @ p)
    return safe_divide(cov_tp, math.sqrt((s * s - float(t @ t)) * (s * s - float(p @ p))))


def _kappa(w: WindowMath) -> float:
    s = w.c.total
    if s == 0:
        return math.nan
    expected = float(w.c.true_counts @ w.c.predicted_counts) / (s * s)
    return safe_divide(w.trace / s - expected, 1 - expected)


_HOLDER = {"acsa": 1.0, "gmean": 0.0, "hmean": -1.0, "min_recall": -math.inf, "max_recall": math.inf}
_MULTICLASS: Mapping[str, Callable[[WindowMath], float]] = {
    "auroc_ovo": _ovo, "auroc_ova": lambda w: w.auroc_ova, "nauroc_ova": _nauroc_ova, "aurpc_ova": _aurpc_ova,
    "maurpc_ova": _maurpc_ova, "accuracy": lambda w: safe_divide(w.trace, w.c.total), "mcc": _mcc,
    "kappa": _kappa, "macro_f1": _macro_f1,
}

def evaluate_all(
    c: Confusion | WindowMath,
    names: Iterable[str],
    *,
    positive: int = 1,
    params: Callable[[str], Mapping[str, Any]] | None = None,
) -> dict[str, float]:
    """``{name: spec(name).evaluate(c, positive=positive, **params(name))}`` for ``names``, sharing the work.

    Like ``evaluate``, no applicability check: callers pass the names that apply to ``c``.
    """
    w = c if isinstance(c, WindowMath) else WindowMath(c)
    out: dict[str, float] = {}
    for name in names:
        given = _NO_PARAMS if params is None else params(name)
        s = spec(name)
        # (Mutation testing: a fast path missed — a mutated name test, or resolving the parameters of a metric
        # without any — sends the metric on to the next test and at last to its own function below, which gives
        # the same value (tests/test_window_math.py compares every catalog metric with MetricSpec.evaluate); the
        # fallback itself serves only metrics added after this module, so no catalog metric reaches it. Those
        # lines are not mutated: every mutant of them is equivalent.)
        resolved = s.resolve_params(given) if s.params else _NO_PARAMS  # pragma: no mutate
        if name in _HOLDER:
            out[name] = w.holder(_HOLDER[name])
        elif name == "holder":  # pragma: no mutate
            out[name] = w.holder(float(resolved["p"]))
        elif name in _MULTICLASS:
            out[name] = _MULTICLASS[name](w)
        elif name == "recall":  # pragma: no mutate
            out[name] = float(w.c.recalls[positive])
        elif name == "precision":  # pragma: no mutate
            out[name] = safe_divide(float(w.c.matrix[positive, positive]), float(w.c.predicted_counts[positive]))
        elif name in _BINARY:  # pragma: no mutate
            out[name] = float(_BINARY[name](w.cells(positive), resolved))
        else:  # a metric added to the catalog after this module: its own function
            out[name] = s.evaluate(w.c, positive=positive, **given)  # pragma: no mutate
    return out
