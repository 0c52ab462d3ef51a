"""Saving and restoring a Monitor: versioned JSON, checksummed, written atomically. Never pickle.

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
import math
import os
import tempfile
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from streammon.detect import DetectorSettings
from streammon.distortion import Policy
from streammon.reference import Reference
from streammon.windows import Cumulative, Sliding, Timed, Window

if TYPE_CHECKING:
    from streammon.monitor import Monitor

FORMAT = "streammon.monitor"
VERSION = 1
WINDOW_TYPES: dict[str, type[Window]] = {"cumulative": Cumulative, "sliding": Sliding, "timed": Timed}


class StateError(ValueError):
    """A state file that cannot be loaded: truncated, tampered, of another format or version."""


def encode_label(label: Hashable) -> list[Any]:
    """A label with its type, e.g. ``["int", 1]``; other types cannot be saved."""
    for kind, cls in (("bool", bool), ("int", int), ("float", float), ("str", str)):
        if type(label) is cls:
            return [kind, label]
    raise TypeError(f"label {label!r} ({type(label).__name__}) cannot be saved: use str, int, float or bool labels")


def decode_label(item: Any) -> Hashable:
    """The label ``encode_label`` stored."""
    kinds: dict[str, Callable[[Any], Hashable]] = {"bool": bool, "int": int, "float": float, "str": str}
    if not (isinstance(item, list) and len(item) == 2 and item[0] in kinds):
        raise StateError(f"bad label entry {item!r}")
    return kinds[item[0]](item[1])


def _policy_state(policy: Policy) -> dict[str, Any]:
    fields = {name: getattr(policy, name) for name in policy.__dataclass_fields__ if name != "metric_params"}
    return {**fields, "metric_params": {k: dict(v) for k, v in policy.metric_params.items()}}


def monitor_state(monitor: Monitor) -> dict[str, Any]:
    """Everything a monitor needs to continue exactly (call with its lock held, buffer flushed)."""
    m = monitor
    reference = None
    if m._reference is not None:
        reference = {"priors": [[encode_label(k), v] for k, v in m._reference.priors.items()],
                     "source": m._reference.source}
    return {
        "labels": [encode_label(label) for label in m._index.labels],
        "max_classes": m._index.max_classes,
        "capacity": m._capacity,
        "windows": [{"describe": w.describe(), "state": w.state()} for w in m._windows],
        "lifetime": m._lifetime.state(),
        "reference": reference,
        "positive": None if m._positive is None else encode_label(m._positive),
        "warmup_left": m._warmup_left,
        "warm_counts": m._warm_counts.tolist(),
        "last_t": None if m._last_t == -math.inf else m._last_t,
        "clock_driven": m._clock_driven,
        "ingested": m._ingested,
        "policy": _policy_state(m._policy),
        "detector": asdict(m._watch.settings),
        "watch": m._watch.state(),
        "alert_since": [[*key, *value] for key, value in m._alert_since.items()],
    }


def restore_monitor(body: dict[str, Any], clock: Callable[[], float], monitor_cls: type[Monitor]) -> Monitor:
    """A monitor rebuilt from ``monitor_state`` output; raises ``StateError`` if it does not fit."""
    try:
        windows = []
        for item in body["windows"]:
            params = dict(item["describe"])
            windows.append(WINDOW_TYPES[params.pop("kind")](**params))
        labels = [decode_label(x) for x in body["labels"]]
        positive = None if body["positive"] is None else decode_label(body["positive"])
        monitor = monitor_cls(windows, classes=labels, positive=positive, max_classes=int(body["max_classes"]),
                          warmup=max(1, int(body["warmup_left"])), clock=clock,
                          policy=Policy(**body["policy"]), detector=DetectorSettings(**body["detector"]))
        if monitor.labels != tuple(labels) or monitor._capacity != int(body["capacity"]):
            raise StateError("saved classes do not rebuild the same class index")
        for window, item in zip(monitor._windows, body["windows"], strict=True):
            window.restore(item["state"])
        monitor._lifetime.restore(body["lifetime"])
        if body["reference"] is not None:
            priors = {decode_label(k): float(v) for k, v in body["reference"]["priors"]}
            monitor._reference = Reference.of(priors, source=str(body["reference"]["source"]))
        monitor._warmup_left = int(body["warmup_left"])
        monitor._warm_counts = np.asarray(body["warm_counts"], dtype=np.int64)
        monitor._last_t = -math.inf if body["last_t"] is None else float(body["last_t"])
        monitor._clock_driven = bool(body["clock_driven"])
        monitor._ingested = int(body["ingested"])
        monitor._watch.restore(body["watch"])
        monitor._alert_since = {(k, w, s): (int(n), float(t)) for k, w, s, n, t in body["alert_since"]}
        if monitor._ingested != int(monitor._lifetime.snapshot(None).sum()):
            raise StateError("saved sample count does not match the saved counts")
    except StateError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise StateError(f"state does not describe a valid monitor: {exc}") from exc
    return monitor


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


def dumps(monitor: Monitor) -> str:
    """The monitor's state file as text."""
    body = monitor._locked_state()
    return json.dumps({"format": FORMAT, "version": VERSION, "sha256": _digest(body), "body": body}, allow_nan=True)


def loads(text: str, monitor_cls: type[Monitor], clock: Callable[[], float] = time.time) -> Monitor:
    """A monitor from state file text; ``StateError`` for anything but an intact file of this format."""
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
    return restore_monitor(body, clock, monitor_cls)


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

    def __init__(self, monitor: Monitor, path: str | os.PathLike[str], every: float) -> None:
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
