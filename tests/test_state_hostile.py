"""Hostile state files fail with StateError naming what is wrong, within memory proportional to the file."""

from __future__ import annotations

import copy
import json
import math
import tracemalloc
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streammon import Cumulative, DetectorSettings, Monitor, Sliding, Timed
from streammon.state import FORMAT, MAX_DEPTH, VERSION, StateError, _digest

PEAK_PER_BYTE = 40  # the documented bound: loading any file peaks below 40 bytes a byte of file, plus …
PEAK_CONSTANT = 4 * 2**20  # … 4 MiB


def _saved_body() -> dict[str, Any]:
    """The body of a monitor with every window kind, a learned reference, detectors learning and running, alerts."""
    rng = np.random.default_rng(5)
    monitor = Monitor([Cumulative(), Sliding(50), Timed(60, buckets=6)], warmup=100,
                      detector=DetectorSettings(baseline_samples=40), classes=["a", "b", 3, "c"])
    truth = [*rng.choice(["a", "b", "3", "c"], 1000, p=[0.6, 0.3, 0.08, 0.02]),  # "c" still learns its baseline
             *rng.choice(["a", "b", "3"], 500, p=[0.1, 0.8, 0.1])]  # then the mix shifts and recall falls
    truth = [3 if y == "3" else str(y) for y in truth]
    preds = [y if rng.random() < (0.9 if i < 1000 else 0.3) else "a" for i, y in enumerate(truth)]
    times = np.cumsum(rng.random(1500) * 0.2).tolist()
    monitor.update_many(truth[:1000], preds[:1000], t=times[:1000])
    for y, p, t in zip(truth[1000:], preds[1000:], times[1000:], strict=True):
        monitor.update(y, p, t=t)
    monitor.report()
    return json.loads(_text(monitor))["body"]


def _text(monitor: Monitor) -> str:
    import tempfile

    path = Path(tempfile.mkdtemp()) / "m.json"
    monitor.save(path)
    return path.read_text()


BODY = _saved_body()


def _document(body: Any, sha: str | None = None) -> str:
    return json.dumps({"format": FORMAT, "version": VERSION, "sha256": sha or _digest(body), "body": body})


def _load(path: Path, data: str | bytes) -> Monitor:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return Monitor.load(path)


def _peak(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        fn()
    except StateError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_the_saved_body_loads_and_reports(tmp_path: Path) -> None:
    """The fixture itself is a valid state (every forgery below starts from it) with alerts and learning classes."""
    assert BODY["alert_since"] and BODY["watch"]["classes"] and BODY["reference"]["source"] == "warmup"
    monitor = _load(tmp_path / "m.json", _document(BODY))
    assert monitor.samples == 1500 and monitor.report().windows["sliding_50"].n == 50


# -- the attacks of issue 12, item 6 ----------------------------------------------------------------------------------


def test_deep_nesting_non_utf8_and_huge_numbers_are_state_errors(tmp_path: Path) -> None:
    """Deep brackets, bytes that are not UTF-8 and a 20 MB run of digits raise StateError, not RecursionError,
    UnicodeDecodeError or a bare ValueError."""
    cases = {
        "nests 100000 levels": "[" * 100_000 + "]" * 100_000,
        "not UTF-8": b'{"format": "\xff\xfe"}',
        "truncated or not JSON": "1" * 20_000_000,
        f"nests {MAX_DEPTH + 1} levels": '{"body": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}",
    }
    for message, data in cases.items():
        with pytest.raises(StateError, match=message):
            _load(tmp_path / "m.json", data)


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path: Path) -> None:
    """A label full of brackets and quotes is a valid label: the depth scan skips strings."""
    monitor = Monitor([Cumulative()])
    label = '[[[[[[[[[[[[[[[[[[[[{{{{{{{\\"]]'
    monitor.update(label, label)
    monitor.save(tmp_path / "m.json")
    assert Monitor.load(tmp_path / "m.json").labels == (label,)


def test_a_file_over_the_size_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    """max_bytes caps what is read: a file one byte over fails with StateError; the same file loads with more."""
    text = _document(BODY)
    path = tmp_path / "m.json"
    path.write_text(text)
    with pytest.raises(StateError, match="over the limit"):
        Monitor.load(path, max_bytes=len(text) - 1)
    assert Monitor.load(path, max_bytes=len(text)).samples == 1500


