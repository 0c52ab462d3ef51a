"""Float label columns: replay (Parquet, CSV, Arrow IPC, Arrow tables, pandas and polars frames) and DuckDB read
them by ``update_many``'s rule (whole numbers as int labels, a fraction refused as a score, a NaN as missing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")

import streammon  # noqa: E402
from streammon.logs import ReplayError, counts_from_rows, counts_with_duckdb, replay  # noqa: E402
from tests.replay_data import same_report  # noqa: E402

FORMATS = ("parquet", "csv", "arrow", "table", "pandas", "polars")


def _rows(n: int = 600, seed: int = 3) -> Any:
    """0.0/1.0 true and predicted labels (about 10 % positives) at increasing float seconds."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.1).astype(np.float64)
    p = np.where(rng.random(n) < 0.85, y, 1.0 - y)
    return pd.DataFrame({"t": np.arange(n, dtype=np.float64) * 7.0, "y": y, "p": p})


def _source(frame: Any, fmt: str, tmp_path: Path) -> Any:
    """The frame as a log of format ``fmt`` (a file written by pandas/pyarrow, or an in-memory object)."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if fmt == "parquet":
        frame.to_parquet(tmp_path / "log.parquet")
        return tmp_path / "log.parquet"
    if fmt == "csv":
        frame.to_csv(tmp_path / "log.csv", index=False)  # pandas writes 0.0 / 1.0 / 0.5
        return tmp_path / "log.csv"
    if fmt == "arrow":
        with pa.ipc.new_file(str(tmp_path / "log.arrow"), table.schema) as writer:
            writer.write_table(table)
        return tmp_path / "log.arrow"
    if fmt == "table":
        return table
    if fmt == "polars":
        polars = pytest.importorskip("polars")
        return polars.from_pandas(frame)
    return frame


def _windows() -> list[streammon.Window]:
    return [streammon.Cumulative(), streammon.Timed(600), streammon.Sliding(100)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_whole_float_labels_replay_as_update_many_counts_them(fmt: str, tmp_path: Path) -> None:
    """A 0.0/1.0 float label column replays to the report update_many gives for the same column, with int classes."""
    frame = _rows()
    by_hand = streammon.Monitor(_windows(), reference={0: 9, 1: 1}, clock=lambda: 0.0)
    by_hand.update_many(frame["y"].to_numpy(), frame["p"].to_numpy(), t=frame["t"].to_numpy())
    result = replay(_source(frame, fmt, tmp_path), true="y", pred="p", time="t", windows=_windows(),
                    reference={0: 9, 1: 1}, every="1h")
    assert set(result.classes) == {0, 1} and all(type(c) is int for c in result.classes)
    same_report(result.report, by_hand.report())


@pytest.mark.parametrize("fmt", FORMATS)
def test_fraction_refused_by_replay_with_update_many_reason(fmt: str, tmp_path: Path) -> None:
    """A 0.5 in a float label column is refused by replay with update_many's own message, naming the row."""
    frame = _rows()
    frame.loc[123, "p"] = 0.5
    with pytest.raises(ValueError, match="not a whole number") as by_hand:
        streammon.Monitor(_windows(), clock=lambda: 0.0).update_many(frame["y"].to_numpy(), frame["p"].to_numpy(),
                                                                     t=frame["t"].to_numpy())
    with pytest.raises(ReplayError) as replayed:
        replay(_source(frame, fmt, tmp_path), true="y", pred="p", time="t", windows=_windows())
    assert str(by_hand.value) in str(replayed.value)
    assert replayed.value.column == "p" and replayed.value.row == 123


def test_nan_label_refused_as_missing(tmp_path: Path) -> None:
    """A NaN (not an Arrow null) in a float label column is refused as a missing label at its row, as update_many
    refuses it."""
    table = pa.table({"y": pa.array([0.0, 1.0, float("nan"), 1.0]), "p": pa.array([0.0, 1.0, 1.0, 1.0])})
    with pytest.raises(ValueError, match="missing"):
        streammon.Monitor([streammon.Cumulative()]).update_many(np.array([0.0, 1.0, np.nan, 1.0]), [0, 1, 1, 1])
    with pytest.raises(ReplayError, match=r"NaN label.*missing") as replayed:
        replay(table, true="y", pred="p")
    assert replayed.value.row == 2


def test_float_keys_still_refused() -> None:
    """A float column cannot be a prediction key (1.0 and 1 would be one key, 0.1+0.2 another): keys stay str/int."""
    preds = pa.table({"k": [1.0, 2.0], "p": [0, 1]})
    labels = pa.table({"k": [1.0, 2.0], "y": [0, 1]})
    with pytest.raises(ReplayError, match="cannot hold prediction keys"):
        replay(preds, labels=labels, key="k", true="y", pred="p")


def test_int_truth_and_float_predictions_mix() -> None:
    """Int true labels beside 0.0/1.0 float predictions are one label type (ints), as update_many takes them."""
    table = pa.table({"y": pa.array([0, 1, 1, 0], pa.int64()), "p": pa.array([0.0, 1.0, 0.0, 0.0])})
    report = replay(table, true="y", pred="p").report.windows["cumulative"]
    assert report.recall == {0: 1.0, 1: 0.5}


@pytest.mark.parametrize("fmt", ["parquet", "table", "pandas"])
def test_duckdb_reads_float_labels_by_the_same_rule(fmt: str, tmp_path: Path) -> None:
    """DuckDB's counts of a 0.0/1.0 float log equal replay's reader's (int labels); a 0.5 is refused with
    update_many's reason at its row."""
    pytest.importorskip("duckdb")
    frame = _rows()
    assert counts_with_duckdb(_source(frame, fmt, tmp_path), true="y", pred="p", time="t", bucket=60).equals(
        counts_from_rows(frame, true="y", pred="p", time="t", bucket=60))
    frame.loc[321, "y"] = 0.5
    with pytest.raises(ReplayError, match="not a whole number") as refused:
        counts_with_duckdb(_source(frame, fmt, tmp_path), true="y", pred="p", time="t", bucket=60)
    assert refused.value.row == 321


def test_joined_float_labels_replay_as_their_ints() -> None:
    """A joined replay (predictions and labels on a key) of 0.0/1.0 float columns reports what the same columns
    as int64 report."""
    frame = _rows()
    keys = np.arange(len(frame))

    def joined(kind: Any) -> Any:
        preds = pa.table({"k": keys, "p": frame["p"].to_numpy().astype(kind), "t": frame["t"].to_numpy()})
        labels = pa.table({"k": keys, "y": frame["y"].to_numpy().astype(kind), "t": frame["t"].to_numpy() + 30.0})
        return replay(preds, labels=labels, key="k", true="y", pred="p", time="t", windows=_windows(),
                      reference={0: 9, 1: 1}, every="1h").report

    same_report(joined(np.float64), joined(np.int64))
