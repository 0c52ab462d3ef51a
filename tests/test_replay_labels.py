"""Replaying a predictions log and a labels log joined on a key: equal to predict/label calls by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")

import streammon  # noqa: E402
from streammon.cli import main  # noqa: E402
from streammon.logs import ReplayError, replay  # noqa: E402

REFERENCE = {"legit": 9, "fraud": 1}


def _logs(n: int = 6_000, seed: int = 0) -> tuple[Any, Any, dict[str, int]]:
    """Predictions (id, p, t) and labels (id, y, lt) with delays, never-labelled keys, orphans and duplicates."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.random(n) * 3_000.0).round(1)  # ties between the two streams happen
    fraud = rng.random(n) < 0.1
    truth = np.where(fraud, "fraud", "legit")
    pred = np.where(rng.random(n) < 0.9, truth, np.where(fraud, "legit", "fraud"))
    preds = pd.DataFrame({"id": np.arange(n), "p": pred, "t": t})
    labelled = rng.random(n) < 0.8
    delay = np.where(rng.random(n) < 0.05, 0.0, rng.random(n) * 200.0).round(1)  # some at the prediction's time
    rows = [(float(t[i] + delay[i]), int(i), str(truth[i])) for i in np.flatnonzero(labelled)]
    orphans = [(float(x), int(n + k), "legit") for k, x in enumerate(rng.random(37) * 3_000.0)]
    dup_keys = rng.choice(np.flatnonzero(labelled), 25, replace=False)
    dups = [(float(t[i] + delay[i] + 500.0), int(i), str(truth[i])) for i in dup_keys]
    events = sorted(rows + orphans + dups)
    labels = pd.DataFrame({"id": [e[1] for e in events], "y": [e[2] for e in events], "lt": [e[0] for e in events]})
    return preds, labels, {"predictions": n, "labelled": int(labelled.sum()), "orphans": 37, "duplicates": 25}


def _by_hand(preds: Any, labels: Any) -> Any:
    """A monitor fed predict_many/label_many by hand: every event sorted by (time, predictions first)."""
    events = sorted([(t, 0, k, v) for k, v, t in zip(preds["id"], preds["p"], preds["t"], strict=True)]
                    + [(t, 1, k, v) for k, v, t in zip(labels["id"], labels["y"], labels["lt"], strict=True)])
    monitor = streammon.Monitor(reference=REFERENCE, clock=lambda: 0.0)
    start = 0
    while start < len(events):
        kind, stop = events[start][1], start
        while stop < len(events) and events[stop][1] == kind:
            stop += 1
        run = events[start:stop]
        call = monitor.predict_many if kind == 0 else monitor.label_many
        call([e[2] for e in run], [e[3] for e in run], t=np.array([e[0] for e in run]))
        start = stop
    return monitor


def _stats(report: Any, window: str = "cumulative") -> tuple[int, ...]:
    s = report.windows[window].label_stats
    return s.predictions, s.labelled, s.pending, s.orphans, s.duplicates


def test_joined_replay_equals_predict_and_label_calls_by_hand(tmp_path: Path) -> None:
    """Parquet predictions and CSV labels, read in small batches, give the hand-fed monitor's report: the
    confusion of every window and the label counts; snapshots every 10 minutes of data time."""
    preds, labels = _logs()[:2]
    pq.write_table(pa.Table.from_pandas(preds, preserve_index=False), tmp_path / "p.parquet", row_group_size=700)
    labels.to_csv(tmp_path / "labels.csv", index=False)
    result = replay(tmp_path / "p.parquet", pred="p", time="t", key="id", labels=tmp_path / "labels.csv", true="y",
                    label_time="lt", every="10m", reference=REFERENCE, batch_rows=512)
    want = _by_hand(preds, labels).report()
    got = result.report
    assert set(got.windows) == set(want.windows)
    for name in want.windows:
        assert got.windows[name].confusion.to_dict() == want.windows[name].confusion.to_dict(), name
        assert _stats(got, name) == _stats(want, name), name
    assert result.samples == len(preds) + len(labels)
    assert [s.time for s in result.snapshots] == sorted({(np.floor(x / 600) + 1) * 600 for x in
                                                          np.concatenate([preds["t"], labels["lt"]])})
    assert result.first_time == 0.0 or result.first_time == min(preds["t"].min(), labels["lt"].min())


