"""Restarts lose nothing: save/load round-trips exactly, files are checked, and a killed save leaves the old file."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from streammon import Cumulative, Monitor, Sliding, Timed
from streammon.detection.bank import MEMBERS
from streammon.state import VERSION, Checkpointer, StateError, _digest, encode_label
from tests.state_fixture import as_version_3

ROOT = Path(__file__).resolve().parents[1]


def _stream(seed: int, n: int) -> tuple[list, list, list]:
    rng = np.random.default_rng(seed)
    truth = rng.choice(["legit", "fraud", 3, True], n, p=[0.7, 0.1, 0.1, 0.1]).tolist()
    preds = [y if rng.random() < 0.8 else "legit" for y in truth]
    return truth, preds, list(np.cumsum(rng.random(n)))


def _same_report(a, b) -> None:  # type: ignore[no-untyped-def]
    assert a.labels == b.labels and a.samples == b.samples and a.alerts == b.alerts and a.baseline == b.baseline
    assert a.reference == b.reference and a.positive == b.positive
    for name, wa in a.windows.items():
        wb = b.windows[name]
        assert wa.confusion == wb.confusion and wa.flags == wb.flags and wa.absent == wb.absent
        for metric, value in wa.scores.items():
            assert value == wb.scores[metric] or (math.isnan(value) and math.isnan(wb.scores[metric])), metric


def _monitor() -> Monitor:
    return Monitor([Cumulative(), Sliding(500), Timed(120, buckets=12)], warmup=300,
                   baseline={"legit": {"legit": 900, "fraud": 100}})


def test_a_restored_monitor_reports_the_same_and_continues_exactly(tmp_path: Path) -> None:
    """After save/load the report is identical, and both monitors stay identical as the stream goes on."""
    truth, preds, times = _stream(0, 6000)
    original = _monitor()
    for y, p, t in zip(truth[:2000], preds[:2000], times[:2000], strict=True):
        original.update(y, p, t=t)
    original.update_many(truth[2000:3000], preds[2000:3000], t=times[2000:3000])
    original.save(tmp_path / "m.json")
    restored = Monitor.load(tmp_path / "m.json")
    _same_report(original.report(), restored.report())
    for m in (original, restored):
        m.update_many(truth[3000:5000], preds[3000:5000], t=times[3000:5000])
        for y, p, t in zip(truth[5000:], preds[5000:], times[5000:], strict=True):
            m.update(y, p, t=t)
    _same_report(original.report(), restored.report())
    assert type(restored.report().labels[2]) is type(original.report().labels[2])  # labels keep their types


def test_a_version_2_file_loads_as_the_detector_it_saved(tmp_path: Path) -> None:
    """A state file of the previous version (one bank threshold per class) loads: every member of the class
    crosses at that threshold, as it did when it was saved, and the restored monitor goes on like the original
    with that threshold — the same reports and the same degradation alert through a drop."""
    truth, preds, times = _stream(2, 4000)
    original = _monitor()
    original.update_many(truth[:3000], preds[:3000], t=times[:3000])
    document = json.loads(original.dumps())
    document["body"] = as_version_3(document["body"])
    common = {}
    for c, item in document["body"]["watch"]["classes"].items():
        members = item.pop("thresholds")
        common[int(c)] = None if members is None else max(h for h in members if h is not None)
        item["threshold"] = common[int(c)]
    assert any(h is not None for h in common.values())
    document["version"], document["sha256"] = 2, _digest(document["body"])
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(document))
    restored = Monitor.load(path)
    watch = original._tally.watch
    for c, h in common.items():
        if h is not None:
            assert restored._tally.watch._arrays["h"][c].tolist() == [h] * MEMBERS
            watch._arrays["h"][c] = h  # the original, as a version-2 streammon ran it
    assert json.loads(restored.dumps())["version"] == VERSION
    _same_report(original.report(), restored.report())
    drop = [y if y != "legit" or i % 2 else "fraud" for i, y in enumerate(truth[3000:])]  # legit's recall halves
    for m in (original, restored):
        m.update_many(truth[3000:], drop, t=times[3000:])
    assert any(a.kind == "degradation" for a in original.report().alerts)
    _same_report(original.report(), restored.report())


def test_truncated_tampered_and_foreign_files_give_clear_errors(tmp_path: Path) -> None:
    """A cut file, a changed count, a stale checksum, another format or version: StateError saying which."""
    monitor = _monitor()
    monitor.update_many(*_stream(1, 1000)[:2])
    path = tmp_path / "m.json"
    monitor.save(path)
    text = path.read_text()
    cases = {
        "truncated or not JSON": text[: len(text) // 2],
        "checksum does not match": text.replace('"ingested": 1000', '"ingested": 1001'),
        "format": json.dumps({"format": "something else"}),
        "version": text.replace(f'"version": {VERSION}', '"version": 99'),
    }
    for message, broken in cases.items():
        path.write_text(broken)
        with pytest.raises(StateError, match=message):
            Monitor.load(path)
    # a consistent-looking forgery (checksum recomputed) whose counts disagree with the ring
    document = json.loads(text)
    document["body"]["windows"][1]["state"]["counts"]["counts"][0] += 1
    document["sha256"] = _digest(document["body"])
    path.write_text(json.dumps(document))
    with pytest.raises(StateError, match="do not match"):
        Monitor.load(path)


def test_labels_that_cannot_be_saved_are_refused_when_given(tmp_path: Path) -> None:
    """A tuple label cannot be stored faithfully: update refuses it up front, so every monitor can be saved."""
    monitor = Monitor([Cumulative()])
    monitor.update("a", "a")
    with pytest.raises(TypeError, match="not a class label"):
        monitor.update(("a", 1), ("a", 1))
    monitor.save(tmp_path / "m.json")
    assert Monitor.load(tmp_path / "m.json").labels == ("a",)


def test_encode_label_refuses_what_it_cannot_store() -> None:
    """encode_label itself still refuses a type it cannot store (the last line of defence)."""
    with pytest.raises(TypeError, match="cannot be saved"):
        encode_label(("a", 1))


def test_a_process_killed_while_saving_leaves_the_previous_state_intact(tmp_path: Path) -> None:
    """SIGKILL a process in the middle of its saves, ten times: the file always loads, as a state a save completed."""
    path = tmp_path / "monitor.json"
    rng = np.random.default_rng(7)
    for attempt in range(10):
        saver = subprocess.Popen([sys.executable, str(ROOT / "tests" / "saver.py"), str(path)],
                                 stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert saver.stdout is not None
        completed = [int(saver.stdout.readline().split()[1])]  # at least one save has finished
        time.sleep(float(rng.uniform(0.0, 0.4)))
        os.kill(saver.pid, signal.SIGKILL)
        saver.wait(timeout=10)
        completed += [int(line.split()[1]) for line in saver.stdout.read().splitlines() if line.startswith("saved")]
        restored = Monitor.load(path)
        # the last acknowledged save, or the next one if it completed between its rename and its print
        assert restored.samples in (completed[-1], completed[-1] + 50_000), (attempt, restored.samples, completed)
        assert restored.report().totals.n == restored.samples


def test_checkpointer_saves_periodically_and_on_stop(tmp_path: Path) -> None:
    """A Checkpointer saves in the background every `every` seconds and a last time on stop."""
    monitor = Monitor([Sliding(100)])
    path = tmp_path / "m.json"
    checkpointer = Checkpointer(monitor, path, every=0.05).start()
    monitor.update_many(["a"] * 10, ["a"] * 10)
    time.sleep(0.3)
    monitor.update("b", "a")
    checkpointer.stop()
    assert checkpointer.saves >= 3 and checkpointer.last_error is None
    assert Monitor.load(path).samples == 11
    with pytest.raises(ValueError, match="every"):
        Checkpointer(monitor, path, every=0)
