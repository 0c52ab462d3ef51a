"""The journal and the state file as one durable system: one writer per journal, ordered saves, and every
interleaving of save, truncate, append and restart that docs/explanation/durability.md names recovers every
acknowledged call exactly once."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import streammon.state
from streammon import Checkpointer, Cumulative, Monitor, Sliding
from streammon.pending import sqlite as journal_module
from streammon.pending.sqlite import Journal, JournalBusy
from tests.threads import run_switching

ROOT = Path(__file__).resolve().parent.parent
WINDOWS = (Cumulative, lambda: Sliding(7))

Call = tuple[str, list[Any], list[Any], float]


def new_monitor(db: Path | None) -> Monitor:
    return Monitor([w() for w in WINDOWS], max_pending=50, label_ttl=40.0, pending=db)


def make_calls(seed: int, n: int, t0: float = 0.0) -> list[Call]:
    """Predictions and labels of keys 0..29 (labels often before or without their prediction: orphans too)."""
    rng = np.random.default_rng(seed)
    out: list[Call] = []
    for i in range(n):
        method = ("predict_many", "label_many")[int(rng.integers(2))]
        size = int(rng.integers(1, 5))
        keys = [f"k{k}" if k % 3 else int(k) for k in rng.integers(0, 30, size).tolist()]
        labels = rng.choice(["a", "b", "c"], size).tolist()
        out.append((method, keys, labels, t0 + i * 0.5))
    return out


def apply(monitor: Monitor, calls: list[Call]) -> None:
    for method, keys, labels, t in calls:
        getattr(monitor, method)(keys, labels, t=t)


def fingerprint(monitor: Monitor) -> tuple[Any, ...]:
    """Every window's counts, the label statistics, and what the pending store does with further labels."""
    report = monitor.report()
    counts = {name: c.to_dict() for name, c in monitor.counts().items()}
    stats = {name: (w.label_stats.predictions, w.label_stats.labelled, w.label_stats.pending,
                    w.label_stats.orphans, w.label_stats.duplicates) if w.label_stats else None
             for name, w in report.windows.items()}
    return counts, stats, report.samples


def recount(calls: list[Call], probe: list[Call]) -> tuple[Any, ...]:
    """The fingerprint of an in-memory monitor fed ``calls``, then the ``probe`` labels (an independent run)."""
    reference = new_monitor(None)
    apply(reference, calls)
    apply(reference, probe)
    return fingerprint(reference)


def recovered(db: Path, state: Path, probe: list[Call]) -> tuple[Any, ...]:
    """Restart from what is on disk (the one recovery path), feed the probe, fingerprint, close."""
    with Monitor.load(state, pending=db) if state.exists() else new_monitor(db) as monitor:
        apply(monitor, probe)
        return fingerprint(monitor)


def crash_copy(db: Path, state: Path, into: Path) -> tuple[Path, Path]:
    """The files as a ``kill -9`` now would leave them (committed journal pages, the WAL, the state file)."""
    into.mkdir()
    for part in ("", "-wal"):
        if Path(f"{db}{part}").exists():
            shutil.copyfile(f"{db}{part}", into / f"{db.name}{part}")
    if state.exists():
        shutil.copyfile(state, into / state.name)
    return into / db.name, into / state.name


def probe_labels() -> list[Call]:
    keys: list[Any] = [f"k{k}" if k % 3 else k for k in range(30)]
    return [("label_many", keys, ["a", "b", "c"] * 10, 10_000.0)]


# -- one writer ------------------------------------------------------------------------------------------------


