"""Bias-corrected temperature scaling (BCTS): recalibrate a model's probabilities on a validation set (pure).

Alexandari, Kundaje & Shrikumar (ICML 2020), "Maximum likelihood with bias-corrected calibration is hard-to-beat
at label shift adaptation", Section 4: the calibrated posterior is ``softmax(L / T + b)`` where ``L`` is the vector
of the model's log-probabilities (binary: ``(log(1 − s), log s)``, so the positive class's logit is
``logit(s) / T + b₁ − b₀``), ``T > 0`` a temperature and ``b`` one bias per class; ``(1/T, b)`` minimise the
negative log-likelihood of the validation labels. EM on the posteriors (``em_priors``) needs them calibrated: its
fixed point is the maximum-likelihood mix only when the posteriors are the true ``P(y | x)`` at the validation mix,
and the bias terms are what repairs a systematic shift of the class probabilities (plain temperature scaling
cannot), which Alexandari et al. found decisive for EM.

**Fit.** With ``a = 1/T`` and ``b₀ = 0`` (a common shift of all logits changes no softmax), the logits
``z = a·L + b`` are linear in ``θ = (a, b₁ … b_{K−1})`` and the softmax cross-entropy is convex in ``z``, so the
NLL is convex in ``θ``: Newton's method with a backtracking line search (Armijo) converges from ``θ = (1, 0)``
(the model as it is). Gradient ``Σ wᵢ Xᵢᵀ(pᵢ − yᵢ)`` and Hessian ``Σ wᵢ Xᵢᵀ(diag pᵢ − pᵢpᵢᵀ)Xᵢ``, where ``Xᵢ``
is the K × K design ``[Lᵢ | e₁ … e_{K−1}]``. Weights ``wᵢ`` let a histogram (bin representatives and counts) stand
for its samples. At the optimum the bias equations say ``Σ wᵢ pᵢ = Σ wᵢ yᵢ``: the calibrated posteriors average
to the (smoothed) validation class mix, so EM started there on the validation set itself barely moves.

**Separable validation sets**: when the scores separate the validation set the NLL has no minimum (``a → ∞``,
NLL → 0). The fit then stops where the NLL stops moving (the Newton decrement below ``TOLERANCE``: a mean NLL
near 1e-10, posteriors within ~1e-10 of 0 and 1 on the validation set), ``separable`` is set and ``reason`` says
so — as QuaPy's BCTS does (the abstention package's L-BFGS-B on ``T`` stops at a mean NLL near 1e-7: on
scikit-learn's wine, 53 validation samples, ``1/T`` 7–30 against this fit's 7–75, both with posteriors of 1.000).
EM on such posteriors is close to counting the calibrated decisions, and the intervals must then carry what
a validation set without errors cannot show (``unseen_errors``; ``Validation.estimate`` adds it). Before, the
fit was repeated with Platt's smoothed targets (Platt 1999, Section 2.2: ``(n_c + 1)/(n_c + K)`` on the true
class, ``1/(n_c + K)`` on the others; still ``smooth=True``): on log-probabilities that reach ``log CLIP`` ≈ −34.5
(a random forest's exact 0s) one temperature cannot fit targets near 0.9 but by shrinking every logit, so the
fitted ``a`` fell to 0.1–0.6 (below the model's own 1: posteriors less confident than the model's, top
posterior 0.64–0.85 on wine), and EM over-corrected towards extreme mixes: 1.45–4.4× QuaPy's MAE on wine
(``examples/bench_em_real.py``). Platt's targets had been chosen to keep a naive Bayes model with 500
validation samples honest (unsmoothed, its intervals covered 84 %, z-scores in the thousands);
``Validation.estimate`` does that now with the ``unseen_errors`` term and Platt's targets on the
bootstrap replicas only (docs/benchmarks, "Inside the monitor, on real data"). Posteriors
(``apply``) are floored at ``CLIP`` and renormalised, so no class is impossible for a sample: Saerens'
adjustment of a sample whose whole mass sits on a class at mix 0 would be 0/0.

**Shrinkage for the expected performance** (``shrink_to_identity``): a model calibrated already gains only
sampling noise from BCTS's K parameters, so the expected performance without labels reads the fit shrunk towards
the model's own probabilities by empirical Bayes, by the fit's own Wald statistic against the identity map.

Log-probabilities are taken of probabilities clipped below at the fit's ``floor`` (``probability_floor``: half the
validation set's smallest non-zero probability, never below ``CLIP`` = 1e-15 from ``score_bins``), so a score of
exactly 0 is a small probability, not minus infinity — and for a model whose scores take few values (k-NN's
multiples of 1/k) half a step, not 1e-15: at ``log CLIP`` ≈ −34.5 each confident mistake of such a model pulled
``1/T`` down to ~0.1 and flattened every posterior, and a 15-NN model's expected balanced accuracy read 0.10–0.16
below the realised one (``tests/test_label_free_outside.py``). The window's scores are clipped at the same floor.

>>> y = np.array([0, 0, 0, 1, 1, 0, 1, 1])
>>> s = np.array([0.2, 0.4, 0.6, 0.7, 0.9, 0.1, 0.3, 0.8])
>>> fit = fit_bcts(s, y, 2)
>>> fit.converged, bool(fit.temperature > 0)
(True, True)
>>> p = fit.apply(s)                          # calibrated (n, 2) posteriors
>>> bool(np.allclose(p.sum(axis=0), np.bincount(y)))   # the bias equations: they average to the class mix
True
>>> bool(fit_bcts(s, y, 2, smooth=True).scale < fit.scale)   # Platt's targets: a little less confident
True
>>> sep = fit_bcts(s, (s > 0.5).astype(int), 2)   # labels the scores separate: no finite minimum
>>> sep.separable, bool(sep.nll < SEPARABLE), bool(sep.apply(s).min() > 0)
(True, True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.confusion import FloatArray
from streammon.metrics.probabilities import (  # defined here before: still importable from this module
    as_probabilities,
    log_probabilities,
    posteriors,
    probability_floor,
    softmax,
)
from streammon.metrics.score_bins import CLIP

MAX_ITERATIONS = 100
SEPARABLE = 1e-4  # mean NLL below which the scores separate the validation set: no finite plain fit
TOLERANCE = 1e-10  # on the Newton decrement: half the squared step in the Hessian's metric, per unit of weight


@dataclass(frozen=True)
class Calibration:
    """A fitted BCTS map ``softmax(log p / temperature + bias)`` (module docstring)."""

    scale: float  # a = 1/T; ≤ 0 only when the scores rank the classes backwards (then said in ``reason``)
    bias: FloatArray  # K biases, bias[0] = 0
    nll: float  # weighted mean negative log-likelihood on the validation set at the fit
    iterations: int
    converged: bool
    reason: str  # why the fit may not be a minimum, or was smoothed; "" when nothing to say
    smoothed: bool = False  # fitted to Platt's smoothed targets
    separable: bool = False  # the scores separate the validation set: no finite minimum, the fit stopped (docstring)
    floor: float = CLIP  # probabilities are clipped below at this before their log (``probability_floor``)

    @property
    def temperature(self) -> float:
        """``T = 1/a`` (inf when ``a`` ≤ 0)."""
        return 1.0 / self.scale if self.scale > 0 else math.inf

    @property
    def k(self) -> int:
        """The number of classes."""
        return int(self.bias.shape[0])

    def apply(self, scores: Any) -> FloatArray:
        """Calibrated posteriors, (n, K), of scores given as ``fit_bcts`` takes them (binary (n,) or (n, K)),
        floored at ``CLIP`` (``posteriors``)."""
        return posteriors(self.logits(scores))

    def logits(self, scores: Any) -> FloatArray:
        """The calibrated logits ``log p / T + b`` (their softmax is ``apply``)."""
        out: FloatArray = self.scale * log_probabilities(scores, self.k, self.floor) + self.bias
        return out


def _nll(logits: FloatArray, targets: FloatArray, w: FloatArray, theta: FloatArray) -> float:
    z = theta[0] * logits
    z[:, 1:] += theta[1:]
    top = z.max(axis=1)
    lse = top + np.log(np.exp(z - top[:, None]).sum(axis=1))
    return float(w @ (lse - np.sum(targets * z, axis=1)))


def targets(y: npt.NDArray[np.intp], k: int, w: FloatArray, *, smooth: bool = True) -> FloatArray:
    """The fit's targets: one-hot labels, or Platt's smoothed ones (module docstring) when ``smooth``."""
    out = np.zeros((y.size, k))
    out[np.arange(y.size), y] = 1.0
    if smooth:
        n_c = np.bincount(y, weights=w, minlength=k)
        eps = k / (n_c[y] + k)  # Platt: a class-c sample's target is (n_c + 1)/(n_c + K) on c, 1/(n_c + K) elsewhere
        out = out * (1.0 - eps)[:, None] + (eps / k)[:, None]
    return out


def _hessian(logits: FloatArray, p: FloatArray, w: FloatArray) -> FloatArray:
    """The NLL's Hessian in θ, ``Σ wᵢ Xᵢᵀ(diag pᵢ − pᵢpᵢᵀ)Xᵢ`` with ``Xᵢ = [Lᵢ | e₁ … e_{K−1}]``, by blocks."""
    k = p.shape[1]
    wp = p * w[:, None]
    lp = np.sum(p * logits, axis=1)  # pᵢ·Lᵢ
    h = np.empty((k, k))
    h[0, 0] = np.sum(wp * logits * logits) - np.sum(w * lp * lp)
    h[0, 1:] = h[1:, 0] = (wp * logits).sum(axis=0)[1:] - (wp * lp[:, None]).sum(axis=0)[1:]
    h[1:, 1:] = np.diag(wp.sum(axis=0)[1:]) - (wp[:, 1:].T @ p[:, 1:])
    return h


