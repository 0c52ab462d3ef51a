"""Sample times: what is accepted, checked before anything is counted.

Times are seconds (any real number type), finite, within ``±MAX_TIME`` (beyond it a timed
window's bucket id would overflow int64), and never earlier than the last sample's time: an
out-of-order sample is rejected, not counted. A clock that steps back is clamped instead.

Datetimes are accepted too and converted to Unix seconds: ``datetime.datetime`` and
``pandas.Timestamp`` (a naive one is taken as UTC, like ``numpy.datetime64``, which has no
time zone), ``numpy.datetime64`` scalars and arrays (a pandas, polars or Arrow datetime
column converts to one). A missing time (``NaT``, None) is rejected.

>>> from datetime import datetime, timezone
>>> as_seconds(datetime(2024, 1, 1, tzinfo=timezone.utc)), as_seconds(np.datetime64("2024-01-01"))
(1704067200.0, 1704067200.0)

>>> check_time(10, last=5.0)
10.0
>>> check_time(4.0, last=5.0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: t=4.0 is earlier than the last sample time 5.0: sample times must never decrease (timed windows ...
>>> clock_time(3.0, last=5.0)
5.0
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from numbers import Real
from typing import Any

import numpy as np

from streammon.counting.counts import is_missing, show

MAX_TIME = 1e12  # seconds: ±31 700 years of Unix time


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (Real, np.integer, np.floating))


_EPOCH = np.datetime64(0, "s")


def as_seconds(t: Any, what: str = "t") -> float:
    """One time as float seconds: a real number, or a datetime (naive ones are UTC).

    >>> as_seconds(10**400)
    Traceback (most recent call last):
    ...
    ValueError: t must be finite seconds within ±1e+12, got <an int of 1329 bits>
    """
    if isinstance(t, (datetime, np.datetime64)):
        if is_missing(t):
            raise ValueError(f"{what} is missing (NaT): expected a time, nothing was counted")
        if isinstance(t, np.datetime64):
            return float(_datetime64_seconds(np.asarray([t]))[0])
        return (t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)).timestamp()
    if not _is_number(t):
        raise TypeError(f"{what} must be a real number of seconds, a datetime or None, got {show(t)}")
    try:
        return float(t)
    except OverflowError:
        raise ValueError(f"{what} must be finite seconds within ±{MAX_TIME:g}, got {show(t)}") from None


def _datetime64_seconds(arr: np.ndarray) -> np.ndarray:
    """Unix seconds of a datetime64 array (NaT becomes NaN, rejected by ``check_times``)."""
    if np.datetime_data(arr.dtype)[0] in ("Y", "M"):  # calendar units: not a fixed number of seconds
        arr = arr.astype("datetime64[D]")
    unit, step = np.datetime_data(arr.dtype)
    tick = step * float(np.timedelta64(1, unit) / np.timedelta64(1, "s"))  # type: ignore[call-overload]
    # (Mutation testing: astype(None) is float64 too, and None stored in a float array is NaN: equivalent mutants.)
    seconds: np.ndarray = arr.view(np.int64).astype(np.float64) * tick
    seconds[np.isnat(arr)] = np.nan
    return seconds


def as_times(t: Any, size: int) -> np.ndarray:
    """A batch's per-sample times as float seconds (numbers or datetimes, one per sample).

    >>> as_times(np.array(["2024-01-01", "2024-01-02"], dtype="datetime64[D]"), 2).tolist()
    [1704067200.0, 1704153600.0]
    """
    times = np.asarray(t)
    if times.ndim != 1 or len(times) != size:
        raise ValueError(f"t must be None, a scalar or one time per sample ({size}), got shape {times.shape}")
    kind = times.dtype.kind
    if kind == "M":
        return _datetime64_seconds(times)
    # (Mutation testing: "XXiufXX" holds the same kinds, and astype(None) or a float list without dtype= is
    # float64 too: equivalent mutants.)
    if kind in "iuf":
        return times.astype(np.float64)
    if kind == "O":
        return np.array([as_seconds(value, f"t[{i}]") for i, value in enumerate(times)], dtype=np.float64)
    raise TypeError(f"t must hold real numbers of seconds or datetimes, got dtype {times.dtype}")


def check_time(t: Any, last: float) -> float:
    """One sample time, validated against the previous one."""
    value = as_seconds(t)
    if not -MAX_TIME <= value <= MAX_TIME:
        raise ValueError(f"t must be finite seconds within ±{MAX_TIME:g}, got {show(t)}")
    if value < last:
        raise ValueError(
            f"t={value!r} is earlier than the last sample time {last!r}: "
            "sample times must never decrease (timed windows are ordered by time)"
        )
    return value


def check_times(times: np.ndarray, last: float) -> None:
    """A batch's per-sample times: each valid, none before ``last``, never decreasing."""
    lo, hi = times.min(), times.max()  # NaN propagates into both: caught by the range test
    if not -MAX_TIME <= lo <= hi <= MAX_TIME:
        bad = int(np.flatnonzero(~(np.abs(times) <= MAX_TIME))[0])
        if np.isnan(times[bad]):
            raise ValueError(f"t[{bad}] is missing (NaN or NaT): expected one time per sample, nothing was counted")
        raise ValueError(f"t must be finite seconds within ±{MAX_TIME:g}, got {float(times[bad])!r} at position {bad}")
    if times[0] < last:
        raise ValueError(
            f"t[0]={float(times[0])!r} is earlier than the last sample time {last!r}: sample times must never decrease"
        )
    if len(times) > 1 and (times[1:] < times[:-1]).any():  # (`>= 1` is equivalent: one time has no pair)
        bad = int(np.flatnonzero(times[1:] < times[:-1])[0]) + 1
        later, earlier = float(times[bad]), float(times[bad - 1])
        raise ValueError(f"t must never decrease, but t[{bad}]={later!r} < t[{bad - 1}]={earlier!r}")


def clock_time(now: Any, last: float) -> float:
    """A time the clock returned: validated, and never before ``last``."""
    try:
        value = as_seconds(now)
    except (TypeError, ValueError):
        value = math.nan
    if not -MAX_TIME <= value <= MAX_TIME:
        raise ValueError(f"the clock returned {show(now)}: expected finite seconds within ±{MAX_TIME:g}")
    return max(value, last)
