"""Compiling streammon's loops with numba, cached on disk where numba can write its cache.

numba keeps compiled machine code beside the module (``__pycache__``) or in the user's cache
directory, so only the first process after installing pays for compiling. Where neither is
writable — a read-only install under a user without a writable home, as in a container with a
read-only root filesystem — ``njit(cache=True)`` refuses the function outright; ``compiled`` then
compiles it in memory, once per process, and says so once on the ``streammon.compile`` logger
(set ``NUMBA_CACHE_DIR`` to a writable directory to keep the machine code).

**The rule: a compiled loop reads only loops and constants of its own file.** numba takes a cached function's
machine code as fresh while the function's *own* source file is unchanged (its stamp: in numba 0.68 the SHA-256 of
the file's bytes), and it freezes into that code the globals the function reads — a constant's value, another
compiled function's code. A loop that called a loop of another file, or read another file's constant (or one of
its own file computed from it at import), would keep the old machine code after that other file changed: wrong
numbers, silently, for a developer (editable install) or a user whose upgrade changed only that other file. Where a
loop must reach another file it is built in a factory whose closure numba's cache key holds (the key hashes the
function's bytecode and its closure variables' pickled contents: ``numba/core/caching.py``, ``_index_key``): a
loop of another file through ``fingerprint`` of that file (``exact_ranking_loop.ranking_values``), a constant
through its value (``detection.kernel._scanner``); or the value is passed as an argument
(``score_kernel.LAYOUT``). Never a compiled function in a closure: numba pickles it with an id of its process, so
the cache would never hit. ``tests/test_compiled_scope.py`` reads every module that compiles loops and fails on a
loop that reaches another file's name without such a key (directly, through a constant of its file, or through a
loop of its file that does); ``tests/test_compiled_cache.py`` changes the other file between processes.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import uuid
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
LOG = logging.getLogger("streammon.compile")
_told: list[bool] = []  # whether the in-memory fallback was logged in this process
_widths: list[tuple[Any, tuple[int, ...]]] = []  # loops whose count arguments come in several widths, and where
WIDTHS = ("int16", "int32", "int64")  # the integer types a count array is kept in (score_tally.count_type)


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


def count_widths(*positions: int) -> Callable[[F], F]:
    """Mark a compiled loop whose arguments at ``positions`` are count arrays kept in the narrowest of ``WIDTHS``
    that holds them, so that ``compile_widths`` compiles it for every width before a stream gets there (a count
    past 2³¹ takes weeks of a busy stream). Returns the loop unchanged: no call pays for the mark."""

    def mark(loop: F) -> F:
        _widths.append((loop, positions))
        return loop

    return mark


def compile_widths() -> None:
    """Compile every loop marked by ``count_widths`` for every width of its count arrays, from each signature it
    was compiled for so far (from numba's disk cache where it holds them: ``streammon.monitor.warming``)."""
    import numba  # noqa: PLC0415 - only once loops were compiled

    if numba.config.DISABLE_JIT:  # type: ignore[attr-defined]  # the loops run as Python: nothing to compile
        return
    for loop, positions in _widths:
        for signature in list(loop.signatures):
            arrays = [signature[i] for i in positions]
            if not all(isinstance(a, numba.types.Array) and isinstance(a.dtype, numba.types.Integer)
                       for a in arrays):
                continue
            for widths in itertools.product(WIDTHS, repeat=len(positions)):
                args = list(signature)
                for i, width in zip(positions, widths, strict=True):
                    args[i] = args[i].copy(dtype=getattr(numba.types, width))
                if tuple(args) not in loop.signatures:
                    loop.compile(tuple(args))


def fingerprint(*modules: ModuleType) -> str:
    """The modules' names and the SHA-256 of their source files' bytes, ``"name=hex;..."``: what a loop built in a
    factory closes over to make the files it reaches part of numba's cache key (the rule above). Read once, when the
    reaching module is imported (~20 µs a file). A module whose source cannot be read gets a key of its own process
    (``uuid4``): its loops compile anew in each process rather than risk stale machine code.

    >>> from streammon.metrics import jitting
    >>> key = fingerprint(jitting)
    >>> key.startswith("streammon.metrics.jitting="), len(key.split("=")[1]), key == fingerprint(jitting)
    (True, 64, True)
    """
    parts = []
    for module in modules:
        try:
            data = module.__loader__.get_data(module.__file__)  # type: ignore[union-attr]
        except (AttributeError, OSError, TypeError):  # no loader that reads files, no file
            digest = uuid.uuid4().hex
        else:
            digest = hashlib.sha256(data).hexdigest()
        parts.append(f"{module.__name__}={digest}")
    return ";".join(parts)
