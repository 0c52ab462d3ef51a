"""Exact ROC AUC and average precision of windows that hold at most ``EXACT_RANKING_LIMIT`` scored samples (issue 28):
against scikit-learn on held-out halves of its bundled data sets, through every window kind and every way in, at
the limit, across restarts; and the pure computation against scikit-learn and a brute-force DeLong."""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from sklearn import datasets
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import average_precision_score, roc_auc_score
from sklearn.model_selection import train_test_split

from streammon import Cumulative, Monitor, Sliding, Timed, state
from streammon.counting.exact_scores import ScoreRing
from streammon.counting.score_tally import ScoreTally
from streammon.counting.scoring import Scoring
from streammon.metrics import average_precision, average_precision_bin_error, roc_auc, roc_auc_bin_error
from streammon.metrics.exact_ranking import EXACT_RANKING_LIMIT, RankedScores
from streammon.metrics.score_bins import tally
from streammon.state import StateError

MODELS: dict[str, Callable[[], Any]] = {
    "gradient_boosting": lambda: GradientBoostingClassifier(random_state=0, n_estimators=50),
    "random_forest": lambda: RandomForestClassifier(random_state=0, n_estimators=50),
    "logistic": lambda: LogisticRegression(max_iter=5000),
}
DATA = {"iris": datasets.load_iris, "wine": datasets.load_wine, "breast_cancer": datasets.load_breast_cancer}


