"""The exporter under hostile clients: idle, slowloris, half-handshake, slow-reading, oversized and too many
connections, over TLS, mutual TLS and basic auth, on 127.0.0.1 and ::1. Scrapes must still answer within a second
(a generous behavioural bound: an unhindered loopback scrape takes milliseconds), and stop() must return promptly."""

from __future__ import annotations

import contextlib
import gzip
import http.client
import logging
import os
import selectors
import socket
import ssl
import subprocess
import sys
import time
from base64 import b64encode
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from streammon import Monitor, Sliding
from streammon.export.http_serving import BoundedServer, Limits, listen
from streammon.export.server import MetricsServer, serve

ROOT = Path(__file__).resolve().parent.parent

PROMETHEUS_HEADERS = {  # what Prometheus 2.x sends with every scrape
    "Accept": "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,"
              "text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
    "Accept-Encoding": "gzip",
    "User-Agent": "Prometheus/2.53.0",
    "X-Prometheus-Scrape-Timeout-Seconds": "10",
}
CREDENTIALS = ("prom", "s3cret")
WITHIN = 1.0  # seconds an authorised scrape may take while hostile clients hold connections


def _monitor() -> Monitor:
    monitor = Monitor([Sliding(50)])
    monitor.update_many([0, 1, 0, 1], [0, 1, 1, 1])
    return monitor


def _scrape(host: str, port: int, *, context: ssl.SSLContext | None = None, auth: tuple[str, str] | None = None,
            path: str = "/metrics") -> tuple[int, bytes, float]:
    """One Prometheus-style scrape: (status, decoded body, seconds taken)."""
    headers = dict(PROMETHEUS_HEADERS)
    if auth is not None:
        headers["Authorization"] = "Basic " + b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    started = time.monotonic()
    connection = (http.client.HTTPSConnection(host, port, context=context, timeout=5) if context is not None
                  else http.client.HTTPConnection(host, port, timeout=5))
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        body = response.read()
        if response.getheader("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
    finally:
        connection.close()
    return response.status, body, time.monotonic() - started


def _client_context(cert: Path, key: Path | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(cert))
    if key is not None:
        context.load_cert_chain(str(cert), str(key))
    return context


def _open(stack: contextlib.ExitStack, server: MetricsServer | BoundedServer, host: str = "127.0.0.1"
          ) -> socket.socket:
    """A TCP connection that the test closes whatever happens."""
    return stack.enter_context(socket.create_connection((host, server.port), timeout=5))


def _readable(sock: socket.socket, seconds: float) -> bool:
    """The socket has something to read (data or the peer's close) within ``seconds`` (any fd number)."""
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_READ)
        return bool(selector.select(seconds))


def _is_open(sock: socket.socket) -> bool:
    """The server has neither closed the connection nor answered on it (for TLS, a read would wait)."""
    if not isinstance(sock, ssl.SSLSocket):
        return not _readable(sock, 0)
    timeout = sock.gettimeout()
    sock.settimeout(0.0)  # TLS 1.3 session tickets make the socket readable without any answer: read to see
    try:
        sock.recv(1)  # an answer, or b"" for a close
    except ssl.SSLWantReadError:
        return True
    except OSError:
        return False
    else:
        return False
    finally:
        sock.settimeout(timeout)


def _wait_closed(sock: socket.socket, seconds: float, dribble: bytes = b"") -> tuple[bool, bytes]:
    """Read until the server closes or ``seconds`` pass (sending one byte of ``dribble`` about every 0.1 s):
    (closed, what was received)."""
    deadline, received, sent = time.monotonic() + seconds, b"", 0
    while time.monotonic() < deadline:
        if sent < len(dribble):
            with contextlib.suppress(OSError):
                sock.send(dribble[sent : sent + 1])
            sent += 1
        if not _readable(sock, 0.1):
            continue
        sock.settimeout(0.1)
        try:
            chunk = sock.recv(1 << 20)
        except (TimeoutError, ssl.SSLWantReadError):
            continue
        except OSError:
            return True, received
        if not chunk:
            return True, received
        received += chunk
    return False, received