def test_forged_infinities_and_a_300_million_bucket_window_fail_without_allocating(tmp_path: Path) -> None:
    """Rechecksummed forgeries: a label ["int", Infinity], ingested Infinity, and a 1 kB file declaring a Timed
    window of 300,000,000 buckets (4.8 GB if built) raise StateError, the last within 1 MiB of memory."""
    label = copy.deepcopy(BODY)
    label["labels"][0] = ["int", math.inf]
    ingested = copy.deepcopy(BODY)
    ingested["ingested"] = math.inf
    with pytest.raises(StateError, match="labels"):
        _load(tmp_path / "m.json", _document(label))
    with pytest.raises(StateError, match="ingested"):
        _load(tmp_path / "m.json", _document(ingested))
    huge = copy.deepcopy(BODY)
    huge["windows"][2]["describe"]["buckets"] = 300_000_000
    text = _document(huge)
    with pytest.raises(StateError, match="300000000 entries"):
        _load(tmp_path / "m.json", text)
    assert _peak(lambda: _load(tmp_path / "m.json", text)) < 2**20 + 40 * len(text)


# -- issue 11: every section is checksummed, every contradiction is caught -------------------------------------------


@pytest.mark.parametrize("section", sorted(BODY))
def test_editing_any_section_without_the_checksum_fails(tmp_path: Path, section: str) -> None:
    """Changing any one top-level section of the body while keeping the old checksum is detected."""
    edited = copy.deepcopy(BODY)
    edited[section] = [edited[section], "edited"]
    with pytest.raises(StateError, match="checksum does not match"):
        _load(tmp_path / "m.json", _document(edited, sha=_digest(BODY)))


def _cell(matrix: dict[str, list[int]], side: int, row: int, col: int) -> int:
    """The count of one cell of a saved (sparse) matrix."""
    cells = dict(zip(matrix["cells"], matrix["counts"], strict=True))
    return cells.get(row * side + col, 0)


def _bump(matrix: dict[str, list[int]], side: int, row: int, col: int, by: int) -> None:
    """Add ``by`` to one cell of a saved (sparse) matrix, in place, keeping it sorted and without zeros."""
    cells = dict(zip(matrix["cells"], matrix["counts"], strict=True))
    cells[row * side + col] = cells.get(row * side + col, 0) + by
    kept = sorted((cell, count) for cell, count in cells.items() if count)
    matrix["cells"], matrix["counts"] = [c for c, _ in kept], [n for _, n in kept]


def _unseen(body: dict[str, Any]) -> tuple[int, int]:
    """A (true, predicted) pair of saved classes that the lifetime counts never saw."""
    lifetime, k, side = body["lifetime"]["counts"], len(body["labels"]), body["capacity"]
    return next((i, j) for i in range(k) for j in range(k) if _cell(lifetime, side, i, j) == 0)


