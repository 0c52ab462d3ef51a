"""Replaying logs row by row: equal to a monitor fed by hand, from every source format, with clear errors."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")

import streammon  # noqa: E402
from streammon.logs import ReplayError, replay  # noqa: E402
from tests.replay_data import BASELINE, REFERENCE, log_frame, same_report  # noqa: E402


def _write_parquet(frame: Any, path: Path, row_group: int = 4_000) -> Path:
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=row_group)
    return path


def _collect() -> tuple[list[Any], Any]:
    seen: list[Any] = []
    return seen, lambda snapshot, report: seen.append((snapshot, report))


def _hand_fed(frame: Any, ends: list[int]) -> list[Any]:
    """Reports of a monitor fed the rows by hand with update_many, one report after row ends[i]."""
    monitor = streammon.Monitor(reference=REFERENCE, baseline=BASELINE)
    reports, start = [], 0
    for end in ends:
        part = frame.iloc[start:end]
        monitor.update_many(part["y"].tolist(), part["p"].tolist(), t=part["seconds"].to_numpy())
        reports.append(monitor.report())
        start = end
    return reports


def test_replay_equals_a_monitor_fed_by_hand_at_every_snapshot_by_duration(tmp_path: Path) -> None:
    """Snapshots every hour of data time report exactly what a hand-fed monitor reports after each hour's rows,
    across row groups and batches that do not line up with the hours; the degradation alert is raised."""
    frame = log_frame()
    path = _write_parquet(frame, tmp_path / "log.parquet")
    seen, hook = _collect()
    result = replay(path, true="y", pred="p", time="ts", every="1h", reference=REFERENCE, baseline=BASELINE,
                    on_snapshot=hook, batch_rows=3_000)
    hours = np.floor(frame["seconds"].to_numpy() / 3600)
    ends = [int(i) + 1 for i in np.flatnonzero(np.diff(hours))] + [len(frame)]
    expected = _hand_fed(frame, ends)
    assert [s.samples for s, _ in seen] == ends
    assert [s.time for s, _ in seen] == [(h + 1) * 3600 for h in np.unique(hours)]
    for (_, got), want in zip(seen, expected, strict=True):
        same_report(got, want)
    assert result.report is seen[-1][1] and result.samples == len(frame)
    assert any(a.kind == "degradation" and a.subject == "fraud" for a in result.alerts)
    assert result.first_time == frame["seconds"].iloc[0] and result.last_time == frame["seconds"].iloc[-1]
    assert set(result.classes) == {"legit", "fraud"} and result.reference is not None


def test_replay_by_rows_equals_a_monitor_fed_by_hand(tmp_path: Path) -> None:
    """Snapshots every 7,000 rows equal a hand-fed monitor's reports after rows 7000, 14000, ... and the last."""
    frame = log_frame(n=25_000)
    seen, hook = _collect()
    replay(frame, true="y", pred="p", time="ts", every=7_000, reference=REFERENCE, baseline=BASELINE,
           on_snapshot=hook, batch_rows=4_096)
    ends = [7_000, 14_000, 21_000, 25_000]
    assert [s.samples for s, _ in seen] == ends
    for (_, got), want in zip(seen, _hand_fed(frame, ends), strict=True):
        same_report(got, want)


@pytest.mark.parametrize("fmt", ["parquet_dir", "csv", "ipc_file", "ipc_stream", "pandas", "polars", "arrow"])
def test_every_source_gives_the_recounted_confusion(tmp_path: Path, fmt: str) -> None:
    """Each source format replays to the confusion counts pandas recounts from the same rows."""
    frame = log_frame(n=6_000)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if fmt == "parquet_dir":
        (tmp_path / "d").mkdir()
        for i, part in enumerate(np.array_split(np.arange(len(frame)), 3)):
            _write_parquet(frame.iloc[part], tmp_path / "d" / f"part-{i}.parquet")
        (tmp_path / "d" / "_SUCCESS").write_text("")
        source: Any = tmp_path / "d"
    elif fmt == "csv":
        source = tmp_path / "log.csv"
        frame.to_csv(source, index=False)
    elif fmt.startswith("ipc"):
        source = tmp_path / "log.arrow"
        with pa.OSFile(str(source), "wb") as sink:
            opener = pa.ipc.new_file if fmt == "ipc_file" else pa.ipc.new_stream
            with opener(sink, table.schema) as writer:
                writer.write_table(table, max_chunksize=1_000)
    elif fmt == "polars":
        polars = pytest.importorskip("polars")
        source = polars.from_pandas(frame)
    else:
        source = frame if fmt == "pandas" else table
    result = replay(source, true="y", pred="p", time="ts", reference=REFERENCE, batch_rows=2_500)
    recount = pd.crosstab(frame["y"], frame["p"])
    expected = {t: {p: int(recount.loc[t, p]) for p in recount.columns if recount.loc[t, p]} for t in recount.index}
    assert result.report.windows["cumulative"].confusion.to_dict() == expected
    assert result.samples == len(frame)


