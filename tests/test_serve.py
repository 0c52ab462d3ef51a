"""The HTTP API of ``streammon serve`` driven in-process (``Server(parse(toml))`` on port 0) by a client that is
not streammon's: plain ``http.client`` requests and raw sockets. Counts are checked against a recount made here,
refused batches against the report before them (nothing counted)."""

from __future__ import annotations

import contextlib
import gzip
import http.client
import json
import re
import shutil
import socket
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from streammon.export.http_serving import BoundedServer, Limits, listen
from streammon.serve.api import Api
from streammon.serve.config import parse
from streammon.serve.hub import Hub
from streammon.serve.run import Server
from tests.serve_http import (
    TOKEN,
    config_text,
    confusion,
    http_post,
    joined,
    post,
    raw_exchange,
    recount,
    report,
    request,
)

CAP = 200_000  # max_body_bytes of the test servers


@contextlib.contextmanager
def serving(state_dir: Path, **server: Any) -> Iterator[Server]:
    """A server of one model ``m`` (a cumulative window) under ``state_dir``, stopped whatever happens."""
    options: dict[str, Any] = {"max_body_bytes": CAP, "body_timeout": 2.0, **server}
    running = Server(parse(config_text(state_dir, **options)))
    try:
        yield running
    finally:
        running.stop(grace=2.0)


def _counted(port: int) -> dict[str, Any]:
    """What a refused batch must leave as it was: the whole report of ``m`` (one cumulative window, no clock)."""
    answer = report(port)
    answer.pop("alerts", None)
    return answer


def test_accepted_batches_are_counted_as_recounted(tmp_path: Path) -> None:
    """Samples, and predictions joined with labels sent later (string, integer and boolean classes and keys), are
    answered with their row counts and the report's confusion equals a recount of the batches."""
    sample_true = ["fraud", "legit", "legit", True, 7, "legit", "y_true", "caf\u00e9", "a:b"]  # field names as
    sample_pred = ["fraud", "fraud", "legit", True, 7, "legit", "y_pred", "caf\u00e9", "a:b"]  # labels, \u, colons
    predictions = {"tx-1": "fraud", 2: "legit", "tx-3": "legit", 4: 7}
    labels = {"tx-1": "legit", 2: "legit", 4: 7, "never-predicted": "fraud"}
    with serving(tmp_path) as server:
        assert post(server.port, "m", "samples", {"y_true": sample_true, "y_pred": sample_pred}) == \
            (200, {"accepted": 9})
        assert post(server.port, "m", "predictions", {"keys": list(predictions), "y_pred": list(
            predictions.values())}) == (200, {"accepted": 4})
        assert post(server.port, "m", "labels", {"keys": list(labels), "y_true": list(labels.values()),
                                                  "t": None}) == (200, {"accepted": 4})
        assert post(server.port, "m", "samples", {"y_true": [], "y_pred": []}) == (200, {"accepted": 0})
        expected = recount([*zip(sample_true, sample_pred, strict=True), *joined(predictions, labels)])
        assert confusion(report(server.port)) == expected
        assert report(server.port)["samples"] == sum(expected.values())
        status, _, models = request(server.port, "GET", "/v1/models")
        assert status == 200 and json.loads(models) == {"models": ["m"], "segments": {"m": []}}


