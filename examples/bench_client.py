"""Speed of feeding ``streammon serve``, measured side by side in one run (ratios; absolute times are indicative
on a shared machine).

Client call (issue 26, point 2): one ``streammon.client.Client`` call (``predict``, ``label``, ``update``) in the
worker against a bound prometheus_client ``Counter.inc()`` (``c = Counter(...).labels(...)``, then ``c.inc()``),
timed in the same process, in alternating blocks over the same keys and labels, while a real server (a
``python -m streammon serve`` subprocess) receives the batches. Goal: <= 2x. The calls with ``y_score=`` (issue 28:
a binary model's float, and a row of 3 class probabilities checked at the call) are timed the same way: compare
their ns per call with the unscored call's; a second table gives ``update_many``'s ns per row (its checks, in
the caller) without and with scores. Two ratios per call:

- *call*: wall time of the calls only (what a request handler waits for; the sender thread runs beside, so its
  share of the GIL lands in whichever block it interrupts);
- *CPU per row*: the worker process's CPU time for the calls plus ``flush()`` (the JSON encoding and HTTP of the
  sender thread included), per row, against the CPU time of as many ``inc()`` calls.

    python examples/bench_client.py [--quick]      (examples/bench_server.py runs it too)
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter

from streammon.client import Client

CONFIG = """
[server]
listen = "127.0.0.1:0"
state_dir = "{state}"
checkpoint_every = 3600

[models.fraud]
windows = ["cumulative", "sliding:1000", "sliding:10000", "timed:3600"]
positive = "fraud"

[models.three]
windows = ["cumulative", "sliding:1000", "sliding:10000", "timed:3600"]
classes = ["a", "b", "c"]
"""


@contextmanager
def server() -> Iterator[str]:
    """A ``python -m streammon serve`` subprocess on a free port; yields its URL, stops it (SIGTERM) after."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "serve.toml"
        config.write_text(CONFIG.format(state=Path(tmp) / "state"))
        process = subprocess.Popen([sys.executable, "-m", "streammon", "serve", str(config)], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True, env={**os.environ})
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            url = line.split(" on ")[1].split(";")[0]
            yield url
        finally:
            process.terminate()
            process.wait(30)


def _block(call: Callable[..., Any], firsts: list[Any], seconds: list[Any],
           scores: list[Any] | None = None) -> tuple[float, float]:
    """Wall and process CPU seconds of one call per (first, second) pair (with ``y_score=`` from ``scores``)."""
    cpu, wall = time.process_time(), time.perf_counter()
    if scores is None:
        for a, b in zip(firsts, seconds, strict=True):
            call(a, b)
    else:
        for a, b, s in zip(firsts, seconds, scores, strict=True):
            call(a, b, y_score=s)
    return time.perf_counter() - wall, time.process_time() - cpu


def client_call(url: str, rows: int, rounds: int) -> dict[str, dict[str, float]]:
    """Median ratios (client call / Counter.inc) of wall time per call and of CPU time per row, sending included."""
    rng = random.Random(0)
    counter = Counter("bench_requests", "Requests.", ["model"], registry=CollectorRegistry()).labels("fraud")
    client = Client(url, "fraud")
    routed = Client([url, url], "fraud")  # two lanes (to one server here): the key-hash routing's own cost
    three = Client(url, "three")
    labels = [rng.choice(["legit", "fraud"]) for _ in range(rows)]
    truth = [rng.choice(["legit", "fraud"]) for _ in range(rows)]
    scores = [rng.random() for _ in range(rows)]  # a binary model's positive-class score: a float
    truth3 = [rng.choice("abc") for _ in range(rows)]
    labels3 = [rng.choice("abc") for _ in range(rows)]
    rows3 = [[a / (a + b + c), b / (a + b + c), c / (a + b + c)]
             for a, b, c in ((rng.random(), rng.random(), rng.random()) for _ in range(rows))]

    def inc(_: Any, __: Any) -> None:
        counter.inc()

    ratios: dict[str, dict[str, list[float]]] = {name: {"call": [], "cpu": [], "ns": [], "inc_ns": []}
                                                 for name in ("predict", "label", "update", "predict, 2 URLs",
                                                              "predict, y_score", "update, y_score",
                                                              "update, y_score row of K = 3")}
    for r in range(rounds):
        keys = [f"tx-{r:05d}-{i:06d}" for i in range(rows)]  # 15-character keys, new each round
        others = [f"rt-{r:05d}-{i:06d}" for i in range(rows)]
        scored = [f"sc-{r:05d}-{i:06d}" for i in range(rows)]
        for name, call, firsts, seconds, given in (
                ("predict", client.predict, keys, labels, None),
                ("label", client.label, keys, truth, None),
                ("update", client.update, truth, labels, None),
                ("predict, 2 URLs", routed.predict, others, labels, None),
                ("predict, y_score", client.predict, scored, labels, scores),
                ("update, y_score", client.update, truth, labels, scores),
                ("update, y_score row of K = 3", three.update, truth3, labels3, rows3)):
            base_wall, base_cpu = _block(inc, firsts, seconds)
            cpu = time.process_time()
            wall, _ = _block(call, firsts, seconds, given)
            assert client.flush(60) and routed.flush(60) and three.flush(60), \
                "the server did not acknowledge within 60 s"
            cpu = time.process_time() - cpu
            ratios[name]["call"].append(wall / base_wall)
            ratios[name]["cpu"].append(cpu / base_cpu)
            ratios[name]["ns"].append(wall / rows * 1e9)
            ratios[name]["inc_ns"].append(base_wall / rows * 1e9)
    assert client.dropped == client.rejected == routed.dropped == routed.rejected == three.rejected == 0
    assert (client.sent, routed.sent, three.sent) == (5 * rows * rounds, rows * rounds, rows * rounds)
    client.close()
    routed.close()
    three.close()
    return {name: {what: statistics.median(values) for what, values in parts.items()}
            for name, parts in ratios.items()}


