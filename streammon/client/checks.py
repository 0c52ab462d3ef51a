"""The client's checks of one value: the server's rules (``docs/reference/http-api.md``), in the standard library.

The client's hot path checks plain values inline (a ``str`` of printable characters within its length, an ``int``
within int64) and calls these for anything else: subclasses (``StrEnum``, ``IntEnum``), NumPy scalars (by duck
typing: no NumPy import), whole floats, ``datetime`` times, and the errors. A value the server would refuse is
refused here, at the call, so that it never costs the batch it would have been sent in (a ``400`` refuses a whole
batch). Types raise ``TypeError``, values ``ValueError``; the message names the value and what was expected.

>>> key("tx-1"), key(7), label(1.0, "y_pred"), label(True, "y_true")
('tx-1', 7, 1, True)
>>> label(0.73, "y_pred")
Traceback (most recent call last):
...
ValueError: y_pred 0.73 is a float that is not a whole number: it looks like a score: threshold it first
>>> key(b"tx-1")
Traceback (most recent call last):
...
TypeError: key b'tx-1' (bytes) is not a prediction key: expected a str or an int
"""

from __future__ import annotations

import math
import operator
from datetime import datetime, timezone
from itertools import chain
from typing import Any

MAX_KEY_LENGTH = 512  # characters of a str key (streammon.pending.keys.MAX_KEY_LENGTH)
MAX_LABEL_LENGTH = 256  # characters of a str label (streammon.counting.counts.MAX_LABEL_LENGTH)
INT_BOUND = 2**63  # keys: -2**63 <= key < 2**63; labels: -2**63 < label < 2**63 (as the server)
MAX_TIME = 1e12  # seconds: times within ±10**12 (streammon.counting.timing.MAX_TIME)
SUM_TOLERANCE = 1e-4  # |sum of a row of class probabilities - 1| (streammon.counting.score_input.SUM_TOLERANCE)
MAX_SCORE_CLASSES = 64  # probabilities a row (streammon.counting.scoring.MAX_SCORE_CLASSES)
_FLOATS, _LISTS, _TUPLES = {float}, {list}, {tuple}
UNPRINTABLE = [False]  # becomes [True] once a str with unprintable characters (a tab ...) passed: see wire._array
Label = str | int | bool
Key = str | int


