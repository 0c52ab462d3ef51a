r"""Request bodies for the bounded HTTP core (``streammon.export.http_serving``): ``Content-Length`` or chunked,
``Expect: 100-continue``, gzip inflated no further than the cap, everything under one deadline; ``Rejected`` with
the status to answer (400, 408, 413, 415, 501) for what cannot be taken.

>>> import socket
>>> a, b = socket.socketpair()
>>> _ = a.sendall(b"5\r\nhello\r\n0\r\n\r\nNEXT")
>>> buffer = bytearray()
>>> read_body(b, {"HTTP_TRANSFER_ENCODING": "chunked"}, buffer, cap=10, timeout=1.0, deadline=time.monotonic() + 1)
b'hello'
>>> bytes(buffer), a.close(), b.close()
(b'NEXT', None, None)
"""

from __future__ import annotations

import socket
import time
import zlib
from typing import Any

from streammon.export.http_messages import Rejected


def _receive(sock: socket.socket, deadline: float, status: str, reason: str) -> bytes:
    """Up to 64 KiB from ``sock`` before ``deadline``; ``Rejected(status, reason)`` when it passes, or the client
    closed."""
    sock.settimeout(max(deadline - time.monotonic(), 1e-3))
    try:
        chunk = sock.recv(65536)
    except TimeoutError:
        raise Rejected(status, reason) from None
    if not chunk:
        raise Rejected("", "closed before sending a complete request")
    return chunk


def read_body(sock: socket.socket, environ: dict[str, Any], buffer: bytearray, *, cap: int, timeout: float,
              deadline: float) -> bytes:
    """The request's body, decompressed (``Content-Encoding: gzip``), at most ``cap`` bytes, before ``deadline``
    (``timeout`` seconds from its start: named in the refusal); what follows it stays in ``buffer``. ``Rejected``
    with 400, 408, 413, 415 or 501 for what cannot be taken.

    A ``Content-Length`` over the cap is refused before a byte of the body is read; so is anything once the
    compressed or decompressed bytes pass it. ``Expect: 100-continue`` is answered when the body will be read.
    """
    encoding = str(environ.get("HTTP_TRANSFER_ENCODING", "")).strip().lower()
    length_field = environ.get("CONTENT_LENGTH")
    if encoding and encoding != "chunked":
        raise Rejected("501 Not Implemented", f"Transfer-Encoding {encoding[:40]!r}: only chunked is understood")
    if encoding and length_field is not None:
        raise Rejected("400 Bad Request", "both Content-Length and Transfer-Encoding: refused (request smuggling)")
    if not encoding and length_field is None:
        return b""
    if length_field is not None:
        if not str(length_field).isdigit() or len(str(length_field)) > 18:
            raise Rejected("400 Bad Request", f"Content-Length {str(length_field)[:40]!r} is not a byte count")
        length = int(str(length_field))
        if length > cap:
            raise Rejected("413 Content Too Large", f"a body of {length} bytes, over max_body_bytes={cap}")
        if length == 0:
            return b""
    coding = str(environ.get("HTTP_CONTENT_ENCODING", "identity")).strip().lower()
    if coding not in ("identity", "gzip", "x-gzip"):
        raise Rejected("415 Unsupported Media Type", f"Content-Encoding {coding[:40]!r}: send gzip or identity")
    if str(environ.get("HTTP_EXPECT", "")).strip().lower() == "100-continue" and not buffer:
        sock.settimeout(max(deadline - time.monotonic(), 1e-3))
        sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    reason = f"body not received within body_timeout={timeout}s"
    raw = _read_exact(sock, buffer, length, deadline, reason) if length_field is not None else \
        _read_chunked(sock, buffer, cap, deadline, reason)
    return raw if coding == "identity" else _gunzip(raw, cap)


def _gunzip(raw: bytes, cap: int) -> bytes:
    """A gzip body decompressed, refused (413) as soon as it passes ``cap`` bytes: never inflated beyond."""
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflate.decompress(raw, cap + 1)
    except zlib.error as error:
        raise Rejected("400 Bad Request", f"the gzip body is corrupt: {error}") from None
    if len(out) > cap or inflate.unconsumed_tail:
        raise Rejected("413 Content Too Large", f"the body decompresses to over max_body_bytes={cap}")
    if not inflate.eof:
        raise Rejected("400 Bad Request", "the gzip body is truncated")
    return out


def _read_exact(sock: socket.socket, buffer: bytearray, length: int, deadline: float, reason: str) -> bytes:
    while len(buffer) < length:
        buffer += _receive(sock, deadline, "408 Request Timeout", reason)
    body = bytes(buffer[:length])
    del buffer[:length]
    return body


def _read_chunked(sock: socket.socket, buffer: bytearray, cap: int, deadline: float, reason: str) -> bytes:
    body = bytearray()
    while True:
        while (end := buffer.find(b"\r\n")) < 0:
            if len(buffer) > 1024:
                raise Rejected("400 Bad Request", "a chunk size line over 1,024 bytes")
            buffer += _receive(sock, deadline, "408 Request Timeout", reason)
        size_field = bytes(buffer[:end]).split(b";", 1)[0].strip()
        if not size_field or len(size_field) > 15 or any(c not in b"0123456789abcdefABCDEF" for c in size_field):
            raise Rejected("400 Bad Request", f"bad chunk size {size_field[:20]!r}")
        size = int(size_field, 16)
        del buffer[: end + 2]
        if size == 0:  # the last chunk: skip the trailer up to its blank line
            while (end := buffer.find(b"\r\n")) != 0:
                if end > 0:
                    del buffer[: end + 2]
                    continue
                if len(buffer) > 8192:
                    raise Rejected("400 Bad Request", "a chunked trailer over 8,192 bytes")
                buffer += _receive(sock, deadline, "408 Request Timeout", reason)
            del buffer[:2]
            return bytes(body)
        if len(body) + size > cap:
            raise Rejected("413 Content Too Large", f"a chunked body over max_body_bytes={cap}")
        body += _read_exact(sock, buffer, size + 2, deadline, reason)[:size]
