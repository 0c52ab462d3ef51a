"""ROC AUC and average precision of a window's samples from their exact scores (pure): what a window that holds
few scored samples reads instead of its bins.

The bins of ``score_bins`` tie two scores that share a bin; models with near-discrete scores (gradient boosting,
random forests, naive Bayes: 0.99999861 and 0.99999873 for samples of both classes) then miss scikit-learn's
average precision by up to 0.02 on a window of ~80 samples, where a few ties weigh much. A window of at most
``EXACT_RANKING_LIMIT`` scored samples keeps their exact scores (``streammon.counting.exact_scores``), and both
metrics are read from them here, as scikit-learn reads them: ties only where scores are equal.

The formulas are ``score_ranking``'s (and ``window_scores``'): they read counts of each true class in ascending
score order, and here the "bins" are the distinct scores of each column — in one compiled call
(``exact_ranking_loop``), each column put in order by a bucket sort, then one walk down its tie groups that sums
every pair's Mann–Whitney numerator, every mix's precisions and DeLong's placements. So:

- binary: the Mann–Whitney AUC (ties ½) and the step-wise AP at each mix, DeLong's variance of the AUC;
- K > 2: Hand & Till's M (``multi_class="ovo"``) or the macro one-vs-rest AUC (``"ovr"``) from every pair's AUC
  ``A(i|j)`` on class i's column, and the macro one-vs-rest AP; classes (pairs) absent from the window (or
  weighted 0 by the mix) left out, as ``score_ranking`` leaves them out.

Weights are per true class (``window_scores.class_weights``: 1 as read, ``π_c·n/n_c`` at a mix), which is
scikit-learn's ``sample_weight`` on each sample of class c. K = 10, 1,000 samples, two mixes: ~0.1 ms of
CPU (numpy's argsort of the ten columns alone took ~0.24 ms; with it and a walk through Python, ~0.55).

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
    """A window's samples: ``true`` (n,) classes, ``scores`` (n, C) — C = 1: a binary score of the positive class
    —, ``class_counts`` (K,). ``values`` puts each column in order (``exact_ranking_loop``: a bucket sort)."""

    true: npt.NDArray[np.intp]
    scores: FloatArray
    class_counts: FloatArray

    @classmethod
    def of(cls, true: npt.NDArray[np.integer], scores: npt.NDArray[np.floating], k: int) -> RankedScores:
        """The samples ``scores`` (n, C) of true classes ``true`` (n,) in [0, k) (checked by the caller:
        ``check_samples``)."""
        t = np.ascontiguousarray(true, dtype=np.intp)
        return cls(t, np.asarray(scores, dtype=np.float64), np.bincount(t, minlength=k).astype(np.float64))

    @property
    def k(self) -> int:
        return len(self.class_counts)

    def values(self, weights: FloatArray, *, positive: int = 1, ovo: bool = True) -> tuple[FloatArray, float]:
        """(ROC AUC, average precision) at each row of ``weights`` (V, K) — each true class's sample weight,
        ``window_scores.class_weights``: a row with a NaN weight, or no weighted sample, reads NaN — and, binary
        (K = 2, about ``positive``), DeLong's variance of the AUC as read (NaN with fewer than 2 samples of a
        class; NaN at K > 2). One compiled call (``exact_ranking_loop.ranking_values``)."""
        out = np.full((len(weights), 2), math.nan)
        delong = np.full(1, math.nan)
        if not len(self.true):
            return out, math.nan
        columns = self.scores.shape[1]
        binary_column = (0 if columns == 1 else positive) if self.k == 2 else -1
        own = np.array([positive] if columns == 1 else range(columns), dtype=np.intp)  # the class each column scores
        _loop().ranking_values(self.true, self.scores, own, np.ascontiguousarray(weights, dtype=np.float64),
                               binary_column, int(positive), ovo, out, delong)
        return out, float(delong[0])


@functools.cache
def _loop() -> ModuleType:
    """``streammon.metrics.exact_ranking_loop``, imported on first use (it imports numba)."""
    from streammon.metrics import exact_ranking_loop  # noqa: PLC0415

    return exact_ranking_loop


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
