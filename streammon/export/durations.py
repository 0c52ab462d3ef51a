"""Prometheus durations as the rules carry them: ``[0-9]+`` and a unit, units from the largest to the
smallest, each at most once (``1h30m``, ``90s``, ``1d``), at most 2**63 - 1 nanoseconds (Prometheus'
own rule: ``model.ParseDuration``). A window of a range selector must also be positive: ``[0s]`` is
refused by PromQL's evaluation (every rate over it is empty).

>>> milliseconds("1h30m"), milliseconds("90s"), milliseconds("0s")
(5400000, 90000, 0)
>>> milliseconds("30m1h")
Traceback (most recent call last):
...
ValueError: '30m1h' is not a Prometheus duration: expected whole numbers each followed by a unit \
(y, w, d, h, m, s, ms), the units from the largest to the smallest, each once, as in '1h30m' or '90s'
"""

from __future__ import annotations

import re

UNITS_MS = {"y": 365 * 86_400_000, "w": 7 * 86_400_000, "d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1_000,
            "ms": 1}
MAX_NANOSECONDS = 2**63 - 1
_PART = re.compile(r"([0-9]+)(ms|y|w|d|h|m|s)")


def milliseconds(text: object) -> int:
    """The duration ``text`` (a Prometheus duration) in milliseconds; ValueError if it is not one."""
    if not isinstance(text, str) or not text.isascii():
        raise ValueError(f"{text!r} is not a Prometheus duration: expected a str like '1h30m' or '90s'")
    order = list(UNITS_MS)
    at, last, total = 0, -1, 0
    while at < len(text):
        part = _PART.match(text, at)
        if part is None or order.index(part.group(2)) <= last:
            raise ValueError(f"{text!r} is not a Prometheus duration: expected whole numbers each followed by a unit "
                             "(y, w, d, h, m, s, ms), the units from the largest to the smallest, each once, as in "
                             "'1h30m' or '90s'")
        last = order.index(part.group(2))
        total += int(part.group(1)) * UNITS_MS[part.group(2)]
        at = part.end()
    if not text:
        raise ValueError("'' is not a Prometheus duration: expected a str like '1h30m' or '90s'")
    if total * 1_000_000 > MAX_NANOSECONDS:
        raise ValueError(f"{text!r} is longer than Prometheus' longest duration (2**63 - 1 ns, about 292 years)")
    return total
