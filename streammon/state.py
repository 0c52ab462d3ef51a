"""The state file of a Monitor: versioned JSON, checksummed, written atomically. Never pickle.

What a monitor saves is its declared state (``Monitor.save``: the tally's counts, times, settings);
this module is the file around it and knows nothing of monitors.

A state file is JSON (Python's ``json`` with ``NaN``/``Infinity``), so loading it cannot run
code. It holds ``{"format", "version", "sha256", "body"}``; the SHA-256 of the canonical body
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

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Hashable
from pathlib import Path
from typing import Any, Protocol

FORMAT = "streammon.monitor"
VERSION = 1


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
    if not (isinstance(item, list) and len(item) == 2 and item[0] in kinds and type(item[1]) is kinds[item[0]]):
        raise StateError(f"bad label entry {item!r}: expected [type, value] with type bool, int, float or str")
    label: Hashable = item[1]
    return label


def _digest(body: dict[str, Any]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, fsync and rename: all or nothing."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    directory = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def dumps(body: dict[str, Any]) -> str:
    """A state file's text for a monitor's declared state ``body`` (see ``Monitor.save``)."""
    return json.dumps({"format": FORMAT, "version": VERSION, "sha256": _digest(body), "body": body}, allow_nan=True)


def loads(text: str) -> dict[str, Any]:
    """The declared state ``body`` of an intact state file; ``StateError`` for anything else."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StateError(f"state file is truncated or not JSON: {exc}") from exc
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise StateError(f"not a streammon monitor state (format {document.get('format')!r})"
                         if isinstance(document, dict) else "not a streammon monitor state")
    if document.get("version") != VERSION:
        raise StateError(f"state version {document.get('version')!r} is not supported (this streammon reads {VERSION})")
    body = document.get("body")
    if not isinstance(body, dict) or document.get("sha256") != _digest(body):
        raise StateError("state file is corrupt or was modified: its checksum does not match")
    return body


class Saveable(Protocol):
    """Anything with ``save(path)``: a ``Monitor``."""

    def save(self, path: str | os.PathLike[str]) -> None: ...  # pragma: no cover - protocol


class Checkpointer:
    """Save a monitor to ``path`` every ``every`` seconds in a background thread, and once more on ``stop()``.

    For exporter processes: restart with ``Monitor.load(path)`` and lose at most ``every``
    seconds of counts. A failed save is kept in ``last_error`` and retried next time; it
    never stops the thread or the service.

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
            self.saves += 1
            self.last_error = None
        except (OSError, ValueError, TypeError) as exc:
            self.last_error = exc

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._save()

    def start(self) -> Checkpointer:
        """Start saving in the background."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and save one last time."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)
        self._save()

    def __enter__(self) -> Checkpointer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
