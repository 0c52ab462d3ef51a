"""A window's class mix from its calibrated scores by EM (Saerens, Latinne & Decaestecker 2002), with intervals.

**Model.** Under a pure label shift the class-conditional score densities ``f_k`` stay the validation's, so a
window sample's density is ``Σ_k π'_k f_k(x)``. With posteriors ``p_k(x) = π_k f_k(x) / f(x)`` calibrated at the
validation (source) mix ``π`` (``calibration.fit_bcts``), ``f_k(x) ∝ p_k(x) / π_k`` and the window's
log-likelihood in the new mix is, up to a constant, ``ℓ(π') = Σᵢ wᵢ log Σ_k π'_k rᵢₖ`` with ``rᵢₖ = pₖ(xᵢ)/π_k``
(Saerens et al. 2002, eq. 2–4). It is concave in ``π'``.

**EM** (their Section 2.2): the E step adjusts each posterior to the current mix,
``p'ᵢₖ = (π'_k/π_k) pᵢₖ / Σ_j (π'_j/π_j) pᵢⱼ``; the M step sets ``π'_k = Σᵢ wᵢ p'ᵢₖ / Σᵢ wᵢ``. Each step increases
``ℓ`` (a standard EM property), and the iterates stay in the simplex. It stops when no prior moves by more than
``TOLERANCE`` in one step, or after ``MAX_ITERATIONS`` (then ``converged`` is False and ``reason`` says so). EM is
slow (linear) where a class's mix goes to 0; its limit is still the maximum-likelihood mix. The steps are
accelerated by SQUAREM (``em_squarem``: extrapolated jumps that never lower ``ℓ``, the same stopping rule; about 4×
fewer steps at K = 10).

**Intervals** (delta method, on ``K − 1`` free coordinates, the largest prior eliminated):

- the window's noise. For the mix ``π'`` that generated the window (``target="mix"``): the inverse of the observed
  Fisher information of ``ℓ``, ``I = Σᵢ wᵢ dᵢdᵢᵀ`` with ``dᵢ = ∇ log(π'·rᵢ)`` — exactly minus the Hessian of ``ℓ``
  (its second derivative is ``−dᵢdᵢᵀ`` per sample). For the window's own class shares (``target="window"``, the
  default: what its labels will show), the class counts are not noise: ``π̂ − shares ≈ I⁻¹ Σᵢ dᵢ`` has, given
  the classes, the covariance ``I⁻¹ W I⁻¹`` with ``W = Σ_c Σᵢ wᵢ p'ᵢ꜀ (dᵢ − m_c)(dᵢ − m_c)ᵀ`` the within-class
  spread of the scores ``dᵢ`` (class memberships weighted by the adjusted posteriors ``p'ᵢ꜀``, ``m_c`` their
  class means): ``I = W + B`` splits into within and between classes, and the window's sampling of classes
  only contributes ``B``. A perfect classifier has ``W = 0``: it reads the window's shares exactly;
- the validation set's noise, when given (``estimate_mix``, ``parameter_covariance``): the covariance of the
  calibration and the source mix (``calibration.calibration_covariance``, a sandwich over the validation samples)
  carried through the EM fixed point by the implicit-function theorem, ``dπ'/dφ = −(∂G/∂π')⁻¹ ∂G/∂φ`` with
  ``G(π', φ) = mean p'(π'; φ) − π'`` (derivatives by central differences). Without it the intervals cover the
  window's mix less often the smaller the validation set is (``examples/bench_em_priors.py`` measures both).
- the calibration's misfit (``misfit_bias``): BCTS has K parameters, so on a real model it is calibrated on
  average at the validation mix but not within each class, and EM is then biased at any other mix by an amount
  that does not shrink with more samples. Neither noise term sees it. The labelled validation measures it: moved
  to the estimated mix by weighting each sample ``π'_c/π_c`` of its class, its true mix is ``π'`` exactly, and EM on
  its calibrated posteriors reads ``π' + b``. The intervals carry ``b bᵀ`` (a mean squared error, not only a
  variance): on scikit-learn's breast_cancer, wine and digits the 95 % intervals covered 90–93 % of the window
  shares without it, 94.5–96 % with the true misfit removed — ``b`` is that misfit as the validation sees it.

The interval for class ``k`` is ``π'_k ± z·√V_kk`` cut to ``[0, 1]`` (``intervals``); where part of ``V`` is a
variance over B bootstrap replicas (``Validation``), Student's t at Satterthwaite's degrees of freedom replaces
``z`` (``student_t``). For the window's own class shares (``target="window"``) the variance
gains half a sample's, ``(1/(2n))²``: the shares are multiples of ``1/n`` and, where the classifier separates most
of a small window, the window term ``I⁻¹ W I⁻¹`` is near 0 while EM's error is mostly whole samples — the few the
model gets confidently wrong, which its posteriors (hence ``W``) do not see. On scikit-learn's breast_cancer with
logistic regression and windows of 85 drawn without replacement (``examples/bench_em_real.py``) the intervals
without it covered 0.915 (200 trials) and 0.921 (1,000; a fraction of one sample short in half the misses); with
it 0.950 and 0.936 for 5 % more width (at n = 1,000 and a standard error of 0.005: 0.5 %). Adding half a sample
to the half-width instead (Yates's continuity correction) covered 0.980 / 0.952 for 15 % more width, and 0.97–0.98
on digits (K = 10, n = 270) which covered 0.94–0.97 without: needlessly wide.

**Where the scores do not locate the mix.** A model whose scores are all alike (a pipeline that lost its inputs),
or that cannot tell two classes apart, leaves ``ℓ`` flat along some direction of the mix: EM then drifts along it on
the posteriors' rounding (constant scores on a 20 % class read a 1.5 % share), and the window's variance
``I⁻¹ W I⁻¹`` — a linearisation around a located estimate — reads 0 there, as ``W`` and ``I`` vanish together. So
along every direction where the observed information is below ``LOCATED`` (1: a standard error above 1 for the mix
that generated the window) the estimate moves back to its start's (the validation's mix), the covariance gains a
variance of 1 for the classes the direction moves (intervals of the whole range, finite for what adds to them) and
``reason`` says so. Only directions within the face of the simplex the estimate lies on count: a class EM puts at 0
is held there by the simplex, not by the scores. What the scores do locate is kept: with two classes indistinct,
the third reads what EM with the two merged reads (``tests/test_em_identifiability.py``, against the likelihood by
brute force).

>>> p = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.1, 0.9]])   # calibrated at the source mix (0.5, 0.5)
>>> e = em_priors(p, [0.5, 0.5])
>>> e.method, e.converged, bool(abs(e.priors.sum() - 1) < 1e-12)
('em', True, True)
>>> bool(np.allclose(e.priors, mix_posteriors(p, [0.5, 0.5], e.priors).mean(axis=0)))   # the EM fixed point
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from streammon.metrics.calibration import Calibration
from streammon.metrics.confusion import FloatArray
from streammon.metrics.em_squarem import fixed_point
from streammon.metrics.probabilities import log_probabilities, posteriors
from streammon.metrics.student_t import t_quantile

TOLERANCE = 1e-10
MAX_ITERATIONS = 10_000
METHOD = "em"
TARGETS = ("window", "mix")
_STEP = 1e-5  # central-difference step for the validation term's derivatives
# The window's Fisher information about the mix (free coordinates) below which its scores do not locate the mix:
# a standard error above 1, in some direction, for the mix that generated the window (module docstring)
LOCATED = 1.0
ACTIVE = 1e-9  # a class whose estimated share is at most this lies on the simplex's boundary (EM reads ~1e-17 there)
NOT_LOCATED = ("the scores hardly tell some classes apart (the window's Fisher information about the mix is below 1 "
               "in some direction): there the mix is not located, the estimate keeps the validation's and those "
               "classes' intervals span the whole range")


@dataclass(frozen=True)
class MixEstimate:
    """A window's class mix by EM on calibrated posteriors, and its 1 − alpha intervals."""

    priors: FloatArray
    lower: FloatArray
    upper: FloatArray
    covariance: FloatArray  # K × K, of the estimate (window noise, plus the validation's when it was given)
    log_likelihood: float  # ℓ(π') − ℓ(π): how much better the estimated mix explains the window than the source's
    iterations: int
    converged: bool
    n: float  # the window's total weight (samples)
    method: str
    reason: str  # why the estimate is uncertain or undefined; "" when nothing to say


