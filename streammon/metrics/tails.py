"""Distribution tails the pure layer needs (numpy, numba and the standard library; scipy is not a runtime
dependency). The series runs compiled (``streammon.metrics.compiled.chi2_tail``).

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


def chi2_sfs(x: npt.NDArray[np.float64], df: int | npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """``chi2_sf`` of each element of ``x`` (``df``: one for all, or one each): for even ``df`` the Poisson sum
    Σ_{i<df/2} hⁱe⁻ʰ/i!, for odd ``df`` erfc(√h) + Σ_{i=1}^{(df−1)/2} h^(i−½)e⁻ʰ/Γ(i+½), with h = x/2 (every
    term in the log domain; the log-gamma constants from Python's ``math.lgamma``). A NaN ``x`` gives NaN.

    >>> chi2_sfs(np.array([0.0, 2.0, math.inf]), 2).round(6).tolist()
    [1.0, 0.367879, 0.0]
    >>> chi2_sfs(np.array([3.841458820694124, 5.991464547107979]), np.array([1, 2])).round(6).tolist()
    [0.05, 0.05]
    """
    from streammon.metrics import compiled  # noqa: PLC0415 - imports numba: on first use, not with streammon

    x = np.ascontiguousarray(x, dtype=np.float64)
    dfs = np.ascontiguousarray(np.broadcast_to(np.asarray(df, dtype=np.int64), x.shape))
    if dfs.size and dfs.min() < 1:
        raise ValueError(f"df must be >= 1, got {int(dfs.min())}")
    out = np.empty(x.shape)
    compiled.chi2_tails(x.reshape(-1), dfs.reshape(-1), log_gammas(int(dfs.max()) if dfs.size else 1),
                        out.reshape(-1))
    return out


@functools.lru_cache(maxsize=64)
def log_gammas(df: int) -> npt.NDArray[np.float64]:
    """``lgamma(i/2 + 1)`` for i = 0 … max(df, 1) (Python's ``math.lgamma``): the series' constants up to ``df``
    degrees of freedom, read-only."""
    out = np.array([math.lgamma(i / 2 + 1) for i in range(max(df, 1) + 1)])
    out.setflags(write=False)
    return out