def _hold_hostile(stack: contextlib.ExitStack, server: MetricsServer, context: ssl.SSLContext
                  ) -> tuple[list[socket.socket], list[ssl.SSLSocket]]:
    """20 idle TCP connections, 5 that stop half-way through the ClientHello, 5 slowloris after a full handshake."""
    idle = [_open(stack, server) for _ in range(20)]
    for _ in range(5):
        half = _open(stack, server)
        half.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")  # a ClientHello's first bytes, then nothing
        idle.append(half)
    slow = []
    for _ in range(5):
        tls = stack.enter_context(context.wrap_socket(_open(stack, server), server_hostname="127.0.0.1"))
        tls.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        slow.append(tls)
    return idle, slow


@pytest.mark.parametrize("mutual", [False, True], ids=["tls+basic-auth", "mutual-tls"])
def test_idle_and_slowloris_tls_clients_do_not_delay_scrapes(tls_cert: tuple[Path, Path], mutual: bool) -> None:
    """With 30 idle, half-handshake and slowloris TLS connections held open, authorised scrapes answer within a
    second, unauthorised ones are refused, and the hostile connections are still held (not merely timed out)."""
    cert, key = tls_cert
    options: dict[str, Any] = (dict(client_cafile=str(cert), client_auth_required=True) if mutual
                               else dict(basic_auth=CREDENTIALS))
    context = _client_context(cert, key if mutual else None)
    auth = None if mutual else CREDENTIALS
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(serve(_monitor(), port=0, certfile=str(cert), keyfile=str(key),
                                           request_timeout=60, **options))
        idle, slow = _hold_hostile(stack, server, context)
        for round_ in range(5):
            status, body, seconds = _scrape("127.0.0.1", server.port, context=context, auth=auth)
            assert status == 200 and b"streammon_samples_total" in body
            assert seconds < WITHIN, f"scrape {round_} took {seconds:.2f} s"
            for tls in slow:
                tls.sendall(b"x")  # the slowloris keeps its requests alive
        if mutual:
            with pytest.raises(OSError):  # no client certificate: the handshake fails
                _scrape("127.0.0.1", server.port, context=_client_context(cert))
        else:
            assert _scrape("127.0.0.1", server.port, context=context)[0] == 401
            assert _scrape("127.0.0.1", server.port, context=context, auth=("prom", "wrong"))[0] == 401
        assert all(_is_open(sock) for sock in idle + slow)


def test_request_timeout_cuts_idle_and_slowloris_clients(tls_cert: tuple[Path, Path]) -> None:
    """request_timeout is one deadline from accept to the end of the headers: an idle TLS client and a plain-HTTP
    client that sends a header byte every 0.1 s (never idle for long) are both cut off, the latter with 408."""
    cert, key = tls_cert
    with contextlib.ExitStack() as stack:
        tls_server = stack.enter_context(serve(_monitor(), port=0, certfile=str(cert), keyfile=str(key),
                                               request_timeout=0.5))
        plain_server = stack.enter_context(serve(_monitor(), port=0, request_timeout=0.5))
        idle = _open(stack, tls_server)
        slowloris = _open(stack, plain_server)
        slowloris.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert _wait_closed(idle, 5.0) == (True, b"")
        closed, answer = _wait_closed(slowloris, 5.0, dribble=b"X-Slow: " + b"a" * 100)
        assert closed and answer.startswith(b"HTTP/1.1 408 ")
        assert _scrape("127.0.0.1", plain_server.port)[0] == 200


def test_oversized_request_heads_get_431_and_scrapes_go_on() -> None:
    """A 20 kB header or 150 header lines are refused with 431 (max_header_bytes=8192 and at most 100 lines);
    a malformed request line gets 400; the server keeps answering scrapes."""
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(serve(_monitor(), port=0))
        requests = {
            b"GET /metrics HTTP/1.1\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n": b"HTTP/1.1 431 ",
            b"GET /metrics HTTP/1.1\r\n" + b"X-Many: 1\r\n" * 150 + b"\r\n": b"HTTP/1.1 431 ",
            b"\x16\x03\x01 not http\r\n\r\n": b"HTTP/1.1 400 ",
        }
        for request, expected in requests.items():
            sock = _open(stack, server)
            sock.sendall(request)
            closed, answer = _wait_closed(sock, 5.0)
            assert closed and answer.startswith(expected), answer[:60]
        status, body, seconds = _scrape("127.0.0.1", server.port)
        assert status == 200 and b"streammon_samples_total" in body and seconds < WITHIN


