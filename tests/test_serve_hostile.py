"""``streammon serve`` under hostile clients on its POST paths (the exporter's tests in test_server_hostile.py,
applied to the server): slowloris on the head and on the body, more connections than max_connections, a client
that does not read its answers, oversized heads; healthy clients are served meanwhile, within a second, and
their batches counted. Then TLS with the bearer token."""

from __future__ import annotations

import contextlib
import json
import logging
import selectors
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from streammon.serve.config import parse
from streammon.serve.run import Server
from tests.serve_http import TOKEN, config_text, confusion, http_post, post, read_until_closed, recount, report, request

WITHIN = 1.0  # seconds a healthy batch may take while hostile clients are held (loopback: milliseconds)
BATCH = {"y_true": ["a", "b"], "y_pred": ["a", "a"]}


@contextlib.contextmanager
def serving(state_dir: Path, context: ssl.SSLContext | None = None, **server: Any) -> Iterator[Server]:
    """A server of one model ``m`` under ``state_dir`` with short deadlines, stopped whatever happens."""
    options: dict[str, Any] = {"max_body_bytes": 100_000, "request_timeout": 0.5, "body_timeout": 0.5,
                               "write_timeout": 0.5, **server}
    running = Server(parse(config_text(state_dir, models=("m", "warm"), **options)))
    try:
        post(running.port, "warm", "samples", BATCH, context=context, **_auth(server))  # a process's first compiles
        yield running
    finally:
        running.stop(grace=2.0)


def _auth(server: dict[str, Any]) -> dict[str, Any]:
    return {"headers": {"Authorization": f"Bearer {TOKEN}"}} if "token" in server else {}


def _healthy(port: int, n: int = 1) -> None:
    """``n`` healthy batches, each answered 200 within WITHIN seconds."""
    for _ in range(n):
        started = time.monotonic()
        assert post(port, "m", "samples", BATCH) == (200, {"accepted": 2})
        took = time.monotonic() - started
        assert took < WITHIN, f"a healthy batch took {took:.2f} s"


def _is_open(sock: socket.socket) -> bool:
    """The server has neither closed the connection nor answered on it."""
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_READ)
        return not selector.select(0)


def _open(stack: contextlib.ExitStack, port: int) -> socket.socket:
    return stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=5))


def test_slowloris_on_head_and_body_is_cut_and_healthy_batches_go_on(tmp_path: Path) -> None:
    """A client dribbling its head (a byte per 0.1 s) gets 408 after request_timeout, one dribbling its body
    gets 408 after body_timeout (the deadline is not renewed by each byte); healthy batches are answered
    within a second meanwhile, and only theirs are counted."""
    with contextlib.ExitStack() as stack, serving(tmp_path) as server:
        head = _open(stack, server.port)
        head.sendall(b"POST /v1/models/m/samples HTTP/1.1\r\nHost: x\r\n")
        body = _open(stack, server.port)
        payload = json.dumps(BATCH).encode()
        body.sendall(http_post("/v1/models/m/samples", payload)[: -len(payload)])
        answers: dict[str, bytes] = {}
        started, sent = time.monotonic(), 0
        while len(answers) < 2 and time.monotonic() - started < 5:
            for name, sock, dribble in (("head", head, b"X-Slow: " + b"a" * 100), ("body", body, payload)):
                if name in answers:
                    continue
                with contextlib.suppress(OSError):
                    sock.send(dribble[sent : sent + 1] or b" ")
                sock.settimeout(0.0)
                with contextlib.suppress(BlockingIOError, OSError):
                    chunk = sock.recv(4096)
                    answers[name] = chunk
            sent += 1
            _healthy(server.port)
            time.sleep(0.1)
        assert answers["head"].startswith(b"HTTP/1.1 408 ")
        assert answers["body"].startswith(b"HTTP/1.1 408 ") and b"body_timeout=0.5s" in answers["body"]
        assert time.monotonic() - started < 3
        assert confusion(report(server.port))[("a", "a")] == report(server.port)["samples"] // 2


def test_connections_beyond_max_connections_do_not_stop_batches(tmp_path: Path) -> None:
    """With max_connections=8, 100 idle connections and 8 that stop half-way through a body do not keep a
    healthy batch from being answered within a second; the server holds at most 8 of them."""
    with contextlib.ExitStack() as stack, serving(tmp_path, max_connections=8, request_timeout=60,
                                                  body_timeout=60) as server:
        stuck = []
        for _ in range(8):
            sock = _open(stack, server.port)
            sock.sendall(http_post("/v1/models/m/samples", b" " * 1000)[:-500])
            stuck.append(sock)
        idle = [_open(stack, server.port) for _ in range(100)]
        _healthy(server.port, 3)
        held = sum(_is_open(sock) for sock in stuck + idle)
        assert 1 <= held <= 8
        assert report(server.port)["samples"] == 6