def show(value: Any) -> str:
    """A short repr of ``value`` for an error message (never fails).

    >>> show("x" * 50), show(2**100)
    ("'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'… (50 characters)", '<an int of 101 bits>')
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"<an int of {value.bit_length()} bits>"
    if isinstance(value, str) and len(value) > 40:
        return f"{str.__str__(value)[:40]!r}… ({len(value)} characters)"
    try:
        text = repr(value)
    except Exception:  # a repr that fails must not hide the real error
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


def _text(value: str, what: str, most: int) -> str:
    text = str.__str__(value)  # a str subclass (StrEnum, numpy.str_) is sent as its str
    if not 0 < len(text) <= most:
        raise ValueError(f"{what} {show(text)} has {len(text)} characters: expected 1 to {most}")
    if not text.isprintable():
        if any("\ud800" <= c <= "\udfff" for c in text):
            raise ValueError(f"{what} {show(text)} holds a lone surrogate: it is not valid Unicode and cannot be "
                             "sent")
        UNPRINTABLE[0] = True
    return text


def _numpy_bool(value: Any) -> bool:
    cls = type(value)
    return cls.__module__ == "numpy" and cls.__name__ in ("bool_", "bool")


def _index(value: Any, what: str) -> int:
    try:
        return operator.index(value)
    except TypeError:  # e.g. a NumPy array of one element: it has __index__, and refuses it
        raise TypeError(f"{what} {show(value)} ({type(value).__name__}) is not a plain integer: expected a str or "
                        "an int") from None


def key(value: Any) -> Key:
    """A prediction key as sent: a ``str`` (1 to 512 characters) or an ``int`` within int64."""
    if isinstance(value, str):
        return _text(value, "key", MAX_KEY_LENGTH)
    if isinstance(value, bool) or _numpy_bool(value) or isinstance(value, float):
        raise TypeError(f"key {show(value)} ({type(value).__name__}) is not a prediction key: expected a str or an "
                        "int (a bool or a float would merge with the int key of the same value)")
    if isinstance(value, int) or hasattr(type(value), "__index__"):  # int subclasses, NumPy integers
        number = _index(value, "key")
        if -INT_BOUND <= number < INT_BOUND:
            return number
        raise ValueError(f"key {show(number)} is out of range: int keys must fit int64")
    raise TypeError(f"key {show(value)} ({type(value).__name__}) is not a prediction key: expected a str or an int")


def label(value: Any, what: str) -> Label:
    """A class label as sent (``what`` names the argument in errors): a ``str`` (1 to 256 characters), a ``bool``
    or an ``int`` within int64; a whole float is its ``int``."""
    if isinstance(value, str):
        return _text(value, what, MAX_LABEL_LENGTH)
    if isinstance(value, bool) or _numpy_bool(value):
        return bool(value)
    if isinstance(value, int) or (hasattr(type(value), "__index__") and not isinstance(value, float)):
        number = _index(value, what)
        if -INT_BOUND < number < INT_BOUND:
            return number
        raise ValueError(f"{what} {show(number)} is out of range: int labels must be within ±2**63 (int64)")
    if isinstance(value, float) or (type(value).__module__ == "numpy" and hasattr(value, "__float__")):
        real = float(value)
        if math.isnan(real):
            raise ValueError(f"{what} {show(value)} is missing (NaN): drop missing labels before sending them")
        if not math.isfinite(real):
            raise ValueError(f"{what} {show(value)} is not a class: expected a finite whole number, a str or a bool")
        if real != math.floor(real):
            raise ValueError(f"{what} {show(value)} is a float that is not a whole number: it looks like a score: "
                             "threshold it first")
        return label(int(real), what)
    if value is None:
        raise ValueError(f"{what} None is missing: drop missing labels before sending them")
    raise TypeError(f"{what} {show(value)} ({type(value).__name__}) is not a class label: expected a str, an int, "
                    "a bool or a whole float")


def when(value: Any) -> float:
    """A time as sent: seconds (an ``int`` or a ``float``, not a ``bool``) or a ``datetime`` (a naive one is UTC),
    finite, within ±10**12 s.

    >>> when(1700000000), when(datetime(2024, 1, 1))
    (1700000000.0, 1704067200.0)
    """
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(value, datetime):
        seconds = (value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)).timestamp()
    elif numeric or (type(value).__module__ == "numpy" and hasattr(value, "__float__") and not _numpy_bool(value)):
        seconds = float(value)
    else:
        raise TypeError(f"t {show(value)} ({type(value).__name__}) is not a time: expected seconds (an int or a "
                        "float) or a datetime")
    if not -MAX_TIME <= seconds <= MAX_TIME:  # NaN fails this too
        raise ValueError(f"t {show(value)} is not a time: expected finite seconds within ±1e12")
    return seconds


def _probability(value: Any, what: str) -> float:
    """One probability: an int or a float (a NumPy number too), not a bool, finite, in [0, 1]."""
    if isinstance(value, bool) or _numpy_bool(value):
        raise TypeError(f"{what} {show(value)} is a bool, not a probability: expected a number in [0, 1] (the "
                        "model's score, not its decision)")
    if isinstance(value, (int, float)) or (type(value).__module__ == "numpy" and hasattr(value, "__float__")
                                           and getattr(value, "ndim", 0) == 0):  # NumPy scalars, not arrays
        try:
            number = float(value)
        except OverflowError:  # an int beyond float64
            number = math.inf
        if 0.0 <= number <= 1.0:  # NaN fails this too
            return number
        raise ValueError(f"{what} {show(value)} is not a probability: expected a finite number in [0, 1]")
    raise TypeError(f"{what} {show(value)} ({type(value).__name__}) is not a score: expected a number in [0, 1] "
                    "or a list of class probabilities")


def score(value: Any, what: str = "y_score") -> float | tuple[float, ...]:
    """A score as sent: a binary model's positive-class probability (a float in [0, 1]) or one row of K class
    probabilities (a list, a tuple or a 1-D array of 2 to 64 numbers in [0, 1] summing to 1 within 1e-4), in the
    monitor's class order, which only the server knows: it checks K.

    >>> score(0.25), score(1), score([0.2, 0.3, 0.5])
    (0.25, 1.0, (0.2, 0.3, 0.5))
    >>> score([0.2, 0.3])
    Traceback (most recent call last):
    ...
    ValueError: y_score [0.2, 0.3] sums to 0.5: a row of class probabilities must sum to 1 (within 0.0001)
    """
    cls = type(value)
    if (cls is list or cls is tuple) and 2 <= len(value) <= MAX_SCORE_CLASSES and set(map(type, value)) == _FLOATS:
        row = tuple(value)  # plain floats: a finite sum near 1 leaves no NaN or inf, min and max the range
        if abs(sum(row) - 1.0) <= SUM_TOLERANCE and min(row) >= 0.0 and max(row) <= 1.0:
            return row
    if isinstance(value, (list, tuple)) or (hasattr(value, "tolist") and getattr(value, "ndim", 0) == 1):
        items = value.tolist() if hasattr(value, "tolist") else value
        if not 2 <= len(items) <= MAX_SCORE_CLASSES:
            raise ValueError(f"{what} {show(value)} has {len(items)} probabilities: expected a number (a binary "
                             f"model's positive-class score) or a row of 2 to {MAX_SCORE_CLASSES} class "
                             "probabilities")
        row = tuple(_probability(p, what) for p in items)
        total = sum(row)
        if not abs(total - 1.0) <= SUM_TOLERANCE:
            raise ValueError(f"{what} {show(value)} sums to {total:.6g}: a row of class probabilities must sum to 1 "
                             f"(within {SUM_TOLERANCE:g})")
        return row
    if hasattr(value, "tolist") and getattr(value, "ndim", None) == 0:  # a 0-d array: its number
        value = value.tolist()
    return _probability(value, what)


def scores(values: Any, rows: int) -> list[float | tuple[float, ...]]:
    """A batch's ``y_score`` as sent: one score per row (see ``score``), all numbers or all rows of one length
    (the server reads the batch as one 1-D or (n, K) array).

    >>> scores([0.1, 0.9], 2), scores([[0.5, 0.5]], 1)
    ([0.1, 0.9], [(0.5, 0.5)])
    >>> scores([0.1, [0.5, 0.5]], 2)
    Traceback (most recent call last):
    ...
    ValueError: y_score[1] [0.5, 0.5] is a row of 2 class probabilities, y_score[0] a number: one form for all
    """
    given = column(values, "y_score")
    if len(given) != rows:
        raise ValueError(f"y_score must have one score (or row of class probabilities) per row ({rows}), got "
                         f"{len(given)}")
    if given and set(map(type, given)) == _FLOATS and min(given) >= 0.0 and max(given) <= 1.0 \
            and math.isfinite(sum(given)):  # plain floats in range (a NaN would make the sum NaN): C-level passes
        return given
    if given and _rows_ok(given):
        return list(map(tuple, given))
    try:
        out = [score(v) for v in given]
    except (TypeError, ValueError):
        for i, v in enumerate(given):  # again, to name the first bad row's position
            score(v, f"y_score[{i}]")
        raise
    if out:
        width = _width(out[0])
        odd = next((i for i, s in enumerate(out) if _width(s) != width), None)
        if odd is not None:
            def form(i: int) -> str:
                return "a number" if _width(out[i]) == 0 else f"a row of {_width(out[i])} class probabilities"
            raise ValueError(f"y_score[{odd}] {show(given[odd])} is {form(odd)}, y_score[0] {form(0)}: one form "
                             "for all")
    return out


def _rows_ok(given: list[Any]) -> bool:
    """Rows (lists or tuples, as from an (n, K) array's ``tolist``) of one length, 2 to 64 plain floats each, in
    [0, 1], each summing to 1 within the tolerance: C-level passes, no Python call per row. False sends them to the
    full check (which says what is wrong, or accepts rows this quick test does not cover)."""
    kinds = set(map(type, given))
    if kinds not in (_LISTS, _TUPLES):
        return False
    widths = set(map(len, given))
    if len(widths) != 1 or not 2 <= min(widths) <= MAX_SCORE_CLASSES \
            or set(map(type, chain.from_iterable(given))) != _FLOATS:
        return False
    sums = list(map(sum, given))
    if not math.isfinite(sum(sums)):  # a NaN anywhere makes it NaN (min and max may step over one)
        return False
    off = max(map(abs, map((1.0).__rsub__, sums)))  # |sum - 1| of each row, as ``score`` computes it
    return off <= SUM_TOLERANCE and min(map(min, given)) >= 0.0 and max(map(max, given)) <= 1.0


def _width(value: float | tuple[float, ...]) -> int:
    return len(value) if type(value) is tuple else 0


def column(values: Any, what: str) -> list[Any]:
    """A batch argument as a list: a list, a tuple, a range or anything with ``tolist()`` (a NumPy array, a pandas
    Series), never a str, bytes, a dict, a set or an iterator of unknown length.

    >>> column(("a", "b"), "y_true"), column(range(2), "keys")
    (['a', 'b'], [0, 1])
    >>> column("ab", "y_true")
    Traceback (most recent call last):
    ...
    TypeError: y_true must be a list, a tuple or a 1-D array, got str
    """
    if isinstance(values, (list, tuple, range)):
        return list(values)
    tolist = getattr(values, "tolist", None)
    if tolist is not None and not isinstance(values, (str, bytes)):
        out = tolist()
        if isinstance(out, list):
            return out
    raise TypeError(f"{what} must be a list, a tuple or a 1-D array, got {type(values).__name__}")
