"""streammon.client's ``y_score=`` (#28 item 1) against a real server (``streammon serve``, in process): the scores
the client sends reach the server's monitor exactly (its score tallies and metrics equal those of a local
``Monitor`` fed the same rows, and scikit-learn's on those rows), a bad score is refused at the call with nothing
buffered (and the server's own checks refuse it too), and scored and unscored rows share a buffer."""

from __future__ import annotations

import json
import math
import random
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import brier_score_loss, roc_auc_score

from streammon import Cumulative, Monitor, Sliding
from streammon.client import Client, checks
from streammon.counting.score_input import as_score_row, as_score_rows
from streammon.serve.config import parse
from streammon.serve.run import Server

FAST = {"flush_interval": 0.05, "max_backoff": 0.1, "timeout": 5.0}
CONFIG = ('[server]\nlisten = "127.0.0.1:0"\nstate_dir = "{state}"\ncheckpoint_every = 60.0\n'
          '[models.fraud]\nwindows = ["cumulative", "sliding:50"]\npositive = "fraud"\n'
          '[models.three]\nwindows = ["cumulative", "sliding:50"]\nclasses = ["a", "b", "c"]\n'
          '[models.joined]\nwindows = ["cumulative", "sliding:50"]\npositive = "fraud"\n')


@contextmanager
def serving(state: Path) -> Iterator[Server]:
    server = Server(parse(CONFIG.format(state=state)))
    try:
        yield server
    finally:
        server.stop(grace=2.0)