def fit_bcts(scores: Any, y_true: Any, k: int, *, weights: Any = None, smooth: bool | None = None,
             max_iterations: int = MAX_ITERATIONS, floor: float | None = None) -> Calibration:
    """Fit BCTS by Newton's method on the weighted validation NLL (module docstring). ``smooth``: Platt's smoothed
    targets (True) or the labels (False and None, the default). With None a fit without a finite minimum (a
    validation set the scores separate: mean NLL below ``SEPARABLE`` with every sample decided right, or no
    convergence) is marked ``separable``.

    ``scores``: binary (n,) positive-class scores (class 1) or (n, K) probabilities; ``y_true``: class indices in
    ``[0, K)``; ``weights``: optional non-negative sample weights (counts of a histogram's representatives);
    ``floor``: where the probabilities are clipped before their log (default ``probability_floor`` of these
    scores; a bootstrap replica passes its validation set's)."""
    probabilities = as_probabilities(scores, k)
    n = probabilities.shape[0]
    y = np.asarray(y_true)
    if y.shape != (n,) or y.dtype.kind not in "iu" or (n and (y.min() < 0 or y.max() >= k)):
        raise ValueError(f"y_true must be {n} class indices in [0, {k}), got {y_true!r}")
    y = y.astype(np.intp)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"weights must be {n} finite non-negative numbers, got {weights!r}")
    total = float(w.sum())
    if total <= 0:
        raise ValueError("BCTS needs at least one validation sample with positive weight")
    floor = probability_floor(probabilities, k, w) if floor is None else floor  # of the checked weights
    if not CLIP <= floor < 1.0:
        raise ValueError(f"floor must be a probability in [{CLIP}, 1), got {floor!r}")
    logits = np.log(np.maximum(probabilities, floor))
    fit = replace(_newton(logits, targets(y, k, w, smooth=bool(smooth)), w, max_iterations, smoothed=bool(smooth)),
                  floor=floor)
    # a low NLL alone is not separation: one error among 200,000 confident scores is a mean NLL of 6e-5 at a minimum
    decided = np.argmax(fit.scale * logits[w > 0] + fit.bias, axis=1)
    if smooth is None and (not fit.converged or (fit.nll < SEPARABLE and np.array_equal(decided, y[w > 0]))):
        note = ("the scores separate the validation set (no finite BCTS fit): the fit stopped where the NLL stopped "
                "moving, posteriors near 0 and 1")
        fit = replace(fit, separable=True, reason="; ".join(filter(None, [note, fit.reason])))
    return fit


