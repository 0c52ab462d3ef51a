"""A gunicorn worker app for ``examples/soak_server.py``: each worker, once forked, sends predictions and their
labels through ``streammon.client`` as fast as it can for ``SOAK_SECONDS``, then flushes and writes what its
client sent, dropped and had refused to ``SOAK_DIR/worker-PID.json``. The HTTP side only answers ``/``."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from streammon.client import Client


def _run() -> None:
    client = Client(os.environ["STREAMMON_URL"], "fraud", max_buffer=200_000)
    seconds, folder, pid = float(os.environ["SOAK_SECONDS"]), Path(os.environ["SOAK_DIR"]), os.getpid()
    deadline, i = time.monotonic() + seconds, 0
    keys = [f"{pid}-{j}" for j in range(1000)]
    while time.monotonic() < deadline:
        block = [f"{k}-{i}" for k in keys]
        client.predict_many(block, ["legit" if j % 20 else "fraud" for j in range(1000)])
        client.label_many(block, ["legit" if j % 25 else "fraud" for j in range(1000)])
        i += 1
    client.flush(timeout=60)
    client.close(timeout=5)
    (folder / f"worker-{pid}.json").write_text(json.dumps(
        {"sent": client.sent, "dropped": client.dropped, "rejected": client.rejected,
         "dropped_by_kind": client.dropped_by_kind, "calls": 2000 * i}))


threading.Thread(target=_run, name="soak", daemon=False).start()


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"soak worker\n"]
