"""Compiling streammon's loops with numba, cached on disk where numba can write its cache.

numba keeps compiled machine code beside the module (``__pycache__``) or in the user's cache
directory, so only the first process after installing pays for compiling. Where neither is
writable — a read-only install under a user without a writable home, as in a container with a
read-only root filesystem — ``njit(cache=True)`` refuses the function outright; ``compiled`` then
compiles it in memory, once per process, and says so once on the ``streammon.compile`` logger
(set ``NUMBA_CACHE_DIR`` to a writable directory to keep the machine code).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
LOG = logging.getLogger("streammon.compile")
_told: list[bool] = []  # whether the in-memory fallback was logged in this process


def compiled(function: F, **options: Any) -> F:
    """``numba.njit(cache=True, nogil=True, **options)(function)``, or the same without the disk cache where numba
    has nowhere to write it."""
    import numba  # noqa: PLC0415 - heavy (~0.2 s): imported by the first loop that needs it, not with streammon

    settings = {"nogil": True, **options}
    try:
        out: F = numba.njit(cache=True, **settings)(function)
    except RuntimeError as error:  # "cannot cache function ...: no locator available"
        if not _told:
            _told.append(True)
            LOG.warning("numba cannot cache streammon's compiled loops (%s): they compile in memory in every "
                        "process (a few seconds); set NUMBA_CACHE_DIR to a writable directory to keep them", error)
        out = numba.njit(cache=False, **settings)(function)
    return out
