"""The server's HTTP API, a WSGI app on the exporter's bounded HTTP core (``streammon.export.http_serving``).

==================================  ===============================================================================
``POST /v1/models/{model}/samples``      ``{"y_true": [...], "y_pred": [...], "t": ...}`` → ``{"accepted": n}``
``POST /v1/models/{model}/predictions``  ``{"keys": [...], "y_pred": [...], "t": ...}``
``POST /v1/models/{model}/labels``       ``{"keys": [...], "y_true": [...], "t": ...}``
``GET /v1/models/{model}/report``        ``Report.to_dict()`` as JSON
``GET /v1/models``                       ``{"models": [...]}``
``GET /metrics``                         the exporter's exposition of every model, and the server's own series
``GET /healthz``                         200 ``{"status": "ok"}`` once batches are accepted, 503 before
==================================  ===============================================================================

A batch is answered ``200 {"accepted": n}`` only after it is committed to the model's journal and counted; a bad
one gets ``400 {"error": ...}`` naming the field, the position and what was expected, and nothing of it is
counted; an unknown model ``404``, a wrong method ``405``, a missing or wrong token ``401`` (every path but
``/healthz`` needs ``Authorization: Bearer TOKEN`` when the server has a token), a body over ``max_body_bytes``
``413`` (gzip bodies bounded after decompression too). ``Idempotency-Key: ID`` (1 to 200 printable ASCII
characters) makes a retried batch count once: the journal remembers the last 100,000 ids, with their batches, so
this holds across restarts too; the answer to a retry says ``"replayed": true``, a key reused for a batch of
another size gets ``422``. ``Streammon-Dropped: N`` on a
batch reports rows a client dropped (its buffer was full): exported as ``streammon_client_dropped_total``.
JSON is read and written with orjson (fast, strict: no NaN literals, integers within 64 bits). A samples or
predictions batch may carry ``"y_score": [...]``, the model's scores as ``Monitor.update_many`` takes them (one
number per row for a binary model, one array of K class probabilities per row otherwise), journalled with it.
"""

from __future__ import annotations

import gzip
import hmac
import logging
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import parse_qs

import orjson
from prometheus_client import CollectorRegistry
from prometheus_client import generate_latest as text_latest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.exposition import choose_encoder, gzip_accepted
from prometheus_client.openmetrics.exposition import generate_latest as openmetrics_latest

from streammon.export.prometheus import MonitorCollector
from streammon.monitor import Monitor
from streammon.serve.batches import BadBatch, locate, parse
from streammon.serve.hub import BadSegment, Hub, Key

logger = logging.getLogger("streammon.serve")

KINDS = ("samples", "predictions", "labels")
MAX_DROPPED = 2**40
SEGMENT_MARK = "\x1f"  # a segment's monitor is exported as model "NAME\x1fSEGMENT", then relabelled
_SEGMENTED = re.compile(rb'model="((?:[^"\\\x1f]|\\.)*)\x1f((?:[^"\\]|\\.)*)"')


def segment_labels(exposition: bytes) -> bytes:
    """``model="fraud\x1fcountry=DE"`` as ``model="fraud",segment="country=DE"`` (label values keep their escapes:
    inside one, every quote is escaped, so the pattern cannot start or end within a value).

    >>> segment_labels(b'streammon_samples_total{model="fraud\x1fcountry=DE"} 3.0')
    b'streammon_samples_total{model="fraud",segment="country=DE"} 3.0'
    """
    return _SEGMENTED.sub(rb'model="\1",segment="\2"', exposition)


def _json(start_response: Callable[..., Any], status: str, body: dict[str, Any],
          headers: list[tuple[str, str]] | None = None) -> Iterable[bytes]:
    start_response(status, [("Content-Type", "application/json"), *(headers or [])])
    return [orjson.dumps(body)]


