"""Prior correction: what a metric would read at another class mix (METRICS.md).

``reweight(M, π)`` rescales row ``i`` to ``π_i · n``, keeping every
class-conditional rate ``m_ij / n_i``. For any metric ``f``,
``f_π(M) = f(reweight(M, π))`` and the measured Type 1 distortion is
``f(M) − f_π(M)`` — exactly 0 for Condition-1 metrics.

>>> from streammon.metrics.specs import compute
>>> m = [[90, 10], [20, 80]]
>>> import math
>>> math.isclose(compute("precision", reweight(m, [0.5, 0.5])), compute("mprecision", m))
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammon.metrics.confusion import FloatArray, as_matrix


def normalise_priors(priors: Any, k: int) -> FloatArray:
    """Validate ``priors`` (K non-negative finite weights) and scale them to sum 1.

    >>> normalise_priors([1, 3], 2).tolist()
    [0.25, 0.75]
    """
    try:
        p = np.asarray(priors, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"priors must be {k} numbers, got {priors!r}") from exc
    if p.shape != (k,):
        raise ValueError(f"priors must have one weight per class (K={k}), got shape {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
        raise ValueError(f"priors must be finite, >= 0 and not all 0, got {p.tolist()}")
    normalised: FloatArray = p / p.sum()
    return normalised


def reweight(cm: Any, priors: Any) -> FloatArray:
    """Rescale each row of ``cm`` to ``priors[i] · n``, keeping class-conditional rates.

    A class with a positive prior but no samples in ``cm`` has unknown rates:
    its row becomes NaN, so every metric that needs it reads NaN rather than a
    guess. A class with prior 0 gets a zero row (absent at that mix).

    >>> reweight([[8, 2], [30, 60]], [0.5, 0.5]).round(3).tolist()
    [[40.0, 10.0], [16.667, 33.333]]
    >>> reweight([[0, 0], [3, 7]], [0.5, 0.5]).tolist()
    [[nan, nan], [1.5, 3.5]]
    """
    m = as_matrix(cm)
    out: FloatArray = reweight_stack(m[None], normalise_priors(priors, len(m)))[0]
    return out


def reweight_stack(matrices: FloatArray, priors: FloatArray) -> FloatArray:
    """``reweight`` of each of W K×K matrices (W, K, K) to normalised ``priors`` (checked by the caller): one
    mix (K,) for all, or one per matrix (W, K).

    >>> reweight_stack(np.array([[[8.0, 2.0], [30.0, 60.0]], [[0.0, 0.0], [3.0, 7.0]]]), np.array([0.5, 0.5]))[1]
    array([[nan, nan],
           [1.5, 3.5]])
    """
    rows = matrices.sum(axis=2)
    n = rows.sum(axis=1)
    known = rows > 0
    mix = np.broadcast_to(priors, rows.shape)
    scaled = matrices / np.where(known, rows, 1.0)[:, :, None] * (mix[:, :, None] * n[:, None, None])
    unknown = np.where(mix > 0, np.nan, 0.0)  # (mutation testing: None stores as NaN too, an equivalent mutant)
    out: FloatArray = np.where(known[:, :, None], scaled, unknown[:, :, None])
    return out
