"""A headless Chromium for the tests, driven over the DevTools protocol: open a page, record its network requests
and console, read the rendered DOM, take a screenshot, stop the browser by PID."""

from __future__ import annotations

import base64
import json
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
         "--window-size=1280,900")


class Browser:
    """Chromium with one page; ``requests`` and ``console`` collect what the page did since ``open``."""

    def __init__(self, binary: str, workdir: Path, timeout: float = 20.0) -> None:
        import websocket

        profile = workdir / "chromium-profile"
        self.process = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not port_file.exists() or not port_file.read_text().strip():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"chromium did not start (exit {self.process.returncode})")
            time.sleep(0.05)
        try:  # a stale port file or a slow start: stop the browser started here before raising
            port = int(port_file.read_text().split()[0])
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as answer:
                page = next(t for t in json.load(answer) if t["type"] == "page")
            self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=timeout,
                                                  suppress_origin=True)
        except BaseException:
            self.close()
            raise
        self._id = 0
        self.requests: list[str] = []
        self.console: list[tuple[str, str]] = []
        self._events: list[dict[str, Any]] = []
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and return its result, keeping the events that arrive meanwhile."""
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.console.append((params["type"], text))
        elif method == "Runtime.exceptionThrown":
            self.console.append(("exception", json.dumps(params["exceptionDetails"])[:2000]))
        elif method == "Log.entryAdded":
            self.console.append((params["entry"]["level"], params["entry"]["text"]))
        self._events.append(message)

    def open(self, url: str, ready: str, timeout: float = 20.0) -> None:
        """Navigate to ``url`` and wait until the JavaScript expression ``ready`` is true."""
        self.requests.clear()
        self.console.clear()
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        while not self.evaluate(ready):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url}: {ready} still false after {timeout} s; console {self.console}")
            time.sleep(0.1)

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression in the page."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> None:
        """The whole page (not just the viewport) as a PNG."""
        metrics = self.call("Page.getLayoutMetrics")
        size = metrics["cssContentSize"]
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                         clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1})
        path.write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        """Stop the browser by its PID."""
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
