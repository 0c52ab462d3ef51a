"""The exact score values a sample shows inside each histogram bin, per true class, and a window's bins split over
them (pure): how a window past the exact limit orders what its bins alone cannot.

A window of more than 2,048 scored samples keeps counts per logit bin only. A model with few distinct scores
(trees, boosting on small data, rounding) can put distinct values of *different classes* in one bin — iris ×
gradient boosting puts class 0's 0.0019149 and class 2's 0.0019148 in one — and no reading of the bin's counts
can order them: read tied, its ROC AUC missed scikit-learn's by 0.009. The monitor's last 2,048 exact labelled
scores (``streammon.counting.exact_scores``) show which values a bin holds and how often each class takes each.

``bin_values`` prepares that once per sample: for each column and each bin the sample shows holding **repeated
distinct values** (two samples or more, at least two values, some value seen twice: a few-valued model's bin), the
share of each class's samples at each value — a class the sample shows in the bin by its own counts; a class it
does not show there by the bin's samples of every class (measured against spreading it evenly over the values:
never worse, up to 10x better on digits × naive Bayes' ROC AUC). A window's count of class k in such a bin is
split over the values by those shares (fractional counts), in value order, and ROC AUC and average precision read
them as scikit-learn reads distinct scores, ties only at one value — the report's compiled loop value by value
inside such a bin (``window_score_loop``), the per-metric functions over the "atoms" ``expand`` makes (one per
value of a split bin, one per other bin). Every other bin is one atom, read as before (``distinct_bins``' flag:
tied, or in random order for average precision): a bin the sample shows with one value (tied: it is one value),
with distinct values each seen once (a continuous model's: the sample's few values are a noisy sample of the order
— measured, the random-order reading is 1.3–3.6x closer), or with fewer than two samples. With ``complete`` (the
sample is the whole window) every bin of distinct values is split — exact.

What it assumes: the sample's scores look like the window's inside each bin (the same model, the same data). A
model swapped mid-window leaves the sample showing the new model's values while the window counts both; its
reading is then only as good as that resemblance (``docs/reference/metrics.md``). Compiled on first use
(``streammon.metrics.jitting``); its loops call nothing of another file (numba's disk cache).

>>> from streammon.metrics.score_bins import score_bins
>>> s = np.array([[0.30], [0.30], [0.3001], [0.3001], [0.9]])  # one bin: 0.30 twice (class 0), 0.3001 twice (1)
>>> v = bin_values(score_bins(s).astype(np.int16), s, np.array([0, 0, 1, 1, 1]), 2)
>>> b = int(score_bins(s)[0, 0]); v.starts[0, b + 1] - v.starts[0, b], v.shares[0, :, :2].tolist()
(np.int64(2), [[1.0, 0.0], [0.0, 1.0]])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.bin_sort import sorted_by_bin
from streammon.metrics.distinct_bins import distinct_bins
from streammon.metrics.jitting import compiled
from streammon.metrics.score_bins import BINS


def jit(function: Any) -> Any:
    """A loop of this module compiled (``streammon.metrics.jitting``)."""
    return compiled(function, error_model="numpy")


@jit
def _repeated(scores: Any, table: Any, out: Any) -> None:  # pragma: no cover - compiled
    """``out[c]``: whether column c of ``scores`` (n, C) takes some value twice — one pass through a small
    open-addressing table (``table``: scratch, a power of two above 2n; Fibonacci hashing), so a continuous
    model's ring, which repeats nothing and splits no bin, is never sorted (~5 ns a score)."""
    n, columns = scores.shape
    mask = table.shape[0] - 1
    bits = 0
    while (1 << bits) < table.shape[0]:
        bits += 1
    shift = np.uint64(64 - bits)  # the product's top ``bits`` bits index the table
    for c in range(columns):
        table[:] = -1
        for i in range(n):
            v = scores[i, c]
            # equal values hash alike (-0.0 too); the product's high bits: a float32 score cast to float64 has
            # its low bits zero, which the low bits of the product keep (every score one slot: 17.8 ms at K = 10)
            h = np.int64((np.uint64(v * 1099511627776.0) * np.uint64(0x9E3779B97F4A7C15)) >> shift)
            while table[h] >= 0 and scores[table[h], c] != v:
                h = (h + 1) & mask
            if table[h] >= 0:
                out[c] = True
                break
            table[h] = i


