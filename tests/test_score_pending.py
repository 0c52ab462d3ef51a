"""Scores of predictions whose labels come later (#28): a prediction's score waits in the pending store and is
counted with its label when the join happens; the prediction side tallies every prediction's score by predicted
class at once; scores count against ``max_pending_bytes``, leave with their records, and survive save/load."""

from __future__ import annotations

import math

import numpy as np
import pytest

from streammon import Cumulative, Monitor, Sliding, Timed
from streammon.pending.sizes import record_bytes, score_bytes
from tests.test_score_windows import assert_tally


def predict_step(m: Monitor, step: int, keys: list[str], preds: list[str], scores: np.ndarray, *,
                 t: float) -> list[tuple[str, str, float | None]]:
    """Predictions made one of three ways (unscored one by one, a scored batch, scored one by one)."""
    if step % 3 == 1:
        m.predict_many(keys, preds, t=t, y_score=scores)
    for key, p, s in zip(keys, preds, scores.tolist(), strict=True):
        if step % 3 != 1:
            m.predict(key, p, t=t, y_score=None if step % 3 == 0 else s)
    return [(key, p, None if step % 3 == 0 else s) for key, p, s in zip(keys, preds, scores.tolist(), strict=True)]


def test_a_label_joins_its_predictions_score() -> None:
    """Scored and unscored predictions, labelled one by one and in batches, some never: each window's labelled tally
    is the recount of the (true class, score) pairs the joins produced, and the prediction side's the recount of
    every prediction's (predicted class, score) in the window."""
    rng = np.random.default_rng(11)
    labels = ["legit", "fraud"]
    m = Monitor([Cumulative(), Sliding(40), Timed(100, buckets=10)], reference={"legit": 9, "fraud": 1})
    predicted: dict[str, tuple[int, float | None, float]] = {}
    joined: list[tuple[float, int, tuple[float, ...] | None]] = []
    made: list[tuple[float, int, tuple[float, ...] | None]] = []
    t = 0.0
    for step in range(30):
        n = int(rng.integers(1, 12))
        keys = [f"k{step}-{i}" for i in range(n)]
        scores = rng.random(n)
        preds = (scores > 0.5).astype(int)
        t += 3.0
        for key, p, score in predict_step(m, step, keys, [labels[p] for p in preds], scores, t=t):
            predicted[key] = (labels.index(p), score, t)
            made.append((t, labels.index(p), None if score is None else (score,)))
        waiting = [k for k in predicted if rng.random() < 0.5]
        if not waiting:
            continue
        truth = rng.integers(2, size=len(waiting))
        t += 1.0
        if step % 2:
            m.label_many(waiting, [labels[y] for y in truth], t=t)
        else:
            for key, y in zip(waiting, truth, strict=True):
                m.label(key, labels[y], t=t)
        for key, y in zip(waiting, truth, strict=True):
            _, s, _ = predicted.pop(key)
            joined.append((t, int(y), None if s is None else (s,)))
    r = m.report()
    # the positive class is "fraud" (index 1), the reference minority
    def scored(items: list[tuple[float, int, tuple[float, ...] | None]]) -> list[tuple[int, tuple[float, ...]]]:
        return [(c, row) for _, c, row in items if row is not None]
    newest = math.floor(t / 10.0)
    for name, pick in (("cumulative", lambda xs: xs), ("sliding_40", lambda xs: xs[-40:]),
                       ("timed_100s", lambda xs: [x for x in xs if math.floor(x[0] / 10.0) > newest - 10])):
        w = r.windows[name]
        assert_tally(w.score_tally, scored(pick(joined)), 2, 1)
        assert_tally(w.prediction_score_tally, scored(pick(made)), 2, 1)


def test_scores_count_against_max_pending_bytes_and_leave_with_their_records() -> None:
    """A scored prediction accounts for its score's bytes too, so fewer fit under ``max_pending_bytes``; evicted,
    expired and joined predictions give their scores' bytes back, and an evicted one's score is not counted."""
    per = record_bytes(1_000) + score_bytes(1)
    m = Monitor([Cumulative()], reference={"x": 3, "y": 1}, max_pending_bytes=max(10 * per, 2000), label_ttl=50.0)
    bound = max(10 * per, 2000)
    m.predict_many(list(range(1_000, 1_100)), ["x"] * 100, t=0.0, y_score=np.full(100, 0.2))
    records = m._records
    assert records.held_bytes <= bound
    assert records.pending == bound // per and len(records.scores) == records.pending
    m.label_many(list(range(1_000, 1_100)), ["y"] * 100, t=1.0)
    assert m.report().windows["cumulative"].n_scored == bound // per  # the evicted ones are orphans
    assert not records.scores
    m.predict_many([5, 6], ["x", "y"], t=2.0, y_score=[0.1, 0.9])
    m.update("x", "x", t=100.0)  # both expire
    m.report()
    assert not records.scores and records.pending == 0


def test_pending_scores_survive_save_and_load() -> None:
    """The scores of predictions still pending, and the prediction side's tallies, are in the state file: a label
    after loading joins its score exactly as it would have without the round trip."""
    m = Monitor([Cumulative(), Sliding(5)], classes=["a", "b", "c"])
    rows = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]])
    m.predict_many(["p1", "p2", "p3"], ["a", "c", "b"], y_score=rows, t=1.0)
    m.predict("p4", "a", y_score=[0.5, 0.25, 0.25], t=2.0)
    m.label("p2", "c", t=3.0)
    text = m.dumps()
    restored = Monitor.loads(text)
    assert restored.dumps() == text
    for target in (m, restored):
        target.label_many(["p1", "p3", "p4"], ["a", "a", "b"], t=4.0)
    a, b = m.report().windows["sliding_5"], restored.report().windows["sliding_5"]
    assert a.score_tally is not None and b.score_tally is not None
    np.testing.assert_array_equal(a.score_tally.hist, b.score_tally.hist)
    assert b.n_scored == 4
    assert_tally(b.score_tally, [(2, tuple(rows[1])), (0, tuple(rows[0])), (0, tuple(rows[2])),
                                 (1, (0.5, 0.25, 0.25))], 3, 0)


def test_a_refused_prediction_score_changes_nothing() -> None:
    """``predict``/``predict_many`` refuse bad scores as ``update`` does: the state file is byte-identical after."""
    m = Monitor([Cumulative(), Timed(60)], classes=["a", "b", "c"])
    m.predict_many(["k1"], ["a"], y_score=[[0.2, 0.3, 0.5]], t=1.0)
    before = m.dumps()
    with pytest.raises(ValueError, match=r"sums to 0\.5"):
        m.predict("k2", "b", y_score=[0.2, 0.2, 0.1], t=2.0)
    with pytest.raises(ValueError, match=r"y_score\[0, 1\] is nan"):
        m.predict_many(["k2", "k3"], ["a", "b"], y_score=[[0.5, math.nan, 0.5], [0.2, 0.3, 0.5]], t=2.0)
    with pytest.raises(ValueError, match="one score"):
        m.predict_many(["k2", "k3"], ["a", "b"], y_score=[[0.5, 0.0, 0.5]], t=2.0)
    with pytest.raises(ValueError, match=r"its 3 class probabilities in the order of Monitor\.labels"):
        m.predict("k2", "new", y_score=0.4, t=2.0)
    assert m.dumps() == before
