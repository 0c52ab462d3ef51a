"""streammon.client against real servers (``streammon serve``, in-process or as a subprocess): what the servers
count equals a recount of what the client was given, through outages, a full buffer, refused batches, lost
answers, kill -9, fork, exit and key-hash routing over two servers."""

from __future__ import annotations

import http.client
import json
import logging
import os
import random
import re
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streammon import Cumulative, Monitor
from streammon.client import Client, route
from streammon.counting.classes import check_label
from streammon.pending.keys import check_key
from streammon.serve.config import parse
from streammon.serve.run import WARMED, Server
from tests.strategies import client_keys, hostile_labels

ROOT = Path(__file__).resolve().parents[1]
FAST = {"flush_interval": 0.05, "max_backoff": 0.1, "timeout": 5.0}  # quick retries: the tests wait less


def _config(state: Path, port: int = 0, *, checkpoint: float = 60.0, extra: str = "") -> str:
    return (f'[server]\nlisten = "127.0.0.1:{port}"\nstate_dir = "{state}"\ncheckpoint_every = {checkpoint}\n{extra}'
            '[models.fraud]\nwindows = ["cumulative"]\n[models.codes]\nwindows = ["cumulative"]\n')


@contextmanager
def serving(state: Path, port: int = 0, extra: str = "") -> Iterator[Server]:
    """An in-process server (its own state folder), stopped after."""
    server = Server(parse(_config(state, port, extra=extra)))
    try:
        yield server
    finally:
        server.stop(grace=2.0)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return bytes(answer.read())


def _report(url: str, model: str = "fraud") -> dict[str, Any]:
    return dict(json.loads(_get(f"{url}/v1/models/{model}/report")))


def _counts(url: str, model: str = "fraud") -> Counter[tuple[Any, Any]]:
    """The cumulative confusion the server reports, as (true, predicted) -> count."""
    window = _report(url, model)["windows"]["cumulative"]
    labels = [entry["value"] for entry in window["labels"]]
    return Counter({(labels[i], labels[j]): n for i, row in enumerate(window["confusion"])
                    for j, n in enumerate(row) if n})


def _series(url: str, name: str) -> dict[str, float]:
    """The samples of one series of the server's /metrics: labels text -> value."""
    text = _get(f"{url}/metrics").decode()
    return {labels: float(value) for labels, value in re.findall(rf"^{name}(\{{[^}}]*\}})? (\S+)$", text, re.M)}


def _rows(n: int, seed: int, classes: tuple[Any, ...] = ("legit", "fraud", "review")) -> list[tuple[Any, Any]]:
    rng = random.Random(seed)
    return [(rng.choice(classes), rng.choice(classes)) for _ in range(n)]


def test_import_needs_only_the_standard_library() -> None:
    """Importing streammon.client (and through it the package) imports neither numpy nor numba."""
    code = "import streammon.client, sys; assert 'numpy' not in sys.modules and 'numba' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_the_lazy_package_keeps_every_public_name() -> None:
    """``from streammon import *`` binds every name of ``__all__``, each the object of its defining module."""
    import streammon
    import streammon.monitor
    import streammon.state

    namespace: dict[str, Any] = {}
    exec("from streammon import *", namespace)
    assert set(streammon.__all__) <= set(namespace) and set(streammon.__all__) <= set(dir(streammon))
    assert namespace["Monitor"] is streammon.monitor.Monitor and namespace["StateError"] is streammon.state.StateError
    with pytest.raises(AttributeError, match="no attribute 'Monitr'"):
        streammon.Monitr


