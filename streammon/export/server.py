"""Serve ``/metrics`` for one or more monitors over HTTP(S), on 127.0.0.1 unless told otherwise.

Options follow ``prometheus_client.start_http_server`` (``certfile``/``keyfile``
for TLS, ``client_cafile`` and ``client_auth_required`` for mutual TLS) plus
HTTP basic auth (``basic_auth=(user, password)``; use it with TLS, or the
password crosses the network in clear).

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
import hmac
import ssl
import threading
from collections.abc import Callable, Iterable, Mapping
from socketserver import ThreadingMixIn
from types import TracebackType
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

from streammon.export.prometheus import MonitorCollector
from streammon.monitor import Monitor

DEFAULT_PORT = 9464
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes are not logged to stderr."""


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

    def __init__(self, app: WSGIApp, *, addr: str, port: int, tls: ssl.SSLContext | None) -> None:
        self._server = make_server(addr, port, app, _ThreadingWSGIServer, handler_class=_QuietHandler)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self.scheme = "https" if tls else "http"
        self.addr = addr
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, name="streammon-metrics", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """The metrics URL."""
        return f"{self.scheme}://{self.addr}:{self.port}/metrics"

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

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
) -> MetricsServer:
    """Serve ``source`` (a monitor, named monitors, or a collector) at ``/metrics``.

    A single monitor is served under ``model``. ``port=0`` picks a free port.
    The collector is registered in ``registry`` (a new ``CollectorRegistry`` by
    default — never the global one).
    """
    if isinstance(source, MonitorCollector):
        collector = source
    elif isinstance(source, Monitor):
        collector = MonitorCollector({model: source})
    else:
        collector = MonitorCollector(source)
    registry = registry if registry is not None else CollectorRegistry()
    registry.register(collector)
    app: WSGIApp = make_wsgi_app(registry)
    if basic_auth is not None:
        user, password = basic_auth
        app = _with_basic_auth(app, user, password)
    tls = _tls_context(certfile, keyfile, client_cafile, client_auth_required) if certfile else None
    if tls is None and (keyfile or client_cafile or client_auth_required):
        raise ValueError("TLS options need certfile=")
    return MetricsServer(app, addr=addr, port=port, tls=tls)