@jit
def _entries(bins: Any, scores: Any, true: Any, complete: Any, fill: bool, starts: Any,  # noqa: PLR0912, PLR0917
             shares: Any) -> None:  # pragma: no cover - compiled
    """For each column c of ``bins``/``scores``/``true`` (C, n), sorted by (bin, score) within the column (every
    bin of distinct values split where ``complete[c]``): into ``starts`` (C, bins + 1, zeros), the split values
    before each bin (cumulative) and, with ``fill``, each
    value's share of each class's samples of its bin into ``shares`` (C, K, M), values in ascending order (module
    docstring: which bins split). Called twice: to count (a continuous model's ring splits nothing), then to
    fill."""
    columns, n = bins.shape
    k = shares.shape[1]
    counts = np.zeros(k)
    for c in range(columns):
        m = 0
        i = 0
        while i < n:
            b = bins[c, i]
            j = i + 1
            values = 1
            while j < n and bins[c, j] == b:
                if scores[c, j] != scores[c, j - 1]:
                    values += 1
                j += 1
            size = j - i
            if values > 1 and (complete[c] or values < size):
                starts[c, b + 1] = values
                if fill:
                    counts[:] = 0.0
                    for t in range(i, j):
                        counts[true[c, t]] += 1.0
                    t = i
                    while t < j:
                        u = t
                        for kk in range(k):
                            shares[c, kk, m] = 0.0
                        while u < j and scores[c, u] == scores[c, t]:
                            shares[c, true[c, u], m] += 1.0
                            u += 1
                        for kk in range(k):
                            if counts[kk] > 0.0:
                                shares[c, kk, m] /= counts[kk]
                            else:  # a class the sample does not show here: spread as the bin's samples are
                                shares[c, kk, m] = (u - t) / size
                        m += 1
                        t = u
            i = j
        for b in range(starts.shape[1] - 1):
            starts[c, b + 1] += starts[c, b]


@jit
def expand(hist: Any, offset: int, span: Any, starts: Any, shares: Any, flags: Any,  # noqa: PLR0917
           atoms: Any, mixed: Any, where: Any, atom_span: Any) -> None:  # pragma: no cover - compiled
    """A window's bins as atoms: ``hist`` (K, C, W) counts of bins ``offset …``, read over each column's
    ``span[c]`` (slab bins ``[lo, hi)``); a bin with split values (``starts[c, g + 1] > starts[c, g]``, ``g`` its
    bin) becomes one atom per value, class k's count times its share; any other bin one atom, its counts, read in
    random order where ``flags[c, g]``. Into ``atoms`` (K, C, A) float64, ``mixed`` (C, A) bool (the atom's
    random-order flag), ``where`` (C, A) the atom's bin, ``atom_span`` (C, 2): column c's atoms are ``[0, hi)``."""
    k, columns, _ = hist.shape
    for c in range(columns):
        a = 0
        for b in range(span[c, 0], span[c, 1]):
            g = offset + b
            lo, hi = starts[c, g], starts[c, g + 1]
            if hi > lo:
                for _ in range(lo, hi):
                    mixed[c, a] = False
                    where[c, a] = g
                    a += 1
            else:
                mixed[c, a] = flags[c, g]
                where[c, a] = g
                a += 1
        atom_span[c, 0] = 0
        atom_span[c, 1] = a
        for kk in range(k):  # class by class: the counts of a row are contiguous
            a = 0
            for b in range(span[c, 0], span[c, 1]):
                g = offset + b
                lo, hi = starts[c, g], starts[c, g + 1]
                h = hist[kk, c, b]
                if hi > lo:
                    for m in range(lo, hi):
                        atoms[kk, c, a] = h * shares[c, kk, m]
                        a += 1
                else:
                    atoms[kk, c, a] = h
                    a += 1


