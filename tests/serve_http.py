"""Plain-HTTP helpers for the tests of ``streammon serve``: a client that is not streammon's (``http.client`` and
raw sockets), configurations written as TOML text, and an independent recount of confusion counts."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

TOKEN = "t0ken-of-the-test-server-0123456789"
CLIENT_TIMEOUT = 60.0  # the first batch of a process may compile the read path (numba) on a loaded machine


def config_text(state_dir: Path, *, listen: str = "127.0.0.1:0", models: Iterable[str] = ("m",),
                windows: str = '["cumulative"]', **server: Any) -> str:
    """A TOML configuration: ``[server]`` with ``server``'s keys, and one ``[models.NAME]`` per model."""
    lines = ["[server]", f'listen = "{listen}"', f"state_dir = {json.dumps(str(state_dir))}"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in server.items()]
    for name in models:
        lines += [f"[models.{name}]", f"windows = {windows}"]
    return "\n".join(lines) + "\n"


def request(port: int, method: str, path: str, body: bytes | Iterable[bytes] | None = None,
            headers: dict[str, str] | None = None, *, context: ssl.SSLContext | None = None,
            chunked: bool = False) -> tuple[int, dict[str, str], bytes]:
    """One request on a new connection: (status, headers, body)."""
    connection = (http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=CLIENT_TIMEOUT)
                  if context is not None else http.client.HTTPConnection("127.0.0.1", port, timeout=CLIENT_TIMEOUT))
    try:
        connection.request(method, path, body=body, headers=headers or {}, encode_chunked=chunked)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def post(port: int, model: str, kind: str, batch: dict[str, Any] | bytes, headers: dict[str, str] | None = None,
         **options: Any) -> tuple[int, Any]:
    """POST a batch (a dict is sent as JSON): (status, the JSON answer, or the text of a non-JSON answer)."""
    body = batch if isinstance(batch, bytes) else json.dumps(batch).encode()
    status, answer_headers, answer = request(port, "POST", f"/v1/models/{model}/{kind}", body, headers, **options)
    if answer_headers.get("Content-Type") == "application/json":
        return status, json.loads(answer)
    return status, answer.decode("utf-8", "replace")


def report(port: int, model: str = "m", **options: Any) -> dict[str, Any]:
    """The model's ``Report.to_dict()`` as the server answers it."""
    status, _, body = request(port, "GET", f"/v1/models/{model}/report", **options)
    assert status == 200, body[:200]
    answer: dict[str, Any] = json.loads(body)
    return answer


def confusion(answer: dict[str, Any], window: str = "cumulative") -> Counter[tuple[Any, Any]]:
    """The (true, predicted) -> count cells of a report's window, non-zero only, by the labels' values."""
    labels = [label["value"] for label in answer["labels"]]
    matrix = answer["windows"][window]["confusion"] if answer["windows"] else answer["totals"]
    return Counter({(labels[i], labels[j]): n for i, row in enumerate(matrix) for j, n in enumerate(row) if n})


def recount(pairs: Iterable[tuple[Any, Any]]) -> Counter[tuple[Any, Any]]:
    """The confusion counts of (true, predicted) pairs, counted here (Python equality: 1, 1.0 and true are one
    class, as the monitor's label rules say)."""
    return Counter(pairs)


def joined(predictions: dict[Any, Any], labels: dict[Any, Any]) -> list[tuple[Any, Any]]:
    """The (true, predicted) pairs of the keys that have both a prediction and a label."""
    return [(labels[key], predictions[key]) for key in labels if key in predictions]


def raw_exchange(port: int, data: bytes, *, wait: float = 10.0) -> bytes:
    """Send ``data`` on a raw TCP connection and read until the server closes it (or ``wait`` seconds)."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(data)
        return read_until_closed(sock, wait)


def read_until_closed(sock: socket.socket, wait: float) -> bytes:
    """What the server sends until it closes the connection (or ``wait`` seconds pass)."""
    received, deadline = b"", time.monotonic() + wait
    with contextlib.suppress(OSError):
        while time.monotonic() < deadline:
            sock.settimeout(max(deadline - time.monotonic(), 0.01))
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    return received


def http_post(path: str, body: bytes, extra: str = "", *, close: bool = False) -> bytes:
    """The bytes of a POST request with a Content-Length (for raw sockets and pipelining)."""
    connection = "Connection: close\r\n" if close else ""
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n{extra}{connection}\r\n"
            .encode() + body)
