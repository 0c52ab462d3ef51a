"""The state file of a Monitor: versioned JSON, checksummed, written atomically. Never pickle.

What a monitor saves is its declared state (``Monitor.save``: the tally's counts, times, settings);
this module is the file around it and knows nothing of monitors.

A state file is JSON (Python's ``json`` with ``NaN``/``Infinity``), so loading it cannot run
code. It holds ``{"format", "version", "written_by", "sha256", "body"}`` (``written_by``: the
streammon that wrote it, e.g. ``"streammon 0.1.0"``, outside the checksum); the SHA-256 of the canonical body
detects truncation and accidental or naive tampering (it is not a signature: anyone who can
write the file can recompute it). Saving writes a temporary file in the same folder, fsyncs
it, renames it over the target and fsyncs the folder, so a process killed mid-save leaves
the previous file intact. Labels must be str, int, float or bool to be saved (they are
stored with their type, so ``1``, ``"1"`` and ``True`` come back as they were).

>>> import tempfile, pathlib
>>> from streammon import Monitor, Sliding
>>> m = Monitor([Sliding(3)], reference={"a": 1, "b": 1})
>>> m.update_many(["a", "b", "a", "b"], ["a", "a", "a", "b"])
>>> path = pathlib.Path(tempfile.mkdtemp()) / "monitor.json"
>>> m.save(path)
>>> Monitor.load(path).report().windows["sliding_3"].confusion == m.report().windows["sliding_3"].confusion
True
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from streammon.atomic import write_atomically as write_atomically  # noqa: PLC0414 (re-exported: moved there)

FORMAT = "streammon.monitor"
VERSION = 4  # 2: the detector became a per-sample CUSUM bank with incidents; 3: each member its own threshold;
# 4: every count matrix as its non-zero cells (``streammon.counting.sparse``), and the writer's version
MAX_BYTES = 256 * 2**20  # the largest state file read unless ``max_bytes`` says otherwise
MAX_DEPTH = 16  # a state file nests 8 levels deep (window → state → slots → bucket → row)

MAX_WRITER = 100  # the longest ``written_by`` read


def _writer() -> str:
    """``streammon X.Y.Z``: the installed distribution's version (the package's own when not installed)."""
    try:
        return f"streammon {importlib.metadata.version('streammon')}"[:MAX_WRITER]
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "streammon (not installed)"


WRITTEN_BY = _writer()  # recorded in every state file this streammon writes (not part of the checksummed body)

_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
_OPEN_CLOSE = bytes.maketrans(b"{}", b"[]")
_CHUNK = 1 << 18

log = logging.getLogger("streammon.state")  # checkpoint failures; streammon configures no handlers


class StateError(ValueError):
    """A state file that cannot be loaded: truncated, tampered, of another format or version."""


def encode_label(label: Hashable) -> list[Any]:
    """A label with its type, e.g. ``["int", 1]``; other types cannot be saved."""
    for kind, cls in (("bool", bool), ("int", int), ("float", float), ("str", str)):
        if type(label) is cls:
            return [kind, label]
    raise TypeError(f"label {label!r} ({type(label).__name__}) cannot be saved: use str, int, float or bool labels")


def decode_label(item: Any) -> Hashable:
    """The label ``encode_label`` stored; ``StateError`` unless the value is of the stored type."""
    kinds: dict[str, type] = {"bool": bool, "int": int, "float": float, "str": str}
    if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and item[0] in kinds
            and type(item[1]) is kinds[item[0]]):
        raise StateError(f"bad label entry {item!r}: expected [type, value] with type bool, int, float or str")
    label: Hashable = item[1]
    return label


def _digest(body: dict[str, Any]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def dumps(body: dict[str, Any]) -> str:
    """A state file's text for a monitor's declared state ``body`` (see ``Monitor.save``).

    Never a file that ``loads`` refuses with its default limit: a text over ``MAX_BYTES`` raises
    ``StateError`` naming both sizes (and ``Monitor.save`` then writes nothing).
    """
    text = json.dumps({"format": FORMAT, "version": VERSION, "written_by": WRITTEN_BY, "sha256": _digest(body),
                       "body": body}, allow_nan=True)  # ASCII (ensure_ascii): one byte a character
    if len(text) > MAX_BYTES:
        raise StateError(f"the monitor's state is {len(text)} bytes, over the limit of {MAX_BYTES} that "
                         "Monitor.load reads by default (streammon.state.MAX_BYTES): nothing was written")
    return text


def nesting(data: bytes) -> int:
    """How deep JSON ``data`` nests lists and objects (brackets inside strings do not count).

    Linear time, in chunks of ``_CHUNK`` brackets: no recursion, whatever the input.

    >>> nesting(b'{"a": [[1], "]]]["]}'), nesting(b"[" * 100_000)
    (3, 100000)
    """
    brackets = _STRINGS.sub(b'""', data).translate(_OPEN_CLOSE, _NOT_BRACKETS)
    depth = deepest = 0
    for start in range(0, len(brackets), _CHUNK):
        chunk = np.frombuffer(brackets, np.uint8, count=min(_CHUNK, len(brackets) - start), offset=start)
        levels = np.cumsum(np.where(chunk == ord("["), 1, -1), dtype=np.int64) + depth
        deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
    return deepest


Upgrades = Mapping[int, Callable[[dict[str, Any]], dict[str, Any]]]  # an older version's body → this version's


def read(path: str | os.PathLike[str], *, max_bytes: int = MAX_BYTES, upgrades: Upgrades | None = None
         ) -> dict[str, Any]:
    """The declared state ``body`` of the state file at ``path`` (``loads``); reads at most ``max_bytes + 1`` bytes."""
    chunks: list[bytes] = []
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size  # 0 for pipes and the like: read on, up to the limit
        if size > max_bytes:
            raise StateError(f"state file is {size} bytes, over the limit of {max_bytes} (max_bytes)")
        read = 0
        while read <= max_bytes and (chunk := handle.read(min(max(size + 1 - read, 1 << 16), max_bytes + 1 - read))):
            chunks.append(chunk)
            read += len(chunk)
    return loads(b"".join(chunks), max_bytes=max_bytes, upgrades=upgrades)


def loads(data: str | bytes, *, max_bytes: int = MAX_BYTES, upgrades: Upgrades | None = None) -> dict[str, Any]:
    """The declared state ``body`` of an intact state file; ``StateError`` for anything else.

    Bounded before parsing: at most ``max_bytes`` bytes of strict UTF-8, nested at most
    ``MAX_DEPTH`` deep. What the body says is checked by ``streammon.state_schema``. A file of an
    older version is read where ``upgrades`` has a function for it, which makes its (intact) body
    this version's.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > max_bytes:
        raise StateError(f"state file is {len(raw)} bytes, over the limit of {max_bytes} (max_bytes)")
    try:
        text = raw.decode("utf-8")  # strict: no BOM, no other encoding, no lone surrogate
    except UnicodeDecodeError as exc:
        raise StateError(f"state file is not UTF-8 text: {exc}") from exc
    depth = nesting(raw)
    del raw
    if depth > MAX_DEPTH:
        raise StateError(f"state file nests {depth} levels deep, over the limit of {MAX_DEPTH}: not a state file")
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, and int("…") beyond 4,300 digits
        raise StateError(f"state file is truncated or not JSON: {exc}") from exc
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise StateError(f"not a streammon monitor state (format {document.get('format')!r})"
                         if isinstance(document, dict) else "not a streammon monitor state")
    version, upgrades = document.get("version"), upgrades or {}
    upgrade = upgrades.get(version) if type(version) is int and version != VERSION else None
    if version != VERSION and upgrade is None:
        readable = ", ".join(map(str, sorted({*upgrades, VERSION})))
        raise StateError(f"state version {version!r:.60} is not supported (this streammon reads {readable})")
    writer = document.get("written_by", "")  # (files before version 4 do not say; it is informative only)
    if not isinstance(writer, str) or len(writer) > MAX_WRITER:
        raise StateError(f"written_by must be a string of at most {MAX_WRITER} characters, got {writer!r:.60}")
    body = document.get("body")
    if not isinstance(body, dict) or document.get("sha256") != _digest(body):
        raise StateError("state file is corrupt or was modified: its checksum does not match")
    return body if upgrade is None else upgrade(body)