def _contradictions() -> Iterator[tuple[str, str, Callable[[dict[str, Any]], None]]]:
    """(name, the message it must raise, the forgery) for every kind of contradiction a file can hold."""

    def scale_cumulative(body: dict[str, Any]) -> None:  # issue 11: n = 1,400 while samples = 1,000 (here 1,500)
        counts = body["windows"][0]["state"]["counts"]
        counts["counts"] = [c * 2 for c in counts["counts"]]

    def more_everywhere(body: dict[str, Any]) -> None:  # lifetime and cumulative agree, ingested does not
        for counts in (body["lifetime"]["counts"], body["windows"][0]["state"]["counts"]):
            _bump(counts, body["capacity"], 1, 1, 7)

    def ring_and_counts(body: dict[str, Any]) -> None:  # a sliding window that holds 51 of its 50
        _bump(body["windows"][1]["state"]["counts"], body["capacity"], 0, 0, 1)

    def ring_beyond_lifetime(body: dict[str, Any]) -> None:  # ring and counts agree on a pair never seen
        state, (row, col) = body["windows"][1]["state"], _unseen(body)
        old = divmod(state["ring"][0], body["max_classes"])
        state["ring"][0] = row * body["max_classes"] + col
        _bump(state["counts"], body["capacity"], *old, -1)
        _bump(state["counts"], body["capacity"], row, col, 1)

    def timed_slot(body: dict[str, Any]) -> None:
        state = body["windows"][2]["state"]
        slot = next(i for i, b in enumerate(state["ids"]) if b != -(2**63))
        _bump(state["slots"][slot], body["capacity"], 0, 0, 1)

    def bucket_moved(body: dict[str, Any]) -> None:
        state = body["windows"][2]["state"]
        slot = next(i for i, b in enumerate(state["ids"]) if b != -(2**63))
        state["ids"][slot] += 1

    def future_bucket(body: dict[str, Any]) -> None:
        body["last_t"] = 0.0

    def matrix_without_bucket(body: dict[str, Any]) -> None:
        state = body["windows"][2]["state"]
        slot = next(i for i, b in enumerate(state["ids"]) if b != -(2**63))
        state["ids"][slot] = -(2**63)

    def window_beyond_lifetime(body: dict[str, Any]) -> None:  # same total, a pair the lifetime never saw
        counts, (row, col), side = body["windows"][2]["state"]["counts"], _unseen(body), body["capacity"]
        slot = next(s for s in body["windows"][2]["state"]["slots"] if s is not None and _cell(s, side, 0, 0) > 0)
        for matrix in (counts, slot):
            _bump(matrix, side, 0, 0, -1)
            _bump(matrix, side, row, col, 1)

    def position(body: dict[str, Any]) -> None:
        body["watch"]["position"] += 1

    def learned(body: dict[str, Any]) -> None:  # a class still learning with all of its baseline samples
        samples = body["detector"]["baseline_samples"]
        body["watch"]["learning"][next(iter(body["watch"]["learning"]))] = [samples, samples]

    def refining_given(body: dict[str, Any]) -> None:  # a given baseline is never re-learned
        saved = next(iter(body["watch"]["classes"].values()))
        saved["source"], saved["refining"] = "given", [0, math.ceil(saved["baseline"][1])]

    def class_id(body: dict[str, Any]) -> None:
        body["watch"]["learning"]["7"] = [0, 0]

    def learning_and_running(body: dict[str, Any]) -> None:
        body["watch"]["learning"][next(iter(body["watch"]["classes"]))] = [0, 0]

    def capacity(body: dict[str, Any]) -> None:
        body["capacity"] = 8

    def duplicate(body: dict[str, Any]) -> None:
        body["labels"].append(["bool", True])  # True is the class 1… and here 3 == 3.0
        body["labels"][-1] = ["float", 3.0]

    def too_many(body: dict[str, Any]) -> None:
        body["max_classes"] = 2

    def positive(body: dict[str, Any]) -> None:
        body["positive"] = ["str", "zzz"]

    def prior(body: dict[str, Any]) -> None:
        body["reference"]["priors"][0][0] = ["str", "zzz"]

    def warm(body: dict[str, Any]) -> None:
        body["warm_counts"][0] += 10_000

    def alert(body: dict[str, Any]) -> None:
        body["alert_since"][0][3] = 10**6

    def head(body: dict[str, Any]) -> None:
        body["windows"][1]["describe"]["size"] = 60
        body["windows"][1]["state"]["ring"] += [0] * 10
        body["windows"][1]["state"]["filled"] = 50

    def names(body: dict[str, Any]) -> None:
        body["windows"][1]["describe"]["name"] = "cumulative"

    yield from [
        ("cumulative scaled", "differs from the lifetime|more samples than ingested", scale_cumulative),
        ("lifetime vs ingested", "do not sum to ingested", more_everywhere),
        ("sliding counts vs ring", "do not match its ring", ring_and_counts),
        ("sliding ring beyond lifetime", "do not contain", ring_beyond_lifetime),
        ("timed slot vs counts", "do not match its buckets", timed_slot),
        ("timed bucket in another slot", "cannot be in slot", bucket_moved),
        ("timed bucket after last_t", "later than the last sample time", future_bucket),
        ("timed matrix without bucket", "exactly when it holds a bucket", matrix_without_bucket),
        ("window beyond lifetime", "do not contain", window_beyond_lifetime),
        ("detector position", "position", position),
        ("learning past its baseline size", r"learning\[\d+\] total must be an int in \[0, 39\]", learned),
        ("given baseline refining", "only a watched class with a learned baseline refines it", refining_given),
        ("detector of no class", "not the index of a saved class", class_id),
        ("class learning and running", "both learn", learning_and_running),
        ("capacity", "capacity must be 4", capacity),
        ("duplicate labels", "twice", duplicate),
        ("more labels than max_classes", "at most 2 entries", too_many),
        ("positive not a label", "positive", positive),
        ("prior of no label", "reference.priors", prior),
        ("warm-up counts", "warm_counts", warm),
        ("alert after the last sample", "alert_since", alert),
        ("sliding head vs filled", "head 0 must equal filled 50", head),
        ("window names", "unique", names),
    ]


