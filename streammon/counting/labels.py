"""Batch label handling: validate label arrays and map them to class indices with numpy.

Integer and boolean arrays whose labels are all known classes, every integer of
their range included (labels 0..K-1 in any registration order), are not mapped
per sample at all: ``code_labels`` returns them as codes with a small code -> index
table, and counts made over codes are permuted once. Other integer arrays go
through a lookup table (one gather per array); string and float arrays through
``np.unique``; only object arrays of mixed types fall back to a per-element
dictionary lookup. Nothing here mutates the class index: new labels are returned,
in first-seen order, with the indices they will get once registered.

>>> idx = ClassIndex(["a"])
>>> t, p, new = map_labels(np.array(["a", "b"]), np.array(["b", "c"]), idx)
>>> t.tolist(), p.tolist(), new
([0, 1], [1, 2], ['b', 'c'])
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.counts import LABEL_INT_BOUND, ClassIndex, check_label, label_kind, show

IndexArray = npt.NDArray[np.intp]
_HOMOGENEOUS = {int: np.int64, bool: np.bool_, float: np.float64, str: np.str_}
_LUT_SPAN = 1 << 16


def as_label_array(values: Any, what: str) -> np.ndarray:
    """A 1-D array of labels from a sequence or array, keeping each label's type.

    Accepts lists, tuples, NumPy arrays and anything with an array protocol — pandas
    Series and Index, polars Series, pyarrow arrays and chunked arrays — without
    importing those libraries. Float labels must be whole numbers (they become ints);
    a missing label (None, NaN, ``pandas.NA``, ``NaT``, an Arrow null) rejects the batch.

    >>> as_label_array([1, "1"], "y_true").dtype
    dtype('O')
    >>> as_label_array([0.0, 1.0], "y_true").tolist()
    [0, 1]
    >>> as_label_array(np.array([[1, 2]]), "y_true")
    Traceback (most recent call last):
    ...
    ValueError: y_true must be 1-D (one label per sample), got shape (1, 2)
    >>> as_label_array({"a": 1}, "y_true")
    Traceback (most recent call last):
    ...
    TypeError: y_true is a dict (its keys would be counted): pass a sequence of labels, e.g. list(d.values())
    """
    arr = _as_array(values, what)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be 1-D (one label per sample), got shape {arr.shape}")
    kind = arr.dtype.kind
    if kind == "f":
        return _whole_numbers(arr, what)
    if kind == "u" and arr.dtype.itemsize == 8 and len(arr) and int(arr.max()) >= LABEL_INT_BOUND:
        bad = int(np.flatnonzero(arr >= LABEL_INT_BOUND)[0])
        raise ValueError(f"{what}[{bad}] = {arr[bad]} is out of range: int labels must be within ±2**63 (int64)")
    if kind == "S":
        raise TypeError(f"{what} holds bytes ({arr.dtype}): decode them to str first, e.g. arr.astype(str)")
    if kind not in "biuUO":  # (mutation testing: a kind is one character, "XXbiuUOXX" is equivalent)
        raise TypeError(
            f"{what} has dtype {arr.dtype}: expected class labels (str, int or bool; whole-number floats)"
        )
    return arr


def _as_array(values: Any, what: str) -> np.ndarray:
    """Any accepted container as a NumPy array; a clear TypeError for the ones that would miscount."""
    if isinstance(values, np.ndarray):
        return values
    kind = type(values).__name__
    if isinstance(values, (str, bytes, bytearray)) or (np.ndim(values) == 0 and not hasattr(values, "__len__")
                                                       and not hasattr(values, "__iter__")):
        raise TypeError(f"{what} must be a sequence or 1-D array of labels, got {show(values)}")
    if hasattr(values, "columns") or hasattr(values, "column_names"):
        raise TypeError(
            f"{what} is a {kind} (a table, its column names would be counted): pass one column, "
            "e.g. df['label'] (pandas, polars) or table.column('label') (pyarrow)"
        )
    if isinstance(values, Mapping):
        raise TypeError(
            f"{what} is a {kind} (its keys would be counted): pass a sequence of labels, e.g. list(d.values())"
        )
    if isinstance(values, AbstractSet):
        raise TypeError(f"{what} is a {kind}: a set has no order and no repeats, pass one label per sample in order")
    if not hasattr(values, "__len__"):
        raise TypeError(
            f"{what} is a {kind} of unknown length: pass a list or an array (e.g. list(...) of it)"
        )
    if hasattr(values, "__array__"):  # pandas, polars, pyarrow: their own conversion (nulls become NaN/None)
        return np.asarray(values)
    return _from_sequence(list(values))


def _from_sequence(items: list[Any]) -> np.ndarray:
    kinds = set(map(type, items))
    target = _HOMOGENEOUS.get(kinds.pop()) if len(kinds) == 1 else None
    # (Mutation testing: "" for this first None is overwritten before use, and dtype=None infers the same dtype for
    # one Python type: equivalent mutants.)
    converted: np.ndarray | None = None
    if target is np.str_ and "\x00" in "".join(items):
        target = None  # numpy's fixed-width str arrays drop trailing NULs: keep the str objects as they are
    try:
        converted = np.array(items, dtype=target) if target is not None else None
    except (OverflowError, ValueError):
        converted = None
    if converted is None or converted.ndim != 1:
        converted = _object_rows(items)
    return converted


def _object_rows(items: list[Any]) -> np.ndarray:
    for position, item in enumerate(items):
        if np.ndim(item) != 0:
            raise ValueError(
                f"labels must be scalars (one per sample), got {show(item)} at position {position}"
            )
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _whole_numbers(arr: np.ndarray, what: str) -> np.ndarray:
    """A float array of whole numbers as int64 labels; missing or fractional values raise."""
    missing = np.isnan(arr)
    if missing.any():
        bad = int(np.flatnonzero(missing)[0])
        raise ValueError(
            f"{what}[{bad}] is missing (NaN, None or NA): drop missing labels before counting, nothing was counted"
        )
    wrong = ~(np.abs(arr) < LABEL_INT_BOUND) | (arr != np.floor(arr))
    if wrong.any():
        bad = int(np.flatnonzero(wrong)[0])
        check_label(float(arr[bad]))  # raises with the reason (a score, or out of range)
    return arr.astype(np.int64)


def _identity_span(index: ClassIndex) -> int:
    """How many of the ints 0, 1, 2, ... are their own class index (0 when the label 0 is not index 0)."""
    ids, span = index.ids, 0
    # (Mutation testing: a smaller span (0 or -1) only skips the shortcut, the lookup table maps the same: equivalent.)
    while ids.get(span) == span:
        span += 1
    return span


def _lookup_integers(arr: np.ndarray, index: ClassIndex) -> tuple[IndexArray, bool] | None:
    """Map an integer/bool array through a lookup table; None when its range is too wide.

    Returns the indices, -1 where a label is unknown, and whether every label is
    known for sure (else the caller looks for -1). Labels that are their own indices (0..K-1 registered
    in order, the usual case) cost one pass: their maximum, read unsigned so that a
    negative label reads as huge.
    """
    # (Mutation testing: this function only picks the fastest exact way; mutants that skip the identity shortcut,
    # widen or narrow the table, report `complete` False (the caller then checks for -1) or change the span
    # limit map the same labels to the same indices: equivalent.)
    if arr.dtype.kind == "b":
        lo, hi = 0, 1
    else:
        if arr.dtype.kind == "i" and int(arr.view(f"u{arr.itemsize}").max()) < _identity_span(index):
            return arr.astype(np.intp, copy=False), True
        lo, hi = int(arr.min()), int(arr.max())
        if hi - lo >= max(_LUT_SPAN, 2 * len(arr)):
            return None
    lut = np.full(hi - lo + 1, -1, np.intp)
    for label, i in index.ids.items():
        if isinstance(label, (int, float)) and label == int(label) and lo <= label <= hi:
            lut[int(label) - lo] = i
    values = arr.astype(np.intp, copy=False)  # also turns a bool array into 0/1 indices, not a mask
    if lo >= 0 and lut[0] == lo and np.array_equal(lut, np.arange(lo, hi + 1)):  # (-1 marks unknown)
        return values, True  # labels are their own indices: nothing to map
    return lut[values - lo if lo else values], bool(lut.min() >= 0)


def _python_value(value: Any, kind: str) -> Hashable:
    # (Mutation testing: np.unique's values are NumPy scalars and .item() of a bool is a bool, so mutants of these
    # two conditions give equal labels: equivalent.)
    item = value.item() if isinstance(value, np.generic) else value
    label: Hashable = bool(item) if kind == "b" else item
    return label


def _pend(label: Hashable, index: ClassIndex, pending: dict[Hashable, int]) -> int:
    """The provisional index of a new label; over the cap raises at once (no more work than the cap)."""
    # (Mutation testing: `>` only defers the refusal by one label: map_labels' own new_labels call then raises the
    # same "too many classes" ValueError: an equivalent mutant.)
    i = pending.get(label)
    if i is None:
        i = pending[label] = len(index) + len(pending)
        if i >= index.max_classes:
            index.new_labels(pending)  # raises: an invalid label, or too many classes
    return i


def map_one(arr: np.ndarray, index: ClassIndex, pending: dict[Hashable, int]) -> IndexArray:
    """Indices for one array; unknown labels get provisional ids in ``pending``."""
    kind = arr.dtype.kind
    # (Mutation testing: skipping the integer lookup, or its result, falls back to np.unique below, and index.get
    # of None falls back to check_label: the same indices, equivalent mutants. So are "XXbiuXX" (a kind is one
    # character), any argsort kind (first positions are distinct), kind None for _python_value (np.unique's bools
    # are np.bool_, whose .item() is a bool) and reshape(None)/(-2) of the 1-D inverse (NumPy reads both as -1).)
    if not len(arr):  # the empty partner of predict_many/label_many
        return np.empty(0, np.intp)
    if kind in "biu":
        looked_up = _lookup_integers(arr, index)
        if looked_up is not None:
            out, complete = looked_up
            if complete or int(out.min()) >= 0:
                return out  # every label known: the common case
    if kind == "O":
        out = np.empty(len(arr), np.intp)
        ids = index.ids
        for position, value in enumerate(arr):
            i = index.get(value)
            if i is None:
                label = check_label(value)
                i = ids.get(label)
                if i is None:
                    i = _pend(label, index, pending)
            out[position] = i
        return out
    uniques, first, inverse = np.unique(arr, return_index=True, return_inverse=True)
    ids_of = np.empty(len(uniques), np.intp)
    for u in np.argsort(first, kind="stable"):
        label = _python_value(uniques[u], kind)
        i = index.get(label)
        ids_of[u] = i if i is not None else _pend(label, index, pending)
    return ids_of[inverse.reshape(-1)]


def label_kinds(arr: np.ndarray) -> set[str]:
    """The label kinds (str / int) of an array: from its dtype, or one pass over an object array."""
    # (Mutation testing: a mutated dtype test sends the array to the per-value pass below, which gives the same
    # set, only slower: equivalent mutants.)
    if arr.dtype.kind == "U":
        return {"str"}
    if arr.dtype.kind in "biu":
        return {"int"}
    return {label_kind(value) for value in set(arr.tolist())}


def map_labels(
    truth: np.ndarray, preds: np.ndarray, index: ClassIndex
) -> tuple[IndexArray, IndexArray, list[Hashable]]:
    """Class indices of two label arrays, and the new labels (validated, in first-seen order).

    New labels are ordered as ``update`` would see them one sample at a time
    (true label, then predicted label, sample by sample); their indices are the
    ones ``ClassIndex.register(new)`` will assign. Raises (changing nothing) on an
    invalid label, when the new labels would pass ``max_classes`` (as soon as they
    do: the work is linear in the batch, whatever the number of new labels), or
    when the batch shares no label type with the declared classes.
    """
    # (Mutation testing: equivalent mutants below: dtypes left out are inferred int64/intp; first positions are
    # distinct, so any argsort kind sorts them alike, and 3·at + offset orders them like 2·at + offset; offset 1
    # for truth too only ties a true label with a predicted one of the same sample, and the true one, pended
    # first, has the lower provisional id; kinds computed when nothing is declared are not checked.)
    pending: dict[Hashable, int] = {}
    true_idx = map_one(truth, index, pending)
    pred_idx = map_one(preds, index, pending)
    return settle_new(true_idx, pred_idx, pending, index, lambda: label_kinds(truth) | label_kinds(preds))


def settle_new(true_idx: IndexArray, pred_idx: IndexArray, pending: dict[Hashable, int], index: ClassIndex,
               kinds_of: Callable[[], set[str]]) -> tuple[IndexArray, IndexArray, list[Hashable]]:
    """Give the ``pending`` labels (provisional ids ``len(index)...``) their final indices, in first-seen order
    (true then predicted, sample by sample), and validate them (``ClassIndex.new_labels``; ``kinds_of()``: the
    batch's label kinds, checked against declared classes); every pending label is held by some sample."""
    if not pending:
        return true_idx, pred_idx, []
    known = len(index)
    first = np.full(len(pending), np.iinfo(np.int64).max, np.int64)  # first position, interleaved true/pred
    for idx, offset in ((true_idx, 0), (pred_idx, 1)):
        at = np.flatnonzero(idx >= known)
        if len(at):
            fresh, where = np.unique(idx[at] - known, return_index=True)
            first[fresh] = np.minimum(first[fresh], 2 * at[where] + offset)
    provisional = list(pending)  # in the order of their provisional ids
    order = [provisional[i] for i in np.argsort(first, kind="stable")]
    kinds = kinds_of() if index.declared else None
    new = index.new_labels(order, kinds=kinds)  # validates, checks the cap and the declared types
    remap = np.arange(known + len(pending), dtype=np.intp)
    for rank, label in enumerate(order):
        remap[pending[label]] = known + rank
    return remap[true_idx], remap[pred_idx], new


def code_labels(
    truth: np.ndarray, preds: np.ndarray, index: ClassIndex
) -> tuple[IndexArray, IndexArray, IndexArray | None, list[Hashable]]:
    """Like ``map_labels``, but integer labels that are all known come back as codes, not indices.

    Returns ``(true, pred, lut, new)``: class index = ``lut[code]``, or the codes are the
    indices when ``lut`` is None. When every integer between the smallest and largest
    label is a known class (labels 0..K-1 registered in any order, the usual case),
    the codes are the labels themselves (shifted when negative) and nothing is gathered
    per sample: counts are made over codes and permuted once (``streammon.counting.batch.to_index_square``).

    >>> idx = ClassIndex([2, 0, 1])
    >>> t, p, lut, new = code_labels(np.array([0, 2]), np.array([1, 1]), idx)
    >>> t.tolist(), p.tolist(), lut.tolist(), new
    ([0, 2], [1, 1], [1, 2, 0], [])
    """
    # (Mutation testing: "XXbiuXX" holds the same one-character kinds; an identity table kept instead of None
    # maps every code to itself; astype's copy= only copies; subtracting lo = 0 changes nothing: equivalent.)
    if truth.dtype.kind in "biu" and preds.dtype.kind in "biu" and len(truth):
        lut, lo = _dense_table(truth, preds, index)
        if lut is not None:
            if lo == 0 and np.array_equal(lut, np.arange(len(lut))):
                lut = None  # labels are their own indices
            true_codes = truth.astype(np.intp, copy=False)
            pred_codes = preds.astype(np.intp, copy=False)
            return (true_codes - lo, pred_codes - lo, lut, []) if lo else (true_codes, pred_codes, lut, [])
    true_idx, pred_idx, new = map_labels(truth, preds, index)
    return true_idx, pred_idx, None, new


def _dense_table(truth: np.ndarray, preds: np.ndarray, index: ClassIndex) -> tuple[IndexArray | None, int]:
    """The code -> index table over [lo, hi] of both arrays, when every integer in it is a known class."""
    k = len(index)
    # (Mutation testing: this only chooses the fast path; a table with an unknown code (-1) is refused below and
    # the caller then maps labels one by one. Mutants of the bool cases, the range limits, the fill value or the
    # (None, lo) result give the same table or that same fallback: equivalent.)
    if not (len(truth) and len(preds)):  # predict_many/label_many pass an empty partner
        return None, 0
    tops = [1 if a.dtype.kind == "b" else int(a.view(f"u{a.itemsize}").max()) for a in (truth, preds)]
    if max(tops) < k:  # no negative label (it reads huge unsigned), and the range can be dense
        lo, hi = 0, max(tops)
    else:
        lo = min(0 if a.dtype.kind == "b" else int(a.min()) for a in (truth, preds))
        hi = max(1 if a.dtype.kind == "b" else int(a.max()) for a in (truth, preds))
        if hi - lo >= k:  # more integers than classes: some label is unknown
            return None, 0
    ids = index.ids
    lut = np.array([ids.get(value, -1) for value in range(lo, hi + 1)], dtype=np.intp)
    return (lut, lo) if lut.min() >= 0 else (None, 0)