@pytest.mark.parametrize("use_tls", [False, True], ids=["http", "https"])
def test_connections_beyond_the_bound_do_not_stop_scrapes(tls_cert: tuple[Path, Path], use_tls: bool) -> None:
    """With max_connections=8 and 200 idle connections arriving, the server holds at most 8 of them (it closes the
    oldest idle ones) and an authorised scrape still answers within a second."""
    cert, key = tls_cert
    options: dict[str, Any] = dict(certfile=str(cert), keyfile=str(key)) if use_tls else {}
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(serve(_monitor(), port=0, max_connections=8, request_timeout=60,
                                           basic_auth=CREDENTIALS, **options))
        idle = [_open(stack, server) for _ in range(200)]
        status, body, seconds = _scrape("127.0.0.1", server.port, auth=CREDENTIALS,
                                        context=_client_context(cert) if use_tls else None)
        assert status == 200 and b"streammon_samples_total" in body and seconds < WITHIN
        still_open = sum(_is_open(sock) for sock in idle)
        assert 1 <= still_open <= 8


def _big_app(size: int) -> Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]:
    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"m 1\n" * (size // 4)]

    return app


@contextlib.contextmanager
def _bounded(limits: Limits, size: int) -> Iterator[BoundedServer]:
    server = BoundedServer(_big_app(size), listen("127.0.0.1", 0), tls=None, limits=limits)
    try:
        yield server
    finally:
        server.stop()


def _slow_reader(stack: contextlib.ExitStack, server: BoundedServer) -> socket.socket:
    """A client that asks for the body and then does not read (a small receive buffer, so the server must wait)."""
    sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(5)
    sock.connect(("127.0.0.1", server.port))
    sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    return sock


def test_slow_reader_is_cut_by_write_timeout(caplog: pytest.LogCaptureFixture) -> None:
    """A client that does not read a 32 MB answer is cut off after write_timeout (it gets less than the
    Content-Length), is logged, and does not hold up another client meanwhile."""
    caplog.set_level(logging.INFO, logger="streammon.server")
    size = 32 << 20
    with contextlib.ExitStack() as stack, _bounded(Limits(write_timeout=0.5), size) as server:
        slow = _slow_reader(stack, server)
        status, body, _ = _scrape("127.0.0.1", server.port)
        assert status == 200 and len(body) == size
        deadline = time.monotonic() + 10  # until the server gives up on the slow reader
        while time.monotonic() < deadline and not any("answer not read" in r.getMessage() for r in caplog.records):
            time.sleep(0.05)
        received = b""
        with contextlib.suppress(OSError):
            while chunk := slow.recv(1 << 20):
                received += chunk
        assert 0 < len(received) < size
    assert any("answer not read within 0.5s" in record.getMessage() for record in caplog.records)


def test_full_server_refuses_newcomers_and_stops_promptly() -> None:
    """When every held connection is being answered (two slow readers, max_connections=2), a third connection is
    closed at once; stop() returns within 2 s even so, and the slow readers see their connection end."""
    with contextlib.ExitStack() as stack:
        server = BoundedServer(_big_app(32 << 20), listen("127.0.0.1", 0), tls=None,
                               limits=Limits(max_connections=2, write_timeout=60))
        stack.callback(server.stop)
        slow = [_slow_reader(stack, server) for _ in range(2)]
        assert all(_readable(sock, 5.0) for sock in slow)  # both are being answered
        newcomer = _open(stack, server)
        newcomer.sendall(b"GET /metrics HTTP/1.1\r\n\r\n")
        assert _wait_closed(newcomer, 3.0) == (True, b"")
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 2.0
        for sock in slow:
            assert _wait_closed(sock, 5.0)[0]


def test_stop_returns_promptly_while_hostile_tls_connections_are_held(tls_cert: tuple[Path, Path]) -> None:
    """stop() with idle, half-handshake and slowloris TLS connections held returns within 2 s and closes them."""
    cert, key = tls_cert
    with contextlib.ExitStack() as stack:
        server = serve(_monitor(), port=0, certfile=str(cert), keyfile=str(key), request_timeout=60)
        stack.callback(server.stop)
        idle, slow = _hold_hostile(stack, server, _client_context(cert))
        time.sleep(0.2)
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 2.0
        assert all(_wait_closed(sock, 5.0)[0] for sock in idle + slow)
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", server.port), timeout=2).close()


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="the kernel has no IPv6 loopback (::1)")
@pytest.mark.parametrize("addr", ["::1", "[::1]"])
def test_serves_on_ipv6_loopback(addr: str) -> None:
    """addr='::1' (or '[::1]') binds the IPv6 loopback, the URL brackets it, and a scrape over IPv6 answers."""
    with serve(_monitor(), port=0, addr=addr) as server:
        assert server.url == f"http://[::1]:{server.port}/metrics"
        status, body, _ = _scrape("::1", server.port)
        assert status == 200 and b"streammon_samples_total" in body


