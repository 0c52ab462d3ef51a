"""Run lengths of a CUSUM bank by simulation: how its thresholds are calibrated, and checked.

A class's correctness stream at error rate ``q`` is simulated one *wrong* sample at a time:
the right samples before it are a geometric count, applied to every member at once as the
detector applies them (``streammon.detection.kernel``). For each path the first class sample
at which the bank's largest statistic reaches each of several ``levels`` is recorded, so one
simulation gives the run length for every threshold at once.

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


def _passages(up: Any, down: Any, q: float, levels: Any, paths: int, seed: int, limit: float) -> Any:  # noqa: PLR0917 - compiled
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
            top = 0.0
            for j in range(members):
                value = stat[j] - rights * up[j]
                value = (value if value > 0.0 else 0.0) + down[j]
                stat[j] = value
                top = value if value > top else top
            while reached < count and top >= levels[reached]:
                out[path, reached] = t
                reached += 1
    return out


@cache
def _compiled() -> Any:
    return jitting.compiled(_passages)  # (numba is imported there: only simulations and the detector need it)


def first_passages(up: npt.NDArray[np.float64], down: npt.NDArray[np.float64], *, q: float,
                   levels: npt.NDArray[np.float64], paths: int, seed: int, limit: float = np.inf
                   ) -> npt.NDArray[np.float64]:
    """(paths × levels) class samples until the bank (steps ``up``/``down``) at error rate ``q`` first
    reaches each of the increasing ``levels`` (``inf`` past ``limit`` samples)."""
    keep = np.asarray(down) > 0
    used_up = np.ascontiguousarray(np.asarray(up, np.float64)[keep])
    used_down = np.ascontiguousarray(np.asarray(down, np.float64)[keep])
    result: npt.NDArray[np.float64] = _compiled()(
        used_up, used_down, float(q), np.ascontiguousarray(levels, np.float64), int(paths), int(seed), float(limit))
    return result


