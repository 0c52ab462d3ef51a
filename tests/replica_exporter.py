"""One replica of a model service for the live Prometheus tests (run as a subprocess).

Usage: python replica_exporter.py SEED. It serves /metrics on a free loopback port, prints
``port <n>``, waits for a line ``go`` on stdin, counts its deterministic samples, prints
``counted``, and serves until stdin closes or it is killed. Its first ``UPDATED`` samples are
labelled predictions (``update_many``); the rest are predicted under keys (``predict_many``), and
the labels of the first ``LABELLED - UPDATED`` of them come later (``label_many``): the others stay
pending. Only the ``LABELLED`` first samples are in the labelled counts.
"""

from __future__ import annotations

import sys

import numpy as np

from streammon import Cumulative, Monitor, Sliding, Timed
from streammon.export.server import serve

REFERENCE = {"legit": 90, "fraud": 10}
UPDATED = 2000
LABELLED = 2800


def replica_samples(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The labelled predictions of replica ``seed`` (also computed by the test, in-process)."""
    rng = np.random.default_rng(seed)
    n = 3000
    truth = np.where(rng.random(n) < 0.1 + 0.05 * seed, "fraud", "legit")
    recall = np.where(truth == "fraud", 0.9 - 0.15 * seed, 0.95)
    hit = rng.random(n) < recall
    preds = np.where(hit, truth, np.where(truth == "fraud", "legit", "fraud"))
    return truth, preds


def main() -> None:
    seed = int(sys.argv[1])
    monitor = Monitor([Cumulative(), Sliding(1000), Timed(3600)], reference=REFERENCE)
    server = serve(monitor, port=0, model="fraud")
    print(f"port {server.port}", flush=True)
    for line in sys.stdin:
        if line.strip() == "go":
            truth, preds = replica_samples(seed)
            monitor.update_many(truth[:UPDATED], preds[:UPDATED])
            keys = [f"{seed}-{i}" for i in range(UPDATED, len(truth))]
            monitor.predict_many(keys, preds[UPDATED:])
            monitor.label_many(keys[: LABELLED - UPDATED], truth[UPDATED:LABELLED])
            print("counted", flush=True)
    server.stop()


if __name__ == "__main__":
    main()
