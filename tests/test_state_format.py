"""State format 4: count matrices as their non-zero cells, older files read, every size save writes load reads."""

from __future__ import annotations

import copy
import importlib.metadata
import json
import math
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings

from streammon import Cumulative, Monitor, Sliding, Timed
from streammon import state as state_file
from streammon.counting.sparse import dense, sparse
from streammon.state import FORMAT, VERSION, StateError, _digest
from streammon.state_schema import memory
from tests.state_fixture import as_version_3, fixture_monitor
from tests.strategies import mostly_zero_matrices

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _document(body: Any, version: int = VERSION, **extra: Any) -> str:
    return json.dumps({"format": FORMAT, "version": version, **extra, "sha256": _digest(body), "body": body})


def _body(monitor: Monitor) -> dict[str, Any]:
    return json.loads(monitor.dumps())["body"]


@settings(deadline=None)  # (a shared machine: time is the benchmarks' matter)
@given(mostly_zero_matrices())
def test_sparse_and_dense_are_inverse_and_keep_only_the_non_zero_cells(matrix: np.ndarray) -> None:
    """dense(sparse(m)) is m, and sparse lists exactly numpy's non-zero cells, sorted, with their counts."""
    saved = sparse(matrix)
    assert saved["cells"] == np.flatnonzero(matrix).tolist() and 0 not in saved["counts"]
    assert sum(saved["counts"]) == int(matrix.sum())
    assert np.array_equal(dense(saved, matrix.shape[0]), matrix)


# -- older files -------------------------------------------------------------------------------------------------------


def test_a_version_3_file_written_by_the_previous_writer_loads_to_the_same_monitor() -> None:
    """tests/fixtures/state_v3.json, saved by the commit before format 4 (every matrix dense), loads to the monitor
    tests/state_fixture.py builds today: the same body when saved again, the same report, and both continue alike."""
    document = json.loads((FIXTURES / "state_v3.json").read_text())
    assert document["version"] == 3 and isinstance(document["body"]["lifetime"]["counts"][0], list)
    assert "shift_min_js" in document["body"]["policy"]  # the JS gate of then: dropped on load
    loaded, rebuilt = Monitor.load(FIXTURES / "state_v3.json"), fixture_monitor()
    old, new = _body(loaded), _body(rebuilt)
    # (the class rates of the time budget are newer than version 3: measured afresh; with arl fixed, unused)
    assert old["watch"].pop("budget")["span"] == 0.0 and new["watch"].pop("budget")["span"] > 0.0
    # alert_since holds the alerts of the prior-shift criterion of its time (chi-square and JS): not compared; nor
    # the alerts waiting for confirmation, nor the samples the latest read saw, which that format did not have
    ignored = {"alert_since": None, "alert_pending": None, "alert_looked_at": None}
    assert {**old, **ignored} == {**new, **ignored}
    assert "shift_min_js" not in old["policy"]
    before = rebuilt.samples
    assert json.loads(loaded.dumps())["version"] == VERSION
    for m in (loaded, rebuilt):
        m.update_many(["fraud", True, 3] * 20, ["legit", True, 3] * 20, t=[200.0] * 60)
        m.predict("late", "fraud", t=200.0)
        m.label("late", "fraud", t=201.0)
    a, b = loaded.report(), rebuilt.report()
    assert a.samples == b.samples == before + 61
    # the same alerts on, raised at different samples (see above), except those the file's alert_since held then and
    # the loaded monitor holds still (three window turnovers), which today's monitor had only pending confirmation
    on_a, on_b = ({(x.kind, x.window, x.subject) for x in r.alerts} for r in (a, b))
    assert on_b <= on_a and on_a - on_b <= {tuple(entry[:3]) for entry in old["alert_since"]}
    assert all(a.windows[w].confusion == b.windows[w].confusion for w in a.windows)


def test_a_version_3_file_is_checked_as_version_3_before_it_is_converted(tmp_path: Path) -> None:
    """A version-3 matrix with a negative count, a short row or a float is refused naming the dense field."""
    body = as_version_3(_body(fixture_monitor()))
    cases = [(("windows", 0, "state", "counts", 1, 2), -1, r"windows\[0\].state.counts\[1\] must hold ints in"),
             (("lifetime", "counts", 0), [1, 2], r"lifetime.counts\[0\] must have 4 entries"),
             (("windows", 2, "state", "slots"), None, "windows\\[2\\].state.slots must be a list")]
    for path, value, message in cases:
        forged = copy.deepcopy(body)
        target = forged
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
        with pytest.raises(StateError, match=message):
            Monitor.loads(_document(forged, version=3))


def test_the_version_3_converter_and_the_test_densifier_agree(tmp_path: Path) -> None:
    """A body written out dense by the tests' own converter and read as version 3 saves again as the same body:
    the upgrade is the inverse of writing every cell (pending side, Timed buckets and given baseline included)."""
    body = _body(fixture_monitor())
    assert _body(Monitor.loads(_document(as_version_3(body), version=3))) == body


