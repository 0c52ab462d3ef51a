"""All five score metrics of one window's tally at once, as read and at a class mix (pure): what a report reads.

``roc_auc``, ``average_precision``, ``brier``, ``log_loss`` and ``ece`` are defined in ``score_ranking`` and
``score_calibration`` (one function per metric, each checking its tally: the public API). A report reads all
five of every window twice — as read and at the reference mix — and at K = 10 the per-metric functions walk the
K × K × 2,048 bins pair by pair (Hand & Till's M has 45 pairs, each two AUCs): ~13 ms a window. Here the same
formulas read the bins once, for every class pair and every mix together, in one compiled call
(``window_score_loop``: at K = 2 the numpy operations around the arithmetic cost more than it does):

- ``A[i, j]``, the AUC of class i against class j on class i's score column, for all pairs from one cumulative
  sum of the bins (``Σ_b h[i, i, b]·(Σ_{b' < b} h[j, i, b'] + ½ h[j, i, b]) / (n_i n_j)``); Hand & Till's M is
  the mean of ``(A[i, j] + A[j, i])/2`` over the present pairs, and the one-vs-rest AUC of class c is
  ``Σ_{j ≠ c} w_j n_j A[c, j] / Σ_{j ≠ c} w_j n_j`` — the pooled negatives' AUC is the weighted mean of the
  pairwise ones, so the class weights ``w`` enter only there;
- the one-vs-rest average precisions of every class from one reversed cumulative sum;
- the Brier score, log loss and ECE from the exact sums, as ``score_calibration`` does;
- binary: DeLong's variance of the AUC (``roc_auc_interval``'s), for the report's interval.

The tally is the monitor's own (``streammon.counting.score_tally``), not checked again. The weights and what is
undefined (NaN) follow ``score_input.ScoreRead``; the tests compare every value with scikit-learn.

>>> from streammon.metrics.score_bins import tally
>>> t = tally(np.array([0, 0, 0, 1, 1]), np.array([0.1, 0.4, 0.8, 0.35, 0.9]), 2)
>>> read = score_metrics(*t, positive=1)
>>> read["roc_auc"], read["average_precision"]  # scikit-learn: 0.6666666666666667, 0.75
(0.6666666666666666, 0.75)
>>> p = np.array([[.6, .3, .1], [.2, .5, .3], [.1, .2, .7], [.5, .1, .4], [.3, .3, .4]])
>>> t3 = tally(np.array([0, 1, 2, 2, 1]), p, 3)
>>> score_metrics(*t3)["roc_auc"], round(score_metrics(*t3, multi_class="ovr")["roc_auc"], 12)
(0.9375, 0.944444444444)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from statistics import NormalDist
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.confusion import FloatArray
from streammon.metrics.exact_ranking import RankedScores
from streammon.metrics.prior import normalise_priors

if TYPE_CHECKING:  # bin_values compiles its loops on import (numba): not with streammon
    from streammon.metrics.bin_values import BinValues

NAMES = ("roc_auc", "average_precision", "brier", "log_loss", "ece")  # the columns of ``score_values``
COUNT_TYPES = (np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.int64))  # histograms read without a copy


def _frozen(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``array`` C-contiguous and read-only (a view where it is already contiguous): numba compiles a loop once per
    argument type, and an array's layout and write flag are part of its type, so the loop's inputs are passed
    alike whatever made them (a writable placeholder where the real array was read-only cost a second compile of
    ~4 s in a stream's second report: ``streammon.monitor.warming``)."""
    array = np.ascontiguousarray(array)
    if array.flags.writeable:
        array = array.view()
        array.flags.writeable = False
    return array


_NO_FLAGS = _frozen(np.zeros((1, 1), np.bool_))  # the loop's ``distinct`` where every bin reads tied
_NO_VALUES = (_frozen(np.zeros((1, 2), np.int64)), _frozen(np.zeros((1, 1, 1))))  # ``starts``, ``shares``: none split