def test_bad_addresses_and_limits_are_clear_errors() -> None:
    """A malformed address, port or limit is a ValueError/TypeError naming the value, before anything is bound."""
    with pytest.raises(ValueError, match=r"addr='::1::'.*IPv6"):
        serve(_monitor(), port=0, addr="::1::")
    with pytest.raises(ValueError, match=r"port=70000"):
        serve(_monitor(), port=70000)
    with pytest.raises(ValueError, match=r"max_connections=0"):
        serve(_monitor(), port=0, max_connections=0)
    with pytest.raises(TypeError, match=r"request_timeout='5'"):
        serve(_monitor(), port=0, request_timeout="5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"write_timeout=nan"):
        serve(_monitor(), port=0, write_timeout=float("nan"))


def test_rejections_are_logged_on_streammon_server_without_handlers(caplog: pytest.LogCaptureFixture) -> None:
    """Unauthorised scrapes and timed-out clients are logged on the 'streammon.server' logger, a child of
    'streammon'; the library installs no handler that writes anywhere (a NullHandler only)."""
    caplog.set_level(logging.INFO, logger="streammon.server")
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(serve(_monitor(), port=0, basic_auth=CREDENTIALS, request_timeout=0.3))
        assert _scrape("127.0.0.1", server.port)[0] == 401
        assert _wait_closed(_open(stack, server), 5.0)[0]
    messages = [(record.name, record.getMessage()) for record in caplog.records]
    assert any(name == "streammon.server" and "401 Unauthorized" in text for name, text in messages), messages
    assert any(name == "streammon.server" and "request_timeout=0.3" in text for name, text in messages), messages
    package = logging.getLogger("streammon")
    assert logging.getLogger("streammon.server").parent is package
    assert [type(h) for h in logging.getLogger("streammon").handlers] == [logging.NullHandler]  # writes nowhere
    assert logging.getLogger("streammon.server").handlers == []


def test_a_busy_address_names_itself_and_points_to_streammon_serve() -> None:
    """serve() on a port another serve() holds raises OSError naming the address and `streammon serve`, and the
    collector is left unregistered so that another port works."""
    first = serve(Monitor([Sliding(5)]), port=0)
    try:
        with pytest.raises(OSError, match=rf"127\.0\.0\.1:{first.port}: the address is already in use.*streammon "
                                          "serve CONFIG"):
            serve(Monitor([Sliding(5)]), port=first.port)
    finally:
        first.stop()


def test_a_process_forked_after_serve_warns_that_its_samples_are_not_exported() -> None:
    """A child forked after serve() (gunicorn --preload) gets a RuntimeWarning naming the parent's URL and
    `streammon serve`; once the server stopped, a fork is quiet."""
    code = (
        "import os, warnings\n"
        "from streammon import Monitor, Sliding\n"
        "from streammon.export.server import serve\n"
        "server = serve(Monitor([Sliding(5)]), port=0)\n"
        "for round in range(2):\n"
        "    r, w = os.pipe()\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os.close(r)\n"
        "        os._exit(0)\n"
        "    os.close(w); os.waitpid(pid, 0)\n"
        "    server.stop()\n")
    done = subprocess.run([sys.executable, "-W", "default", "-c", code], check=False, capture_output=True, text=True,
                          timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("RuntimeWarning: streammon: this process") == 1  # the first fork only
    assert done.stderr.count("was forked from pid") == 1 and "streammon serve CONFIG" in done.stderr  # (the log
    # record on streammon.server goes to the application's handlers: none here)