def batch_call(url: str, rows: int, rounds: int) -> dict[str, float]:
    """Median ns per row of one ``update_many`` call of ``rows`` rows (the checks in the caller), without and with
    ``y_score=`` (a list of floats; an (n, 3) list of rows), in alternating blocks."""
    rng = random.Random(1)
    client, three = Client(url, "fraud"), Client(url, "three")
    truth = [rng.choice(["legit", "fraud"]) for _ in range(rows)]
    labels = [rng.choice(["legit", "fraud"]) for _ in range(rows)]
    scores = [rng.random() for _ in range(rows)]
    truth3, labels3 = [rng.choice("abc") for _ in range(rows)], [rng.choice("abc") for _ in range(rows)]
    rows3 = [[a / (a + b + c), b / (a + b + c), c / (a + b + c)]
             for a, b, c in ((rng.random(), rng.random(), rng.random()) for _ in range(rows))]
    blocks: dict[str, list[float]] = {"update_many": [], "update_many, y_score": [],
                                      "update_many, y_score rows of K = 3": []}
    for _ in range(rounds):
        for name, call in (("update_many", lambda: client.update_many(truth, labels)),
                           ("update_many, y_score", lambda: client.update_many(truth, labels, y_score=scores)),
                           ("update_many, y_score rows of K = 3",
                            lambda: three.update_many(truth3, labels3, y_score=rows3))):
            wall = time.perf_counter()
            call()
            blocks[name].append((time.perf_counter() - wall) / rows * 1e9)
            assert client.flush(60) and three.flush(60), "the server did not acknowledge within 60 s"
    assert client.rejected == three.rejected == 0
    client.close()
    three.close()
    return {name: statistics.median(values) for name, values in blocks.items()}


def table(quick: bool = False) -> str:
    rows, rounds = (5_000, 21) if quick else (10_000, 101)
    with server() as url:
        ratios = client_call(url, rows, rounds)
        batches = batch_call(url, rows, rounds)
    lines = ["| client call (vs a bound Counter.inc()) | call (wall) | CPU per row, sending included | call, inc() "
             "| goal |",
             "|---|---|---|---|---|"]
    for name, parts in ratios.items():
        lines.append(f"| {name} | {parts['call']:.2f}x | {parts['cpu']:.2f}x | {parts['ns']:.0f} ns, "
                     f"{parts['inc_ns']:.0f} ns | <= 2x |")
    lines.append(f"\n({rounds} alternating rounds of {rows:,} calls each; medians of the per-round ratios)")
    unscored = batches["update_many"]
    lines += ["", "| one update_many call of {rows:,} rows | ns per row, the call's checks | vs without scores |"
              .replace("{rows:,}", f"{rows:,}"), "|---|---|---|"]
    lines += [f"| {name} | {ns:.0f} | {ns / unscored:.2f}x |" for name, ns in batches.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    print(table(parser.parse_args().quick))