def test_counts_equal_a_recount_of_what_was_sent(tmp_path: Path) -> None:
    """Samples, predictions and labels (single calls and batches, tricky strings, int labels and keys) are counted
    by the server exactly as an in-process monitor and a plain recount count them."""
    tricky = ('say "hi"', "back\\slash", "new\nline", "tab\tx", "é☕\U0001f600", "\x00nul", "x" * 256, "{a=b,c}")
    rows = _rows(600, 1, tricky)
    keys: list[Any] = [f"tx-{i}" for i in range(300)] + list(range(-150, 150))
    preds = [random.Random(i).choice(tricky) for i in range(600)]
    truth = [random.Random(-i).choice(tricky) for i in range(600)]
    codes = [(1.0, 2), (2**63 - 1, -(2**63) + 1), (2, 2.0)] * 5
    with serving(tmp_path) as server:
        client = Client(server.url, "fraud", batch_size=97, **FAST)
        for y, p in rows[:300]:
            client.update(y, p)
        client.update_many([y for y, _ in rows[300:]], [p for _, p in rows[300:]])
        for key, p in zip(keys[:200], preds[:200], strict=True):
            client.predict(key, p)
        client.predict_many(keys[200:], preds[200:])
        client.label_many(keys[:400], truth[:400])
        for key, y in zip(keys[400:], truth[400:], strict=True):
            client.label(key, y)
        ints = Client(server.url, "codes", **FAST)
        ints.update_many([y for y, _ in codes], [p for _, p in codes])
        assert client.flush(20) and ints.flush(20)
        assert (client.sent, client.dropped, client.rejected) == (1800, 0, 0)
        oracle = Monitor([Cumulative()])
        oracle.update_many([y for y, _ in rows], [p for _, p in rows])
        oracle.update_many(truth, preds)
        expected = Counter(rows) + Counter(zip(truth, preds, strict=True))
        assert _counts(server.url) == expected
        assert oracle.report().windows["cumulative"].confusion.to_dict() == {
            y: {p: n for (t, p), n in expected.items() if t == y} for y in {y for y, _ in expected}}
        stats = _report(server.url)["label_stats"]
        assert (stats["predictions"], stats["joined"], stats["orphans"], stats["pending"]) == (600, 600, 0, 0)
        assert _counts(server.url, "codes") == Counter((int(y), int(p)) for y, p in codes)
        client.close()
        ints.close()


def test_an_outage_loses_nothing_the_buffer_holds(tmp_path: Path) -> None:
    """Rows sent while no server listens are all counted, once, after the server comes up."""
    port = _free_port()
    client = Client(f"http://127.0.0.1:{port}", "fraud", batch_size=300, **FAST)
    rows = _rows(2000, 2)
    for y, p in rows:
        client.update(y, p)
    assert not client.flush(0.3)  # nobody acknowledges yet
    with serving(tmp_path, port) as server:
        assert client.flush(20)
        assert _counts(server.url) == Counter(rows)
        assert (client.sent, client.dropped) == (2000, 0)
        client.close()


def test_a_full_buffer_drops_the_oldest_and_the_server_exports_the_count(tmp_path: Path) -> None:
    """With a buffer of 100 and no server, the newest 100 rows survive, at most one batch of older ones is kept
    (the one being retried), every other row is counted in ``dropped``, and the server exports that count."""
    port = _free_port()
    client = Client(f"http://127.0.0.1:{port}", "fraud", batch_size=50, max_buffer=100, **FAST)
    for i in range(900):
        client.update("old", "old")
        if i % 100 == 0:
            time.sleep(0.01)  # the sender takes its batch and retries it meanwhile
    for _ in range(100):
        client.update("new", "new")
    assert client.buffered <= 100
    with serving(tmp_path, port) as server:
        assert client.flush(20)
        counts = _counts(server.url)
        assert counts[("new", "new")] == 100 and counts[("old", "old")] <= 50
        assert client.dropped == client.dropped_by_kind["samples"] == 1000 - client.sent > 0
        assert client.sent == sum(counts.values())
        assert _series(server.url, "streammon_client_dropped_total") == {'{model="fraud"}': client.dropped,
                                                                       '{model="codes"}': 0}
        client.close()