def test_integer_labels_and_numeric_times(tmp_path: Path) -> None:
    """Integer labels and float seconds replay like the same rows given by hand."""
    frame = log_frame(n=5_000)
    path = _write_parquet(frame[["seconds", "yi", "pi"]], tmp_path / "ints.parquet")
    result = replay(path, true="yi", pred="pi", time="seconds", reference={0: 95, 1: 5})
    monitor = streammon.Monitor(reference={0: 95, 1: 5})
    monitor.update_many(frame["yi"].to_numpy(), frame["pi"].to_numpy(), t=frame["seconds"].to_numpy())
    same_report(result.report, monitor.report())


def test_timeline_is_tidy_and_written_as_json_and_parquet(tmp_path: Path) -> None:
    """The timeline rows carry the snapshot's values (score, corrected, distortion, flags, interval), and the JSON
    and Parquet files hold the same rows, NaN written as null."""
    frame = log_frame(n=12_000)
    seen, hook = _collect()
    result = replay(frame, true="y", pred="p", time="ts", every="2h", reference=REFERENCE, on_snapshot=hook)
    snapshot, report = seen[1]
    rows = [r for r in result.timeline.records() if r["time"] == snapshot.time and r["window"] == "cumulative"]
    w = report.windows["cumulative"]
    by_metric = {(r["metric"], r["class"]): r for r in rows}
    assert by_metric[("acsa", None)]["value"] == w.scores["acsa"]
    assert (by_metric[("acsa", None)]["lower"], by_metric[("acsa", None)]["upper"]) == w.intervals["acsa"]
    assert by_metric[("precision", None)]["corrected"] == w.corrected["precision"]
    assert by_metric[("class_recall", "fraud")]["value"] == w.recall["fraud"]
    flagged = {r["metric"] for r in rows if r["flag"] and "type1" in r["flag"]}
    assert flagged == set(w.flagged("type1"))
    result.write_timeline(tmp_path / "t.json")
    result.write_timeline(tmp_path / "t.parquet")
    written = json.loads((tmp_path / "t.json").read_text())
    table = pq.read_table(tmp_path / "t.parquet").to_pylist()
    assert len(written) == len(table) == len(result.timeline)
    for a, b in zip(written, table, strict=True):
        for key, value in a.items():
            other = b[key]
            assert value == other or (value is None and (other is None or math.isnan(other))), key


def test_without_a_time_column_timed_windows_are_refused(tmp_path: Path) -> None:
    """No time column: default windows without timed ones, snapshots by rows, and a timed window is an error."""
    frame = log_frame(n=3_000)
    result = replay(frame, true="y", pred="p", every=1_000, reference=REFERENCE)
    assert result.windows == ("cumulative", "sliding_1000", "sliding_10000") and len(result.snapshots) == 3
    assert result.first_time is None and all(s.time is None for s in result.snapshots)
    with pytest.raises(ValueError, match="timed windows"):
        replay(frame, true="y", pred="p", windows=[streammon.Timed(60)])
    with pytest.raises(ValueError, match="needs a time column"):
        replay(frame, true="y", pred="p", every="1h")


def _error(source: Any, **columns: Any) -> ReplayError:
    with pytest.raises(ReplayError) as caught:
        replay(source, **{"true": "y", "pred": "p", "time": "ts", **columns})
    return caught.value