@pytest.mark.parametrize(("name", "message", "forge"), list(_contradictions()), ids=[c[0] for c in _contradictions()])
def test_forged_contradictions_with_a_recomputed_checksum_fail(tmp_path: Path, name: str, message: str,
                                                               forge: Callable[[dict[str, Any]], None]) -> None:
    """A forgery whose checksum was recomputed but whose parts contradict each other raises StateError saying which."""
    body = copy.deepcopy(BODY)
    forge(body)
    assert body != BODY, name
    with pytest.raises(StateError, match=message):
        _load(tmp_path / "m.json", _document(body))


# -- every field: wrong values of every kind --------------------------------------------------------------------------


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths of every value in the body (containers too), a few per long list."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for i in sorted({0, 1, len(value) - 1} & set(range(len(value)))):
            yield from _leaves(value[i], (*path, i))


def _replace(body: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    edited = copy.deepcopy(body)
    target = edited
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return edited


SIBLINGS = [math.inf, -math.inf, math.nan, 10**30, -(10**30), 2**63, -1, 0.5, 1e308, True, False, "x", None, [],
            {}, [[]], ["int", 1]]


def test_every_field_set_to_every_wrong_kind_of_value_fails_cleanly_or_loads_consistently(tmp_path: Path) -> None:
    """Each value of the body (numbers, lists, objects), replaced in turn by ±Infinity, NaN, huge, negative,
    fractional, bool, string, null, empty and wrongly shaped values, checksum recomputed: loading raises
    StateError, or gives a monitor whose report is consistent (every window's n is the sum of its counts)."""
    loaded = 0
    paths = list(_leaves(BODY))
    assert len(paths) > 150
    for path in paths:
        for new in SIBLINGS:
            body = _replace(BODY, path, new)
            try:
                monitor = _load(tmp_path / "m.json", _document(body))
            except StateError:
                continue
            loaded += 1
            with warnings.catch_warnings():  # a Hölder p of ±1e30 overflows numpy (a metrics matter, not loading's)
                warnings.simplefilter("ignore", RuntimeWarning)
                report = monitor.report()
            for w in report.windows.values():
                assert w.n == w.confusion.n == sum(w.counts.values()), (path, new)
    assert loaded < len(paths) * len(SIBLINGS) // 4  # most replacements are invalid and said so


# -- fuzzing, under a memory bound -------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)
TEXT = _document(BODY)


@st.composite
def hostile_files(draw: st.DrawFn) -> str | bytes:
    """Random JSON, random JSON bodies with a valid checksum, a section of the body replaced by random JSON,
    truncations and byte flips of a valid file, deep nesting, and huge declared sizes."""
    kind = draw(st.sampled_from(["json", "body", "section", "truncate", "flip", "deep", "huge"]))
    if kind == "json":
        return json.dumps(draw(json_values))
    if kind == "body":
        return _document(draw(json_values))
    if kind == "section":
        paths = list(_leaves(BODY))
        return _document(_replace(BODY, paths[draw(st.integers(0, len(paths) - 1))], draw(json_values)))
    if kind == "truncate":
        return TEXT[: draw(st.integers(0, len(TEXT) - 1))]
    if kind == "flip":
        data = bytearray(TEXT.encode())
        at = draw(st.integers(0, len(data) - 1))
        data[at] = draw(st.integers(0, 255))
        return bytes(data)
    if kind == "deep":
        depth = draw(st.integers(MAX_DEPTH + 1, 200_000))
        opener = draw(st.sampled_from(["[", '{"a":']))
        return opener * depth + "1" + ("]" if opener == "[" else "}") * depth
    return _huge(draw)


HUGE: dict[str, Callable[[dict[str, Any], int], None]] = {
    "buckets": lambda body, size: body["windows"][2]["describe"].update(buckets=size),
    "size": lambda body, size: body["windows"][1]["describe"].update(size=size),
    "max_classes": lambda body, size: body.update(max_classes=size),
    "labels": lambda body, size: body.update(labels=[["int", i] for i in range(5000)]),
    "capacity": lambda body, size: body.update(capacity=size),
    "filled": lambda body, size: body["windows"][1]["state"].update(filled=size),
    "classes_seen": lambda body, size: body["watch"].update(classes_seen=size),
}


def _huge(draw: st.DrawFn) -> str:
    """A valid body declaring one huge size (checksum recomputed)."""
    body = copy.deepcopy(BODY)
    HUGE[draw(st.sampled_from(sorted(HUGE)))](body, draw(st.integers(2**20, 2**40)))
    return _document(body)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(hostile_files())
def test_hostile_files_raise_only_state_errors_within_memory_proportional_to_the_file(tmp_path: Path,
                                                                                       data: str | bytes) -> None:
    """Any such file loads, or raises StateError (never another exception), and loading peaks below
    40 bytes of memory a byte of file plus 4 MiB (tracemalloc, which sees numpy's arrays too)."""
    raw = data.encode() if isinstance(data, str) else data
    path = tmp_path / "m.json"
    path.write_bytes(raw)
    tracemalloc.start()
    try:
        Monitor.load(path)
    except StateError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < PEAK_PER_BYTE * len(raw) + PEAK_CONSTANT, (peak, len(raw))


def _with_baseline() -> tuple[Monitor, dict[str, Any]]:
    monitor = Monitor([Cumulative(), Sliding(100)], classes=["a", "b", 3],
                      baseline={"a": {"a": 90, "b": 10}, "b": {"a": 20, "b": 75, 3: 5}, 3: {3: 30, "a": 10}})
    rng = np.random.default_rng(8)
    for i, y in enumerate(rng.choice(["a", "b", "3"], 400, p=[0.5, 0.3, 0.2])):
        monitor.predict(i, 3 if y == "3" else str(y))
    return monitor, json.loads(_text(monitor))["body"]


def test_a_given_baseline_survives_save_and_load(tmp_path: Path) -> None:
    """The label-free estimate reads predictions through the given validation counts after a load too (no labels
    yet: without them it would have nothing to read through); the saved counts are the given ones, recounted."""
    monitor, body = _with_baseline()
    saved = body["prior_baseline"]["counts"]
    assert [[_cell(saved, 3, i, j) for j in range(3)] for i in range(3)] == [[90, 10, 0], [20, 75, 5], [10, 0, 30]]
    before = monitor.report().windows["cumulative"].estimate
    after = _load(tmp_path / "m.json", _document(body)).report().windows["cumulative"].estimate
    assert before is not None and after is not None and after.source == before.source == "baseline"
    assert dict(after.priors) == dict(before.priors) and dict(after.upper) == dict(before.upper)


def test_a_file_without_a_saved_baseline_still_loads(tmp_path: Path) -> None:
    _, body = _with_baseline()
    del body["prior_baseline"]
    assert _load(tmp_path / "m.json", _document(body)).report().windows["cumulative"].estimate is None


@pytest.mark.parametrize(("field", "value", "words"), [
    ("counts", [[90, 10, 0], [20, 75, 5], [10, 0, 30]], "prior_baseline.counts must be an object with cells, counts"),
    ("counts", {"cells": [0, 9], "counts": [90, 10]}, "prior_baseline.counts.cells must hold ints in [0, 8]"),
    ("counts", {"cells": [0, 1], "counts": [90, -75]}, "prior_baseline.counts.counts must hold ints in [1,"),
    ("counts", {"cells": [0, 1], "counts": [90, 7.5]}, "prior_baseline.counts.counts must hold ints in [1,"),
    ("labels", [["str", "a"], ["str", "a"], ["int", 3]], "prior_baseline.labels holds a class twice"),
    ("extra", 1, "unexpected extra"),
])
def test_a_forged_baseline_is_refused(tmp_path: Path, field: str, value: Any, words: str) -> None:
    _, body = _with_baseline()
    body["prior_baseline"][field] = value
    with pytest.raises(StateError, match=words.replace("[", r"\[")):
        _load(tmp_path / "m.json", _document(body))