def test_a_second_opener_in_the_same_process_is_refused_until_the_first_closes(tmp_path: Path) -> None:
    """Monitor(pending=p) and Monitor.load(..., pending=p) on an open journal raise JournalBusy naming the path and
    `streammon serve`; after close() the journal opens, with the first monitor's rows."""
    db, state = tmp_path / "pending.sqlite", tmp_path / "state.json"
    first = new_monitor(db)
    first.predict_many(["x", "y"], ["a", "b"], t=1.0)
    first.save(state)
    first.predict("z", "a", t=2.0)
    for attempt in (lambda: new_monitor(db), lambda: Monitor.load(state, pending=db)):
        with pytest.raises(JournalBusy, match=r"pending.sqlite is open in another monitor.*streammon serve"):
            attempt()
    first.predict("w", "c", t=3.0)  # the refused openers changed nothing for the owner
    first.close()
    with pytest.raises(ValueError, match="is closed"):
        first.predict_many(["v"], ["a"], t=4.0)
    with Monitor.load(state, pending=db) as again:
        assert again.report().windows["cumulative"].label_stats.predictions == 4


def test_a_second_process_is_refused_and_the_lock_dies_with_the_first(tmp_path: Path) -> None:
    """A child process holds the journal; the parent's open is refused at once; after SIGKILL of the child the parent
    opens it and finds every prediction the child acknowledged."""
    db = tmp_path / "pending.sqlite"
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom streammon import Monitor, Cumulative\n"
         f"m = Monitor([Cumulative()], pending={str(db)!r})\n"
         "m.predict_many(['a', 'b', 'c'], ['x', 'y', 'x'], t=1.0)\nprint('ready', flush=True)\nsys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        with pytest.raises(JournalBusy, match="open in another monitor"):
            Journal(db)
        with pytest.raises(JournalBusy):
            Monitor([Cumulative()], pending=db)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    with Monitor([Cumulative()], pending=db) as m:
        assert m.report().windows["cumulative"].label_stats.predictions == 3


# -- what a journal holds ----------------------------------------------------------------------------------------


def test_bool_classes_come_back_as_bools_from_the_journal_alone(tmp_path: Path) -> None:
    """True/False labels recovered from the journal (no state file) are bools again: the same classes, no new
    class 1/0 beside them."""
    db = tmp_path / "pending.sqlite"
    with Monitor([Cumulative()], pending=db) as m:
        m.predict_many(["a", "b", 3], [True, False, True], t=1.0)
        m.label("a", True, t=2.0)
        m.label_many(["b", 3], [True, False], t=3.0)
        before = m.counts()["cumulative"].to_dict()
    with Monitor([Cumulative()], pending=db) as again:
        assert again.labels == (True, False)
        assert all(type(label) is bool for label in again.labels)
        assert again.counts()["cumulative"].to_dict() == before


@pytest.mark.parametrize("schema", [
    ["CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)"],
    ["CREATE TABLE meta (name TEXT PRIMARY KEY, value)", "CREATE TABLE ops (id INTEGER PRIMARY KEY)",
     "CREATE TABLE extra (x)"],
])
def test_a_database_that_is_not_a_journal_is_refused_and_left_as_it_was(tmp_path: Path, schema: list[str]) -> None:
    """A pending= path pointing at another SQLite database is refused naming its tables; no table is added."""
    db = tmp_path / "app.sqlite"
    with sqlite3.connect(db) as conn:
        for statement in schema:
            conn.execute(statement)
    with pytest.raises(ValueError, match=r"is not a streammon pending store.*tables"):
        Monitor([Cumulative()], pending=db)
    with sqlite3.connect(db) as conn:
        tables = sorted(name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    assert tables == sorted(statement.split()[2] for statement in schema)
    Journal(tmp_path / "fresh.sqlite").close()  # the refusal released its lock: nothing stays held


def make_journal(path: Path, columns: str, version: int = 1) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value)")
        conn.execute(f"CREATE TABLE ops ({columns})")
        conn.executemany("INSERT INTO meta VALUES (?, ?)",
                         [("format", "streammon.pending"), ("version", version), ("truncated_to", 0)])


