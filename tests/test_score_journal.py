"""Scores in the durable journal (#28): a durable monitor's scored predictions and batches are journalled with
their scores, so a restart (replay from the journal, or from a checkpointed state file and the rows after it)
rebuilds exactly the score tallies of a monitor that never stopped; a version-2 journal is upgraded in place."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from streammon import Cumulative, Monitor, Sliding, Timed, state
from streammon.pending import sqlite as journal_module


def windows() -> list:
    return [Cumulative(), Sliding(25), Timed(50, buckets=5)]


def feed(m: Monitor, start: float) -> None:
    """Scored and unscored predictions, their labels, a scored batch and scored single samples."""
    rng = np.random.default_rng(int(start))
    keys = [f"k{start}-{i}" for i in range(20)]
    s = rng.random(20)
    m.predict_many(keys[:10], ["fraud" if x > 0.5 else "legit" for x in s[:10]], t=start, y_score=s[:10])
    for key, x in zip(keys[10:], s[10:], strict=True):
        m.predict(key, "fraud" if x > 0.5 else "legit", t=start + 1, y_score=float(x) if x > 0.3 else None)
    m.label_many(keys[::2], ["legit", "fraud"] * 5, t=start + 2)
    m.label(keys[1], "fraud", t=start + 3)
    m.update_many(["legit", "fraud", "legit"], ["legit", "fraud", "fraud"], t=start + 4, y_score=[0.2, 0.9, 0.6])
    m.update("fraud", "legit", t=start + 5, y_score=0.3)


def tallies(m: Monitor) -> list[np.ndarray]:
    out = []
    for w in m.report().windows.values():
        for tally in (w.score_tally, w.prediction_score_tally):
            assert tally is not None
            out += [tally.hist, tally.sums, tally.top]
    return out


def assert_same(a: Monitor, b: Monitor) -> None:
    for x, y in zip(tallies(a), tallies(b), strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def alike(a: object, b: object) -> bool:
    """Equal plain data, floats to 1e-12."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(alike(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(alike(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-12)  # type: ignore[arg-type]
    return a == b


def test_a_restart_replays_the_scores(tmp_path: Path) -> None:
    """A durable monitor reopened from its journal alone, or from a state file and the journal rows after it, has
    the tallies of an in-memory monitor fed the same calls."""
    path = tmp_path / "pending.sqlite"
    memory = Monitor(windows(), reference={"legit": 9, "fraud": 1})
    with Monitor(windows(), reference={"legit": 9, "fraud": 1}, pending=path) as durable:
        for target in (memory, durable):
            feed(target, 0.0)
        assert_same(memory, durable)
    with Monitor(windows(), reference={"legit": 9, "fraud": 1}, pending=path) as again:
        assert_same(memory, again)
        again.save(tmp_path / "state.json")
        for target in (memory, again):
            feed(target, 30.0)
    with Monitor.load(tmp_path / "state.json", pending=path) as restored:
        assert_same(memory, restored)
        saved, rebuilt = state.loads(memory.dumps()), state.loads(restored.dumps())
        # the rings and buckets too, not only the tallies (sums to rounding: the replay batches calls differently)
        assert alike(saved["scores"], rebuilt["scores"])
        assert alike(saved["prediction_scores"], rebuilt["prediction_scores"])


def test_a_refused_score_writes_nothing_to_the_journal(tmp_path: Path) -> None:
    """A score refused on a durable monitor leaves no journal row and the state byte-identical."""
    with Monitor(windows(), reference={"legit": 9, "fraud": 1}, pending=tmp_path / "p.sqlite") as m:
        feed(m, 0.0)
        before, rows = m.dumps(), m._journal.last_id  # type: ignore[union-attr]
        with pytest.raises(ValueError, match="probability"):
            m.update_many(["legit"], ["legit"], t=9.0, y_score=[1.5])
        with pytest.raises(ValueError, match="probability"):
            m.predict("z", "legit", t=9.0, y_score=-0.5)
        with pytest.raises(ValueError, match="one score"):
            m.predict_many(["z", "y"], ["legit", "legit"], t=9.0, y_score=[0.5])
        assert m.dumps() == before and m._journal.last_id == rows  # type: ignore[union-attr]


