"""Every catalog metric of a stack of matrices at once (the read path's evaluator).

``MetricSpec.evaluate`` computes one metric of one ``Confusion``; a report needs the whole
catalog, twice (as read and at the reference mix), for every window. ``score_stack`` takes the W
windows of a report as one (W, K, K) array and scores them, and their reweighting to each
window's priors, in one compiled pass (``streammon.metrics.stack_kernel``), with each matrix's
recalls and precisions. Each metric follows the formula of its own function
(``streammon.metrics.binary``, ``multiclass``; only the order of summation differs) and agrees
with it to 1e-12 on random matrices, as read and reweighted with NaN rows
(tests/test_window_math.py); a metric the kernel does not know is scored by its own function,
matrix by matrix.

>>> c = Confusion.of([[8, 2, 0], [1, 6, 3], [0, 0, 10]])
>>> values = evaluate_all(c, ("acsa", "gmean", "mcc"), positive=0)
>>> all(abs(values[name] - spec(name).evaluate(c)) < 1e-12 for name in values)
True
>>> stack = np.array([[[8, 2], [1, 9]], [[0, 0], [3, 7]]], dtype=float)
>>> evaluate_stack(stack, ("acsa", "tpr"), positive=1)["tpr"].tolist()
[0.9, 0.7]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics import stack_kernel
from streammon.metrics.confusion import Confusion, FloatArray
from streammon.metrics.prior import reweight_stack
from streammon.metrics.specs import spec

_NO_PARAMS: Mapping[str, Any] = {}
Params = Callable[[str], Mapping[str, Any]]


@dataclass(frozen=True)
class Coded:
    """Metrics as the kernel takes them: ``names``, each one's ``codes`` (``stack_kernel.UNKNOWN`` for a metric it
    does not know), its numeric parameters ``first``/``second`` (``holder``: p; ``iba``: α and squared as 0/1),
    and the parameters as given (for the metrics scored by their own function)."""

    names: tuple[str, ...]
    codes: npt.NDArray[np.int64]
    first: FloatArray
    second: FloatArray
    given: tuple[Mapping[str, Any], ...]


def code_metrics(names: Sequence[str], params: Params | None = None) -> Coded:
    """``names`` with their parameters (``params(name)``, default none) resolved for ``score_stack``: kept by a
    caller that scores the same metrics again (a monitor's reports). Refuses unknown or missing parameters
    (``MetricSpec.resolve_params``)."""
    names = tuple(names)
    given = tuple(_NO_PARAMS if params is None else params(name) for name in names)
    codes = np.array([stack_kernel.CODES.get(name, stack_kernel.UNKNOWN) for name in names], dtype=np.int64)
    first, second = np.zeros(len(names)), np.zeros(len(names))
    for row, (name, pairs) in enumerate(zip(names, given, strict=True)):
        metric = spec(name)
        resolved = metric.resolve_params(pairs) if metric.params else _NO_PARAMS
        if name == "holder":
            first[row] = float(resolved["p"])
        elif name == "iba":
            first[row], second[row] = float(resolved["alpha"]), float(bool(resolved["squared"]))
    return Coded(names, codes, first, second, given)


@dataclass(frozen=True)
class Scored:
    """The scores of N matrices (``values``: metrics × N, in the order asked) with each matrix's per-class
    recalls and precisions (N × K)."""

    values: FloatArray
    recalls: FloatArray
    precisions: FloatArray


def score_stack(counts: FloatArray, metrics: Coded, *, positive: int = 1, priors: FloatArray | None = None) -> Scored:
    """Score the W matrices ``counts`` (W, K, K; counts, or rates with NaN rows) on ``metrics`` and, given
    ``priors`` (W × K, each row normalised), each matrix reweighted to its row too: N = W matrices, or 2W (the
    reweighted after the W as read).

    Each value is ``spec(name).evaluate(Confusion.of(matrix), positive=positive, **params(name))``; like
    ``evaluate``, no applicability check: callers pass the names that apply to K.
    """
    windows, k = counts.shape[0], counts.shape[1]
    n = windows if priors is None else 2 * windows
    values = np.empty((len(metrics.codes), n))
    recalls, precisions = np.empty((n, k)), np.empty((n, k))
    mix = np.zeros((windows, k)) if priors is None else priors
    with np.errstate(all="ignore"):  # (only where the loop runs uncompiled: NaN and inf are its results)
        stack_kernel.compiled()(counts, mix, priors is not None, metrics.codes, metrics.first, metrics.second,
                                positive, values, recalls, precisions)
    for row in np.flatnonzero(metrics.codes == stack_kernel.UNKNOWN).tolist():  # a metric added after the kernel
        metric, given = spec(metrics.names[row]), metrics.given[row]
        matrices = counts if priors is None else np.concatenate([counts, reweight_stack(counts, priors)])
        values[row] = [metric.evaluate(Confusion.of(m), positive=positive, **given) for m in matrices]
    return Scored(values, recalls, precisions)


def evaluate_stack(matrices: FloatArray, names: Sequence[str], *, positive: int = 1,
                   params: Params | None = None) -> dict[str, FloatArray]:
    """``{name: [spec(name).evaluate(Confusion.of(m), positive=positive, **params(name)) for m in matrices]}``
    as one array per metric (``score_stack`` of the matrices as they are)."""
    metrics = code_metrics(names, params)
    values = score_stack(np.asarray(matrices, dtype=np.float64), metrics, positive=positive).values
    return dict(zip(metrics.names, values, strict=True))


def evaluate_all(c: Confusion, names: Sequence[str], *, positive: int = 1,
                 params: Params | None = None) -> dict[str, float]:
    """``{name: spec(name).evaluate(c, positive=positive, **params(name))}`` for ``names``: ``evaluate_stack``
    of one matrix."""
    values = evaluate_stack(c.matrix[None], names, positive=positive, params=params)
    return {name: float(v[0]) for name, v in values.items()}
