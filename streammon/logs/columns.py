"""Arrow columns of a log as the numpy arrays ``Monitor.update_many`` takes, with errors that say where.

Labels: integer and boolean columns pass as they are (no copy when they have no nulls);
string columns are dictionary-encoded and each dictionary is turned into labels once,
then gathered by its integer indices. Float columns follow ``Monitor.update_many``'s rule
(``streammon.counting.labels.as_label_array``): whole numbers are int labels, a fraction is
refused as a score, a NaN as a missing label. Times: timestamps (any unit, any time zone: UTC
seconds), dates (midnight UTC) or numbers of seconds, as float64 seconds. A null, a NaN,
a column of another type or a time earlier than the one before raises ``ReplayError``
naming the file, the column and the row (0-based, counted over the file's data rows).

>>> import pyarrow as pa
>>> labels(pa.array(["b", "a", "b"]).dictionary_encode(), Where("log.csv", "pred", 0)).tolist()
['b', 'a', 'b']
>>> seconds(pa.array([0, 1_500_000], pa.timestamp("us")), Where("log.csv", "t", 0)).tolist()
[0.0, 1.5]
>>> labels(pa.array([1, None]), Where("log.csv", "true", 10))
Traceback (most recent call last):
...
streammon.logs.errors.ReplayError: log.csv, column 'true', row 11: null label (every row needs a class label)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

from streammon.counting.coded import Coded
from streammon.counting.counts import LABEL_INT_BOUND
from streammon.counting.labels import as_label_array
from streammon.logs.errors import ReplayError

LABEL_TYPES = "integers, booleans, strings or whole-number floats"
KEY_TYPES = "strings or integers"
TIME_TYPES = "timestamps, dates or numbers of seconds"
DATES_FROM = 946_684_800.0  # 2000-01-01 UTC: times from here on are read as timestamps (UTC seconds since 1970)
DATES_UNTIL = 253_402_300_800.0  # 10000-01-01 UTC: the first time datetime cannot show
UNIT_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


@dataclass(frozen=True)
class Where:
    """A column of a file, from a first row: what an error names."""

    file: str
    column: str
    first_row: int

    def error(self, message: str, offset: int | None = None) -> ReplayError:
        """A ``ReplayError`` at row ``first_row + offset`` (no row when ``offset`` is None)."""
        row = None if offset is None else self.first_row + offset
        return ReplayError(message, file=self.file, column=self.column, row=row)


def label_kind(arrow_type: Any) -> str | None:
    """``"int"``, ``"bool"`` or ``"str"`` for a column type that holds class labels, else None (a float column
    holds int labels, each checked to be a whole number when read, as ``update_many`` checks them).

    >>> import pyarrow as pa
    >>> label_kind(pa.float64()), label_kind(pa.int8()), label_kind(pa.binary())
    ('int', 'int', None)
    """
    import pyarrow as pa

    if pa.types.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type
    if pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type):
        return "int"
    if pa.types.is_boolean(arrow_type):
        return "bool"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) or (
            pa.types.is_string_view(arrow_type)):
        return "str"
    return None


def kind_text(arrow_type: Any) -> str:
    """What a label column holds, said in an error (a float column: int labels only if whole numbers).

    >>> import pyarrow as pa
    >>> kind_text(pa.string()), kind_text(pa.float64())
    ('str labels', 'floats (int labels only when whole numbers: scores? threshold them into class labels first)')
    """
    import pyarrow as pa

    value_type = arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type
    if pa.types.is_floating(value_type):
        return "floats (int labels only when whole numbers: scores? threshold them into class labels first)"
    return f"{label_kind(arrow_type)} labels"


def is_time_type(arrow_type: Any) -> bool:
    """Whether a column of this type can give sample times."""
    import pyarrow as pa

    return bool(pa.types.is_timestamp(arrow_type) or pa.types.is_date(arrow_type)
                or pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type))


def key_kind(arrow_type: Any) -> str | None:
    """``"int"`` or ``"str"`` for a column type that holds prediction keys, else None."""
    import pyarrow as pa

    if pa.types.is_floating(arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type):
        return None
    kind = label_kind(arrow_type)
    return kind if kind in ("int", "str") else None


def check_names(names: list[str], file: str, used: Iterable[str | None] | None = None) -> None:
    """No column name read (of ``used``; all when None) appears twice: which of the two to read is not for a
    reader to guess. Names given twice that are not read (``y,p,,`` from a spreadsheet) are left alone.

    >>> check_names(["y", "y", "p"], "log.csv")
    Traceback (most recent call last):
    ...
    streammon.logs.errors.ReplayError: log.csv, column 'y': the column name 'y' appears 2 times in the header: \
