"""Predicts and labels against a durable pending store until killed (for the kill -9 tests).

Usage: python labeller.py DB STATE ROUND. Resumes from STATE and DB (the one recovery path),
then runs ``calls(ROUND)`` printing ``ack <i>`` after call ``i`` returned, and saves STATE
every 40 calls. Each call is one ``predict``/``label``/``predict_many``/``label_many``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from streammon import Cumulative, Monitor, Sliding

MAX_PENDING = 60
LABEL_TTL = 30.0


def calls(round_: int, n: int = 4000) -> list[tuple[str, list[Any], list[str], float]]:
    """The calls of one round: (method, keys, labels, time); times increase across rounds."""
    rng = np.random.default_rng(round_)
    out = []
    for i in range(n):
        method = ["predict", "label", "predict_many", "label_many"][int(rng.integers(4))]
        size = 1 if method in ("predict", "label") else int(rng.integers(1, 6))
        keys: list[Any] = [int(k) if k % 2 else f"k{k}" for k in rng.integers(0, 120, size).tolist()]
        labels = rng.choice(["a", "b", "c"], size).tolist()
        out.append((method, keys, labels, round_ * 100_000.0 + i * 0.25))
    return out


def apply(m: Monitor, call: tuple[str, list[Any], list[str], float]) -> None:
    method, keys, labels, t = call
    if method in ("predict", "label"):
        getattr(m, method)(keys[0], labels[0], t=t)
    else:
        getattr(m, method)(keys, labels, t=t)


def open_monitor(db: Path, state: Path) -> Monitor:
    if state.exists():
        return Monitor.load(state, pending=db)
    return Monitor([Cumulative(), Sliding(50)], max_pending=MAX_PENDING, label_ttl=LABEL_TTL, pending=db)


def main() -> None:
    db, state, round_ = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    m = open_monitor(db, state)
    print("ready", flush=True)
    for i, call in enumerate(calls(round_)):
        apply(m, call)
        print(f"ack {i}", flush=True)
        if i % 40 == 39:
            m.save(state)
    print("done", flush=True)


if __name__ == "__main__":
    main()