@dataclass(frozen=True, eq=False)
class BinValues:
    """What a sample of exact scores shows inside the bins (module docstring), read-only: ``flags`` (C, BINS) bool,
    the bins read in random order when not split (``distinct_bins``); ``starts`` (C, BINS + 1) int64, bin g's split
    values are entries ``[starts[c, g], starts[c, g + 1])`` (none: not split); ``shares`` (C, K, M) float64, the
    share of class k's samples of the bin at entry m's value (each class's shares of a bin sum to 1)."""

    flags: npt.NDArray[np.bool_]
    starts: npt.NDArray[np.int64]
    shares: npt.NDArray[np.float64]

    @property
    def classes(self) -> int:
        """K: the classes the shares are given for."""
        return int(self.shares.shape[1])

    @property
    def split(self) -> int:
        """The split values of the column that has most (0: every bin is read as before)."""
        return int(self.starts[:, -1].max())

    def atoms(self, hist: npt.NDArray[Any], offset: int = 0, span: npt.NDArray[np.int64] | None = None, *,
              columns: tuple[int, ...] | None = None,
              ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """``expand`` of ``hist`` (K, C, W) from bin ``offset`` over ``span`` (C, 2; None: every slab bin):
        ``(atoms, mixed, where, atom_span)``. ``hist`` has at most ``classes`` rows; ``columns``: the columns of
        these values that ``hist``'s are (None: the same)."""
        k, count, width = hist.shape
        if span is None:
            span = np.tile(np.array([0, width], np.int64), (count, 1))
        starts, shares, flags = self.starts, self.shares[:, :k], self.flags
        if columns is not None:
            chosen = np.asarray(columns, np.intp)
            starts, shares, flags = starts[chosen], shares[chosen], flags[chosen]
        size = width + int(starts[:, -1].max())
        atoms = np.empty((k, count, size))
        mixed = np.empty((count, size), np.bool_)
        where = np.empty((count, size), np.int64)
        atom_span = np.empty((count, 2), np.int64)
        expand(hist, int(offset), span, starts, shares, flags, atoms, mixed, where, atom_span)
        return atoms, mixed, where, atom_span


def bin_values(bins: npt.NDArray[np.int16], scores: npt.NDArray[np.float64], true: npt.NDArray[np.intp], k: int,
               *, complete: bool | npt.NDArray[np.bool_] = False, flags: npt.NDArray[np.bool_] | None = None,
               ) -> BinValues:
    """The ``BinValues`` of a sample: ``scores`` (n, C), their ``bins``, their true classes in ``[0, k)``;
    ``complete``: the sample is the whole window (every bin of distinct values split), or (C,) the columns where
    it is wanted so; ``flags``: the sample's ``distinct_bins`` if the caller has them. One pass finds the columns
    that repeat some value (a continuous model's ring repeats none: ~0.1 ms at K = 10 and done); those are sorted
    by bin and score (``bin_sort``) and read in one compiled pass, and a second fills the shares where some bin
    splits. Arrays read-only."""
    columns = scores.shape[1]
    if len(true) and not 0 <= int(np.min(true)) <= int(np.max(true)) < k:  # the compiled passes index by class
        raise ValueError(f"bin_values needs true classes in [0, {k}), got {int(np.min(true))} to {int(np.max(true))}")
    if flags is None:
        flags = distinct_bins(np.ascontiguousarray(bins), np.ascontiguousarray(scores, dtype=np.float64))
    n = len(true)
    starts = np.zeros((columns, BINS + 1), np.int64)
    shares = np.zeros((columns, k, 0))
    whole = np.broadcast_to(np.asarray(complete, np.bool_), (columns,))
    repeated = whole.copy()
    if n and not repeated.all():
        _repeated(np.asarray(scores, np.float64), np.empty(1 << (2 * n - 1).bit_length(), np.int64), repeated)
    chosen = np.flatnonzero(repeated)  # the columns that can split a bin
    if len(chosen):
        count = len(chosen)
        sb, ss, st = sorted_by_bin(bins[:, chosen], scores[:, chosen], true)
        some = np.zeros((count, BINS + 1), np.int64)
        _entries(sb, ss, st, whole[chosen], False, some, np.zeros((count, k, 0)))
        starts[chosen] = some
        shares = np.zeros((columns, k, int(starts[:, -1].max())))
        if shares.size:
            filled = np.zeros((count, k, shares.shape[2]))
            _entries(sb, ss, st, whole[chosen], True, np.zeros_like(some), filled)
            shares[chosen] = filled
    for a in (flags, starts, shares):
        a.flags.writeable = False
    return BinValues(flags, starts, shares)
