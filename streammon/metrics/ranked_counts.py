"""ROC AUC and average precision of weighted counts in score order, with their bin-error bounds (pure): what
``score_ranking`` reads a window's bins — or the atoms its bins split into (``bin_values``) — with.

The counts are one score column's, per bin (or per value of a split bin), ascending; ``where`` gives each
count's bin where they are split values, so that the bounds stay the bins' (``score_ranking``'s docstring: a bin
read at any order of its samples).

>>> auc_of_counts(np.array([0.0, 1.0, 1.0]), np.array([1.0, 1.0, 0.0]))  # one tied pair of four: ½ × ¼ bound
(0.875, 0.125)
>>> ap_of_counts(np.array([0.0, 1.0]), np.array([1.0, 0.0]))[0]
1.0
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from streammon.metrics.confusion import FloatArray
from streammon.metrics.intervals import _digamma_trigamma
from streammon.metrics.window_scores import loop


def auc_of_counts(pos: FloatArray, neg: FloatArray, where: npt.NDArray[np.int64] | None = None) -> tuple[float, float]:
    """(AUC, bin error bound) of weighted counts in ascending score order; NaN without pairs. ``where``: each
    count's bin, where they are a bin's split values (``ScoreRead.ranked``): a bin's pairs are then read at
    ``e`` of its ``P·Q``, and its exact share lies anywhere in ``[0, P·Q]``, so it bounds ``max(e, P·Q − e)`` (``½
    P·Q`` for a bin read tied, as without ``where``)."""
    npos, nneg = float(pos.sum()), float(neg.sum())
    if not (npos > 0 and nneg > 0):
        return math.nan, math.nan
    below = np.cumsum(neg) - neg  # negatives in lower bins
    pairs = npos * nneg
    auc = float(pos @ (below + 0.5 * neg)) / pairs
    if where is None:
        return auc, 0.5 * float(pos @ neg) / pairs
    first = np.searchsorted(where, where)  # each count's bin's first: the bins' counts are contiguous, ascending
    inside = pos * (below - below[first] + 0.5 * neg)  # its pairs with negatives of its own bin, ties ½
    size = int(where[-1]) + 1 if len(where) else 0
    read, p, q = (np.bincount(where, weights=x, minlength=size) for x in (inside, pos, neg))
    return auc, float(np.maximum(read, p * q - read).sum()) / pairs


def ap_of_counts(pos: FloatArray, neg: FloatArray, weight: float = 1.0, *, bound: bool = False,
        distinct: npt.NDArray[np.bool_] | None = None, where: npt.NDArray[np.int64] | None = None,
        ) -> tuple[float, float]:
    """(AP, bin error bound) of bin counts in ascending score order, positives each of ``weight`` (``pos`` is
    already weighted); NaN without positives. ``distinct``: the bins (same order) whose samples hold distinct
    scores, read in random order (``window_score_loop.random_order_share``); the others are read tied.

    The bound: T and F the positive and negative weight above a bin, P and Q the bin's own. However the exact
    scores order (or tie) the bin's samples, the positive that is i-th in the bin has a precision of at least
    ``(T + a·i)/(T + F + Q + a·i)`` (all the bin's negatives ahead of it) and at most ``(T + P)/(T + F + P)``
    (every positive of the bin tied with it, no negative ahead); so the bin's share of the exact AP lies
    between ``worst = Σ_i a·(T + a·i)/(T + F + Q + a·i)`` — a digamma difference, ``Σ_{i=1..p} (T + a·i)/(D +
    a·i) = p − (D − T)/a · (ψ(D/a + p + 1) − ψ(D/a + 1))`` — and ``P·(T + P)/(T + F + P)``, and the tied
    value the bins give is at most the larger distance to either end away. ``where``: each count's bin, where they
    are a bin's split values (``ScoreRead.ranked``): the bound is the bins', each bin's estimate the sum of its
    values' terms."""
    npos = float(pos.sum())
    if not npos > 0:
        return math.nan, math.nan
    p, q = pos[::-1], neg[::-1]
    tp, fp = np.cumsum(p), np.cumsum(q)
    precision = tp / np.where(tp + fp > 0, tp + fp, 1.0)
    mixed = None if distinct is None else np.flatnonzero(distinct[::-1] & (p > 0))
    terms = p * precision
    if mixed is not None and len(mixed):
        terms[mixed] = _random_order(tp - p, tp + fp - p - q, p / weight, weight, q, mixed)
    ap = min(float(terms.sum()) / npos, 1.0)  # each term is at most p: over 1 only by rounding
    if not bound:  # the bound costs a digamma pass: only when asked
        return ap, math.nan
    if where is not None:  # the bins' bound: each bin's values summed (contiguous, descending here)
        down = where[::-1]
        first = np.flatnonzero(np.r_[True, down[1:] != down[:-1]])
        terms, p, q = (np.add.reduceat(x, first) for x in (terms, p, q))
        tp, fp = np.cumsum(p), np.cumsum(q)
    kept = p > 0
    estimate = terms[kept]
    p, q, above_t, above_f = p[kept], q[kept], (tp - p)[kept], (fp - q)[kept]
    count = p / weight
    best = p * (above_t + p) / (above_t + above_f + p)
    before = above_t + above_f + q
    psi = _digamma_trigamma(np.stack([before / weight + count + 1.0, before / weight + 1.0]))[0]
    worst = weight * (count - (before - above_t) / weight * (psi[0] - psi[1]))
    return ap, float(np.maximum(best - estimate, estimate - worst).clip(min=0.0).sum()) / npos


def _random_order(above_pos: FloatArray, above: FloatArray, counts: FloatArray, weight: float,  # noqa: PLR0917
                  negatives: FloatArray, where: npt.NDArray[np.intp]) -> FloatArray:
    """``random_order_share`` of the bins ``where`` (the compiled loop's own function: the same value as a report)."""
    out = np.empty(len(where))
    loop().random_order_shares(np.ascontiguousarray(above_pos[where]), np.ascontiguousarray(above[where]),
                               np.rint(counts[where]), float(weight), np.ascontiguousarray(negatives[where]), out)
    return out
