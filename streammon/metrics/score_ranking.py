"""Ranking metrics of a model's scores from a window's score tally: ROC AUC and average precision (pure).

Both read the binned scores (``hist``) of each true class, so two scores in one bin count as tied — unless the
tally carries the window's exact samples (``(hist, sums, top, (true, scores))``, ``ScoreTally.parts``: a window of
at most ``exact_ranking.EXACT_RANKING_LIMIT`` scored samples keeps them), read then as scikit-learn reads them:
ties only where scores are equal, the bin error 0 (``exact_ranking``).

- ``roc_auc`` (binary): the Mann–Whitney statistic ``P(s⁺ > s⁻) + ½ P(s⁺ = s⁻)`` over (positive, negative)
  pairs, a pair within one bin counting ½ (Hanley & McNeil 1982) — or, where the tally carries what exact scores
  show inside its bins (``ScoreTally.values``, ``bin_values``), a bin of repeated distinct values split over them.
  Its bin error is at most ½ × the share of pairs sharing a bin (``roc_auc_bin_error``): such a pair's exact
  contribution is 0, ½ or 1.
  K > 2, parameter ``multi_class``: ``"ovo"`` (the default) — Hand & Till's (2001) M, the mean over class
  pairs (i, j) of ``(A(i|j) + A(j|i))/2``, where ``A(i|j)`` ranks class i's samples above class j's by the
  score of class i (scikit-learn's ``roc_auc_score(multi_class="ovo", average="macro")``); ``"ovr"`` — the
  macro mean over classes of the one-vs-rest AUC of each class's score (``multi_class="ovr"``).
  **Condition 1**: the binary AUC and Hand & Till's M depend only on the class-conditional score
  distributions — reweighting class i by ``a`` and class j by ``b`` multiplies the numerator and the
  denominator of ``A(i|j)`` by ``ab`` — so they read the same at every mix; that is why ``"ovo"`` is the
  default. One-vs-rest pools the other classes into one negative class, whose score distribution moves
  with their mix: not invariant at K > 2.
- ``average_precision``: scikit-learn's step-wise ``Σ_n (R_n − R_{n−1}) P_n`` over thresholds at the scores,
  the area under the precision–recall curve without the linear interpolation that Davis & Goadrich (2006) warn
  against; K > 2: the macro mean of each class's one-vs-rest AP (scikit-learn's ``average_precision_score``
  on a multi-class ``y_true``). Precision moves with the mix: not Condition 1. From the bins, a bin of one
  repeated score is one threshold (tied scores enter together, as scikit-learn has them); a bin that holds
  distinct scores (``ScoreTally.distinct``, the fifth part of a tally) is read in random order: the i-th of its P
  positives has, in expectation, ``i·Q/(P + 1)`` of its Q negatives ahead, and reads the precision at that count
  (``window_score_loop.random_order_share``; Davis & Goadrich's interpolation between the bin's two edges would
  put ``i·Q/P`` ahead, the last positive behind every negative: lower, and 4× the error). Tied, each positive of
  such a bin reads the precision at the bin's lower edge, every negative of the bin ahead of it, which read
  continuous scores crowded into few bins (a weak model's, a rare class's) low by up to ~0.01; in random order,
  within 0.0008 on average (``examples/bench_ap_crowded.py``).

Undefined is NaN: a binary AUC with no positives or no negatives, an AP with no positives. At K > 2 the
macro means run over the classes (pairs) that are defined — a class absent from the window is left out,
as the recall-based indices leave it out — and read NaN when none is.

>>> from streammon.metrics.score_bins import tally
>>> t = tally(np.array([0, 0, 0, 1, 1]), np.array([0.1, 0.4, 0.8, 0.35, 0.9]), 2)
>>> roc_auc(t), average_precision(t)  # scikit-learn: 0.6666666666666667, 0.75
(0.6666666666666666, 0.75)
>>> roc_auc(t, priors=[0.5, 0.5]) == roc_auc(t)  # Condition 1
True
>>> roc_auc_bin_error(t)
0.0
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.confusion import FloatArray
from streammon.metrics.exact_ranking import AP, AUC
from streammon.metrics.intervals import DEFAULT_CONFIDENCE
from streammon.metrics.ranked_counts import ap_of_counts, auc_of_counts
from streammon.metrics.score_input import ScoreRead

MULTI_CLASS = ("ovo", "ovr")


def _mean(values: list[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return math.fsum(kept) / len(kept) if kept else math.nan


def _multi_class(value: Any) -> str:
    if value not in MULTI_CLASS:
        raise ValueError(f"multi_class must be one of {MULTI_CLASS}, got {value!r}")
    return str(value)


Ranked = tuple[FloatArray, FloatArray, npt.NDArray[np.bool_] | None, npt.NDArray[np.int64] | None]


def _one_vs_rest(read: ScoreRead, c: int) -> Ranked:
    """Class c's weighted counts of its own score and the other classes' pooled ones, in score order, with the
    random-order flags and bins of ``ScoreRead.ranked``."""
    h, mixed, where = read.ranked(c)
    weighted = h * read.weights[:, None]
    return weighted[c], weighted.sum(axis=0) - weighted[c], mixed, where


def _binary(read: ScoreRead, positive: int) -> Ranked:
    h, mixed, where = read.ranked(read.column(positive))
    column = h * read.weights[:, None]
    return column[positive], column[1 - positive], mixed, where


def _exact(read: ScoreRead, positive: int, multi_class: str, metric: int) -> tuple[float, float]:
    """The value from the tally's exact samples, with a bin error of 0 (NaN where the value is)."""
    assert read.samples is not None
    value = float(read.samples.values(read.weights[None], positive=positive, ovo=multi_class == "ovo")[0][0, metric])
    return value, math.nan if math.isnan(value) else 0.0


