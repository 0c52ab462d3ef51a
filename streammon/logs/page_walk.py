"""The page headers of a Parquet column chunk walked in compiled code (numba, no GIL held): each header's
type, stated decompressed size and value count read from the file's bytes (memory-mapped: only the
header bytes are touched), each page checked against ``page_bound``, the next found after the
compressed bytes. Anything unusual (a list in a header, nesting over 32, a header running past the
mapped bytes) is handed back to the Python reader of ``streammon.logs.limits``, which says what is wrong.

>>> import numpy as np
>>> header = bytes([0x15, 0x00, 0x15, 0x28, 0x15, 0x28, 0x2C, 0x15, 0x04, 0x00, 0x00])  # data page, 20 B, 2 values
>>> walk(np.frombuffer(header + bytes(20), np.uint8), 0, len(header) + 20, 2048, 65536)[:4]
(0, 0, 20, 2)
"""

from __future__ import annotations

from typing import Any

import numpy as np

OK, OVER, PYTHON = 0, 1, 2  # walk's first result: every page within its bound, a page over it, ask the Python reader


def _walk(data: Any, start: int, end: int, cell: int,  # noqa: PLR0912, PLR0915 (one loop: numba inlines nothing)
          slack: int) -> tuple[int, int, int, int, int]:
    """(status, type, size, values, at): OK with the last page read, OVER with the page over its bound, PYTHON
    with where the compiled walk stopped."""
    n = data.shape[0]
    lasts = np.zeros(32, np.int64)
    path = np.zeros(32, np.int64)
    at = start
    kind_page, size, values = -1, 0, 0
    while at < end:
        page_at = at
        found0, found1, found2, found3 = -1, 0, 0, 0
        depth, last = 0, 0
        while True:
            if at < 0 or at >= n:
                return PYTHON, 0, 0, 0, page_at
            head = int(data[at])
            at += 1
            if head == 0:
                if depth == 0:
                    break
                depth -= 1
                last = lasts[depth]
                continue
            kind, delta = head & 15, head >> 4
            if delta:
                field = last + delta
            else:
                value, shift = 0, 0
                while True:
                    if at < 0 or at >= n or shift > 63:
                        return PYTHON, 0, 0, 0, page_at
                    b = int(data[at])
                    at += 1
                    value |= (b & 127) << shift
                    if b < 128:
                        break
                    shift += 7
                field = (value >> 1) ^ -(value & 1)
            last = field
            if kind == 12:
                if depth == 32:
                    return PYTHON, 0, 0, 0, page_at
                lasts[depth] = last
                path[depth] = field
                depth += 1
                last = 0
            elif kind in (4, 5, 6):
                value, shift = 0, 0
                while True:
                    if at < 0 or at >= n or shift > 63:
                        return PYTHON, 0, 0, 0, page_at
                    b = int(data[at])
                    at += 1
                    value |= (b & 127) << shift
                    if b < 128:
                        break
                    shift += 7
                value = (value >> 1) ^ -(value & 1)
                if kind == 5 and depth == 0 and field == 1:
                    found0 = value
                elif kind == 5 and depth == 0 and field == 2:
                    found1 = value
                elif kind == 5 and depth == 0 and field == 3:
                    found2 = value
                elif kind == 5 and depth == 1 and field == 1 and path[0] in (5, 7, 8):
                    found3 = value
            elif kind == 8:
                length, shift = 0, 0
                while True:
                    if at < 0 or at >= n or shift > 63:
                        return PYTHON, 0, 0, 0, page_at
                    b = int(data[at])
                    at += 1
                    length |= (b & 127) << shift
                    if b < 128:
                        break
                    shift += 7
                at += length
            elif kind == 3:
                at += 1
            elif kind == 7:
                at += 8
            elif kind not in (1, 2):
                return PYTHON, 0, 0, 0, page_at
        kind_page, size, values = found0, found1, found3
        if found1 < 0 or found2 < 0 or found3 < 0:
            return PYTHON, 0, 0, 0, page_at
        if kind_page in (0, 2, 3) and size > values * (cell + 16) + slack:
            return OVER, kind_page, size, values, page_at
        at += found2
    return OK, kind_page, size, values, at


_compiled: list[Any] = []


def walk(data: Any, start: int, end: int, cell: int, slack: int) -> tuple[int, int, int, int, int]:
    """``_walk`` compiled (once, cached on disk like streammon's other loops)."""
    if not _compiled:
        from streammon.metrics.jitting import compiled

        _compiled.append(compiled(_walk))
    return _compiled[0](data, start, end, cell, slack)  # type: ignore[no-any-return]
