"""Where a model's score falls: the bins of the per-window score distributions (pure; no state).

A window keeps, per true class, a histogram of the scores over ``BINS`` bins spaced in logit — fine where a
confident model puts its scores (near 0 and 1), as uniform bins are not:

- ``BINS - 1 - 2·TAIL_BINS`` bins split ``[-LOGIT_SPAN, +LOGIT_SPAN)`` into equal logit steps (0.0146; the
  widest bin, at ½, is 0.0036 wide);
- below, ``TAIL_BINS`` bins grow geometrically in |logit| down to ``-LOW_LOGIT`` (p ≈ 1e-304); bin 0 holds
  the scores below (0 included);
- above, ``TAIL_BINS - TOP_FLOATS`` bins split ``1 − p`` geometrically from ``sigmoid(-LOGIT_SPAN)`` down to
  ``(TOP_FLOATS + 1)·2⁻⁵³``, and the last ``TOP_FLOATS`` bins hold one float64 each (``1 − k·2⁻⁵³``); the last
  bin holds ``1 − 2⁻⁵³`` and 1.

The tails matter for over-confident models: Gaussian naive Bayes puts most scores beyond logit ±12, many at
float64's last steps below 1. With one lumped bin per side (the first layout), the bins missed scikit-learn's
ROC AUC by up to 0.03 and its average precision by up to 0.09 on bundled data sets; with the tails, by at
most 0.0003 and 0.0019 (``examples/bench_score_metrics.py``, 100 windows per data set). Only ranking scores
(ROC AUC, average precision) read the bins: two scores in one bin count as tied for ROC AUC, so its error is at
most the share of (positive, negative) pairs that fall in one bin; average precision reads a bin that holds
distinct scores in random order (``score_ranking``). Brier score, log loss and calibration read exact
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
>>> bool(np.all(np.diff(edges) > 0)), score_bins(np.array([1 - 2**-52, 1 - 2**-53])).tolist()
(True, [2046, 2047])
>>> s = np.array([1e-300, 1e-9, 0.01, 0.3, 0.7, 0.99, 1 - 1e-9, 1 - 1e-14, 1 - 2**-52])
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
LOGIT_SPAN = 12.0  # the evenly spaced bins cover logit ±12: sigmoid(-12) ≈ 6.1e-6
TAIL_BINS = 200  # bins on each side beyond ±LOGIT_SPAN
LOW_LOGIT = 700.0  # the lowest edge's |logit|: exp(-700) ≈ 1e-304, still a normal float64
TOP_FLOATS = 40  # the last bins below 1, one float64 each: 1 − k·2⁻⁵³ for k = 40 … 1
ECE_BINS = 15  # Guo et al. (2017), "On calibration of modern neural networks": 15 equal-width confidence bins
CLIP = 1e-15  # scores are clipped to [CLIP, 1 - CLIP] before a logarithm (log loss)
SUMS = ("sum", "sum_sq", "sum_log", "sum_log1m")
TOP = ("count", "correct", "sum_confidence")

_ULP = 2.0**-53  # the spacing of float64 just below 1
_LOW = -np.geomspace(LOW_LOGIT, LOGIT_SPAN, TAIL_BINS + 1)[:-1]
_MIDDLE = np.linspace(-LOGIT_SPAN, LOGIT_SPAN, BINS - 1 - 2 * TAIL_BINS)
_GAP = np.geomspace(1.0 / (1.0 + np.exp(LOGIT_SPAN)), (TOP_FLOATS + 1) * _ULP, TAIL_BINS - TOP_FLOATS + 1)[1:]
_HIGH = 1.0 - np.concatenate((_GAP, _ULP * np.arange(TOP_FLOATS, 0, -1)))
_EDGES = np.concatenate(([0.0], 1.0 / (1.0 + np.exp(-np.concatenate((_LOW, _MIDDLE)))), _HIGH, [1.0]))
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
    sums, top = sums_and_top(t, vector, k, positive=positive)
    return hist, sums, top


def sums_and_top(true: npt.NDArray[np.intp], vector: npt.NDArray[np.float64], k: int, *,
                 positive: int = 1) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The exact parts of a batch's tally, ``sums`` (k, C, 4) and ``top`` (k, 15, 3) (layout above): ``vector``
    is (n, C), C = 1 a binary score of class ``positive``; ``true`` holds class indices in ``[0, k)``."""
    t = np.asarray(true, dtype=np.intp)
    columns = vector.shape[1]
    clipped = np.clip(vector, CLIP, 1.0 - CLIP)
    rows = (t[:, None] * columns + np.arange(columns)).ravel()
    sums = np.stack([np.bincount(rows, weights=part.ravel(), minlength=k * columns)
                     for part in (vector, vector * vector, np.log(clipped), np.log1p(-clipped))], axis=-1)
    if columns == 1:
        v = vector[:, 0]
        confidence = np.maximum(v, 1.0 - v)
        chosen = np.where(v > 0.5, positive, 1 - positive)
    else:
        chosen = np.argmax(vector, axis=1)
        confidence = vector[np.arange(len(vector)), chosen]
    where = t * ECE_BINS + ece_bins(confidence)
    top = np.stack([np.bincount(where, minlength=k * ECE_BINS).astype(np.float64),
                    np.bincount(where, weights=(chosen == t).astype(np.float64), minlength=k * ECE_BINS),
                    np.bincount(where, weights=confidence, minlength=k * ECE_BINS)], axis=-1)
    return (sums.reshape(k, columns, len(SUMS)).astype(np.float64),
            top.reshape(k, ECE_BINS, len(TOP)).astype(np.float64))
