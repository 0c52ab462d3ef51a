"""A window's score tally as the score metrics read it: checked once, with each true class's weight (pure).

Every score metric (``roc_auc``, ``average_precision``, ``brier``, ``log_loss``, ``ece``) takes the tally
``(hist, sums, top)`` of ``score_bins`` — per true class, the binned scores, their exact sums and the top-label
confidence bins — and reads it **as read** (each sample counts once) or **at a class mix** ``priors``: each
true class c's samples reweighted by ``π_c · n / n_c``, exactly scikit-learn's value with ``sample_weight =
π_c / (n_c / n)`` on every sample of class c (METRICS.md, "Prior correction"). A class with a positive prior but
no sample in the window has unknown scores: every metric reads NaN, as ``reweight`` does for its row. A class
with prior 0 drops out.

>>> from streammon.metrics.score_bins import tally
>>> t = tally(np.array([0, 0, 0, 1]), np.array([0.1, 0.2, 0.7, 0.9]), 2)
>>> read = ScoreRead.of(t)
>>> read.k, read.columns, read.counts.tolist(), read.weights.tolist()
(2, 1, [3.0, 1.0], [1.0, 1.0])
>>> ScoreRead.of(t, [0.5, 0.5]).weights.tolist()  # class 0: 0.5·4/3, class 1: 0.5·4/1
[0.6666666666666666, 2.0]
>>> ScoreRead.of(t, [0.5, 0.5]).column(1)  # the binary score column holds the positive class's score
0
>>> ScoreRead.of((t[0][:, :, :5], t[1], t[2]))
Traceback (most recent call last):
...
ValueError: a score tally's hist must be (K, C, 2048) with K >= 2 and C = 1 (K = 2) or K, got shape (2, 1, 5)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.confusion import FloatArray
from streammon.metrics.exact_ranking import RankedScores, check_samples
from streammon.metrics.prior import normalise_priors
from streammon.metrics.score_bins import BINS, ECE_BINS, SUMS, TOP, tally

if TYPE_CHECKING:  # bin_values compiles its loops on import (numba): not with streammon
    from streammon.metrics.bin_values import BinValues

IntArray = npt.NDArray[np.int64]
Tally = tuple[IntArray, FloatArray, FloatArray]  # (hist, sums, top): score_bins' layout


def _array(value: Any, name: str) -> npt.NDArray[Any]:
    if not isinstance(value, np.ndarray):
        raise TypeError(f"a score tally's {name} must be a numpy array, got {type(value).__name__}")
    return value


@dataclass(frozen=True)
class ScoreRead:
    """One window's checked tally and the weight of each true class's samples (1 as read; ``π_c·n/n_c`` at
    the mix ``priors``; NaN for a class that the mix needs but the window lacks)."""

    hist: IntArray
    sums: FloatArray
    top: FloatArray
    counts: FloatArray  # n_c, the samples of each true class
    weights: FloatArray
    samples: RankedScores | None = None  # the window's exact scores, when it keeps them (``exact_ranking``)
    distinct: npt.NDArray[np.bool_] | None = None  # (C, BINS): the bins holding distinct scores (``score_ranking``)
    values: BinValues | None = None  # what exact scores show inside the bins (``bin_values``)

    @property
    def k(self) -> int:
        """The number of classes K."""
        return int(self.hist.shape[0])

    @property
    def columns(self) -> int:
        """The score columns C: 1 (a binary model's positive score) or K."""
        return int(self.hist.shape[1])

    @property
    def binary(self) -> bool:
        """K = 2: the metrics take their binary form, about the positive class."""
        return self.k == 2

    @property
    def defined(self) -> bool:
        """Samples to read and no class that the mix needs but the window lacks."""
        return bool(np.all(np.isfinite(self.weights)) and self.weights @ self.counts > 0)

    def ranked(self, column: int) -> tuple[npt.NDArray[Any], npt.NDArray[np.bool_] | None,
                                           npt.NDArray[np.int64] | None]:
        """What ROC AUC and average precision read of score column ``column``: ``(h, mixed, where)`` — ``h`` (K, A)
        counts in score order, ``mixed`` (A,) the ones read in random order (None: every one tied), ``where`` (A,)
        the bin of each (None: ``h`` is the bins themselves). With ``values``, the bins split over the values the
        exact scores show in them (``bin_values.BinValues.atoms``: fractional counts, the report's reading); else
        the bins with the ``distinct`` flags."""
        if self.values is None or not self.values.split:
            return self.hist[:, column, :], None if self.distinct is None else self.distinct[column], None
        atoms, mixed, where, span = self.values.atoms(self.hist[:, column:column + 1, :], columns=(column,))
        n = int(span[0, 1])
        return atoms[:, 0, :n], mixed[0, :n], where[0, :n]

    def column(self, positive: int) -> int:
        """The column holding the score of class ``positive`` (binary: the one column, or column ``positive``)."""
        return 0 if self.columns == 1 else positive

    def positive(self, positive: Any) -> int:
        """``positive`` checked as a class index of this tally (``check_positive``'s rule and messages).

        >>> from streammon.metrics.score_bins import tally
        >>> ScoreRead.of(tally(np.array([0, 1]), np.array([0.2, 0.9]), 2)).positive(2)
        Traceback (most recent call last):
        ...
        ValueError: positive must be a class index in [0, 2), got 2
        """
        if isinstance(positive, bool) or not isinstance(positive, (int, np.integer)):
            raise TypeError(f"positive must be an int class index in [0, {self.k}), got {positive!r}")
        if not 0 <= positive < self.k:
            raise ValueError(f"positive must be a class index in [0, {self.k}), got {positive}")
        return int(positive)

    @classmethod
    def of(cls, tally: Sequence[Any], priors: Any = None) -> ScoreRead:
        """Check ``tally`` (shapes, finite non-negative counts) and weigh its classes at ``priors`` (None: as
        read). ``tally`` is ``(hist, sums, top)``, or ``(hist, sums, top, samples)`` with the window's exact
        samples ``(true, scores)`` or None: then the ranking metrics read them; or ``(hist, sums, top, samples,
        distinct)`` (``ScoreTally.parts``) with the (C, BINS) bool flags of the bins that hold distinct scores, or
        None: average precision reads those bins in random order (``score_ranking``); or that and the
        ``bin_values.BinValues`` of the bins (``ScoreTally.values``), or None: ROC AUC and average precision read the
        bins it splits over their values (``ranked``).
        Bad input raises ``TypeError``/``ValueError`` naming what was expected."""
        if not isinstance(tally, (tuple, list)) or len(tally) not in (3, 4, 5, 6):
            raise TypeError(f"a score tally must be the tuple (hist, sums, top) of score_bins.tally (or "
                            f"ScoreTally.parts), got {type(tally).__name__}")
        hist, sums, top = (_array(part, name) for part, name in zip(tally[:3], ("hist", "sums", "top"), strict=True))
        k = hist.shape[0] if hist.ndim == 3 else 0
        if hist.ndim != 3 or k < 2 or hist.shape[1] not in {1 if k == 2 else k, k} or hist.shape[2] != BINS:
            raise ValueError(f"a score tally's hist must be (K, C, {BINS}) with K >= 2 and C = 1 (K = 2) or K, "
                             f"got shape {hist.shape}")
        if sums.shape != (k, hist.shape[1], len(SUMS)) or top.shape != (k, ECE_BINS, len(TOP)):
            raise ValueError(f"a score tally with hist {hist.shape} needs sums {(k, hist.shape[1], len(SUMS))} and "
                             f"top {(k, ECE_BINS, len(TOP))}, got {sums.shape} and {top.shape}")
        if not np.issubdtype(hist.dtype, np.integer) or np.any(hist < 0):
            raise ValueError("a score tally's hist must hold non-negative integer counts")
        if not (np.all(np.isfinite(sums)) and np.all(np.isfinite(top)) and np.all(top[..., 0] >= 0)):
            raise ValueError("a score tally's sums and top must be finite, with non-negative counts")
        counts = hist[:, 0, :].sum(axis=1).astype(np.float64)
        if priors is None:
            weights = np.ones(k)
        else:
            mix = normalise_priors(priors, k)
            known = counts > 0
            weights = np.where(known, mix * counts.sum() / np.where(known, counts, 1.0), np.where(mix > 0, np.nan, 0.0))
        ranked = None if len(tally) == 3 or tally[3] is None else _ranked(tally[3], counts, hist.shape[1])
        distinct = None if len(tally) < 5 or tally[4] is None else _distinct(tally[4], hist.shape[1])
        values = None if len(tally) < 6 or tally[5] is None else _values(tally[5], k, hist.shape[1])
        if values is not None:
            distinct = values.flags
        return cls(hist.astype(np.int64, copy=False), sums.astype(np.float64, copy=False),
                   top.astype(np.float64, copy=False), counts, weights, ranked, distinct, values)


def _distinct(flags: Any, columns: int) -> npt.NDArray[np.bool_]:
    """A tally's flags of the bins holding distinct scores, checked: a (C, BINS) bool array."""
    value = _array(flags, "distinct")
    if value.dtype != np.bool_ or value.shape != (columns, BINS):
        raise ValueError(f"a score tally's distinct must be a ({columns}, {BINS}) bool array, got {value.dtype} "
                         f"{value.shape}")
    return value


def _values(values: Any, k: int, columns: int) -> BinValues:
    """A tally's ``BinValues``, checked: for at least its K classes and its C columns."""
    from streammon.metrics.bin_values import BinValues  # noqa: PLC0415 - compiles its loops (numba) on import

    if not isinstance(values, BinValues):
        raise TypeError(f"a score tally's values must be a BinValues (ScoreTally.values), got {type(values).__name__}")
    if values.classes < k or values.flags.shape != (columns, BINS):
        raise ValueError(f"a score tally's values must cover its {k} classes and {columns} column(s), got "
                         f"{values.classes} classes and flags {values.flags.shape}")
    return values


def _ranked(samples: Any, counts: FloatArray, columns: int) -> RankedScores:
    """The exact samples ``(true, scores)`` of a tally, checked against its class counts."""
    if not isinstance(samples, (tuple, list)) or len(samples) != 2:
        raise TypeError(f"a score tally's samples must be the pair (true, scores), got {type(samples).__name__}")
    true, scores = check_samples(samples[0], samples[1], len(counts), columns)
    if not np.array_equal(np.bincount(true, minlength=len(counts)), counts):
        raise ValueError("a score tally's samples must be the samples its histogram counts (class counts differ)")
    return RankedScores.of(true, scores, len(counts))


def score_tally(y_true: Any, y_score: Any, k: int, *, positive: int = 1) -> Tally:
    """The score tally of one batch, checked: ``y_true`` class indices in ``[0, k)``; ``y_score`` finite
    probabilities in [0, 1] — shape (n,), the score of class ``positive`` (k = 2 only), or (n, k), one
    column per class. Bad input raises ``TypeError``/``ValueError`` naming the value and what was expected.

    >>> hist, sums, top = score_tally([0, 1, 1], [0.2, 0.9, 0.4], 2)
    >>> hist.shape, int(hist.sum())
    ((2, 1, 2048), 3)
    >>> score_tally([0, 1], [0.2, 1.5], 2)
    Traceback (most recent call last):
    ...
    ValueError: y_score must be finite probabilities in [0, 1], got values from 0.2 to 1.5
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise ValueError(f"k must be an int number of classes >= 2, got {k!r}")
    true = np.asarray(y_true)
    if true.ndim != 1 or not (np.issubdtype(true.dtype, np.integer) or true.size == 0):
        raise TypeError(f"y_true must be a 1-D array of int class indices, got dtype {true.dtype} shape {true.shape}")
    if true.size and (true.min() < 0 or true.max() >= k):
        raise ValueError(f"y_true must hold class indices in [0, {k}), got values from {true.min()} to {true.max()}")
    try:
        scores = np.asarray(y_score, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"y_score must be numbers, got {type(y_score).__name__}") from exc
    shapes = [(len(true), k)] + ([(len(true),)] if k == 2 else [])
    if scores.shape not in shapes:
        raise ValueError(f"y_score must have shape {' or '.join(map(str, shapes))} for {len(true)} labels and "
                         f"K={k}, got {scores.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError(f"y_score must be finite probabilities in [0, 1], got {int(np.sum(~np.isfinite(scores)))} "
                         "NaN or infinite value(s)")
    if scores.size and (scores.min() < 0 or scores.max() > 1):
        raise ValueError(f"y_score must be finite probabilities in [0, 1], got values from {scores.min()} "
                         f"to {scores.max()}")
    if isinstance(positive, bool) or not isinstance(positive, int) or not 0 <= positive < k:
        raise ValueError(f"positive must be a class index in [0, {k}), got {positive!r}")
    return tally(true.astype(np.intp), scores, k, positive=positive)
