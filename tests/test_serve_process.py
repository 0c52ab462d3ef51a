"""``python -m streammon serve CONFIG`` as a real process, driven the way an outside check does: it writes its own
configuration, sends good and bad batches with plain HTTP, stops the server with SIGTERM or ``kill -9``, restarts
it and compares every count with its own recount. Every process started here is stopped by PID in a finally."""

from __future__ import annotations

import contextlib
import gzip
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.serve_http import (
    config_text,
    confusion,
    http_post,
    joined,
    post,
    read_until_closed,
    recount,
    report,
    request,
)

ROOT = Path(__file__).resolve().parent.parent
START_WITHIN = 2.0  # seconds from exec to /healthz 200 that the issue asks for
START_ALLOWED = 15.0  # what the test tolerates on a loaded, shared machine (the measured time is printed)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Served:
    """A ``streammon serve`` process of one configuration file."""

    def __init__(self, folder: Path, **server: Any) -> None:
        self.port = _free_port()
        self.folder = folder
        self.config = folder / "serve.toml"
        self.config.write_text(config_text(folder / "state", listen=f"127.0.0.1:{self.port}", **server))
        self.process: subprocess.Popen[bytes] | None = None
        self.started_in = 0.0

    def start(self) -> Served:
        """Start the process and wait for /healthz 200 (``started_in`` seconds)."""
        started = time.monotonic()
        log = (self.folder / "serve.log").open("ab")
        self.process = subprocess.Popen([sys.executable, "-m", "streammon", "serve", str(self.config)],
                                        stdout=log, stderr=subprocess.STDOUT, cwd=self.folder,
                                        env={**os.environ, "PYTHONPATH": str(ROOT)})
        log.close()
        while time.monotonic() - started < 60:
            assert self.process.poll() is None, self.log()
            with contextlib.suppress(OSError):
                if request(self.port, "GET", "/healthz")[0] == 200:
                    self.started_in = time.monotonic() - started
                    return self
            time.sleep(0.02)
        raise AssertionError(f"no /healthz within 60 s: {self.log()}")

    def kill(self, sig: int = signal.SIGKILL) -> int:
        """Send ``sig`` and wait for the exit code."""
        assert self.process is not None
        os.kill(self.process.pid, sig)
        return self.process.wait(timeout=60)

    def stop(self) -> None:
        """The finally of every test: kill the process by its PID if it still runs."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def log(self) -> str:
        return (self.folder / "serve.log").read_text(errors="replace")


@contextlib.contextmanager
def served(folder: Path, **server: Any) -> Iterator[Served]:
    """A started server process, killed by PID whatever happens."""
    process = Served(folder, **server)
    try:
        yield process.start()
    finally:
        process.stop()


def test_healthz_answers_within_2_s_of_start(tmp_path: Path) -> None:
    """A fresh server process answers /healthz 200 within 2 s of exec (the time is printed; up to 15 s is
    tolerated on a loaded machine) and serves its first batch."""
    with served(tmp_path) as server:
        print(f"/healthz 200 after {server.started_in:.2f} s (target {START_WITHIN} s)")
        assert server.started_in < START_ALLOWED
        first = time.monotonic()
        assert post(server.port, "m", "samples", {"y_true": ["a"], "y_pred": ["a"]}) == (200, {"accepted": 1})
        print(f"first batch answered after {time.monotonic() - first:.2f} s")


def _peak_rss_kib(pid: int) -> int:
    """The process's peak resident memory (VmHWM), KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")  # pragma: no cover - not Linux


def test_gzip_bomb_does_not_raise_the_servers_peak_memory(tmp_path: Path) -> None:
    """A 100 kB gzip body that inflates to 100 MB, sent to a server with max_body_bytes = 1 MB, is answered 413
    and the server process's peak resident memory (VmHWM) grows by less than 20 MB."""
    with served(tmp_path, max_body_bytes=1_000_000) as server:
        assert server.process is not None
        assert post(server.port, "m", "samples", {"y_true": ["a"], "y_pred": ["a"]})[0] == 200
        bomb = gzip.compress(b"[" * (100 << 20), compresslevel=9)
        before = _peak_rss_kib(server.process.pid)
        for _ in range(3):
            status, answer = post(server.port, "m", "samples", bomb, {"Content-Encoding": "gzip"})
            assert status == 413 and "decompresses to over max_body_bytes=1000000" in answer
        grown = _peak_rss_kib(server.process.pid) - before
        print(f"peak RSS grew by {grown} KiB under three gzip bombs of {len(bomb)} bytes")
        assert grown < 20_000
        assert report(server.port)["samples"] == 1


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "streammon", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60, check=False)


