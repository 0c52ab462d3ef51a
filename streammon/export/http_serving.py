"""The bounded HTTP/1.1 core of the exporter: one WSGI app, a deadline on every client, N connections.

The accept loop only accepts. Each connection gets its own thread, which does the TLS handshake and reads the
request under one deadline (``request_timeout``, from accept to the end of the headers: a client that sends
nothing, or dribbles a byte a second, is cut off all the same), caps the request head (``max_header_bytes``),
asks ``screen`` (when given) whether the head alone refuses it — then the body is never read —, reads its body
under a second deadline (``body_timeout``) and a cap (``max_body_bytes``, 0 by default: no body;
``Content-Length`` or chunked, a gzip body bounded after decompression too: 413 beyond), answers, and sends the
answer under a third deadline (``write_timeout``). With ``keep_alive`` seconds > 0 an HTTP/1.1 client may send
its next request on the same connection within that time (the deadlines start again); otherwise each answer
closes it (``Connection: close``). At most ``max_connections`` are held. When one more arrives, the oldest
connection still waiting for its request is closed to make room (idle and slow clients are the oldest); when
every held connection is already being answered, the newcomer is closed at once. ``stop()`` shuts every held
socket down, so it returns at once.

Rejections (timeouts, failed handshakes, malformed or oversized requests, 4xx/5xx answers, the bound) are logged
on the ``"streammon.server"`` logger at INFO; reaching the bound also logs a WARNING, at most once a minute.

>>> import urllib.request
>>> def hello(environ, start_response):
...     start_response("200 OK", [("Content-Type", "text/plain")])
...     return [b"hello"]
>>> server = BoundedServer(hello, listen("127.0.0.1", 0), tls=None, limits=Limits(max_connections=8))
>>> urllib.request.urlopen(f"http://127.0.0.1:{server.port}/").read()
b'hello'
>>> server.stop()
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import re
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

from streammon.export.http_bodies import _receive, read_body
from streammon.export.http_listening import Limits as Limits  # noqa: PLC0414 (re-exported: moved there)
from streammon.export.http_listening import listen as listen  # noqa: PLC0414 (re-exported: moved there)
from streammon.export.http_messages import Rejected, WSGIApp, call_app, http_response, request_environ

logger = logging.getLogger("streammon.server")  # a literal: the module may move, the logger name stays

Screen = Callable[[dict[str, Any]], "tuple[str, list[tuple[str, str]], bytes] | None"]
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_ACCEPT_BURST = 64
_WARN_EVERY = 60.0
_LINGER = 0.5  # seconds to drain a rejected client's unread bytes, so it sees the error answer and not a reset


class _Connection:
    def __init__(self, sock: socket.socket, peer: Any) -> None:
        self.sock = sock
        self.peer = f"[{peer[0]}]:{peer[1]}" if sock.family == socket.AF_INET6 else f"{peer[0]}:{peer[1]}"
        self.accepted = time.monotonic()
        self.answering = False
        self.in_request = False  # its request head has arrived: a graceful stop waits for its body and answer
        self.thread: threading.Thread | None = None

    def abort(self) -> None:
        """Wake and fail whatever another thread is doing on the socket (``SSLSocket.shutdown`` would race it)."""
        with contextlib.suppress(OSError):
            socket.socket.shutdown(self.sock, socket.SHUT_RDWR)


class BoundedServer:
    """Serve ``app`` on ``listener`` (from :func:`listen`) in a thread, within ``limits``, until :meth:`stop`."""

    def __init__(self, app: WSGIApp, listener: socket.socket, *, tls: ssl.SSLContext | None, limits: Limits,
                 screen: Screen | None = None) -> None:
        self._app, self._listener, self._tls, self.limits, self._screen = app, listener, tls, limits, screen
        self.port = int(listener.getsockname()[1])
        self._held: dict[int, _Connection] = {}  # insertion order: the oldest first
        self._lock = threading.Lock()
        self._stopped = False
        self._warned_at = -math.inf
        self._wake, self._waker = socket.socketpair()
        self._thread = threading.Thread(target=self._accept_loop, name="streammon-metrics", daemon=True)
        self._thread.start()

    def stop(self, grace: float = 1.0) -> None:
        """Stop accepting, cut every held connection, wait up to about ``2 * grace`` seconds for the threads."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        self._close(grace)

    def drain(self, grace: float = 10.0) -> None:
        """Stop accepting, close the connections waiting for a request, let those whose request has begun (its head
        received: its body is being read, or it is being answered) finish, up to ``grace`` seconds, then cut what is
        left: a graceful shutdown (SIGTERM) answers what is in flight, and closes each connection after it."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        self._waker.send(b"x")
        self._thread.join(timeout=grace)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            with self._lock:
                held = list(self._held.values())
            for connection in held:
                if not connection.answering and not connection.in_request:
                    connection.abort()
            if not any(connection.answering or connection.in_request for connection in held):
                break
            time.sleep(0.01)
        self._close(min(grace, 1.0))

    def _close(self, grace: float) -> None:
        with self._lock:
            held, self._held = list(self._held.values()), {}
        self._waker.send(b"x")
        self._thread.join(timeout=grace)
        for connection in held:
            connection.abort()
        deadline = time.monotonic() + grace
        for connection in held:
            if connection.thread is not None and connection.thread.ident is not None:
                connection.thread.join(timeout=max(deadline - time.monotonic(), 0.0))
        for sock in (self._listener, self._wake, self._waker):
            sock.close()

    def _accept_loop(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._listener, selectors.EVENT_READ)
            selector.register(self._wake, selectors.EVENT_READ)
            while True:
                for key, _ in selector.select():
                    if key.fileobj is self._wake:
                        return
                    for _ in range(_ACCEPT_BURST):  # drain the kernel's queue, then look at the waker again
                        if not self._accept_one():
                            break

    def _accept_one(self) -> bool:
        """Accept one connection: False when none was waiting."""
        try:
            sock, peer = self._listener.accept()
        except (BlockingIOError, InterruptedError):
            return False
        except ConnectionAbortedError:
            return True
        except OSError as error:  # out of file descriptors: leave the rest in the kernel's queue for a moment
            logger.warning("accept failed: %s", error)
            time.sleep(0.1)
            return False
        connection = _Connection(sock, peer)
        with self._lock:
            admitted = not self._stopped and self._make_room(connection)
            if admitted:
                self._held[id(connection)] = connection
        if not admitted:
            sock.close()
            return True
        connection.thread = threading.Thread(target=self._serve, args=(connection,), name="streammon-client",
                                             daemon=True)
        try:
            connection.thread.start()
        except RuntimeError as error:  # no more threads
            logger.warning("refused %s: %s", connection.peer, error)
            self._release(connection)
            sock.close()
        return True

    def _make_room(self, newcomer: _Connection) -> bool:
        """Under the lock: True when ``newcomer`` may be held, closing the oldest still-waiting connection if needed."""
        if len(self._held) < self.limits.max_connections:
            return True
        now = time.monotonic()
        if now - self._warned_at >= _WARN_EVERY:
            self._warned_at = now
            logger.warning("max_connections=%d reached: closing the oldest idle connections, "
                           "or refusing new ones while every held one is being answered", self.limits.max_connections)
        victim = next((held for held in self._held.values() if not held.answering), None)
        if victim is None:
            logger.info("refused %s: max_connections=%d held, all being answered", newcomer.peer, len(self._held))
            return False
        del self._held[id(victim)]
        victim.abort()
        logger.info("closed %s (no request after %.1f s) to make room for %s: max_connections=%d",
                    victim.peer, now - victim.accepted, newcomer.peer, self.limits.max_connections)
        return True

    def _holds(self, connection: _Connection) -> bool:
        with self._lock:
            return id(connection) in self._held

    def _release(self, connection: _Connection) -> bool:
        """Forget ``connection``; False when it was already dropped (to make room, or by ``stop``)."""
        with self._lock:
            return self._held.pop(id(connection), None) is not None

    def _serve(self, connection: _Connection) -> None:
        try:
            self._answer(connection)
        except Rejected as rejected:
            if self._holds(connection):  # a connection dropped to make room was logged then
                logger.info("rejected %s: %s", connection.peer, rejected.reason)
            if rejected.status:
                with contextlib.suppress(OSError, Rejected):
                    answer = http_response(*rejected.answer) if rejected.answer else http_response(
                        rejected.status, [], f"{rejected.status}: {rejected.reason}\n".encode())
                    self._send(connection.sock, answer, min(1.0, self.limits.write_timeout))
                    _linger(connection.sock)
        except OSError as error:  # resets, TLS errors
            if self._holds(connection):
                logger.info("dropped %s: %s", connection.peer, error)
        except Exception:  # a bug in the app: say so (500) rather than close the connection without a word
            logger.exception("error answering %s", connection.peer)
            with contextlib.suppress(OSError, Rejected):
                answer = http_response("500 Internal Server Error", [], b"500: internal server error\n")
                self._send(connection.sock, answer, min(1.0, self.limits.write_timeout))
        finally:
            self._release(connection)
            connection.sock.close()

    def _answer(self, connection: _Connection) -> None:
        deadline = connection.accepted + self.limits.request_timeout
        if self._tls is not None:
            self._handshake(connection, self._tls, deadline)
        buffer, first = bytearray(), True
        while True:
            try:
                head = self._read_head(connection.sock, deadline, buffer)
            except Rejected as rejected:
                if not first and not buffer and not rejected.status:
                    return  # a kept-alive client closed between requests: not a rejection
                raise
            first, connection.in_request = False, True
            environ = request_environ(head, connection.peer, "https" if self._tls else "http", self.port)
            refused = self._screen(environ) if self._screen is not None and _has_body(environ) else None
            if refused is not None:  # refused on its head: the body is never read, the connection not kept
                raise Rejected(refused[0], "refused before its body", refused)
            body = read_body(connection.sock, environ, buffer, cap=self.limits.max_body_bytes,
                             timeout=self.limits.body_timeout, deadline=time.monotonic() + self.limits.body_timeout)
            environ["wsgi.input"], environ["CONTENT_LENGTH"] = io.BytesIO(body), str(len(body))
            with self._lock:
                if id(connection) not in self._held:
                    return
                connection.answering = True
            status, headers, answer = call_app(self._app, environ)
            failed = not status[:1].isdigit() or int(status[:3]) >= 400
            if failed:
                logger.info("answered %s %s %r with %s", connection.peer, environ["REQUEST_METHOD"],
                            environ["PATH_INFO"], status)
            keep = self.limits.keep_alive > 0 and not failed and _wants_keep_alive(environ) and not self._stopped
            self._send(connection.sock, http_response(status, headers, answer, keep_alive=keep),
                       self.limits.write_timeout)
            if not keep:
                return
            with self._lock:
                if id(connection) not in self._held:
                    return
                connection.answering = connection.in_request = False  # idle: may make room for a newcomer
            deadline = time.monotonic() + self.limits.keep_alive
            if not buffer and not _readable(connection.sock, self.limits.keep_alive):
                return  # idle for keep_alive seconds: closed quietly
            deadline += self.limits.request_timeout

    def _handshake(self, connection: _Connection, tls: ssl.SSLContext, deadline: float) -> None:
        """The TLS handshake of ``connection``, before ``deadline``; ``Rejected`` when it fails."""
        tls_sock = tls.wrap_socket(connection.sock, server_side=True, do_handshake_on_connect=False)
        with self._lock:
            connection.sock = tls_sock
            if id(connection) not in self._held:
                raise Rejected("", "dropped before its TLS handshake")
        tls_sock.settimeout(max(deadline - time.monotonic(), 1e-3))
        try:
            tls_sock.do_handshake()
        except TimeoutError:
            raise Rejected("", f"no TLS handshake within request_timeout={self.limits.request_timeout}s") from None
        except ssl.SSLError as error:
            raise Rejected("", f"TLS handshake failed: {error.reason or error}") from None

    def _read_head(self, sock: socket.socket, deadline: float, buffer: bytearray) -> bytes:
        """The next request head; ``buffer`` keeps what was read after it (the body's first bytes, a next request)."""
        limit, scanned = self.limits.max_header_bytes, 0
        while (end := _HEAD_END.search(buffer, max(scanned - 3, 0))) is None:
            if len(buffer) > limit:
                raise Rejected("431 Request Header Fields Too Large", f"request head over max_header_bytes={limit}")
            scanned = len(buffer)
            buffer += _receive(sock, deadline, "408 Request Timeout",
                               f"no complete request within request_timeout={self.limits.request_timeout}s")
        if end.start() > limit:
            raise Rejected("431 Request Header Fields Too Large", f"request head over max_header_bytes={limit}")
        head = bytes(buffer[: end.start()])
        del buffer[: end.end()]
        return head

    def _send(self, sock: socket.socket, data: bytes, timeout: float) -> None:
        deadline, view = time.monotonic() + timeout, memoryview(data)
        while view:
            sock.settimeout(max(deadline - time.monotonic(), 1e-3))
            try:
                view = view[sock.send(view) :]
            except TimeoutError:
                raise Rejected("", f"answer not read within {timeout}s ({len(view)} bytes left)") from None


def _readable(sock: socket.socket, timeout: float) -> bool:
    """Whether a kept-alive connection sends something (a next request, or its close) within ``timeout`` seconds."""
    if isinstance(sock, ssl.SSLSocket) and sock.pending():
        return True
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_READ)
        return bool(selector.select(timeout))


def _has_body(environ: dict[str, Any]) -> bool:
    return environ.get("CONTENT_LENGTH", "0") != "0" or "HTTP_TRANSFER_ENCODING" in environ


def _wants_keep_alive(environ: dict[str, Any]) -> bool:
    tokens = {token.strip().lower() for token in str(environ.get("HTTP_CONNECTION", "")).split(",")}
    if environ["SERVER_PROTOCOL"] == "HTTP/1.0":
        return "keep-alive" in tokens
    return "close" not in tokens


def _linger(sock: socket.socket) -> None:
    """After an error answer: stop sending, and drain what the client still sends for a moment, so that closing
    does not reset the connection before the client has read the answer."""
    socket.socket.shutdown(sock, socket.SHUT_WR)
    deadline, drained = time.monotonic() + _LINGER, 0
    while drained < 1 << 20 and (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            return
        drained += len(chunk)
