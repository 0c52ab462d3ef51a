"""Where a model's score falls: the bins of the per-window score distributions (pure; no state).

A window keeps, per true class, a histogram of the scores over ``BINS`` bins spaced evenly in logit —
fine where a confident model puts its scores (near 0 and 1), as uniform bins are not. Bin 0 holds the scores
with logit below ``-LOGIT_SPAN`` (0 included), bin ``BINS - 1`` those at or above ``+LOGIT_SPAN`` (1 included);
the ``BINS - 2`` bins between split ``[-LOGIT_SPAN, +LOGIT_SPAN)`` into equal logit steps. Only ranking scores
(ROC AUC, average precision) read the bins: two scores in one bin count as tied, so their error is at most the
share of (positive, negative) pairs that fall in one bin. Brier score, log loss and calibration read exact
sums kept beside the bins (``SUMS``, ``TOP``).

The layout of one window's score tally (K true classes, C score columns: C = 1 for a binary model, the score
of the monitor's positive class; C = K otherwise, in the order of the monitor's classes):

- ``hist``: int64 (K, C, BINS) — the count of samples of true class k whose column-c score is in each bin;
- ``sums``: float64 (K, C, len(SUMS)) — per true class and column, Σs, Σs², Σln(s) and Σln(1 − s), the
  logarithms of the score clipped to ``[CLIP, 1 − CLIP]``;
- ``top``: float64 (K, ECE_BINS, len(TOP)) — per true class and top-label confidence bin (``ECE_BINS``
  equal-width bins of the largest probability, the last bin closed), the count, the count whose arg-max class
  is the true class, and Σ confidence. A binary score ``s`` is the probability vector ``(1 − s, s)`` in the
  order (negative, positive); arg-max ties go to the first class.

>>> score_bins(np.array([0.0, 0.5, 1.0])).tolist()
[0, 1024, 2047]
>>> edges = bin_edges()
>>> len(edges), float(edges[0]), float(edges[-1])
(2049, 0.0, 1.0)
>>> bool(np.all(np.diff(edges) > 0))
True
>>> s = np.array([1e-9, 0.01, 0.3, 0.7, 0.99, 1 - 1e-9])
>>> b = score_bins(s)
>>> bool(np.all((edges[b] <= s) & (s < edges[b + 1])))
True
>>> ece_bins(np.array([0.5, 0.999, 1.0])).tolist()
[7, 14, 14]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

BINS = 2048
LOGIT_SPAN = 12.0  # logit of the first inner edge: sigmoid(-12) ≈ 6.1e-6
ECE_BINS = 15  # Guo et al. (2017), "On calibration of modern neural networks": 15 equal-width confidence bins
CLIP = 1e-15  # scores are clipped to [CLIP, 1 - CLIP] before a logarithm (log loss)
SUMS = ("sum", "sum_sq", "sum_log", "sum_log1m")
TOP = ("count", "correct", "sum_confidence")

_STEP = 2.0 * LOGIT_SPAN / (BINS - 2)
_INNER = -LOGIT_SPAN + _STEP * np.arange(BINS - 1)
_EDGES = np.concatenate(([0.0], 1.0 / (1.0 + np.exp(-_INNER)), [1.0]))
_EDGES.flags.writeable = False


def bin_edges() -> npt.NDArray[np.float64]:
    """The ``BINS + 1`` bin edges in probability: bin b holds ``edges[b] <= s < edges[b + 1]`` (the last bin
    also holds 1). These floats define the bins; ``score_bins`` searches them."""
    return _EDGES.copy()


def score_bins(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.intp]:
    """The bin of each score in ``[0, 1]`` (the caller has checked the range; NaN is not a score)."""
    found = np.searchsorted(_EDGES, np.asarray(scores, dtype=np.float64), side="right") - 1
    return np.minimum(found, BINS - 1).astype(np.intp)


def ece_bins(confidence: npt.NDArray[np.float64]) -> npt.NDArray[np.intp]:
    """The top-label confidence bin of each largest probability (``ECE_BINS`` equal-width bins on [0, 1], the
    last one closed)."""
    c = np.asarray(confidence, dtype=np.float64)
    return np.minimum((c * ECE_BINS).astype(np.intp), ECE_BINS - 1)


def tally(true: npt.NDArray[np.intp], scores: npt.NDArray[np.float64], k: int, *,
          positive: int = 1) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The score tally ``(hist, sums, top)`` of a batch (layout above): ``true`` holds class indices in
    ``[0, k)``; ``scores`` is (n,) — a binary model's score of class ``positive`` (k = 2) — or (n, k), one column per
    class. The caller has checked the values (finite, in [0, 1], the shape).

    >>> hist, sums, top = tally(np.array([0, 1, 1]), np.array([0.2, 0.9, 0.4]), 2)
    >>> hist.shape, int(hist.sum()), sums[1, 0, 0].round(6), top[1, :, 1].sum()
    ((2, 1, 2048), 3, np.float64(1.3), np.float64(1.0))
    """
    t = np.asarray(true, dtype=np.intp)
    s = np.asarray(scores, dtype=np.float64)
    vector = s[:, None] if s.ndim == 1 else s
    columns = vector.shape[1]
    bins = score_bins(vector)  # (n, C)
    cell = (t[:, None] * columns + np.arange(columns)) * BINS + bins
    hist = np.bincount(cell.ravel(), minlength=k * columns * BINS).reshape(k, columns, BINS).astype(np.int64)
    clipped = np.clip(vector, CLIP, 1.0 - CLIP)
    rows = (t[:, None] * columns + np.arange(columns)).ravel()
    sums = np.stack([np.bincount(rows, weights=part.ravel(), minlength=k * columns)
                     for part in (vector, vector * vector, np.log(clipped), np.log1p(-clipped))], axis=-1)
    if s.ndim == 1:
        confidence = np.maximum(s, 1.0 - s)
        chosen = np.where(s > 0.5, positive, 1 - positive)
    else:
        chosen = np.argmax(s, axis=1)
        confidence = s[np.arange(len(s)), chosen]
    where = t * ECE_BINS + ece_bins(confidence)
    top = np.stack([np.bincount(where, minlength=k * ECE_BINS).astype(np.float64),
                    np.bincount(where, weights=(chosen == t).astype(np.float64), minlength=k * ECE_BINS),
                    np.bincount(where, weights=confidence, minlength=k * ECE_BINS)], axis=-1)
    return (hist, sums.reshape(k, columns, len(SUMS)).astype(np.float64),
            top.reshape(k, ECE_BINS, len(TOP)).astype(np.float64))
