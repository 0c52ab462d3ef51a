"""The checks every part of a state file's body is made of: an object's fields, a bounded int or number, a list of
a given length, a string, a matrix of counts (its non-zero cells), a label (``streammon.state_schema`` and
``streammon.pending.schema``).

>>> _int(3, "x", 0, 2)
Traceback (most recent call last):
...
streammon.state.StateError: x must be an int in [0, 2], got 3
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import numpy as np

from streammon.state import StateError, decode_label

MAX_COUNT = 2**53  # any count, and the number of samples: exact as a float, and sums of them fit int64


def _fields(value: Any, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise StateError(f"{where} must be an object with {', '.join(keys)}, got {type(value).__name__}")
    if set(value) != set(keys):
        missing, extra = sorted(set(keys) - set(value)), sorted(map(str, set(value) - set(keys)))
        raise StateError(f"{where}: missing {', '.join(missing) or 'none'}; unexpected {', '.join(extra) or 'none'}")
    return value


def _int(value: Any, where: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise StateError(f"{where} must be an int in [{low}, {high}], got {value!r:.60}")
    return value


def _real(value: Any, where: str, low: float, high: float, *, nan: bool = False, open_low: bool = False) -> float:
    number = type(value) in (int, float) and (low < value if open_low else low <= value) and value <= high
    if not (number or (nan and type(value) is float and math.isnan(value))):
        shown = f"({low}" if open_low else f"[{low}"
        raise StateError(f"{where} must be a number in {shown}, {high}]{' or NaN' if nan else ''}, got {value!r:.60}")
    return float(value)


def _list(value: Any, where: str, length: int | None = None, most: int | None = None) -> list[Any]:
    if not isinstance(value, list):
        raise StateError(f"{where} must be a list, got {type(value).__name__}")
    if (length is not None and len(value) != length) or (most is not None and len(value) > most):
        wanted = f"{length} entries" if length is not None else f"at most {most} entries"
        raise StateError(f"{where} must have {wanted}, got {len(value)}")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise StateError(f"{where} must be a string, got {value!r:.60}")
    return value


def _ints(values: list[Any], where: str, high: int) -> int:
    """Check a flat list of ints in [0, high]; their exact sum."""
    if not set(map(type, values)) <= {int}:
        bad = next(v for v in values if type(v) is not int)
        raise StateError(f"{where} must hold ints, got {bad!r:.60}")
    if values and not (min(values) >= 0 and max(values) <= high):
        raise StateError(f"{where} must hold ints in [0, {high}], got {min(values)} … {max(values)}")
    return sum(values)


def _dense(value: Any, where: str, side: int) -> int:
    """Check a side × side matrix of counts written out in full (state files before version 4); its exact sum."""
    return sum(_ints(_list(row, f"{where}[{i}]", side), f"{where}[{i}]", MAX_COUNT)
               for i, row in enumerate(_list(value, where, side)))


def _matrix(value: Any, where: str, side: int) -> int:
    """Check a side × side matrix of counts as its non-zero cells (``streammon.counting.sparse``); its exact sum.

    ``cells``: ints in [0, side²), strictly increasing; ``counts``: as many ints in [1, 2⁵³].

    >>> _matrix({"cells": [0, 3], "counts": [2, 1]}, "m", 2)
    3
    >>> _matrix({"cells": [3, 0], "counts": [2, 1]}, "m", 2)
    Traceback (most recent call last):
    ...
    streammon.state.StateError: m.cells must be strictly increasing (sorted, no cell twice): 3 then 0
    """
    value = _fields(value, where, ("cells", "counts"))
    cells = _list(value["cells"], f"{where}.cells", most=side * side)
    counts = _list(value["counts"], f"{where}.counts", len(cells))
    _ints(cells, f"{where}.cells", side * side - 1)
    if not set(map(type, counts)) <= {int} or (counts and min(counts) < 1) or (counts and max(counts) > MAX_COUNT):
        bad = next(c for c in counts if type(c) is not int or not 1 <= c <= MAX_COUNT)
        raise StateError(f"{where}.counts must hold ints in [1, {MAX_COUNT}] (zeros are not stored), got {bad!r:.60}")
    ids = np.asarray(cells, dtype=np.int64)  # ints in [0, side²): int64, 8 bytes each of at least 2 in the file
    steps = np.flatnonzero(np.diff(ids) <= 0)
    if steps.size:
        at = int(steps[0])
        raise StateError(f"{where}.cells must be strictly increasing (sorted, no cell twice): {cells[at]} then "
                         f"{cells[at + 1]}")
    return sum(counts)


def _label(value: Any, where: str) -> Hashable:
    try:
        label = decode_label(value)
    except StateError as exc:
        raise StateError(f"{where}: {exc}") from None
    if isinstance(label, float) and math.isnan(label):
        raise StateError(f"{where}: a NaN label is not a class")
    return label
