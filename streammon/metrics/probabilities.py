"""Probabilities under the BCTS calibration (pure): scores read as an (n, K) probability array, their logarithms
clipped at a floor, and the softmax back.

``streammon.metrics.calibration`` fits BCTS on ``log_probabilities`` clipped at ``probability_floor`` and maps
calibrated logits back with ``posteriors``; ``em_priors`` and ``score_shift_test`` read scores through
``as_probabilities`` too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammon.metrics.confusion import FloatArray
from streammon.metrics.score_bins import CLIP


def as_probabilities(scores: Any, k: int) -> FloatArray:
    """Scores as an (n, K) probability array: a binary score ``s`` of the positive class (column 1) is the row
    ``(1 − s, s)``; an (n, K) array is taken as it is. Checks shape and range (a clear ``ValueError``)."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim == 1 and k == 2:
        s = np.stack([1.0 - s, s], axis=1)
    if s.ndim != 2 or s.shape[1] != k:
        raise ValueError(f"scores must be (n,) for K = 2 or (n, {k}), got shape {np.shape(scores)}")
    if not np.all(np.isfinite(s)) or np.any(s < 0.0) or np.any(s > 1.0):
        raise ValueError("scores must be finite probabilities in [0, 1]")
    return s


def log_probabilities(scores: Any, k: int, floor: float = CLIP) -> FloatArray:
    """``log`` of the (n, K) probabilities (``as_probabilities``), clipped below at ``floor``."""
    out: FloatArray = np.log(np.maximum(as_probabilities(scores, k), floor))
    return out


def probability_floor(scores: Any, k: int, weights: Any = None) -> float:
    """Where a calibration clips the probabilities before their log: half the smallest non-zero probability of
    the validation set (of a sample with positive weight), and never below ``CLIP`` (``streammon.metrics.calibration``,
    module docstring).

    A model whose scores take few values (k-NN's multiples of 1/k, a tree's leaf shares) says 0 for "less than
    its smallest step", not "impossible": read as ``log CLIP`` ≈ −34.5, every such sample of the wrong class
    pulls the fitted ``1/T`` down and flattens every posterior. Half a step is the pseudo-count reading
    (0 of k neighbours: ½/k). A model with continuous scores gets a floor far below anything it says.

    >>> round(probability_floor(np.array([0.0, 1 / 15, 14 / 15, 1.0]), 2), 9)   # a 15-NN model: half of 1/15
    0.033333333
    >>> probability_floor(np.array([0.2, 0.7]), 2)   # the rows (0.8, 0.2), (0.3, 0.7): half of 0.2
    0.1
    >>> probability_floor(np.array([1e-30, 0.5]), 2) == CLIP
    True
    """
    p = as_probabilities(scores, k)
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (p.shape[0],):
            raise ValueError(f"weights must be {p.shape[0]} sample weights, one per score row, got shape {w.shape}")
        p = p[w > 0]
    positive = p[p > 0.0]
    return max(CLIP, 0.5 * float(positive.min())) if positive.size else CLIP


def softmax(z: FloatArray) -> FloatArray:
    """Row-wise softmax, shifted by the row maximum (no overflow)."""
    e = np.exp(z - z.max(axis=1, keepdims=True))
    out: FloatArray = e / e.sum(axis=1, keepdims=True)
    return out


def posteriors(z: FloatArray) -> FloatArray:
    """``softmax(z)`` floored at ``CLIP`` and renormalised (no class impossible for a sample: Saerens' adjustment
    of a one-hot row at a mix of 0 would be 0/0)."""
    p = np.maximum(softmax(z), CLIP)
    out: FloatArray = p / p.sum(axis=1, keepdims=True)
    return out