@pytest.mark.parametrize("columns", [
    "id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, key NOT NULL, lbl NOT NULL, t REAL NOT NULL",
    "id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, key NOT NULL, label NOT NULL, t REAL NOT NULL, more",
    "id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, key NOT NULL, label NOT NULL",
])
def test_a_journal_with_renamed_or_extra_columns_gets_a_clear_error(tmp_path: Path, columns: str) -> None:
    """A journal whose ops table has other columns is refused with ValueError naming both column lists (not a raw
    sqlite3.OperationalError on the first append)."""
    db = tmp_path / "pending.sqlite"
    make_journal(db, columns)
    with pytest.raises(ValueError, match=r"its ops table has the columns .* expected \['id', 'kind'"):
        Journal(db)


def test_a_version_1_journal_is_upgraded_in_place_and_replays(tmp_path: Path) -> None:
    """A journal written by the previous version (no label_bool column) opens, replays its rows and takes new
    ones."""
    db = tmp_path / "pending.sqlite"
    make_journal(db, "id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, key NOT NULL, label NOT NULL, t REAL NOT NULL")
    with sqlite3.connect(db) as conn:
        conn.executemany("INSERT INTO ops VALUES (?, ?, ?, ?, ?)",
                         [(1, 1, "a", "x", 1.0), (2, 1, 7, "y", 1.0), (3, 2, "a", "y", 2.0)])
    with Monitor([Cumulative()], pending=db) as m:
        assert m.counts()["cumulative"].to_dict() == {"y": {"x": 1}}
        m.label(7, "y", t=3.0)
    with Monitor([Cumulative()], pending=db) as again:
        assert again.counts()["cumulative"].to_dict() == {"y": {"x": 1, "y": 1}}
    with sqlite3.connect(db) as conn:
        assert dict(conn.execute("SELECT name, value FROM meta"))["version"] == journal_module.VERSION


def test_a_failed_append_changes_nothing_and_the_next_one_works(tmp_path: Path) -> None:
    """An append the database refuses (an int key beyond SQLite's int64, slipped past the checks) is rolled back:
    the journal's ids stay dense and the next call is recorded and recovered."""
    j = Journal(tmp_path / "pending.sqlite")
    j.append(journal_module.PREDICT, ["a"], ["x"], [1.0])
    with pytest.raises(OverflowError):
        j.append(journal_module.PREDICT, ["b", 2**70], ["x", "y"], [2.0, 2.0])
    assert j.append(journal_module.LABEL, ["a"], ["y"], [3.0]) == 2
    assert [(kind, keys) for kind, keys, _, _, _ in j.replay(0)] == [(1, ["a"]), (2, ["a"])]
    j.close()


# -- saves, checkpoints and appends from several threads ----------------------------------------------------------


def test_a_checkpointer_saving_while_threads_predict_and_label_loses_nothing(tmp_path: Path) -> None:
    """4 threads predicting and labelling with a durable journal under forced thread switches while a
    Checkpointer saves every millisecond (the production path): no save and no call fails, and a restart from the
    files (no final save) recounts to every acknowledged call exactly once."""
    db, state = tmp_path / "pending.sqlite", tmp_path / "state.json"
    monitor = Monitor([Cumulative()], pending=db, max_pending=10_000)
    errors: list[BaseException] = []

    def writer(thread: int) -> None:
        try:
            for i in range(300):
                keys = [f"t{thread}-{i}-{j}" for j in range(3)]
                monitor.predict_many(keys, ["a", "b", "a"])
                monitor.label(keys[0], "a")
                monitor.label_many(keys[1:], ["b", "b"])
        except BaseException as exc:  # pragma: no cover - the failure this test is about
            errors.append(exc)

    checkpointer = Checkpointer(monitor, state, every=0.001).start()
    run_switching(writer, [(n,) for n in range(4)])
    checkpointer._stop.set()
    checkpointer._thread.join()
    assert not errors, errors
    assert checkpointer.last_error is None and checkpointer.saves > 0
    crashed_db, crashed_state = crash_copy(db, state, tmp_path / "crash")
    monitor.close()
    with Monitor.load(crashed_state, pending=crashed_db) as again:
        stats = again.report().windows["cumulative"].label_stats
        assert (stats.predictions, stats.labelled, stats.orphans, stats.duplicates) == (3600, 3600, 0, 0)
        assert again.counts()["cumulative"].to_dict() == {"a": {"a": 1200}, "b": {"a": 1200, "b": 1200}}