def test_orphans_duplicates_and_never_labelled_are_counted_as_a_recount_says() -> None:
    preds, labels, counts = _logs(n=3_000, seed=1)
    result = replay(preds, pred="p", time="t", key="id", labels=labels, true="y", label_time="lt", every=1_000)
    s = result.report.windows["cumulative"].label_stats
    assert (s.predictions, s.labelled, s.orphans, s.duplicates) == (
        counts["predictions"], counts["labelled"], counts["orphans"], counts["duplicates"])
    assert s.pending == counts["predictions"] - counts["labelled"]
    joined = labels[labels["id"] < len(preds)].drop_duplicates("id")
    truth = dict(zip(joined["id"], joined["y"], strict=True))
    recount: dict[str, dict[str, int]] = {}
    for key, p in zip(preds["id"], preds["p"], strict=True):
        if key in truth:
            row = recount.setdefault(truth[key], {})
            row[p] = row.get(p, 0) + 1
    assert result.report.windows["cumulative"].confusion.to_dict() == recount


def test_a_label_before_its_prediction_is_an_orphan_and_ties_join() -> None:
    preds = pa.table({"id": ["a", "b"], "p": [1, 0], "t": [10.0, 10.0]})
    labels = pa.table({"id": ["b", "a"], "y": [0, 1], "t": [5.0, 10.0]})
    s = replay(preds, pred="p", time="t", key="id", labels=labels, true="y").report.windows[
        "cumulative"].label_stats
    assert (s.labelled, s.orphans, s.pending) == (1, 1, 1)


def test_untimed_replays_all_predictions_then_all_labels() -> None:
    preds = pa.table({"id": [1, 2, 3], "p": ["x", "y", "x"]})
    labels = pa.table({"id": [3, 1, 9], "y": ["x", "y", "x"]})
    result = replay(preds, pred="p", key="id", labels=labels, true="y")
    s = result.report.windows["cumulative"].label_stats
    assert (s.predictions, s.labelled, s.orphans, s.pending) == (3, 2, 1, 1)
    assert result.report.windows["cumulative"].confusion.to_dict() == {"x": {"x": 1}, "y": {"x": 1}}


def test_a_labels_file_missing_a_column_is_named(tmp_path: Path) -> None:
    preds, labels = _logs(n=200)[:2]
    labels.drop(columns=["y"]).to_csv(tmp_path / "labels.csv", index=False)
    with pytest.raises(ReplayError) as caught:
        replay(preds, pred="p", time="t", key="id", labels=tmp_path / "labels.csv", true="y", label_time="lt")
    assert caught.value.column == "y" and caught.value.file == str(tmp_path / "labels.csv")
    assert "labels.csv" in str(caught.value) and "'y'" in str(caught.value)
    with pytest.raises(ReplayError, match="column 'lt'"):
        replay(preds, pred="p", time="t", key="id", labels=labels.drop(columns=["lt"]), true="y", label_time="lt")


def test_joining_needs_key_labels_and_true() -> None:
    preds, labels = _logs(n=50)[:2]
    with pytest.raises(ValueError, match="key, labels and true"):
        replay(preds, pred="p", time="t", labels=labels, true="y")
    with pytest.raises(ValueError, match="key, labels and true"):
        replay(preds, pred="p", time="t", key="id", labels=labels)


def test_cli_key_and_labels_round_trip_writes_the_timeline(tmp_path: Path, capsys: Any) -> None:
    preds, labels = _logs(n=2_000)[:2]
    pq.write_table(pa.Table.from_pandas(preds, preserve_index=False), tmp_path / "p.parquet")
    labels.to_csv(tmp_path / "labels.csv", index=False)
    out = tmp_path / "timeline.json"
    code = main(["replay", str(tmp_path / "p.parquet"), "--pred", "p", "--true", "y", "--time", "t", "--key", "id",
                 "--labels", str(tmp_path / "labels.csv"), "--label-time", "lt", "--every", "15m",
                 "--reference", "legit=9,fraud=1", "--json", str(out)])
    assert code == 0, capsys.readouterr().err
    assert f"replayed {len(preds) + len(labels)} rows" in capsys.readouterr().out
    rows = json.loads(out.read_text())
    assert rows and {"time", "window", "metric"} <= set(rows[0])
    want = replay(preds, pred="p", time="t", key="id", labels=labels, true="y", label_time="lt", every="15m",
                  reference=REFERENCE)
    assert len(rows) == len(want.timeline)
    assert sorted({row["time"] for row in rows}) == [s.time for s in want.snapshots]


def test_cli_key_without_labels_is_refused(tmp_path: Path, capsys: Any) -> None:
    with pytest.raises(SystemExit):
        main(["replay", str(tmp_path / "p.parquet"), "--pred", "p", "--true", "y", "--key", "id"])
    assert "--key and --labels go together" in capsys.readouterr().err