def _windows(url: str, model: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{url}/v1/models/{model}/report", timeout=10) as answer:
        windows = json.loads(answer.read())["windows"]
    return [windows[name] for name in sorted(windows)]


def _same(served: list[dict[str, Any]], local: Monitor) -> None:
    """The server's windows equal the local monitor's: confusion, scored count and every score metric."""
    mine = local.report().to_dict()["windows"]
    for window, name in zip(served, sorted(mine), strict=True):
        ours = mine[name]
        assert window["confusion"] == ours["confusion"] and window["n_scored"] == ours["n_scored"]
        for metric in ("roc_auc", "average_precision", "brier", "log_loss", "ece"):
            assert window["scores"][metric] == pytest.approx(ours["scores"][metric], rel=1e-9, abs=1e-12), metric


def _binary_rows(n: int, seed: int) -> list[tuple[str, str, float]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        y = "fraud" if rng.random() < 0.3 else "legit"
        s = min(1.0, max(0.0, rng.gauss(0.65 if y == "fraud" else 0.35, 0.2)))
        out.append((y, "fraud" if s > 0.5 else "legit", s))
    return out


def test_binary_scores_reach_the_server_exactly(tmp_path: Path) -> None:
    """Scores by ``update`` (floats, NumPy floats, 0 and 1), ``update_many`` (a 1-D array), ``predict`` and
    ``predict_many`` with their labels later: the server's tallies equal a local monitor's fed the same rows, its
    scored count a recount, its ROC AUC and Brier score scikit-learn's on the same rows (within the bins' error)."""
    rows = _binary_rows(800, 1)
    rows[:2] = [("fraud", "fraud", 1), ("legit", "legit", 0)]  # ints: sent as 1.0 and 0.0
    local = Monitor([Cumulative(), Sliding(50)], positive="fraud")
    with serving(tmp_path) as server:
        client = Client(server.url, "fraud", batch_size=64, **FAST)
        for i, (y, p, s) in enumerate(rows[:200]):
            client.update(y, p, y_score=np.float64(s) if i % 3 == 0 else s)
        part = rows[200:400]
        client.update_many([y for y, _, _ in part], [p for _, p, _ in part], y_score=np.array([s for *_, s in part]))
        for i, (_, p, s) in enumerate(rows[400:600]):
            client.predict(f"tx-{i}", p, y_score=s)
        part = rows[600:]
        client.predict_many([f"tx-{i}" for i in range(200, 400)], [p for _, p, _ in part],
                            y_score=[s for *_, s in part])
        client.label_many([f"tx-{i}" for i in range(400)], [y for y, _, _ in rows[400:]])
        assert client.flush(20) and (client.sent, client.rejected, client.dropped) == (1200, 0, 0)
        served = _windows(server.url, "fraud")
        client.close()
    for y, p, s in rows:
        local.update(y, p, y_score=float(s))
    _same(served, local)
    cumulative = next(w for w in served if w["kind"] == "cumulative")
    truth = [int(y == "fraud") for y, _, _ in rows]
    scores = [float(s) for *_, s in rows]
    assert cumulative["n_scored"] == len(rows)
    assert cumulative["scores"]["roc_auc"] == pytest.approx(roc_auc_score(truth, scores), abs=0.002)
    assert cumulative["scores"]["brier"] == pytest.approx(brier_score_loss(truth, scores), abs=0.002)


def _rows_of_three(n: int, seed: int) -> list[tuple[str, str, list[float]]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        y = int(rng.choice(3, p=[0.6, 0.3, 0.1]))
        logits = rng.normal(size=3)
        logits[y] += 1.5
        p = np.exp(logits) / np.exp(logits).sum()
        out.append(("abc"[y], "abc"[int(p.argmax())], p.tolist()))
    return out


def test_rows_of_class_probabilities_reach_the_server_exactly(tmp_path: Path) -> None:
    """K = 3: rows as lists, tuples and 1-D arrays (``update``), an (n, 3) array (``update_many``): the server's
    tallies equal a local monitor's, its macro one-vs-rest ROC AUC scikit-learn's within the bins' error."""
    rows = _rows_of_three(600, 2)
    local = Monitor([Cumulative(), Sliding(50)], classes=["a", "b", "c"])
    with serving(tmp_path) as server:
        client = Client(server.url, "three", batch_size=50, **FAST)
        forms = (list, tuple, np.array)
        for i, (y, p, s) in enumerate(rows[:300]):
            client.update(y, p, y_score=forms[i % 3](s))
        part = rows[300:]
        client.update_many(np.array([y for y, _, _ in part]), [p for _, p, _ in part],
                           y_score=np.array([s for *_, s in part]))
        assert client.flush(20) and (client.sent, client.rejected) == (600, 0)
        served = _windows(server.url, "three")
        client.close()
    for y, p, s in rows:
        local.update(y, p, y_score=s)
    _same(served, local)
    cumulative = next(w for w in served if w["kind"] == "cumulative")
    assert cumulative["n_scored"] == 600
    expected = roc_auc_score([y for y, _, _ in rows], [s for *_, s in rows], multi_class="ovr", labels=["a", "b", "c"])
    assert cumulative["scores"]["roc_auc"] == pytest.approx(expected, abs=0.002)


def test_scored_and_unscored_rows_share_a_buffer_in_order(tmp_path: Path) -> None:
    """Rows with and without scores, and in both binary forms (a number, a row of 2), interleaved in one buffer,
    samples without then with times, and predictions whose labels come in the same chunk: every batch is
    acknowledged (the lane cuts one where the form changes) and the server counts them in the order given — its
    windows (a sliding one of 50 too) equal a local monitor's fed the same sequence."""
    rows = _binary_rows(600, 3)
    rng = random.Random(4)
    forms = [rng.choice(("none", "number", "row")) for _ in rows]
    later = time.time() + 3600.0  # after the server's stamps of the rows without a time

    def given_score(form: str, s: float) -> Any:
        return None if form == "none" else s if form == "number" else [1.0 - s, s]

    def when(i: int) -> float | None:
        return None if i < 300 else later + i

    local = Monitor([Cumulative(), Sliding(50)], positive="fraud")
    joined = Monitor([Cumulative(), Sliding(50)], positive="fraud")
    with serving(tmp_path) as server:
        client = Client(server.url, "fraud", batch_size=10_000, flush_interval=30.0)  # one chunk: the lane cuts it
        predictions = Client(server.url, "joined", batch_size=10_000, flush_interval=30.0)
        for i, ((y, p, s), form) in enumerate(zip(rows, forms, strict=True)):
            client.update(y, p, t=when(i), y_score=given_score(form, s))
            predictions.predict(i, p, y_score=given_score(form, s))
            predictions.label(i, y)
        assert client.flush(20) and predictions.flush(20)
        assert (client.sent, client.rejected, predictions.sent, predictions.rejected) == (600, 0, 1200, 0)
        served, served_joined = _windows(server.url, "fraud"), _windows(server.url, "joined")
        client.close()
        predictions.close()
    for i, ((y, p, s), form) in enumerate(zip(rows, forms, strict=True)):
        local.update(y, p, t=when(i), y_score=given_score(form, s))
        joined.update(y, p, y_score=given_score(form, s))
    _same(served, local)
    _same(served_joined, joined)
    assert served[0]["n_scored"] == sum(form != "none" for form in forms) == served_joined[0]["n_scored"]


BAD = [
    (math.nan, ValueError, r"y_score nan is not a probability: expected a finite number in \[0, 1\]"),
    (math.inf, ValueError, r"y_score inf is not a probability"),
    (-0.1, ValueError, r"y_score -0.1 is not a probability"),
    (1.5, ValueError, r"y_score 1.5 is not a probability"),
    (2, ValueError, r"y_score 2 is not a probability"),
    (2**1100, ValueError, r"is not a probability"),
    (np.float32("nan"), ValueError, r"is not a probability"),
    (True, TypeError, r"y_score True is a bool, not a probability"),
    (np.bool_(False), TypeError, r"is a bool, not a probability"),
    ("0.5", TypeError, r"y_score '0.5' \(str\) is not a score: expected a number in \[0, 1\]"),
    ([0.5], ValueError, r"y_score \[0.5\] has 1 probabilities: expected a number .* or a row of 2 to 64"),
    ([1 / 65] * 65, ValueError, r"has 65 probabilities"),
    ([0.5, 0.6], ValueError, r"y_score \[0.5, 0.6\] sums to 1.1: a row of class probabilities must sum to 1"),
    ([0.2, math.nan, 0.8], ValueError, r"y_score nan is not a probability"),
    ([0.5, None], TypeError, r"y_score None \(NoneType\) is not a score"),
    (np.array([[0.5, 0.5]]), TypeError, r"is not a score"),
]


@pytest.mark.parametrize(("score", "error", "message"), BAD)
@pytest.mark.parametrize("call", ["update", "predict", "update_many", "predict_many"])
def test_a_bad_score_is_refused_at_the_call_with_nothing_buffered(call: str, score: Any, error: type[Exception],
                                                                  message: str) -> None:
    """Each bad score raises at the call, naming it and what was expected; for a batch, whose other rows are
    good, nothing of it is buffered. The server's own checks refuse each of them too (but a bool row: see
    ``checks.score``)."""
    client = Client("http://127.0.0.1:9", "fraud", flush_interval=60)  # nothing listens on port 9
    client.update("legit", "legit", y_score=0.5)
    many = call.endswith("_many")
    if many:
        message = message.replace("y_score ", r"y_score\[1\] ", 1)
    with pytest.raises(error, match=message):
        if call == "update":
            client.update("legit", "fraud", y_score=score)
        elif call == "predict":
            client.predict("tx-1", "fraud", y_score=score)
        elif call == "update_many":
            client.update_many(["legit", "fraud"], ["legit", "fraud"], y_score=[0.5, score])
        else:
            client.predict_many(["tx-1", "tx-2"], ["legit", "fraud"], y_score=[0.5, score])
    assert client.buffered == 1
    client.close(timeout=0.0)
    server_side = Monitor([Cumulative()], positive="fraud")
    with pytest.raises((TypeError, ValueError, OverflowError)):
        server_side.update("legit", "fraud", y_score=score)


@pytest.mark.parametrize(("scores", "message"), [
    ([0.5, [0.5, 0.5]], r"y_score\[1\] \[0.5, 0.5\] is a row of 2 class probabilities, y_score\[0\] a number"),
    ([[0.2, 0.8], [0.2, 0.3, 0.5]], r"y_score\[1\] .* is a row of 3 class probabilities, y_score\[0\] a row of 2"),
    ([0.5], r"y_score must have one score \(or row of class probabilities\) per row \(2\), got 1"),
    ([0.5, math.nan], r"y_score\[1\] nan is not a probability"),  # max and min step over a NaN placed second
    ([[0.5, 0.5], [0.5, math.nan]], r"y_score\[1\] nan is not a probability"),
    ([[0.5, 0.5], [0.25, 0.7]], r"y_score\[1\] \[0.25, 0.7\] sums to 0.95"),
    ([[0.5, 0.5], [1.5, -0.5]], r"y_score\[1\] 1.5 is not a probability"),
])
def test_a_batch_of_mixed_forms_or_lengths_is_refused_whole(scores: list[Any], message: str) -> None:
    """One batch is one array on the server: numbers and rows, or rows of two lengths, are refused at the call
    (the server refuses such a batch whole: a ragged array); so is a batch with one bad score after good ones
    (past the quick whole-batch test), naming its position."""
    client = Client("http://127.0.0.1:9", "fraud", flush_interval=60)
    with pytest.raises(ValueError, match=message):
        client.update_many(["legit", "fraud"], ["legit", "fraud"], y_score=scores)
    assert client.buffered == 0
    client.close(timeout=0.0)
    with pytest.raises(ValueError):  # the server's monitor
        Monitor([Cumulative()], positive="fraud").update_many(["legit", "fraud"], ["legit", "fraud"], y_score=scores)


_near = st.floats(-0.01, 1.01, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.floats(-0.5, 1.5), st.lists(_near, min_size=2, max_size=5),
                 st.lists(st.floats(0.0, 1.0), min_size=2, max_size=5).map(
                     lambda r: [x / sum(r) if sum(r) else 1 / len(r) for x in r])))
def test_the_client_accepts_what_the_server_accepts(score: Any) -> None:
    """For numbers and rows of 2 to 5 values around [0, 1] and around a sum of 1, the client's check accepts
    exactly what the server's monitor does (``streammon.counting.score_input`` with the row's K), and sends the
    same numbers."""
    columns = 1 if isinstance(score, float) or len(score) == 2 else len(score)
    try:
        expected: Any = as_score_row(score, columns=columns, positive=1)
    except (TypeError, ValueError):
        expected = None
    try:
        sent: Any = checks.score(score)
    except (TypeError, ValueError):
        sent = None
    if expected is None or sent is None:
        assert expected is None and sent is None, (score, expected, sent)
    elif isinstance(score, float):
        assert (sent,) == expected
    else:
        assert sent == tuple(score)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.lists(_near, min_size=3, max_size=3),
                          st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3).map(
                              lambda r: [x / sum(r) if sum(r) else 1 / 3 for x in r]),
                          st.just([0.2, math.nan, 0.8])), min_size=1, max_size=6))
def test_the_client_accepts_a_batch_of_rows_when_the_server_does(rows: list[list[float]]) -> None:
    """Batches of rows of 3 (``update_many``'s quick whole-batch test and its full check): accepted by the client
    exactly when the server's check of an (n, 3) batch accepts them."""
    try:
        as_score_rows(np.array(rows), len(rows), columns=3, positive=None)
        expected = True
    except (TypeError, ValueError):
        expected = False
    try:
        sent = checks.scores(rows, len(rows))
    except (TypeError, ValueError):
        sent = None
    assert (sent is not None) == expected, rows
    if sent is not None:
        assert sent == [tuple(row) for row in rows]
