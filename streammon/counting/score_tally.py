"""A window's score distribution by true class: ``ScoreTally`` (frozen, read by the score metrics) and
``ScoreCounts`` (the mutable one a window keeps), in the layout of ``streammon.metrics.score_bins``.

Score tallies form a group, as confusion counts do: ``+`` merges two windows (or two replicas), ``-``
evicts, the empty tally is the identity. The histogram is exact integer counts; the sums beside it
(``sums``, ``top``) are float64 and exact up to rounding — a class whose count returns to 0 has its sums
reset to exactly 0, so a sliding window's rounding never outlives the samples that made it.

``sample_cells`` gives a batch's histogram as its non-zero cells (flat ids ``(row * C + column) * BINS +
bin`` and counts), so a timed bucket keeps only the bins it holds and a state file lists only those.

>>> t = ScoreTally.of(np.array([0, 1, 1]), np.array([[0.2], [0.9], [0.4]]), 2, positive=1)
>>> t.n_scored, t.columns, t.class_counts.tolist()
(3, 1, [1, 2])
>>> (t + t - t).n_scored, bool(np.array_equal((t + t - t).hist, t.hist))
(3, True)
>>> (t + t).samples[0].tolist(), (t + t - t).samples  # exact samples: merged, not evicted
([0, 1, 1, 0, 1, 1], None)
>>> t.hist[0, 0, 0] = 5
Traceback (most recent call last):
...
ValueError: assignment destination is read-only
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.bin_values import BinValues, bin_values
from streammon.metrics.bucket_cells import add_cells
from streammon.metrics.distinct_bins import distinct_bins
from streammon.metrics.exact_ranking import EXACT_RANKING_LIMIT
from streammon.metrics.score_bins import BINS, ECE_BINS, SUMS, TOP, score_bins, sums_and_top

Parts = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64]]


def sample_cells(true: npt.NDArray[np.intp], scores: npt.NDArray[np.float64], rows: int, *,
                 positive: int = 1, bins: npt.NDArray[np.integer[Any]] | None = None) -> Parts:
    """The tally of scored samples as ``(cells, counts, sums, top)``: the histogram's non-zero flat cells
    (sorted, unique) and their counts, and the dense ``sums`` (rows, C, 4) and ``top`` (rows, 15, 3) of
    ``streammon.metrics.score_bins.tally`` — the same numbers (the tests check it), without a dense
    histogram. ``scores`` is (n, C), every row finite and in [0, 1]; C = 1 is a binary score of ``positive``;
    ``bins``: their ``score_bins``, if the caller made them.
    """
    t = np.asarray(true, dtype=np.intp)
    s = np.asarray(scores, dtype=np.float64)
    columns = s.shape[1]
    rows_cols = (t[:, None] * columns + np.arange(columns)).ravel()
    flat = rows_cols * BINS + (score_bins(s) if bins is None else bins).ravel()
    cells, counts = np.unique(flat, return_counts=True)
    sums, top = sums_and_top(t, s, rows, positive=positive)
    return cells.astype(np.int64), counts.astype(np.int64), sums, top


def _readonly(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class ScoreTally:
    """One window's score distribution by true class, read-only (``streammon.metrics.score_bins`` gives the layout):
    ``hist`` integer counts (K, C, BINS) — a window's snapshot in the narrowest of int16, int32 and int64 that holds the
    samples of its fullest row (``count_type``: no bin holds more) —, ``sums`` float64 (K, C, 4), ``top`` float64 (K,
    15, 3). K is the monitor's classes (rows: true class), C its score columns (1 for a binary model's positive-class
    score, else one per class). ``n_scored`` counts the window's samples that came with a score; a window may hold
    samples without one (they are in its confusion counts, not here). ``positive`` is the class index a binary score is
    the probability of (None for C > 1).

    ``samples``: the window's scored samples with their exact scores — ``(true, scores)``, class indices (n,) and
    scores (n, C), read-only, in arrival order — when the window holds at most
    ``metrics.exact_ranking.EXACT_RANKING_LIMIT`` scored samples (``streammon.counting.exact_scores``); None
    otherwise. ``roc_auc`` and ``average_precision`` read them where present (``parts``), the bins where not.

    A window's snapshot holds only the bins its counts can be in: ``slab`` (K, C, width) is ``hist[:, :, offset:
    offset + width]``, every count outside it 0, and ``span`` (C, 2) each column's bins ``[lo, hi)`` within it
    (``streammon.metrics.bin_span``). A report copies and its score metrics read only the slab; ``hist`` is made
    from it when first read (cached). Other tallies (a sum, a difference, a batch's) are whole: ``slab`` is
    ``hist``, ``span`` None.

    ``distinct``: (C, BINS) bool, read-only, the bins whose samples hold distinct scores — where average precision
    reads a bin's samples in random order rather than tied (``streammon.metrics.score_ranking``) — when the tally
    reads its bins and this is known: a window's snapshot takes them from the monitor's last exact scores
    (``streammon.counting.exact_scores``), a batch's tally (``of``) from all its samples; None: every bin tied (a
    sum or a difference of tallies).

    ``values``: what those exact scores show inside the bins (``streammon.metrics.bin_values``: each bin's
    repeated distinct values and each class's share at each, with ``distinct`` as its ``flags``), which ROC AUC and
    average precision read a bin over when they split it; None (a sum, a difference, a state file without exact
    scores): the bins alone, as ``distinct`` says."""

    slab: npt.NDArray[np.signedinteger[Any]]  # int16, int32 or int64 (count_type)
    sums: npt.NDArray[np.float64]
    top: npt.NDArray[np.float64]
    positive: int | None
    samples: tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]] | None = None
    span: npt.NDArray[np.int64] | None = None
    offset: int = 0
    distinct: npt.NDArray[np.bool_] | None = None
    values: BinValues | None = None

    @functools.cached_property
    def hist(self) -> npt.NDArray[np.signedinteger[Any]]:
        """The histogram (K, C, BINS), read-only: the slab placed in its bins, 0 elsewhere."""
        if self.slab.shape[2] == BINS:
            return self.slab
        whole = np.zeros((*self.slab.shape[:2], BINS), self.slab.dtype)
        whole[:, :, self.offset:self.offset + self.slab.shape[2]] = self.slab
        return _readonly(whole)

    @property
    def parts(self) -> tuple[Any, ...]:
        """``(hist, sums, top, samples, distinct, values)``: what the score metrics take
        (``metrics.roc_auc(t.parts)``)."""
        return self.hist, self.sums, self.top, self.samples, self.distinct, self.values

    def with_samples(self, samples: tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]] | None) -> ScoreTally:
        """This tally with ``samples`` (read-only arrays: not copied) as its exact samples."""
        return replace(self, samples=samples)

    def with_values(self, values: BinValues | None) -> ScoreTally:
        """This tally with ``values`` (not copied) as what the bins hold, and its flags as ``distinct``."""
        return replace(self, values=values, distinct=None if values is None else values.flags)

    @property
    def columns(self) -> int:
        """C: the score columns."""
        return int(self.slab.shape[1])

    @property
    def class_counts(self) -> npt.NDArray[np.int64]:
        """The scored samples of each true class (K,): the counts of its confidence bins (exact integers in
        float64; the same as its histogram's, a column's bins — K × 2,048 to add up, not K × 15)."""
        counts: npt.NDArray[np.int64] = self.top[:, :, 0].sum(axis=1).astype(np.int64)
        return counts

    @property
    def n_scored(self) -> int:
        """The window's samples that carried a score."""
        return int(self.top[:, :, 0].sum())

    @classmethod
    def of(cls, true: npt.NDArray[np.intp], scores: npt.NDArray[np.float64], k: int, *,
           positive: int | None = 1) -> ScoreTally:
        """The tally of a batch: ``true`` class indices in [0, k), ``scores`` (n, C) checked (finite, in [0, 1]);
        with its exact samples when there are at most ``EXACT_RANKING_LIMIT``, else with its distinct bins (all its
        samples) and what its last ``EXACT_RANKING_LIMIT`` show inside the bins (``values``: as a monitor's ring)."""
        values = np.ascontiguousarray(scores, dtype=np.float64)
        bins = score_bins(values)  # once: the histogram's cells and, past the limit, the distinct bins
        cells, counts, sums, top = sample_cells(true, values, k, positive=1 if positive is None else positive,
                                                bins=bins)
        hist = np.zeros(k * scores.shape[1] * BINS, np.int64)
        hist[cells] = counts
        tally = cls.frozen(hist.reshape(k, scores.shape[1], BINS), sums, top, positive)
        samples = _samples(np.array(true, dtype=np.intp), np.array(scores, dtype=np.float64))
        if samples is None:  # its bins split over its own values (its last ``EXACT_RANKING_LIMIT``: bounded memory)
            small = bins.astype(np.int16)
            flags = distinct_bins(small, values)
            last = slice(len(values) - EXACT_RANKING_LIMIT, None)
            return tally.with_values(bin_values(small[last], values[last], np.asarray(true, np.intp)[last], k,
                                                flags=flags))
        return tally.with_samples(samples)

    @classmethod
    def frozen(cls, hist: npt.NDArray[np.signedinteger[Any]], sums: npt.NDArray[np.float64],
               top: npt.NDArray[np.float64], positive: int | None, *, span: npt.NDArray[np.int64] | None = None,
               offset: int = 0) -> ScoreTally:
        """A tally of these arrays (not copied: the caller gives up its own), made read-only; ``hist`` the whole
        histogram, or — with ``span`` — its bins from ``offset`` on, outside which every count is 0 (the class
        docstring)."""
        return cls(_readonly(hist), _readonly(sums), _readonly(top), positive,
                   span=None if span is None else _readonly(span), offset=offset)

    def _pair(self, other: ScoreTally) -> tuple[ScoreCounts, ScoreCounts]:
        if not isinstance(other, ScoreTally):
            raise TypeError(f"a ScoreTally combines with a ScoreTally, got {type(other).__name__}")
        if other.columns != self.columns or other.positive != self.positive:
            raise ValueError(f"score tallies of different layouts (columns {self.columns} and {other.columns}, "
                             f"positive {self.positive} and {other.positive}) do not combine")
        rows = max(len(self.slab), len(other.slab))
        return ScoreCounts.of(self, rows), ScoreCounts.of(other, rows)

    def __add__(self, other: ScoreTally) -> ScoreTally:
        """The merged tally; its exact samples are both's, concatenated, while both have them and they number at
        most ``EXACT_RANKING_LIMIT`` (else None: the bins)."""
        mine, theirs = self._pair(other)
        mine.add(theirs.hist, theirs.sums, theirs.top)
        merged = mine.snapshot(len(mine.hist), self.positive)
        if self.samples is None or other.samples is None:
            return merged
        return merged.with_samples(_samples(np.concatenate([self.samples[0], other.samples[0]]),
                                            np.concatenate([self.samples[1], other.samples[1]])))

    def __sub__(self, other: ScoreTally) -> ScoreTally:
        """The tally with ``other``'s samples evicted; without exact samples (which ones left is not known)."""
        mine, theirs = self._pair(other)
        mine.subtract(theirs.hist, theirs.sums, theirs.top)
        return mine.snapshot(len(mine.hist), self.positive)

    def __repr__(self) -> str:
        return f"ScoreTally(classes={len(self.slab)}, columns={self.columns}, n_scored={self.n_scored})"


def _samples(true: npt.NDArray[np.intp], scores: npt.NDArray[np.float64],
             ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]] | None:
    """Exact samples made read-only, or None past ``EXACT_RANKING_LIMIT``."""
    if len(true) > EXACT_RANKING_LIMIT:
        return None
    return _readonly(true), _readonly(scores)