class Api:
    """The WSGI app of a server over ``hub``; ``ready`` is set once the hub's monitors are open."""

    def __init__(self, hub: Hub | None, *, token: str | None, distortion_prone: bool = False,
                 max_decoding: int = 2) -> None:
        self.hub = hub
        self._decoding = threading.BoundedSemaphore(max_decoding)
        self.token = None if token is None else f"Bearer {token}".encode()
        self.ready = threading.Event()
        self._collector = MonitorCollector(distortion_prone=distortion_prone)
        self.batches = {kind: 0 for kind in KINDS}  # accepted batches per kind (served as a counter)
        self.rejected = 0
        self._lock = threading.Lock()

    def collect(self, key: Key, monitor: Monitor) -> None:
        """Export ``monitor`` from now on (the hub calls this for every monitor it opens or makes)."""
        self._collector.add(key[0] if not key[1] else f"{key[0]}{SEGMENT_MARK}{key[1]}", monitor)

    def attach(self, hub: Hub) -> None:
        """Serve ``hub`` from now on (answers 503 until then)."""
        self.hub = hub
        self.ready.set()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        refusal = self._refusal(environ)
        if refusal is not None:
            status, body, headers = refusal
            return _json(start_response, status, body, headers)
        assert self.hub is not None
        path = environ["PATH_INFO"]
        if path == "/healthz":
            return _json(start_response, "200 OK", {"status": "ok"})
        if path == "/metrics":
            return self._metrics(environ, start_response)
        if path == "/v1/models":
            segments = {m: [s for name, s in self.hub.monitors if name == m and s] for m in self.hub.config.models}
            return _json(start_response, "200 OK", {"models": list(self.hub.config.models), "segments": segments})
        _, _, _, model, what = path.split("/")
        if what == "report":
            segment = parse_qs(environ.get("QUERY_STRING", "")).get("segment", [""])[0]
            monitor = self.hub.monitors.get((model, segment))
            if monitor is None:
                known = [s for m, s in self.hub.monitors if m == model]
                return _json(start_response, "404 Not Found", {"error": f"model {model} has no segment "
                             f"{segment[:100]!r} (its segments: {', '.join(known)})"})
            return _json(start_response, "200 OK", monitor.report().to_dict())
        return self._batch(environ, start_response, model, what)

    def screen(self, environ: dict[str, Any]) -> tuple[str, list[tuple[str, str]], bytes] | None:
        """The answer to a request refused on its head alone (401, 404, 405, 503), given before its body is read
        (the HTTP core calls it): a client without the token cannot make the server hold a body; None: read it."""
        refusal = self._refusal(environ)
        if refusal is None:
            return None
        status, body, headers = refusal
        return status, [("Content-Type", "application/json"), *headers], orjson.dumps(body)

    def _refusal(self, environ: dict[str, Any]) -> tuple[str, dict[str, Any], list[tuple[str, str]]] | None:
        """(status, JSON body, headers) when the request's method, path, token or the server's state refuse it."""
        path, method = environ["PATH_INFO"], environ["REQUEST_METHOD"]
        if path == "/healthz":
            return None if self.ready.is_set() else ("503 Service Unavailable", {"status": "starting"}, [])
        if self.token is not None and not hmac.compare_digest(
                str(environ.get("HTTP_AUTHORIZATION", "")).encode("latin-1"), self.token):
            return ("401 Unauthorized", {"error": "a valid Authorization: Bearer token is needed"},
                    [("WWW-Authenticate", 'Bearer realm="streammon"')])
        if not self.ready.is_set() or self.hub is None or self._collector is None:
            return "503 Service Unavailable", {"error": "starting: replaying the journals"}, [("Retry-After", "1")]
        parts = path.split("/")
        if path in ("/metrics", "/v1/models"):
            kind = "read"
        elif len(parts) != 5 or parts[:3] != ["", "v1", "models"] or parts[4] not in (*KINDS, "report"):
            return "404 Not Found", {"error": f"no such path {path[:200]!r}: see /v1/models/{{model}}/samples|" \
                                                 "predictions|labels|report, /metrics, /healthz"}, []
        elif parts[3] not in self.hub.config.models:
            return "404 Not Found", {"error": f"unknown model {parts[3][:100]!r}: this server has " \
                                                 f"{', '.join(self.hub.config.models)}"}, []
        else:
            kind = "read" if parts[4] == "report" else "batch"
        wanted = "GET" if kind == "read" else "POST"
        if method != wanted:
            return "405 Method Not Allowed", {"error": f"use {wanted}"}, [("Allow", wanted)]
        return None

    def _batch(self, environ: dict[str, Any], start_response: Callable[..., Any], model: str,
               kind: str) -> Iterable[bytes]:
        with self._decoding:  # at most max_decoding batches in Python objects at once (~23x their body each)
            return self._decoded(environ, start_response, model, kind)

    def _decoded(self, environ: dict[str, Any], start_response: Callable[..., Any], model: str,
                 kind: str) -> Iterable[bytes]:
        assert self.hub is not None
        body = environ["wsgi.input"].read()
        key = environ.get("HTTP_IDEMPOTENCY_KEY")
        dropped = environ.get("HTTP_STREAMMON_DROPPED")
        try:
            if dropped is not None and (not dropped.isdigit() or int(dropped) > MAX_DROPPED):
                raise BadBatch(f"Streammon-Dropped must be a count of rows, got {dropped[:40]!r}")
            fields = parse(body, kind)
            try:
                monitor = self.hub.monitor(model, fields["segment"])
            except BadSegment as exc:
                raise BadBatch(str(exc)) from None
            if key is not None:
                try:
                    seen = monitor.accepted(key)
                except ValueError as exc:  # not 1 to 200 printable ASCII characters
                    raise BadBatch(f"Idempotency-Key: {exc}") from None
                rows = len(fields["y_true" if kind == "samples" else "keys"])
                if seen is not None and seen != rows:  # a key names one batch: this is another one
                    return _json(start_response, "422 Unprocessable Content", {"error": f"Idempotency-Key "
                                 f"{key!r}: it was used for a batch of {seen} rows, this one has {rows}: give each "
                                 "batch its own key (nothing of this one was counted)"})
                if seen is not None:
                    return _json(start_response, "200 OK", {"accepted": seen, "replayed": True})
            first, second = fields[("y_true" if kind == "samples" else "keys")], fields[
                "y_pred" if kind in ("samples", "predictions") else "y_true"]
            writers: dict[str, Callable[..., None]] = {"samples": monitor.update_many,
                                                       "predictions": monitor.predict_many,
                                                       "labels": monitor.label_many}
            write = writers[kind]
            try:
                scored = {"y_score": fields["y_score"]} if "y_score" in fields else {}
                write(first, second, fields["t"], batch_id=key, **scored)
            except (TypeError, ValueError) as exc:
                if str(exc).startswith("batch_id"):
                    raise BadBatch(f"Idempotency-Key: {exc}") from None
                raise BadBatch(locate(fields, kind, exc, monitor.labels if monitor.closed else None)) from None
        except BadBatch as exc:
            with self._lock:
                self.rejected += 1
            return _json(start_response, "400 Bad Request", {"error": str(exc)})
        if dropped:
            self.hub.count_dropped(model, int(dropped))
        with self._lock:
            self.batches[kind] += 1
        return _json(start_response, "200 OK", {"accepted": len(first)})

    def _metrics(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        assert self._collector is not None and self.hub is not None
        _, content_type = choose_encoder(str(environ.get("HTTP_ACCEPT") or ""))
        openmetrics = "openmetrics" in content_type
        body = segment_labels(self._collector.exposition(openmetrics=openmetrics))
        own = self._own_series(openmetrics)
        body = body[: -len(b"# EOF\n")] + own + b"# EOF\n" if openmetrics else body + own
        headers = [("Content-Type", content_type)]
        if gzip_accepted(str(environ.get("HTTP_ACCEPT_ENCODING") or "")):
            body = gzip.compress(body, compresslevel=1)
            headers.append(("Content-Encoding", "gzip"))
        start_response("200 OK", headers)
        return [body]

    def _own_series(self, openmetrics: bool) -> bytes:
        """The server's own counters, written by prometheus_client in the scrape's format."""
        assert self.hub is not None
        with self._lock:
            batches, rejected = dict(self.batches), self.rejected
        with self.hub._lock:
            dropped = dict(self.hub.dropped)
        families = [CounterMetricFamily("streammon_client_dropped",
                                        "Rows the clients dropped (buffer full) and reported.", labels=["model"]),
                    CounterMetricFamily("streammon_server_batches", "Batches the server accepted, by kind.",
                                        labels=["kind"]),
                    CounterMetricFamily("streammon_server_rejected", "Batches the server refused (400).")]
        for model, n in dropped.items():
            families[0].add_metric([model], n)
        for kind, n in batches.items():
            families[1].add_metric([kind], n)
        families[2].add_metric([], rejected)
        registry = CollectorRegistry()
        registry.register(_Fixed(list(families)))
        if openmetrics:
            return bytes(openmetrics_latest(registry))[: -len(b"# EOF\n")]  # type: ignore[no-untyped-call]
        return text_latest(registry)


class _Fixed:
    """A collector of ready families (for one exposition)."""

    def __init__(self, families: Sequence[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self.families)
