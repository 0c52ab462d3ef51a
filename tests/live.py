"""A throwaway Prometheus and Alertmanager on 127.0.0.1 for the tests: start, query, stop by PID."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LivePrometheus:
    """A Prometheus process scraping ``targets`` every ``interval`` and loading ``rule_files``."""

    def __init__(self, binary: str, workdir: Path, targets: Iterable[str], rule_files: Iterable[Path] = (),
                 interval: str = "1s", *, config_text: str | None = None) -> None:
        """``config_text``, if given, is the whole configuration (then ``targets``, ``rule_files`` and
        ``interval`` are not used; relative rule paths resolve against ``workdir``)."""
        self.port = free_port()
        config = workdir / "prometheus.yml"
        rules = "".join(f"  - {json.dumps(str(p))}\n" for p in rule_files)
        config.write_text(config_text if config_text is not None else (
            f"global:\n  scrape_interval: {interval}\n  evaluation_interval: {interval}\n"
            + (f"rule_files:\n{rules}" if rules else "")
            + "scrape_configs:\n  - job_name: streammon\n    static_configs:\n"
            + f"      - targets: {json.dumps(list(targets))}\n"
        ))
        self.process = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={workdir / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=(workdir / "prometheus.log").open("w"),
        )
        self._wait_ready()

    def _wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"prometheus exited with {self.process.returncode}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=1)
                return
            except OSError:
                time.sleep(0.2)
        raise TimeoutError("prometheus did not become ready")

    def api(self, path: str, **params: str) -> Any:
        """GET /api/v1/<path> and return ``data`` (raises on an error status)."""
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.load(response)
        if body.get("status") != "success":
            raise RuntimeError(f"{path} {params}: {body}")
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's result vector."""
        return list(self.api("query", query=expr)["result"])

    def wait_for(self, expr: str, predicate: Any, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Poll ``expr`` until ``predicate(result)`` holds."""
        deadline = time.monotonic() + timeout
        result: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            result = self.query(expr)
            if predicate(result):
                return result
            time.sleep(0.5)
        raise TimeoutError(f"{expr}: last result {result}")

    def stop(self) -> None:
        """Stop the process by its PID."""
        stop_process(self.process)


class LiveAlertmanager:
    """An Alertmanager process with ``config_text``, clustering off, data in ``workdir``."""

    def __init__(self, binary: str, workdir: Path, config_text: str, port: int | None = None) -> None:
        self.port = port or free_port()
        config = workdir / "alertmanager.yml"
        config.write_text(config_text)
        self.process = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.path={workdir / 'alertmanager-data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--cluster.listen-address=", "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=(workdir / "alertmanager.log").open("w"),
        )
        wait_ready(self.process, f"http://127.0.0.1:{self.port}/-/ready", "alertmanager")

    def alerts(self) -> list[dict[str, Any]]:
        """GET /api/v2/alerts: the alerts Alertmanager holds now."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/v2/alerts", timeout=10) as response:
            return list(json.load(response))

    def stop(self) -> None:
        """Stop the process by its PID."""
        stop_process(self.process)


def wait_ready(process: subprocess.Popen[Any], url: str, name: str, timeout: float = 30.0) -> None:
    """Poll ``url`` until it answers; raise if ``process`` exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}")
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"{name} did not become ready")


def stop_process(process: subprocess.Popen[Any]) -> None:
    """SIGTERM a child by PID, then SIGKILL if it does not exit."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
