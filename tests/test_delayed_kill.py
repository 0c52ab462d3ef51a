"""kill -9 at any moment loses no acknowledged prediction or label, and counts nothing twice (real processes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np

from tests.label_oracle import Oracle
from tests.labeller import LABEL_TTL, MAX_PENDING, calls, open_monitor
from tests.test_delayed_labels import check_against

ROOT = Path(__file__).resolve().parent.parent


def replay(oracle: Oracle, done: list[tuple[str, list[object], list[str], float]]) -> float | None:
    last = None
    for method, keys, labels, t in done:
        for key, label in zip(keys, labels, strict=True):
            (oracle.predict if method.startswith("predict") else oracle.label)(key, label, t)
        if method.startswith("label"):
            last = t
    return last


def matches(db: Path, state: Path, done: list[tuple[str, list[object], list[str], float]]) -> bool:
    monitor = open_monitor(db, state)
    try:
        oracle = Oracle(MAX_PENDING, LABEL_TTL)
        check_against(monitor, oracle, replay(oracle, done), 50)
    except AssertionError:
        return False
    finally:
        monitor.close()
    return True


def test_killed_processes_lose_no_acknowledged_call_and_count_none_twice(tmp_path: Path) -> None:
    """Five rounds: a process predicts and labels (saving now and then) and is SIGKILLed after a random number of
    acknowledged calls; the state file plus the journal recount to every acknowledged call, plus at most the one
    in flight, never more — and the next round resumes from there."""
    db, state = tmp_path / "pending.sqlite", tmp_path / "state.json"
    rng = np.random.default_rng(7)
    done: list[tuple[str, list[object], list[str], float]] = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for round_ in range(5):
        proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "labeller.py"), str(db), str(state),
                                 str(round_)], stdout=subprocess.PIPE, text=True, env=env)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        target = int(rng.integers(20, 1500))
        acked = -1
        while acked < target:
            line = proc.stdout.readline()
            assert line.startswith("ack"), line
            acked = int(line.split()[1])
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        for line in proc.stdout.read().splitlines():  # acks printed before the kill landed
            if line.startswith("ack"):
                acked = int(line.split()[1])
        proc.stdout.close()
        this = calls(round_)
        if matches(db, state, done + this[: acked + 1]):
            done += this[: acked + 1]
        else:
            assert matches(db, state, done + this[: acked + 2]), f"round {round_}: recovered counts match neither " \
                f"the {acked + 1} acknowledged calls nor one more"
            done += this[: acked + 2]