def test_bad_configuration_and_busy_port_exit_2_with_one_line(tmp_path: Path) -> None:
    """`streammon serve` of a configuration with an unknown key, of a missing file, or on a port another socket
    holds exits 2 with one line on stderr naming the key, the file or the address."""
    bad = tmp_path / "bad.toml"
    bad.write_text(config_text(tmp_path / "state", checkpoint_evry=5))
    done = _run(["serve", str(bad)], tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "unknown key 'checkpoint_evry'" in done.stderr
    done = _run(["serve", str(tmp_path / "missing.toml")], tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "missing.toml" in done.stderr
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        busy = tmp_path / "busy.toml"
        busy.write_text(config_text(tmp_path / "state", listen=f"127.0.0.1:{port}"))
        done = _run(["serve", str(busy)], tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"127.0.0.1:{port}" in done.stderr


def test_sigterm_answers_in_flight_requests_saves_and_exits_0(tmp_path: Path) -> None:
    """SIGTERM while a client is half-way through sending a batch: that batch is answered 200, the process
    exits 0 with a state file saved, and after a restart the counts equal the recount of every answered batch."""
    server = Served(tmp_path)
    try:
        server.start()
        assert post(server.port, "m", "samples", {"y_true": ["a", "b"], "y_pred": ["a", "a"]})[0] == 200
        body = json.dumps({"y_true": ["b"] * 3, "y_pred": ["b"] * 3}).encode()
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            request_bytes = http_post("/v1/models/m/samples", body)
            sock.sendall(request_bytes[:-10])
            time.sleep(0.2)
            assert server.process is not None
            os.kill(server.process.pid, signal.SIGTERM)
            time.sleep(0.3)
            sock.sendall(request_bytes[-10:])
            answer = read_until_closed(sock, 10)
        assert answer.startswith(b"HTTP/1.1 200 OK") and answer.endswith(b'{"accepted":3}'), answer
        assert server.process.wait(timeout=30) == 0, server.log()
        assert (tmp_path / "state" / "m.state.json").exists()
        server.start()
        assert confusion(report(server.port)) == recount([("a", "a"), ("b", "a"), *[("b", "b")] * 3])
    finally:
        server.stop()


def test_sigterm_while_clients_stream_keyed_batches_counts_each_once(tmp_path: Path) -> None:
    """Two clients stream keyed sample batches over kept-alive connections while SIGTERM arrives: the process
    exits 0, and after a restart and a retry of every batch whose answer was not seen, each batch is counted
    exactly once (the recount of all of them); every answer seen before the stop was a 200."""
    server = Served(tmp_path)
    sent: dict[str, dict[str, Any]] = {}
    answered: set[str] = set()
    stop = threading.Event()

    def client(worker: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        i = 0
        try:
            while not stop.is_set():
                key, i = f"w{worker}-{i}", i + 1
                batch = {"y_true": ["a", "b"][: 1 + i % 2], "y_pred": ["b", "b"][: 1 + i % 2]}
                sent[key] = batch
                connection.request("POST", "/v1/models/m/samples", body=json.dumps(batch),
                                   headers={"Idempotency-Key": key})
                response = connection.getresponse()
                assert (response.status, json.loads(response.read())) == (200, {"accepted": len(batch["y_true"])})
                answered.add(key)
        except (OSError, http.client.HTTPException):  # the stop cut a request that was not yet in flight
            pass
        connection.close()

    try:
        server.start()
        sent["warm"] = {"y_true": ["c"], "y_pred": ["c"]}  # the first batch compiles the read path
        assert post(server.port, "m", "samples", sent["warm"], {"Idempotency-Key": "warm"})[0] == 200
        answered.add("warm")
        clients = [threading.Thread(target=client, args=(worker,)) for worker in range(2)]
        for thread in clients:
            thread.start()
        deadline = time.monotonic() + 20
        while len(answered) < 50 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.kill(signal.SIGTERM) == 0, server.log()
        stop.set()
        for thread in clients:
            thread.join(timeout=30)
        assert len(answered) >= 50, len(answered)
        server.start()
        for key in sorted(set(sent) - answered):
            assert post(server.port, "m", "samples", sent[key], {"Idempotency-Key": key})[0] == 200
        assert confusion(report(server.port)) == recount(
            pair for batch in sent.values() for pair in zip(batch["y_true"], batch["y_pred"], strict=True))
        print(f"{len(answered)} batches answered before SIGTERM, {len(sent) - len(answered)} retried")
    finally:
        stop.set()
        server.stop()


def test_kill_9_between_acknowledged_batches_loses_and_doubles_nothing(tmp_path: Path) -> None:
    """Samples, predictions and labels (with and without Idempotency-Key) acknowledged before each of three
    kill -9s, and retries of keyed batches after each restart, leave the restarted server's counts equal to a
    recount of every acknowledged batch counted once; a batch in flight at a kill is counted at most once."""
    pairs: list[tuple[Any, Any]] = []
    predictions: dict[Any, Any] = {}
    labels: dict[Any, Any] = {}
    keyed: list[tuple[str, dict[str, Any], str]] = []
    server = Served(tmp_path, checkpoint_every=0.3)
    try:
        server.start()
        for round_ in range(3):
            for kind, batch, key in keyed:  # every retry of an acknowledged keyed batch is not counted again
                status, answer = post(server.port, "m", kind, batch, {"Idempotency-Key": key})
                assert status == 200 and answer.get("replayed") is True, (kind, key, answer)
            for i in range(4):
                key = f"r{round_}-{i}"
                samples = {"y_true": ["a", "b", i % 2 == 0][: i + 1], "y_pred": ["a", "a", True][: i + 1]}
                headers = {"Idempotency-Key": f"s-{key}"} if i % 2 else {}
                assert post(server.port, "m", "samples", samples, headers)[0] == 200
                pairs += zip(samples["y_true"], samples["y_pred"], strict=True)
                if headers:
                    keyed.append(("samples", samples, headers["Idempotency-Key"]))
                predicted = {f"p-{key}": "a", round_ * 10 + i: "b"}
                assert post(server.port, "m", "predictions", {"keys": list(predicted), "y_pred": list(
                    predicted.values())}, {"Idempotency-Key": f"p-{key}"})[0] == 200
                keyed.append(("predictions", {"keys": list(predicted), "y_pred": list(predicted.values())},
                              f"p-{key}"))
                predictions.update(predicted)
                if round_:  # labels for predictions acknowledged before an earlier kill
                    late = {f"p-r{round_ - 1}-{i}": "b", (round_ - 1) * 10 + i: "b"}
                    assert post(server.port, "m", "labels", {"keys": list(late), "y_true": list(late.values())}
                                )[0] == 200
                    labels.update(late)
                if i == 1:
                    time.sleep(0.4)  # a checkpoint lands between batches: the journal is truncated under them
            in_flight = {"y_true": ["z"] * 5, "y_pred": ["z"] * 5}
            with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
                sock.sendall(http_post("/v1/models/m/samples", json.dumps(in_flight).encode()))
                assert server.kill() == -signal.SIGKILL
            server.start()
            counted = confusion(report(server.port))
            extra = counted[("z", "z")] - pairs.count(("z", "z"))
            assert extra in (0, 5), counted
            pairs += [("z", "z")] * extra
            expected = recount([*pairs, *joined(predictions, labels)])
            assert counted == expected, (counted - expected, expected - counted)
    finally:
        server.stop()


def test_a_second_server_on_one_state_dir_and_changed_windows_exit_2(tmp_path: Path) -> None:
    """A second `streammon serve` on the same state_dir (another port) exits 2 with one line naming the busy
    journal while the first keeps serving its counts; after the first stops, a restart with other windows exits 2
    naming the windows, and the original configuration still starts with every count."""
    with served(tmp_path) as first:
        assert post(first.port, "m", "samples", {"y_true": ["a", "b"], "y_pred": ["b", "b"]})[0] == 200
        second = tmp_path / "second.toml"
        second.write_text(config_text(tmp_path / "state", listen=f"127.0.0.1:{_free_port()}"))
        done = _run(["serve", str(second)], tmp_path)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "m.journal.sqlite" in done.stderr and "another monitor" in done.stderr
        assert post(first.port, "m", "samples", {"y_true": ["a"], "y_pred": ["a"]})[0] == 200
        assert first.kill(signal.SIGTERM) == 0
    changed = tmp_path / "changed.toml"
    changed.write_text(config_text(tmp_path / "state", windows='["cumulative", "sliding:10"]'))
    done = _run(["serve", str(changed)], tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "other windows" in done.stderr, done.stderr
    with served(tmp_path) as again:
        assert confusion(report(again.port)) == recount([("a", "b"), ("b", "b"), ("a", "a")])
