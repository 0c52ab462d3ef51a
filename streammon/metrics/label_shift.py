"""The label-free class-mix estimate and its "only the mix changed" test (black-box shift estimation).

Under a pure prior (label) shift the model's class-conditional behaviour stays the
baseline's, so a window's predicted mix is ``q = C·π`` with
``C[i, j] = P(ŷ = i | y = j)`` read from the baseline (validation) confusion counts
``N`` (rows true, columns predicted): ``C = (N / n_j)ᵀ``. The window's class mix ``π``
then follows from its predicted counts alone (Lipton, Wang & Smola, ICML 2018; also
known as adjusted classify-and-count).

**Estimate.** ``priors`` is the simplex-constrained least-squares solution
``argmin_{π ≥ 0, Σπ = 1} ‖q̂ − Ĉπ‖²`` (BBSE's and QuaPy ``ACC``'s projection). When
``Ĉ⁻¹q̂`` lies in the simplex this is exactly ``Ĉ⁻¹q̂`` — the joint maximum-likelihood
estimate of ``(C, π)`` from the validation counts and the window's counts. On the
boundary the plain Euclidean projection is kept on purpose: projecting in the
metric of the estimated covariance ``Σ`` (below, the metric the test uses) weights
each validation column by ``π_j²``, so the dominant class's own confusions are
down-weighted and mass leaks from it to the classes it is confused with; measured
in ``examples/bench_label_shift.py`` that projection was up to 1.11× QuaPy
``ACC``'s error (digits, tree, α = 0.1), the multinomial-likelihood one up to 1.08×.
The quadratic program is solved exactly (``simplex.py``).

**Noise.** ``Σ = (diag(q) − qqᵀ)/n + Σ_j π_j² (diag(c_j) − c_j c_jᵀ)/n_j``: the
window's multinomial noise plus each validation column ``c_j``, a multinomial of the
``n_j`` validation samples of class ``j``. The second term usually dominates: it
shrinks with the *validation* size only, so a window of 10,000 predictions read
through a validation of 100 samples per class is as uncertain as the validation.
Variance terms use smoothed rates ``(N + a)/(n_j + K·a)`` with
``a = max(½, z²/(2(K − 1)))`` (at K = 2 Agresti–Coull's two pseudo-counts per
side), so a cell never seen in validation is not read as a rate known to be
exactly 0; without it, a 30-sample validation with a 5 % error rate covered in
82 % of trials instead of 95 %.

**Intervals** (delta method): ``V = Ĉ⁻¹ Σ Ĉ⁻ᵀ`` is the covariance of the
unconstrained estimate ``π̃ = Ĉ⁻¹q̂``, asymptotically normal around the true mix
whether or not it lies on the boundary; the interval for class ``j`` is
the hull of ``π̃_j ± z·√V_jj`` and ``priors[j] ± z·√V_jj``, cut to [0, 1] (the
first alone has the nominal coverage; the second keeps the estimate inside and the
interval as wide as its noise when ``π̃`` falls far outside the simplex). Coverage is
measured by simulation (tests and ``examples/bench_label_shift.py``).

**Test.** Under pure label shift ``q`` lies in ``{C·π : π in the simplex}``. The
statistic ``T = min_{π in the simplex} (q̂ − Ĉπ)ᵀ Σ⁺ (q̂ − Ĉπ)`` is the squared
Mahalanobis distance of ``q̂`` to that set, 0 inside it (``Σ`` re-evaluated at the
minimiser: three rounds, started from the estimate). Conditional on the face of the set
the projection lands on, ``T`` is asymptotically χ² with as many degrees of freedom
as that face's codimension (a property of projections onto polyhedral cones): the
number of classes estimated at exactly 0 when C is invertible, more when C is
singular. The face is read from the residual, which is unique even when ``π`` is
not, so the p-value does not depend on the order of the classes (``simplex.py``),
so ``p = P(χ²_df ≥ T)`` is valid: its false-alarm rate is at most ``alpha``.
At K = 2 the set is the segment ``[FPR, TPR]``, the test one-sided, and the
p-value halved (exact at the segment's ends). A small p-value says no class mix
explains the predictions: the model or its inputs changed.

>>> baseline = [[90, 10], [20, 80]]           # FPR 0.1, TPR 0.8
>>> e = estimate_priors(baseline, [550, 450])  # predicted-positive rate 0.45
>>> round(float(e.priors[1]), 6), e.p_value   # (0.45 − 0.1) / (0.8 − 0.1)
(0.5, 1.0)
>>> estimate_priors(baseline, [50, 950]).p_value < 0.001  # 0.95 > TPR: not a mix change
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from streammon.metrics.confusion import FloatArray, as_matrix
from streammon.metrics.simplex import face_codimension, simplex_least_squares
from streammon.metrics.tails import chi2_sf

DEFAULT_ALPHA = 0.05
ILL_CONDITIONED = 100.0  # cond(C) above which prediction noise is amplified enough to say so
_ROUNDS = 3
_ROUNDING = 1e-12  # a squared distance this small is rounding: the predicted mix lies in {C·π}
Z95 = 1.959963984540054
METHOD = "simplex-constrained least squares (BBSE/ACC), delta-method intervals from window and validation noise"


@dataclass(frozen=True)
class PriorBaseline:
    """What depends only on the baseline confusion counts, computed once (``prior_baseline``)."""

    rates: FloatArray  # C[i, j] = P(ŷ = i | y = j); a column of NaN for a class without validation samples
    class_counts: FloatArray  # n_j, validation samples per true class
    column_noise: FloatArray  # K×K×K: covariance of the j-th validation column, from smoothed rates
    smoothed: FloatArray  # smoothed rates, for variances only
    inverse: FloatArray | None  # C⁻¹, None when C is singular or a class was never seen
    condition: float
    reason: str


@dataclass(frozen=True)
class PriorEstimate:
    """A window's estimated class mix, its 1 − alpha intervals and the label-shift p-value."""

    priors: FloatArray
    lower: FloatArray
    upper: FloatArray
    p_value: float  # of "only the class mix changed"; small: no mix explains the predicted counts
    statistic: float  # squared Mahalanobis distance of the predicted mix to {C·π}
    df: int  # codimension of the face of {C·π} the projection lands on: classes at 0 when C is invertible
    predicted_mix: FloatArray  # what counting predicted labels reads
    method: str
    reason: str  # why the estimate is uncertain or undefined; "" when nothing to say