def _roc(read: ScoreRead, positive: Any, multi_class: str) -> tuple[float, float]:
    positive = read.positive(positive)
    if not read.defined:
        return math.nan, math.nan
    if read.samples is not None:
        return _exact(read, positive, multi_class, AUC)
    if read.binary:  # Condition 1 by construction: the weights cancel, so the raw counts serve
        column, _, where = read.ranked(read.column(positive))
        return auc_of_counts(column[positive].astype(np.float64), column[1 - positive].astype(np.float64), where)
    present = [c for c in range(read.k) if read.weights[c] * read.counts[c] > 0]
    if multi_class == "ovr":
        parts = []
        for c in present:
            pos, neg, _, where = _one_vs_rest(read, c)
            parts.append(auc_of_counts(pos, neg, where))
    else:  # Hand & Till: weights cancel within each pair, so the raw counts serve
        ranked = {c: read.ranked(c) for c in present}
        parts = []
        for a, i in enumerate(present):
            for j in present[a + 1:]:
                (hi, _, wi), (hj, _, wj) = ranked[i], ranked[j]
                (aij, eij) = auc_of_counts(hi[i].astype(np.float64), hi[j].astype(np.float64), wi)
                (aji, eji) = auc_of_counts(hj[j].astype(np.float64), hj[i].astype(np.float64), wj)
                parts.append(((aij + aji) / 2, (eij + eji) / 2))
    return _mean([p[0] for p in parts]), _mean([p[1] for p in parts])


def roc_auc(tally: Any, *, positive: int = 1, priors: Any = None, multi_class: str = "ovo") -> float:
    """ROC AUC of a window's scores (module docstring): binary about class ``positive``; K > 2 by
    ``multi_class`` (``"ovo"``: Hand & Till, the default; ``"ovr"``: macro one-vs-rest); at the class mix
    ``priors`` when given (the same value for binary and ``"ovo"``: Condition 1).

    >>> from streammon.metrics.score_bins import tally
    >>> p = np.array([[.6, .3, .1], [.2, .5, .3], [.1, .2, .7], [.5, .1, .4], [.3, .3, .4]])
    >>> t = tally(np.array([0, 1, 2, 2, 1]), p, 3)
    >>> roc_auc(t), round(roc_auc(t, multi_class="ovr"), 12)  # scikit-learn: ovo 0.9375, ovr 0.9444444444444445
    (0.9375, 0.944444444444)
    """
    return _roc(ScoreRead.of(tally, priors), positive, _multi_class(multi_class))[0]


def roc_auc_bin_error(tally: Any, *, positive: int = 1, priors: Any = None, multi_class: str = "ovo") -> float:
    """The largest amount by which the bins can move ``roc_auc`` from its value on the exact scores: ½ × the
    share of (positive, negative) pairs within one bin (averaged as ``roc_auc`` averages at K > 2); a bin split
    over the values exact scores show in it (``ScoreTally.values``) read at e of its P·Q pairs bounds max(e, P·Q −
    e), whatever the values it was split over.

    >>> from streammon.metrics.score_bins import tally
    >>> roc_auc_bin_error(tally(np.array([0, 1]), np.array([0.5, 0.5]), 2))  # one tied pair: AUC ½, exact ½
    0.5
    """
    return _roc(ScoreRead.of(tally, priors), positive, _multi_class(multi_class))[1]


