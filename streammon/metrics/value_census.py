"""Every distinct score of a column counted per true class, while the column takes few (pure): what a cumulative
window past the exact limit splits its bins by, exactly.

A window of more than 2,048 scored samples keeps counts per logit bin; where a few-valued model puts distinct
values in one bin, the window splits the bin over the values its monitor's last 2,048 exact scores show there, by
each class's share among them (``streammon.metrics.bin_values``). On an i.i.d. stream those shares are a sample
of the window's: 8,000 samples with three values in one bin read ROC AUC 0.004 off scikit-learn on average, 0.010
at worst. A census counts every value a column takes, per true class, in a hash table of at most
``CENSUS_LIMIT`` values — a few-valued model's (trees, boosting on small data, rounded scores) all fit. A column
that takes more (a continuous model, within its first few thousand scores) is closed: its counts are dropped and
its windows read the ring's values as before. While a column is open and the census has counted every sample of
the cumulative window, the window's bins split over the census's values are the window's samples exactly
(``census_values``): ROC AUC and average precision read as scikit-learn reads them.

>>> values = np.full((1, 4), -1.0); counts = np.zeros((1, 4, 2), np.int64); used = np.zeros(1, np.int64)
>>> table = np.full((1, TABLE), -1, np.int32)
>>> s = np.array([[0.30], [0.30], [0.3001], [0.9]])
>>> status, entries = census_insert(table, values, used, scores=keyed(s), true=np.array([0, 0, 1, 1]), counts=counts)
>>> status, entries.tolist(), int(used[0]), values[0, :3].tolist(), counts[0, :3].tolist()
(0, [[0, 0, 1, 2]], 3, [0.3, 0.3001, 0.9], [[2, 0], [0, 1], [0, 1]])
>>> v = census_values(values, counts, used, 2, flags=np.zeros((1, BINS), np.bool_))
>>> b = int(score_bins(s)[0, 0]); int(v.starts[0, b + 1] - v.starts[0, b]), v.shares[0, :, :2].tolist()
(2, [[1.0, 0.0], [0.0, 1.0]])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.bin_values import BinValues
from streammon.metrics.jitting import compiled, count_widths
from streammon.metrics.score_bins import BINS, score_bins

CENSUS_LIMIT = 4_096  # the distinct values a column's census counts; one more closes it
TABLE = 8_192  # slots of a column's hash table: a power of two, twice the limit (probes stay short)
_SHIFT = 51  # 64 − log2(TABLE): the product's top bits index the table
BEYOND, CLOSED = 1, 2  # what ``_insert`` reports: an entry past the counts' room, a column closed


def jit(function: Any) -> Any:
    """A loop of this module compiled (``streammon.metrics.jitting``)."""
    return compiled(function, error_model="numpy")


@jit
def _slot(table: Any, values: Any, c: int, v: float, bits: Any) -> int:  # pragma: no cover - compiled
    """The slot of column c's hash ``table`` (C, TABLE) that holds value ``v`` (its bit pattern ``bits``), or the
    empty one (-1) where it would go: Fibonacci hashing of the bit pattern — every bit of the float moves the top
    bits (float32 scores cast to float64 have their low bits zero; scores below 2⁻⁴⁰ would all share one slot of a
    scaled value) — then linear probing."""
    mask = table.shape[1] - 1
    h = np.int64((bits * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(_SHIFT))
    e = table[c, h]
    while e >= 0 and values[c, e] != v:
        h = (h + 1) & mask
        e = table[c, h]
    return int(h)


@jit
def _insert(table: Any, values: Any, used: Any, bits: Any, scores: Any,  # noqa: PLR0917
            true: Any, counts: Any, entries: Any) -> int:  # pragma: no cover - compiled
    """Each open column's ``scores`` (C, n: ``keyed``; ``bits`` their bit patterns) of classes ``true``: a value
    not seen yet takes the next entry, and each score is counted into ``counts`` (C, room, R) where its entry is
    below room — ``table`` (C, TABLE) the entry of each hash slot (-1: empty), ``values`` (C, limit) the
    entries' values, ``used`` (C,) the entries taken; ``entries`` (C, n) gets each score's entry (-1 in a column
    that closed). A column that would take more than ``limit`` values is
    closed (``used`` -1; its table, values and counts are the caller's to clear). Returns ``BEYOND`` if some
    entry was at or past room (left for the caller to count once it made room: ``_recount`` from ``room``), plus
    ``CLOSED`` if some column closed. Column by column, each one's scores contiguous: a pass that reads each
    column's table, values and counts alone (K = 10, 1,000 rows: 23 µs, where rows across columns took 55)."""
    columns, n = scores.shape
    limit = values.shape[1]
    room = counts.shape[1]
    status = 0
    for c in range(columns):
        if used[c] < 0:
            entries[c, :] = -1
            continue
        for i in range(n):
            v = scores[c, i]
            h = _slot(table, values, c, v, bits[c, i])
            e = table[c, h]
            if e < 0:
                if used[c] == limit:
                    used[c] = -1
                    status |= CLOSED
                    entries[c, :] = -1
                    break
                e = used[c]
                used[c] = e + 1
                table[c, h] = e
                values[c, e] = v
            entries[c, i] = e
            if e < room:
                counts[c, e, true[i]] += 1
            else:
                status |= BEYOND
    return status


@jit
def _recount(table: Any, values: Any, used: Any, bits: Any, scores: Any, true: Any,  # noqa: PLR0917
             counts: Any, sign: int, low: int) -> bool:  # pragma: no cover - compiled
    """Add (``sign`` 1) or subtract (-1) ``scores`` (C, n: ``keyed``; ``bits`` their bit patterns) of classes
    ``true`` into ``counts`` (C, room', R) at their census entries at least ``low``, in each open column, the
    census unchanged: False as soon as a score is not in it."""
    columns, n = scores.shape
    for c in range(columns):
        if used[c] < 0:
            continue
        for i in range(n):
            e = table[c, _slot(table, values, c, scores[c, i], bits[c, i])]
            if e < 0:
                return False
            if e >= low:
                counts[c, e, true[i]] += sign
    return True


@count_widths(2)  # the census's counts: int32, int64 once the total could pass int32's range
@jit
def _add_entries(entries: Any, true: Any, counts: Any, sign: int) -> None:  # pragma: no cover - compiled
    columns, n = entries.shape
    for c in range(columns):
        for i in range(n):
            e = entries[c, i]
            if e >= 0:
                counts[c, e, true[i]] += sign


def add_entries(entries: npt.NDArray[np.signedinteger[Any]], true: npt.NDArray[np.signedinteger[Any]],
                counts: npt.NDArray[Any], sign: int = 1) -> None:
    """Add (``sign`` 1) or subtract (-1) samples of classes ``true`` at their census ``entries`` (C, n:
    ``census_insert``'s; -1 none) in ``counts`` (C, room, R), as large as they need: no lookup again."""
    if entries.size:
        _add_entries(entries, np.ascontiguousarray(true, dtype=np.intp), counts, sign)


def padded_counts(counts: npt.NDArray[Any], shape: tuple[int, ...]) -> npt.NDArray[Any]:
    """``counts`` (a census's, or a window's at its entries) in zeros at least ``shape``, of its type — itself if it
    is as large.

    >>> padded_counts(np.ones((1, 2, 1), np.int32), (1, 3, 2))[0].tolist()
    [[1, 0], [1, 0], [0, 0]]
    """
    if all(n <= m for n, m in zip(shape, counts.shape, strict=True)):
        return counts
    out = np.zeros(tuple(max(n, m) for n, m in zip(shape, counts.shape, strict=True)), counts.dtype)
    out[tuple(slice(0, m) for m in counts.shape)] = counts
    return out


def keyed(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``scores`` (n, C) as the census's passes read them: column by column (C, n), C-contiguous float64, -0.0
    made 0.0 (one value, one bit pattern) — a copy."""
    return np.ascontiguousarray(np.asarray(scores, dtype=np.float64).T) + 0.0


def census_insert(table: npt.NDArray[np.int32], values: npt.NDArray[np.float64], used: npt.NDArray[np.int64], *,
                  scores: npt.NDArray[np.float64], true: npt.NDArray[np.intp], counts: npt.NDArray[Any],
                  ) -> tuple[int, npt.NDArray[np.int32]]:
    """``_insert`` of ``scores`` (``keyed``: finite, in [0, 1], checked by the caller) of classes ``true`` (in
    [0, R)) into the census (``values`` (C, limit), ``counts`` (C, room, R)): its status (``BEYOND``: some were
    not counted, at or past room — the caller makes room and counts them, ``census_recount(..., low=room)``;
    ``CLOSED``: some column closed) and each score's entry (C, n: -1 in a closed column)."""
    entries = np.empty(scores.shape, np.int32)  # (every one written)
    return int(_insert(table, values, used, scores.view(np.uint64), scores, true, counts, entries)), entries


def census_recount(table: npt.NDArray[np.int32], values: npt.NDArray[np.float64], used: npt.NDArray[np.int64], *,
                   scores: npt.NDArray[np.float64], true: npt.NDArray[np.intp], counts: npt.NDArray[Any],
                   sign: int = 1, low: int = 0) -> bool:
    """Add (``sign`` 1) or subtract (-1) ``true`` classes and ``scores`` (``keyed``: samples the census counted —
    a window's, a batch's) into ``counts`` (C, room', R) at the census's entries at least ``low``, in each open
    column; False if some score is not in the census."""
    return bool(_recount(table, values, used, scores.view(np.uint64), scores,
                         np.ascontiguousarray(true, dtype=np.intp), counts, sign, low))


@jit
def _split(bins: Any, counts: Any, k: int, starts: Any, shares: Any) -> None:  # pragma: no cover - compiled
    """One column's entries in ascending value order — ``bins`` (m,) ascending, ``counts`` (m, R) — split: each
    bin of two entries or more gets ``starts[b + 1]`` its entries (then made cumulative) and, entry by entry,
    ``shares`` (k, ·) each class's count over the class's count in the bin, or for a class with none there the
    entry's share of the bin's samples."""
    m = bins.shape[0]
    rows = min(k, counts.shape[1])
    per_class = np.zeros(k)
    at = 0
    i = 0
    while i < m:
        j = i + 1
        while j < m and bins[j] == bins[i]:
            j += 1
        if j - i > 1:
            starts[bins[i] + 1] = j - i
            per_class[:] = 0.0
            whole = 0.0
            for t in range(i, j):
                for c in range(rows):
                    per_class[c] += counts[t, c]
                    whole += counts[t, c]
            for t in range(i, j):
                mine = 0.0
                for c in range(rows):
                    mine += counts[t, c]
                for c in range(k):
                    if per_class[c] > 0.0:
                        shares[c, at] = counts[t, c] / per_class[c]
                    else:
                        shares[c, at] = mine / whole if whole > 0.0 else 1.0 / (j - i)
                at += 1
        i = j
    for b in range(starts.shape[0] - 1):
        starts[b + 1] += starts[b]


def census_layout(values: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """A column's entries (``values`` (m,), in the order counted) in ascending value order, and their bins: what
    ``census_values`` reads, the same while the column takes no new value."""
    order = np.argsort(values, kind="stable")
    return order, score_bins(values[order])


def census_values(values: npt.NDArray[np.float64], counts: npt.NDArray[Any], used: npt.NDArray[np.int64],
                  k: int, *, flags: npt.NDArray[np.bool_], fallback: BinValues | None = None,
                  layouts: list[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]] | None] | None = None,
                  ) -> BinValues:
    """The ``BinValues`` of a census that counted every sample of a window (``values`` (C, room), ``counts`` (C,
    room, R), ``used`` (C,): module docstring), for classes ``[0, k)``: in each open column, every bin that holds
    two values or more is split over them, class k's share at each value its count over its count in the bin (a
    class with none in the bin: the value's share of the bin's samples), so the window's counts times the shares
    are the census's own counts — the window's samples. A closed column (``used`` -1) takes ``fallback``'s split
    and ``flags`` (none: no bin split; ``flags`` (C, BINS): the random-order flags of the bins not split).
    ``layouts``: each column's ``census_layout`` if the caller keeps them."""
    columns = len(used)
    starts = np.zeros((columns, BINS + 1), np.int64)
    width = int(max(used.max(initial=0), 0))
    if fallback is not None:
        width = max(width, int(fallback.shares.shape[2]))
    shares = np.zeros((columns, k, width))
    flags = flags.copy()
    for c in range(columns):
        if used[c] < 0:
            if fallback is not None:
                starts[c] = fallback.starts[c]
                got = fallback.shares[c, :k]
                shares[c, : len(got), : got.shape[1]] = got
            continue
        flags[c] = False  # every bin of one value is that value (tied); any other is split
        m = int(used[c])
        kept = None if layouts is None else layouts[c]
        order, bins = census_layout(values[c, :m]) if kept is None else kept
        _split(bins, counts[c, order].astype(np.float64), k, starts[c], shares[c])
    shares = shares[:, :, : int(starts[:, -1].max(initial=0))].copy()
    for a in (flags, starts, shares):
        a.flags.writeable = False
    return BinValues(flags, starts, shares)
