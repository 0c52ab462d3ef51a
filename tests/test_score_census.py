"""The census of every distinct score (``streammon.counting.score_census``): its counts against a recount, a
column closed past ``CENSUS_LIMIT`` values, cumulative and sliding windows past the exact limit read exactly as
scikit-learn reads their samples on few-valued real models, saved and loaded, a census that does not belong to its
tallies refused with nothing changed."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.metrics import average_precision_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from streammon import Cumulative, Monitor, Sliding, Timed
from streammon.counting.score_census import ValueCensus
from streammon.metrics.score_bins import score_bins
from streammon.metrics.value_census import CENSUS_LIMIT
from tests.census_streams import score_side, sealed, three_to_a_bin


def recount(true: np.ndarray, scores: np.ndarray, column: int, k: int) -> tuple[list[float], list[list[int]]]:
    """Each distinct value of a column (ascending, -0.0 as 0.0) and its count per class, by NumPy."""
    values, inverse = np.unique(scores[:, column] + 0.0, return_inverse=True)
    counts = np.zeros((len(values), k), np.int64)
    np.add.at(counts, (inverse, true), 1)
    return values.tolist(), counts.tolist()


def test_the_counts_are_a_recount_for_float32_signed_zero_and_tiny_scores() -> None:
    """Values that hash alike in a careless table — float32 scores cast to float64 (low bits zero), scores below
    2⁻⁴⁰, 0.0 and -0.0 (one value) — counted per class as NumPy's ``unique`` counts them, batch after batch."""
    rng = np.random.default_rng(3)
    pool = np.r_[rng.random(300).astype(np.float32).astype(np.float64), 10.0 ** -rng.integers(20, 300, 300),
                 [0.0, -0.0, 1.0]]
    census = ValueCensus(columns=2)
    true_all, scores_all = [], []
    for _ in range(7):
        n = int(rng.integers(1, 900))
        true = rng.integers(0, 3, n)
        scores = rng.choice(pool, (n, 2))
        census.add(true, scores)
        true_all.append(true)
        scores_all.append(scores)
    true, scores = np.concatenate(true_all), np.concatenate(scores_all)
    assert census.total == len(true)
    for c in (0, 1):
        assert census.counted(c) == recount(true, scores, c, 3)


def test_a_column_past_the_limit_closes_and_the_memory_goes() -> None:
    """A continuous column closes once it takes more than ``CENSUS_LIMIT`` values; a few-valued one beside it
    keeps counting; once both are closed the census holds no arrays."""
    rng = np.random.default_rng(4)
    census = ValueCensus(columns=2)
    n = CENSUS_LIMIT + 500
    true = rng.integers(0, 2, n)
    scores = np.c_[rng.random(n), rng.integers(0, 10, n) / 10]
    census.add(true[:1000], scores[:1000])
    census.add(true[1000:], scores[1000:])
    assert census.counted(0) is None
    assert census.counted(1) == recount(true, scores, 1, 2)
    census.add(true, np.c_[scores[:, 0], rng.random(n)])
    assert census.counted(1) is None and not census.counting
    assert census.state()["columns"] == [None, None]


def fed(monitor: Monitor, y: np.ndarray, proba: np.ndarray, batch: int = 500) -> None:
    scores = proba[:, 1] if proba.shape[1] == 2 else proba
    for i in range(0, len(y), batch):
        monitor.update_many(y[i:i + batch].tolist(), proba[i:i + batch].argmax(axis=1).tolist(),
                            y_score=scores[i:i + batch])


def few_valued(name: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """6,000 i.i.d. draws from the held-out half of a bundled data set, with a few-valued model's probabilities."""
    x, y = (load_iris if name == "iris" else load_breast_cancer)(return_X_y=True)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.5, stratify=y, random_state=seed)
    model: Any = (GradientBoostingClassifier(n_estimators=30, random_state=seed) if name == "iris"
                  else DecisionTreeClassifier(max_depth=5, random_state=seed))
    proba = model.fit(x_tr, y_tr).predict_proba(x_te)
    pick = np.random.default_rng(seed).integers(0, len(y_te), 6_000)
    return y_te[pick], proba[pick]


@pytest.mark.parametrize("name", ["iris", "breast_cancer"])
@pytest.mark.parametrize("seed", [1, 2])
def test_windows_past_the_limit_read_scikit_learns_values_on_few_valued_models(name: str, seed: int) -> None:
    """Gradient boosting on iris (K = 3) and a decision tree on breast cancer give few distinct scores, several to
    a bin; 6,000 i.i.d. draws: the cumulative window (the census) and a window sliding by count of 4,000 (its own
    samples), both past the exact limit, read scikit-learn's ROC AUC (both K > 2 forms) and AP on their samples."""
    y, proba = few_valued(name, seed)
    k = proba.shape[1]
    m = Monitor([Cumulative(), Sliding(4_000)], reference={c: 1.0 for c in range(k)},
                positive=1 if k == 2 else None, detector=None)
    fed(m, y, proba)
    report = m.report()
    for window, rows in (("cumulative", slice(None)), ("sliding_4000", slice(-4_000, None))):
        w = report.windows[window]
        assert w.score_tally is not None and w.score_tally.samples is None  # its bins, not the exact samples
        yy, pp = y[rows], proba[rows]
        if k == 2:
            assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(yy, pp[:, 1]), abs=1e-12)
            assert w.scores["average_precision"] == pytest.approx(average_precision_score(yy, pp[:, 1]), abs=1e-12)
        else:
            assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(yy, pp, multi_class="ovo"), abs=1e-12)
            onehot = np.eye(k)[yy]
            assert w.scores["average_precision"] == pytest.approx(average_precision_score(onehot, pp), abs=1e-12)