# -- a large state saves small and loads exactly -----------------------------------------------------------------------


def _recount(true: np.ndarray, pred: np.ndarray, k: int) -> np.ndarray:
    counts = np.zeros((k, k), np.int64)
    np.add.at(counts, (true, pred), 1)
    return counts


def test_a_k_1000_state_with_a_timed_window_round_trips_to_an_independent_recount(tmp_path: Path) -> None:
    """K = 1,000 (a Zipf-like mix, 90 % right) with cumulative, sliding and timed windows: the file is under 3 % of
    what its 13 matrices of 1,024² cells take dense (2 bytes a cell at least, "0,"), and the loaded monitor's counts
    equal a recount of the samples each window holds."""
    k, n = 1000, 200_000
    rng = np.random.default_rng(3)
    true = np.minimum(rng.zipf(1.3, n) - 1, k - 1)
    pred = np.where(rng.random(n) < 0.9, true, rng.integers(0, k, n))
    times = np.sort(rng.uniform(0.0, 3600.0, n))
    monitor = Monitor([Cumulative(), Sliding(5000), Timed(600, buckets=10)], classes=list(range(k)), max_classes=k)
    monitor.update_many(true, pred, t=times)
    monitor.save(tmp_path / "m.json")
    size = (tmp_path / "m.json").stat().st_size
    assert size < 0.03 * 2 * 13 * 1024**2  # cumulative, sliding, timed + 10 buckets, lifetime
    loaded = Monitor.load(tmp_path / "m.json")
    counts = loaded.counts()
    width = 60.0
    newest = math.floor(times[-1] / width)
    in_window = np.floor(times / width) > newest - 10
    expected = {"cumulative": _recount(true, pred, k), "sliding_5000": _recount(true[-5000:], pred[-5000:], k),
                "timed_600s": _recount(true[in_window], pred[in_window], k)}
    for name, matrix in expected.items():
        labels = counts[name].labels
        order = [labels.index(c) for c in range(k)]
        assert np.array_equal(np.asarray(counts[name].matrix)[np.ix_(order, order)], matrix), name


# -- forgeries of the sparse form --------------------------------------------------------------------------------------

BASE = _body(fixture_monitor())
SPARSE_AT = {  # every kind of place a matrix is stored, and the side it has there
    "windows[0].state.counts": (("windows", 0, "state", "counts"), 4),
    "windows[2].state.slots[": (("windows", 2, "state", "slots", "live"), 4),
    "lifetime.counts": (("lifetime", "counts"), 4),
    "prior_baseline.counts": (("prior_baseline", "counts"), 2),
    "pending.side.predictions[0].counts": (("pending", "side", "predictions", 0, "counts"), 4),
    "pending.side.events[3].counts": (("pending", "side", "events", 3, "counts"), 16),
}
FORGERIES = {  # name: (edit of {"cells", "counts"}, words of the error after the place)
    "unsorted": (lambda m: m.update(cells=m["cells"][::-1], counts=m["counts"][::-1]), "strictly increasing"),
    "a cell twice": (lambda m: m["cells"].__setitem__(1, m["cells"][0]), "strictly increasing"),
    "a zero count": (lambda m: m["counts"].__setitem__(0, 0), "must hold ints in \\[1, "),
    "a negative count": (lambda m: m["counts"].__setitem__(0, -5), "must hold ints in \\[1, "),
    "a count over 2**53": (lambda m: m["counts"].__setitem__(0, 2**53 + 1), "must hold ints in \\[1, "),
    "a float count": (lambda m: m["counts"].__setitem__(0, 1.0), "must hold ints in \\[1, "),
    "a cell beyond the side": (lambda m: m["cells"].__setitem__(-1, 10**6), "cells must hold ints in \\[0, "),
    "a negative cell": (lambda m: m["cells"].__setitem__(0, -1), "cells must hold ints in \\[0, "),
    "a bool cell": (lambda m: m["cells"].__setitem__(0, True), "cells must hold ints, got True"),
    "counts shorter than cells": (lambda m: m["counts"].pop(), "counts must have \\d+ entries"),
    "an extra field": (lambda m: m.update(side=4), "unexpected side"),
    "no counts": (lambda m: m.pop("counts"), "missing counts"),
}


def _at(body: dict[str, Any], path: tuple[Any, ...]) -> dict[str, Any]:
    target: Any = body
    for step in path:
        target = next(s for s in target if s is not None) if step == "live" else target[step]
    return target  # type: ignore[no-any-return]


