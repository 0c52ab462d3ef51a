"""Inputs as they come from pandas, polars and Arrow: counted like the plain lists they hold, or refused clearly."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest

from streammon import Cumulative, Monitor, Timed

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")

TRUTH = ["legit", "fraud", "legit", "legit", "fraud", "legit"]
PREDS = ["legit", "legit", "legit", "fraud", "fraud", "legit"]
INTS_T, INTS_P = [0, 1, 0, 0, 1, 2], [0, 0, 0, 1, 1, 2]

CONTAINERS: dict[str, Callable[[list[Any]], Any]] = {
    "pandas Series": pd.Series,
    "pandas Series (string dtype)": lambda xs: pd.Series(xs, dtype="string") if isinstance(xs[0], str)
    else pd.Series(xs, dtype="Int64"),
    "pandas Categorical Series": lambda xs: pd.Series(xs, dtype="category"),
    "pandas Index": pd.Index,
    "polars Series": pl.Series,
    "pyarrow array": pa.array,
    "pyarrow chunked array": lambda xs: pa.chunked_array([xs[:2], xs[2:]]),
    "tuple": tuple,
    "range-like deque": lambda xs: __import__("collections").deque(xs),
}


def _cells(monitor: Monitor) -> dict:
    return monitor.counts()["cumulative"].cells()


@pytest.mark.parametrize("make", CONTAINERS.values(), ids=CONTAINERS.keys())
@pytest.mark.parametrize(("truth", "preds"), [(TRUTH, PREDS), (INTS_T, INTS_P)], ids=["str", "int"])
def test_series_and_arrays_count_like_the_lists_they_hold(make: Callable, truth: list, preds: list) -> None:
    """Every 1-D container is counted sample by sample: the cells equal a recount of the plain lists."""
    monitor = Monitor([Cumulative()])
    monitor.update_many(make(truth), make(preds))
    assert _cells(monitor) == dict(Counter(zip(truth, preds, strict=True)))
    assert all(type(label) in (str, int) for label in monitor.labels)


@pytest.mark.parametrize("frame", [
    lambda: pd.DataFrame({"y": INTS_T}), lambda: pd.DataFrame({"y": INTS_T, "p": INTS_P}),
    lambda: pl.DataFrame({"y": INTS_T}), lambda: pa.table({"y": INTS_T}),
    lambda: pa.record_batch({"y": INTS_T}),
], ids=["pandas 1 column", "pandas 2 columns", "polars", "pyarrow Table", "pyarrow RecordBatch"])
def test_tables_are_refused_with_a_message_that_says_pass_one_column(frame: Callable) -> None:
    """A table would count its column names (or fail on length): it is refused, naming df['label']."""
    monitor = Monitor([Cumulative()])
    with pytest.raises(TypeError, match=r"pass one column, e\.g\. df\['label'\]"):
        monitor.update_many(frame(), frame())
    assert monitor.samples == 0 and monitor.labels == ()


@pytest.mark.parametrize(("value", "what"), [
    ({"a": "x", "b": "y"}, "its keys would be counted"), ({"a", "b"}, "a set has no order"),
    ((x for x in "ab"), "unknown length"), (iter(["a", "b"]), "unknown length"), ("ab", "sequence or 1-D array"),
], ids=["dict", "set", "generator", "iterator", "str"])
def test_dicts_sets_and_iterators_are_refused_saying_what_to_pass(value: Any, what: str) -> None:
    """Containers whose iteration is not one label per sample in order are refused with what to pass instead."""
    monitor = Monitor([Cumulative()])
    with pytest.raises(TypeError, match=what):
        monitor.update_many(value, ["a", "b"])
    assert monitor.samples == 0


@pytest.mark.parametrize("missing", [
    lambda: pd.Series([0, 1, None], dtype="Int64"), lambda: pd.Series(["a", "b", None], dtype="string"),
    lambda: pd.Series([0.0, 1.0, np.nan]), lambda: pd.Series(["a", "b", pd.NA], dtype=object),
    lambda: pd.Series(["a", "b", pd.NaT], dtype=object), lambda: pd.Series([True, False, None], dtype="boolean"),
    lambda: pl.Series([0, 1, None]), lambda: pl.Series(["a", "b", None]),
    lambda: pa.array([0, 1, None]), lambda: pa.array(["a", "b", None]),
    lambda: pa.chunked_array([["a"], ["b", None]]), lambda: ["a", "b", None],
], ids=["Int64 NA", "string NA", "float NaN", "object NA", "object NaT", "boolean NA", "polars int null",
        "polars str null", "arrow int null", "arrow str null", "arrow chunked null", "list None"])
@pytest.mark.parametrize("side", ["y_true", "y_pred"])
def test_missing_labels_are_refused_and_nothing_is_counted(missing: Callable, side: str) -> None:
    """pd.NA, pd.NaT, None, NaN and Arrow nulls are missing labels: the batch is refused, nothing counted."""
    monitor = Monitor([Cumulative()])
    good = [0, 1, 1]
    args = (missing(), good) if side == "y_true" else (good, missing())
    with pytest.raises(ValueError, match="missing"):
        monitor.update_many(*args)
    assert monitor.labels == () and monitor.samples == 0


def test_an_int64_series_with_gaps_filled_counts_as_ints() -> None:
    """pandas turns an int column with NaN into floats; once the gaps are dropped, the labels are the ints again."""
    truth = pd.Series([0, 1, None, 1], dtype="float64").dropna()
    monitor = Monitor([Cumulative()], classes=[0, 1])
    monitor.update_many(truth, pd.Series([0, 1, 1]))
    assert monitor.labels == (0, 1) and _cells(monitor) == {(0, 0): 1, (1, 1): 2}


START = datetime(2024, 3, 1, tzinfo=timezone.utc)
SECONDS = [START.timestamp() + 30.0 * i for i in range(4)]


@pytest.mark.parametrize("times", [
    lambda: [START + timedelta(seconds=30 * i) for i in range(4)],
    lambda: [(START + timedelta(seconds=30 * i)).replace(tzinfo=None) for i in range(4)],  # naive = UTC
    lambda: pd.Series(pd.to_datetime(SECONDS, unit="s")),
    lambda: pd.Series(pd.to_datetime(SECONDS, unit="s", utc=True)),
    lambda: pd.Series(pd.to_datetime(SECONDS, unit="s", utc=True)).dt.tz_convert("Europe/Paris"),
    lambda: pd.DatetimeIndex(pd.to_datetime(SECONDS, unit="s")),
    lambda: np.array(SECONDS, dtype="float64").astype("int64").astype("datetime64[s]"),
    lambda: pl.Series([START.replace(tzinfo=None) + timedelta(seconds=30 * i) for i in range(4)]),
    lambda: pa.array([START + timedelta(seconds=30 * i) for i in range(4)]),
], ids=["datetime aware", "datetime naive", "pandas naive", "pandas UTC", "pandas Paris", "DatetimeIndex",
        "numpy datetime64", "polars", "pyarrow"])
def test_datetimes_as_times_are_unix_seconds(times: Callable) -> None:
    """Datetime columns are converted to Unix seconds: a 60 s Timed window at the last sample holds the samples
    of the last 60 s of the equal float-seconds stream (the same counts, recounted from the floats)."""
    as_dates, as_floats = Monitor([Timed(60, buckets=6)]), Monitor([Timed(60, buckets=6)])
    as_dates.update_many(["a", "b", "a", "b"], ["a", "a", "b", "b"], t=times())
    as_floats.update_many(["a", "b", "a", "b"], ["a", "a", "b", "b"], t=SECONDS)
    assert as_dates.counts() == as_floats.counts()
    one = Monitor([Timed(60)])
    one.update("a", "a", t=pd.Timestamp(START))
    one.update("a", "a", t=np.datetime64(int(SECONDS[1]), "s"))
    assert one.counts()["timed_60s"].n == 2


def test_missing_times_are_refused() -> None:
    """NaT in a datetime column, or pd.NaT as one time, is refused and nothing is counted."""
    monitor = Monitor([Timed(60)])
    with pytest.raises(ValueError, match="missing"):
        monitor.update_many(["a", "b"], ["a", "b"], t=pd.Series(pd.to_datetime([SECONDS[0], None], unit="s")))
    with pytest.raises(ValueError, match="missing"):
        monitor.update("a", "a", t=pd.NaT)
    assert monitor.samples == 0


def test_streammon_imports_no_frame_library() -> None:
    """Importing streammon loads neither pandas, polars nor pyarrow (checked in a fresh interpreter)."""
    import subprocess

    code = "import streammon, sys; print(sorted(m for m in ('pandas', 'polars', 'pyarrow') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_batch_encoded_while_another_adds_classes_is_encoded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Labels are encoded outside the lock; if another call registers classes meanwhile, the batch is re-encoded."""
    from collections import Counter

    import streammon.intake.label_columns
    from streammon import Cumulative, Monitor

    monitor = Monitor([Cumulative()], warmup=10**9)
    real = streammon.intake.label_columns.code_labels
    interleaved: list[bool] = []

    def encode_then_race(*args: Any) -> Any:
        encoded = real(*args)
        if not interleaved:  # between this batch's encoding and its lock, another batch adds two classes
            interleaved.append(True)
            monitor.update_many(["x", "y"], ["y", "x"])
        return encoded

    monkeypatch.setattr(streammon.intake.label_columns, "code_labels", encode_then_race)
    monitor.update_many(["a", "b", "a"], ["b", "b", "a"])
    expected = Counter([("x", "y"), ("y", "x"), ("a", "b"), ("b", "b"), ("a", "a")])
    got = monitor.counts()["cumulative"].cells()
    assert {pair: n for pair, n in got.items() if n} == dict(expected)