BAD_BATCHES: list[tuple[str, bytes, str]] = [
    ("samples", b"{not json", r"^the body is not JSON"),
    ("samples", b'["a"]', r"must be a JSON object with y_true, y_pred.*got an array"),
    ("samples", b'{"y_pred": ["a"]}', r"^y_true is missing"),
    ("samples", b'{"y_true": ["a"], "y_pred": ["a"], "weights": [1]}', r"^unknown field 'weights'"),
    ("predictions", b'{"keys": "k", "y_pred": ["a"]}', r"^keys must be an array, got a string"),
    ("samples", b'{"y_true": ["a", "b"], "y_pred": ["a"]}', r"y_true and y_pred must have the same length.*2 and 1"),
    ("samples", b'{"y_true": ["a", null], "y_pred": ["a", "b"]}', r"^y_true\[1\]: null is not a class label"),
    ("samples", b'{"y_true": ["a"], "y_pred": [["a"]]}', r"^y_pred\[0\]: an array is not a class label"),
    ("labels", b'{"keys": [1, 2], "y_true": ["a", {"a": 1}]}', r"^y_true\[1\]: an object is not a class label"),
    ("samples", b'{"y_true": ["a", 2.5], "y_pred": ["a", "b"]}', r"^y_true\[1\]: label 2.5 is a float that is not"),
    ("samples", json.dumps({"y_true": ["a", "x" * 300], "y_pred": ["a", "b"]}).encode(),
     r"^y_true\[1\]: label .* has 300 characters: .*1 to 256"),
    ("predictions", b'{"keys": ["k", ""], "y_pred": ["a", "b"]}', r"^keys\[1\]: key '' has 0 characters"),
    ("predictions", json.dumps({"keys": ["x" * 513], "y_pred": ["a"]}).encode(), r"^keys\[0\]: .*513 characters"),
    ("predictions", b'{"keys": [1.5], "y_pred": ["a"]}', r"^keys\[0\]: a number is not a key"),
    ("predictions", b'{"keys": [true], "y_pred": ["a"]}', r"^keys\[0\]: a boolean is not a key"),
    ("predictions", b'{"keys": [99999999999999999999], "y_pred": ["a"]}', r"not JSON|keys\[0\]"),
    ("samples", b'{"y_true": ["a"], "y_pred": ["a"], "t": "now"}', r"^t must be a number of seconds.*a string"),
    ("samples", b'{"y_true": ["a", "b"], "y_pred": ["a", "b"], "t": [1, "x"]}', r"^t\[1\]: a string is not a time"),
    ("samples", b'{"y_true": ["a", "b"], "y_pred": ["a", "b"], "t": [200, 150]}', r"never decrease.*t\[1\]=150"),
    ("samples", b'{"y_true": ["a"], "y_pred": ["a"], "t": [10]}', r"^t\[0\]=10.0 is earlier than the last sample time"),
    ("samples", b'{"y_true": ["a"], "y_pred": ["a"], "t": 1e300}', r"^t must be finite seconds.*1e\+300"),
    ("samples", b'{"y_true": ["a"], "y_pred": ["a"], "t": [-1e308]}', r"^t.*finite seconds"),
    ("samples", b'{"y_true": ["a"], "y_pred": ["a"], "t": [1, 2]}', r"^t must have one time per row \(1\), got 2"),
    ("samples", b'{"y_true": ["a"], "y_pred": ["a"], "t": NaN}', r"^the body is not JSON"),
    ("samples", b'{"y_true": ["a"], "y_true": ["b"], "y_pred": ["a"]}', r"^field 'y_true' is given twice"),
    ("labels", b'{"keys": [1], "y_true": ["a"], "k\\u0065ys": [2]}', r"^field 'keys' is given twice"),
    ("samples", b'{"y_true": ["a"], "y_pred": ["a"], "t": 5, "t": 6}', r"^field 't' is given twice"),
]


def test_bad_batches_get_400_naming_field_and_position_and_count_nothing(tmp_path: Path) -> None:
    """Each malformed batch is answered 400 with an error naming its field, position and what was expected, and
    the model's report (and the rejected counter) shows nothing of it was counted."""
    with serving(tmp_path) as server:
        assert post(server.port, "m", "samples", {"y_true": ["a", "b"], "y_pred": ["a", "a"], "t": 100})[0] == 200
        assert post(server.port, "m", "predictions", {"keys": ["p"], "y_pred": ["a"], "t": 100})[0] == 200
        before = _counted(server.port)
        for kind, body, message in BAD_BATCHES:
            status, answer = post(server.port, "m", kind, body)
            assert status == 400, (body[:80], answer)
            assert set(answer) == {"error"}
            assert re.search(message, answer["error"]), (body[:80], answer["error"])
            assert _counted(server.port) == before, body[:80]
        # a refused prediction batch left no pending prediction behind: its key's label finds nothing to join
        assert post(server.port, "m", "predictions", {"keys": ["q", ""], "y_pred": ["a", "b"]})[0] == 400
        assert post(server.port, "m", "labels", {"keys": ["q", "p"], "y_true": ["b", "b"], "t": 200})[0] == 200
        assert confusion(report(server.port)) == recount([("a", "a"), ("b", "a"), ("b", "a")])
        _, _, metrics = request(server.port, "GET", "/metrics")
        assert f"streammon_server_rejected_total {len(BAD_BATCHES) + 1}.0".encode() in metrics


