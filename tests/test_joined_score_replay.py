"""Scores in a joined replay (#28 item 1): the predictions log's score columns go to ``predict_many`` with their
predictions. Checked against an independent path — the same rows joined by hand in Python (a dict of keys) and
replayed as a log of labelled predictions — and against scikit-learn on the joined samples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from streammon import Cumulative, Monitor, Sliding
from streammon.logs import replay
from streammon.logs.errors import ReplayError


def windows() -> list[Cumulative | Sliding]:
    return [Cumulative(), Sliding(300)]  # a window serves one monitor: new ones for each replay


def logs(k: int, n: int = 2_000, seed: int = 5) -> tuple[pa.Table, pa.Table]:
    """A predictions log (id, p, t, s0..) with class probabilities, and a labels log (id, y, t) in label-time order:
    about 80 % of the predictions labelled after a random delay (ties with a prediction's time included), the rest
    pending, and a few orphan labels."""
    rng = np.random.default_rng(seed)
    classes = np.array([f"c{i}" for i in range(k)])
    true = rng.choice(k, size=n, p=np.linspace(1, 3, k) / np.linspace(1, 3, k).sum())
    logits = rng.normal(size=(n, k)) + 1.5 * np.eye(k)[true]
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    t = np.sort(rng.integers(0, n // 2, size=n)).astype(np.float64)
    keys = np.array([f"k{i}" for i in rng.permutation(n)])
    preds: dict[str, Any] = {"id": keys, "p": classes[proba.argmax(1)], "t": t}
    preds.update({f"s{i}": proba[:, i] for i in range(k)})
    labelled = np.flatnonzero(rng.random(n) < 0.8)
    label_t = t[labelled] + rng.integers(0, 60, size=len(labelled))
    orphans = np.array([f"orphan{i}" for i in range(5)])
    ids = np.concatenate([keys[labelled], orphans])
    times = np.concatenate([label_t, rng.integers(0, n // 2, size=5).astype(np.float64)])
    ys = np.concatenate([classes[true[labelled]], classes[:1].repeat(5)])
    order = np.argsort(times, kind="stable")
    return pa.table(preds), pa.table({"id": ids[order], "y": ys[order], "t": times[order]})


def joined_by_hand(preds: pa.Table, labels: pa.Table, k: int) -> pa.Table:
    """The labelled predictions in the order their labels arrive, at the label's time, with their scores: a
    plain log of labelled predictions, joined with a Python dict (every label here comes at or after its
    prediction's time, so each label that has a prediction joins it)."""
    score_names = [f"s{i}" for i in range(k)]
    by_key = {key: row for row, key in enumerate(preds["id"].to_pylist())}
    rows = [(by_key[key], y, t) for key, y, t in zip(labels["id"].to_pylist(), labels["y"].to_pylist(),
                                                   labels["t"].to_pylist(), strict=True) if key in by_key]
    at = np.array([r for r, _, _ in rows])
    table: dict[str, Any] = {"y": [y for _, y, _ in rows], "p": preds["p"].take(at), "t": [t for _, _, t in rows]}
    table.update({name: preds[name].take(at) for name in score_names})
    return pa.table(table)


def score_arg(k: int) -> str | list[str]:
    return "s0" if k == 2 else [f"s{i}" for i in range(k)]  # binary: c0, the reference minority, is positive


def reference(k: int) -> dict[str, int]:
    return {f"c{i}": 10 * (i + 1) for i in range(k)}


@pytest.mark.parametrize("k", [2, 3])
def test_joined_scores_match_the_rows_joined_by_hand(k: int) -> None:
    """A joined replay with scores (small batches, so chunks are cut inside files) gives every window the score
    tallies and score metrics of the plain replay of the same rows joined by hand."""
    preds, labels = logs(k)
    joined = replay(preds, true="y", pred="p", time="t", key="id", labels=labels, score=score_arg(k),
                    reference=reference(k), windows=windows(), every=250, batch_rows=97)
    plain = replay(joined_by_hand(preds, labels, k), true="y", pred="p", time="t", score=score_arg(k),
                   reference=reference(k), windows=windows(), every=250, batch_rows=113)
    for name in ("cumulative", "sliding_300"):
        a, b = joined.report.windows[name], plain.report.windows[name]
        assert a.score_tally is not None and b.score_tally is not None
        assert a.n_scored == b.n_scored == a.n > 0
        np.testing.assert_array_equal(a.score_tally.hist, b.score_tally.hist)
        np.testing.assert_allclose(a.score_tally.sums, b.score_tally.sums, rtol=1e-9, atol=1e-12)
        for metric in ("roc_auc", "average_precision", "brier"):
            assert a.scores[metric] == pytest.approx(b.scores[metric], rel=1e-9), (name, metric)
            assert a.corrected[metric] == pytest.approx(b.corrected[metric], rel=1e-9, nan_ok=True), (name, metric)
    stats = joined.report.windows["cumulative"].label_stats
    assert (stats.predictions, stats.orphans) == (preds.num_rows, 5)


@pytest.mark.parametrize("k", [2, 3])
def test_every_prediction_score_is_tallied_by_predicted_class(k: int) -> None:
    """The label-free side: every prediction's score is counted at once, by its predicted class (a recount)."""
    preds, labels = logs(k, n=900)
    result = replay(preds, true="y", pred="p", time="t", key="id", labels=labels, score=score_arg(k),
                    reference=reference(k), windows=[Cumulative()], batch_rows=64)
    tally = result.report.windows["cumulative"].prediction_score_tally
    assert tally is not None and tally.n_scored == preds.num_rows
    predicted = preds["p"].to_pylist()
    recount = [predicted.count(label) for label in result.classes]
    assert tally.class_counts.tolist() == recount


def test_binary_roc_auc_and_average_precision_against_scikit_learn() -> None:
    """The cumulative window's ROC AUC and average precision within 0.002 of scikit-learn's on the joined samples
    (binned tallies), its Brier score (exact sums) within 1e-9."""
    preds, labels = logs(2, n=3_000, seed=11)
    result = replay(preds, true="y", pred="p", time="t", key="id", labels=labels, score="s0",
                    reference=reference(2), windows=[Cumulative()], batch_rows=500)
    rows = joined_by_hand(preds, labels, 2)
    positive = np.array(rows["y"].to_pylist()) == "c0"
    s = rows["s0"].to_numpy()
    scores = result.report.windows["cumulative"].scores
    assert scores["roc_auc"] == pytest.approx(roc_auc_score(positive, s), abs=0.002)
    assert scores["average_precision"] == pytest.approx(average_precision_score(positive, s), abs=0.002)
    assert scores["brier"] == pytest.approx(float(np.mean((s - positive) ** 2)), abs=1e-9)


def test_bad_score_columns_of_a_joined_replay_are_refused_naming_them(tmp_path: Path) -> None:
    """Out of range, NaN, null: the predictions file, the column and the row are named; a missing score column is
    named as one; K = 3 probabilities given as 2 columns are refused by the monitor with their rows."""
    preds, labels = logs(2, n=200)
    for bad, says in ((1.5, "score 1.5 is not a probability"), (float("nan"), "score nan is not a probability"),
                      (None, "null score")):
        path = tmp_path / "preds.parquet"
        values = preds["s0"].to_pylist()
        values[137] = bad
        pq.write_table(preds.set_column(preds.schema.get_field_index("s0"), "s0", pa.array(values, pa.float64())),
                       path, row_group_size=50)
        with pytest.raises(ReplayError) as error:
            replay(path, true="y", pred="p", time="t", key="id", labels=labels, score="s0", reference=reference(2),
                   batch_rows=40)
        assert (error.value.file, error.value.column, error.value.row) == (str(path), "s0", 137)
        assert says in str(error.value)
    with pytest.raises(ReplayError, match=r"no column 'score' \(the score 1 column\)"):
        replay(preds, true="y", pred="p", key="id", labels=labels, score="score", reference=reference(2))
    preds3, labels3 = logs(3, n=200)
    refused = (r"row 0: rows 0–199 were refused by the monitor: \(n, 2\) scores for a monitor of 3 classes: "
               "pass one column per class")
    with pytest.raises(ReplayError, match=refused):
        replay(preds3, true="y", pred="p", key="id", labels=labels3, score=["s0", "s1"], reference=reference(3))


def test_command_line_joined_replay_with_scores(tmp_path: Path) -> None:
    """``streammon replay PREDS --key id --labels LABELS --score s0 --score s1 --score s2``: the saved monitor holds
    the tallies of the plain replay of the rows joined by hand."""
    from streammon.cli import main

    preds, labels = logs(3, n=1_200)
    pq.write_table(preds, tmp_path / "preds.parquet")
    pq.write_table(labels, tmp_path / "labels.parquet")
    saved = tmp_path / "monitor.json"
    argv = ["replay", str(tmp_path / "preds.parquet"), "--key", "id", "--labels", str(tmp_path / "labels.parquet"),
            "--true", "y", "--pred", "p", "--time", "t", "--reference", "c0=10,c1=20,c2=30", "--window", "cumulative",
            "--save", str(saved), "--score", "s0", "--score", "s1", "--score", "s2"]
    assert main(argv) == 0
    window = Monitor.load(saved).report().windows["cumulative"]
    plain = replay(joined_by_hand(preds, labels, 3), true="y", pred="p", time="t", score=score_arg(3),
                   reference=reference(3), windows=[Cumulative()]).report.windows["cumulative"]
    assert window.score_tally is not None and plain.score_tally is not None
    np.testing.assert_array_equal(window.score_tally.hist, plain.score_tally.hist)
    assert window.scores["roc_auc"] == pytest.approx(plain.scores["roc_auc"], rel=1e-9)