def prior_baseline(confusion: Any) -> PriorBaseline:
    """Precompute from the K×K baseline counts (rows true, columns predicted) what every window reuses.

    >>> b = prior_baseline([[90, 10], [20, 80]])
    >>> b.rates.tolist(), b.reason
    ([[0.9, 0.2], [0.1, 0.8]], '')
    >>> prior_baseline([[10, 0], [0, 0]]).reason
    'class 1 has no validation samples: its row of C is unknown'
    """
    counts = as_matrix(confusion)
    k = counts.shape[0]
    n_j = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = (counts / n_j[:, None]).T
    pseudo = max(0.5, Z95**2 / (2 * max(k - 1, 1)))
    smoothed = ((counts + pseudo) / (n_j[:, None] + k * pseudo)).T
    noise = np.zeros((k, k, k))
    for j in range(k):
        c = smoothed[:, j]
        noise[j] = (np.diag(c) - np.outer(c, c)) / max(n_j[j], 1.0)
    unseen = np.flatnonzero(n_j == 0)
    inverse: FloatArray | None = None
    condition = math.inf
    reason = ""
    if unseen.size:
        names = ", ".join(str(j) for j in unseen)
        reason = f"class {names} has no validation samples: its row of C is unknown"
    else:
        condition = float(np.linalg.cond(rates))
        if math.isfinite(condition) and condition < 1e12:
            inverse = np.linalg.inv(rates)
        if condition > ILL_CONDITIONED:
            reason = _ill_conditioned(rates, condition)
    return PriorBaseline(rates, n_j, noise, smoothed, inverse, condition, reason)


def _ill_conditioned(rates: FloatArray, condition: float) -> str:
    """Name the classes the predictions barely tell apart (the weakest singular direction of C)."""
    direction = np.linalg.svd(rates)[2][-1]
    weights = np.abs(direction)
    involved = np.flatnonzero(weights >= 0.3 * weights.max())
    names = ", ".join(str(j) for j in involved)
    never = np.flatnonzero(rates.mean(axis=1) < 0.1 / rates.shape[0])  # < 10 % of its share at a uniform mix
    extra = f"; the model almost never predicts class {', '.join(str(i) for i in never)}" if never.size else ""
    return (f"C is ill-conditioned (condition number {condition:.3g}): predictions barely tell classes "
            f"{names} apart{extra}; their intervals are wide")


def _noise(baseline: PriorBaseline, pi: FloatArray, n: float) -> FloatArray:
    """Covariance of q̂ − Ĉπ: the window's multinomial noise plus the validation columns' noise."""
    q = baseline.smoothed @ pi
    window = (np.diag(q) - np.outer(q, q)) / n
    validation = np.einsum("j,jab->ab", pi * pi, baseline.column_noise)
    total: FloatArray = window + validation
    return total


