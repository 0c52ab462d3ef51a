"""A throwaway Prometheus on 127.0.0.1 for the tests: start, query, stop by PID."""

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
                 interval: str = "1s") -> None:
        self.port = free_port()
        config = workdir / "prometheus.yml"
        rules = "".join(f"  - {json.dumps(str(p))}\n" for p in rule_files)
        config.write_text(
            f"global:\n  scrape_interval: {interval}\n  evaluation_interval: {interval}\n"
            + (f"rule_files:\n{rules}" if rules else "")
            + "scrape_configs:\n  - job_name: streammon\n    static_configs:\n"
            + f"      - targets: {json.dumps(list(targets))}\n"
        )
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


def stop_process(process: subprocess.Popen[Any]) -> None:
    """SIGTERM a child by PID, then SIGKILL if it does not exit."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
