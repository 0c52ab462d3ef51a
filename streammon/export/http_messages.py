r"""HTTP/1.1 messages and WSGI: a request head into a WSGI environ, an app run to completion, its answer as bytes.

>>> environ = request_environ(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a", "127.0.0.1:5", "http", 9464)
>>> environ["PATH_INFO"], environ["QUERY_STRING"], environ["HTTP_HOST"], environ["REMOTE_ADDR"]
('/metrics', 'x=1', 'a', '127.0.0.1')
>>> http_response("200 OK", [("Content-Type", "text/plain")], b"hi").split(b"\r\n")[0]
b'HTTP/1.1 200 OK'
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import unquote

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
REQUEST_LINE = re.compile(r"([A-Z]+) (\S+) (HTTP/1\.[01])")
TOKEN = re.compile(r"[!#$%&'*+.^`|~0-9A-Za-z-]+")  # a header name; '_' is left out so no header poses as another
MAX_HEADER_LINES = 100


class Rejected(Exception):
    """A request the server will not answer normally: ``status`` is the HTTP answer ("" when none can be sent)."""

    def __init__(self, status: str, reason: str,
                 answer: tuple[str, list[tuple[str, str]], bytes] | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.answer = status, reason, answer  # answer: (status, headers, body) to send


def request_environ(head: bytes, peer: str, scheme: str, port: int) -> dict[str, Any]:
    """The WSGI environ of a request head (request line and header lines, without the blank line)."""
    request_line, *lines = re.split(r"\r?\n", head.decode("latin-1"))
    parsed = REQUEST_LINE.fullmatch(request_line)
    if parsed is None:
        raise Rejected("400 Bad Request", f"malformed request line {request_line[:80]!r}")
    if len(lines) > MAX_HEADER_LINES:
        raise Rejected("431 Request Header Fields Too Large", f"over {MAX_HEADER_LINES} header lines")
    method, target, protocol = parsed.groups()
    path, _, query = target.partition("?")
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method, "SCRIPT_NAME": "", "PATH_INFO": unquote(path, "latin-1"), "QUERY_STRING": query,
        "SERVER_PROTOCOL": protocol, "SERVER_NAME": "streammon", "SERVER_PORT": str(port),
        "REMOTE_ADDR": peer.rpartition(":")[0].strip("[]"),
        "wsgi.version": (1, 0), "wsgi.url_scheme": scheme, "wsgi.input": io.BytesIO(), "wsgi.errors": sys.stderr,
        "wsgi.multithread": True, "wsgi.multiprocess": False, "wsgi.run_once": False,
    }
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon or TOKEN.fullmatch(name) is None:
            raise Rejected("400 Bad Request", f"malformed header line {line[:80]!r}")
        key = name.upper().replace("-", "_")
        key = key if key in ("CONTENT_TYPE", "CONTENT_LENGTH") else "HTTP_" + key
        environ[key] = f"{environ[key]},{value.strip()}" if key in environ else value.strip()
    return environ


def call_app(app: WSGIApp, environ: dict[str, Any]) -> tuple[str, list[tuple[str, str]], bytes]:
    """Run a WSGI app to completion: its status, headers and whole body."""
    started: list[Any] = []
    written: list[bytes] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
        started[:] = [status, headers]
        return written.append

    result = app(environ, start_response)
    try:
        body = b"".join([*written, *result])
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    status, headers = started
    return str(status), list(headers), body


def http_response(status: str, headers: list[tuple[str, str]], body: bytes, *, keep_alive: bool = False) -> bytes:
    kept = [f"{name}: {value}" for name, value in headers
            if name.lower() not in ("content-length", "connection", "transfer-encoding")]
    lines = [f"HTTP/1.1 {status}", *kept, f"Content-Length: {len(body)}",
             "Connection: keep-alive" if keep_alive else "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