POINTS = ("snapshot", "written", "chunk", "truncated")


class Pauser:
    """Pauses one thread's save at a named point until released."""

    def __init__(self, point: str) -> None:
        self.point, self.reached, self.go = point, threading.Event(), threading.Event()

    def at(self, point: str) -> None:
        if point == self.point and threading.current_thread().name == "save-under-test":
            self.reached.set()
            assert self.go.wait(20)


@pytest.fixture
def paused(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Pauser]]:
    """Instrument Monitor.save's steps (snapshot → file written → each truncation chunk → done) with a Pauser."""
    pausers: list[Pauser] = []

    def make(point: str) -> Pauser:
        pauser = Pauser(point)
        pausers.append(pauser)
        dumps, write, chunk, truncate = (Monitor._dumps, streammon.state.write_atomically, Journal._truncate_chunk,
                                         Journal.truncate)

        def paused_dumps(self: Monitor) -> tuple[str, int]:
            out = dumps(self)
            pauser.at("snapshot")
            return out

        def paused_write(path: Any, text: str) -> None:
            write(path, text)
            pauser.at("written")

        def paused_chunk(self: Journal, upto: int) -> bool:
            more = chunk(self, upto)
            if more:
                pauser.at("chunk")
            return more

        def paused_truncate(self: Journal, upto: int) -> None:
            truncate(self, upto)
            pauser.at("truncated")

        monkeypatch.setattr(Monitor, "_dumps", paused_dumps)
        monkeypatch.setattr(Journal, "truncate", paused_truncate)
        monkeypatch.setattr(streammon.state, "write_atomically", paused_write)
        monkeypatch.setattr(Journal, "_truncate_chunk", paused_chunk)
        monkeypatch.setattr(journal_module, "TRUNCATE_CHUNK", 3)
        return pauser

    yield make
    for pauser in pausers:
        pauser.go.set()


def save_in_thread(monitor: Monitor, state: Path, name: str) -> threading.Thread:
    thread = threading.Thread(target=monitor.save, args=(state,), name=name)
    thread.start()
    return thread


@pytest.mark.parametrize("point", [*POINTS, "done"])
@pytest.mark.parametrize("seed", [1, 2])
def test_a_kill_at_any_step_of_a_save_with_appends_in_between_recovers_each_call_once(
        tmp_path: Path, paused: Callable[[str], Pauser], point: str, seed: int) -> None:
    """A save paused at each step (after the snapshot, after its file landed, between truncation chunks, after the
    truncation), an earlier save behind it, calls acknowledged while it waits; the files as a kill -9 at that moment
    leaves them recover to exactly the acknowledged calls (an in-memory recount, probed with further labels), and so
    do the files after the save finishes."""
    db, state = tmp_path / "pending.sqlite", tmp_path / "state.json"
    calls = make_calls(seed, 60)
    monitor = new_monitor(db)
    apply(monitor, calls[:20])
    monitor.save(state)  # an earlier checkpoint: the journal is truncated once already
    apply(monitor, calls[20:40])
    pauser = paused(point if point != "done" else "none")
    saving = save_in_thread(monitor, state, "save-under-test")
    if point != "done":
        assert pauser.reached.wait(20), f"the save never reached {point}"
    else:
        saving.join()
    apply(monitor, calls[40:50])  # acknowledged while the save waits: after its mark
    crashed = crash_copy(db, state, tmp_path / "crash")
    pauser.go.set()
    saving.join()
    apply(monitor, calls[50:])
    monitor.close()
    probe = probe_labels()
    assert recovered(*crashed, probe) == recount(calls[:50], probe)
    assert recovered(db, state, probe) == recount(calls, probe)