def check_source(source_priors: Any, k: int) -> FloatArray:
    """The source (validation) mix as K positive shares summing to 1 (a clear ``ValueError`` otherwise)."""
    pi = np.asarray(source_priors, dtype=np.float64)
    if pi.shape != (k,) or not np.all(np.isfinite(pi)) or np.any(pi <= 0) or abs(pi.sum() - 1.0) > 1e-9:
        raise ValueError(f"source_priors must be {k} positive shares summing to 1, got {source_priors!r}")
    return pi


def check_weights(weights: Any, n: int) -> FloatArray:
    """Sample weights (counts of histogram representatives): n finite non-negative numbers; None is all ones."""
    if weights is None:
        return np.ones(n)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"weights must be {n} finite non-negative numbers, got {weights!r}")
    return w


def mix_posteriors(posteriors: Any, source_priors: Any, priors: Any) -> FloatArray:
    """Saerens' adjustment: posteriors calibrated at ``source_priors`` moved to the mix ``priors``.

    >>> mix_posteriors([[0.5, 0.5]], [0.5, 0.5], [0.2, 0.8]).tolist()
    [[0.2, 0.8]]
    """
    p = np.asarray(posteriors, dtype=np.float64)
    ratio = np.asarray(priors, dtype=np.float64) / np.asarray(source_priors, dtype=np.float64)
    moved = p * ratio
    total = moved.sum(axis=1, keepdims=True)
    out: FloatArray = np.divide(moved, total, out=np.full_like(moved, np.nan), where=total > 0)
    return out


