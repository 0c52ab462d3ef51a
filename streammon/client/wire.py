"""What a lane puts on the wire: the JSON body of a batch, and one request on a keep-alive HTTP/1.1 connection.

Columns of plain strings (the common case: keys and labels the calls found printable, without quotes or
backslashes) are joined in C rather than encoded one by one; anything else goes through ``json.dumps`` (strict: no
NaN). Until a call lets through a str with unprintable characters (``checks.UNPRINTABLE``), every str in the
buffer is printable, and the column is not scanned for them again.

>>> body([(0, "tx-1", "legit", None), (0, "tx-2", "fr\\"aud", None)], ("keys", "y_pred"))
b'{"keys":["tx-1","tx-2"],"y_pred":["legit","fr\\\\"aud"]}'
>>> body([(2, 1, True, 1700000000.5)], ("keys", "y_true"))
b'{"keys":[1],"y_true":[true],"t":[1700000000.5]}'
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import zlib
from operator import itemgetter
from typing import Any

from streammon.client.checks import UNPRINTABLE
from streammon.client.options import Settings, Target

CONNECTION_ERRORS = (OSError, http.client.HTTPException)
_first, _second, _time, _score = itemgetter(1), itemgetter(2), itemgetter(3), itemgetter(4)


def _array(values: tuple[Any, ...]) -> str:
    try:
        plain = "".join(values)
    except TypeError:  # not all str: ints, bools, floats, or a mix
        return json.dumps(values, separators=(",", ":"), allow_nan=False)
    if '"' not in plain and "\\" not in plain and (not UNPRINTABLE[0] or plain.isprintable()):
        return '["' + '","'.join(values) + '"]' if values else "[]"
    return json.dumps(values, separators=(",", ":"), allow_nan=False, ensure_ascii=False)


def body(rows: list[tuple[Any, ...]], fields: tuple[str, str]) -> bytes:
    """The JSON body of rows ``(kind, first, second, t)``: ``t`` sent when the rows have times (all or none do),
    ``y_score`` when they are scored rows ``(kind, first, second, t, y_score)`` (all or none are).

    >>> body([(1, "a", "b", None, 0.25), (1, "b", "b", None, 1.0)], ("y_true", "y_pred"))
    b'{"y_true":["a","b"],"y_pred":["b","b"],"y_score":[0.25,1.0]}'
    """
    if not rows:
        return f'{{"{fields[0]}":[],"{fields[1]}":[]}}'.encode()
    first, second = tuple(map(_first, rows)), tuple(map(_second, rows))
    text = f'{{"{fields[0]}":{_array(first)},"{fields[1]}":{_array(second)}'
    if rows[0][3] is not None:
        text += f',"t":{_array(tuple(map(_time, rows)))}'
    if len(rows[0]) == 5:  # scored rows (a batch is all scored or none: lane._batches)
        text += f',"y_score":{json.dumps(tuple(map(_score, rows)), separators=(",", ":"), allow_nan=False)}'
    return (text + "}").encode()


def pack(data: bytes, settings: Settings) -> tuple[bytes, dict[str, str]]:
    """The body (gzip above ``compress_above`` bytes) and its headers (the token's too).

    >>> data, headers = pack(b"{}" * 100, Settings(token="t0ken", compress_above=64))
    >>> headers["Content-Encoding"], headers["Authorization"], zlib.decompress(data, 31) == b"{}" * 100
    ('gzip', 'Bearer t0ken', True)
    """
    headers = {"Content-Type": "application/json"}
    if settings.token is not None:
        headers["Authorization"] = f"Bearer {settings.token}"
    if settings.compress_above is not None and len(data) > settings.compress_above:
        packer = zlib.compressobj(1, zlib.DEFLATED, 31)  # gzip framing, fastest level
        data = packer.compress(data) + packer.flush()
        headers["Content-Encoding"] = "gzip"
    return data, headers


class Connection:
    """A keep-alive connection to one server, opened on first use and again after an error.

    >>> Connection(Target("http", "127.0.0.1", 9, ""), Settings(timeout=1.0)).post("/v1/models", b"", {})
    Traceback (most recent call last):
    ...
    ConnectionRefusedError: [Errno 111] Connection refused
    """

    def __init__(self, target: Target, settings: Settings) -> None:
        self.target, self.settings = target, settings
        self.http: http.client.HTTPConnection | None = None

    def post(self, path: str, data: bytes, headers: dict[str, str]) -> tuple[int, str]:
        """One POST: the status and the server's message. Raises ``CONNECTION_ERRORS`` when no answer came; an
        idle connection the server had closed is retried once, at once, on a new one."""
        for attempt in range(2):
            fresh = self.http is None
            connection = self.http or self._open()
            try:
                connection.request("POST", path, data, headers)
                response = connection.getresponse()
                answer = response.read()
            except CONNECTION_ERRORS:
                self.close()
                if attempt == 0 and not fresh:
                    continue
                raise
            if response.will_close:
                self.close()
            return response.status, message(answer)
        raise AssertionError("unreachable")  # pragma: no cover

    def _open(self) -> http.client.HTTPConnection:
        target, settings = self.target, self.settings
        if target.scheme == "https":
            self.http = http.client.HTTPSConnection(target.host, target.port, timeout=settings.timeout,
                                                    context=settings.ssl_context or ssl.create_default_context())
        else:
            self.http = http.client.HTTPConnection(target.host, target.port, timeout=settings.timeout)
        return self.http

    def abort(self) -> None:
        """Shut the socket down from another thread: a ``post`` blocked on a server that does not answer returns
        (with an error) at once."""
        sock = getattr(self.http, "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        """Close the connection (the next ``post`` opens a new one)."""
        if self.http is not None:
            self.http.close()
            self.http = None


def message(answer: bytes) -> str:
    """The server's ``{"error": ...}`` (or the start of its answer), for the log.

    >>> message(b'{"error": "y_true[3]: null is not a class label"}'), message(b'{"accepted": 3}')
    ('y_true[3]: null is not a class label', '{"accepted": 3}')
    """
    try:
        document = json.loads(answer)
        text = str(document["error"]) if isinstance(document, dict) and "error" in document else answer.decode()
    except (ValueError, UnicodeDecodeError):
        text = answer[:500].decode("utf-8", "replace")
    return text[:500]
