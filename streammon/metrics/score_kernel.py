"""The score tallies' per-sample loops in machine code: a batch's bins, sums and confidence bins once
(``prepared_tally``), then each window that takes the whole batch adds its bins (``add_hist``) and those small
sums; a window that adds or subtracts samples one by one (a sliding window catching up) does it in one pass
(``accumulate``, ``accumulate_scores``) — the layout of ``streammon.metrics.score_bins``.

The logarithms ``ln(s)``, ``ln(1 − s)`` of the clipped score (``CLIP``, read by the log loss sums) are numpy's,
vectorised, made a chunk of rows at a time just before the compiled pass reads them (``CHUNK_SCORES``). A score's
bin comes from its logit ``ln(s) − ln(1 − s)``: one multiplication in the bins evenly spaced in logit, a binary
search of the edges in the tails, then a check against the bin edges themselves, moving it a step where rounding put
it on the wrong side: the bin is exactly ``score_bins``' (a binary search of the same edges), which the tests check.
``accumulate`` adds ``sign`` (1 or -1) times each scored sample (a NaN first column marks a sample without a score)
to the histogram, the sums and the top-label confidence bins; a window evicting a sample subtracts what it added,
from the bins it kept and the logarithms made again from the scores (the same floats).

Compiled on first use (``streammon.metrics.jitting``); with ``NUMBA_DISABLE_JIT=1`` the same code runs as Python.

>>> import numpy as np
>>> s = np.array([[0.0], [0.5], [1.0], [np.nan]])
>>> bins, logs, log1ms = prepared(s)
>>> bins[:3, 0].tolist()
[0, 1024, 2047]
>>> hist, sums, top = np.zeros((2, 1, BINS), np.int64), np.zeros((2, 1, 4)), np.zeros((2, ECE_BINS, 3))
>>> accumulate(np.array([0, 1, 1, 1]), s, bins, logs, log1ms, 1, 1, hist, True, sums, top)
>>> int(hist.sum()), float(sums[1, 0, 0]), top[:, :, 0].sum()
(3, 1.5, np.float64(3.0))
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.jitting import compiled, count_widths
from streammon.metrics.score_bins import BINS, CLIP, ECE_BINS, LOGIT_SPAN, TAIL_BINS, bin_edges

MIDDLE_BINS = BINS - 2 - 2 * TAIL_BINS  # the bins evenly spaced in logit over [-LOGIT_SPAN, +LOGIT_SPAN)
STEP = 2.0 * LOGIT_SPAN / MIDDLE_BINS
INV_STEP = 1.0 / STEP  # a multiplication, not a division, a score: the edge checks below fix any rounding
FIRST_MIDDLE = TAIL_BINS + 1  # the bin whose lower edge is logit -LOGIT_SPAN (bin 0 holds 0, then the low tail)
EDGES = bin_edges()
# A score whose logit position x lies further than this (in bins) from a middle edge needs no check against the edges:
# x is off by at most ~2.5e-9 of a bin (measured at every middle edge and its neighbouring floats; near 1 - 6e-6 a
# float step of the score is ~1.3e-9 of a bin in logit, and numpy's logarithms add a few ulps), 400 times less. The
# checks run for the ~2e-6 of scores within it, and in the tails (saves ~6 of ~50 ns a sample at K = 10).
SURE = 1e-6
EDGES.flags.writeable = False
# What ``_bin`` reads of score_bins' layout, passed to the loops as an argument like the edges: a constant of another
# file read by a compiled loop would be frozen into its cached machine code (``streammon.metrics.jitting``).
LAYOUT = (LOGIT_SPAN, INV_STEP, MIDDLE_BINS, FIRST_MIDDLE)
_NO_HIST = np.zeros((1, 1, 1), np.int64)  # the histogram argument of a pass that adds to none
CHUNK_SCORES = 16_384  # the scores whose logarithms a pass makes at a time: two buffers of 128 kB, in cache


def _jit(function: Any) -> Any:
    return compiled(function, error_model="numpy")


@_jit
def _bin(s: float, a: float, b: float, edges: Any,
         layout: tuple[float, float, int, int]) -> int:  # pragma: no cover - compiled
    """The bin of score ``s`` whose clipped logarithms are ``a = ln(s)`` and ``b = ln(1 − s)`` (``edges``: the
    ``EDGES``, ``layout``: the ``LAYOUT``)."""
    span, inv_step, middle_bins, first_middle = layout
    last = len(edges) - 2  # BINS - 1
    x = (a - b + span) * inv_step
    if 0.0 <= x < middle_bins:  # the evenly spaced bins: one multiplication
        whole = int(x)
        g = whole + first_middle
        if SURE < x - whole < 1.0 - SURE:  # x is nowhere near an edge: the bin is certain (``SURE``)
            return g
    else:  # the tails (and 0, 1): a binary search of the edges, as score_bins does
        lo, hi = 0, last + 1  # edges[lo] <= s < edges[hi], the last bin also holding 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if s >= edges[mid]:
                lo = mid
            else:
                hi = mid
        g = lo
    while g > 0 and s < edges[g]:
        g -= 1
    while g < last and s >= edges[g + 1]:
        g += 1
    return g


@_jit
def _prepare(scores: Any, logs: Any, log1ms: Any, edges: Any, layout: Any,  # noqa: PLR0917
             bins: Any) -> None:  # pragma: no cover - compiled
    n, columns = scores.shape
    for i in range(n):
        if math.isnan(scores[i, 0]):  # a sample without a score
            continue
        for c in range(columns):
            bins[i, c] = _bin(scores[i, c], logs[i, c], log1ms[i, c], edges, layout)


@_jit
def _prepare_tally(true: Any, scores: Any, logs: Any, log1ms: Any, positive: int, edges: Any,  # noqa: PLR0917
                   layout: Any, bins: Any, hist: Any, with_hist: bool, hist2: Any, with_hist2: bool, sums: Any,
                   top: Any) -> None:  # pragma: no cover - compiled
    n, columns = scores.shape
    ece_bins = top.shape[1]
    for i in range(n):
        first = scores[i, 0]
        if math.isnan(first):  # a sample without a score
            continue
        t = true[i]
        best = -1.0
        chosen = 0
        for c in range(columns):
            s = scores[i, c]
            a = logs[i, c]
            b = log1ms[i, c]
            g = _bin(s, a, b, edges, layout)
            bins[i, c] = g
            if with_hist:
                hist[t, c, g] += 1
            if with_hist2:
                hist2[t, c, g] += 1
            sums[t, c, 0] += s
            sums[t, c, 1] += s * s
            sums[t, c, 2] += a
            sums[t, c, 3] += b
            if s > best:  # the first largest, as numpy's argmax
                best = s
                chosen = c
        if columns == 1:
            confidence = max(first, 1.0 - first)
            chosen = positive if first > 0.5 else 1 - positive
        else:
            confidence = best
        e = min(int(confidence * ece_bins), ece_bins - 1)
        top[t, e, 0] += 1.0
        if chosen == t:
            top[t, e, 1] += 1.0
        top[t, e, 2] += confidence


@count_widths(3)  # a window's histogram: int16 to int64 counts (score_tally.count_type)
@_jit
def _add_hist(true: Any, scores: Any, bins: Any, hist: Any, sign: int) -> None:  # pragma: no cover - compiled
    n, columns = scores.shape
    for i in range(n):
        if math.isnan(scores[i, 0]):
            continue
        t = true[i]
        for c in range(columns):
            hist[t, c, bins[i, c]] += sign


def logs_of(scores: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """``ln(s)`` and ``ln(1 − s)`` of the clipped scores: numpy's vectorised logarithms, several times faster than
    one call a score in the compiled loop (NaN stays NaN: rows without a score, never read)."""
    logs, log1ms = np.empty(scores.shape), np.empty(scores.shape)
    _logs_into(scores, logs, log1ms)
    return logs, log1ms


def _logs_into(scores: npt.NDArray[np.float64], logs: npt.NDArray[np.float64],
               log1ms: npt.NDArray[np.float64]) -> None:
    """``logs_of`` into the given arrays (of ``scores``' shape): the same ufuncs on the same values, so the same
    floats wherever a score is taken — a batch's pass and a sliding window's catch-up subtract what was added."""
    np.clip(scores, CLIP, 1.0 - CLIP, out=logs)
    np.negative(logs, out=log1ms)
    np.log1p(log1ms, out=log1ms)
    np.log(logs, out=logs)


def _chunks(n: int, columns: int) -> tuple[range, int]:
    """The row starts of the chunks a pass over ``n`` rows of ``columns`` scores takes (``CHUNK_SCORES`` scores a
    chunk), and the rows of one chunk."""
    rows = max(1, min(n, CHUNK_SCORES // columns))
    return range(0, n, rows), rows


def prepared(scores: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.int16], npt.NDArray[np.float64],
                                                        npt.NDArray[np.float64]]:
    """Each score's bin and the logarithms ``ln(s)``, ``ln(1 − s)`` of its clipped value, (n, C) each (bin 0 and
    NaN logarithms in the rows of samples without a score). ``scores`` is (n, C), checked: in [0, 1], a NaN first
    column where a sample has no score."""
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    bins = np.zeros(scores.shape, np.int16)
    logs, log1ms = logs_of(scores)
    if len(scores):
        _prepare(scores, logs, log1ms, EDGES, LAYOUT, bins)
    return bins, logs, log1ms


def prepared_tally(true: npt.NDArray[Any], scores: npt.NDArray[np.float64], positive: int, rows: int, *,
                   hist: npt.NDArray[np.int64] | None = None, hist2: npt.NDArray[np.int64] | None = None) -> tuple[
        npt.NDArray[np.int16], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Each score's bin (as ``prepared``) and, in the same pass, the batch's ``sums`` (rows, C, 4) and ``top``
    (rows, ECE_BINS, 3) as ``accumulate`` would add them (``true``: class indices below ``rows``): a window that
    takes the whole batch adds these two small arrays and the histogram (``add_hist``) instead of every sample's
    sums. Given ``hist`` (and ``hist2``), (at least rows, C, BINS), the samples' bins are added to it in the same
    pass: a batch's dense histogram, or the histograms of the windows that take the whole batch.

    The logarithms are made a chunk of ``CHUNK_SCORES`` scores at a time into two buffers that stay in cache, and
    kept by no one: a batch of 100,000 samples at K = 10 no longer writes, and faults in, two 8 MB arrays that
    only this pass reads (its cost fell from ~110 to ~80 ns a sample; a sliding window's catch-up makes them again
    from the same scores, ``accumulate_scores``)."""
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    n, columns = scores.shape
    bins = np.zeros(scores.shape, np.int16)
    sums = np.zeros((rows, columns, 4), np.float64)
    top = np.zeros((rows, ECE_BINS, 3), np.float64)
    if n:
        starts, size = _chunks(n, columns)
        logs, log1ms = np.empty((size, columns)), np.empty((size, columns))
        first, second = _NO_HIST if hist is None else hist, _NO_HIST if hist2 is None else hist2
        for lo in starts:
            hi = min(n, lo + size)
            part = scores[lo:hi]
            _logs_into(part, logs[:hi - lo], log1ms[:hi - lo])
            _prepare_tally(true[lo:hi], part, logs[:hi - lo], log1ms[:hi - lo], positive, EDGES, LAYOUT, bins[lo:hi],
                           first, hist is not None, second, hist2 is not None, sums, top)
    return bins, sums, top