def _weight(sigma: FloatArray) -> FloatArray:
    """Σ⁺ on the plane Σx = 0, where q̂ − Ĉπ lives (Σ is singular along the ones vector).

    A multiple of the all-ones matrix is added: it changes no value of the
    objective on the simplex (the residual sums to 0) and keeps the weight
    positive definite, so the quadratic program is well posed whenever C is.
    """
    k = sigma.shape[0]
    basis = np.linalg.qr(np.eye(k) - 1.0 / k)[0][:, : k - 1]
    inner = basis.T @ sigma @ basis
    weight: FloatArray = basis @ np.linalg.solve(inner, basis.T)
    weight += np.trace(weight) / k**2
    return weight


def estimate_priors(confusion: Any, predicted: Any, *, alpha: float = DEFAULT_ALPHA) -> PriorEstimate:
    """Estimate a window's class mix from its predicted counts (module docstring: estimate, intervals, test).

    ``confusion`` is the K×K baseline counts (rows true, columns predicted) or a
    ``PriorBaseline`` made once by ``prior_baseline``; ``predicted`` the window's K
    counts of predicted labels.

    >>> e = estimate_priors([[50, 0], [0, 50]], [30, 70])  # a perfect model: the mix is the predicted mix
    >>> e.priors.round(12).tolist(), bool(e.lower[1] < 0.7 < e.upper[1])
    ([0.3, 0.7], True)
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    baseline = confusion if isinstance(confusion, PriorBaseline) else prior_baseline(confusion)
    k = baseline.rates.shape[0]
    counts = np.asarray(predicted, dtype=np.float64)
    if counts.shape != (k,) or not np.all(np.isfinite(counts)) or np.any(counts < 0):
        raise ValueError(f"predicted must be {k} finite non-negative counts, got {predicted!r}")
    n = float(counts.sum())
    mix = counts / n if n > 0 else np.full(k, math.nan)
    if n == 0 or np.isnan(baseline.rates).any():
        reason = baseline.reason if n > 0 else "the window holds no predictions"
        return _undefined(k, mix, reason)
    rates = baseline.rates
    pi = simplex_least_squares(rates.T @ rates, rates.T @ mix)[0]
    nearest = pi  # the point of {C·π} nearest to q̂ in the noise's metric, for the test only (module docstring)
    weight = np.eye(k)
    for _ in range(_ROUNDS):
        weight = _weight(_noise(baseline, nearest, n))
        nearest = simplex_least_squares(rates.T @ weight @ rates, rates.T @ weight @ mix)[0]
    residual = mix - rates @ nearest
    statistic = float(residual @ weight @ residual)
    statistic = 0.0 if statistic <= _ROUNDING else statistic  # inside the set up to rounding (z < 1e-6)
    df = face_codimension(rates, weight, mix, nearest) if statistic > 0.0 else 0
    p_value = 1.0 if df == 0 or statistic == 0.0 else chi2_sf(statistic, df)
    if k == 2 and df == 1 and statistic > 0.0:
        p_value /= 2
    lower, upper = _intervals(baseline, pi, mix, n, alpha)
    return PriorEstimate(_frozen(pi), lower, upper, p_value, statistic, df, _frozen(mix), METHOD, baseline.reason)


def _intervals(baseline: PriorBaseline, pi: FloatArray, mix: FloatArray, n: float,
               alpha: float) -> tuple[FloatArray, FloatArray]:
    """The hull of the delta-method intervals around the unconstrained estimate and around ``pi``, in [0, 1]."""
    k = pi.shape[0]
    if baseline.inverse is None:
        return _frozen(np.zeros(k)), _frozen(np.ones(k))
    inverse = baseline.inverse
    spread = inverse @ _noise(baseline, pi, n) @ inverse.T
    half = NormalDist().inv_cdf(1 - alpha / 2) * np.sqrt(np.maximum(np.diag(spread), 0.0))
    centre = inverse @ mix
    lower = np.clip(np.minimum(pi, centre) - half, 0.0, 1.0)
    upper = np.clip(np.maximum(pi, centre) + half, 0.0, 1.0)
    return _frozen(lower), _frozen(upper)


def _undefined(k: int, mix: FloatArray, reason: str) -> PriorEstimate:
    nan = _frozen(np.full(k, math.nan))
    return PriorEstimate(nan, _frozen(np.zeros(k)), _frozen(np.ones(k)), math.nan, math.nan, 0, _frozen(mix),
                         METHOD, reason)


def _frozen(values: FloatArray) -> FloatArray:
    out = np.array(values, dtype=np.float64)
    out.setflags(write=False)
    return out
