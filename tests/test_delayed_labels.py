"""Predictions now, labels later: joined counts, coverage and latency equal an independent recount
(tests/label_oracle.py)."""

from __future__ import annotations

import math
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streammon import Cumulative, Monitor, Sliding, Timed
from tests.label_oracle import Oracle
from tests.strategies import label_events
from tests.threads import run_switching


def joined(report: Any) -> Counter[tuple[Any, Any]]:
    out: Counter[tuple[Any, Any]] = Counter()
    for true, row in report.totals.to_dict().items():
        for pred, n in row.items():
            out[(true, pred)] += n
    return +out


def check_against(m: Monitor, oracle: Oracle, now: float | None, sliding: int) -> None:
    oracle.read(now)
    report = m.report()
    assert joined(report) == +oracle.pairs
    stats = report.label_stats
    status = oracle.status_counts()
    if stats is None:
        assert not oracle.records and not oracle.orphans and not oracle.duplicates
        return
    assert (stats.predictions, stats.labelled, stats.pending, stats.expired, stats.evicted) == (
        len(oracle.records), status["labelled"], status["pending"], status["expired"], status["evicted"])
    assert (stats.orphans, stats.duplicates, stats.repeated, stats.joined) == (
        oracle.orphans, oracle.duplicates, oracle.repeated, len(oracle.latencies))
    if oracle.records:
        assert stats.coverage == status["labelled"] / len(oracle.records)
    window = report.windows[f"sliding_{sliding}"]
    assert +Counter(dict(window.prediction_counts)) == oracle.predicted(sliding)
    last = oracle.status_counts(sliding)
    assert (window.label_stats.labelled, window.label_stats.pending) == (last["labelled"], last["pending"])
    assert window.label_stats.expired + window.label_stats.evicted == last["expired"] + last["evicted"]
    for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        if not oracle.latencies:
            assert math.isnan(stats.latency[name])
            continue
        exact = sorted(oracle.latencies)[math.ceil(q * len(oracle.latencies)) - 1]
        # the reported value is the upper edge of the bucket holding the exact quantile: 6 buckets per doubling
        assert exact < stats.latency[name] or exact == stats.latency[name] == 2.0**-10 * 0
        assert stats.latency[name] <= max(exact, 2.0**-10) * 2 ** (1 / 6) * (1 + 1e-12)


def run(events: list[Any], m: Monitor, oracle: Oracle, state: Path | None = None) -> tuple[Monitor, float | None]:
    t, last_label = 0.0, None
    for kind, keys, labels, gap in events:
        t += gap
        if kind == "reload":
            if state is None:
                m = Monitor.loads(m.dumps())
            else:
                m.save(state)
                m.close()  # one journal, one writer: the restarted monitor opens it after this one let go
                m = Monitor.load(state, pending=m._journal.path if m._journal else None)
        else:
            if kind in ("predict", "label"):
                getattr(m, kind)(keys[0], labels[0], t=t)
            else:
                getattr(m, kind)(keys, labels, t=t)
            step = oracle.predict if kind.startswith("predict") else oracle.label
            for key, label in zip(keys, labels, strict=True):
                step(key, label, t)
            if keys and kind.startswith("label"):
                last_label = t
    return m, last_label


@settings(max_examples=150, deadline=None)
@given(events=label_events(), max_pending=st.integers(1, 6), ttl=st.sampled_from([2.0, 5.0, math.inf]))
def test_joined_counts_equal_a_recount_for_random_interleavings(events: list[Any], max_pending: int,
                                                                   ttl: float) -> None:
    """Random predict/label interleavings (repeats, duplicates, orphans, evictions, expiries, save/load): every
    count equals the oracle's recount."""
    m = Monitor([Cumulative(), Sliding(3)], max_pending=max_pending, label_ttl=ttl)
    oracle = Oracle(max_pending, ttl)
    m, now = run(events, m, oracle)
    check_against(m, oracle, now, 3)


