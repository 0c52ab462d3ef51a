"""Where and within what the bounded HTTP core (``streammon.export.http_serving``) listens: the listening socket
(``listen``: IPv4, IPv6 or a host name) and what the server grants each client (``Limits``: its connections, deadlines
and byte caps, checked when made).
"""

from __future__ import annotations

import ipaddress
import math
import os
import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """What the server grants each client (seconds and bytes); see ``streammon.export.http_serving``'s module docstring.

    >>> Limits().max_connections, Limits().request_timeout, Limits().write_timeout, Limits().max_header_bytes
    (64, 5.0, 10.0, 8192)
    >>> Limits(request_timeout=0)
    Traceback (most recent call last):
    ...
    ValueError: request_timeout=0: expected a finite number of seconds > 0
    """

    max_connections: int = 64
    request_timeout: float = 5.0
    write_timeout: float = 10.0
    max_header_bytes: int = 8192
    max_body_bytes: int = 0
    body_timeout: float = 30.0
    keep_alive: float = 0.0

    def __post_init__(self) -> None:
        for name in ("max_connections", "max_header_bytes", "max_body_bytes"):
            count = getattr(self, name)
            if isinstance(count, bool) or not isinstance(count, int):
                raise TypeError(f"{name}={count!r}: expected an int")
            if count < (0 if name == "max_body_bytes" else 1):
                raise ValueError(f"{name}={count!r}: expected an int >= {int(name != 'max_body_bytes')}")
        keep = self.keep_alive
        if isinstance(keep, bool) or not isinstance(keep, (int, float)) or not 0 <= keep < math.inf:
            raise ValueError(f"keep_alive={keep!r}: expected a finite number of seconds >= 0 (0: close each time)")
        for name in ("request_timeout", "write_timeout", "body_timeout"):
            seconds = getattr(self, name)
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
                raise TypeError(f"{name}={seconds!r}: expected a number of seconds")
            if not 0 < seconds < math.inf:
                raise ValueError(f"{name}={seconds!r}: expected a finite number of seconds > 0")


def listen(addr: str, port: int) -> socket.socket:
    """A listening socket on ``addr`` (IPv4, IPv6 such as ``::1`` or ``[::1]``, or a host name), ``port`` (0: free)."""
    host = addr[1:-1] if addr.startswith("[") and addr.endswith("]") else addr
    try:
        if ":" in host:  # only IPv6 literals have colons: say so without asking DNS
            ipaddress.IPv6Address(host)
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError, ValueError) as error:
        raise ValueError(f"addr={addr!r}: expected an IPv4 or IPv6 address (such as 127.0.0.1 or ::1) "
                         f"or a host name that resolves ({error})") from None
    sock = socket.socket(family, kind, proto)
    try:
        if os.name == "posix":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(socket.SOMAXCONN)  # a burst of connections waits for the accept loop instead of being dropped
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock
