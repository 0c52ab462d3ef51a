"""The compiled pass of ``streammon.metrics.exact_ranking``: one walk down each score column's sorted samples,
tie group by tie group (pure; imported on first use, as ``window_score_loop``: it imports numba).

Done with numpy the same sums took some thirty array operations over (n, C) arrays (~1.2 ms at K = 10, 1,000
samples, two mixes, on a loaded machine); here they take one pass of O(n·(1 + V)) per column after numpy's
argsort, which is most of what remains.
"""

from __future__ import annotations

from typing import Any

from streammon.metrics.jitting import compiled


@compiled
def _group(true: Any, order: Any, scores: Any, c: int, hi: int) -> int:
    """The first sorted position of the group of equal column-c scores that ends at position ``hi``."""
    value = scores[c, order[c, hi]]
    lo = hi
    while lo > 0 and scores[c, order[c, lo - 1]] == value:
        lo -= 1
    return lo


@compiled
def _delong(squares: Any, own_in: int, others_in: int, own_share: float, others_above: int,  # noqa: PLR0917
            n_own: int, n_other: int) -> None:
    """Add a tie group's DeLong placements squared: each own sample's share of the others below it, each other
    sample's share of the own samples above it (ties ½)."""
    if own_in and n_other:
        below = (n_other - others_above - 0.5 * others_in) / n_other
        squares[0] += own_in * below * below
    if others_in and n_own:
        over = own_share / n_own
        squares[1] += others_in * over * over


@compiled
def ranking_pass(true: Any, order: Any, scores: Any, own: Any, weights: Any, binary_column: int,  # noqa: PLR0917
                 numer: Any, precision: Any, squares: Any) -> None:
    """For each column c (``scores[c]`` its scores, ``order[c]`` its samples by ascending score, ``own[c]`` its own
    class), walking the
    tie groups from the top score down:

    - ``numer[c, j] += (own samples above) + ½ (own samples in the group)`` for each sample of class j in the
      group: the pairs (own, j) ordered own above j, ties ½;
    - ``precision[v, c] += m·w_own·(own at or above)/(weight at or above)`` for the group's m own samples, at each
      row v of ``weights`` (V, K): the sum of the precisions at the own samples' scores;
    - at ``binary_column`` (else -1), DeLong's placements squared into ``squares`` (``_delong``).
    """
    columns, n = order.shape
    views = weights.shape[0]
    inside = weights[:, 0].copy()
    above = weights[:, 0].copy()
    for c in range(columns):
        mine = own[c]
        n_own = 0
        for p in range(n):
            n_own += true[p] == mine
        own_above = 0
        others_above = 0
        above[:] = 0.0
        hi = n - 1
        while hi >= 0:
            lo = _group(true, order, scores, c, hi)
            own_in = 0
            inside[:] = 0.0
            for p in range(lo, hi + 1):
                t = true[order[c, p]]
                own_in += t == mine
                for v in range(views):
                    inside[v] += weights[v, t]
            share = own_above + 0.5 * own_in
            for p in range(lo, hi + 1):
                numer[c, true[order[c, p]]] += share
            for v in range(views):
                held = above[v] + inside[v]
                if own_in and held > 0.0:
                    precision[v, c] += own_in * weights[v, mine] * (own_above + own_in) / held
                above[v] = held
            others_in = hi - lo + 1 - own_in
            if c == binary_column:
                _delong(squares, own_in, others_in, share, others_above, n_own, n - n_own)
            others_above += others_in
            own_above += own_in
            hi = lo - 1