def held_out(data: str, model: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The true classes and predicted probabilities of ``model`` trained on half of ``data``, on the other half."""
    x, y = DATA[data](return_X_y=True)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.5, stratify=y, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proba = MODELS[model]().fit(xtr, ytr).predict_proba(xte)
    return yte.astype(np.intp), proba


def sklearn_values(y: np.ndarray, p: np.ndarray, weights: np.ndarray | None = None) -> tuple[float, float]:
    """scikit-learn's ROC AUC (Hand & Till at K > 2) and (macro one-vs-rest) average precision, with sample weights
    ``weights[y]`` (a class mix) when given."""
    k = p.shape[1]
    sw = None if weights is None else weights[y]
    if k == 2:
        return roc_auc_score(y, p[:, 1], sample_weight=sw), average_precision_score(y, p[:, 1], sample_weight=sw)
    onehot = np.eye(k)[y]
    ap = float(np.mean([average_precision_score(onehot[:, c], p[:, c], sample_weight=sw) for c in range(k)]))
    return roc_auc_score(y, p, multi_class="ovo"), ap  # (sklearn's ovo takes no sample weights: Condition 1)


def mix_weights(y: np.ndarray, priors: np.ndarray) -> np.ndarray:
    """Each class's sample weight that moves the window to ``priors``: ``π_c·n/n_c``."""
    counts = np.bincount(y, minlength=len(priors))
    return priors * len(y) / counts


def monitor_of(k: int, windows: list[Any], reference: np.ndarray) -> Monitor:
    return Monitor(windows, reference={c: float(reference[c]) for c in range(k)},
                   positive=1 if k == 2 else None, detector=None)


@pytest.mark.parametrize("data", sorted(DATA))
@pytest.mark.parametrize("model", sorted(MODELS))
def test_every_window_kind_reads_scikit_learns_values(data: str, model: str) -> None:
    """Through update_many, a cumulative, a sliding-by-count and a sliding-by-time window of a held-out half read
    scikit-learn's ROC AUC and average precision to 1e-9, as read and at the reference mix (sample weights)."""
    y, p = held_out(data, model)
    k = p.shape[1]
    reference = np.linspace(1.0, 2.0, k) / np.linspace(1.0, 2.0, k).sum()
    m = monitor_of(k, [Cumulative(), Sliding(1000), Timed(3600.0, buckets=6)], reference)
    m.update_many(y.tolist(), p.argmax(axis=1).tolist(), t=np.arange(len(y), dtype=float),
                  y_score=p[:, 1] if k == 2 else p)
    report = m.report()
    auc, ap = sklearn_values(y, p)
    auc_at_mix, ap_at_mix = sklearn_values(y, p, mix_weights(y, reference))
    for name, w in report.windows.items():
        assert w.score_tally is not None and w.score_tally.samples is not None, name
        assert w.scores["roc_auc"] == pytest.approx(auc, abs=1e-9)
        assert w.scores["average_precision"] == pytest.approx(ap, abs=1e-9)
        assert w.corrected["roc_auc"] == pytest.approx(auc_at_mix, abs=1e-9)
        assert w.corrected["average_precision"] == pytest.approx(ap_at_mix, abs=1e-9)


@pytest.mark.parametrize(("data", "model"), [("iris", "gradient_boosting"), ("breast_cancer", "random_forest")])
def test_update_one_by_one_reads_the_same(data: str, model: str) -> None:
    """Samples given one at a time (update) read scikit-learn's values in every window kind."""
    y, p = held_out(data, model, seed=1)
    k = p.shape[1]
    m = monitor_of(k, [Sliding(50), Cumulative(), Timed(40.0, buckets=4)], np.full(k, 1.0 / k))
    for i in range(len(y)):
        m.update(int(y[i]), int(p[i].argmax()), y_score=float(p[i, 1]) if k == 2 else p[i], t=float(i))
    report = m.report()  # at the last sample's time: the timed window holds the samples of its 4 buckets of 10 s
    live = np.arange(len(y)) >= (len(y) - 1) // 10 * 10 - 30
    assert all(w.score_tally is not None and w.score_tally.samples is not None for w in report.windows.values())
    assert report.windows["timed_40s"].scores["roc_auc"] == pytest.approx(sklearn_values(y[live], p[live])[0],
                                                                          abs=1e-9)
    assert report.windows["sliding_50"].scores["average_precision"] == pytest.approx(
        sklearn_values(y[-50:], p[-50:])[1], abs=1e-9)
    assert report.windows["cumulative"].scores["roc_auc"] == pytest.approx(sklearn_values(y, p)[0], abs=1e-9)


def test_the_bins_were_wrong_where_the_exact_scores_are_right() -> None:
    """The case of issue 28: gradient boosting on iris, whose near-discrete scores share bins; the window's exact
    value is scikit-learn's where the bins' misses it (a check that the test data exercises the change)."""
    worst = 0.0
    for seed in range(4):
        y, p = held_out("iris", "gradient_boosting", seed)
        binned = average_precision(tally(y, p, 3))
        exact = average_precision(ScoreTally.of(y, p, 3, positive=None).parts)
        want = sklearn_values(y, p)[1]
        assert exact == pytest.approx(want, abs=1e-12)
        worst = max(worst, abs(binned - want))
    assert worst > 0.002


def test_pure_functions_read_the_samples_at_a_mix() -> None:
    """roc_auc and average_precision of ScoreTally.parts match scikit-learn at a mix (sample weights), ovo and ovr;
    their bin errors are 0 where the samples are read."""
    y, p = held_out("wine", "random_forest")
    parts = ScoreTally.of(y, p, 3, positive=None).parts
    priors = np.array([0.6, 0.3, 0.1])
    sw = mix_weights(y, priors)[y]
    onehot = np.eye(3)[y]
    assert average_precision(parts, priors=priors) == pytest.approx(
        np.mean([average_precision_score(onehot[:, c], p[:, c], sample_weight=sw) for c in range(3)]), abs=1e-12)
    assert roc_auc(parts, multi_class="ovr", priors=priors) == pytest.approx(
        roc_auc_score(y, p, multi_class="ovr", sample_weight=sw), abs=1e-12)
    assert roc_auc(parts) == pytest.approx(roc_auc_score(y, p, multi_class="ovo"), abs=1e-12)
    assert roc_auc_bin_error(parts) == 0.0
    assert average_precision_bin_error(parts) == 0.0


@pytest.mark.parametrize("positive", [0, 1])
def test_ranked_scores_binary_with_ties_and_delong(positive: int) -> None:
    """Binary, heavy ties, either positive class: scikit-learn's values at two mixes, and DeLong's variance equal to
    the placements' variances computed pair by pair."""
    rng = np.random.default_rng(positive)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.random(300) * 0.6 + 0.3 * (y == positive), 2)
    w = np.array([[1.0, 1.0], [0.3 * 300 / np.sum(y == 0), 0.7 * 300 / np.sum(y == 1)]])
    values, variance = RankedScores.of(y, s[:, None], 2).values(w, positive=positive)
    labels = (y == positive).astype(int)
    for v in range(2):
        assert values[v, 0] == pytest.approx(roc_auc_score(labels, s, sample_weight=w[v][y]), abs=1e-12)
        assert values[v, 1] == pytest.approx(average_precision_score(labels, s, sample_weight=w[v][y]), abs=1e-12)
    pos, neg = s[labels == 1], s[labels == 0]
    pair = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10, v01 = pair.mean(axis=1), pair.mean(axis=0)
    assert variance == pytest.approx(v10.var(ddof=1) / len(pos) + v01.var(ddof=1) / len(neg), rel=1e-9)