def test_statuses_of_paths_methods_encodings_and_sizes(tmp_path: Path) -> None:
    """404 for an unknown model (naming the served ones) or path, 405 for a wrong method, 413 for a body over
    max_body_bytes, 415 for an unknown Content-Encoding, 501 for an unknown Transfer-Encoding; none counts."""
    with serving(tmp_path) as server:
        port, batch = server.port, {"y_true": ["a"], "y_pred": ["a"]}
        status, answer = post(port, "nope", "samples", batch)
        assert status == 404 and "unknown model 'nope'" in answer["error"] and "m" in answer["error"]
        assert request(port, "POST", "/v1/models/m/weights", b"{}")[0] == 404
        assert request(port, "GET", "/v2/anything")[0] == 404
        assert request(port, "GET", "/v1/models/m/samples")[0] == 405
        assert request(port, "POST", "/v1/models/m/report", b"{}")[0] == 405
        assert request(port, "POST", "/metrics", b"")[0] == 405
        big = json.dumps({"y_true": ["a"] * 40_000, "y_pred": ["a"] * 40_000}).encode()
        assert len(big) > CAP
        assert post(port, "m", "samples", big)[0] == 413
        assert post(port, "m", "samples", batch, {"Content-Encoding": "br"})[0] == 415
        assert raw_exchange(port, b"POST /v1/models/m/samples HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"
                            ).startswith(b"HTTP/1.1 501 ")
        assert request(port, "GET", "/healthz")[:1] == (200,)
        assert report(port)["samples"] == 0


def test_token_is_needed_on_every_path_but_healthz(tmp_path: Path) -> None:
    """With [server] token, a batch, a report, /v1/models and /metrics without the token or with a wrong one get
    401 (nothing counted); with it they are served; /healthz needs none."""
    with serving(tmp_path, token=TOKEN) as server:
        port, good = server.port, {"Authorization": f"Bearer {TOKEN}"}
        for headers in ({}, {"Authorization": "Bearer wrong-token-wrong-token"}, {"Authorization": TOKEN},
                        {"Authorization": f"bearer {TOKEN}x"}):
            assert post(port, "m", "samples", {"y_true": ["a"], "y_pred": ["a"]}, headers)[0] == 401
            for path in ("/v1/models/m/report", "/v1/models", "/metrics"):
                status, answer_headers, _ = request(port, "GET", path, headers=headers)
                assert status == 401 and answer_headers.get("WWW-Authenticate", "").startswith("Bearer")
        assert request(port, "GET", "/healthz")[0] == 200
        assert post(port, "m", "samples", {"y_true": ["a"], "y_pred": ["b"]}, good) == (200, {"accepted": 1})
        assert report(port, headers=good)["samples"] == 1


