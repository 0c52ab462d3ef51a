"""The server's monitors: one per configured model (per model and segment for a segmented model), each with its
durable journal, saved every ``checkpoint_every`` seconds and at shutdown.

Under ``state_dir``: ``STEM.journal.sqlite`` (every accepted batch, committed before it is counted:
``streammon.pending.sqlite``) and ``STEM.state.json`` (the checkpoint), where ``STEM`` is the model's name, or
``NAME@DIGEST`` for a segment (``NAME.segments.json`` lists the segments and their stems; a segment is written
there before its first batch is acknowledged). A restart — also after ``kill -9`` — loads each checkpoint and
replays the journal after it: every acknowledged batch exactly once (``docs/explanation/durability.md``). Reads
(a scrape, a report) are not journalled, yet they move the alerts — raised after confirmation, held, their pools:
a monitor whose read changed that bookkeeping is saved within ``ALERT_SAVE_DELAY`` seconds, not at the next
checkpoint, so that a ``kill -9`` does not turn a held or confirmed alert off (and the on-call's alert flap). A
checkpoint written with other settings than the configuration's (windows, reference, detector, label TTL, max
pending) is refused at start, naming the difference: counts kept under one definition are not silently read
under another (a reference the model learned from its warm-up is its own when the configuration names none).
The policy (tolerances and metric parameters, read-time only) is the configuration's.

A segmented model (``segments = ["country"]``) keeps a monitor per segment value, made by the segment's first
batch, at most ``max_segments``: a batch of a new segment beyond that is refused (400), never merged into
another. Segments are named ``country=DE`` (keys in the configuration's order, joined by ``,``).
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from streammon.atomic import PREFIX_CHARACTERS, write_atomically
from streammon.monitor import Monitor
from streammon.serve.config import ModelConfig, ServerConfig

logger = logging.getLogger("streammon.serve")

MAX_SEGMENT_VALUE = 64
ALERT_SAVE_DELAY = 1.0  # seconds from a read that changed a monitor's alerts to its save
Key = tuple[str, str]  # (model, segment); segment "" for a model without segments


class BadSegment(ValueError):
    """A batch's segment that the model cannot take (missing, malformed, or one too many)."""


