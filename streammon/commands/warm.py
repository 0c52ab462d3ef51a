"""``streammon warm-up``: compile every loop a monitor can reach into numba's disk cache, and say how long it took.

Run it once where the processes that monitor will load the machine code from — a container image's build step,
after installing streammon (with ``NUMBA_CACHE_DIR`` set to a directory the image keeps where the package's own
directory is read-only) — so that no process of the service compiles a loop while it serves
(``streammon.monitor.warming``).
"""

from __future__ import annotations

import os
import sys
import time


def run_warm_up() -> int:
    """Warm the cache; print the seconds it took and where numba caches."""
    from streammon.monitor.warming import warm_up  # noqa: PLC0415 - numba and the loops: only for this command

    start = time.perf_counter()
    warm_up()
    where = os.environ.get("NUMBA_CACHE_DIR") or "beside the package (__pycache__) or the user's cache directory"
    sys.stdout.write(f"streammon warm-up: every compiled loop loaded in {time.perf_counter() - start:.1f} s "
                     f"(compiled where numba's cache did not hold it); numba's cache: {where}\n")
    return 0