def roc_auc_interval(tally: Any, *, positive: int = 1, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """DeLong's (1988) interval for a binary ROC AUC, from the bins (from the exact scores where the tally carries
    them): each positive's placement
    ``V₁₀ = P(s⁻ < s) + ½P(s⁻ = s)`` and each negative's ``V₀₁``, exact per bin (a bin's samples share one),
    ``Var = S₁₀/n⁺ + S₀₁/n⁻`` with their sample variances; normal, cut to [0, 1]. The same at every class
    mix (Condition 1). (NaN, NaN) with fewer than 2 positives or 2 negatives; K > 2 has none (the tally keeps
    each score column apart, not the joint placements DeLong's covariance needs).

    >>> from streammon.metrics.score_bins import tally
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400)
    >>> low, high = roc_auc_interval(tally(y, np.clip(0.5 + 0.2 * (y - 0.5) + rng.normal(0, 0.2, 400), 0, 1), 2))
    >>> bool(low < 0.76 < high), round(high - low, 2)
    (True, 0.09)
    """
    if not (isinstance(confidence, float) and 0 < confidence < 1):
        raise ValueError(f"confidence must be a float in (0, 1), got {confidence!r}")
    read = ScoreRead.of(tally)
    if not read.binary:
        raise ValueError(f"roc_auc_interval is binary-only (DeLong needs joint placements), got K={read.k}")
    positive = read.positive(positive)
    pos, neg, _, _ = _binary(read, positive)
    npos, nneg = float(pos.sum()), float(neg.sum())
    if npos < 2 or nneg < 2:
        return math.nan, math.nan
    if read.samples is not None:  # the exact scores' placements
        values, variance = read.samples.values(np.ones((1, 2)), positive=positive)
        spread = NormalDist().inv_cdf(0.5 + confidence / 2) * math.sqrt(variance)
        return max(0.0, float(values[0, AUC]) - spread), min(1.0, float(values[0, AUC]) + spread)
    auc = auc_of_counts(pos, neg)[0]
    v10 = (np.cumsum(neg) - 0.5 * neg) / nneg  # a positive's share of negatives below (ties ½)
    v01 = (npos - np.cumsum(pos) + 0.5 * pos) / npos  # a negative's share of positives above (ties ½)
    var = float(pos @ (v10 - auc) ** 2) / (npos - 1) / npos + float(neg @ (v01 - auc) ** 2) / (nneg - 1) / nneg
    spread = NormalDist().inv_cdf(0.5 + confidence / 2) * math.sqrt(var)
    return max(0.0, auc - spread), min(1.0, auc + spread)


def _average_precision(tally: Any, positive: Any, priors: Any, bound: bool) -> tuple[float, float]:
    read = ScoreRead.of(tally, priors)
    positive = read.positive(positive)
    if not read.defined:
        return math.nan, math.nan
    if read.samples is not None:
        return _exact(read, positive, "ovo", AP)
    if read.binary:
        pos, neg, mixed, where = _binary(read, positive)
        return ap_of_counts(pos, neg, float(read.weights[positive]), bound=bound, distinct=mixed, where=where)
    parts = []
    for c in range(read.k):
        if read.weights[c] * read.counts[c] > 0:
            pos, neg, mixed, where = _one_vs_rest(read, c)
            parts.append(ap_of_counts(pos, neg, float(read.weights[c]), bound=bound, distinct=mixed, where=where))
    return _mean([p[0] for p in parts]), _mean([p[1] for p in parts])


def average_precision(tally: Any, *, positive: int = 1, priors: Any = None) -> float:
    """Average precision of a window's scores (module docstring): binary about class ``positive``; K > 2 the
    macro one-vs-rest mean; at the class mix ``priors`` when given.

    >>> from streammon.metrics.score_bins import tally
    >>> t = tally(np.array([0, 0, 1, 1]), np.array([0.1, 0.6, 0.6, 0.9]), 2)
    >>> average_precision(t)  # tied at 0.6: one threshold, sklearn's 0.8333333333333333
    0.8333333333333333
    """
    return _average_precision(tally, positive, priors, False)[0]


def average_precision_bin_error(tally: Any, *, positive: int = 1, priors: Any = None) -> float:
    """The largest amount by which the bins can move ``average_precision`` from its value on the exact
    (distinct) scores: per bin, the tied value against the best and the worst order of the bin's samples
    (``ranked_counts.ap_of_counts``); averaged as ``average_precision`` averages at K > 2. Unlike ROC AUC's,
    it is not 0 when no positive shares a bin with a negative: tied positives share one precision, distinct ones
    do not. A worst case: on real data the error is usually far smaller (``examples/bench_score_metrics.py``).

    >>> from streammon.metrics.score_bins import tally
    >>> t = tally(np.array([0, 1]), np.array([0.5, 0.5]), 2)  # tied: AP ½; exact: 1 or ½ by the order
    >>> average_precision(t), average_precision_bin_error(t)
    (0.5, 0.5)
    """
    return _average_precision(tally, positive, priors, True)[1]


def average_precision_interval(tally: Any, *, positive: int = 1, confidence: float = DEFAULT_CONFIDENCE,
                               draws: int = 400) -> tuple[float, float]:
    """A stratified bootstrap interval for a binary average precision, from the bins (always: a bootstrap of a
    window's few exact samples would resample their ties, not remove the bins' error): ``draws`` resamples of
    each class's bins (multinomial at the window's class counts; a fixed seed, so a report is reproducible),
    the AP of each (its bins of distinct scores in random order where the tally says which: ``distinct``), and
    the central ``confidence`` share of them. Simulated coverage of the population AP at
    95 %: 0.95 with 200 positives, 0.92 with 60 (AP's small-sample bias; ``tests/test_score_metrics.py``).
    (NaN, NaN) with fewer than 2 positives or no negative; binary only, as ``roc_auc_interval``.

    >>> from streammon.metrics.score_bins import tally
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400)
    >>> t = tally(y, 1 / (1 + np.exp(-(rng.normal(size=400) + 1.5 * y))), 2)
    >>> low, high = average_precision_interval(t)
    >>> bool(low < average_precision(t) < high), round(high - low, 2)
    (True, 0.07)
    """
    if not (isinstance(confidence, float) and 0 < confidence < 1):
        raise ValueError(f"confidence must be a float in (0, 1), got {confidence!r}")
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 2:
        raise ValueError(f"draws must be an int >= 2, got {draws!r}")
    read = ScoreRead.of(tally)
    if not read.binary:
        raise ValueError(f"average_precision_interval is binary-only, got K={read.k}")
    positive = read.positive(positive)
    column = read.hist[:, read.column(positive), :].astype(np.float64)
    pos, neg = column[positive], column[1 - positive]
    npos, nneg = int(pos.sum()), int(neg.sum())
    if npos < 2 or nneg < 1:
        return math.nan, math.nan
    rng = np.random.default_rng(0)
    p = rng.multinomial(npos, pos / npos, size=draws)[:, ::-1].astype(np.float64)
    q = rng.multinomial(nneg, neg / nneg, size=draws)[:, ::-1].astype(np.float64)
    _, mixed, where = read.ranked(read.column(positive))
    if where is not None:  # each resample's bins split over the values as the point value's are
        assert read.values is not None
        unit, _, _, _ = read.values.atoms(np.ones((2, 1, len(pos)), np.int64), columns=(read.column(positive),))
        share_p, share_q = unit[positive, 0, :len(where)], unit[1 - positive, 0, :len(where)]
        p, q = p[:, ::-1][:, where] * share_p, q[:, ::-1][:, where] * share_q
        aps = np.array([ap_of_counts(p[d], q[d], distinct=mixed)[0] for d in range(draws)])
    elif mixed is None:
        tp, fp = np.cumsum(p, axis=1), np.cumsum(q, axis=1)
        aps = np.minimum((p * (tp / np.where(tp + fp > 0, tp + fp, 1.0))).sum(axis=1) / npos, 1.0)
    else:  # each resample read as the point value is: its bins of distinct scores in random order
        aps = np.array([ap_of_counts(p[d, ::-1], q[d, ::-1], distinct=mixed)[0] for d in range(draws)])
    tail = (1 - confidence) / 2
    low, high = np.quantile(aps, [tail, 1 - tail])
    return float(low), float(high)