def test_a_continuous_cumulative_window_below_the_census_limit_is_exact() -> None:
    """A continuous model's window of 3,000 (past the ring's 2,048, below the census's 4,096 values) reads its
    bins split over every value: scikit-learn's ROC AUC and AP; past 4,096 values the census closes and the
    window reads the ring's values (within the issue's 0.002)."""
    rng = np.random.default_rng(5)
    n = 6_000
    y = (rng.random(n) < 0.2).astype(int)
    s = 1 / (1 + np.exp(-(0.2 * rng.normal(size=n) + 0.1 * y)))  # crowded near 1/2: many values to a bin
    m = Monitor([Cumulative()], reference={0: 0.8, 1: 0.2}, positive=1, detector=None)
    fed(m, y[:3_000], np.c_[1 - s[:3_000], s[:3_000]])
    w = m.report().windows["cumulative"]
    assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(y[:3_000], s[:3_000]), abs=1e-12)
    assert w.scores["average_precision"] == pytest.approx(average_precision_score(y[:3_000], s[:3_000]), abs=1e-12)
    fed(m, y[3_000:], np.c_[1 - s[3_000:], s[3_000:]])
    w = m.report().windows["cumulative"]
    assert abs(w.scores["roc_auc"] - roc_auc_score(y, s)) < 0.002
    assert abs(w.scores["average_precision"] - average_precision_score(y, s)) < 0.002


def test_a_monitor_saved_and_loaded_mid_stream_reads_as_one_that_was_not() -> None:
    """Saved after 3,000 samples and loaded, the monitor fed the other 3,000 reads what an uninterrupted one reads
    (scikit-learn's values); a file without the census (written before it was kept) loads and reads the ring's
    values, as before."""
    rng = np.random.default_rng(1)
    n = 8_000
    y, s = three_to_a_bin(rng, n)
    proba = np.c_[1 - s, s]
    make = lambda: Monitor([Cumulative()], reference={0: 0.7, 1: 0.3}, positive=1, detector=None)  # noqa: E731
    whole, first = make(), make()
    fed(whole, y, proba)
    fed(first, y[:3_000], proba[:3_000])
    text = first.dumps()
    again = Monitor.loads(text)
    fed(again, y[3_000:], proba[3_000:])
    truth = roc_auc_score(y, s)
    assert again.report().windows["cumulative"].scores["roc_auc"] == pytest.approx(truth, abs=1e-12)
    assert whole.report().windows["cumulative"].scores["roc_auc"] == pytest.approx(truth, abs=1e-12)
    document = json.loads(text)
    del score_side(document["body"])["census"]
    old = Monitor.loads(sealed(document))
    fed(old, y[3_000:], proba[3_000:])
    w = old.report().windows["cumulative"]
    assert 0.001 < abs(w.scores["roc_auc"] - truth) < 0.05  # the ring's shares: a sample of the window's
    assert score_side(json.loads(old.dumps())["body"])["census"]["complete"] is False


@pytest.mark.parametrize("tamper", ["count", "value", "extra value", "total", "shape", "nan", "closed twice"])
def test_a_census_that_does_not_belong_to_its_tallies_is_refused(tamper: str) -> None:
    """A census whose counts or values do not bin to the cumulative window's histogram, or do not add up to its
    total, or hold no number, is refused with a ``ValueError`` naming it; a file is refused whole (nothing
    loaded)."""
    y, proba = few_valued("breast_cancer", 1)
    m = Monitor([Cumulative()], reference={0: 1, 1: 1}, positive=1, detector=None)
    fed(m, y[:2_500], proba[:2_500])
    document = json.loads(m.dumps())
    census = score_side(document["body"])["census"]
    column = census["columns"][0]
    if tamper == "count":  # one sample moved to a value of another bin: the total adds up, two bins do not
        other = next(j for j, v in enumerate(column["values"]) if score_bin(v) != score_bin(column["values"][0]))
        column["counts"][0][0] += 1
        column["counts"][other][0] -= 1
    elif tamper == "value":
        column["values"][0] = 0.5 * (column["values"][0] + 1.0)
    elif tamper == "extra value":
        column["values"].append(0.123456)
        column["counts"].append([0, 1])
        census["total"] += 1
    elif tamper == "total":
        census["total"] += 1
    elif tamper == "shape":
        column["counts"][0].append(0)
        column["counts"][0].append(0)
    elif tamper == "nan":
        column["values"][0] = None
    else:
        census["columns"].append(None)
    with pytest.raises(ValueError, match="census"):
        Monitor.loads(sealed(document))