def test_malformed_logs_name_the_file_column_and_row(tmp_path: Path) -> None:
    """Missing columns, wrong types, nulls, times going back and truncated files: errors say file, column, row."""
    frame = log_frame(n=2_000)[["ts", "seconds", "y", "p"]]
    good = _write_parquet(frame, tmp_path / "good.parquet", row_group=500)
    e = _error(good, pred="prediction")
    assert (e.file, e.column, e.row) == (str(good), "prediction", None) and "'y'" in str(e)
    e = _error(good, pred="seconds")  # floats are labels only when whole numbers (update_many's rule): a score
    assert e.column == "seconds" and "holds floats" in str(e) and "threshold" in str(e)
    e = _error(good, time="y")
    assert e.column == "y" and "cannot be a time" in str(e)
    nulls = frame.astype({"p": object})
    nulls.loc[1234, "p"] = None
    e = _error(_write_parquet(nulls, tmp_path / "nulls.parquet", row_group=500))
    assert (e.column, e.row) == ("p", 1234) and "null" in str(e)
    back = frame.copy()
    back.loc[1500, "ts"] = back.loc[10, "ts"]
    e = _error(_write_parquet(back, tmp_path / "back.parquet", row_group=500))
    assert (e.file, e.column, e.row) == (str(tmp_path / "back.parquet"), "ts", 1500) and "time order" in str(e)
    earlier, before = (pd.Timestamp(back.loc[i, "ts"]) for i in (1500, 1499))
    assert f"({earlier:%Y-%m-%d %H:%M:%S} UTC) is earlier than" in str(e)  # the dates, not np.float64(...)
    assert f"({before:%Y-%m-%d %H:%M:%S} UTC), the time of the row before" in str(e)
    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    e = _error(truncated)
    assert e.file == str(truncated) and "truncated or corrupt" in str(e)
    csv = tmp_path / "bad.csv"
    frame.assign(ts=frame["seconds"]).to_csv(csv, index=False)
    lines = csv.read_text().splitlines()
    lines[1 + 1800] = lines[1 + 1800].replace(lines[1 + 1800].split(",")[0], "soon", 1)
    csv.write_text("\n".join(lines) + "\n")
    e = _error(csv)
    assert (e.file, e.column, e.row) == (str(csv), "ts", 1800) and "'soon'" in str(e)
    e = _error(csv, true="seconds", time=None)
    assert (e.file, e.column, e.row) == (str(csv), "seconds", None) and "holds floats" in str(e)
    infinite = frame.copy()
    infinite.loc[1700, "seconds"] = np.inf  # float seconds: the only time type that can hold a non-finite value
    e = _error(_write_parquet(infinite, tmp_path / "inf.parquet", row_group=500), time="seconds")
    assert (e.column, e.row) == ("seconds", 1700) and "inf is not a finite number of seconds" in str(e)


def test_the_command_writes_the_timeline_and_nothing_on_error(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`streammon replay` prints the final windows and the degradation alert and writes JSON and Parquet; on a
    malformed log it exits 1 naming the row and writes no file. Reference labels given as text match int labels."""
    from streammon.cli import main

    frame = log_frame()
    path = _write_parquet(frame, tmp_path / "log.parquet")
    out_json, out_parquet = tmp_path / "timeline.json", tmp_path / "timeline.parquet"
    code = main(["replay", str(path), "--true", "y", "--pred", "p", "--time", "ts", "--every", "1h",
                 "--reference", "legit=95,fraud=5", "--baseline", json.dumps(BASELINE), "--json", str(out_json),
                 "--parquet", str(out_parquet)])
    printed = capsys.readouterr().out
    assert code == 0 and "replayed 30000 rows" in printed and "alert degradation [stream] fraud" in printed
    alert = next(line for line in printed.splitlines() if "alert degradation [stream] fraud" in line)
    sample = re.search(r"since sample (\d+) at ([\d.]+) \((\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC\)", alert)
    assert sample is not None, alert  # data time as seconds and as the UTC date
    stamp = datetime.fromtimestamp(float(sample.group(2)), tz=timezone.utc)
    assert f"{stamp:%Y-%m-%d %H:%M:%S}" == sample.group(3)
    assert len(json.loads(out_json.read_text())) == pq.read_metadata(out_parquet).num_rows > 0
    ints = _write_parquet(frame[["seconds", "yi", "pi"]], tmp_path / "ints.parquet")
    assert main(["replay", str(ints), "--true", "yi", "--pred", "pi", "--reference", "0=95,1=5"]) == 0
    assert "classes [0, 1]" in capsys.readouterr().out
    bad = frame.astype({"y": object})
    bad.loc[777, "y"] = None
    broken = _write_parquet(bad, tmp_path / "broken.parquet")
    target = tmp_path / "never.json"
    assert main(["replay", str(broken), "--true", "y", "--pred", "p", "--time", "ts", "--json", str(target)]) == 1
    assert "column 'y', row 777" in capsys.readouterr().err
    assert not target.exists() and not list(tmp_path.glob(".never*"))


def test_streammon_replay_is_lazy() -> None:
    """`import streammon` imports neither pyarrow nor streammon.logs; streammon.replay works on first use."""
    code = ("import sys, streammon; assert 'pyarrow' not in sys.modules and 'streammon.logs' not in sys.modules; "
            "import pyarrow as pa; r = streammon.replay(pa.table({'y': [1, 0], 'p': [1, 1]}), true='y', pred='p'); "
            "print(r.samples)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.stdout.strip() == "2"


def test_the_top_level_replay_takes_every_option_of_the_replayer() -> None:
    """``streammon.replay`` repeats ``streammon.logs.replayer.replay``'s signature (for IDEs and help()): the same
    parameter names, kinds and defaults, so an option added there cannot be missing here."""
    import inspect

    import streammon
    from streammon.logs.replayer import replay as replayer

    top, inner = inspect.signature(streammon.replay).parameters, inspect.signature(replayer).parameters
    assert list(top) == list(inner)
    assert all(top[name].kind == inner[name].kind and top[name].default == inner[name].default for name in top)
