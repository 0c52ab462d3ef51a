"""Scores as given (``y_score=``), checked: what a monitor accepts, and the error for what it refuses.

A binary monitor takes the score of its positive class: a float per sample (``update``) or a 1-D array
(``update_many``), or the two-column ``predict_proba`` output in the order of the monitor's classes, of which
the positive class's column is kept. A monitor of K > 2 classes given up front takes an (n, K) array (a
sequence of K floats per sample) whose columns are the classes in the monitor's order (``Monitor.labels``).
Every score is finite and in [0, 1]; a row of K probabilities sums to 1 within ``SUM_TOLERANCE`` (float32
``softmax`` outputs are off by ~1e-7 a class). Anything else is refused with a ``ValueError``/``TypeError``
naming the value and what was expected — before anything is counted.

A table of scores that names its columns (a pandas or polars ``DataFrame``, a pyarrow ``Table``:
``pd.DataFrame(clf.predict_proba(X), columns=clf.classes_)``) is read by position like an array, so its names
must be the classes in that order (``check_column_names``): named in another order, its columns would be read as
the wrong classes' scores. A pandas frame's default column names 0, 1, …, K − 1 name no class and are read by
position — unless the classes are those very integers in another order (``classes=[1, 0]``), where the names
cannot be told from the defaults: refused, naming both ways out. One sample's row that names its entries (a
pandas ``Series``, ``df.iloc[i]``) is checked the same way by its index (``check_index_names``).

>>> as_score_rows([0.1, 0.9], 2, columns=1, positive=1).tolist()
[[0.1], [0.9]]
>>> as_score_rows([[0.7, 0.3], [0.2, 0.8]], 2, columns=1, positive=1).tolist()
[[0.3], [0.8]]
>>> as_score_rows([0.1, 1.5], 2, columns=1, positive=1)
Traceback (most recent call last):
...
ValueError: y_score[1] is 1.5: a score must be a probability in [0, 1]
>>> as_score_rows([[0.5, 0.4, 0.2]], 1, columns=3, positive=None)
Traceback (most recent call last):
...
ValueError: y_score row 0 sums to 1.1: the K = 3 class probabilities of a row must sum to 1 (within 0.0001)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.score_kernel import scores_ok

SUM_TOLERANCE = 1e-4  # |Σ_k p_k − 1| allowed in a row of class probabilities


def as_float_array(y_score: Any) -> npt.NDArray[np.float64]:
    """``y_score`` as a float64 array of any shape; ``TypeError`` if it is not numbers."""
    if isinstance(y_score, (str, bytes, dict, set)) or y_score is None:
        raise TypeError(f"y_score must be numbers (an array of probabilities), got {type(y_score).__name__}")
    try:
        arr = np.asarray(y_score)
    except (ValueError, TypeError) as exc:  # ragged rows
        raise ValueError(f"y_score must be a rectangular array of probabilities: {exc}") from None
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)
        except (ValueError, TypeError):
            raise TypeError(f"y_score must hold numbers only, got {y_score!r:.80}") from None
        except OverflowError:  # an int beyond float64
            raise ValueError(f"y_score must be probabilities in [0, 1], got a number beyond float64 in "
                             f"{y_score!r:.80}") from None
    if arr.dtype.kind == "b":  # as update() and the worker client refuse a bool: a decision, not a score
        raise TypeError("y_score must be probabilities, got booleans (decisions, not scores: a bool is no probability)")
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"y_score must hold numbers, got dtype {arr.dtype}")
    return arr.astype(np.float64, copy=False)


def check_column_names(y_score: Any, labels: tuple[Any, ...]) -> None:
    """Refuse a table of scores whose column names are not ``labels`` in order (compared as text, as they are
    exported); a table without names, or with pandas' default 0, …, K − 1, passes (read by position).

    >>> class Frame:  # what the check reads of a DataFrame: its ``columns``
    ...     columns = ["fraud", "legit"]
    >>> check_column_names(Frame(), ("fraud", "legit"))
    >>> check_column_names(Frame(), ("legit", "fraud"))
    Traceback (most recent call last):
    ...
    ValueError: y_score's columns ['fraud', 'legit'] are not the classes ['legit', 'fraud'] in that order: they \
would be read as the wrong classes' scores; pass y_score[['legit', 'fraud']]
    """
    # a pyarrow Table's ``columns`` are its arrays: its names are ``column_names``
    names = getattr(y_score, "column_names", None)
    if names is None:
        names = getattr(y_score, "columns", None)
    if names is None or isinstance(y_score, np.ndarray) or isinstance(names, (str, bytes)):
        return
    _check_names(names, labels, "columns")


def check_index_names(y_score: Any, labels: tuple[Any, ...]) -> None:
    """Refuse one sample's row of scores whose entries are named (a pandas ``Series``: a row ``df.iloc[i]`` of a
    named ``predict_proba`` frame) in another order than ``labels``, as ``check_column_names`` does for a table.

    >>> class Row:  # what the check reads of a Series: its ``index``
    ...     index = ["fraud", "legit"]
    >>> check_index_names(Row(), ("fraud", "legit"))
    >>> check_index_names([0.3, 0.7], ("legit", "fraud"))   # a list's ``index`` is a method: read by position
    >>> check_index_names(Row(), ("legit", "fraud"))
    Traceback (most recent call last):
    ...
    ValueError: y_score's index ['fraud', 'legit'] are not the classes ['legit', 'fraud'] in that order: they \
would be read as the wrong classes' scores; pass y_score[['legit', 'fraud']]
    """
    if isinstance(y_score, (np.ndarray, list, tuple)):
        return
    names = getattr(y_score, "index", None)
    if names is None or callable(names) or isinstance(names, (str, bytes)):
        return
    _check_names(names, labels, "index")


def _check_names(names: Any, labels: tuple[Any, ...], what: str) -> None:
    try:
        given = list(names)
    except TypeError:
        return
    text, classes = [str(c) for c in given], [str(c) for c in labels]
    if text == classes:
        return
    if given == list(range(len(given))):
        if sorted(text) != sorted(classes):
            return  # pandas' default names 0 … K − 1, which name no class: read by position
        # 0 … K − 1 are also the classes (int or bool ones), in another order
        raise ValueError(f"y_score's {what} {given!r:.200} are the classes {list(labels)!r:.200} in another order (or "
                         f"pandas' default names): pass y_score[{list(labels)!r:.200}] if they name the classes, "
                         "or y_score.to_numpy() if the columns already are in the classes' order")
    raise ValueError(f"y_score's {what} {given!r:.200} are not the classes {list(labels)!r:.200} in that order: "
                     f"they would be read as the wrong classes' scores; pass y_score[{list(labels)!r:.200}]")


def as_score_rows(y_score: Any, n: int, *, columns: int, positive: int | None) -> npt.NDArray[np.float64]:
    """``y_score`` of ``n`` samples as an (n, ``columns``) float64 array, checked (see the module docstring).
    ``columns`` is 1 for a binary monitor (``positive``: the column of a two-column input to keep), else K."""
    arr = as_float_array(y_score)
    if columns == 1:
        if arr.ndim == 2 and arr.shape[1] == 2:
            _check(arr, n, sums=True)
            assert positive is not None
            return np.ascontiguousarray(arr[:, positive:positive + 1])
        if arr.ndim != 1:
            raise ValueError(f"y_score of a binary monitor must be 1-D (the positive class's score of each sample) "
                             f"or (n, 2) class probabilities, got shape {arr.shape}")
        _check(arr, n, sums=False)
        return np.ascontiguousarray(arr.reshape(n, 1))
    if arr.ndim != 2 or arr.shape[1] != columns:
        raise ValueError(f"y_score of a monitor of K = {columns} classes must be (n, {columns}) class probabilities "
                         f"in the order of Monitor.labels, got shape {arr.shape}")
    _check(arr, n, sums=True)
    return np.ascontiguousarray(arr)


def _check(arr: npt.NDArray[np.float64], n: int, *, sums: bool) -> None:
    """Raise for the first bad value (or row sum, with ``sums``): one compiled pass over valid scores, the
    numpy checks below (which name what is wrong) only when it finds something."""
    if len(arr) != n:
        raise ValueError(f"y_score must have one score (row) per sample: {n} samples, got {len(arr)}")
    if n and scores_ok(np.ascontiguousarray(arr.reshape(n, -1)), SUM_TOLERANCE if sums else -1.0):
        return
    _check_values(arr, n)
    if sums:
        _check_sums(arr)


def _check_values(arr: npt.NDArray[np.float64], n: int) -> None:
    if len(arr) != n:
        raise ValueError(f"y_score must have one score (row) per sample: {n} samples, got {len(arr)}")
    bad = ~((arr >= 0.0) & (arr <= 1.0))  # NaN fails both comparisons
    if bad.any():
        at = np.argwhere(bad)[0]
        where = f"y_score[{at[0]}]" if arr.ndim == 1 else f"y_score[{at[0]}, {at[1]}]"
        value = float(arr[tuple(at)])
        raise ValueError(f"{where} is {value!r}: a score must be a probability in [0, 1]")


def _check_sums(arr: npt.NDArray[np.float64]) -> None:
    off = np.abs(arr.sum(axis=1) - 1.0) > SUM_TOLERANCE
    if off.any():
        row = int(np.flatnonzero(off)[0])
        raise ValueError(f"y_score row {row} sums to {float(arr[row].sum()):.6g}: the K = {arr.shape[1]} class "
                         f"probabilities of a row must sum to 1 (within {SUM_TOLERANCE:g})")


def as_score_row(y_score: Any, *, columns: int, positive: int | None) -> tuple[float, ...]:
    """One sample's score (``update``): a float for a binary monitor, else K floats; checked as a batch of one."""
    if columns == 1 and (isinstance(y_score, (int, float, np.number)) and not isinstance(y_score, bool)):
        return tuple(as_score_rows(np.asarray([y_score], dtype=np.float64), 1, columns=1,
                                   positive=positive)[0].tolist())
    if isinstance(y_score, bool):
        raise TypeError(f"y_score must be a probability, got {y_score!r}")
    arr = as_float_array(y_score)
    if arr.ndim == 0 and columns == 1:  # a 0-d array (np.asarray(0.3), a model's scalar output) is one number
        return tuple(as_score_rows(arr.reshape(1), 1, columns=1, positive=positive)[0].tolist())
    if arr.ndim == 0 and columns > 1:
        raise ValueError(f"y_score of one sample of a monitor of K = {columns} classes must be its {columns} class "
                         f"probabilities in the order of Monitor.labels, got the number {float(arr)!r}")
    if arr.ndim != 1:
        raise ValueError(f"y_score of one sample must be a number or one row of class probabilities, got shape "
                         f"{arr.shape}")
    return tuple(as_score_rows(arr.reshape(1, -1), 1, columns=columns, positive=positive)[0].tolist())