@settings(max_examples=40, deadline=None)
@given(events=label_events(max_events=30), max_pending=st.integers(1, 6))
def test_a_durable_store_reopened_gives_the_same_counts(tmp_path_factory: Any, events: list[Any],
                                                        max_pending: int) -> None:
    """With an SQLite store, saves and reloads mid-stream, then a fresh open of the last state and the journal:
    counts equal the recount (no double counting between the state file and the store)."""
    root = tmp_path_factory.mktemp("durable")
    db, state = root / "pending.sqlite", root / "state.json"
    m = Monitor([Cumulative(), Sliding(3)], max_pending=max_pending, label_ttl=5.0, pending=db)
    oracle = Oracle(max_pending, 5.0)
    m, now = run(events, m, oracle, state)
    m.close()
    again = Monitor.load(state, pending=db) if state.exists() else Monitor(
        [Cumulative(), Sliding(3)], max_pending=max_pending, label_ttl=5.0, pending=db)
    check_against(again, oracle, now, 3)


def test_the_edges_are_counted_not_raised() -> None:
    """Orphan, duplicate, repeated, expired and evicted cases each land in their own counter and never raise."""
    m = Monitor([Cumulative()], max_pending=3, label_ttl=10.0)
    m.predict_many([1, "1", 2], ["a", "b", "a"], t=0.0)   # 1 and "1" are two keys
    m.predict(1, "b", t=1.0)                             # repeated: the first prediction stands
    m.label_many([1, 1, "zzz"], ["a", "a", "b"], t=2.0)  # joined, duplicate, orphan
    m.predict_many([7, 8], ["a", "a"], t=3.0)            # 7 evicts 1 (joined), 8 evicts "1" (pending)
    m.label("1", "b", t=4.0)                             # evicted: an orphan
    m.label(2, "a", t=20.0)                              # 20 > 0 + 10: expired, an orphan
    s = m.report().label_stats
    assert (s.predictions, s.labelled, s.repeated, s.duplicates, s.orphans, s.evicted, s.expired, s.pending) == (
        5, 1, 1, 1, 3, 1, 3, 0)
    assert dict(s.never_labelled) == {"a": 3, "b": 1}
    assert m.report().totals.to_dict() == {"a": {"a": 1}}


@pytest.mark.parametrize("bad", [
    lambda m: m.label_many(["k1", "k2"], ["a", 0.5]),
    lambda m: m.label_many(["k1", 2.5], ["a", "a"]),
    lambda m: m.predict_many(["k9", ("tuple",)], ["a", "a"]),
    lambda m: m.predict_many(["k9"], ["a", "b"]),
    lambda m: m.label("k1", "a", t=-5.0),
    lambda m: m.predict("k9", None),
])
def test_a_rejected_call_changes_nothing_store_included(tmp_path: Path, bad: Any) -> None:
    """A bad key, label, length or time raises ValueError/TypeError and leaves the counts, the pending store and
    the journal as they were."""
    m = Monitor([Cumulative(), Sliding(5)], pending=tmp_path / "p.sqlite")
    m.predict_many(["k1", "k2"], ["a", "b"], t=1.0)
    m.label("k2", "b", t=2.0)
    before, rows = m.dumps(), m._journal.last_id
    with pytest.raises((ValueError, TypeError)):
        bad(m)
    assert m.dumps() == before
    assert m._journal.last_id == rows
    m.label("k1", "a", t=3.0)
    assert m.report().label_stats.labelled == 2


def test_timed_windows_count_predictions_by_prediction_time() -> None:
    """A timed window's predictions are those made in its span; a label moves its prediction where it was made."""
    m = Monitor([Timed(10, buckets=10)], label_ttl=1000.0)
    m.predict_many(["old1", "old2"], ["a", "b"], t=0.0)
    m.predict_many(["new"], ["a"], t=15.0)
    m.label_many(["old1", "new"], ["a", "b"], t=16.0)
    w = m.report().windows["timed_10s"]
    assert dict(w.prediction_counts) == {"a": 1, "b": 0}
    assert (w.label_stats.predictions, w.label_stats.labelled, w.label_stats.joined) == (1, 1, 2)