def em_priors(posteriors: Any, source_priors: Any, *, weights: Any = None, alpha: float = 0.05,
              target: str = "window", start: Any = None, tolerance: float = TOLERANCE,
              max_iterations: int = MAX_ITERATIONS) -> MixEstimate:
    """The window's mix by EM on ``posteriors`` ((n, K), calibrated at ``source_priors``), intervals from the
    window's noise only (module docstring) for ``target`` ``"window"`` (its class shares) or ``"mix"``.
    ``weights``: counts per row, for a histogram's representatives; ``start``: the first mix (default the source's;
    a nearby estimate saves iterations)."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    p = np.asarray(posteriors, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] < 2 or not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"posteriors must be an (n, K ≥ 2) array of probabilities, got shape {np.shape(posteriors)}")
    k = p.shape[1]
    source = check_source(source_priors, k)
    w = check_weights(weights, p.shape[0])
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    keep = w > 0
    p, w = p[keep], w[keep]
    n = float(w.sum())
    if n == 0:
        nan = np.full(k, math.nan)
        return MixEstimate(_frozen(nan), _frozen(np.zeros(k)), _frozen(np.ones(k)), _frozen(np.full((k, k), np.nan)),
                           math.nan, 0, False, 0.0, METHOD, "the window holds no scored predictions")
    ratio = p / source
    first = source.copy() if start is None else check_source(start, k)
    pi, iterations, converged = fixed_point(ratio, w, first, tolerance, max_iterations)  # SQUAREM-accelerated EM
    reason = "" if converged else f"EM did not converge in {max_iterations} iterations (a class's mix near 0)"
    covariance, loose = _fisher_covariance(ratio, w, pi, target)
    if loose.shape[1]:  # along these EM drifted on a near-flat likelihood: there the mix stays at the start's
        step = loose @ np.linalg.lstsq(loose, first - pi, rcond=None)[0]
        falling = step < 0
        reach = float(np.min(pi[falling] / -step[falling], initial=1.0))  # as far as the simplex lets it
        pi = pi + min(1.0, reach) * step
        pi = np.maximum(pi, 0.0) / np.maximum(pi, 0.0).sum()  # rounding only
        covariance, loose = _fisher_covariance(ratio, w, pi, target)
        reason = "; ".join(filter(None, [reason, NOT_LOCATED]))
    base = ratio @ source
    gain = float(w @ (np.log(np.maximum(ratio @ pi, 1e-300)) - np.log(np.maximum(base, 1e-300))))
    lower, upper = intervals(pi, covariance, alpha, n=_lattice(n, target))
    return MixEstimate(_frozen(pi), lower, upper, _frozen(covariance), gain, iterations, converged, n, METHOD, reason)


def _lattice(n: float, target: str) -> float:
    """The ``n`` of ``intervals``' continuity correction: the window's samples for its shares, none for the mix."""
    return n if target == "window" else math.inf


def _reduced(k: int, drop: int) -> FloatArray:
    """The K × (K − 1) map from free coordinates to the mix (the dropped class takes minus their sum)."""
    a = np.zeros((k, k - 1))
    free = [j for j in range(k) if j != drop]
    a[free, np.arange(k - 1)] = 1.0
    a[drop] = -1.0
    return a


def _fisher_covariance(ratio: FloatArray, w: FloatArray, pi: FloatArray, target: str) -> tuple[FloatArray, FloatArray]:
    """The window's part of the covariance on the free coordinates, mapped to the K priors: ``I⁻¹`` for the
    mix (``target="mix"``), ``I⁻¹ W I⁻¹`` for the window's own class shares (module docstring); and the
    directions (K × m, each summing to 0, its largest component ±1) its scores do not locate: within the face of
    the simplex ``pi`` lies on (the classes it gives a share), those where the information is below ``LOCATED``.
    ``I⁻¹ W I⁻¹`` is a linearisation around a located estimate — a window of indistinct scores makes ``W`` and
    ``I`` vanish together, which it would read as known exactly — so it is taken on the other directions, and each
    loose direction ``u`` adds ``u uᵀ`` (a variance of 1 for the classes it moves: intervals of the whole range,
    finite for what adds to them). A class at 0 (EM on its boundary) is held there by the simplex, not by the
    scores: a direction that moves it is not loose."""
    k = pi.shape[0]
    a = _reduced(k, int(np.argmax(pi)))
    d = (ratio / (ratio @ pi)[:, None]) @ a  # ∇ log(π'·rᵢ) in the free coordinates
    info = (d * w[:, None]).T @ d
    face = np.flatnonzero(pi[np.argmax(a, axis=0)] > ACTIVE)  # the free coordinates of classes with a share
    values, vectors = np.linalg.eigh(info[np.ix_(face, face)]) if face.size else (np.zeros(0), np.zeros((0, 0)))
    free_loose = np.zeros((k - 1, int(np.sum(values < LOCATED))))
    free_loose[face] = vectors[:, values < LOCATED]
    keep = np.eye(k - 1) - free_loose @ free_loose.T  # the other directions (the loose ones are orthonormal)
    inverse = keep @ np.linalg.pinv(keep @ info @ keep) @ keep
    if target == "window":
        share = ratio * pi
        share /= share.sum(axis=1, keepdims=True)  # p'ᵢ꜀: sample i's posterior at the estimated mix
        within = np.zeros_like(info)
        for c in range(k):
            wc = w * share[:, c]
            if wc.sum() <= 0:
                continue
            centred = d - (wc @ d) / wc.sum()
            within += (centred * wc[:, None]).T @ centred
        inverse = inverse @ within @ inverse
    loose = a @ free_loose
    loose = loose / np.max(np.abs(loose), axis=0, initial=1e-300)
    out: FloatArray = a @ inverse @ a.T + loose @ loose.T
    return out, loose


def intervals(pi: FloatArray, covariance: FloatArray, alpha: float,
              df: Any = None, n: float = math.inf) -> tuple[FloatArray, FloatArray]:
    """``π ± q·√(diag(covariance) + (1/(2n))²)`` at level 1 − alpha, cut to [0, 1] (read-only arrays): ``q`` the
    normal quantile, or Student's t quantile per class with ``df`` degrees of freedom (K numbers; ``inf`` is
    normal) when part of the variance is itself estimated from few replicas (``satterthwaite_df``); ``n``: the
    window's samples when the target is its class shares (module docstring: half a sample's floor), ``inf`` for
    the mix (none).

    >>> lo, hi = intervals(np.array([0.5, 0.5]), np.zeros((2, 2)), 0.05, n=100)   # no noise: q half-samples
    >>> [round(x, 4) for x in lo.tolist()], [round(x, 4) for x in hi.tolist()]
    ([0.4902, 0.4902], [0.5098, 0.5098])
    """
    floor = (0.5 / n) ** 2 if n > 0 else 0.0
    sd = np.sqrt(np.maximum(np.diag(covariance), 0.0) + floor)
    p = 1 - alpha / 2
    if df is None:
        half = NormalDist().inv_cdf(p) * sd
    else:
        half = np.array([t_quantile(p, float(d)) for d in np.broadcast_to(df, sd.shape)]) * sd
    return _frozen(np.clip(pi - half, 0.0, 1.0)), _frozen(np.clip(pi + half, 0.0, 1.0))


def estimate_mix(calibration: Calibration, source_priors: Any, scores: Any, *, weights: Any = None,
                 parameter_covariance: Any = None, alpha: float = 0.05, target: str = "window") -> MixEstimate:
    """EM after BCTS: calibrate the window's raw ``scores`` (binary (n,) or (n, K)), run EM from the source mix,
    and add the validation's noise to the intervals when ``parameter_covariance`` (the covariance of
    ``(a, b₁…b_{K−1}, π₀…π_{K−2})`` from ``calibration.calibration_covariance``) is given.

    >>> from streammon.metrics.calibration import fit_bcts
    >>> rng = np.random.default_rng(1)
    >>> y = rng.integers(0, 2, 400); s = 1 / (1 + np.exp(-(2 * y - 1) * 1.5 - rng.normal(size=400)))
    >>> cal = fit_bcts(s, y, 2)
    >>> e = estimate_mix(cal, np.bincount(y) / 400, s)
    >>> bool(np.all(e.lower <= e.priors)) and bool(np.all(e.priors <= e.upper))
    True
    """
    k = calibration.k
    logits = log_probabilities(scores, k, calibration.floor)
    source = check_source(source_priors, k)
    estimate = em_priors(posteriors(calibration.scale * logits + calibration.bias), source, weights=weights,
                         alpha=alpha, target=target)
    if parameter_covariance is None or not np.all(np.isfinite(estimate.priors)):
        return estimate
    cov = np.asarray(parameter_covariance, dtype=np.float64)
    if cov.shape != (2 * k - 1, 2 * k - 1):
        raise ValueError(f"parameter_covariance must be {2 * k - 1}×{2 * k - 1}, got shape {cov.shape}")
    w = check_weights(weights, logits.shape[0])
    jacobian = _fixed_point_jacobian(logits, w, calibration, source, estimate.priors)
    total = estimate.covariance + jacobian @ cov @ jacobian.T
    lower, upper = intervals(estimate.priors, total, alpha, n=_lattice(estimate.n, target))
    return MixEstimate(estimate.priors, lower, upper, _frozen(total), estimate.log_likelihood, estimate.iterations,
                       estimate.converged, estimate.n, METHOD, estimate.reason)


def misfit_bias(posteriors: Any, y_true: Any, source_priors: Any, mix: Any, *, start: Any = None) -> FloatArray:
    """EM's bias at ``mix`` on a labelled validation set (module docstring): EM on its ``posteriors`` ((n, K),
    calibrated at ``source_priors`` — its own class mix), each sample weighted ``mix_c / source_c`` of its class
    ``y_true``, so the weighted set's true mix is ``mix``; returns EM's mix minus ``mix``. Zero for posteriors
    that are the true class probabilities within each class, whatever the mix.

    >>> y = np.array([0, 0, 0, 1, 1, 0, 1, 1])
    >>> p = np.array([[0.8, 0.2], [0.6, 0.4], [0.4, 0.6], [0.3, 0.7], [0.1, 0.9], [0.9, 0.1], [0.7, 0.3], [0.2, 0.8]])
    >>> bool(np.allclose(misfit_bias(p, y, [0.5, 0.5], [0.5, 0.5]), 0))   # its own mix: the posteriors average to it
    True
    >>> bool(abs(misfit_bias(p, y, [0.5, 0.5], [0.9, 0.1])[0]) > 0.01)   # moved away, these scores misread it
    True
    """
    p = np.asarray(posteriors, dtype=np.float64)
    k = p.shape[1] if p.ndim == 2 else 0
    source = check_source(source_priors, k)
    y = np.asarray(y_true)
    if y.shape != (p.shape[0],) or y.dtype.kind not in "iu" or np.any(y < 0) or np.any(y >= k):
        raise ValueError(f"y_true must be {p.shape[0]} class indices in [0, {k}), got {y_true!r}")
    target = np.asarray(mix, dtype=np.float64)
    if target.shape != (k,) or not np.all(np.isfinite(target)) or np.any(target < 0) or abs(target.sum() - 1) > 1e-6:
        raise ValueError(f"mix must be {k} non-negative shares summing to 1, got {mix!r}")
    present = np.bincount(y, minlength=k) / y.size
    if np.any(present == 0):
        raise ValueError(f"every class needs a validation sample to weight; class counts {np.bincount(y, minlength=k)}")
    if start is None:
        start = np.clip(target, 1e-6, None) / np.clip(target, 1e-6, None).sum()  # EM must start off the edges
    read = em_priors(p, source, weights=(target / present)[y], start=start).priors
    out: FloatArray = read - target
    return out


def _fixed_point_jacobian(logits: FloatArray, w: FloatArray, calibration: Calibration, source: FloatArray,
                          pi: FloatArray) -> FloatArray:
    """``dπ'/dφ`` (K × (2K − 1)) at the EM fixed point, φ = (a, b₁…b_{K−1}, π₀…π_{K−2}) (module docstring)."""
    k = pi.shape[0]
    drop = k - 1  # the source mix's free coordinates are its first K − 1 shares (calibration_covariance's order)
    total = w.sum()
    phi = np.concatenate(([calibration.scale], calibration.bias[1:], source[:drop]))

    def g(free: FloatArray, params: FloatArray) -> FloatArray:
        mix = np.append(free, 1.0 - free.sum())
        src = np.append(params[k:], 1.0 - params[k:].sum())
        z = params[0] * logits
        z[:, 1:] += params[1:k]
        moved = mix_posteriors(posteriors(z), src, mix)
        out: FloatArray = (w @ moved)[:drop] / total - free
        return out

    free = pi[:drop]
    d_free = np.column_stack([(g(free + e, phi) - g(free - e, phi)) / (2 * _STEP)
                              for e in np.eye(k - 1) * _STEP])
    d_phi = np.column_stack([(g(free, phi + e) - g(free, phi - e)) / (2 * _STEP)
                             for e in np.eye(2 * k - 1) * _STEP])
    reduced = -np.linalg.pinv(d_free) @ d_phi
    out: FloatArray = np.vstack([reduced, -reduced.sum(axis=0)])
    return out


def _frozen(values: FloatArray) -> FloatArray:
    out = np.array(values, dtype=np.float64)
    out.setflags(write=False)
    return out
