"""Sample times: what is accepted, checked before anything is counted.

Times are seconds (any real number type), finite, within ``±MAX_TIME`` (beyond it a timed
window's bucket id would overflow int64), and never earlier than the last sample's time: an
out-of-order sample is rejected, not counted. A clock that steps back is clamped instead.

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

from numbers import Real
from typing import Any

import numpy as np

MAX_TIME = 1e12  # seconds: ±31 700 years of Unix time


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (Real, np.integer, np.floating))


def check_time(t: Any, last: float) -> float:
    """One sample time, validated against the previous one."""
    if not _is_number(t):
        raise TypeError(f"t must be a real number of seconds or None, got {t!r}")
    value = float(t)
    if not -MAX_TIME <= value <= MAX_TIME:
        raise ValueError(f"t must be finite seconds within ±{MAX_TIME:g}, got {t!r}")
    if value < last:
        raise ValueError(
            f"t={value!r} is earlier than the last sample time {last!r}: "
            "sample times must never decrease (timed windows are ordered by time)"
        )
    return value


def check_times(times: np.ndarray, last: float) -> None:
    """A batch's per-sample times: each valid, none before ``last``, never decreasing."""
    invalid = ~(np.abs(times) <= MAX_TIME)  # NaN compares false: caught here too
    if invalid.any():
        bad = int(np.flatnonzero(invalid)[0])
        raise ValueError(f"t must be finite seconds within ±{MAX_TIME:g}, got {times[bad]!r} at position {bad}")
    if times[0] < last:
        raise ValueError(
            f"t[0]={times[0]!r} is earlier than the last sample time {last!r}: sample times must never decrease"
        )
    if len(times) > 1 and np.any(np.diff(times) < 0):
        bad = int(np.flatnonzero(np.diff(times) < 0)[0]) + 1
        raise ValueError(f"t must never decrease, but t[{bad}]={times[bad]!r} < t[{bad - 1}]={times[bad - 1]!r}")


def clock_time(now: Any, last: float) -> float:
    """A time the clock returned: validated, and never before ``last``."""
    if not _is_number(now) or not -MAX_TIME <= float(now) <= MAX_TIME:
        raise ValueError(f"the clock returned {now!r}: expected finite seconds within ±{MAX_TIME:g}")
    return max(float(now), last)
