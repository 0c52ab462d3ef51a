"""A client's options, checked at construction: its servers' URLs and the sending settings.

>>> settings, targets = check(["http://a:9464", "https://b/streammon/"], "fraud")
>>> [str(t) for t in targets], settings.batch_size
(['http://a:9464', 'https://b:443/streammon'], 10000)
>>> check("http://user:pw@a:9464", "fraud")
Traceback (most recent call last):
...
ValueError: url 'http://user:pw@a:9464' is not a server URL: expected http(s)://HOST:PORT[/PREFIX] (no user, ...
"""

from __future__ import annotations

import math
import re
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from streammon.client.checks import show

_PATH = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:@%/-]*")  # RFC 3986 path characters (percent-escapes too)
MODEL_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


@dataclass(frozen=True)
class Target:
    """Where a lane sends: scheme, host, port and the path prefix before ``/v1``.

    >>> str(Target("http", "::1", 9464, "/monitor"))
    'http://[::1]:9464/monitor'
    """

    scheme: str
    host: str
    port: int
    prefix: str

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}{self.prefix}"


@dataclass(frozen=True)
class Settings:
    """The sending options a client gives each of its lanes (see ``Client``).

    >>> Settings().batch_size, Settings().max_buffer, Settings().compress_above
    (10000, 100000, None)
    """

    token: str | None = None
    batch_size: int = 10_000
    max_buffer: int = 100_000
    flush_interval: float = 1.0
    timeout: float = 10.0
    max_backoff: float = 5.0
    compress_above: int | None = None
    ssl_context: ssl.SSLContext | None = None


def check(url: Any, model: Any, *, token: Any = None, batch_size: Any = 10_000, max_buffer: Any = 100_000,
          flush_interval: Any = 1.0, timeout: Any = 10.0, max_backoff: Any = 5.0, compress_above: Any = None,
          ssl_context: Any = None, exit_timeout: Any = 5.0) -> tuple[Settings, list[Target]]:
    """The settings and targets of a ``Client``, or the error naming the first bad option."""
    urls = [url] if isinstance(url, str) else list(url) if isinstance(url, (list, tuple)) else None
    if not urls:
        raise TypeError(f"url must be a URL or a non-empty list of URLs, got {show(url)}")
    if not isinstance(model, str) or not 0 < len(model) <= 64 or model[0] in ".-" \
            or not set(model) <= MODEL_NAME_CHARS:
        raise ValueError(f"model {show(model)} is not a model name: expected 1 to 64 letters, digits, '_', "
                         "'.' or '-' (not first), as in the server's [models.NAME]")
    if token is not None and (not isinstance(token, str) or not token or not token.isascii()
                              or not token.isprintable() or " " in token):
        raise ValueError("token must be printable ASCII without spaces (the server's [server] token)")
    for name, value, least in (("batch_size", batch_size, 1), ("max_buffer", max_buffer, 1)):
        if type(value) is not int or value < least:
            raise ValueError(f"{name} must be an int >= {least}, got {show(value)}")
    for name, number in (("flush_interval", flush_interval), ("timeout", timeout),
                         ("max_backoff", max_backoff), ("exit_timeout", exit_timeout)):
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not 0 <= number < math.inf \
                or (number == 0 and name in ("flush_interval", "timeout")):
            bound = "> 0" if name in ("flush_interval", "timeout") else ">= 0"
            raise ValueError(f"{name} must be a finite number of seconds {bound}, got {show(number)}")
    if compress_above is not None and (type(compress_above) is not int or compress_above < 0):
        raise ValueError("compress_above must be a number of bytes >= 0 or None, got "
                         f"{show(compress_above)}")
    if ssl_context is not None and not isinstance(ssl_context, ssl.SSLContext):
        raise TypeError(f"ssl_context must be an ssl.SSLContext, got {type(ssl_context).__name__}")
    settings = Settings(token=token, batch_size=batch_size, max_buffer=max_buffer,
                        flush_interval=float(flush_interval), timeout=float(timeout),
                        max_backoff=float(max_backoff), compress_above=compress_above, ssl_context=ssl_context)
    return settings, [_target(u) for u in urls]


def _target(url: Any) -> Target:
    if not isinstance(url, str):
        raise TypeError(f"url {show(url)} ({type(url).__name__}) is not a URL: expected a str")
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:  # not a number, or out of 0-65535
        port = -1
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment \
            or parts.username or (port is not None and not 0 < port < 65536):
        raise ValueError(f"url {show(url)} is not a server URL: expected http(s)://HOST:PORT[/PREFIX] "
                         "(no user, query or fragment: the token goes in token=)")
    if not _PATH.fullmatch(parts.path):
        raise ValueError(f"url {show(url)}: the path {show(parts.path)} has characters a URL path cannot carry "
                         "unescaped")
    default = 443 if parts.scheme == "https" else 80
    return Target(parts.scheme, parts.hostname, port or default, parts.path.rstrip("/"))