def test_ranked_scores_many_classes_with_an_absent_one() -> None:
    """K = 10 with a class absent from the window: Hand & Till and macro AP over the present classes, as
    scikit-learn computes them on the classes present."""
    rng = np.random.default_rng(7)
    y = rng.integers(0, 9, 1000)  # class 9 absent
    p = np.round(rng.dirichlet(np.ones(10), 1000), 2)
    values, _ = RankedScores.of(y, p, 10).values(np.ones((1, 10)))
    present = np.arange(9)
    onehot = np.eye(10)[y]
    aucs = [(roc_auc_score(y[np.isin(y, [i, j])] == i, p[np.isin(y, [i, j]), i])
             + roc_auc_score(y[np.isin(y, [i, j])] == j, p[np.isin(y, [i, j]), j])) / 2
            for a, i in enumerate(present) for j in present[a + 1:]]
    assert values[0, 0] == pytest.approx(np.mean(aucs), abs=1e-12)
    assert values[0, 1] == pytest.approx(np.mean([average_precision_score(onehot[:, c], p[:, c]) for c in present]),
                                         abs=1e-12)


@pytest.mark.parametrize("layout", ["crowded", "extremes", "signed_zero", "one_value"])
def test_ranked_scores_sorted_whatever_the_spread_of_scores(layout: str) -> None:
    """The bucket sort orders any spread of scores exactly: scores packed within 1e-12 of each other beside one
    near 0 (all in one bucket: argsorted instead), float64's extremes (0, 1e-300, the last floats below 1), -0.0
    beside 0.0 (one score), and one value for every sample: scikit-learn's ROC AUC and AP, at two mixes."""
    rng = np.random.default_rng(11)
    n = 2000
    y = rng.integers(0, 2, n)
    if layout == "crowded":
        s = 0.5 + rng.integers(0, 4000, n) * 2.0**-52 * (1 + y)
        s[0] = 1e-300
    elif layout == "extremes":
        s = rng.choice([0.0, 1e-300, 1e-9, 0.3, 1 - 2**-52, 1 - 2**-53, 1.0], n) * (1 - 1e-16 * y)
    elif layout == "signed_zero":
        s = np.where(rng.random(n) < 0.5, -0.0, 0.0) + (rng.random(n) < 0.3) * (0.2 + 0.5 * y)
    else:
        s = np.full(n, 0.25)
    w = np.array([[1.0, 1.0], [0.3 * n / np.sum(y == 0), 0.7 * n / np.sum(y == 1)]])
    values, _ = RankedScores.of(y, s[:, None], 2).values(w, positive=1)
    clean = s + 0.0  # scikit-learn ties -0.0 and 0.0 too; its sort is given the same scores
    for v in range(2):
        assert values[v, 0] == pytest.approx(roc_auc_score(y, clean, sample_weight=w[v][y]), abs=1e-12)
        assert values[v, 1] == pytest.approx(average_precision_score(y, clean, sample_weight=w[v][y]), abs=1e-12)