def test_a_version_2_journal_is_upgraded_and_takes_scores(tmp_path: Path) -> None:
    """A journal written before scores (version 2) opens, replays its rows, and records scored rows afterwards."""
    path = tmp_path / "pending.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value)")
        conn.execute("CREATE TABLE ops (id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, key NOT NULL, label NOT NULL, "
                     "t REAL NOT NULL, label_bool INTEGER NOT NULL DEFAULT 0)")
        conn.execute("CREATE TABLE samples (id INTEGER PRIMARY KEY, classes TEXT NOT NULL, y_true BLOB NOT NULL, "
                     "y_pred BLOB NOT NULL, t REAL, times BLOB, clocked INTEGER NOT NULL)")
        conn.execute("CREATE TABLE seen (batch TEXT PRIMARY KEY, id INTEGER NOT NULL, accepted INTEGER NOT NULL)")
        conn.executemany("INSERT INTO meta VALUES (?, ?)",
                         [("format", "streammon.pending"), ("version", 2), ("truncated_to", 0)])
        conn.executemany("INSERT INTO ops (id, kind, key, label, t) VALUES (?, ?, ?, ?, ?)",
                         [(1, 1, "a", "fraud", 1.0), (2, 2, "a", "legit", 2.0)])
    with Monitor([Cumulative()], reference={"legit": 9, "fraud": 1}, pending=path) as m:
        assert m.counts()["cumulative"].to_dict() == {"legit": {"fraud": 1}}
        m.update_many(["fraud"], ["fraud"], t=3.0, y_score=[0.7])
    with sqlite3.connect(path) as conn:
        assert dict(conn.execute("SELECT name, value FROM meta"))["version"] == journal_module.VERSION == 3
    with Monitor([Cumulative()], reference={"legit": 9, "fraud": 1}, pending=path) as again:
        w = again.report().windows["cumulative"]
        assert (w.n, w.n_scored) == (2, 1)


def test_the_server_takes_scores(tmp_path: Path) -> None:
    """``streammon serve`` takes ``y_score`` with samples and predictions: the report's windows count the scored
    samples, and a bad score is refused with 400 naming it, nothing counted."""
    from streammon.serve.config import parse
    from streammon.serve.run import Server
    from tests.serve_http import config_text, post, report

    text = config_text(tmp_path, max_body_bytes=100_000) + 'reference = { legit = 9, fraud = 1 }\n'
    server = Server(parse(text))
    try:
        assert post(server.port, "m", "samples", {"y_true": ["legit", "fraud"], "y_pred": ["legit", "legit"],
                                                  "y_score": [0.1, 0.4]}) == (200, {"accepted": 2})
        assert post(server.port, "m", "predictions", {"keys": ["a", "b"], "y_pred": ["fraud", "legit"],
                                                      "y_score": [0.9, 0.2]}) == (200, {"accepted": 2})
        assert post(server.port, "m", "labels", {"keys": ["a"], "y_true": ["fraud"]}) == (200, {"accepted": 1})
        before = report(server.port)
        status, answer = post(server.port, "m", "samples", {"y_true": ["legit"], "y_pred": ["legit"],
                                                            "y_score": [1.5]})
        assert status == 400 and "y_score[0] is 1.5" in answer["error"]
        status, answer = post(server.port, "m", "samples", {"y_true": ["legit"], "y_pred": ["legit"],
                                                            "y_score": [0.5, 0.5]})
        assert status == 400 and "one score" in answer["error"]
        after = report(server.port)
        assert after["windows"]["cumulative"]["n_scored"] == 3 == before["windows"]["cumulative"]["n_scored"]
    finally:
        server.stop(grace=2.0)
