"""The bucket-count table: numpy and DuckDB make the table pandas recounts; its replay equals the row replay
for cumulative and timed windows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")

import streammon  # noqa: E402
from streammon.logs import ReplayError, counts_from_rows, counts_with_duckdb, replay, replay_counts  # noqa: E402
from tests.replay_data import BASELINE, REFERENCE, log_frame, same_report  # noqa: E402

WINDOWS = ("cumulative", "timed_3600s", "timed_600s")


def _windows() -> list[streammon.Window]:
    return [streammon.Cumulative(), streammon.Timed(3600), streammon.Timed(600, buckets=10), streammon.Sliding(500)]


def _recount(frame: Any, true: str, pred: str, time: str | None, width: float) -> list[dict[str, Any]]:
    """The counts table computed with pandas: group the rows by (bucket start, true, pred)."""
    keys = frame[[true, pred]].rename(columns={true: "true", pred: "pred"})
    keys.insert(0, "bucket_start", np.floor(frame[time] / width) * width if time else np.nan)
    grouped = keys.groupby(["bucket_start", "true", "pred"], dropna=False).size().reset_index(name="count")
    records = grouped.sort_values(["bucket_start", "true", "pred"]).to_dict("records")
    for r in records:
        r["bucket_start"] = None if r["bucket_start"] != r["bucket_start"] else r["bucket_start"]
    return records  # type: ignore[no-any-return]


@pytest.mark.parametrize(("fmt", "true", "pred", "time"), [
    ("parquet", "y", "p", "ts"), ("parquet", "yi", "pi", "seconds"), ("csv", "y", "p", "seconds"),
    ("parquet", "y", "p", None)])
def test_numpy_and_duckdb_make_the_table_pandas_recounts(tmp_path: Path, fmt: str, true: str, pred: str,
                                                         time: str | None) -> None:
    """counts_from_rows and counts_with_duckdb give, row for row, the (bucket, true, pred, count) table of a pandas
    groupby on the same rows (timestamps, seconds, string and integer labels, no time)."""
    frame = log_frame(n=8_000)
    path = tmp_path / f"log.{fmt}"
    if fmt == "csv":
        frame.to_csv(path, index=False)
    else:
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=3_000)
    expected = _recount(frame, true, pred, time and "seconds", 60.0)
    mine = counts_from_rows(path, true=true, pred=pred, time=time, bucket="1m", batch_rows=2_000)
    duck = counts_with_duckdb(path, true=true, pred=pred, time=time, bucket=60)
    assert mine.to_pylist() == expected
    assert duck.to_pylist() == expected
    assert mine.schema == duck.schema and mine.schema.names == ["bucket_start", "true", "pred", "count"]


def test_counts_replay_equals_row_replay_for_cumulative_and_timed_windows(tmp_path: Path) -> None:
    """Replaying the 60 s counts table gives, at every hourly snapshot, the cumulative and timed windows' reports of
    the row replay (sliding windows need the rows and are not compared)."""
    frame = log_frame()
    path = tmp_path / "log.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    rows: list[Any] = []
    replay(path, true="y", pred="p", time="ts", every="1h", windows=_windows(), reference=REFERENCE,
           baseline=BASELINE, on_snapshot=lambda s, r: rows.append((s, r)))
    for table in (counts_from_rows(path, true="y", pred="p", time="ts"),
                  counts_with_duckdb(path, true="y", pred="p", time="ts")):
        counted: list[Any] = []
        result = replay_counts(table, every="1h", windows=_windows(), reference=REFERENCE, baseline=BASELINE,
                               on_snapshot=lambda s, r, seen=counted: seen.append((s, r)))
        assert [s for s, _ in counted] == [s for s, _ in rows]
        for (_, got), (_, want) in zip(counted, rows, strict=True):
            same_report(got, want, WINDOWS, alerts=False)
        assert result.samples == len(frame)


def test_a_counts_file_replays_from_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A counts table written as Parquet replays with `streammon replay --counts` to the recounted confusion."""
    from streammon.cli import main

    frame = log_frame(n=5_000)
    table = counts_from_rows(frame, true="yi", pred="pi", time="seconds", bucket="10m")
    pq.write_table(table, tmp_path / "counts.parquet")
    assert main(["replay", str(tmp_path / "counts.parquet"), "--counts", "--reference", "0=95,1=5"]) == 0
    out = capsys.readouterr().out
    assert "replayed 5000 rows" in out and "classes [0, 1]" in out


def test_the_detector_sees_degradation_not_mix_in_counts(tmp_path: Path) -> None:
    """From counts, the degradation of the fraud class is still alerted, and a pure mix shift alerts no degradation."""
    frame = log_frame(n=40_000)
    table = counts_from_rows(frame, true="y", pred="p", time="seconds", bucket=60)
    alerts = replay_counts(table, reference=REFERENCE, baseline=BASELINE).alerts
    assert {(a.kind, a.subject) for a in alerts if a.kind == "degradation"} == {("degradation", "fraud")}
    steady = frame.iloc[: len(frame) * 2 // 3]  # steady, then the fraud share triples: the model is unchanged
    table = counts_from_rows(steady, true="y", pred="p", time="seconds", bucket=60)
    assert not [a for a in replay_counts(table, reference=REFERENCE, baseline=BASELINE).alerts
                if a.kind == "degradation"]


def test_a_bad_counts_table_or_a_null_in_duckdb_input_is_named(tmp_path: Path) -> None:
    """A zero count or a missing column in a counts table, and a null label read by DuckDB, name column and row."""
    good = counts_from_rows(log_frame(n=2_000), true="y", pred="p", time="seconds")
    zero = good.set_column(3, "count", pa.array([1] * 5 + [0] + [1] * (good.num_rows - 6), pa.int64()))
    with pytest.raises(ReplayError) as caught:
        replay_counts(zero)
    assert (caught.value.column, caught.value.row) == ("count", 5)
    with pytest.raises(ReplayError, match="needs the columns"):
        replay_counts(good.drop_columns(["count"]))
    frame = log_frame(n=2_000).astype({"p": object})
    frame.loc[1_500, "p"] = None
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / "nulls.parquet")
    with pytest.raises(ReplayError) as caught:
        counts_with_duckdb(tmp_path / "nulls.parquet", true="y", pred="p", time="ts")
    assert (caught.value.file, caught.value.column, caught.value.row) == (str(tmp_path / "nulls.parquet"), "p", 1_500)