rename the columns so that each name is given once
    """
    names = [str(name) for name in names]
    read = set(names) if used is None else {str(name) for name in used if name is not None}
    twice = next((n for n in names if n in read and names.count(n) > 1), None)
    if twice is not None:
        raise ReplayError(f"the column name {twice!r} appears {names.count(twice)} times in the header: rename the "
                          "columns so that each name is given once", file=file, column=twice)


def check_types(schema: Any, names: dict[str, str | None], file: str) -> None:
    """Every named column is in ``schema`` (once) and of a usable type (``names``: role -> column)."""
    check_names(schema.names, file, names.values())
    present = set(schema.names)
    for role, column in names.items():
        if column is None:
            continue
        if column not in present:
            shown = ", ".join(repr(n) for n in schema.names[:20])
            raise ReplayError(f"no column {column!r} (the {role} column); the file has {shown}", file=file,
                              column=column)
        arrow_type = schema.field(column).type
        if role == "time" and not is_time_type(arrow_type):
            raise ReplayError(f"type {arrow_type} cannot be a time: expected {TIME_TYPES}", file=file, column=column)
        if role == "key" and key_kind(arrow_type) is None:
            raise ReplayError(f"type {arrow_type} cannot hold prediction keys: expected {KEY_TYPES}", file=file,
                              column=column)
        if role.startswith("score"):
            import pyarrow as pa

            if not (pa.types.is_floating(arrow_type) or pa.types.is_integer(arrow_type)):
                raise ReplayError(f"type {arrow_type} cannot hold scores: expected floating-point probabilities",
                                  file=file, column=column)
            continue
        if role not in ("time", "key") and label_kind(arrow_type) is None:
            raise ReplayError(f"type {arrow_type} cannot hold class labels: expected {LABEL_TYPES}",
                              file=file, column=column)


def _no_nulls(array: Any, where: Where, what: str) -> None:
    if array.null_count:
        import pyarrow.compute as pc

        first = int(pc.index(pc.is_null(array), True).as_py())
        raise where.error(f"null {what}", first)


class DictionaryCache:
    """Each distinct dictionary of a string column turned into labels once (the last one is kept)."""

    def __init__(self) -> None:
        self._dictionary: Any = None
        self._labels: np.ndarray = np.empty(0, dtype=object)

    def labels_of(self, dictionary: Any) -> np.ndarray:
        """The dictionary's values as an object array of Python labels."""
        if self._dictionary is None or not (self._dictionary is dictionary or self._dictionary.equals(dictionary)):
            values = np.empty(len(dictionary), dtype=object)
            values[:] = dictionary.to_pylist()
            self._dictionary, self._labels = dictionary, values
        return self._labels


def labels(array: Any, where: Where, cache: DictionaryCache | None = None) -> np.ndarray:
    """A label column (an Arrow array) as a numpy array of labels."""
    column = label_column(array, where, cache)
    return column.labels() if isinstance(column, Coded) else column


def keys(array: Any, where: Where, cache: DictionaryCache | None = None) -> np.ndarray:
    """A key column (an Arrow array of strings or integers) as a numpy array of keys.

    >>> import pyarrow as pa
    >>> keys(pa.array(["k1", None]), Where("preds.csv", "id", 0))
    Traceback (most recent call last):
    ...
    streammon.logs.errors.ReplayError: preds.csv, column 'id', row 1: null key (every row needs a prediction key)
    """
    _no_nulls(array, where, "key (every row needs a prediction key)")
    if key_kind(array.type) is None:
        raise where.error(f"type {array.type} cannot hold prediction keys: expected {KEY_TYPES}")
    return labels(array, where, cache)


def label_column(array: Any, where: Where, cache: DictionaryCache | None = None) -> np.ndarray | Coded:
    """A label column (an Arrow array) as a numpy array of labels, or a string column as its dictionary codes
    and labels (``Coded``: ``update_many`` then maps each distinct label once, not each row)."""
    import pyarrow as pa

    _no_nulls(array, where, "label (every row needs a class label)")
    kind = label_kind(array.type)
    if kind is None:
        raise where.error(f"type {array.type} cannot hold class labels: expected {LABEL_TYPES}")
    if kind == "str" and not pa.types.is_dictionary(array.type):
        if pa.types.is_string_view(array.type):
            array = array.cast(pa.large_string())
        array = array.dictionary_encode()
    if pa.types.is_dictionary(array.type):
        if pa.types.is_floating(array.type.value_type):
            array = array.cast(array.type.value_type)
        else:
            values = (cache or DictionaryCache()).labels_of(array.dictionary)
            codes = array.indices.to_numpy(zero_copy_only=False)
            return Coded(codes, values)
    if pa.types.is_floating(array.type):
        return whole_labels(array.to_numpy(zero_copy_only=False), where)
    return array.to_numpy(zero_copy_only=False)  # type: ignore[no-any-return]