def test_a_window_past_the_limit_reads_its_bins_and_a_sliding_one_comes_back() -> None:
    """A window of more than EXACT_RANKING_LIMIT scored samples reads the bins (the bins' value, no samples); a
    sliding window whose scored samples fall back under the limit (unscored ones push them out) is exact again."""
    rng = np.random.default_rng(0)
    n = EXACT_RANKING_LIMIT + 100
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n) * 0.5 + 0.4 * y, 3)
    m = monitor_of(2, [Cumulative(), Sliding(2500)], np.array([0.5, 0.5]))
    m.update_many(y[:2000].tolist(), (s[:2000] > 0.5).astype(int).tolist(), y_score=s[:2000])
    w = m.report().windows["sliding_2500"]
    assert w.score_tally is not None and w.score_tally.samples is not None
    assert w.scores["average_precision"] == pytest.approx(average_precision_score(y[:2000], s[:2000]), abs=1e-12)
    m.update_many(y[2000:].tolist(), (s[2000:] > 0.5).astype(int).tolist(), y_score=s[2000:])
    report = m.report()
    for name in ("cumulative", "sliding_2500"):
        w = report.windows[name]
        assert w.score_tally is not None and w.score_tally.samples is None and w.score_tally.distinct is not None
        assert w.scores["average_precision"] == pytest.approx(average_precision(w.score_tally.parts), abs=1e-12)
        assert abs(w.scores["average_precision"] - average_precision_score(y, s)) <= \
            average_precision_bin_error(w.score_tally.parts)
        # rounded scores: the bins split over the values the last 2,048 show (``bin_values``), tied where not
        assert w.scores["roc_auc"] == pytest.approx(roc_auc(w.score_tally.parts), abs=1e-12)
        assert abs(w.scores["roc_auc"] - roc_auc_score(y, s)) <= roc_auc_bin_error(w.score_tally.parts)
        assert abs(w.scores["roc_auc"] - roc_auc_score(y, s)) < abs(roc_auc(tally(y, s, 2)) - roc_auc_score(y, s))
    m.update_many([0] * 1000, [0] * 1000)  # unscored: the sliding window keeps 1,500 scored samples
    w = m.report().windows["sliding_2500"]
    assert w.score_tally is not None and w.score_tally.samples is not None
    assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(y[-1500:], s[-1500:]), abs=1e-12)
    assert w.scores["average_precision"] == pytest.approx(average_precision_score(y[-1500:], s[-1500:]), abs=1e-12)


def test_timed_window_across_buckets_and_out_of_order_times() -> None:
    """A timed window read after buckets switch and expire, and after a batch spanning more than the window (its
    oldest samples routed around it), is exact on the samples of its live buckets; a sample time in the past is
    refused and changes nothing."""
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 400)
    s = np.round(rng.random(400) * 0.5 + 0.3 * y, 3)
    times = np.arange(400) * 1.0  # buckets of 10 s, a window of 60 s
    m = Monitor([Timed(60.0, buckets=6)], reference={0: 1, 1: 1}, positive=1, detector=None)
    m.update_many(y[:100].tolist(), y[:100].tolist(), t=times[:100], y_score=s[:100])  # 0..99 s: 40 routed around
    live = times[:100] >= 40.0
    w = m.report().windows["timed_60s"]  # read at the last sample's time, 99 s
    assert w.score_tally is not None and w.score_tally.samples is not None
    assert w.scores["average_precision"] == pytest.approx(average_precision_score(y[:100][live], s[:100][live]),
                                                          abs=1e-12)
    m.update_many(y[100:130].tolist(), y[100:130].tolist(), t=times[100:130], y_score=s[100:130])  # new buckets
    with pytest.raises(ValueError, match="earlier than the last sample time"):
        m.update(1, 1, t=5.0, y_score=0.99)
    w = m.report().windows["timed_60s"]  # at 129 s
    live = (times[:130] >= 70.0)
    assert w.score_tally is not None and w.score_tally.samples is not None
    assert int(w.score_tally.n_scored) == int(live.sum())
    assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(y[:130][live], s[:130][live]), abs=1e-12)


