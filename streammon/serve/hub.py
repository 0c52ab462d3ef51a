"""The server's monitors: one per configured model, each with its durable journal and periodic checkpoints.

Under ``state_dir``: ``NAME.journal.sqlite`` (every accepted batch, committed before it is counted:
``streammon.pending.sqlite``) and ``NAME.state.json`` (the checkpoint, every ``checkpoint_every`` seconds and at
shutdown). A restart — also after ``kill -9`` — loads the checkpoint and replays the journal after it: every
acknowledged batch exactly once (``docs/explanation/durability.md``). A checkpoint written with other settings
than the configuration's (windows, reference, detector, label TTL, max pending) is refused at start, naming the
difference: counts kept under one definition are not silently read under another. The policy (tolerances and
metric parameters, read-time only) is the configuration's.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import asdict
from pathlib import Path

from streammon.monitor import Monitor
from streammon.serve.config import ModelConfig, ServerConfig
from streammon.state import Checkpointer

logger = logging.getLogger("streammon.serve")


class Hub:
    """The monitors of a server, opened (checkpoint + journal) in the configuration's order."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        try:
            config.state_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"[server] state_dir {config.state_dir}: cannot create it: {exc.strerror}") from exc
        self.monitors: dict[str, Monitor] = {}
        self._checkpointers: list[Checkpointer] = []
        self.dropped: dict[str, int] = {}  # model -> predictions/labels/samples the clients report dropping
        self._lock = threading.Lock()
        try:
            for name, model in config.models.items():
                self.monitors[name] = open_model(model, config.state_dir)
                self.dropped[name] = 0
        except BaseException:
            self.close(save=False)
            raise

    def start_checkpoints(self) -> None:
        """Save every monitor every ``checkpoint_every`` seconds in the background."""
        for name, monitor in self.monitors.items():
            path = self.config.state_dir / f"{name}.state.json"
            self._checkpointers.append(Checkpointer(monitor, path, self.config.checkpoint_every).start())

    def count_dropped(self, model: str, n: int) -> None:
        with self._lock:
            self.dropped[model] += n

    def close(self, *, save: bool = True) -> None:
        """Save every monitor one last time (when asked) and close its journal."""
        errors = []
        for checkpointer in self._checkpointers:
            try:
                checkpointer.stop(raise_error=True)
            except Exception as exc:  # logged by the checkpointer; the others still save
                errors.append(exc)
        if save and not self._checkpointers:
            for name, monitor in self.monitors.items():
                try:
                    monitor.save(self.config.state_dir / f"{name}.state.json")
                except Exception as exc:
                    logger.error("saving model %s at shutdown failed: %s", name, exc)
                    errors.append(exc)
        for monitor in self.monitors.values():
            monitor.close()
        if errors:
            raise errors[0]


def open_model(model: ModelConfig, state_dir: Path) -> Monitor:
    """The model's monitor: its checkpoint and journal if there are, else a new one."""
    journal = state_dir / f"{model.name}.journal.sqlite"
    checkpoint = state_dir / f"{model.name}.state.json"
    if not checkpoint.exists():
        return Monitor(**model.options(), pending=journal)
    monitor = Monitor.load(checkpoint, pending=journal)
    fresh = Monitor(**model.options())
    differences = [what for what, a, b in (
        ("windows", monitor.window_names, fresh.window_names),
        ("reference", monitor.reference and monitor.reference.priors, fresh.reference and fresh.reference.priors),
        ("detector", asdict(monitor._tally.watch.settings), asdict(model.detector)),
        ("label_ttl", monitor._records.label_ttl, model.label_ttl),
        ("max_pending", monitor._records.max_pending, model.max_pending),
    ) if a != b]
    if differences:
        monitor.close()
        raise ValueError(f"[models.{model.name}]: the checkpoint {checkpoint} was written with other "
                         f"{', '.join(differences)} than the configuration's: restore the configuration, or move the "
                         "checkpoint and journal away to start this model afresh")
    monitor._policy = model.policy
    return monitor
