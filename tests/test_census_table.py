"""The census's hash table at its edges (``streammon.metrics.value_census._insert``, ``ValueCensus._count``): the
counts' room grown from ``FIRST_ROOM`` by doubling to ``CENSUS_LIMIT`` after a pass, the entries that fell past it
counted then, in batches cut at every growth edge; a column of exactly ``CENSUS_LIMIT`` values kept open, one of
one more closed mid-batch while the others go on; true classes appearing late. Counts against a recount by
``np.unique``; windows past the exact limit against scikit-learn on their samples on both sides of the limit."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from streammon import Cumulative, Monitor, Sliding, Timed
from streammon.counting.score_census import FIRST_ROOM, ValueCensus
from streammon.metrics.value_census import CENSUS_LIMIT


def recount(true: np.ndarray, scores: np.ndarray, column: int, k: int) -> tuple[list[float], list[list[int]]]:
    """Each distinct value of a column (ascending, -0.0 as 0.0) and its count per class, by NumPy."""
    values, inverse = np.unique(scores[:, column] + 0.0, return_inverse=True)
    counts = np.zeros((len(values), k), np.int64)
    np.add.at(counts, (inverse, true), 1)
    return values.tolist(), counts.tolist()


def columns(rng: np.random.Generator, n: int) -> np.ndarray:
    """Five columns, in an order that makes later columns ask for room (entries past the room in a column after
    the first): ``FIRST_ROOM + 1`` values (one growth), exactly ``CENSUS_LIMIT`` dyadic values (low
    bits zero), five values, ``CENSUS_LIMIT - 3`` subnormals with 0.0, -0.0 and 1.0 (exactly the limit, 0.0 and
    -0.0 one value), and continuous (closes within the batch that brings its 4,097th value)."""
    limit = np.arange(CENSUS_LIMIT) / CENSUS_LIMIT
    tiny = np.r_[np.arange(1, CENSUS_LIMIT - 1) * 5e-324, 0.0, -0.0, 1.0]
    room = np.arange(FIRST_ROOM + 1) / (FIRST_ROOM + 1)
    out = np.c_[rng.choice(room, n), rng.choice(limit, n), rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], n),
                rng.choice(tiny, n), rng.random(n)]
    out[: len(room), 0] = room
    out[: CENSUS_LIMIT, 1] = rng.permutation(limit)  # every value taken, in the first 4,096 rows
    out[: len(tiny), 3] = tiny
    return out


@pytest.mark.parametrize("cuts", [[], [1, 63, 64, 65, 127, 128, 129], [4_095, 4_096, 4_097], [2_000, 6_000]])
def test_counts_are_a_recount_whatever_the_batches(cuts: list[int]) -> None:
    """Fed in batches cut at the growth edges (or whole), each column open at the end counts as NumPy recounts
    it; the continuous one is closed, the one of exactly ``CENSUS_LIMIT`` values (and the one with 0.0 and
    -0.0 among them) open; classes 3 and 4 appear only in the last rows."""
    rng = np.random.default_rng(len(cuts))
    n = 9_000
    scores = columns(rng, n)
    true = rng.integers(0, 3, n)
    true[-20:] = rng.integers(3, 5, 20)
    census = ValueCensus(columns=5)
    for lo, hi in zip([0, *cuts], [*cuts, n], strict=True):
        census.add(true[lo:hi], scores[lo:hi])
    assert census.total == n
    assert census.counted(4) is None
    for c in (0, 1, 2, 3):
        assert census.counted(c) == recount(true, scores, c, 5), c
    assert [len(recount(true, scores, c, 5)[0]) for c in (1, 3)] == [CENSUS_LIMIT, CENSUS_LIMIT]


@pytest.mark.parametrize("extra", [0, 1])
def test_windows_read_scikit_learn_up_to_the_limit(extra: int) -> None:
    """A crowded binary model (values near 1/2, several to a bin) taking ``CENSUS_LIMIT + extra`` values over 6,000
    samples in batches of 777: the cumulative window and a timed one no bucket has left read scikit-learn's ROC
    AUC and AP exactly at the limit; one value more closes the column, and they read the ring's values (within
    the issue's 0.002)."""
    rng = np.random.default_rng(3)
    n, m = 6_000, CENSUS_LIMIT + extra
    pool = 1 / (1 + np.exp(-0.3 * rng.normal(size=m)))
    pick = np.r_[np.arange(m), rng.integers(0, m, n - m)]
    rng.shuffle(pick)
    s = pool[pick]
    y = (rng.random(n) < 0.2 + 0.3 * (s > 0.5)).astype(int)
    assert len(np.unique(s)) == m
    monitor = Monitor([Cumulative(), Timed(3_600.0)], reference={0: 0.8, 1: 0.2}, positive=1, detector=None)
    for i in range(0, n, 777):
        monitor.update_many(y[i:i + 777].tolist(), [0] * len(y[i:i + 777]), 0.0, y_score=s[i:i + 777])
    report = monitor.report()
    tolerance = 1e-12 if extra == 0 else 0.002
    for name in ("cumulative", "timed_3600s"):
        w = report.windows[name]
        assert w.n_scored == n and w.score_tally is not None and w.score_tally.samples is None
        assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(y, s), abs=tolerance)
        assert w.scores["average_precision"] == pytest.approx(average_precision_score(y, s), abs=tolerance)


def test_saturated_scores_read_scikit_learn_through_a_reload() -> None:
    """Scores at the ends of [0, 1] — 0.0, the smallest subnormal, 1e-300, 1e-17, 1 − 2⁻⁵², 1 − 2⁻⁵³, 1.0 — a
    saturated model's, several to the first and last bins: the cumulative, sliding and timed windows past the
    exact limit read scikit-learn's ROC AUC and AP, and so does the cumulative window of the monitor reloaded."""
    rng = np.random.default_rng(4)
    n = 7_000
    values = np.array([0.0, 5e-324, 1e-300, 1e-17, 0.5, 1 - 2.0**-52, 1 - 2.0**-53, 1.0])
    y = (rng.random(n) < 0.3).astype(int)
    s = np.where(y == 1, rng.choice(values, n, p=[0.05, 0.05, 0.1, 0.1, 0.1, 0.2, 0.2, 0.2]),
                 rng.choice(values, n, p=[0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.05, 0.05]))
    monitor = Monitor([Cumulative(), Sliding(3_000), Timed(3_600.0)], reference={0: 0.7, 1: 0.3}, positive=1,
                      detector=None)
    for i in range(0, n, 900):
        monitor.update_many(y[i:i + 900].tolist(), y[i:i + 900].tolist(), 1.0, y_score=s[i:i + 900])
    again = Monitor.loads(monitor.dumps())
    for m, name, rows in ((monitor, "cumulative", slice(None)), (monitor, "sliding_3000", slice(-3_000, None)),
                          (monitor, "timed_3600s", slice(None)), (again, "cumulative", slice(None))):
        w = m.report().windows[name]
        assert w.score_tally is not None and w.score_tally.samples is None
        assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(y[rows], s[rows]), abs=1e-12)
        assert w.scores["average_precision"] == pytest.approx(average_precision_score(y[rows], s[rows]), abs=1e-12)