def test_a_timed_window_given_a_sample_out_of_time_order_reads_its_bins_until_it_expires() -> None:
    """Fed directly (the monitor refuses such times), a timed score window that took a sample older than its open
    bucket is no longer a suffix of the scored samples: it reads its bins until everything up to that sample left."""
    window = Timed(30.0, buckets=3)
    window.attach(2, 2)
    scoring = Scoring(1, 1)
    scoring.attach([window], 2)
    scoring.ingest(np.array([0, 1, 1]), np.array([[0.2], [0.8], [0.6]]), np.array([20.0, 21.0, 22.0]))
    assert scoring.view(22.0, 2)[0].samples is not None
    scoring.ingest(np.array([1]), np.array([[0.3]]), np.array([5.0]))  # earlier than the open bucket
    assert scoring.view(22.0, 2)[0].samples is None
    scoring.ingest(np.array([0, 1]), np.array([[0.1], [0.7]]), np.array([50.0, 51.0]))
    tally_now = scoring.view(51.0, 2)[0]  # buckets 20..29 and the stray one have left
    assert tally_now.n_scored == 2 and tally_now.samples is not None
    assert tally_now.samples[0].tolist() == [0, 1]


def test_score_tally_sum_and_difference() -> None:
    """+ concatenates the exact samples while both have them and they stay within the limit (the merged values are
    scikit-learn's on the union); past the limit, or after -, only the bins remain."""
    y, p = held_out("iris", "random_forest")
    a = ScoreTally.of(y[:40], p[:40], 3, positive=None)
    b = ScoreTally.of(y[40:], p[40:], 3, positive=None)
    merged = a + b
    assert merged.samples is not None and len(merged.samples[0]) == len(y)
    assert average_precision(merged.parts) == pytest.approx(sklearn_values(y, p)[1], abs=1e-12)
    assert (merged - b).samples is None
    assert (a + ScoreTally.frozen(b.hist.copy(), b.sums.copy(), b.top.copy(), None)).samples is None
    big = ScoreTally.of(np.zeros(EXACT_RANKING_LIMIT, np.intp), np.full((EXACT_RANKING_LIMIT, 3), 1 / 3), 3,
                        positive=None)
    assert big.samples is not None and (big + a).samples is None


def scored_monitor() -> tuple[Monitor, np.ndarray, np.ndarray]:
    y, p = held_out("wine", "gradient_boosting")
    m = monitor_of(3, [Cumulative(), Sliding(60), Timed(600.0, buckets=6)], np.full(3, 1 / 3))
    m.update_many(y.tolist(), p.argmax(axis=1).tolist(), t=np.arange(len(y), dtype=float), y_score=p)
    return m, y, p


def read(m: Monitor) -> dict[str, tuple[float, float, float, float]]:
    return {name: (w.scores["roc_auc"], w.scores["average_precision"], w.corrected["roc_auc"],
                   w.corrected["average_precision"]) for name, w in m.report().windows.items()}


def test_a_saved_and_loaded_monitor_reads_the_same_exact_values() -> None:
    """A monitor restored from its state file reads the same exact values, and keeps them exact as samples come."""
    m, y, p = scored_monitor()
    again = Monitor.loads(m.dumps())
    assert read(again) == read(m)
    for monitor in (m, again):
        monitor.update_many(y[:10].tolist(), y[:10].tolist(), t=[200.0] * 10, y_score=p[:10])
    assert read(again) == read(m)
    w = again.report().windows["cumulative"]
    assert w.score_tally is not None and w.score_tally.samples is not None


def body_of(m: Monitor) -> dict[str, Any]:
    return dict(json.loads(m.dumps())["body"])