def _newton(logits: FloatArray, onehot: FloatArray, w: FloatArray, max_iterations: int, *,
            smoothed: bool) -> Calibration:
    """Newton's method with Armijo backtracking on the NLL against ``onehot`` targets, from θ = (1, 0)."""
    k = logits.shape[1]
    total = float(w.sum())
    theta = np.zeros(k)
    theta[0] = 1.0
    value = _nll(logits, onehot, w, theta)
    converged, reason, it = False, "", 0
    for it in range(1, max_iterations + 1):  # noqa: B007 (the count is reported)
        z = theta[0] * logits
        z[:, 1:] += theta[1:]
        p = softmax(z)
        r = (p - onehot) * w[:, None]
        grad = np.concatenate(([np.sum(r * logits)], r[:, 1:].sum(axis=0)))
        h = _hessian(logits, p, w)
        try:
            step = np.linalg.solve(h + 1e-12 * total * np.eye(k), grad)
        except np.linalg.LinAlgError:
            step = grad / max(float(np.abs(np.diag(h)).max()), 1e-12)
        decrement = float(grad @ step) / total
        if decrement < TOLERANCE:
            converged = True
            break
        t = 1.0
        while t > 1e-10:
            trial = theta - t * step
            new = _nll(logits, onehot, w, trial)
            if new <= value - 1e-4 * t * decrement * total:
                break
            t *= 0.5
        else:  # no descent along Newton's direction: the NLL is flat to rounding (separable data)
            reason = "the NLL stopped decreasing before the gradient vanished (the validation set may be separable)"
            break
        theta, value = trial, new
    else:
        reason = f"no convergence in {max_iterations} Newton steps (the validation set may be separable)"
    if theta[0] <= 0:
        reason = reason or "the fitted temperature is not positive: the scores rank the classes backwards"
    bias = np.concatenate(([0.0], theta[1:]))
    bias.setflags(write=False)
    return Calibration(float(theta[0]), bias, value / total, it, converged, reason, smoothed)


