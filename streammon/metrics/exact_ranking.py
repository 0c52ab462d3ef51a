"""ROC AUC and average precision of a window's samples from their exact scores (pure): what a window that holds
few scored samples reads instead of its bins.

The bins of ``score_bins`` tie two scores that share a bin; models with near-discrete scores (gradient boosting,
random forests, naive Bayes: 0.99999861 and 0.99999873 for samples of both classes) then miss scikit-learn's
average precision by up to 0.02 on a window of ~80 samples, where a few ties weigh much. A window of at most
``EXACT_RANKING_LIMIT`` scored samples keeps their exact scores (``streammon.counting.exact_scores``), and both
metrics are read from them here, as scikit-learn reads them: ties only where scores are equal.

The formulas are ``score_ranking``'s (and ``window_scores``'): they read counts of each true class in ascending
score order, and here the "bins" are the distinct scores of each column — one argsort per column (numpy), then
one compiled walk down each column's tie groups (``exact_ranking_loop``) that sums every pair's Mann–Whitney
numerator, every mix's precisions and DeLong's placements. So:

- binary: the Mann–Whitney AUC (ties ½) and the step-wise AP at each mix, DeLong's variance of the AUC;
- K > 2: Hand & Till's M (``multi_class="ovo"``) or the macro one-vs-rest AUC (``"ovr"``) from every pair's AUC
  ``A(i|j)`` on class i's column, and the macro one-vs-rest AP; classes (pairs) absent from the window (or
  weighted 0 by the mix) left out, as ``score_ranking`` leaves them out.

Weights are per true class (``window_scores.class_weights``: 1 as read, ``π_c·n/n_c`` at a mix), which is
scikit-learn's ``sample_weight`` on each sample of class c. K = 10, 1,000 samples, two mixes:
~0.4 ms on a loaded 2-core machine (the argsort ~0.2).

>>> true = np.array([0, 0, 0, 1, 1])
>>> ranked = RankedScores.of(true, np.array([[0.1], [0.4], [0.8], [0.35], [0.9]]), 2)
>>> values, variance = ranked.values(np.ones((1, 2)), positive=1)
>>> values.tolist()  # scikit-learn: roc_auc_score 0.6666666666666667, average_precision_score 0.75
[[0.6666666666666666, 0.75]]
>>> s = np.array([[0.99999861], [0.99999862], [0.99999873], [0.2]])  # one bin; three distinct scores
>>> RankedScores.of(np.array([1, 0, 1, 0]), s, 2).values(np.ones((1, 2)))[0].tolist()  # sklearn
[[0.75, 0.8333333333333333]]
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from types import ModuleType

import numpy as np
import numpy.typing as npt

from streammon.metrics.confusion import FloatArray

EXACT_RANKING_LIMIT = 2048  # a window of at most this many scored samples reads ranking metrics from exact scores
AUC, AP = range(2)  # the columns of ``RankedScores.values``


@dataclass(frozen=True)
class RankedScores:
    """A window's samples with each score column's order: ``true`` (n,) classes, ``scores`` (C, n) — row c
    the column-c scores; C = 1: a binary score of the positive class —, ``order`` (C, n) each column's samples
    by ascending score, ``class_counts`` (K,)."""

    true: npt.NDArray[np.intp]
    scores: FloatArray
    order: npt.NDArray[np.intp]
    class_counts: FloatArray

    @classmethod
    def of(cls, true: npt.NDArray[np.integer], scores: npt.NDArray[np.floating], k: int) -> RankedScores:
        """Order ``scores`` (n, C) of samples of true classes ``true`` (n,) in [0, k) (checked by the caller:
        ``check_samples``). One argsort per column (a tie's order does not matter: the groups of equal scores are
        read whole)."""
        s = np.ascontiguousarray(np.asarray(scores, dtype=np.float64).T)
        t = np.ascontiguousarray(true, dtype=np.intp)
        return cls(t, s, np.argsort(s, axis=1), np.bincount(t, minlength=k).astype(np.float64))

    @property
    def k(self) -> int:
        return len(self.class_counts)

    def values(self, weights: FloatArray, *, positive: int = 1, ovo: bool = True) -> tuple[FloatArray, float]:
        """(ROC AUC, average precision) at each row of ``weights`` (V, K) — each true class's sample weight,
        ``window_scores.class_weights``: a row with a NaN weight, or no weighted sample, reads NaN — and, binary
        (K = 2, about ``positive``), DeLong's variance of the AUC as read (NaN with fewer than 2 samples of a
        class; NaN at K > 2)."""
        out = np.full((len(weights), 2), math.nan)
        k, columns = self.k, len(self.scores)
        if not len(self.true):
            return out, math.nan
        w = np.ascontiguousarray(weights, dtype=np.float64)
        usable = np.where(np.isfinite(w), w, 0.0)
        numer = np.zeros((columns, k))
        precision = np.zeros((len(w), columns))
        squares = np.zeros(2)
        binary_column = (0 if columns == 1 else positive) if k == 2 else -1
        own = np.array([positive] if columns == 1 else range(columns), dtype=np.intp)  # the class each column scores
        _loop().ranking_pass(self.true, self.order, self.scores, own, usable, binary_column, numer, precision,
                             squares)
        defined = [_defined(row, self.class_counts) for row in w]
        if k == 2:
            return self._binary(w, defined, positive, numer[binary_column], precision[:, binary_column], squares,
                                out)
        for v, row in enumerate(w):
            if defined[v]:
                out[v] = self._multiclass(row, numer, precision[v], ovo)
        return out, math.nan

    def _binary(self, w: FloatArray, defined: list[bool], positive: int, numer: FloatArray,  # noqa: PLR0917
                precision: FloatArray, squares: FloatArray, out: FloatArray) -> tuple[FloatArray, float]:
        negative = 1 - positive
        npos, nneg = self.class_counts[positive], self.class_counts[negative]
        auc = numer[negative] / (npos * nneg) if npos > 0 and nneg > 0 else math.nan
        for v in range(len(w)):
            if defined[v]:
                out[v] = auc, precision[v] / npos if npos > 0 else math.nan
        if npos < 2 or nneg < 2:
            return out, math.nan
        # DeLong: the placements' sample variances, from their sums of squares (their means are the AUC)
        s10 = (squares[0] - npos * auc * auc) / (npos - 1)
        s01 = (squares[1] - nneg * auc * auc) / (nneg - 1)
        return out, float(max(s10, 0.0) / npos + max(s01, 0.0) / nneg)

    def _multiclass(self, w: FloatArray, numer: FloatArray, precision: FloatArray, ovo: bool) -> tuple[float, float]:
        n = self.class_counts
        present = np.flatnonzero(w * n > 0)
        p = len(present)
        own = n[present]
        a = numer[np.ix_(present, present)] / np.outer(own, own)  # A(i|j) of the present classes, by rows i
        if p < 2:
            auc = math.nan
        elif ovo:  # Hand & Till: the mean over pairs of (A(i|j) + A(j|i))/2 = the mean of A off the diagonal
            auc = float((a.sum() - np.trace(a)) / (p * (p - 1)))
        else:  # the pooled negatives' AUC: the mean of the pairwise ones weighted by w_j·n_j
            other = np.broadcast_to(w[present] * own, (p, p)).copy()
            np.fill_diagonal(other, 0.0)
            np.fill_diagonal(a, 0.0)
            auc = float(((a * other).sum(axis=1) / other.sum(axis=1)).mean())
        return auc, float((precision[present] / own).mean()) if p else math.nan


@functools.cache
def _loop() -> ModuleType:
    """``streammon.metrics.exact_ranking_loop``, imported on first use (it imports numba)."""
    from streammon.metrics import exact_ranking_loop  # noqa: PLC0415

    return exact_ranking_loop


def _defined(w: FloatArray, counts: FloatArray) -> bool:
    return bool(np.all(np.isfinite(w)) and w @ counts > 0)


def _mean(values: FloatArray) -> float:
    kept = values[~np.isnan(values)]
    return float(kept.sum() / len(kept)) if len(kept) else math.nan


def check_samples(true: object, scores: object, k: int, columns: int) -> tuple[npt.NDArray[np.intp], FloatArray]:
    """``(true, scores)`` checked as a window's exact samples: ``true`` (n,) class indices in [0, k), ``scores``
    (n, columns) finite in [0, 1] (any n: the windows' rings keep at most ``EXACT_RANKING_LIMIT`` on the labelled
    side, more on the prediction side, but the reading is exact at any size); ``TypeError``/``ValueError`` naming
    what was expected.

    >>> check_samples(np.array([0, 3]), np.array([[0.2], [0.9]]), 2, 1)
    Traceback (most recent call last):
    ...
    ValueError: exact samples' classes must be indices in [0, 2), got values from 0 to 3
    """
    if not isinstance(true, np.ndarray) or not isinstance(scores, np.ndarray):
        raise TypeError(f"exact samples must be numpy arrays (classes, scores), got {type(true).__name__} and "
                        f"{type(scores).__name__}")
    if true.ndim != 1 or not np.issubdtype(true.dtype, np.integer) or scores.shape != (len(true), columns):
        raise ValueError(f"exact samples must be (n,) int classes and (n, {columns}) scores, got {true.dtype} "
                         f"{true.shape} and {scores.shape}")
    if len(true) and (true.min() < 0 or true.max() >= k):
        raise ValueError(f"exact samples' classes must be indices in [0, {k}), got values from {true.min()} to "
                         f"{true.max()}")
    if not (np.all(np.isfinite(scores)) and np.all(scores >= 0) and np.all(scores <= 1)):
        raise ValueError("exact samples' scores must be finite and in [0, 1]")
    return true.astype(np.intp, copy=False), scores.astype(np.float64, copy=False)