def test_an_older_state_file_without_exact_scores_loads_and_reads_the_bins() -> None:
    """A state file written before exact scores were kept loads: its windows read the bins until they hold only
    samples that came since (a sliding one soon, a cumulative one never)."""
    m, y, p = scored_monitor()
    body = body_of(m)
    del body["scores"]["exact"], body["scores"]["census"]  # (the census came later still)
    for item in body["scores"]["windows"]:
        item.pop("broken_at", None)
    old = Monitor.loads(state.dumps(body))
    report = old.report()
    for name, w in report.windows.items():
        assert w.score_tally is not None and w.score_tally.samples is None, name
        assert w.scores["roc_auc"] == roc_auc(tally(y, p, 3)) if name == "cumulative" else True
    old.update_many(y[:60].tolist(), y[:60].tolist(), t=[200.0] * 60, y_score=p[:60])
    report = old.report()
    assert report.windows["sliding_60"].score_tally.samples is not None  # type: ignore[union-attr]
    assert report.windows["sliding_60"].scores["average_precision"] == pytest.approx(
        sklearn_values(y[:60], p[:60])[1], abs=1e-12)
    assert report.windows["cumulative"].score_tally.samples is None  # type: ignore[union-attr]


@pytest.mark.parametrize(("change", "message"), [
    (lambda e: e.update(total="3"), "total must be an int"),
    (lambda e: e.update(true=e["true"][:-1]), "must hold the last"),
    (lambda e: e["true"].__setitem__(0, 7), r"classes must lie in \[0, 4\)"),
    (lambda e: e["scores"][0].__setitem__(0, 1.5), "finite and in"),
    (lambda e: e.update(extra=1), "must hold total, true and scores"),
    (lambda e: e["scores"][-1].__setitem__(0, 0.5 * e["scores"][-1][0]), "histogram differs"),
])
def test_a_malformed_exact_part_is_refused_by_name(change: Callable[[dict[str, Any]], None], message: str) -> None:
    """A state file whose exact scores do not fit is refused with a StateError naming them; nothing is loaded."""
    m, _, _ = scored_monitor()
    body = body_of(m)
    change(body["scores"]["exact"])
    with pytest.raises(StateError, match=message):
        Monitor.loads(state.dumps(body))


def test_ring_keeps_the_last_samples_in_order() -> None:
    """The ring returns the last n appended samples oldest first, across wraps and batches longer than itself,
    and restores to the same reads."""
    ring = ScoreRing(columns=2, limit=5)
    seen: list[int] = []
    rng = np.random.default_rng(0)
    for size in (3, 4, 1, 12, 2):
        true = np.arange(len(seen), len(seen) + size) % 7
        ring.append(true.astype(np.intp), rng.random((size, 2)))
        seen += true.tolist()
        for n in range(ring.held + 1):
            assert ring.last(n)[0].tolist() == seen[len(seen) - n:]
    again = ScoreRing(columns=2, limit=5)
    again.restore(json.loads(json.dumps(ring.state())), rows=7)
    assert again.total == ring.total
    assert np.array_equal(again.last(5)[1], ring.last(5)[1]) and again.last(5)[0].tolist() == seen[-5:]
    assert math.isfinite(float(ring.last(1)[1][0, 0]))
    empty = ScoreRing(columns=2)
    empty.restore(json.loads(json.dumps(empty.state())), rows=2)  # a monitor that took scores, none labelled yet
    assert empty.total == 0 and empty.last(0)[1].shape == (0, 2)


def test_a_prediction_side_timed_window_past_its_span_saves_and_loads() -> None:
    """Scored predictions spanning more than a timed window (some routed around it) save and load: the prediction
    side keeps no exact scores, so its windows' out-of-order marks are not held against a ring."""
    m = Monitor([Timed(60.0, buckets=6)], reference={0: 1, 1: 1}, positive=1, detector=None)
    rng = np.random.default_rng(4)
    m.predict_many([f"k{i}" for i in range(200)], rng.integers(0, 2, 200).tolist(), t=np.arange(200.0),
                   y_score=rng.random(200))
    m.label_many([f"k{i}" for i in range(190, 200)], [1, 0] * 5, t=[199.0] * 10)
    again = Monitor.loads(m.dumps())
    assert read(again) == pytest.approx(read(m), nan_ok=True)
