"""Which bins of a score histogram hold distinct scores, as a sample of exact scores shows them (pure).

A window past the exact limit reads its average precision from its bins (``streammon.metrics.score_ranking``): a
bin of one repeated score as one threshold (tied, as scikit-learn ties equal scores), a bin of distinct scores in
random order. The window keeps counts only; the monitor's last exact scores (``streammon.counting.exact_scores``)
or a batch's own samples (``ScoreTally.of``) tell the two apart. Compiled on first use
(``streammon.metrics.jitting``); its loop calls nothing of another file (numba's disk cache).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.jitting import compiled
from streammon.metrics.score_bins import BINS, score_bins  # noqa: F401 - score_bins: the doctest's


@compiled
def _distinct_bins(bins: Any, scores: Any, firsts: Any, seen: Any, out: Any) -> None:  # pragma: no cover
    """``distinct_bins`` into ``out`` (C, BINS) bool, with scratch arrays of that shape: ``seen`` (int8, zeros)
    counts each bin's samples up to 2, ``firsts`` (any values) holds the first one's score."""
    n, columns = scores.shape
    for i in range(n):
        for c in range(columns):
            g = bins[i, c]
            s = scores[i, c]
            k = seen[c, g]
            if k == 0:
                firsts[c, g] = s
                seen[c, g] = 1
            else:
                if s != firsts[c, g]:
                    out[c, g] = True
                if k == 1:
                    seen[c, g] = 2
    for c in range(columns):
        shown = 0
        differ = 0
        for g in range(out.shape[1]):
            if seen[c, g] == 2:
                shown += 1
                if out[c, g]:
                    differ += 1
        majority = 2 * differ > shown or shown == 0
        for g in range(out.shape[1]):
            if seen[c, g] < 2:
                out[c, g] = majority


def distinct_bins(bins: npt.NDArray[np.int16], scores: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """(C, BINS) bool: the bins whose samples hold distinct scores, as far as ``scores`` (n, C, every row scored)
    and their ``bins`` show. A bin where they show two samples or more is distinct if two of its scores differ;
    elsewhere (one sample or none) it takes its column's majority among the bins that show two or more — a model
    whose scores are continuous puts distinct values in a shared bin, one whose scores take few values (k-NN,
    trees, rounding) repeats them — and is distinct if none shows two (``score_ranking``: random order there).
    One compiled pass (~3 ns a score).

    >>> s = np.array([[0.3], [0.3], [0.5], [0.5001], [0.9]])
    >>> bins = score_bins(s).astype(np.int16)
    >>> flags = distinct_bins(bins, s)
    >>> [bool(flags[0, b]) for b in bins[:, 0]]  # 0.9: alone, the column's majority (1 of 2: tied)
    [False, False, True, True, False]
    """
    columns = scores.shape[1]
    out = np.zeros((columns, BINS), np.bool_)
    _distinct_bins(np.ascontiguousarray(bins), np.ascontiguousarray(scores, dtype=np.float64),
                   np.empty((columns, BINS)), np.zeros((columns, BINS), np.int8), out)
    return out
