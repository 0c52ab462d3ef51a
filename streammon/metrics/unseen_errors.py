"""What a validation set without errors cannot show: the mean squared error of counting a window's decisions when
the scores separated the validation set (pure).

When BCTS finds no finite fit (``calibration.fit_bcts``: the scores separate the validation set), the calibrated
posteriors are near 0 and 1 and EM reads close to the count of the window's calibrated decisions. The validation
then showed no error in ``n_j`` samples of class j, yet the window's samples can be wrong: its other interval
terms do not see that (the window's within-class spread of one-hot posteriors is 0, the calibration's misfit on
the validation itself is 0, and every bootstrap replica is separable too). ``Validation.estimate`` adds it, and
fits separable bootstrap replicas to Platt's smoothed targets (their spread then shows the confidence the fit
cannot measure): on ``examples/bench_em_priors.py``'s naive Bayes cell (K = 2, 500 validation samples, 100
trials) the intervals covered 0.90 with neither, 0.92 with this term alone, 0.95 with both (0.96 when the fit
itself was smoothed, at the price of EM's accuracy elsewhere: ``calibration``'s docstring).

**Model.** A sample of class j is decided wrongly with an unknown probability ``ε_j``, independently, the error
going to one of the other ``K − 1`` classes uniformly (nothing says where). With no error seen in ``n_j`` samples
and a uniform prior, ``ε_j`` ~ Beta(1, n_j + 1) (Laplace's rule of succession): ``E ε_j = 1/(n_j + 2)`` and
``E ε_j² = 2/((n_j + 2)(n_j + 3))``. A window of ``n`` samples at the class shares ``π`` then reads the shares
``q̂`` whose column for class j is ``c_j = e_j + ε_j u_j`` (``u_j``: −1 at j, ``1/(K − 1)`` elsewhere). Given ``ε``,
``q̂ − π`` has the bias ``β = Σ_j π_j ε_j u_j`` and the covariance ``(1/n) Σ_j π_j (diag c_j − c_j c_jᵀ)``
(one multinomial draw per sample); ``unseen_error_covariance`` returns their sum ``E[Cov + β βᵀ]`` over the Beta
posteriors, in closed form (the moments above). It is a mean squared error, added to the interval's covariance
as the calibration's misfit is.

>>> v = unseen_error_covariance([0.5, 0.5], [100, 100], 50)
>>> bool(np.allclose(v.sum(axis=1), 0)), round(float(v[0, 0]), 6)   # shares sum to 1: rows of V sum to 0
(True, 0.000239)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammon.metrics.confusion import FloatArray


def error_moments(class_counts: Any) -> tuple[FloatArray, FloatArray]:
    """``(E ε_j, E ε_j²)`` of the Beta(1, n_j + 1) posterior of class j's error rate after ``n_j`` samples without
    an error (module docstring)."""
    n = np.asarray(class_counts, dtype=np.float64)
    if n.ndim != 1 or n.size < 2 or not np.all(np.isfinite(n)) or np.any(n < 0):
        raise ValueError(f"class_counts must be K >= 2 finite non-negative counts, got {class_counts!r}")
    return 1.0 / (n + 2.0), 2.0 / ((n + 2.0) * (n + 3.0))


def unseen_error_covariance(shares: Any, class_counts: Any, n: float) -> FloatArray:
    """``E[Cov + β βᵀ]`` (K × K) of a window's counted shares ``q̂ − π`` when the validation set of ``class_counts``
    (``n_j`` per class) showed no error: ``shares`` ``π`` the window's class shares (K, summing to 1), ``n`` its
    samples (module docstring)."""
    pi = np.asarray(shares, dtype=np.float64)
    m, s = error_moments(class_counts)
    k = m.size
    if pi.shape != (k,) or not np.all(np.isfinite(pi)) or np.any(pi < 0) or abs(pi.sum() - 1.0) > 1e-6:
        raise ValueError(f"shares must be {k} non-negative shares summing to 1, got {shares!r}")
    if not (isinstance(n, (int, float, np.integer, np.floating)) and n > 0):
        raise ValueError(f"n must be a positive number of window samples, got {n!r}")
    u = np.full((k, k), 1.0 / (k - 1))  # column j: u_j (−1 at j, 1/(K − 1) elsewhere)
    np.fill_diagonal(u, -1.0)
    second = np.outer(m, m) + np.diag(s - m * m)  # E[ε εᵀ]: independent classes
    bias = (u * pi) @ second @ (u * pi).T  # E[β βᵀ], β = U diag(π) ε
    noise = np.zeros((k, k))
    for j in range(k):
        e = np.zeros(k)
        e[j] = 1.0
        mean_c = e + m[j] * u[:, j]
        uj = u[:, j]
        outer = np.outer(e, e) + m[j] * (np.outer(e, uj) + np.outer(uj, e)) + s[j] * np.outer(uj, uj)  # E[c_j c_jᵀ]
        noise += pi[j] * (np.diag(mean_c) - outer)
    out: FloatArray = bias + noise / float(n)
    return out