@pytest.mark.parametrize("point", POINTS)
def test_overlapping_saves_are_ordered(tmp_path: Path, paused: Callable[[str], Pauser], point: str) -> None:
    """A second save started while the first waits at any step snapshots only after the first finished: the file
    that lands last has the highest mark, so the journal is never truncated past the state file (the refusal 'load
    the newer state file' cannot happen), and a kill between them recovers each call once."""
    db, state = tmp_path / "pending.sqlite", tmp_path / "state.json"
    calls = make_calls(5, 40)
    monitor = new_monitor(db)
    apply(monitor, calls[:20])
    pauser = paused(point)
    first = save_in_thread(monitor, state, "save-under-test")
    assert pauser.reached.wait(20)
    apply(monitor, calls[20:30])
    second = save_in_thread(monitor, tmp_path / "other.json", "second-save")
    second.join(0.3)
    assert second.is_alive(), "the second save did not wait for the first"
    crashed = crash_copy(db, state, tmp_path / "crash")
    pauser.go.set()
    first.join()
    second.join()
    apply(monitor, calls[30:])
    marks = [streammon.state.read(p)["pending"]["mark"] for p in (state, tmp_path / "other.json")]
    assert marks[0] < marks[1] == monitor._journal.truncated_to
    monitor.close()
    probe = probe_labels()
    assert recovered(*crashed, probe) == recount(calls[:30], probe)
    assert recovered(db, tmp_path / "other.json", probe) == recount(calls, probe)
    with pytest.raises(streammon.state.StateError, match="load the newer state file"):
        Monitor.load(state, pending=db)


# -- labelled samples and batch ids ------------------------------------------------------------------------------


@pytest.mark.parametrize("calls", [
    [("update_many", ([True, False, True], [True, True, False]), {"t": [1.0, 2.0, 2.0]}),
     ("update_many", ([False, False], [True, False]), {"t": 3.0}), ("update", (True, False), {"t": 4.0})],
    [("update_many", ([1.0, 2.0], [2.0, 2.0]), {}), ("update", (2.0, 1.0), {}),
     ("update_many", (np.array([3, 1]), np.array([1, 1])), {"t": 5000.0})],
    [("update_many", (np.array(["a", "b"]), np.array(["b", "b"])), {}), ("update", ("a", "a"), {}),
     ("update", ("b", "a"), {"t": 5000.0})],
])
def test_update_many_and_update_are_journalled_and_replayed_exactly(tmp_path: Path, calls: list[Any]) -> None:
    """With a journal, update_many batches (per-sample times, one time, the clock) and single updates survive a
    restart without a state file: every window equals an in-memory monitor fed the same calls, classes keep their
    types (bools, floats, ints, strs), and a save then truncates the sample rows like the others."""
    db, state = tmp_path / "pending.sqlite", tmp_path / "state.json"

    def build(pending: Path | None) -> Monitor:
        clock = iter(np.arange(1000.0, 2000.0, 0.5).tolist())
        return Monitor([Cumulative(), Sliding(5), streammon.Timed(60, buckets=6)], pending=pending,
                       clock=lambda: next(clock))

    m, reference = build(db), build(None)
    for method, args, kwargs in calls:
        getattr(m, method)(*args, **kwargs)
        getattr(reference, method)(*args, **kwargs)
    expected = {name: c.to_dict() for name, c in reference.counts().items()}
    assert {name: c.to_dict() for name, c in m.counts().items()} == expected
    m.close()
    with build(db) as again:
        assert again.labels == reference.labels
        assert [type(x) for x in again.labels] == [type(x) for x in reference.labels]
        assert {name: c.to_dict() for name, c in again.counts().items()} == expected
        again.save(state)
        assert again._journal is not None and again._journal.truncated_to == again._journal.last_id
        again.update_many(reference.labels[:1], reference.labels[:1], t=9000.0)
    with Monitor.load(state, pending=db) as loaded:
        assert loaded.samples == reference.samples + 1