def add_hist(true: npt.NDArray[Any], scores: npt.NDArray[np.float64], bins: npt.NDArray[np.int16],
             hist: npt.NDArray[Any], sign: int = 1) -> None:
    """Add (``sign`` 1) or subtract (-1) the scored samples' ``prepared`` bins to ``hist`` (K, C, BINS), in place:
    their histogram only."""
    if len(true):
        _add_hist(true, scores, bins, hist, sign)


@_jit
def _accumulate(true: Any, scores: Any, bins: Any, logs: Any, log1ms: Any, positive: int, sign: int,  # noqa: PLR0917
                hist: Any, with_hist: bool, sums: Any, top: Any) -> None:  # pragma: no cover - compiled
    n, columns = scores.shape
    ece_bins = top.shape[1]
    for i in range(n):
        first = scores[i, 0]
        if math.isnan(first):
            continue
        t = true[i]
        best = -1.0
        chosen = 0
        for c in range(columns):
            s = scores[i, c]
            if with_hist:
                hist[t, c, bins[i, c]] += sign
            sums[t, c, 0] += sign * s
            sums[t, c, 1] += sign * s * s
            sums[t, c, 2] += sign * logs[i, c]
            sums[t, c, 3] += sign * log1ms[i, c]
            if s > best:  # the first largest, as numpy's argmax
                best = s
                chosen = c
        if columns == 1:
            confidence = max(first, 1.0 - first)
            chosen = positive if first > 0.5 else 1 - positive
        else:
            confidence = best
        e = min(int(confidence * ece_bins), ece_bins - 1)
        top[t, e, 0] += sign
        if chosen == t:
            top[t, e, 1] += sign
        top[t, e, 2] += sign * confidence