@pytest.mark.parametrize("place", sorted(SPARSE_AT))
@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_forged_sparse_matrices_are_refused_naming_the_field(place: str, forgery: str) -> None:
    """Each forgery of a stored matrix, in each place one is stored, checksum recomputed: StateError naming it."""
    path, _ = SPARSE_AT[place]
    body = copy.deepcopy(BASE)
    matrix = _at(body, path)
    assert len(matrix["cells"]) >= 2, place  # the fixture stores two cells or more everywhere
    edit, words = FORGERIES[forgery]
    edit(matrix)
    with pytest.raises(StateError, match=place.replace("[", "\\[").replace(".", "\\.") + ".*" + words):
        Monitor.loads(_document(body))


def test_a_forged_matrix_whose_totals_disagree_is_refused() -> None:
    """Totals agree or the file is refused: a bucket count moved out of its window's counts, a label-side bucket
    added to, the lifetime counts with one more sample than ingested."""
    cases = [(("windows", 2, "state", "counts"), "saved counts of windows\\[2\\] do not match its buckets"),
             (("pending", "side", "predictions", 2, "counts"), "its buckets do not add up to its counts"),
             (("lifetime", "counts"), "do not sum to ingested")]
    for path, message in cases:
        body = copy.deepcopy(BASE)
        _at(body, path)["counts"][-1] += 1
        with pytest.raises(StateError, match=message):
            Monitor.loads(_document(body))


# -- what save writes, load reads --------------------------------------------------------------------------------------


def test_save_refuses_a_state_over_the_file_limit_and_writes_nothing(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """With MAX_BYTES below the state's size, save raises StateError naming both sizes, and the previous file
    stays as it was; the same state loads with the default limit once it fits."""
    monitor = fixture_monitor()
    path = tmp_path / "m.json"
    monitor.save(path)
    before = path.read_bytes()
    monitor.update_many(["fraud"] * 10, ["fraud"] * 10, t=[300.0] * 10)
    samples = monitor.samples
    monkeypatch.setattr(state_file, "MAX_BYTES", len(before) // 2)
    with pytest.raises(StateError, match=f"state is \\d+ bytes, over the limit of {len(before) // 2}"):
        monitor.save(path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["m.json"]
    monkeypatch.undo()
    monitor.save(path)
    assert Monitor.load(path).samples == samples


def test_the_count_matrices_a_file_describes_are_bounded_before_they_are_allocated(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A state whose dense matrices would take more than MAX_MEMORY is refused by load (before allocating them:
    peak memory stays under a tenth of them) and by save (nothing written); below the limit it loads."""
    monitor = Monitor([Cumulative(), Timed(600, buckets=60)], classes=list(range(300)), max_classes=300)
    monitor.update_many(np.arange(6000) % 300, np.arange(6000) % 300, t=np.linspace(0, 600, 6000))
    text = monitor.dumps()
    needed = memory.matrix_bytes(json.loads(text)["body"])
    # the two windows, lifetime and 60 live buckets (no prediction yet: no label-side windows are allocated, and a
    # save allocates none)
    assert needed == 8 * 512**2 * (2 + 1 + 60)
    monkeypatch.setattr(memory, "MAX_MEMORY", needed - 1)
    tracemalloc.start()
    try:
        with pytest.raises(StateError, match=f"describes {needed} bytes of count matrices"):
            Monitor.loads(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < needed / 10
    with pytest.raises(StateError, match="nothing was written"):
        monitor.save(tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()
    monkeypatch.setattr(memory, "MAX_MEMORY", needed)
    assert Monitor.loads(text).samples == 6000


# -- the writer's version ----------------------------------------------------------------------------------------------


def test_a_state_file_says_which_streammon_wrote_it_and_a_bad_writer_is_refused() -> None:
    """written_by is "streammon <installed version>"; a non-string or over-long one is refused, an absent one
    (files before version 4) is not; it is outside the checksum."""
    document = json.loads(Monitor([Cumulative()]).dumps())
    assert document["written_by"] == f"streammon {importlib.metadata.version('streammon')}"
    body = document["body"]
    assert Monitor.loads(_document(body)).samples == 0
    for bad in (3, None, "x" * 101, ["streammon"]):
        with pytest.raises(StateError, match="written_by must be a string of at most 100 characters"):
            Monitor.loads(_document(body, written_by=bad))


def test_a_small_forged_file_describing_gigabytes_of_matrices_is_refused_small() -> None:
    """A file of 5,000 labels and 17 empty windows (tens of kB; 18 dense matrices of 8,192² cells, 9 GiB, if
    built) is refused by the memory limit, naming the bytes, within a few MiB of memory: no matrix is allocated."""
    body = _body(Monitor([Cumulative(name=f"c{i}") for i in range(17)], classes=["a", "b"]))
    body.update(labels=[["int", i] for i in range(5000)], max_classes=5000, capacity=8192, warm_counts=[0] * 8192)
    assert body["pending"]["side"] is None  # never predicted: no label-side windows saved
    text = _document(body)
    assert len(text) < 200_000
    tracemalloc.start()
    try:
        with pytest.raises(StateError, match=f"describes {8 * 8192**2 * 18} bytes of count"):
            Monitor.loads(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * len(text) + 4 * 2**20
