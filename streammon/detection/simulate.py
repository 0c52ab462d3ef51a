"""Run lengths of a CUSUM bank by simulation: how its thresholds are calibrated, and checked.

A class's correctness stream at error rate ``q`` is simulated one *wrong* sample at a time:
the right samples before it are a geometric count, applied to every member at once as the
detector applies them (``streammon.detection.kernel``). The bank's height is
``max_j (S_j + offset_j)``: member ``j`` crosses level ``s`` when ``S_j ≥ s − offset_j``, its own
threshold (``streammon.detection.thresholds``). For each path the first class sample at which
the height reaches each of several ``levels`` is recorded, so one simulation gives the run
length for every level at once.

>>> up, down = np.array([0.223]), np.array([0.693])  # one member: recall 0.8 → 0.6
>>> runs = first_passages(up, down, q=0.2, levels=np.array([2.0, 4.0]), paths=2000, seed=1)
>>> bool(runs[:, 0].mean() < runs[:, 1].mean())
True
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics import jitting


def _passages(up: Any, down: Any, offsets: Any, q: float, levels: Any, paths: int, seed: int,  # noqa: PLR0917
              limit: float) -> Any:  # (compiled: numba takes its arguments positionally)
    np.random.seed(seed)  # noqa: NPY002 - inside numba: the compiled code's own generator, seeded per call
    members, count = len(up), len(levels)
    out = np.full((paths, count), np.inf)
    stat = np.zeros(members)
    for path in range(paths):
        stat[:] = 0.0
        t = 0.0
        reached = 0
        while reached < count and t < limit:
            rights = np.random.geometric(q) - 1  # noqa: NPY002 - (as above)
            t += rights + 1
            top = -np.inf
            for j in range(members):
                value = stat[j] - rights * up[j]
                value = (value if value > 0.0 else 0.0) + down[j]
                stat[j] = value
                height = value + offsets[j]
                top = height if height > top else top
            while reached < count and top >= levels[reached]:
                out[path, reached] = t
                reached += 1
    return out


@cache
def _compiled() -> Any:
    return jitting.compiled(_passages)  # (numba is imported there: only simulations and the detector need it)


def first_passages(up: npt.NDArray[np.float64], down: npt.NDArray[np.float64], *, q: float,
                   levels: npt.NDArray[np.float64], paths: int, seed: int, limit: float = np.inf,
                   offsets: npt.NDArray[np.float64] | None = None) -> npt.NDArray[np.float64]:
    """(paths × levels) class samples until the bank (steps ``up``/``down``, height ``max_j (S_j + offsets_j)``;
    no offsets: the largest statistic) at error rate ``q`` first reaches each of the increasing ``levels``
    (``inf`` past ``limit`` samples). Members with no steps (``down`` 0) are left out."""
    keep = np.asarray(down) > 0
    used_up = np.ascontiguousarray(np.asarray(up, np.float64)[keep])
    used_down = np.ascontiguousarray(np.asarray(down, np.float64)[keep])
    lifted = np.zeros(len(keep)) if offsets is None else np.asarray(offsets, np.float64)
    result: npt.NDArray[np.float64] = _compiled()(
        used_up, used_down, np.ascontiguousarray(lifted[keep]), float(q), np.ascontiguousarray(levels, np.float64),
        int(paths), int(seed), float(limit))
    return result


