"""The empirical-Bayes shrinkage of BCTS towards the model's own probabilities (``shrink_to_identity``) and the
expected performance that reads it (``Validation.expected``), against laws and independent recounts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats
from sklearn.metrics import confusion_matrix

from streammon import Validation
from streammon.metrics.calibration import calibration_covariance, fit_bcts, shrink_to_identity
from streammon.metrics.em_priors import mix_posteriors


def _calibrated(rng: np.random.Generator, n: int, sharpen: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Labels at a 25 % positive mix, the true P(y = 1 | x) and the model's score: the truth itself when
    ``sharpen`` is 1, an over-confident model (its logit times ``sharpen``) otherwise."""
    y = (rng.random(n) < 0.25).astype(int)
    x = rng.normal(loc=1.5 * y, size=n)  # unit-variance Gaussians 1.5 apart: logit P(1 | x) = 1.5x − 1.125 + log(1/3)
    logit = 1.5 * x - 1.125 + np.log(0.25 / 0.75)
    return y, special.expit(logit), special.expit(sharpen * logit)


def _calibrated_k(rng: np.random.Generator, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """K classes at the mix (0.2, 0.3, 0.5)[:K] renormalised, 2-D unit Gaussians; the scores are the true
    posteriors (a calibrated model)."""
    mix = np.array([0.2, 0.3, 0.5])[:k] if k == 3 else np.array([0.25, 0.75])
    mix = mix / mix.sum()
    centres = np.array([[0.0, 0.0], [1.5, 0.0], [0.0, 1.5]])[:k]
    y = rng.choice(k, n, p=mix)
    x = centres[y] + rng.normal(size=(n, 2))
    log = -0.5 * ((x[:, None, :] - centres[None]) ** 2).sum(axis=2) + np.log(mix)
    return y, special.softmax(log, axis=1)


@pytest.mark.parametrize("k", [2, 3])
def test_the_wald_statistic_of_a_calibrated_model_is_chi2_with_k_degrees_of_freedom(k: int) -> None:
    """On a model whose scores are the true posteriors, ``χ²`` over 300 validation sets follows χ²_K (Kolmogorov–
    Smirnov p > 0.001), so the fit is dropped entirely (``w = 0``, ``χ² ≤ K``) in ``P(χ²_K ≤ K)`` of them (0.632
    at K = 2, 0.608 at K = 3) within 4 binomial standard errors; the shrunk map is ``θ₀ + w(θ̂ − θ₀)``
    recomputed by hand."""
    rng = np.random.default_rng(3 + k)
    statistics, zeros = [], 0
    for _ in range(300):
        y, s = _calibrated_k(rng, 1000, k)
        fit = fit_bcts(s, y, k)
        shrunk, w, chi2 = shrink_to_identity(fit, calibration_covariance(fit, s, y))
        statistics.append(chi2)
        zeros += w == 0.0
        assert w == pytest.approx(max(0.0, 1.0 - k / chi2), abs=1e-12)
        assert shrunk.scale == pytest.approx(1.0 + w * (fit.scale - 1.0), abs=1e-12)
        assert shrunk.bias == pytest.approx(w * fit.bias, abs=1e-12)
    assert stats.kstest(statistics, stats.chi2(k).cdf).pvalue > 1e-3
    p = float(stats.chi2(k).cdf(k))
    assert zeros / 300 == pytest.approx(p, abs=4 * np.sqrt(p * (1 - p) / 300))


def test_a_calibrated_model_keeps_posteriors_closer_to_the_truth_than_bcts() -> None:
    """On a calibrated model the shrunk map's posteriors are nearer the true ``P(y | x)`` than BCTS's on fresh
    samples (mean absolute error over 40 validation sets of 500), and no farther than the model's own by more
    than a quarter of BCTS's excess."""
    rng = np.random.default_rng(4)
    errors = {"bcts": [], "shrunk": [], "own": []}
    for _ in range(40):
        y, _, s = _calibrated(rng, 500)
        fit = fit_bcts(s, y, 2)
        shrunk, _, _ = shrink_to_identity(fit, calibration_covariance(fit, s, y))
        _, truth, fresh = _calibrated(rng, 5000)
        errors["bcts"].append(np.abs(fit.apply(fresh)[:, 1] - truth).mean())
        errors["shrunk"].append(np.abs(shrunk.apply(fresh)[:, 1] - truth).mean())
        errors["own"].append(np.abs(fresh - truth).mean())
    mean = {k: float(np.mean(v)) for k, v in errors.items()}
    assert mean["shrunk"] < mean["bcts"]
    assert mean["shrunk"] - mean["own"] < 0.25 * (mean["bcts"] - mean["own"])


def test_a_miscalibrated_model_keeps_its_fit() -> None:
    """An over-confident model (logits ×3) on 3,000 validation samples has ``χ²`` in the thousands: the weight is
    above 0.99 and the shrunk posteriors are within 0.002 of BCTS's, ten times nearer the truth than the model's."""
    rng = np.random.default_rng(5)
    y, _, s = _calibrated(rng, 3000, sharpen=3.0)
    v = Validation(y, (s > 0.5).astype(int), s, bootstrap=0)
    assert v.shrinkage > 0.99
    _, truth, fresh = _calibrated(rng, 5000, sharpen=3.0)
    shrunk, bcts = v.shrunk_calibration.apply(fresh)[:, 1], v.calibration.apply(fresh)[:, 1]
    assert np.abs(shrunk - bcts).max() < 0.002
    assert np.abs(shrunk - truth).mean() * 10 < np.abs(fresh - truth).mean()


def test_expected_confusion_is_the_mean_recount_of_labels_drawn_from_the_shrunk_adjusted_posteriors() -> None:
    """``Validation.expected``'s confusion equals the mean of scikit-learn's confusion matrix over 4,000 labellings
    of the window drawn from ``shrunk_calibration``'s posteriors moved to the given mix (4 Monte Carlo standard
    errors), and differs from the same with BCTS's posteriors by the shrinkage (a validation set where w < 1)."""
    rng = np.random.default_rng(6)
    for _ in range(50):  # a validation set whose fit is shrunk: w strictly between 0 and 1
        y, _, s = _calibrated(rng, 800)
        v = Validation(y, (s > 0.5).astype(int), s, bootstrap=0)
        if 0.05 < v.shrinkage < 0.95:
            break
    else:
        pytest.fail("no validation set with a partial shrinkage in 50 draws")
    _, _, window = _calibrated(rng, 300)
    decided = (window > 0.5).astype(int)
    mix = np.array([0.4, 0.6])
    e = v.expected(window, decided, priors=mix)
    share = mix_posteriors(v.shrunk_calibration.apply(window), v.priors, mix)[:, 1]
    draws = np.array([confusion_matrix((rng.random(300) < share).astype(int), decided, labels=[0, 1])
                      for _ in range(4000)], dtype=float)
    tolerance = 4 * draws.std(axis=0) / np.sqrt(4000) + 1e-9
    assert np.all(np.abs(e.confusion - draws.mean(axis=0)) <= tolerance)
    bcts = mix_posteriors(v.calibration.apply(window), v.priors, mix)[:, 1]
    assert abs(float(np.sum(bcts * decided)) - e.confusion[1, 1]) > 1e-3


def test_a_bad_covariance_is_refused_and_a_non_finite_one_keeps_the_fit() -> None:
    """A covariance smaller than the fit's parameters is refused naming its shape; a NaN covariance keeps BCTS."""
    y = np.array([0, 0, 0, 1, 1, 0, 1, 1])
    s = np.array([0.2, 0.4, 0.6, 0.7, 0.9, 0.1, 0.3, 0.8])
    fit = fit_bcts(s, y, 2)
    with pytest.raises(ValueError, match=r"at least 2 rows .* got shape \(1, 1\)"):
        shrink_to_identity(fit, [[1.0]])
    kept, w, chi2 = shrink_to_identity(fit, np.full((3, 3), np.nan))
    assert kept is fit and w == 1.0 and np.isnan(chi2)