def test_a_batch_id_counts_a_retried_batch_once_across_restarts(tmp_path: Path) -> None:
    """update_many / predict_many / label_many with the same batch_id count once, also after a restart from the
    journal and after a save truncated the batch's rows; accepted() reports the first batch's size."""
    db, state = tmp_path / "pending.sqlite", tmp_path / "state.json"
    with new_monitor(db) as m:
        for _ in range(2):
            m.update_many(["a", "b"], ["a", "a"], t=1.0, batch_id="s-1")
            m.predict_many(["k1", "k2", "k3"], ["a", "b", "a"], t=2.0, batch_id="p-1")
        assert m.accepted("s-1") == 2 and m.accepted("p-1") == 3 and m.accepted("nope") is None
        m.save(state)
    with Monitor.load(state, pending=db) as m:
        m.update_many(["a", "b"], ["a", "a"], t=3.0, batch_id="s-1")
        for _ in range(2):
            m.label_many(["k1", "k2"], ["a", "a"], t=4.0, batch_id="l-1")
        stats = m.report().windows["cumulative"].label_stats
        assert m.samples == 4
        assert (stats.predictions, stats.labelled, stats.duplicates) == (3, 2, 0)
    with Monitor.load(state, pending=db) as m:  # the label batch replayed from the journal, its id remembered
        m.label_many(["k1", "k2"], ["a", "a"], t=5.0, batch_id="l-1")
        assert m.report().windows["cumulative"].label_stats.labelled == 2


@pytest.mark.parametrize("bad", ["", "x" * 201, "é", "a\nb", 7, b"x"])
def test_a_bad_batch_id_is_refused_before_anything_changes(tmp_path: Path, bad: Any) -> None:
    """batch_id must be a short printable ASCII str, and needs a journal; a bad one changes nothing."""
    with new_monitor(tmp_path / "pending.sqlite") as m:
        with pytest.raises(ValueError, match="batch_id"):
            m.update_many(["a"], ["a"], t=1.0, batch_id=bad)
        assert m.samples == 0
    with pytest.raises(ValueError, match="needs a durable journal"):
        new_monitor(None).predict_many(["k"], ["a"], batch_id="b-1")


def test_killed_between_acknowledged_sample_batches_recovers_each_once(tmp_path: Path) -> None:
    """A real process feeding update_many batches with batch ids is SIGKILLed after a random acknowledged batch;
    the restart recounts exactly the acknowledged batches (or one more, in flight), and resending the unsure one with
    its id never counts it twice."""
    db = tmp_path / "pending.sqlite"
    script = (
        "import sys\nimport numpy as np\nfrom streammon import Monitor, Cumulative\n"
        f"m = Monitor([Cumulative()], pending={str(db)!r})\n"
        "for i in range(10_000):\n"
        "    rng = np.random.default_rng(i)\n"
        "    m.update_many(rng.choice(['a', 'b'], 50), rng.choice(['a', 'b'], 50), t=float(i), batch_id=f'b{i}')\n"
        "    print(i, flush=True)\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert child.stdout is not None
    target = int(np.random.default_rng(3).integers(20, 200))
    acked = -1
    while acked < target:
        acked = int(child.stdout.readline())
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    acked = max([acked, *(int(line) for line in child.stdout.read().split())])
    child.stdout.close()

    def expected(batches: int) -> dict[Any, Any]:
        ref = Monitor([Cumulative()])
        for i in range(batches):
            rng = np.random.default_rng(i)
            ref.update_many(rng.choice(["a", "b"], 50), rng.choice(["a", "b"], 50), t=float(i))
        return ref.counts()["cumulative"].to_dict()

    with Monitor([Cumulative()], pending=db) as m:
        got = m.counts()["cumulative"].to_dict()
        assert got in (expected(acked + 1), expected(acked + 2))
        for i in range(acked + 1, acked + 3):  # the client resends what it is unsure of
            rng = np.random.default_rng(i)
            m.update_many(rng.choice(["a", "b"], 50), rng.choice(["a", "b"], 50), t=float(i), batch_id=f"b{i}")
        assert m.counts()["cumulative"].to_dict() == expected(acked + 3)