def count_type(most: int) -> type[np.signedinteger[Any]]:
    """The narrowest histogram count type that holds ``most`` samples in one bin: a window that can never hold
    more (a sliding window of ``size`` samples) keeps int16 or int32 counts — a quarter or half of the memory
    that every read of its histogram moves (1.6 MB at K = 10 in int64) — and counts can never wrap.

    >>> count_type(1_000).__name__, count_type(100_000).__name__, count_type(2**31).__name__
    ('int16', 'int32', 'int64')
    """
    for dtype in (np.int16, np.int32):
        if most <= np.iinfo(dtype).max:
            return dtype
    return np.int64


class ScoreCounts:
    """A mutable score tally over ``rows`` true classes (a window's capacity): add, subtract, grow, snapshot."""

    __slots__ = ("hist", "sums", "top")

    def __init__(self, rows: int, columns: int, dtype: type[np.signedinteger[Any]] = np.int64) -> None:
        """``dtype``: the type of the histogram's counts — int64, or a narrower one where the window's counts
        cannot exceed it (``count_type``)."""
        self.hist = np.zeros((rows, columns, BINS), dtype)
        self.sums = np.zeros((rows, columns, len(SUMS)), np.float64)
        self.top = np.zeros((rows, ECE_BINS, len(TOP)), np.float64)

    @classmethod
    def of(cls, tally: ScoreTally, rows: int) -> ScoreCounts:
        """A mutable copy of ``tally`` with ``rows`` rows (at least its own)."""
        counts = cls(rows, tally.columns)
        k = len(tally.slab)
        counts.hist[:k, :, tally.offset:tally.offset + tally.slab.shape[2]] = tally.slab
        counts.sums[:k] = tally.sums
        counts.top[:k] = tally.top
        return counts

    @property
    def columns(self) -> int:
        return int(self.hist.shape[1])

    def grow(self, rows: int) -> None:
        """Room for ``rows`` true classes, every count kept."""
        for name in self.__slots__:
            old = getattr(self, name)
            grown = np.zeros((rows, *old.shape[1:]), old.dtype)
            grown[: len(old)] = old
            setattr(self, name, grown)

    def add(self, hist: npt.NDArray[np.int64], sums: npt.NDArray[np.float64], top: npt.NDArray[np.float64]) -> None:
        """Add a dense tally of at most this many rows."""
        k = len(hist)
        self.hist[:k] += hist
        self.sums[:k] += sums
        self.top[:k] += top

    def add_cells(self, parts: Parts, sign: int = 1) -> None:
        """Add (``sign`` 1) or subtract (-1) a tally given as ``sample_cells`` parts."""
        cells, counts, sums, top = parts
        flat = self.hist.reshape(-1)
        k = len(sums)
        if sign > 0:
            add_cells(flat, cells, counts)
            self.sums[:k] += sums
            self.top[:k] += top
        else:
            if not add_cells(flat, cells, counts, -1):  # (nothing changed)
                raise ValueError("cannot evict scores that were never counted (a bin would go below 0)")
            self.sums[:k] -= sums
            self.top[:k] -= top
            self._settle()

    def subtract(self, hist: npt.NDArray[np.int64], sums: npt.NDArray[np.float64],
                 top: npt.NDArray[np.float64]) -> None:
        """Subtract a dense tally counted before; raises (changing nothing) if a bin would go below 0."""
        k = len(hist)
        if (self.hist[:k] < hist).any():
            raise ValueError("cannot subtract scores that were never counted (a bin would go below 0)")
        self.hist[:k] -= hist
        self.sums[:k] -= sums
        self.top[:k] -= top
        self._settle()

    def subtract_cells(self, cells: npt.NDArray[np.int64], counts: npt.NDArray[np.int64],
                       sums: npt.NDArray[np.float64], top: npt.NDArray[np.float64]) -> None:
        """Subtract a tally given as unique flat histogram cells and their counts, with its sums."""
        self.add_cells((cells, counts, sums, top), sign=-1)

    def clear(self) -> None:
        """Every count and sum back to 0 (the empty tally)."""
        self.hist.fill(0)
        self.sums.fill(0.0)
        self.top.fill(0.0)

    def settle(self) -> None:
        """``_settle``, for windows that subtracted through the compiled loop."""
        self._settle()

    def _settle(self) -> None:
        """Rows (and confidence bins) left with no sample get sums of exactly 0: no rounding residue remains."""
        held = self.top[:, :, 0]  # the count of each row's confidence bins: exact integers in float64
        empty = held.sum(axis=1) == 0
        if empty.any():
            self.sums[empty] = 0.0
        np.multiply(self.top, (held != 0)[:, :, None], out=self.top)

    def snapshot(self, k: int, positive: int | None) -> ScoreTally:
        """A read-only copy of the first ``k`` rows."""
        return ScoreTally.frozen(self.hist[:k].copy(), self.sums[:k].copy(), self.top[:k].copy(), positive)

    def state(self) -> dict[str, Any]:
        """Plain data: the histogram's non-zero flat cells and counts, the sums and confidence bins of the
        rows that hold samples."""
        flat = self.hist.reshape(-1)
        cells = np.flatnonzero(flat)
        live = np.flatnonzero(self.hist[:, 0, :].sum(axis=1))
        return {"cells": cells.tolist(), "counts": flat[cells].tolist(), "rows": live.tolist(),
                "sums": self.sums[live].tolist(), "top": self.top[live].tolist()}

    def restore(self, state: dict[str, Any]) -> None:
        """Load ``state()`` (``ValueError`` if it does not fit this tally's rows and columns)."""
        size = self.hist.size
        cells = np.asarray(state["cells"], dtype=np.int64)
        counts = np.asarray(state["counts"], dtype=np.int64)
        if (cells.ndim != 1 or cells.shape != counts.shape
                or (cells.size and (cells[0] < 0 or cells[-1] >= size or (np.diff(cells) <= 0).any()
                                    or (counts <= 0).any() or counts.max() > np.iinfo(self.hist.dtype).max))):
            raise ValueError(f"a saved score histogram must hold cells in [0, {size}) with counts in "
                             f"[1, {np.iinfo(self.hist.dtype).max}], sorted and unique")
        rows = np.asarray(state["rows"], dtype=np.int64).reshape(-1)
        sums = np.asarray(state["sums"], dtype=np.float64).reshape(len(rows), *self.sums.shape[1:])
        top = np.asarray(state["top"], dtype=np.float64).reshape(len(rows), *self.top.shape[1:])
        if rows.size and (rows.min() < 0 or rows.max() >= len(self.hist) or (np.diff(rows) <= 0).any()):
            raise ValueError(f"saved score rows must lie in [0, {len(self.hist)}), sorted and unique")
        if not (np.isfinite(sums).all() and np.isfinite(top).all()):
            raise ValueError("saved score sums must be finite")
        self.hist.reshape(-1)[:] = 0
        self.hist.reshape(-1)[cells] = counts
        self.sums[:] = 0.0
        self.top[:] = 0.0
        self.sums[rows] = sums
        self.top[rows] = top
        held = self.hist.sum(axis=2)  # (rows, C): every column of a row counts the same samples
        if not np.array_equal(np.flatnonzero(held[:, 0]), rows) or (held != held[:, :1]).any():
            raise ValueError("saved score sums do not belong to the rows that hold scores")
        n = held[:, 0].astype(np.float64)
        slack = 1e-9 * (n + 1)
        if (not np.array_equal(self.top[:, :, 0].sum(axis=1), n)
                or (self.top[:, :, 1] > self.top[:, :, 0]).any() or (self.top < 0).any()
                or (self.top[:, :, 2] > self.top[:, :, 0] + 1e-9).any()
                or (self.sums[:, :, :2] < -slack[:, None, None]).any()
                or (self.sums[:, :, :2] > (n + slack)[:, None, None]).any() or (self.sums[:, :, 2:] > 0).any()):
            raise ValueError("saved score sums contradict the histogram (counts, sums of scores in [0, 1])")