def test_a_client_that_does_not_read_is_cut_by_write_timeout(tmp_path: Path,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    """A client that pipelines 3,000 report requests and reads none of the answers (a 4 kB receive buffer) is cut
    after write_timeout and logged; healthy batches are answered within a second meanwhile."""
    caplog.set_level(logging.INFO, logger="streammon.server")
    with contextlib.ExitStack() as stack, serving(tmp_path) as server:
        sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(5)
        sock.connect(("127.0.0.1", server.port))
        with contextlib.suppress(OSError):
            sock.sendall(b"GET /v1/models/m/report HTTP/1.1\r\nHost: x\r\n\r\n" * 3000)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any("answer not read" in r.getMessage() for r in caplog.records):
            _healthy(server.port)
            time.sleep(0.05)
        assert any("answer not read within 0.5s" in r.getMessage() for r in caplog.records)
        _healthy(server.port)


def test_oversized_and_malformed_heads_are_refused_and_batches_go_on(tmp_path: Path) -> None:
    """A 20 kB header or 150 header lines get 431, a malformed request line, a non-numeric or 30-digit
    Content-Length and both Content-Length and chunked get 400; none is counted and healthy batches go on."""
    body = json.dumps(BATCH).encode()
    requests = {
        b"POST /v1/models/m/samples HTTP/1.1\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n": b"HTTP/1.1 431 ",
        b"POST /v1/models/m/samples HTTP/1.1\r\n" + b"X-Many: 1\r\n" * 150 + b"\r\n": b"HTTP/1.1 431 ",
        b"\x16\x03\x01 not http\r\n\r\n": b"HTTP/1.1 400 ",
        b"POST /v1/models/m/samples HTTP/1.1\r\nContent-Length: -5\r\n\r\n": b"HTTP/1.1 400 ",
        b"POST /v1/models/m/samples HTTP/1.1\r\nContent-Length: " + b"9" * 30 + b"\r\n\r\n": b"HTTP/1.1 400 ",
        b"POST /v1/models/m/samples HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
        + body: b"HTTP/1.1 400 ",
        b"POST /v1/models/m/samples HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n": b"HTTP/1.1 400 ",
    }
    with contextlib.ExitStack() as stack, serving(tmp_path) as server:
        for request, expected in requests.items():
            sock = _open(stack, server.port)
            sock.sendall(request)
            answer = read_until_closed(sock, 5.0)
            assert answer.startswith(expected), (request[:60], answer[:80])
            _healthy(server.port)
        assert report(server.port)["samples"] == 2 * len(requests)


def test_tls_with_a_bearer_token(tmp_path: Path, tls_cert: tuple[Path, Path]) -> None:
    """Over TLS, a batch with the token is counted, one without it or with another gets 401, /healthz needs no
    token, and a plain-HTTP request to the TLS port gets no HTTP answer."""
    cert, key = tls_cert
    context = ssl.create_default_context(cafile=str(cert))
    good = {"Authorization": f"Bearer {TOKEN}"}
    with serving(tmp_path, context, certfile=str(cert), keyfile=str(key), token=TOKEN) as server:
        assert server.url.startswith("https://")
        port = server.port
        assert post(port, "m", "samples", BATCH, good, context=context) == (200, {"accepted": 2})
        assert post(port, "m", "samples", BATCH, context=context)[0] == 401
        assert post(port, "m", "samples", BATCH, {"Authorization": "Bearer x" + TOKEN}, context=context)[0] == 401
        assert request(port, "GET", "/healthz", context=context)[0] == 200
        with socket.create_connection(("127.0.0.1", port), timeout=5) as plain:
            plain.sendall(http_post("/v1/models/m/samples", json.dumps(BATCH).encode(), close=True))
            assert not read_until_closed(plain, 3.0).startswith(b"HTTP/1.1 200")
        assert confusion(report(port, headers=good, context=context)) == recount([("a", "a"), ("b", "a")])


def test_mutual_tls_refuses_a_client_without_a_certificate(tmp_path: Path, tls_cert: tuple[Path, Path]) -> None:
    """With client_cafile and client_auth_required, a client presenting the certificate is served and counted,
    one without a certificate fails its handshake and counts nothing."""
    cert, key = tls_cert
    with_cert = ssl.create_default_context(cafile=str(cert))
    with_cert.load_cert_chain(str(cert), str(key))
    without = ssl.create_default_context(cafile=str(cert))
    with serving(tmp_path, with_cert, certfile=str(cert), keyfile=str(key), client_cafile=str(cert),
                 client_auth_required=True) as server:
        with pytest.raises(OSError):
            post(server.port, "m", "samples", BATCH, context=without)
        assert post(server.port, "m", "samples", BATCH, context=with_cert) == (200, {"accepted": 2})
        assert confusion(report(server.port, context=with_cert)) == recount([("a", "a"), ("b", "a")])
