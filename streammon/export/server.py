"""Serve ``/metrics`` for one or more monitors over HTTP(S), on 127.0.0.1 unless told otherwise.

Options follow ``prometheus_client.start_http_server`` (``certfile``/``keyfile``
for TLS, ``client_cafile`` and ``client_auth_required`` for mutual TLS) plus
HTTP basic auth (``basic_auth=(user, password)``; use it with TLS, or the
password crosses the network in clear). ``addr`` may be IPv4 or IPv6 (``::1``).
A scrape is answered from ``MonitorCollector.exposition()`` (each model formatted once per change; see ``serve``).

No client can stall the exporter: TLS handshakes run per connection, never in
the accept loop, under a deadline, and connections are bounded; see ``serve``
and ``streammon.export.http_serving``. Rejected requests are logged on the
``"streammon.server"`` logger (the library adds no handlers).

>>> from streammon import Monitor, Sliding
>>> import urllib.request
>>> server = serve(Monitor([Sliding(10)]), port=0, model="demo")
>>> server.url.startswith("http://127.0.0.1:")
True
>>> body = urllib.request.urlopen(server.url).read().decode()
>>> 'streammon_window_samples{model="demo",window="sliding_10"} 0.0' in body
True
>>> server.stop()
"""

from __future__ import annotations

import base64
import errno
import functools
import gzip
import hmac
import logging
import os
import ssl
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client import generate_latest as text_latest
from prometheus_client.exposition import choose_encoder, gzip_accepted
from prometheus_client.openmetrics.exposition import generate_latest as openmetrics_latest

from streammon.export.http_messages import WSGIApp
from streammon.export.http_serving import BoundedServer, Limits, listen
from streammon.export.prometheus import MonitorCollector
from streammon.monitor import Monitor

DEFAULT_PORT = 9464
GZIP_LEVEL = 1  # 2-3 ms for the ~1 MB of 20 models × 4 windows at K = 10 (level 9, prometheus_client's: ~25 ms)
_NAMES_KEPT = ("underscores", "allow-utf-8")  # escaping schemes that leave legacy metric and label names as they are


def _fast_format(encoder: Callable[..., bytes]) -> bool | None:
    """What ``choose_encoder`` chose, when ``MonitorCollector.exposition`` writes the same bytes: False for the
    text format, True for OpenMetrics 1.0.0; None for anything else (prometheus_client writes it)."""
    func, keywords = (encoder.func, encoder.keywords) if isinstance(encoder, functools.partial) else (encoder, {})
    if keywords.get("escaping", "underscores") not in _NAMES_KEPT:
        return None
    if func is text_latest and keywords.keys() <= {"escaping"}:
        return False
    if func is openmetrics_latest and keywords.get("version", "1.0.0") == "1.0.0" and keywords.keys() <= {
            "escaping", "version"}:
        return True
    return None


def _collector_app(collector: MonitorCollector, registry: CollectorRegistry) -> WSGIApp:
    """``make_wsgi_app(registry)`` for a registry holding only ``collector``, answering a metrics request from
    ``collector.exposition()`` (each model formatted once per change; the bytes, and their gzip, kept while nothing
    changed). Content negotiation is prometheus_client's ``choose_encoder``; a format ``exposition`` does not
    write, ``name[]`` filters, other methods and ``/favicon.ico`` go to ``make_wsgi_app``."""
    fallback: WSGIApp = make_wsgi_app(registry)
    compressed: dict[bool, tuple[bytes, bytes]] = {}  # openmetrics? -> the last body and its gzip
    lock = threading.Lock()

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if (environ["REQUEST_METHOD"] != "GET" or environ["PATH_INFO"] == "/favicon.ico"
                or "name[]" in parse_qs(environ.get("QUERY_STRING", ""))):
            return fallback(environ, start_response)
        encoder, content_type = choose_encoder(str(environ.get("HTTP_ACCEPT") or ""))
        openmetrics = _fast_format(encoder)
        if openmetrics is None:
            return fallback(environ, start_response)
        body = collector.exposition(openmetrics=openmetrics)
        headers = [("Content-Type", content_type)]
        if gzip_accepted(str(environ.get("HTTP_ACCEPT_ENCODING") or "")):
            with lock:
                last = compressed.get(openmetrics)
            if last is not None and last[0] is body:
                body = last[1]
            else:
                packed = gzip.compress(body, compresslevel=GZIP_LEVEL)
                with lock:
                    compressed[openmetrics] = (body, packed)
                body = packed
            headers.append(("Content-Encoding", "gzip"))
        start_response("200 OK", headers)
        return [body]

    return app


def _with_basic_auth(app: WSGIApp, user: str, password: str) -> WSGIApp:
    expected = ("Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()).encode()

    def guarded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        given = str(environ.get("HTTP_AUTHORIZATION", "")).encode()
        if not hmac.compare_digest(given, expected):
            start_response(
                "401 Unauthorized",
                [("WWW-Authenticate", 'Basic realm="streammon"'), ("Content-Type", "text/plain")],
            )
            return [b"401 Unauthorized\n"]
        return app(environ, start_response)

    return guarded


def _tls_context(certfile: str, keyfile: str | None, client_cafile: str | None, client_auth_required: bool
                 ) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(certfile, keyfile)
    if client_cafile:
        context.load_verify_locations(cafile=client_cafile)
    context.verify_mode = ssl.CERT_REQUIRED if client_auth_required else ssl.CERT_NONE
    return context


class MetricsServer:
    """A running ``/metrics`` endpoint; ``stop()`` it (or use it as a context manager)."""

    def __init__(self, app: WSGIApp, *, addr: str, port: int, tls: ssl.SSLContext | None,
                 limits: Limits | None = None) -> None:
        listener = listen(addr, port)
        self._server = BoundedServer(app, listener, tls=tls, limits=limits if limits is not None else Limits())
        self.scheme = "https" if tls else "http"
        self.addr = addr[1:-1] if addr.startswith("[") and addr.endswith("]") else addr
        self.port = self._server.port
        self.stopped = False

    @property
    def url(self) -> str:
        """The metrics URL."""
        host = f"[{self.addr}]" if ":" in self.addr else self.addr
        return f"{self.scheme}://{host}:{self.port}/metrics"

    def stop(self) -> None:
        """Stop serving: close the socket and every held connection (returns within about 2 s)."""
        self.stopped = True
        self._server.stop()

    def __enter__(self) -> MetricsServer:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def serve(
    source: Monitor | Mapping[str, Monitor] | MonitorCollector,
    *,
    port: int = DEFAULT_PORT,
    addr: str = "127.0.0.1",
    model: str = "default",
    registry: CollectorRegistry | None = None,
    certfile: str | None = None,
    keyfile: str | None = None,
    client_cafile: str | None = None,
    client_auth_required: bool = False,
    basic_auth: tuple[str, str] | None = None,
    max_connections: int = 64,
    request_timeout: float = 5.0,
    write_timeout: float = 10.0,
    max_header_bytes: int = 8192,
    distortion_prone: bool = False,
    confusion: bool = False,
) -> MetricsServer:
    """Serve ``source`` (a monitor, named monitors, or a collector) at ``/metrics``.

    A single monitor is served under ``model``. ``distortion_prone`` and ``confusion`` are
    ``MonitorCollector``'s options (ignored when ``source`` is a collector: set them on it).
    Serve from one process: a busy address raises ``OSError`` naming it, and a process forked
    after ``serve`` (a gunicorn ``--preload`` worker) warns that its samples are not exported:
    several worker processes send to one ``streammon serve CONFIG`` instead. ``port=0`` picks a free port;
    ``addr`` is an IPv4 or IPv6 address (``"::1"``) or a host name. The
    collector is registered in ``registry`` (a new ``CollectorRegistry`` by
    default — never the global one).

    With the default registry, a scrape is answered from ``MonitorCollector.exposition``: the text of a model
    is formatted once per change of its report, and the whole answer (and its gzip, level ``GZIP_LEVEL``) is
    sent again while no model changed. The answer is what ``make_wsgi_app`` would send (the text format or
    OpenMetrics as the ``Accept`` header asks, gzip when accepted), byte for byte before compression. With
    ``registry=`` (which may hold other collectors), and for ``name[]`` filters, prometheus_client's
    ``make_wsgi_app`` answers.

    Limits, so that no client can hold the exporter (each answer closes its
    connection):

    - ``max_connections``: connections held at once; one more closes the oldest
      connection that has not sent its request yet, or is refused when all are
      being answered.
    - ``request_timeout``: seconds from accepting a connection to the end of its
      request headers, TLS handshake included (idle and slowloris clients).
    - ``write_timeout``: seconds to send the answer (clients that read slowly).
    - ``max_header_bytes``: size of the request line and headers (431 beyond).

    >>> from streammon import Sliding
    >>> serve(Monitor([Sliding(5)]), port=0, addr="::1::")
    Traceback (most recent call last):
    ...
    ValueError: addr='::1::': expected an IPv4 or IPv6 address (such as 127.0.0.1 or ::1) or a host name ...
    """
    if isinstance(port, bool) or not isinstance(port, int):
        raise TypeError(f"port={port!r}: expected an int")
    if not 0 <= port <= 65535:
        raise ValueError(f"port={port!r}: expected 0 (any free port) to 65535")
    limits = Limits(max_connections=max_connections, request_timeout=request_timeout, write_timeout=write_timeout,
                    max_header_bytes=max_header_bytes)
    tls = _tls_context(certfile, keyfile, client_cafile, client_auth_required) if certfile else None
    if tls is None and (keyfile or client_cafile or client_auth_required):
        raise ValueError("TLS options need certfile=")
    if isinstance(source, MonitorCollector):
        collector = source
    elif isinstance(source, Monitor):
        collector = MonitorCollector({model: source}, distortion_prone=distortion_prone, confusion=confusion)
    else:
        collector = MonitorCollector(source, distortion_prone=distortion_prone, confusion=confusion)
    own = registry is None
    registry = CollectorRegistry() if registry is None else registry
    registry.register(collector)
    # the registry holds only the collector: answer from its kept text; another registry may hold more
    app: WSGIApp = _collector_app(collector, registry) if own else make_wsgi_app(registry)
    if basic_auth is not None:
        user, password = basic_auth
        app = _with_basic_auth(app, user, password)
    try:
        server = MetricsServer(app, addr=addr, port=port, tls=tls, limits=limits)
    except OSError as error:
        registry.unregister(collector)  # so that serving again on another address works
        raise OSError(error.errno, _bind_failure(addr, port, error)) from None
    except BaseException:
        registry.unregister(collector)
        raise
    _warn_in_forked_children(server)
    return server


def _bind_failure(addr: str, port: int, error: OSError) -> str:
    """Why ``addr:port`` cannot be served, naming it, and what to do."""
    where = f"[{addr}]:{port}" if ":" in addr and not addr.startswith("[") else f"{addr}:{port}"
    if error.errno == errno.EADDRINUSE:
        return (f"cannot serve /metrics on {where}: the address is already in use — by another process, or by "
                "another worker of this service (serve() in every gunicorn/uvicorn worker binds the same port). "
                "Worker processes should not export on their own: run one `streammon serve CONFIG` beside them "
                "and send to it with streammon.client; or pass another port (0: any free port)")
    return f"cannot serve /metrics on {where}: {error.strerror or error}"


_SERVED: list[tuple[int, MetricsServer]] = []  # the metrics servers started in this process, with its pid


def _warn_in_forked_children(server: MetricsServer) -> None:
    """Remember ``server``; a process forked after it (gunicorn --preload, multiprocessing) warns at once: its
    samples are not what that server, left in the parent, exports."""
    if not _SERVED and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_forked)
    _SERVED.append((os.getpid(), server))


def _forked() -> None:
    parents = [(pid, server.url) for pid, server in _SERVED if pid != os.getpid() and not server.stopped]
    _SERVED.clear()  # a forked child serves nothing of its own yet
    if parents:
        message = (f"streammon: this process (pid {os.getpid()}) was forked from pid {parents[0][0]}, which serves "
                   f"{parents[0][1]}: samples counted here are not exported there (each process has its own "
                   "monitor). Send every worker's predictions and labels to one `streammon serve CONFIG` with "
                   "streammon.client instead")
        logging.getLogger("streammon.server").warning(message)
        warnings.warn(message, RuntimeWarning, stacklevel=1)