class Hub:
    """The monitors of a server, opened (checkpoint + journal) in the configuration's order."""

    def __init__(self, config: ServerConfig, on_new: Callable[[Key, Monitor], None] | None = None) -> None:
        self.config = config
        try:
            config.state_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"[server] state_dir {config.state_dir}: cannot create it: {exc.strerror}") from exc
        self.monitors: dict[Key, Monitor] = {}
        self._stems: dict[Key, str] = {}
        self._saved_changes: dict[Key, int] = {}  # each monitor's alert changes as of its last save
        self.dropped: dict[str, int] = dict.fromkeys(config.models, 0)  # rows clients report dropping
        self.last_error: BaseException | None = None
        self._on_new = on_new
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        try:
            for name, model in config.models.items():
                if model.segments:
                    for segment, stem in _read_index(config.state_dir, name).items():
                        self._open(model, segment, stem)
                else:
                    self._open(model, "", name)
        except BaseException:
            self.close(save=False)
            raise
        # every journal is locked now and no save has started: the temporary files left here are of killed saves
        for stem in self._stems.values():
            _remove_killed_saves(config.state_dir, stem)

    def _open(self, model: ModelConfig, segment: str, stem: str) -> Monitor:
        monitor = open_model(model, self.config.state_dir, stem)
        self.monitors[(model.name, segment)] = monitor
        self._stems[(model.name, segment)] = stem
        if self._on_new is not None:
            self._on_new((model.name, segment), monitor)
        return monitor

    def monitor(self, model: str, segment: Any = None) -> Monitor:
        """The monitor of ``model`` (and its ``segment`` fields), making a new segment's; ``BadSegment``."""
        config = self.config.models[model]
        name = segment_name(config, segment)
        monitor = self.monitors.get((model, name))
        if monitor is not None:
            return monitor
        with self._lock:
            monitor = self.monitors.get((model, name))
            if monitor is not None:
                return monitor
            segments = _read_index(self.config.state_dir, model)
            if len(segments) >= config.max_segments:
                raise BadSegment(f"segment {name!r}: model {model} has its max_segments={config.max_segments} "
                                 "segments already; a new one is refused, never merged (raise max_segments)")
            stem = f"{model}@{hashlib.sha256(name.encode()).hexdigest()[:16]}"
            segments[name] = stem
            write_atomically(self.config.state_dir / f"{model}.segments.json", json.dumps({"segments": segments}))
            return self._open(config, name, stem)

    def start_checkpoints(self) -> None:
        """Save every monitor every ``checkpoint_every`` seconds in the background."""
        self._thread = threading.Thread(target=self._run, name="streammon-checkpoints", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        every = self.config.checkpoint_every
        due = time.monotonic() + every
        while not self._stop.wait(min(ALERT_SAVE_DELAY, every)):
            if time.monotonic() >= due:
                self.save_all()
                due = time.monotonic() + every
            else:
                self.save_all(alerts_changed=True)

    def save_all(self, *, alerts_changed: bool = False) -> None:
        """Save every monitor now (with ``alerts_changed``, those whose alerts a read changed since their last
        save); a failure is logged and kept in ``last_error`` (the others still save)."""
        for key, monitor in list(self.monitors.items()):
            changes = monitor._alert_changes  # read before the save's snapshot: a later change saves again
            if alerts_changed and changes == self._saved_changes.get(key, 0):
                continue
            self._saved_changes[key] = changes  # a failed save is tried again at the next checkpoint, not each second
            try:
                monitor.save(self.config.state_dir / f"{self._stems[key]}.state.json")
            except Exception as exc:  # a full disk, a locked journal: logged, kept, retried next time
                logger.error("checkpoint of %s failed: %s", "/".join(filter(None, key)), exc, exc_info=exc)
                self.last_error = exc

    def count_dropped(self, model: str, n: int) -> None:
        with self._lock:
            self.dropped[model] += n

    def close(self, *, save: bool = True) -> None:
        """Stop the checkpoints, save every monitor one last time (when asked), close every journal."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)
        self.last_error = None
        if save:
            self.save_all()
        for monitor in self.monitors.values():
            monitor.close()
        if self.last_error is not None:
            raise self.last_error


def segment_name(config: ModelConfig, segment: Any) -> str:
    """``country=DE,device=ios`` from a batch's ``segment`` object (``""`` for a model without segments)."""
    if not config.segments:
        if segment is not None:
            raise BadSegment(f"segment: model {config.name} has no segments (declare segments = [...] in its table)")
        return ""
    if not isinstance(segment, Mapping):
        example = ", ".join(f'"{key}": ...' for key in config.segments)
        raise BadSegment(f"segment is missing: model {config.name} is segmented by {', '.join(config.segments)}: "
                         f'send "segment": {{{example}}}')
    if set(segment) != set(config.segments):
        raise BadSegment(f"segment has the keys {sorted(segment)}, expected {list(config.segments)}")
    parts = []
    for key in config.segments:
        value = segment[key]
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise BadSegment(f"segment.{key}: expected a string or an integer, got {value!r:.60}")
        text = str(value)
        if not 0 < len(text) <= MAX_SEGMENT_VALUE or not text.isprintable() or "," in text or "=" in text:
            raise BadSegment(f"segment.{key}: {text[:80]!r} must have 1 to {MAX_SEGMENT_VALUE} printable "
                             "characters, without ',' or '='")
        parts.append(f"{key}={text}")
    return ",".join(parts)


def _remove_killed_saves(state_dir: Path, stem: str) -> None:
    """Remove the temporary files of the checkpoint saves of ``stem`` that a ``kill -9`` cut short
    (``streammon.atomic``: ``.NAME.XXXXXXXX.tmp``, ``NAME`` the state file's name cut to its first characters): never
    read, each as large as a checkpoint, they would pile up one per crash. Called only while the model's journal
    is locked by this process and before its first save, so no save of it is under way."""
    prefix = f"{stem}.state.json"[:PREFIX_CHARACTERS]
    name = re.compile(rf"\.{re.escape(prefix)}\.[a-z0-9_]{{8}}\.tmp")
    for path in state_dir.glob(f".{glob.escape(prefix)}.*.tmp"):
        if name.fullmatch(path.name):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                logger.info("removed %s, the temporary file of a checkpoint save cut short", path)


def _read_index(state_dir: Path, model: str) -> dict[str, str]:
    path = state_dir / f"{model}.segments.json"
    if not path.exists():
        return {}
    try:
        segments = json.loads(path.read_text("utf-8"))["segments"]
        if not isinstance(segments, dict) or not all(isinstance(k, str) and isinstance(v, str) and
                                                     v.startswith(f"{model}@") and "/" not in v
                                                     for k, v in segments.items()):
            raise ValueError("not a map of segment names to file stems")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"the segment index {path} is unreadable: {exc}") from exc
    return dict(segments)


def open_model(model: ModelConfig, state_dir: Path, stem: str) -> Monitor:
    """The monitor of one model (or segment): its checkpoint and journal if there are, else a new one."""
    journal = state_dir / f"{stem}.journal.sqlite"
    checkpoint = state_dir / f"{stem}.state.json"
    if not checkpoint.exists():
        return Monitor(**model.options(), pending=journal)
    monitor = Monitor.load(checkpoint, pending=journal, validation=model.validation)
    fresh = Monitor(**model.options())
    saved = monitor.reference
    # without a reference in the configuration the model learns one from its warm-up: that one is its own
    learned = fresh.reference is None and saved is not None and saved.source == "warmup"
    differences = [what for what, a, b in (
        ("windows", monitor.window_names, fresh.window_names),
        ("reference", None if saved is None or learned else saved.priors, fresh.reference and fresh.reference.priors),
        ("detector", asdict(monitor._tally.watch.settings), asdict(model.detector)),
        ("label_ttl", monitor._records.label_ttl, model.label_ttl),
        ("max_pending", monitor._records.max_pending, model.max_pending),
        ("max_pending_bytes", monitor._records.max_pending_bytes, model.max_pending_bytes),
        ("closed", monitor._tally.index.closed, model.closed),
    ) if a != b]
    if differences:
        monitor.close()
        raise ValueError(f"[models.{model.name}]: the checkpoint {checkpoint} was written with other "
                         f"{', '.join(differences)} than the configuration's: restore the configuration, or move the "
                         "checkpoint and journal away to start this model afresh")
    monitor._use_policy(model.policy)
    return monitor
