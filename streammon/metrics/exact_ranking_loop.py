"""The compiled pass of ``streammon.metrics.exact_ranking``: each score column's samples put in ascending order, then
one walk down the column's tie groups, then every mix's ROC AUC and average precision — in one call (pure; imported
on first use, as ``window_score_loop``: it imports numba).

The order is a bucket sort, not numpy's argsort: scores in [0, 1] are non-negative floats, whose bit patterns read
as integers rise with the value, so the top bits of ``bits − min`` (a shift that leaves at most ``BUCKETS``
buckets) are a monotone key; a counting sort on it, then an insertion sort that only reorders samples sharing a
bucket, gives the exact ascending order. At K = 10, 1,000 samples: ~45 µs for the ten columns where numpy's
argsort took ~240 µs (numba's ~570). A column whose buckets are crowded (scores packed far closer than the rest of
the column: the insertion sort would cost more than ``CROWDED`` steps a sample) takes numba's argsort instead.
Ties are read as whole groups of equal scores, so the order within a group does not matter.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from streammon.metrics import window_score_loop
from streammon.metrics.jitting import compiled, fingerprint
from streammon.metrics.window_score_loop import _macro

BUCKETS = 2048  # the counting sort's buckets a column (at most)
CROWDED = 16  # a column whose buckets hold more than this many pairs of samples a sample is argsorted instead


def inlined(function: Any) -> Any:
    """A helper of the walk compiled into its caller (numba's ``inline="always"``): called once a tie group, as a
    function of its own it cost the exact reading half as much again (K = 10, 1,000 samples)."""
    return compiled(function, inline="always")


@compiled
def _ascending(col: Any, order: Any, key: Any, starts: Any) -> None:
    """``order`` = the positions of ``col`` (n,) by ascending value (``key`` (n,) and ``starts`` (BUCKETS + 1,)
    scratch): a counting sort on the top bits of each score's bit pattern above the column's least, then an
    insertion sort within the buckets."""
    n = col.shape[0]
    bits = col.view(np.int64)
    lo = bits.min()
    span = bits.max() - lo
    shift = 0
    while (span >> shift) >= BUCKETS:
        shift += 1
    starts[:] = 0
    for p in range(n):
        b = (bits[p] - lo) >> shift
        key[p] = b
        starts[b + 1] += 1
    crowd = 0
    for b in range(BUCKETS):
        crowd += starts[b + 1] * starts[b + 1]
        starts[b + 1] += starts[b]
    if crowd > CROWDED * n:  # the insertion sort would be long: numba's argsort, O(n log n) whatever the scores
        order[:] = np.argsort(col)
        return
    for p in range(n):
        b = key[p]
        order[starts[b]] = p
        starts[b] += 1
    for i in range(1, n):  # only samples of one bucket are out of order, each bucket's kept in sample order
        x = order[i]
        value = col[x]
        j = i - 1
        while j >= 0 and col[order[j]] > value:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = x


@inlined
def _group(values: Any, classes: Any, hi: int, mine: int, weights: Any,  # noqa: PLR0917
           inside: Any) -> tuple[int, int]:
    """The tie group that ends at sorted position ``hi`` (the equal scores): its first position, its samples of
    class ``mine``, and each row's weight of its samples into ``inside`` (V,)."""
    value = values[hi]
    lo = hi
    while lo > 0 and values[lo - 1] == value:
        lo -= 1
    if lo == hi:  # a score of one sample (the usual group)
        t = classes[hi]
        for v in range(weights.shape[0]):
            inside[v] = weights[v, t]
        return lo, 1 if t == mine else 0
    own_in = 0
    inside[:] = 0.0
    for p in range(lo, hi + 1):
        t = classes[p]
        own_in += t == mine
        for v in range(weights.shape[0]):
            inside[v] += weights[v, t]
    return lo, own_in


@inlined
def _delong(squares: Any, own_in: int, others_in: int, share: float, others_above: int,  # noqa: PLR0917
            n_own: int, n_other: int) -> None:
    """Add a tie group's DeLong placements squared: each own sample's share of the others below it, each other
    sample's share of the own samples above it (``share``: those above plus half the group's; ties ½)."""
    if own_in and n_other:
        below = (n_other - others_above - 0.5 * others_in) / n_other
        squares[0] += own_in * below * below
    if others_in and n_own:
        over = share / n_own
        squares[1] += others_in * over * over


@compiled
def _walk(values: Any, classes: Any, mine: int, weights: Any, delong: bool, numer: Any,  # noqa: PLR0917
          precision: Any, squares: Any) -> None:
    """One column, its samples' scores ``values`` ascending with their classes ``classes``, walked by tie group from
    the top score down:

    - ``numer[j] += (own samples above) + ½ (own samples in the group)`` for each sample of class j in the group:
      the pairs (own, j) ordered own above j, ties ½;
    - ``precision[v] += m·w_own·(own at or above)/(weight at or above)`` for the group's m own samples, at each
      row v of ``weights`` (V, K): the sum of the precisions at the own samples' scores;
    - ``delong``: DeLong's placements squared into ``squares`` (``_delong``).
    """
    n = values.shape[0]
    n_own = 0
    for p in range(n):
        n_own += classes[p] == mine
    inside = np.empty(weights.shape[0])
    above = np.zeros(weights.shape[0])
    own_above = 0
    others_above = 0
    hi = n - 1
    while hi >= 0:
        lo, own_in = _group(values, classes, hi, mine, weights, inside)
        share = own_above + 0.5 * own_in
        for p in range(lo, hi + 1):
            numer[classes[p]] += share
        for v in range(weights.shape[0]):
            held = above[v] + inside[v]
            if own_in and held > 0.0:
                precision[v] += own_in * weights[v, mine] * (own_above + own_in) / held
            above[v] = held
        others_in = hi - lo + 1 - own_in
        if delong:
            _delong(squares, own_in, others_in, share, others_above, n_own, n - n_own)
        others_above += others_in
        own_above += own_in
        hi = lo - 1


@compiled
def _usable(true: Any, weights: Any, counts: Any, usable: Any, defined: Any) -> None:
    """Each class's samples into ``counts``; the weights with NaN as 0 into ``usable``; whether each row reads
    anything into ``defined`` (every weight a number, some weighted sample)."""
    for p in range(true.shape[0]):
        counts[true[p]] += 1.0
    for v in range(weights.shape[0]):
        ok = True
        mass = 0.0
        for c in range(weights.shape[1]):
            x = weights[v, c]
            if math.isnan(x):
                ok = False
                x = 0.0
            usable[v, c] = x
            mass += x * counts[c]
        defined[v] = ok and mass > 0.0


@compiled
def _binary(counts: Any, defined: Any, numer: Any, precision: Any, squares: Any, positive: int,  # noqa: PLR0917
            out: Any, delong: Any) -> None:
    """K = 2: the Mann–Whitney AUC, each row's AP and DeLong's variance from the binary column's sums."""
    negative = 1 - positive
    npos, nneg = counts[positive], counts[negative]
    auc = numer[negative] / (npos * nneg) if npos > 0 and nneg > 0 else math.nan
    for v in range(out.shape[0]):
        if defined[v]:
            out[v, 0] = auc
            out[v, 1] = precision[v] / npos if npos > 0 else math.nan
    if npos < 2 or nneg < 2:
        return
    s10 = (squares[0] - npos * auc * auc) / (npos - 1)
    s01 = (squares[1] - nneg * auc * auc) / (nneg - 1)
    delong[0] = max(s10, 0.0) / npos + max(s01, 0.0) / nneg


def _reaching(reaches: str) -> Any:
    """``ranking_values`` compiled as a closure over ``reaches``, the fingerprint of ``window_score_loop`` whose
    ``_macro`` it calls: its machine code holds ``_macro``'s, so numba's cache must know that file (the rule of
    ``streammon.metrics.jitting``)."""

    @compiled
    def ranking_values(true: Any, scores: Any, own: Any, weights: Any,  # noqa: PLR0917
                       binary_column: int, positive: int, ovo: bool, out: Any, delong: Any) -> None:
        """``out[v]`` = (ROC AUC, average precision) of the samples ``true`` (n,) in [0, K), ``scores`` (n, C)
        (column c the scores of class ``own[c]``) at each row v of ``weights`` (V, K: each class's sample weight; a
        row with a NaN weight or no weighted sample stays NaN); K = 2: about ``positive``, from column
        ``binary_column``, with DeLong's variance of the AUC into ``delong[0]`` (NaN with fewer than 2 samples of a
        class). K > 2: Hand & Till's M (``ovo``) or the macro one-vs-rest AUC, and the macro one-vs-rest AP
        (``window_score_loop._macro``)."""
        reaches  # noqa: B018 - closed over, so numba's cache key holds window_score_loop's fingerprint
        n, columns = scores.shape
        views, k = weights.shape
        counts = np.zeros(k)
        usable = np.empty((views, k))
        defined = np.empty(views, np.bool_)
        _usable(true, weights, counts, usable, defined)
        numer = np.zeros((columns, k))
        precision = np.zeros((columns, views))
        squares = np.zeros(2)
        col = np.empty(n)
        order = np.empty(n, np.intp)
        key = np.empty(n, np.int64)
        starts = np.empty(BUCKETS + 1, np.int64)
        values = np.empty(n)
        classes = np.empty(n, np.intp)
        for c in range(columns):
            if k == 2 and c != binary_column:
                continue
            for p in range(n):
                col[p] = scores[p, c] + 0.0  # -0.0 becomes 0.0: the same score, the bit pattern of the least
            _ascending(col, order, key, starts)
            for p in range(n):
                values[p] = col[order[p]]
                classes[p] = true[order[p]]
            _walk(values, classes, own[c], usable, c == binary_column, numer[c], precision[c], squares)
        if k == 2:
            _binary(counts, defined, numer[binary_column], precision[binary_column], squares, positive, out, delong)
            return
        aps = np.full((views, k), math.nan)
        for v in range(views):
            for c in range(k):
                if counts[c] > 0:
                    aps[v, c] = precision[c, v] / counts[c]
        _macro(usable, defined, counts, numer, aps, ovo, out)

    return ranking_values


ranking_values = _reaching(fingerprint(window_score_loop))
