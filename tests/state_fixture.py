"""The monitor of the checked-in state files of older versions (tests/fixtures/state_v3.json), rebuilt the same.

``python tests/state_fixture.py OUT`` saves it with whatever streammon is importable; the version-3 file was
written by the commit before state format 4 (``git archive 3d2cdca streammon``, on ``PYTHONPATH``), so
``test_state_format`` can load a file its own writer never produced and compare it with this monitor rebuilt.
"""

from __future__ import annotations

import copy
import sys
from typing import Any

import numpy as np

from streammon import Cumulative, DetectorSettings, Monitor, Sliding, Timed


def fixture_monitor() -> Monitor:
    """Every window kind, bool/int/str labels, a learned reference, a given baseline, detectors learning and
    watching, predictions pending, labelled and expired, all at explicit times (nothing reads the clock)."""
    rng = np.random.default_rng(25)
    classes = ["legit", "fraud", 3, True]
    monitor = Monitor([Cumulative(), Sliding(40), Timed(60, buckets=6)], warmup=200, classes=classes,
                      detector=DetectorSettings(baseline_samples=50, arl=1e6), label_ttl=30.0,  # (as in v3)
                      baseline={"legit": {"legit": 90, "fraud": 10}, "fraud": {"fraud": 8, "legit": 2}})
    truth = rng.choice(4, 1200, p=[0.7, 0.15, 0.1, 0.05])
    pred = np.where(rng.random(1200) < 0.85, truth, 0)
    times = np.cumsum(rng.random(1200) * 0.1)
    monitor.update_many([classes[i] for i in truth[:1000]], [classes[i] for i in pred[:1000]], t=times[:1000])
    for i in range(1000, 1100):
        monitor.update(classes[truth[i]], classes[pred[i]], t=float(times[i]))
    base = float(times[1099])
    # predictions, some labelled 1 s later, some never (they expire after label_ttl), in time order (so that the
    # expiry rules of every version agree: a label is never stamped before a prediction label_ttl newer than its own)
    events = [(base + i * 0.2, 0, i) for i in range(300)] + [(base + i * 0.2 + 1.0, 1, i) for i in range(0, 300, 3)]
    for t, kind, i in sorted(events):
        if kind == 0:
            monitor.predict(f"k{i}", classes[pred[1100 + i % 100]], t=t)
        else:
            monitor.label(f"k{i}", classes[truth[1100 + i % 100]], t=t)
    monitor.label("never-predicted", "fraud", t=base + 61.0)
    monitor.report()
    return monitor


def as_version_3(body: dict[str, Any]) -> dict[str, Any]:
    """A version-4 body written out as version 3 did (every count matrix in full), cell by cell in plain Python:
    the inverse of the upgrade, written without it."""
    body = copy.deepcopy(body)

    def full(matrix: dict[str, list[int]], side: int) -> list[list[int]]:
        rows = [[0] * side for _ in range(side)]
        for cell, count in zip(matrix["cells"], matrix["counts"], strict=True):
            rows[cell // side][cell % side] = count
        return rows

    def window(state: dict[str, Any], side: int) -> None:
        state["counts"] = full(state["counts"], side)
        if "slots" in state:
            state["slots"] = [None if m is None else full(m, side) for m in state["slots"]]

    for item in body["windows"]:
        window(item["state"], body["capacity"])
    window(body["lifetime"], body["capacity"])
    if body.get("prior_baseline") is not None:
        body["prior_baseline"]["counts"] = full(body["prior_baseline"]["counts"], len(body["prior_baseline"]["labels"]))
    if body.get("pending") is not None and body["pending"]["side"] is None:
        body["pending"] = None  # never predicted (format 4 saves no label-side windows): an older file had none
    if body.get("pending") is not None:
        side = body["pending"]["side"]
        for item in side["predictions"]:
            window(item, side["capacity"])
        for item in side["events"]:
            window(item, 16)
    return body


if __name__ == "__main__":
    fixture_monitor().save(sys.argv[1])
