"""Distribution tails the pure layer needs (numpy and the standard library only; scipy is not a runtime dependency).

>>> round(chi2_sf(3.841458820694124, 1), 6)
0.05
"""

from __future__ import annotations

import math


def chi2_sf(x: float, df: int) -> float:
    """Survival function of the chi-square distribution with integer ``df`` (exact series).

    >>> round(chi2_sf(3.841458820694124, 1), 6)
    0.05
    >>> chi2_sf(0.0, 3), chi2_sf(math.inf, 2)
    (1.0, 0.0)
    """
    if df < 1:
        raise ValueError(f"df must be >= 1, got {df}")
    if x <= 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    half = x / 2
    log_half = math.log(half)
    if df % 2 == 0:
        terms = [i * log_half - math.lgamma(i + 1) - half for i in range(df // 2)]
        return min(1.0, math.fsum(math.exp(t) for t in terms))
    terms = [(i - 0.5) * log_half - math.lgamma(i + 0.5) - half for i in range(1, (df + 1) // 2)]
    return min(1.0, math.erfc(math.sqrt(half)) + math.fsum(math.exp(t) for t in terms))