def accumulate(true: npt.NDArray[Any], scores: npt.NDArray[np.float64], bins: npt.NDArray[np.int16],  # noqa: PLR0917
               logs: npt.NDArray[np.float64], log1ms: npt.NDArray[np.float64], positive: int, sign: int,
               hist: npt.NDArray[np.int64], with_hist: bool, sums: npt.NDArray[np.float64],
               top: npt.NDArray[np.float64]) -> None:
    """Add ``sign`` times the scored samples (``true`` class indices, ``scores`` and their ``prepared`` bins and
    logarithms) to ``hist`` (K, C, BINS; left alone unless ``with_hist``), ``sums`` (K, C, 4) and ``top``
    (K, ECE_BINS, 3), in place. ``positive``: the class a binary (C = 1) score is the probability of."""
    if len(true):
        _accumulate(true, scores, bins, logs, log1ms, positive, sign, hist, with_hist, sums, top)


def accumulate_scores(true: npt.NDArray[Any], scores: npt.NDArray[np.float64],  # noqa: PLR0917
                      bins: npt.NDArray[np.int16], positive: int, sign: int, hist: npt.NDArray[Any],
                      sums: npt.NDArray[np.float64], top: npt.NDArray[np.float64]) -> None:
    """``accumulate`` of the scored samples given their bins, the logarithms made here a chunk at a time
    (``prepared_tally``'s buffers, the same floats): what a sliding window adds or subtracts when it catches up."""
    n, columns = scores.shape
    if not n:
        return
    starts, size = _chunks(n, columns)
    logs, log1ms = np.empty((size, columns)), np.empty((size, columns))
    for lo in starts:
        hi = min(n, lo + size)
        part = scores[lo:hi]
        _logs_into(part, logs[:hi - lo], log1ms[:hi - lo])
        _accumulate(true[lo:hi], part, bins[lo:hi], logs[:hi - lo], log1ms[:hi - lo], positive, sign, hist, True,
                    sums, top)


