"""Distribution tails the pure layer needs (numpy and the standard library only; scipy is not a runtime dependency).

>>> round(chi2_sf(3.841458820694124, 1), 6)
0.05
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt


def chi2_sf(x: float, df: int) -> float:
    """Survival function of the chi-square distribution with integer ``df`` (exact series).

    >>> round(chi2_sf(3.841458820694124, 1), 6)
    0.05
    >>> chi2_sf(0.0, 3), chi2_sf(math.inf, 2)
    (1.0, 0.0)
    """
    return float(chi2_sfs(np.array([float(x)]), df)[0])


def chi2_sfs(x: npt.NDArray[np.float64], df: int) -> npt.NDArray[np.float64]:
    """``chi2_sf`` of each element of ``x``: for even ``df`` the Poisson sum Σ_{i<df/2} hⁱe⁻ʰ/i!, for odd
    ``df`` erfc(√h) + Σ_{i=1}^{(df−1)/2} h^(i−½)e⁻ʰ/Γ(i+½), with h = x/2 (every term in the log domain).

    >>> chi2_sfs(np.array([0.0, 2.0, math.inf]), 2).round(6).tolist()
    [1.0, 0.367879, 0.0]
    """
    if df < 1:
        raise ValueError(f"df must be >= 1, got {df}")
    powers, log_gammas = _series(df)
    half = x / 2
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        terms = np.exp(powers * np.log(half)[:, None] - log_gammas - half[:, None])
        total = terms.sum(axis=1)
        if df % 2:
            total = total + np.array([math.erfc(math.sqrt(h)) if h >= 0 else 1.0 for h in half.tolist()])
    out: npt.NDArray[np.float64] = np.where(x <= 0, 1.0, np.where(np.isinf(x), 0.0, np.minimum(1.0, total)))
    return out


@functools.lru_cache(maxsize=64)
def _series(df: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The exponents of h and the log-gamma terms of ``chi2_sfs``'s series for ``df``."""
    powers: npt.NDArray[np.float64] = (np.arange(df // 2, dtype=np.float64) if df % 2 == 0
                                       else np.arange(1, (df + 1) // 2, dtype=np.float64) - 0.5)
    return powers, np.array([math.lgamma(p + 1) for p in powers.tolist()])