def class_weights(counts: FloatArray, priors: Any) -> FloatArray:
    """Each true class's sample weight: 1 as read (``priors`` None), else ``π_c·n/n_c`` (0 for a class the mix
    lacks, NaN for one the mix needs but the window lacks) — ``score_input.ScoreRead``'s rule.

    >>> class_weights(np.array([3.0, 1.0, 0.0]), [0.5, 0.5, 0.0]).tolist()
    [0.6666666666666666, 2.0, 0.0]
    """
    if priors is None:
        return np.ones(len(counts))
    return _weights_at(counts, normalise_priors(priors, len(counts)))


def _weights_at(counts: FloatArray, mix: FloatArray) -> FloatArray:
    """``class_weights`` at a mix already normalised (K float64 summing to 1)."""
    known = counts > 0
    out: FloatArray = np.where(known, mix * counts.sum() / np.where(known, counts, 1.0),
                               np.where(mix > 0, np.nan, 0.0))
    return out


@functools.cache
def loop() -> ModuleType:
    """``streammon.metrics.window_score_loop``, imported on first use (it imports numba, ~0.2 s): not with
    streammon."""
    from streammon.metrics import window_score_loop  # noqa: PLC0415

    return window_score_loop


def score_values(hist: Any, sums: Any, top: Any, mixes: Sequence[Any], *, positive: int = 1,
                 multi_class: str = "ovo", normalised: bool = False, samples: Any = None,
                 span: Any = None, distinct: Any = None, values: BinValues | None = None,
                 offset: int = 0) -> tuple[FloatArray, float]:
    """The five metrics (columns in the order of ``NAMES``) of one window's tally at each of ``mixes`` (rows;
    None: as read), and — binary — DeLong's variance of the ROC AUC as read (NaN with fewer than 2 samples of a
    class, and at K > 2). The tally is the monitor's own (not checked again); a mix is checked and normalised by
    ``normalise_priors`` unless the caller says it is (``normalised``: K float64 priors summing to 1, as a
    report's reference mix). ``samples``: the window's exact samples ``(true, scores)`` (``ScoreTally.samples``,
    the ones its histogram counts), when it keeps them: ROC AUC, average precision and DeLong's variance are then
    read from them (``exact_ranking``), the other three from the sums as always. ``span``: each score column's
    bins ``[lo, hi)`` (C, 2) outside which every count is 0 (``ScoreTally.span``, ``bin_span``): only those are
    read; None: all. ``distinct``: (C, bins) bool, the bins whose samples hold distinct scores
    (``ScoreTally.distinct``), which the average precision reads in random order rather than tied
    (``score_ranking``); None: every bin tied. ``values``: what the monitor's last exact scores show inside the
    bins (``ScoreTally.values``, ``bin_values``): ROC AUC and average precision then read the bins it splits over
    their values (``distinct``: its flags, for the others); ``offset``: the bin of ``hist``'s first (a window's
    slab).

    >>> from streammon.metrics.score_bins import tally
    >>> values, variance = score_values(*tally(np.array([0, 0, 1, 1]), np.array([0.1, 0.6, 0.4, 0.9]), 2), (None,))
    >>> values[0].round(6).tolist()  # sklearn: 0.75, 0.833333, 0.185, 0.510826
    [0.75, 0.833333, 0.185, 0.510826, 0.35]
    >>> variance  # placements: positives 1/2, 1; negatives 1, 1/2 -> 2 x (1/16 + 1/16) / (1 x 2)
    0.125
    """
    hist = _frozen(hist)
    if hist.dtype not in COUNT_TYPES:  # the loop is compiled once per integer type (the windows keep these)
        hist = _frozen(hist.astype(np.int64))
    k = hist.shape[0]
    rows = np.zeros((len(mixes), k))
    as_read = np.array([mix is None for mix in mixes], dtype=np.bool_)
    for v, mix in enumerate(mixes):
        if mix is not None:
            rows[v] = mix if normalised else normalise_priors(mix, k)
    out = np.full((len(mixes), len(NAMES)), math.nan)
    delong = np.full(1, math.nan)
    weights, counts = np.empty((len(mixes), k)), np.empty(k)  # filled by the loop, read again by the exact path
    if span is None:
        span = np.tile(np.array([0, hist.shape[2]], np.int64), (hist.shape[1], 1))
    span = _frozen(np.asarray(span, dtype=np.int64))
    within = distinct is not None
    flags = _frozen(np.asarray(distinct, dtype=np.bool_)) if within else _NO_FLAGS
    split = samples is None and values is not None and values.split > 0 and k <= values.classes
    starts, shares = ((_frozen(values.starts), _frozen(values.shares[:, :k])) if split and values is not None
                      else _NO_VALUES)
    loop().window_loop(hist, span, flags, within, _frozen(np.asarray(sums, dtype=np.float64)),
                        _frozen(np.asarray(top, dtype=np.float64)), rows, as_read, int(positive),
                        multi_class != "ovr", samples is None, out, delong, weights, counts, starts, shares,
                        int(offset), split)
    if samples is None:
        return out, float(delong[0])
    # the samples are the ones the histogram counts (ScoreTally.samples), so the loop's class counts and each mix
    # row's class weights (1 as read, class_weights at a mix) are theirs
    ranked = RankedScores(np.ascontiguousarray(samples[0], dtype=np.intp), np.asarray(samples[1], dtype=np.float64),
                          counts)
    exact, variance = ranked.values(weights, positive=int(positive), ovo=multi_class != "ovr")
    out[:, :2] = exact
    return out, variance