def test_a_refused_batch_is_logged_and_never_retried(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A batch the server refuses (400: a time before the last one; 404: an unknown model) is dropped, counted in
    ``rejected`` and logged with the server's message, sent once only; later batches still go through."""
    with serving(tmp_path) as server, caplog.at_level(logging.ERROR, logger="streammon.client"):
        client = Client(server.url, "fraud", **FAST)
        client.update("a", "a", t=100.0)
        assert client.flush(10)
        client.update("a", "b", t=50.0)  # the server keeps times non-decreasing: 400
        assert client.flush(10)
        client.update("b", "b", t=200.0)
        assert client.flush(10)
        assert (client.sent, client.rejected) == (2, 1)
        assert _series(server.url, "streammon_server_rejected_total") == {"": 1.0}
        assert "HTTP 400" in caplog.text and "earlier than the last sample time" in caplog.text
        assert _counts(server.url) == Counter({("a", "a"): 1, ("b", "b"): 1})
        stranger = Client(server.url, "no-such-model", **FAST)
        stranger.update("a", "a")
        assert stranger.flush(10) and stranger.rejected == 1
        assert "HTTP 404" in caplog.text and "unknown model" in caplog.text
        client.close()
        stranger.close()


def test_workers_default_to_the_servers_clock_since_it_keeps_one_time_line(tmp_path: Path) -> None:
    """Two workers whose batches arrive out of order are both counted by default (the server stamps arrival),
    while with ``stamp=True`` the later-arriving batch of earlier call times is refused (400): why stamping is
    opt-in, for a single writer per model."""
    with serving(tmp_path) as server:
        for stamp, refused in ((False, 0), (True, 1)):
            first, second = (Client(server.url, "fraud", stamp=stamp, flush_interval=60) for _ in range(2))
            first.update("a", "a")
            time.sleep(0.01)
            second.update("b", "b")
            assert second.flush(10) and first.flush(10)  # the later call's batch arrives first
            assert (first.rejected, second.rejected, second.sent) == (refused, 0, 1)
            first.close()
            second.close()
        assert _counts(server.url) == Counter({("a", "a"): 1, ("b", "b"): 2})


def test_batches_too_large_for_the_server_are_sent_in_halves(tmp_path: Path,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    """A server whose max_body_bytes is 4 kB answers 413 to a large batch: the client sends it again in halves
    (and smaller chunks from then on), and every row is counted once."""
    with serving(tmp_path, extra="max_body_bytes = 4000\n") as server, \
            caplog.at_level(logging.WARNING, logger="streammon.client"):
        client = Client(server.url, "fraud", flush_interval=60, **{k: v for k, v in FAST.items()
                                                                   if k != "flush_interval"})
        rows = _rows(3000, 6)
        client.update_many([y for y, _ in rows], [p for _, p in rows])
        assert client.flush(30)
        assert _counts(server.url) == Counter(rows)
        assert (client.sent, client.rejected) == (3000, 0) and "(413)" in caplog.text
        client.close()


def test_threads_calling_at_once_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    """Eight threads calling update without a lock, against a live server and a buffer that overflows while the
    server is down: every row is acknowledged or counted dropped, exactly once."""
    port = _free_port()
    with serving(tmp_path / "warm") as warm:  # the process's first server loads the compiled loops: not below
        first = Client(warm.url, "fraud")
        first.update("legit", "legit")
        assert first.close(20)
        assert WARMED.wait(300)  # its background warm-up is over (no compiling beside the server started below)
    client = Client(f"http://127.0.0.1:{port}", "fraud", batch_size=64, max_buffer=500, **FAST)
    per_thread = 3000

    def feed(seed: int) -> None:
        for i, (y, p) in enumerate(_rows(per_thread, seed)):
            client.update(y, p)
            if i % 50 == 0:
                time.sleep(0.005)  # about 0.3 s of calls: the server comes up in the middle

    threads = [threading.Thread(target=feed, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(0.1)
    with serving(tmp_path, port) as server:  # comes up while the threads still call
        for thread in threads:
            thread.join()
        assert client.flush(30)
        counted = sum(_counts(server.url).values())
        assert counted == client.sent and client.sent + client.dropped == 8 * per_thread
        assert client.dropped > 0 and client.sent > 500 + 64  # both: overflow, then a live server
        assert _series(server.url, "streammon_client_dropped_total")['{model="fraud"}'] == client.dropped
        client.close()


def test_close_is_bounded_when_the_server_never_answers() -> None:
    """Against a server that accepts connections and never answers, ``close(0.5)`` returns within a few seconds
    (not the 30 s socket timeout), False, with every row counted as dropped."""
    with socket.create_server(("127.0.0.1", 0)) as mute:
        held: list[socket.socket] = []
        threading.Thread(target=lambda: held.append(mute.accept()[0]), daemon=True).start()
        client = Client(f"http://127.0.0.1:{mute.getsockname()[1]}", "fraud", flush_interval=0.01, timeout=30.0)
        client.update_many(["a"] * 20, ["b"] * 20)
        time.sleep(0.2)  # the batch is on the wire, waiting for an answer
        started = time.monotonic()
        assert client.close(0.5) is False
        assert time.monotonic() - started < 3.0
        assert (client.sent, client.dropped) == (0, 20)
        for connection in held:
            connection.close()


def test_a_batch_with_decreasing_times_is_refused_whole_at_the_call() -> None:
    """``update_many`` with times that go back raises ValueError naming the row, and buffers nothing."""
    client = Client("http://127.0.0.1:9", "fraud", flush_interval=3600)
    with pytest.raises(ValueError, match=re.escape("t[2]=5.0 < t[1]=6.0")):
        client.update_many(["a", "b", "c"], ["a", "b", "c"], t=[4.0, 6.0, 5.0])
    with pytest.raises(TypeError, match="y_pred"):
        client.update_many(["a", "b"], ["a", None.__class__])
    assert client.buffered == 0
    client.close(0.0)


def test_https_with_a_token(tmp_path: Path, tls_cert: tuple[Path, Path]) -> None:
    """Over TLS (the client's ``ssl_context`` trusting the server's certificate) with the server's token the rows
    are counted; a wrong token is refused (401), logged and not retried."""
    cert, key = tls_cert
    token = "s3cret-token-0123456789"
    extra = f'certfile = "{cert}"\nkeyfile = "{key}"\ntoken = "{token}"\n'
    context = ssl.create_default_context(cafile=str(cert))
    with serving(tmp_path, extra=extra) as server:
        assert server.url.startswith("https://")
        client = Client(server.url, "fraud", token=token, ssl_context=context, **FAST)
        intruder = Client(server.url, "fraud", token="wrong-token-0123456789", ssl_context=context, **FAST)
        rows = _rows(500, 7)
        client.update_many([y for y, _ in rows], [p for _, p in rows])
        intruder.update("legit", "fraud")
        assert client.flush(20) and intruder.flush(20)
        assert (client.sent, intruder.sent, intruder.rejected) == (500, 0, 1)
        request = urllib.request.Request(f"{server.url}/v1/models/fraud/report",
                                         headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, context=context, timeout=10) as answer:
            window = json.loads(answer.read())["windows"]["cumulative"]
        labels = [entry["value"] for entry in window["labels"]]
        assert Counter({(labels[i], labels[j]): n for i, row in enumerate(window["confusion"])
                        for j, n in enumerate(row) if n}) == Counter(rows)
        client.close()
        intruder.close()


class LossyProxy:
    """Forwards each request to the server, but for the first ``lose`` ones closes the client's connection instead
    of relaying the answer: the server counted the batch, the client never heard so."""

    def __init__(self, upstream: int, lose: int) -> None:
        self.upstream, self.lose, self.keys = upstream, lose, []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection, connection.makefile("rb") as reader:
            while request := reader.readline():
                method, path, _ = request.decode().split()
                headers = {}
                while (line := reader.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode().partition(":")
                    headers[name.strip()] = value.strip()
                data = reader.read(int(headers.get("Content-Length", 0)))
                self.keys.append(headers.get("Idempotency-Key"))
                upstream = http.client.HTTPConnection("127.0.0.1", self.upstream, timeout=10)
                upstream.request(method, path, data, {k: v for k, v in headers.items() if k != "Connection"})
                answer = upstream.getresponse()
                body = answer.read()
                upstream.close()
                if self.lose > 0:
                    self.lose -= 1
                    return  # the answer is lost
                connection.sendall(f"HTTP/1.1 {answer.status} {answer.reason}\r\nContent-Type: application/json\r\n"
                                   f"Content-Length: {len(body)}\r\n\r\n".encode() + body)

    def close(self) -> None:
        self.listener.close()


def test_a_lost_answer_is_retried_under_the_same_key_and_counted_once(tmp_path: Path) -> None:
    """When the answers to the first three batches are lost after the server counted them, the client retries each
    under its Idempotency-Key and the server counts every row exactly once."""
    with serving(tmp_path) as server:
        proxy = LossyProxy(server.port, lose=3)
        client = Client(f"http://127.0.0.1:{proxy.port}", "fraud", batch_size=100, **FAST)
        rows = _rows(1000, 3)
        client.update_many([y for y, _ in rows], [p for _, p in rows])
        assert client.flush(20)
        assert _counts(server.url) == Counter(rows) and client.sent == 1000
        sent = [key for key in proxy.keys if key is not None]
        assert len(sent) == 13 and len(set(sent)) == 10  # 3 keys sent twice: the same batches, retried
        client.close()
        proxy.close()


def _start(config: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "streammon", "serve", str(config)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _ready(url: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            _get(f"{url}/healthz")
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"{url} did not come up")


def test_kill_9_of_the_server_mid_stream_counts_every_row_once(tmp_path: Path) -> None:
    """A server killed with SIGKILL while batches stream in, then restarted on its journal and checkpoint, ends
    with counts equal to the recount: nothing lost, nothing counted twice."""
    port = _free_port()
    config = tmp_path / "serve.toml"
    config.write_text(_config(tmp_path / "state", port, checkpoint=0.2))
    url = f"http://127.0.0.1:{port}"
    process = _start(config)
    try:
        _ready(url)
        client = Client(url, "fraud", batch_size=200, **FAST)
        rows = _rows(12_000, 4)
        for i, (y, p) in enumerate(rows):
            client.update(y, p)
            if i % 400 == 0:
                time.sleep(0.01)
            if i == 6000:
                process.kill()
                process.wait()
            if i == 9000:
                process = _start(config)
        assert client.flush(30)
        assert _counts(url) == Counter(rows)
        assert (client.sent, client.dropped, client.rejected) == (12_000, 0, 0)
        client.close()
    finally:
        process.kill()
        process.wait()


def test_a_forked_child_starts_afresh(tmp_path: Path) -> None:
    """A client used before ``os.fork()`` starts empty in the child (the parent's buffered rows are sent once, by
    the parent), and the child's own rows reach the server through its own thread and connection."""
    with serving(tmp_path) as server:
        client = Client(server.url, "fraud", flush_interval=60)  # rows wait in the buffer until flush
        client.update_many(["a"] * 10, ["a"] * 10)
        assert client.buffered == 10
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports by its exit code
            code = 1
            try:
                fresh = client.buffered == 0 and client.sent == 0
                client.update_many(["b"] * 5, ["b"] * 5)
                code = 0 if fresh and client.flush(10) and client.sent == 5 else 3
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert client.flush(10)
        assert _counts(server.url) == Counter({("a", "a"): 10, ("b", "b"): 5})
        client.close()


def test_rows_left_at_exit_are_sent(tmp_path: Path) -> None:
    """A worker that exits without closing its client still delivers its buffered rows (the atexit flush)."""
    with serving(tmp_path) as server:
        code = (f"from streammon.client import Client\nc = Client({server.url!r}, 'fraud', flush_interval=60)\n"
                "c.update_many(['a'] * 7, ['b'] * 7)\nc.predict('k', 'a')\n")
        subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                       timeout=30)
        assert _counts(server.url) == Counter({("a", "b"): 7})
        assert _report(server.url)["label_stats"]["predictions"] == 1


def test_two_servers_routed_by_key_hash_join_every_label(tmp_path: Path) -> None:
    """Over two servers, each key's prediction and label go to server ``crc32(text) % 2`` (recomputed here with
    zlib), from any client: every label is joined, no orphan, and each server holds exactly its keys."""
    with serving(tmp_path / "a") as a, serving(tmp_path / "b") as b:
        urls = [a.url, b.url]
        rng = random.Random(5)
        keys: list[Any] = [f"tx-{i}" for i in range(700)] + [rng.randrange(-(2**63), 2**63) for _ in range(300)]
        predicting = Client(urls, "fraud", batch_size=128, **FAST)
        labelling = Client(urls, "fraud", batch_size=128, **FAST)  # another worker
        for key in keys[:500]:
            predicting.predict(key, rng.choice(["legit", "fraud"]))
        predicting.predict_many(keys[500:], ["legit"] * 500)
        assert predicting.flush(20)
        shuffled = rng.sample(keys, len(keys))
        labelling.label_many(shuffled[:600], ["fraud"] * 600)
        for key in shuffled[600:]:
            labelling.label(key, "legit")
        predicting.update_many(["legit"] * 10, ["legit"] * 10)  # samples: round-robin
        assert labelling.flush(20) and predicting.flush(20)
        for index, url in enumerate(urls):
            mine = sum(1 for key in keys if zlib.crc32(str(key).encode("utf-8")) % 2 == index)
            assert all(route(key, 2) == zlib.crc32(str(key).encode("utf-8")) % 2 for key in keys)
            stats = _report(url)["label_stats"]
            assert (stats["predictions"], stats["joined"], stats["orphans"], stats["pending"]) == (mine, mine, 0, 0)
        assert sum(_report(url)["samples"] for url in urls) == 1000 + 10
        predicting.close()
        labelling.close()


@settings(max_examples=150, deadline=None)
@given(value=hostile_labels() | st.booleans() | st.integers() | st.floats() | st.text(max_size=300))
def test_a_label_is_refused_at_the_call_exactly_when_the_server_would(value: Any) -> None:
    """``update`` refuses a label (TypeError or ValueError, nothing buffered) exactly when the server's own
    ``check_label`` does."""
    client = Client("http://127.0.0.1:9", "fraud", flush_interval=3600)
    try:
        check_label(value)
        server_refuses = False
    except (TypeError, ValueError):
        server_refuses = True
    try:
        client.update(value, "a")
        client.predict("k", value)
        assert not server_refuses and client.buffered == 2
    except (TypeError, ValueError):
        assert server_refuses and client.buffered == 0
    client.close(0.0)


@settings(max_examples=150, deadline=None)
@given(value=client_keys())
def test_a_key_is_refused_at_the_call_exactly_when_the_server_would(value: Any) -> None:
    """``predict`` and ``label`` refuse a key (nothing buffered) exactly when the server would: its ``check_key``
    refuses it, or its JSON parser does (orjson refuses a lone surrogate, which ``check_key`` lets through)."""
    client = Client("http://127.0.0.1:9", "fraud", flush_interval=3600)
    try:
        orjson.dumps(check_key(value))  # what the server parses, it could have been sent
        server_refuses = False
    except (TypeError, ValueError):
        server_refuses = True
    try:
        client.predict(value, "a")
        client.label(value, "a")
        assert not server_refuses and client.buffered == 2
    except (TypeError, ValueError):
        assert server_refuses and client.buffered == 0
    client.close(0.0)


@pytest.mark.parametrize(("options", "error", "match"), [
    ({"url": "ftp://a:1"}, ValueError, "'ftp://a:1' is not a server URL"),
    ({"url": "http://u:p@a:1"}, ValueError, "no user"),
    ({"url": []}, TypeError, "non-empty list"),
    ({"model": "../etc"}, ValueError, "'../etc' is not a model name"),
    ({"token": "a b"}, ValueError, "printable ASCII without spaces"),
    ({"batch_size": 0}, ValueError, "batch_size must be an int >= 1, got 0"),
    ({"flush_interval": float("nan")}, ValueError, "flush_interval must be a finite number of seconds > 0"),
])
def test_bad_options_are_refused_by_name(options: dict[str, Any], error: type[Exception], match: str) -> None:
    """A bad option raises at construction, naming the option and the value."""
    arguments = {"url": "http://127.0.0.1:9", "model": "fraud", **options}
    with pytest.raises(error, match=re.escape(match)):
        Client(arguments.pop("url"), arguments.pop("model"), **arguments)


def test_a_closed_client_refuses_calls() -> None:
    """After ``close`` a call raises RuntimeError and nothing is buffered."""
    client = Client("http://127.0.0.1:9", "fraud")
    client.close(0.0)
    with pytest.raises(RuntimeError, match="closed"):
        client.update("a", "a")
    assert client.buffered == 0
