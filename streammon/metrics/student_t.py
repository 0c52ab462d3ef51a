"""Student's t for an interval whose variance is partly estimated from a few bootstrap replicas (pure).

The label-free mix's interval (``streammon.counting.validation``) adds the spread of EM's estimate over B
refitted calibrations to the window's noise; that spread is itself a sample variance with B − 1 degrees of
freedom, so the interval takes Student's t at Welch–Satterthwaite's degrees of freedom, not the normal quantile.
No scipy at run time: ``t_quantile`` is a closed form.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

from streammon.metrics.confusion import FloatArray


def satterthwaite_df(known: Any, estimated: Any, replicas: int) -> FloatArray:
    """Welch–Satterthwaite degrees of freedom of ``known + estimated`` variances, where ``estimated`` is a sample
    variance over ``replicas`` draws (``replicas − 1`` degrees of freedom) and ``known`` is treated as exact:
    ``(known + estimated)² / (estimated² / (replicas − 1))`` (``inf`` where ``estimated`` is 0)."""
    v0 = np.asarray(known, dtype=np.float64)
    v1 = np.asarray(estimated, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(v1 > 0, (v0 + v1) ** 2 / (v1**2 / max(replicas - 1, 1)), math.inf)
    return out


def t_quantile(p: float, df: float) -> float:
    """Student's t quantile at ``p`` (≥ 0.5) with ``df`` degrees of freedom, without scipy: exact for ``df`` < 3
    (rounded down to 1 or 2: wider, never narrower) and the Cornish–Fisher expansion in ``1/df`` to the fourth
    order otherwise (Abramowitz & Stegun 26.7.5; below the exact quantile by at most 0.004 for p ≤ 0.975 and
    0.05 at p = 0.995 from df = 3, by less than 1e-4 from df = 10).

    >>> round(t_quantile(0.975, 49), 4), round(t_quantile(0.975, math.inf), 4)
    (2.0096, 1.96)
    """
    if not 0.5 <= p < 1 or not df > 0:
        raise ValueError(f"t_quantile needs 0.5 <= p < 1 and df > 0, got p={p!r}, df={df!r}")
    if df < 2:
        return math.tan(math.pi * (p - 0.5))
    if df < 3:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = NormalDist().inv_cdf(p)
    if df > 1e12:  # the corrections are below 1e-12 (and df⁴ would overflow): the normal quantile
        return z
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4