def test_idempotency_key_counts_a_retried_batch_once(tmp_path: Path) -> None:
    """The same batch sent twice with one Idempotency-Key, also by 8 threads at once, also after a checkpoint
    truncated the journal and after a restart, is counted once; the retries say "replayed"; a key reused for a
    batch of another size is 422 and not counted."""
    batch = {"y_true": ["a", "b", "b"], "y_pred": ["a", "a", "b"]}
    with serving(tmp_path, checkpoint_every=0.2) as server:
        port = server.port
        assert post(port, "m", "samples", batch, {"Idempotency-Key": "batch-1"}) == (200, {"accepted": 3})
        assert post(port, "m", "samples", batch, {"Idempotency-Key": "batch-1"}) == \
            (200, {"accepted": 3, "replayed": True})
        answers: list[tuple[int, Any]] = []
        threads = [threading.Thread(target=lambda: answers.append(post(port, "m", "predictions", {
            "keys": ["k1", "k2"], "y_pred": ["a", "b"]}, {"Idempotency-Key": "batch-2"}))) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert all(status == 200 and answer["accepted"] == 2 for status, answer in answers), answers
        assert post(port, "m", "labels", {"keys": ["k1", "k2"], "y_true": ["a", "a"]}, {"Idempotency-Key": "b3"}
                    )[0] == 200
        status, answer = post(port, "m", "samples", {"y_true": ["a"], "y_pred": ["b"]}, {"Idempotency-Key": "b3"})
        assert status == 422 and "used for a batch of 2 rows, this one has 1" in answer["error"]
        deadline = time.monotonic() + 10  # until a checkpoint has truncated the journal under the batches
        while time.monotonic() < deadline and _journal_rows(tmp_path / "m.journal.sqlite"):
            time.sleep(0.05)
        assert _journal_rows(tmp_path / "m.journal.sqlite") == 0
        assert post(port, "m", "samples", batch, {"Idempotency-Key": "batch-1"})[1].get("replayed") is True
        expected = recount([*zip(batch["y_true"], batch["y_pred"], strict=True), ("a", "a"), ("a", "b")])
        assert confusion(report(port)) == expected
    with serving(tmp_path) as server:
        for kind, body, key in (("samples", batch, "batch-1"), ("labels", {"keys": ["k1", "k2"], "y_true": [
                "a", "a"]}, "b3")):
            assert post(server.port, "m", kind, body, {"Idempotency-Key": key})[1].get("replayed") is True
        assert confusion(report(server.port)) == expected


def _journal_rows(path: Path) -> int:
    """Rows of predictions, labels and samples in a journal (read-only, beside its writer)."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return int(db.execute("SELECT (SELECT count(*) FROM ops) + (SELECT count(*) FROM samples)").fetchone()[0])


@pytest.mark.parametrize("key", ["k" * 201, "caf\u00e9", "", "tab\there"], ids=["201-chars", "non-ascii", "empty",
                                                                                 "control"])
def test_bad_idempotency_keys_get_400(tmp_path: Path, key: str) -> None:
    """An Idempotency-Key that is not 1 to 200 printable ASCII characters is answered 400 naming the header, and
    the batch is not counted."""
    with serving(tmp_path) as server:
        head = http_post("/v1/models/m/samples", b'{"y_true": ["a"], "y_pred": ["a"]}',
                         f"Idempotency-Key: {key}\r\n".encode().decode("latin-1"), close=True)
        answer = raw_exchange(server.port, head.decode("latin-1").encode("latin-1"))
        assert answer.startswith(b"HTTP/1.1 400 "), answer[:100]
        assert b"Idempotency-Key" in answer
        assert report(server.port)["samples"] == 0


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0  # pragma: no cover - not Linux


def test_gzip_bodies_are_accepted_and_bombs_refused(tmp_path: Path) -> None:
    """A gzip body is counted like the plain one; a 0.15 MB gzip body that inflates to 150 MB is 413 without the
    process's resident memory growing by more than 50 MB; a corrupt or truncated gzip body is 400."""
    with serving(tmp_path) as server:
        port = server.port
        body = json.dumps({"y_true": ["a", "b"], "y_pred": ["b", "b"]}).encode()
        assert post(port, "m", "samples", gzip.compress(body), {"Content-Encoding": "gzip"}) == \
            (200, {"accepted": 2})
        bomb = gzip.compress(b" " * (150 << 20), compresslevel=9)
        assert len(bomb) < CAP
        before = _rss_kib()
        status, answer = post(port, "m", "samples", bomb, {"Content-Encoding": "gzip"})
        grown = _rss_kib() - before
        assert status == 413 and "decompresses to over max_body_bytes" in answer
        assert grown < 50_000, f"RSS grew by {grown} KiB"
        assert post(port, "m", "samples", b"\x1f\x8b not gzip", {"Content-Encoding": "gzip"})[0] == 400
        assert post(port, "m", "samples", gzip.compress(body)[:-12], {"Content-Encoding": "gzip"})[0] == 400
        assert confusion(report(port)) == recount([("a", "b"), ("b", "b")])


def test_chunked_bodies_are_read_and_bounded(tmp_path: Path) -> None:
    """A chunked body (http.client's encoding) is counted; chunks that add up past max_body_bytes are 413 and
    nothing is counted."""
    with serving(tmp_path) as server:
        parts = [b'{"y_true": ["a", ', b'"b"], "y_pred": ', b'["a", "a"]}']
        assert request(server.port, "POST", "/v1/models/m/samples", iter(parts), chunked=True)[0] == 200
        big = iter([b" " * 50_000] * 5)
        assert request(server.port, "POST", "/v1/models/m/samples", big, chunked=True)[0] == 413
        assert confusion(report(server.port)) == recount([("a", "a"), ("b", "a")])


def test_expect_100_continue_with_a_raw_client(tmp_path: Path) -> None:
    """A client that sends Expect: 100-continue and waits gets '100 Continue' before it sends the body, then the
    answer; one whose body is over the cap gets 413 without sending it."""
    with serving(tmp_path) as server:
        body = json.dumps({"y_true": ["a"] * 500, "y_pred": ["b"] * 500}).encode()
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            sock.sendall(http_post("/v1/models/m/samples", b"", "Expect: 100-continue\r\n").replace(
                b"Content-Length: 0", f"Content-Length: {len(body)}".encode()))
            assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
            sock.sendall(body)
            assert sock.recv(1000).startswith(b"HTTP/1.1 200 OK")
        too_big = http_post("/v1/models/m/samples", b"", "Expect: 100-continue\r\n").replace(
            b"Content-Length: 0", f"Content-Length: {CAP + 1}".encode())
        assert raw_exchange(server.port, too_big).startswith(b"HTTP/1.1 413 ")
        assert report(server.port)["samples"] == 500


def test_curl_posts_a_body_with_expect_100_continue(tmp_path: Path) -> None:
    """curl (a client in another language) sending a 20 kB body with Expect: 100-continue, as the docs show, is
    answered {"accepted": n} and the rows are counted."""
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("no curl")
    body = tmp_path / "batch.json"
    body.write_text(json.dumps({"y_true": ["fraud"] * 1000, "y_pred": ["legit"] * 1000}))
    with serving(tmp_path / "state") as server:
        done = subprocess.run([curl, "-sS", "-v", "-X", "POST", f"http://127.0.0.1:{server.port}/v1/models/m/samples",
                               "-H", "Content-Type: application/json", "-H", "Expect: 100-continue",
                               "-H", "Idempotency-Key: batch-000123", "--data-binary", f"@{body}"],
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {"accepted": 1000}
        assert "HTTP/1.1 100 Continue" in done.stderr
        assert confusion(report(server.port)) == recount([("fraud", "legit")] * 1000)


def test_keep_alive_and_pipelined_requests(tmp_path: Path) -> None:
    """Several requests on one kept-alive http.client connection are all answered on it; three requests pipelined
    in one write are answered in order; every row is counted once."""
    with serving(tmp_path) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        try:
            sockets = set()
            for i in range(5):
                connection.request("POST", "/v1/models/m/samples", body=json.dumps(
                    {"y_true": ["a"] * (i + 1), "y_pred": ["b"] * (i + 1)}))
                response = connection.getresponse()
                assert (response.status, json.loads(response.read())) == (200, {"accepted": i + 1})
                assert response.getheader("Connection") == "keep-alive"
                sockets.add(id(connection.sock))
            assert len(sockets) == 1
        finally:
            connection.close()
        one = http_post("/v1/models/m/samples", b'{"y_true": ["c"], "y_pred": ["c"]}')
        answer = raw_exchange(server.port, one + one + b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert answer.count(b'{"accepted":1}') == 2 and answer.endswith(b'{"status":"ok"}')
        assert confusion(report(server.port)) == recount([("a", "b")] * 15 + [("c", "c")] * 2)


def test_dropped_rows_reported_by_clients_are_exported(tmp_path: Path) -> None:
    """Streammon-Dropped: N on accepted batches adds N to streammon_client_dropped_total{model}; a value that is
    not a count is 400 and the batch is not counted."""
    with serving(tmp_path) as server:
        batch = {"y_true": ["a"], "y_pred": ["a"]}
        assert post(server.port, "m", "samples", batch, {"Streammon-Dropped": "7"})[0] == 200
        assert post(server.port, "m", "samples", batch, {"Streammon-Dropped": "5"})[0] == 200
        for bad in ("-1", "1e3", "x", str(2**41)):
            status, answer = post(server.port, "m", "samples", batch, {"Streammon-Dropped": bad})
            assert status == 400 and "Streammon-Dropped" in answer["error"]
        _, _, metrics = request(server.port, "GET", "/metrics")
        assert b'streammon_client_dropped_total{model="m"} 12.0' in metrics
        assert report(server.port)["samples"] == 2


def test_refusals_on_the_head_are_answered_before_the_body_is_read(tmp_path: Path) -> None:
    """A request whose head alone refuses it (no token: 401, unknown model or path: 404, wrong method: 405) is
    answered at once without the server waiting for its announced body (it would wait body_timeout=2 s and
    hold the bytes), also under Expect: 100-continue (no 100 sent); an authorised batch is counted meanwhile."""
    good = f"Authorization: Bearer {TOKEN}\r\n"
    heads = {
        http_post("/v1/models/m/samples", b""): b"HTTP/1.1 401 ",
        http_post("/v1/models/m/samples", b"", "Expect: 100-continue\r\n"): b"HTTP/1.1 401 ",
        http_post("/v1/models/nope/samples", b"", good): b"HTTP/1.1 404 ",
        http_post("/v2/upload", b"", good): b"HTTP/1.1 404 ",
        http_post("/v1/models/m/report", b"", good): b"HTTP/1.1 405 ",
        http_post("/v1/models/m/samples", b"", "Transfer-Encoding: chunked\r\n"): b"HTTP/1.1 401 ",
    }
    with serving(tmp_path, token=TOKEN) as server:
        for template, expected in heads.items():
            announced = b"" if b"chunked" in template else f"Content-Length: {CAP - 1}\r\n".encode()
            head = template.replace(b"Content-Length: 0\r\n", announced)
            started = time.monotonic()
            answer = raw_exchange(server.port, head, wait=5.0)
            took = time.monotonic() - started
            assert answer.startswith(expected), (head[:60], answer[:80])
            assert b"100 Continue" not in answer and b"Connection: close" in answer
            assert took < 1.0, f"{head[:40]!r} answered after {took:.2f} s"
        assert post(server.port, "m", "samples", {"y_true": ["a"], "y_pred": ["b"]},
                    {"Authorization": f"Bearer {TOKEN}"}) == (200, {"accepted": 1})
        assert report(server.port, headers={"Authorization": f"Bearer {TOKEN}"})["samples"] == 1


def test_concurrent_clients_are_counted_exactly(tmp_path: Path) -> None:
    """Six clients, each on its own kept-alive connection, sending 15 batches of samples, predictions and their
    labels at once, leave the report equal to a recount of every batch."""
    pairs: list[tuple[Any, Any]] = []
    lock = threading.Lock()
    failures: list[Any] = []

    def client(port: int, worker: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            for i in range(15):
                true, pred = ["a", "b", "c"][(worker + i) % 3], ["a", "b"][i % 2]
                keys = [f"w{worker}-{i}-{j}" for j in range(3)]
                for kind, batch in (("samples", {"y_true": [true] * 2, "y_pred": [pred] * 2}),
                                    ("predictions", {"keys": keys, "y_pred": [pred] * 3}),
                                    ("labels", {"keys": keys[:2], "y_true": [true] * 2})):
                    connection.request("POST", f"/v1/models/m/{kind}", body=json.dumps(batch))
                    response = connection.getresponse()
                    if (response.status, response.read()) != (200, b'{"accepted":%d}' % len(batch[
                            "y_pred" if kind != "labels" else "y_true"])):
                        failures.append((worker, i, kind, response.status))
                with lock:
                    pairs.extend([(true, pred)] * 4)
        finally:
            connection.close()

    with serving(tmp_path) as server:
        threads = [threading.Thread(target=client, args=(server.port, worker)) for worker in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        assert confusion(report(server.port)) == recount(pairs)


def test_503_while_starting(tmp_path: Path) -> None:
    """Before the monitors are open, /healthz is 503 {"status": "starting"} and a batch is 503 with Retry-After: 1
    (refused on its head, nothing read); once attached, both are served."""
    api = Api(None, token=None)
    http_server = BoundedServer(api, listen("127.0.0.1", 0), tls=None, limits=Limits(max_body_bytes=CAP),
                                screen=api.screen)
    hub = None
    try:
        status, _, body = request(http_server.port, "GET", "/healthz")
        assert (status, json.loads(body)) == (503, {"status": "starting"})
        status, headers, _ = request(http_server.port, "POST", "/v1/models/m/samples", b'{"y_true": [], "y_pred": []}')
        assert status == 503 and headers.get("Retry-After") == "1"
        hub = Hub(parse(config_text(tmp_path)))
        api.attach(hub)
        assert request(http_server.port, "GET", "/healthz")[0] == 200
        assert post(http_server.port, "m", "samples", {"y_true": ["a"], "y_pred": ["a"]}) == (200, {"accepted": 1})
    finally:
        http_server.stop()
        if hub is not None:
            hub.close()