def calibration_covariance(calibration: Calibration, scores: Any, y_true: Any, *, weights: Any = None) -> FloatArray:
    """The validation set's sampling covariance of ``φ = (a, b₁…b_{K−1}, π₀…π_{K−2})``: the BCTS parameters and
    the source (validation) class mix, jointly — a sandwich ``A⁻¹BA⁻ᵀ/N`` over the estimating equations
    ``ψᵢ = (Xᵢᵀ(pᵢ − yᵢ), yᵢ − π)`` (M-estimation; ``A`` = the NLL's Hessian per sample and −I, ``B`` = the
    weighted mean of ``ψᵢψᵢᵀ``). ``em_priors.estimate_mix`` carries it into the mix's intervals.

    >>> y = np.array([0, 0, 0, 1, 1, 0, 1, 1])
    >>> s = np.array([0.2, 0.4, 0.6, 0.7, 0.9, 0.1, 0.3, 0.8])
    >>> c = calibration_covariance(fit_bcts(s, y, 2), s, y)
    >>> c.shape, bool(np.all(np.linalg.eigvalsh(c) > 0)), round(float(c[2, 2]), 6)   # Var(π₀) = ½·½/8
    ((3, 3), True, 0.03125)
    """
    k = calibration.k
    logits = log_probabilities(scores, k, calibration.floor)
    n = logits.shape[0]
    y = np.asarray(y_true).astype(np.intp)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    total = float(w.sum())
    onehot = targets(y, k, w, smooth=False)
    p = calibration.apply(scores)
    r = p - targets(y, k, w, smooth=calibration.smoothed)
    mix = (w @ onehot) / total
    psi = np.column_stack([np.sum(r * logits, axis=1), r[:, 1:], onehot[:, : k - 1] - mix[: k - 1]])
    b = (psi * w[:, None]).T @ psi / total
    h = _hessian(logits, p, w)
    a = np.zeros((2 * k - 1, 2 * k - 1))
    a[:k, :k] = h / total
    a[k:, k:] = -np.eye(k - 1)
    inverse = np.linalg.pinv(a)
    out: FloatArray = inverse @ b @ inverse.T / total
    return out