def whole_labels(values: np.ndarray, where: Where) -> np.ndarray:
    """A float label column as int64 labels by ``update_many``'s own rule (``as_label_array``): whole numbers
    pass, a fraction is refused as a score (with ``update_many``'s message) and a NaN as a missing label.

    >>> whole_labels(np.array([0.0, 1.0]), Where("log.csv", "y", 0)).tolist()
    [0, 1]
    >>> whole_labels(np.array([1.0, 0.5]), Where("log.csv", "y", 10))
    Traceback (most recent call last):
    ...
    streammon.logs.errors.ReplayError: log.csv, column 'y', row 11: label 0.5 is a float that is not a whole \
number: it looks like a score: threshold it first (e.g. y_pred = score >= 0.5) or pass the class labels
    """
    missing = np.isnan(values)
    if missing.any():
        raise where.error("NaN label (a missing label: every row needs a class label)",
                          int(np.flatnonzero(missing)[0]))
    try:
        return as_label_array(values, where.column)
    except ValueError as exc:
        wrong = (values != np.floor(values)) | ~(np.abs(values) < LABEL_INT_BOUND)
        raise where.error(str(exc), int(np.flatnonzero(wrong)[0]) if wrong.any() else None) from exc


def numbers(array: Any, where: Where) -> np.ndarray:
    """A score column (an Arrow array of floats or ints) as float64; a null, a NaN or a value outside [0, 1] is
    refused here, naming its column and row (the monitor would name only its index in the chunk; it still checks
    that a row of class probabilities sums to 1).

    >>> import pyarrow as pa
    >>> numbers(pa.array([0.2, 1.5]), Where("preds.csv", "s", 10))
    Traceback (most recent call last):
    ...
    streammon.logs.errors.ReplayError: preds.csv, column 's', row 11: score 1.5 is not a probability in [0, 1]
    """
    _no_nulls(array, where, "score")
    values = np.asarray(array.to_numpy(zero_copy_only=False), dtype=np.float64)
    bad = ~((values >= 0.0) & (values <= 1.0))  # NaN fails both comparisons
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise where.error(f"score {float(values[at])!r} is not a probability in [0, 1]", at)
    return values


def seconds(array: Any, where: Where) -> np.ndarray:
    """A time column (an Arrow array) as float64 seconds; timestamps as UTC seconds since 1970."""
    import pyarrow as pa

    _no_nulls(array, where, "time")
    kind = array.type
    if pa.types.is_timestamp(kind):
        ticks = array.view(pa.int64()).to_numpy()
        out = ticks / UNIT_PER_SECOND[kind.unit] if kind.unit != "s" else ticks.astype(np.float64)
    elif pa.types.is_date32(kind):
        out = array.view(pa.int32()).to_numpy().astype(np.float64) * 86_400.0
    elif pa.types.is_date64(kind):
        out = array.view(pa.int64()).to_numpy() / 1_000
    elif pa.types.is_integer(kind) or pa.types.is_floating(kind):
        out = array.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
    else:
        raise where.error(f"type {kind} cannot be a time: expected {TIME_TYPES}")
    if pa.types.is_floating(kind) and not np.isfinite(out).all():  # whole ticks and days are always finite
        raise where.error(f"time {float(out[~np.isfinite(out)][0])!r} is not a finite number of seconds",
                          int(np.flatnonzero(~np.isfinite(out))[0]))
    return out  # type: ignore[no-any-return]


def check_order(times: np.ndarray, last: float, where: Where) -> None:
    """Times never decrease, from ``last`` (the previous row's time) on."""
    if len(times) and times[0] < last:
        raise where.error(f"time {show_time(times[0])} is earlier than {show_time(last)}, the time of the row "
                          "before: rows must be in time order", 0)
    if len(times) > 1:
        back = times[1:] < times[:-1]
        if back.any():
            bad = int(np.flatnonzero(back)[0]) + 1
            raise where.error(f"time {show_time(times[bad])} is earlier than {show_time(times[bad - 1])}, the time "
                              "of the row before: rows must be in time order", bad)


def show_time(t: float) -> str:
    """Seconds as a person reads them in an error: the number, and the UTC date when it is after 2000.

    >>> show_time(1704067800.0), show_time(12.5)
    ('1704067800.0 (2024-01-01 00:10:00 UTC)', '12.5')
    """
    seconds = float(t)
    if DATES_FROM <= seconds < DATES_UNTIL:
        return f"{seconds!r} ({utc_date(seconds)})"
    return repr(seconds)


def utc_date(t: float) -> str:
    """UTC seconds since 1970 as a date and time.

    >>> utc_date(1704067800.0)
    '2024-01-01 00:10:00 UTC'
    """
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