def score_bin(value: float) -> int:
    return int(score_bins(np.array([value]))[0])


def test_a_timed_window_reads_its_own_value_counts_and_a_restored_one_the_rings_until_its_buckets_leave() -> None:
    """A window sliding by time reads exactly: by the census while it holds every sample, by its buckets' own value
    counts once a bucket has left. Restored from a state file (which keeps no value counts of its buckets) it
    reads by the ring's shares — off by their noise — until the restored buckets leave, then exactly again."""
    rng = np.random.default_rng(6)
    n = 8_000
    y, s = three_to_a_bin(rng, n)
    m = Monitor([Timed(3600.0, buckets=4)], reference={0: 0.7, 1: 0.3}, positive=1, detector=None)
    m.update_many(y[:200].tolist(), [0] * 200, 0.0, y_score=s[:200])
    m.update_many(y[200:4_000].tolist(), [0] * 3_800, 1_000.0, y_score=s[200:4_000])
    w = m.report().windows["timed_3600s"]
    assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(y[:4_000], s[:4_000]), abs=1e-12)
    m.update_many(y[4_000:].tolist(), [0] * (n - 4_000), 3_700.0, y_score=s[4_000:])  # the bucket of t = 0 leaves
    w = m.report().windows["timed_3600s"]
    assert w.n_scored == n - 200
    assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(y[200:], s[200:]), abs=1e-12)
    assert w.scores["average_precision"] == pytest.approx(average_precision_score(y[200:], s[200:]), abs=1e-12)
    again = Monitor.loads(m.dumps())
    w = again.report().windows["timed_3600s"]
    assert 1e-4 < abs(w.scores["roc_auc"] - roc_auc_score(y[200:], s[200:])) < 0.02  # the ring's shares
    y2, s2 = three_to_a_bin(rng, 3_000)  # at t = 7,300 every restored bucket has left
    again.update_many(y2.tolist(), [0] * 3_000, 7_300.0, y_score=s2)
    w = again.report().windows["timed_3600s"]
    assert w.n_scored == 3_000 and w.score_tally is not None and w.score_tally.samples is None
    assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(y2, s2), abs=1e-12)


def test_a_monitor_whose_columns_all_closed_saves_and_loads() -> None:
    """A continuous model closes every column; the census still counts its samples (its total is the cumulative
    window's), so the state file loads, and the window reads as before (within the issue's 0.002)."""
    rng = np.random.default_rng(7)
    n = CENSUS_LIMIT + 2_000
    y = (rng.random(n) < 0.3).astype(int)
    s = 1 / (1 + np.exp(-(rng.normal(size=n) + y)))
    m = Monitor([Cumulative()], reference={0: 0.7, 1: 0.3}, positive=1, detector=None)
    fed(m, y, np.c_[1 - s, s])
    again = Monitor.loads(m.dumps())
    census = score_side(json.loads(again.dumps())["body"])["census"]
    assert census == {"total": n, "complete": True, "columns": [None]}
    assert abs(again.report().windows["cumulative"].scores["roc_auc"] - roc_auc_score(y, s)) < 0.002


def test_a_timed_window_whose_buckets_leave_reads_scikit_learns_values_batch_after_batch() -> None:
    """Gradient boosting on iris (K = 3), 12,000 i.i.d. draws with times rising through many buckets — batches
    that span bucket boundaries, some batches without scores — read after each batch: the window sliding by time
    (4 buckets of 900 s) reads scikit-learn's ROC AUC (both forms) and AP on exactly the samples its buckets hold,
    whether or not a bucket has left it."""
    y, proba = few_valued("iris", 3)
    rng = np.random.default_rng(8)
    y, proba = np.r_[y, y], np.r_[proba, proba]
    n = len(y)
    times = np.sort(rng.uniform(0.0, 9_000.0, n))
    scored = np.ones(n, bool)
    m = Monitor([Timed(3600.0, buckets=4)], reference={0: 1, 1: 1, 2: 1}, detector=None)
    checked = 0
    for i in range(0, n, 1_500):
        part = slice(i, i + 1_500)
        scored[part] = i % 4_500 != 0  # every third batch without scores
        m.update_many(y[part].tolist(), proba[part].argmax(axis=1).tolist(), times[part].tolist(),
                      y_score=proba[part] if scored[i] else None)
        w = m.report().windows["timed_3600s"]
        newest = int(times[min(i + 1_500, n) - 1] // 900)
        inside = (times[: i + 1_500] // 900 > newest - 4) & scored[: i + 1_500]
        assert w.n_scored == inside.sum()
        if w.n_scored <= 2_048:
            continue
        yy, pp = y[: i + 1_500][inside], proba[: i + 1_500][inside]
        assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(yy, pp, multi_class="ovo"), abs=1e-12)
        assert w.scores["average_precision"] == pytest.approx(average_precision_score(np.eye(3)[yy], pp),
                                                              abs=1e-12)
        checked += 1
    assert checked >= 3