def shrink_to_identity(calibration: Calibration, covariance: Any) -> tuple[Calibration, float, float]:
    """Empirical-Bayes shrinkage of a BCTS fit towards the identity map (the model's own probabilities,
    ``θ₀ = (a, b₁…b_{K−1}) = (1, 0)``): ``θ* = θ₀ + w·(θ̂ − θ₀)`` with ``w = max(0, 1 − K/χ²)`` and
    ``χ² = (θ̂ − θ₀)ᵀ Σ⁻¹ (θ̂ − θ₀)``, ``Σ`` the fit's sampling covariance (the first K rows and columns of
    ``calibration_covariance``). Returns ``(the shrunk map, w, χ²)``.

    Why: a model that is calibrated already gains nothing from BCTS but its K parameters' sampling noise, which the
    expected performance without labels then carries (measured: naive Bayes at no shift, 1.13× the error of the
    model's own probabilities at 2,000 validation samples), while a miscalibrated one needs the fit. The rule is
    the normal-means empirical Bayes estimator: with ``θ̂ ~ N(θ, Σ)`` and the prior ``θ ~ N(θ₀, τ²Σ)`` the
    posterior mean is ``θ₀ + τ²/(1 + τ²)·(θ̂ − θ₀)``; marginally ``χ² ~ (1 + τ²)·χ²_K``, whose maximum-likelihood
    ``1 + τ²`` is ``max(1, χ²/K)``, which gives ``w`` (Efron & Morris 1973, "Stein's estimation rule and its
    competitors — an empirical Bayes approach", JASA 68:117–130; Morris 1983, "Parametric empirical Bayes
    inference", JASA 78:47–55 — James and Stein's constant K − 2 would never shrink at K = 2). A well-calibrated
    model's statistic is a ``χ²_K`` draw (the map is kept entirely with probability ``P(χ²_K > K)``, 0.37 at
    K = 2, and then mostly shrunk); a clearly miscalibrated one has ``χ²`` ≫ K and keeps its fit. Where ``χ²``
    cannot be computed (a covariance that is not finite) the fit is kept (``w = 1``). The shrunk map's ``nll`` is
    NaN (not refitted) and its ``reason`` says it was shrunk.

    >>> y = np.array([0, 0, 0, 1, 1, 0, 1, 1])
    >>> s = np.array([0.2, 0.4, 0.6, 0.7, 0.9, 0.1, 0.3, 0.8])
    >>> fit = fit_bcts(s, y, 2)
    >>> shrunk, w, chi2 = shrink_to_identity(fit, calibration_covariance(fit, s, y))
    >>> round(w, 6) == round(max(0.0, 1 - 2 / chi2), 6), bool(abs(shrunk.scale - 1) <= abs(fit.scale - 1))
    (True, True)
    """
    k = calibration.k
    cov = np.asarray(covariance, dtype=np.float64)
    if cov.ndim != 2 or cov.shape[0] < k or cov.shape[0] != cov.shape[1]:
        raise ValueError(f"covariance must be square with at least {k} rows (the fit's parameters first), "
                         f"got shape {cov.shape}")
    block = cov[:k, :k]
    d = np.concatenate(([calibration.scale - 1.0], calibration.bias[1:]))
    if not np.all(np.isfinite(block)) or not np.all(np.isfinite(d)):
        return calibration, 1.0, math.nan
    chi2 = float(d @ np.linalg.pinv(block) @ d)
    w = max(0.0, 1.0 - k / chi2) if chi2 > 0 else 0.0
    bias = calibration.bias * w
    bias.setflags(write=False)
    note = f"shrunk towards the model's own probabilities by empirical Bayes (weight {w:.3g}, chi2 {chi2:.3g})"
    shrunk = replace(calibration, scale=1.0 + w * (calibration.scale - 1.0), bias=bias, nll=math.nan,
                     reason="; ".join(filter(None, [calibration.reason, note])))
    return shrunk, w, chi2
