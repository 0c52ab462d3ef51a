"""``streammon serve`` against in-process monitors, side by side in one run (issue 26's targets).

- ingest: batches of 10,000 over HTTP on 127.0.0.1 (one keep-alive connection, orjson bodies) against the same
  batches given to an in-process monitor: labelled samples against ``update_many``; predictions + labels against
  ``predict_many`` + ``label_many`` with the durable journal (target: each ≥ 50 %);
- healthz: seconds from starting ``python -m streammon serve CONFIG`` to its first 200 on ``/healthz`` (target
  ≤ 2 s on a warm numba cache);
- client call: ``examples/bench_client.py`` (a ``streammon.client`` call against a bound prometheus_client
  ``Counter.inc()``, target ≤ 2×), run first;
- soak (``--soak SECONDS``): four gunicorn workers sending through ``streammon.client`` as fast as they can, the
  server on the same cores: what the workers' clients report as sent (less what they dropped) against what the
  server counted, and the server's RSS over time (target: equal counts, RSS flat after the first minute).

    python examples/bench_server.py [--rounds 3] [--batches 20] [--soak 120]
"""

from __future__ import annotations

import argparse
import http.client
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson

from streammon import Monitor
from streammon.serve.config import parse
from streammon.serve.run import Server

ROOT = Path(__file__).resolve().parent.parent
SIZE = 10_000


def config_text(state_dir: Path, port: int = 0) -> str:
    return (f'[server]\nlisten = "127.0.0.1:{port}"\nstate_dir = "{state_dir}"\ncheckpoint_every = 600\n'
            '[models.fraud]\nreference = { legit = 97, fraud = 3 }\n')


def ingest(rounds: int, batches: int) -> list[str]:
    rng = np.random.default_rng(0)
    data = [(rng.choice(["legit", "fraud"], SIZE, p=[0.97, 0.03]).tolist(),
             rng.choice(["legit", "fraud"], SIZE, p=[0.97, 0.03]).tolist()) for _ in range(batches)]
    tmp = Path(tempfile.mkdtemp())
    server = Server(parse(config_text(tmp / "state")))
    connection = http.client.HTTPConnection("127.0.0.1", server.port)

    def post(path: str, body: bytes) -> None:
        connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        answer = connection.getresponse()
        assert answer.status == 200, answer.read()
        answer.read()

    samples = [orjson.dumps({"y_true": t, "y_pred": p}) for t, p in data]
    post("/v1/models/fraud/samples", samples[0])  # the compiled loops are loaded: both sides start warm
    times: dict[str, list[float]] = {"update_many": [], "samples over HTTP": [], "predict+label, journal": [],
                                     "predictions+labels over HTTP": []}
    for r in range(rounds):
        monitor = Monitor(reference={"legit": 97, "fraud": 3})
        monitor.update_many(*data[0])
        start = time.perf_counter()
        for t, p in data:
            monitor.update_many(t, p)
        times["update_many"].append(time.perf_counter() - start)
        start = time.perf_counter()
        for body in samples:
            post("/v1/models/fraud/samples", body)
        times["samples over HTTP"].append(time.perf_counter() - start)
        keys = [[f"r{r}-{b}-{i}" for i in range(SIZE)] for b in range(batches)]
        with Monitor(reference={"legit": 97, "fraud": 3}, pending=tmp / f"j{r}.sqlite") as journalled:
            start = time.perf_counter()
            for (_, p), k in zip(data, keys, strict=True):
                journalled.predict_many(k, p)
            for (t, _), k in zip(data, keys, strict=True):
                journalled.label_many(k, t)
            times["predict+label, journal"].append(time.perf_counter() - start)
        predictions = [orjson.dumps({"keys": k, "y_pred": p}) for (_, p), k in zip(data, keys, strict=True)]
        labels = [orjson.dumps({"keys": k, "y_true": t}) for (t, _), k in zip(data, keys, strict=True)]
        start = time.perf_counter()
        for body in predictions:
            post("/v1/models/fraud/predictions", body)
        for body in labels:
            post("/v1/models/fraud/labels", body)
        times["predictions+labels over HTTP"].append(time.perf_counter() - start)
    server.stop()
    rows = batches * SIZE
    median = {name: statistics.median(values) for name, values in times.items()}
    rate = {name: rows / seconds for name, seconds in median.items()}
    return [
        "| ingest, batches of 10,000 | rows/s | ratio | target |", "|---|---|---|---|",
        f"| update_many in process | {rate['update_many']:,.0f} | | |",
        f"| samples over HTTP | {rate['samples over HTTP']:,.0f} | "
        f"{rate['samples over HTTP'] / rate['update_many']:.2f} | >= 0.50 |",
        f"| predict_many + label_many in process, journal | {rate['predict+label, journal']:,.0f} | | |",
        f"| predictions + labels over HTTP, journal | {rate['predictions+labels over HTTP']:,.0f} | "
        f"{rate['predictions+labels over HTTP'] / rate['predict+label, journal']:.2f} | >= 0.50 |",
    ]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthz(rounds: int) -> list[str]:
    seconds = []
    for _ in range(rounds):
        tmp, port = Path(tempfile.mkdtemp()), free_port()
        (tmp / "c.toml").write_text(config_text(tmp / "state", port))
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-m", "streammon", "serve", str(tmp / "c.toml")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while True:
                try:
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                    connection.request("GET", "/healthz")
                    if connection.getresponse().status == 200:
                        break
                except OSError:
                    time.sleep(0.01)
            seconds.append(time.perf_counter() - start)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(30)
    return [f"| /healthz 200 after start (warm cache), median of {rounds} | {statistics.median(seconds):.2f} s | "
            f"max {max(seconds):.2f} s | <= 2 s |"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--soak", type=float, default=0.0, help="seconds of the four-worker soak (0: skip)")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_client import table  # examples/bench_client.py  # noqa: PLC0415

    print(table(quick=args.rounds < 3), flush=True)
    print("\n".join(ingest(args.rounds, args.batches)), flush=True)
    print("\n".join(healthz(5)), flush=True)
    if args.soak:
        from soak_server import soak  # examples/soak_server.py  # noqa: PLC0415

        print("\n".join(soak(args.soak)), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    main()