class Saveable(Protocol):
    """Anything with ``save(path)``: a ``Monitor``."""

    def save(self, path: str | os.PathLike[str]) -> None: ...  # pragma: no cover - protocol


class Checkpointer:
    """Save a monitor to ``path`` every ``every`` seconds in a background thread, and once more on ``stop()``.

    For exporter processes: restart with ``Monitor.load(path)`` and lose at most ``every``
    seconds of counts. A failed save — whatever it raised, the journal's ``sqlite3.Error`` included — is
    logged (logger ``streammon.state``, ERROR), kept in ``last_error`` and retried next time; it never
    stops the thread or the service. Saves of one monitor are ordered (``Monitor.save``), so a
    checkpoint and a save of the application's never overtake each other. The
    last save, on ``stop()``, raises if it fails (counts since the previous save are lost),
    except when leaving a ``with`` block that is already raising: then it is only logged.

    >>> import tempfile, pathlib
    >>> from streammon import Monitor, Sliding
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "monitor.json"
    >>> with Checkpointer(Monitor([Sliding(10)]), path, every=60) as checkpointer:
    ...     pass
    >>> path.exists(), checkpointer.saves
    (True, 1)
    """

    def __init__(self, monitor: Saveable, path: str | os.PathLike[str], every: float) -> None:
        if not every > 0:
            raise ValueError(f"every must be > 0 seconds, got {every!r}")
        self.monitor, self.path, self.every = monitor, Path(path), float(every)
        self.saves = 0
        self.last_error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="streammon-checkpoint", daemon=True)

    def _save(self) -> None:
        try:
            self.monitor.save(self.path)
        except Exception as exc:  # any failure (a full disk, a locked journal): logged, kept, retried next time
            log.error("checkpoint: saving the monitor to %s failed (%d saves so far): %s", self.path, self.saves, exc,
                      exc_info=exc)
            self.last_error = exc
            return
        if self.last_error is not None:
            log.info("checkpoint: saving to %s works again", self.path)
        self.saves += 1
        self.last_error = None

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._save()

    def start(self) -> Checkpointer:
        """Start saving in the background."""
        self._thread.start()
        return self

    def stop(self, *, raise_error: bool = True) -> None:
        """Stop the thread and save one last time; raise what that save raised (it is logged either way)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)
        self._save()
        if raise_error and self.last_error is not None:
            raise self.last_error

    def __enter__(self) -> Checkpointer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.stop(raise_error=kind is None)  # never hide the block's own exception behind a failed save
