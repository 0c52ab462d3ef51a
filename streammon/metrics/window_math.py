"""Every catalog metric of a stack of matrices at once (the read path's evaluator).

``MetricSpec.evaluate`` computes one metric of one ``Confusion``; a report needs the whole
catalog, twice (as read and at the reference mix), for every window. ``window_numbers`` takes the
W windows of a report as one (W, K, K) array and computes every number a report shows of them —
scores as read, at each window's reference mix and prior-corrected, per-class rates, mix, RRT,
the prior-shift test — in one compiled call (``streammon.metrics.compiled``); ``score_stack``
scores a stack of matrices (``evaluate_stack``, ``evaluate_all``). Each metric follows the
formula of its own function (``streammon.metrics.binary``, ``multiclass``; only the order of
summation differs) and agrees with it to 1e-12 on random matrices, as read and reweighted with
NaN rows (tests/test_window_math.py); a metric the compiled loop does not know is scored by its
own function, matrix by matrix.

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.confusion import Confusion, FloatArray
from streammon.metrics.prior import reweight_stack
from streammon.metrics.specs import spec

_NO_PARAMS: Mapping[str, Any] = {}
Params = Callable[[str], Mapping[str, Any]]


def _compiled() -> ModuleType:
    """``streammon.metrics.compiled``, imported on first use (it imports numba, ~0.2 s): not with streammon."""
    from streammon.metrics import compiled  # noqa: PLC0415

    return compiled


@dataclass(frozen=True)
class Coded:
    """Metrics as the compiled loop takes them: ``names``, each one's ``codes`` (``compiled.UNKNOWN`` for a metric
    it does not know), its numeric parameters ``first``/``second`` (``holder``: p; ``iba``: α and squared as 0/1),
    and the parameters as given (for the metrics scored by their own function)."""

    names: tuple[str, ...]
    codes: npt.NDArray[np.int64]
    first: FloatArray
    second: FloatArray
    given: tuple[Mapping[str, Any], ...]
    unknown: bool  # some metric has no code (it is scored by its own function)


def code_metrics(names: Sequence[str], params: Params | None = None) -> Coded:
    """``names`` with their parameters (``params(name)``, default none) resolved for ``score_stack``: kept by a
    caller that scores the same metrics again (a monitor's reports). Refuses unknown or missing parameters
    (``MetricSpec.resolve_params``)."""
    names = tuple(names)
    given = tuple(_NO_PARAMS if params is None else params(name) for name in names)
    compiled = _compiled()
    codes = np.array([compiled.CODES.get(name, compiled.UNKNOWN) for name in names], dtype=np.int64)
    first, second = np.zeros(len(names)), np.zeros(len(names))
    for row, (name, pairs) in enumerate(zip(names, given, strict=True)):
        metric = spec(name)
        resolved = metric.resolve_params(pairs) if metric.params else _NO_PARAMS
        if name == "holder":
            first[row] = float(resolved["p"])
        elif name == "iba":
            first[row], second[row] = float(resolved["alpha"]), float(bool(resolved["squared"]))
    return Coded(names, codes, first, second, given, bool((codes == compiled.UNKNOWN).any()))


@dataclass(frozen=True)
class Scored:
    """The scores of N matrices (``values``: metrics × N, in the order asked) with each matrix's per-class
    recalls and precisions (N × K)."""

    values: FloatArray
    recalls: FloatArray
    precisions: FloatArray


def score_stack(matrices: FloatArray, metrics: Coded, *, positive: int = 1) -> Scored:
    """Score the N matrices ``matrices`` (N, K, K; counts, or rates with NaN rows) on ``metrics``.

    Each value is ``spec(name).evaluate(Confusion.of(matrix), positive=positive, **params(name))``; like
    ``evaluate``, no applicability check: callers pass the names that apply to K.
    """
    n, k = matrices.shape[0], matrices.shape[1]
    values = np.empty((len(metrics.codes), n))
    recalls, precisions = np.empty((n, k)), np.empty((n, k))
    compiled = _compiled()
    with compiled.quiet():
        compiled.score_stack(matrices, metrics.codes, metrics.first, metrics.second, positive, values, recalls,
                             precisions)
    for row in np.flatnonzero(metrics.codes == compiled.UNKNOWN).tolist() if metrics.unknown else []:  # (later)
        metric, given = spec(metrics.names[row]), metrics.given[row]
        values[row] = [metric.evaluate(Confusion.of(m), positive=positive, **given) for m in matrices]
    return Scored(values, recalls, precisions)


@dataclass(frozen=True)
class WindowNumbers:
    """Every number of W windows (``window_numbers``): per metric (metrics × W) ``scores``, ``corrected`` (at the
    reference mix) and ``distortion``; per class (W × K) ``recalls``, ``precisions``, ``corrected_precisions`` and
    ``mixes``; per window ``rrt``, ``js``, ``tv``, ``chi2``, ``p_value`` and ``df``."""

    scores: FloatArray
    corrected: FloatArray
    distortion: FloatArray
    recalls: FloatArray
    precisions: FloatArray
    corrected_precisions: FloatArray
    mixes: FloatArray
    rrt: FloatArray
    js: FloatArray
    tv: FloatArray
    chi2: FloatArray
    p_value: FloatArray
    df: npt.NDArray[np.int64]


def window_numbers(counts: npt.NDArray[np.int64], metrics: Coded, *, positive: int, priors: FloatArray,
                   has_reference: npt.NDArray[np.bool_], minority: npt.NDArray[np.int64],
                   keeps: npt.NDArray[np.bool_], log_gammas: FloatArray) -> WindowNumbers:
    """Every number of the W windows ``counts`` (W, K, K): their scores on ``metrics`` as read, at each window's
    reference ``priors`` (W × K, normalised) where ``has_reference`` (``keeps``: the metrics that satisfy
    Condition 1, whose value there is the score when the same classes are present), per-class rates, mix, RRT
    (``minority``: RRT's binary minority, −1 for none) and the chi-square test of the mix against the reference
    (``log_gammas``: ``tails.log_gammas`` up to K). One compiled call (``compiled.window_numbers``); metrics
    the loop does not know are scored by their own function."""
    windows, k = counts.shape[0], counts.shape[1]
    if k == 1:
        # One class known so far: scored, as scikit-learn does, as K = 2 with the other class absent (averages
        # over the classes present; what needs a second class stays NaN).
        counts, priors = np.pad(counts, ((0, 0), (0, 1), (0, 1))), np.pad(priors, ((0, 0), (0, 1)))
    compiled = _compiled()
    per_metric = np.empty((3, len(metrics.codes), windows))
    per_class = np.empty((4, windows, counts.shape[1]))
    per_window = np.empty((5, windows))
    df = np.empty(windows, dtype=np.int64)
    with compiled.quiet():
        compiled.window_numbers(counts, priors, has_reference, minority, keeps, metrics.codes, metrics.first,
                                metrics.second, positive, log_gammas, per_metric, per_class, per_window, df)
    if metrics.unknown:
        _score_unknown(counts, metrics, positive, priors, has_reference, keeps, per_metric)
    classes = per_class[:, :, :k]
    return WindowNumbers(per_metric[0], per_metric[1], per_metric[2], classes[0], classes[1], classes[2], classes[3],
                         per_window[0], per_window[1], per_window[2], per_window[3], per_window[4], df)


def _score_unknown(counts: npt.NDArray[np.int64], metrics: Coded, positive: int, priors: FloatArray,  # noqa: PLR0917
                   has_reference: npt.NDArray[np.bool_], keeps: npt.NDArray[np.bool_], per_metric: FloatArray) -> None:
    """The rows of ``window_numbers``' metrics the compiled loop does not know: each by its own function."""
    matrices = counts.astype(np.float64)
    present, sizes = matrices.sum(axis=2) > 0, matrices.sum(axis=(1, 2))
    at_mix = reweight_stack(matrices, priors)
    same_classes = (present == (priors > 0)).all(axis=1)
    for row in np.flatnonzero(metrics.codes == _compiled().UNKNOWN).tolist():
        metric, given = spec(metrics.names[row]), metrics.given[row]
        for w, (m, reweighted) in enumerate(zip(matrices, at_mix, strict=True)):
            score = metric.evaluate(Confusion.of(m), positive=positive, **given)
            weighted = bool(has_reference[w]) and sizes[w] > 0
            corrected = math.nan if not weighted else (
                score if keeps[row] and same_classes[w] else metric.evaluate(Confusion.of(reweighted),
                                                                             positive=positive, **given))
            per_metric[:, row, w] = score, corrected, score - corrected


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
