"""How much memory the count matrices of a state file's monitor take, bounded before any is allocated.

A state file lists only non-zero cells (format 4), but a monitor keeps each window's counts, each live
Timed bucket and the lifetime counts as dense ``capacity × capacity`` int64 matrices (and its prediction
side as many again, ``max(capacity, 4)`` wide): a file of a few kB can describe gigabytes. ``Monitor.load``
refuses a file whose matrices would take more than ``MAX_MEMORY`` (8 GiB), and ``Monitor.save`` refuses to
write one, so what ``save`` writes ``load`` reads. Version 3 files, every cell written out, could not describe
more than about 1 GiB within the 256 MiB file limit.

>>> matrix_bytes({"capacity": 1024, "windows": [{"describe": {"kind": "cumulative"}, "state": {}}]}) // 2**20
16
"""

from __future__ import annotations

from typing import Any

from streammon.state import StateError

MAX_MEMORY = 8 * 2**30  # bytes of count matrices a state file may make a monitor allocate
CELL = 8  # bytes of one int64 count


def _live(state: Any) -> int:
    """How many Timed buckets of a (checked) window state hold a matrix."""
    slots = state.get("slots") if isinstance(state, dict) else None
    return sum(slot is not None for slot in slots) if isinstance(slots, list) else 0


SCORE_BINS = 2048  # streammon.metrics.score_bins.BINS (a layer below: kept in step by the tests)


def score_bytes(body: dict[str, Any]) -> int:
    """The bytes of the score histograms (``capacity`` × columns × 2,048 int64 a window, two for a timed window —
    its closed buckets' and its open bucket's — and again on the prediction side) a monitor restored from ``body``
    allocates; 0 without scores (or an entry its checks will refuse)."""
    scores = body.get("scores")
    columns = scores.get("columns") if isinstance(scores, dict) else None
    if type(columns) is not int or columns < 1:
        return 0
    sides = 2 if isinstance(body.get("prediction_scores"), dict) else 1
    timed = sum(isinstance(w.get("describe"), dict) and w["describe"].get("kind") == "timed" for w in body["windows"])
    return int(CELL * body["capacity"] * columns * SCORE_BINS * (len(body["windows"]) + timed) * sides)


def matrix_bytes(body: dict[str, Any]) -> int:
    """The bytes of the dense count matrices (and score histograms) a monitor restored from the (checked) ``body``
    holds."""
    side = body["capacity"]
    total = CELL * side * side * (len(body["windows"]) + 1 + sum(_live(w.get("state")) for w in body["windows"]))
    total += score_bytes(body)
    pending = body.get("pending")
    if isinstance(pending, dict) and isinstance(pending.get("side"), dict):
        part = pending["side"]
        predictions, events = part.get("predictions") or [], part.get("events") or []
        total += CELL * part["capacity"] ** 2 * (len(predictions) + sum(map(_live, predictions)))
        total += CELL * 16 * 16 * (len(events) + sum(map(_live, events)))
    return int(total)


def check_memory(body: dict[str, Any], *, saving: bool = False) -> None:
    """``StateError`` if the monitor of ``body`` needs more than ``MAX_MEMORY`` bytes of count matrices."""
    needed = matrix_bytes(body)
    if needed > MAX_MEMORY:
        if saving:
            raise StateError(f"the monitor's count matrices take {needed} bytes, over the limit of {MAX_MEMORY} "
                             "that Monitor.load allocates (streammon.state_schema.MAX_MEMORY): nothing was written")
        raise StateError(f"the state describes {needed} bytes of count matrices ({body['capacity']} classes wide), "
                         f"over the limit of {MAX_MEMORY} (streammon.state_schema.MAX_MEMORY)")
