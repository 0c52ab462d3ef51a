"""State files of older versions read as this version's: each upgrade turns an intact older body into the next
version's, before the body is checked (so an upgrade only reshapes; what the body says is checked afterwards).

Version 3 wrote every count matrix in full, K×K (a Timed window's bucket too): version 4 keeps its non-zero
cells. A version-3 matrix is checked as it was then (``side × side`` ints in [0, 2⁵³]) before it is converted.

>>> from_version_3({"capacity": 2, "lifetime": {"counts": [[1, 0], [0, 2]]}})["lifetime"]
{'counts': {'cells': [0, 3], 'counts': [1, 2]}}
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammon.counting.sparse import sparse
from streammon.state_schema.detector import from_version_2
from streammon.state_schema.fields import _dense

EVENT_SIDE = 16  # the label-event windows' matrices, 16×16 (streammon.pending.sides.EVENT_SIDE, a layer above)


def _convert(state: Any, where: str, side: Any) -> None:
    """Make the dense ``counts`` (and Timed ``slots``) of one window state sparse, in place."""
    if not isinstance(state, dict) or type(side) is not int or not 0 < side <= 1 << 16:
        return  # not a window state of a known side: left for the checks of this version to name
    if "counts" in state:
        _dense(state["counts"], f"{where}.counts", side)
        state["counts"] = sparse(np.asarray(state["counts"], dtype=np.int64))
    if isinstance(state.get("slots"), list):
        state["slots"] = [slot if slot is None else (_dense(slot, f"{where}.slots[{i}]", side),
                                                     sparse(np.asarray(slot, dtype=np.int64)))[1]
                          for i, slot in enumerate(state["slots"])]


def from_version_3(body: dict[str, Any]) -> dict[str, Any]:
    """A version-3 body as version 4's: every count matrix as its non-zero cells."""
    capacity = body.get("capacity")
    windows = body.get("windows")
    for i, item in enumerate(windows if isinstance(windows, list) else ()):
        if isinstance(item, dict):
            _convert(item.get("state"), f"windows[{i}].state", capacity)
    _convert(body.get("lifetime"), "lifetime", capacity)
    baseline = body.get("prior_baseline")
    if isinstance(baseline, dict) and isinstance(baseline.get("labels"), list):
        _convert(baseline, "prior_baseline", len(baseline["labels"]))
    pending = body.get("pending")
    side = pending.get("side") if isinstance(pending, dict) else None
    if isinstance(side, dict):
        for part, width in (("predictions", side.get("capacity")), ("events", EVENT_SIDE)):
            items = side.get(part)
            for j, item in enumerate(items if isinstance(items, list) else ()):
                _convert(item, f"pending.side.{part}[{j}]", width)
    return body


UPGRADES = {2: lambda body: from_version_3(from_version_2(body)), 3: from_version_3}  # (streammon.state.loads)