def test_threads_predicting_labelling_and_reporting_lose_nothing() -> None:
    """Four threads predict and label disjoint keys while another reports: the final counts equal the recount."""
    m = Monitor([Cumulative(), Sliding(100)], max_pending=10**6, label_ttl=math.inf)
    rng = np.random.default_rng(1)
    preds = rng.choice(["a", "b"], 4 * 3000)
    truth = rng.choice(["a", "b"], 4 * 3000)
    stop = threading.Event()

    def worker(w: int) -> None:
        keys = list(range(w * 3000, (w + 1) * 3000))
        for i in range(0, 3000, 100):
            m.predict_many(keys[i:i + 100], preds[keys[i]:keys[i] + 100])
            for k in keys[i:i + 50]:
                m.predict(f"s{k}", preds[k])
                m.label(f"s{k}", truth[k])
            m.label_many(keys[i:i + 100], truth[keys[i]:keys[i] + 100])

    def reader() -> None:
        while not stop.is_set():
            m.report()

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
    watcher = threading.Thread(target=reader)
    watcher.start()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    stop.set()
    watcher.join()
    s = m.report().label_stats
    expected = Counter(zip(truth.tolist(), preds.tolist(), strict=True))
    expected += Counter((truth[k], preds[k]) for w in range(4) for i in range(0, 3000, 100)
                        for k in range(w * 3000 + i, w * 3000 + i + 50))
    assert joined(m.report()) == expected
    assert (s.predictions, s.labelled, s.pending, s.orphans) == (12000 + 6000, 18000, 0, 0)


@pytest.mark.parametrize(("path", "value"), [
    (("side", "capacity"), 2**40),
    (("records", "next_seq"), -1),
    (("records", "head"), 10**6),
    (("label_ttl"), "soon"),
    (("records", "records"), [[0, 1.5, 0, 0.0, False]]),
    (("records", "records"), [[0, "k", 99, 0.0, False]]),
])
def test_a_hostile_pending_section_fails_with_state_error(path: Any, value: Any) -> None:
    """A tampered pending section (sizes, ranges, key and class types) is refused with StateError before
    anything is built."""
    import json

    from streammon import StateError
    from streammon.state import dumps, loads

    m = Monitor([Cumulative()])
    m.predict_many(["k1", "k2"], ["a", "b"], t=0.0)
    body = loads(m.dumps())
    target = body["pending"]
    keys = path if isinstance(path, tuple) else (path,)
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = value
    with pytest.raises(StateError):
        Monitor.loads(dumps(json.loads(json.dumps(body))))


def test_lock_free_predict_under_forced_thread_switches_loses_nothing() -> None:
    """Four threads predict (the lock-free queue) and label their own keys with a switch every µs: counts recount."""

    for _ in range(3):
        monitor = Monitor([Cumulative()], classes=["a", "b"], warmup=10**9, clock=lambda: 1000.0)

        def work(i: int, monitor: Monitor = monitor) -> None:
            for j in range(2000):
                key = f"{i}-{j}"
                monitor.predict(key, "a" if j % 3 else "b")
                if j % 2:
                    monitor.label(key, "a")

        run_switching(work, [(i,) for i in range(4)])
        report = monitor.report()
        stats = report.label_stats
        assert stats is not None
        assert (stats.predictions, stats.labelled, stats.orphans, stats.pending) == (8000, 4000, 0, 4000)
        # labelled keys are the odd j, predicted "a" unless j % 3 == 0
        odd = [j for j in range(2000) if j % 2]
        expected = {"a": {"a": 4 * sum(1 for j in odd if j % 3), "b": 4 * sum(1 for j in odd if not j % 3)}}
        assert report.windows["cumulative"].confusion.to_dict() == expected


def test_a_report_never_shows_a_prediction_older_than_label_ttl_as_pending() -> None:
    """label_ttl = 10: a prediction at 0 is expired by a later prediction at 20 (one time line), so a report shows
    it expired, not pending, and its label then is an orphan even if stamped 5; the same holds for predict_many
    batches spanning more than the ttl, and for a read with nothing new."""
    for batched in (False, True):
        m = Monitor([Cumulative()], label_ttl=10.0)
        if batched:
            m.predict_many(["a", "b"], ["x", "y"], t=[0.0, 20.0])
        else:
            m.predict("a", "x", t=0.0)
            m.predict("b", "y", t=20.0)
        stats = m.report().windows["cumulative"].label_stats
        assert (stats.pending, stats.expired) == (1, 1)
        m.label("a", "x", t=5.0)
        m.label("b", "y", t=21.0)
        stats = m.report().windows["cumulative"].label_stats
        assert (stats.labelled, stats.orphans, stats.pending) == (1, 1, 0)
