"""The production recipe, run for real: a FastAPI service under 4 gunicorn (and 4 uvicorn) worker processes sends
predictions and late labels through streammon.client to one `streammon serve`; labels reach random workers, yet
every label joins its prediction and every count equals an independent recount."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn_worker")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(port: int, path: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", path)
            if connection.getresponse().status < 500:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"nothing answered on 127.0.0.1:{port}{path} within {timeout} s")


def post(port: int, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """A new connection each time, so the kernel hands requests to any worker."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    answer = connection.getresponse()
    data = json.loads(answer.read())
    connection.close()
    assert answer.status == 200, data
    return dict(data)


def report(port: int) -> dict[str, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/v1/models/fraud/report")
    return dict(json.loads(connection.getresponse().read()))


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.mark.parametrize("runner", ["gunicorn", "uvicorn"])
def test_four_workers_one_server_every_label_joined_every_count_exact(tmp_path: Path, runner: str) -> None:
    """600 transactions scored through random workers, their labels sent later through random workers; after the
    service stops (its clients flush at exit) the server has 600 predictions, 600 labels joined, 0 orphans, and
    the confusion counts of an independent recount; more than one worker took part."""
    server_port, app_port = free_port(), free_port()
    (tmp_path / "streammon.toml").write_text(
        f'[server]\nlisten = "127.0.0.1:{server_port}"\nstate_dir = "{tmp_path / "state"}"\n'
        'checkpoint_every = 60\n[models.fraud]\nwindows = ["cumulative", "sliding:1000"]\n'
        'reference = { legit = 99, fraud = 1 }\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STREAMMON_URL": f"http://127.0.0.1:{server_port}",
           "STREAMMON_FLUSH": "0.2"}
    server = subprocess.Popen([sys.executable, "-m", "streammon", "serve", str(tmp_path / "streammon.toml")],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    app = "examples.production.fraud_service:app"
    command = ([sys.executable, "-m", "gunicorn", "-w", "4", "-k", "uvicorn_worker.UvicornWorker", app,
                "--bind", f"127.0.0.1:{app_port}"] if runner == "gunicorn" else
               [sys.executable, "-m", "uvicorn", app, "--workers", "4", "--port", str(app_port), "--log-level",
                "warning"])
    service = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(server_port, "/healthz")
        wait_for(app_port, "/docs")
        expected: Counter[tuple[str, str]] = Counter()
        workers: set[int] = set()
        predicted = {}
        for i in range(600):
            tx = {"id": f"tx-{i}", "amount": float((i * 37) % 3000), "foreign": i % 7 == 0}
            answer = post(app_port, "/predict", tx)
            predicted[tx["id"]] = answer["label"]
            workers.add(int(answer["worker"]))
        for i in range(600):
            fraud = (i * 37) % 3000 > 1800 or i % 11 == 0
            answer = post(app_port, "/feedback", {"id": f"tx-{i}", "fraud": fraud})
            workers.add(int(answer["worker"]))
            expected["fraud" if fraud else "legit", predicted[f"tx-{i}"]] += 1
        stop(service)  # the workers' clients flush at exit
        stats = report(server_port)["windows"]["cumulative"]["label_stats"]
        assert (stats["predictions"], stats["labelled"], stats["orphans"], stats["duplicates"]) == (600, 600, 0, 0)
        window = report(server_port)["windows"]["cumulative"]
        labels = [label["value"] for label in window["labels"]]
        got = Counter({(labels[i], labels[j]): n for i, row in enumerate(window["confusion"])
                       for j, n in enumerate(row) if n})
        assert got == expected
        assert len(workers) > 1, "every request went to one worker: the test did not spread them"
    finally:
        stop(service)
        stop(server)
    assert server.returncode == 0