@_jit
def _scores_ok(scores: Any, tolerance: float) -> bool:  # pragma: no cover - compiled
    n, columns = scores.shape
    flat = scores.reshape(n * columns)
    bad = False
    for i in range(n * columns):  # no branch a score: the compiler makes it one vector pass (~8x faster at K = 10)
        s = flat[i]
        bad |= (s < 0.0) | (s > 1.0) | math.isnan(s)
    if bad:
        return False
    if tolerance >= 0.0:
        for i in range(n):
            total = 0.0
            for c in range(columns):
                total += scores[i, c]
            if abs(total - 1.0) > tolerance:
                return False
    return True


def scores_ok(scores: npt.NDArray[np.float64], tolerance: float) -> bool:
    """Whether every score of the (n, C) float64 array is in [0, 1] and, for ``tolerance >= 0``, every row sums
    to 1 within it: one pass, for the common case; the caller finds what is wrong (and says it) when not.

    >>> ok, short, big = np.array([[0.2, 0.8]]), np.array([[0.2, 0.7]]), np.array([[1.5]])
    >>> scores_ok(ok, 1e-4), scores_ok(short, 1e-4), scores_ok(short, -1.0), scores_ok(big, -1.0)
    (True, False, True, False)
    """
    return bool(_scores_ok(scores, tolerance))