@functools.cache
def _quantile(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def delong_interval(auc: float, variance: float, confidence: float) -> tuple[float, float]:
    """``roc_auc_interval`` from the AUC and DeLong's variance of ``score_values``: ``auc ± z·√variance``,
    clipped to [0, 1]; (NaN, NaN) where the variance is undefined.

    >>> from streammon.metrics.score_bins import tally
    >>> from streammon.metrics.score_ranking import roc_auc_interval
    >>> t = tally(np.array([0, 0, 1, 1, 0, 1]), np.array([0.1, 0.6, 0.4, 0.9, 0.3, 0.8]), 2)
    >>> values, variance = score_values(*t, (None,))
    >>> low, high = delong_interval(float(values[0, 0]), variance, 0.95)
    >>> [round(x, 12) for x in (low, high)] == [round(x, 12) for x in roc_auc_interval(t)]
    True
    """
    if math.isnan(variance):
        return math.nan, math.nan
    spread = _quantile(confidence) * math.sqrt(variance)
    return max(0.0, auc - spread), min(1.0, auc + spread)


def score_metrics(hist: Any, sums: Any, top: Any, *, positive: int = 1, priors: Any = None,
                  multi_class: str = "ovo") -> dict[str, float]:
    """``roc_auc``, ``average_precision``, ``brier``, ``log_loss`` and ``ece`` of one window's tally (K, C, BINS),
    (K, C, 4), (K, 15, 3), as read or at the class mix ``priors``: the values of ``metrics.compute_scores`` for
    each name (binary about ``positive``; ``roc_auc`` by ``multi_class`` at K > 2), all NaN when undefined (no
    scored sample; a class the mix needs but the window lacks), ``roc_auc`` NaN with one class."""
    return score_metrics_at(hist, sums, top, (priors,), positive=positive, multi_class=multi_class)[0]


def score_metrics_at(hist: Any, sums: Any, top: Any, mixes: Sequence[Any], *, positive: int = 1,
                     multi_class: str = "ovo") -> list[dict[str, float]]:
    """``score_metrics`` at each of ``mixes`` (None: as read), the bins read once for all of them."""
    values = score_values(hist, sums, top, mixes, positive=positive, multi_class=multi_class)[0]
    return [dict(zip(NAMES, row.tolist(), strict=True)) for row in values]
