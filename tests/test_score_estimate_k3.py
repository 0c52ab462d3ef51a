"""The label-free estimate by EM at K > 2 (issue 28, item 4): a monitor of 3+ classes with a ``Validation``
baseline and scored predictions reads ``method == "em"``, checked against an EM written here (Saerens, Latinne &
Decaestecker 2002) on the validation's BCTS posteriors (its public ``calibration``) and a reweighting written
here for the expected confusion; the intervals' coverage over repeated windows; the exact-scores limit; the state
file (saved and loaded, and an older one without the prediction side's exact scores)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from streammon import Cumulative, Monitor, Sliding, Timed, Validation, state
from streammon.counting.exact_scores import PREDICTION_LIMIT

FEATURES = 4


@cache
def setup(k: int) -> tuple[Any, LogisticRegression, Validation, list[str]]:
    """Gaussian classes in 4-D, a logistic model fitted at a uniform mix, a validation set of 1,500 (the
    monitor's classes in the reverse of the validation's order: the columns must be mapped)."""
    rng = np.random.default_rng(k)
    means = rng.normal(size=(k, FEATURES)) * 0.8
    x, y = draw(means, np.full(k, 1 / k), 3000, rng)
    model = LogisticRegression(max_iter=2000).fit(x, y)
    xv, yv = draw(means, np.full(k, 1 / k), 1500, rng)
    pv = model.predict_proba(xv)
    classes = [f"c{i}" for i in range(k)]
    names = np.array(classes)
    validation = Validation(names[yv], names[pv.argmax(axis=1)], pv, classes=classes)
    return means, model, validation, classes[::-1]


def draw(means: Any, mix: Any, n: int, rng: np.random.Generator) -> tuple[Any, Any]:
    y = rng.choice(len(mix), n, p=mix)
    return means[y] + rng.normal(size=(n, FEATURES)), y


def window(k: int, mix: Any, n: int, seed: int) -> tuple[Any, Any, Any]:
    """A shifted window: true classes, scores (columns in the monitor's order), predicted class names."""
    means, model, _, order = setup(k)
    x, y = draw(means, mix, n, np.random.default_rng(seed))
    p = model.predict_proba(x)  # columns c0..c(k-1)
    columns = [int(c[1:]) for c in order]  # the monitor's class j is validation class columns[j]
    return y, p[:, columns], np.array([f"c{i}" for i in p.argmax(axis=1)])


def monitor(k: int, scores: Any, predicted: Any, **kwargs: Any) -> Monitor:
    _, _, validation, order = setup(k)
    m = Monitor(classes=order, baseline=validation, detector=None, **kwargs)
    m.predict_many([f"k{i}" for i in range(len(predicted))], predicted.tolist(), y_score=scores)
    return m


def saerens(posteriors: Any, source: Any, tolerance: float = 1e-13) -> Any:
    """EM on posteriors calibrated at ``source``: the mix that the mean of the re-weighted posteriors reproduces."""
    pi = source.copy()
    for _ in range(200_000):
        moved = posteriors * (pi / source)
        moved /= moved.sum(axis=1, keepdims=True)
        new = moved.mean(axis=0)
        if np.abs(new - pi).max() < tolerance:
            return new
        pi = new
    raise AssertionError("EM did not converge")


def adjusted(posteriors: Any, source: Any, mix: Any) -> Any:
    q = posteriors * (mix / source)
    return q / q.sum(axis=1, keepdims=True)


def shifted(k: int) -> Any:
    mix = np.linspace(1.0, 4.0, k)
    return mix / mix.sum()


@pytest.mark.parametrize("k", [3, 5])
def test_em_at_k_classes_matches_an_em_and_a_reweighting_written_here(k: int) -> None:
    """Every window's mix is EM's on the BCTS posteriors (within 1e-6), and its expected accuracy, recalls and
    macro F1 are those of the expected confusion Σ_i q_i ⊗ onehot(pred_i), q the mix-adjusted posteriors of
    the shrunk map (within 1e-6 · n of the counts)."""
    _, _, v, order = setup(k)
    n = 900  # every default window holds them all
    _, scores, predicted = window(k, shifted(k), n, seed=1)
    report = monitor(k, scores, predicted).report()
    to_validation = [v.labels.index(c) for c in order]
    in_validation = np.empty_like(scores)
    in_validation[:, to_validation] = scores
    mine = saerens(v.calibration.apply(in_validation), np.asarray(v.priors))
    q = adjusted(v.shrunk_calibration.apply(in_validation), np.asarray(v.priors), mine)
    decided = np.array([v.labels.index(c) for c in predicted])
    cm = np.zeros((k, k))
    for d in range(k):
        cm[:, d] = q[decided == d].sum(axis=0)  # rows true, columns predicted (validation order)
    assert cm.sum() == pytest.approx(n)
    for name, w in report.windows.items():
        e = w.estimate
        assert e is not None and e.method == "em", (name, e)
        for c in order:
            assert e.priors[c] == pytest.approx(mine[v.labels.index(c)], abs=1e-6), (name, c)
            assert e.lower[c] <= e.priors[c] <= e.upper[c]
        tol = 1e-6 * n / n  # the counts within 1e-6 · n: shares of n within 1e-6
        assert w.expected["accuracy"] == pytest.approx(np.trace(cm) / n, abs=2 * tol)
        recalls = np.diag(cm) / cm.sum(axis=1)
        precisions = np.diag(cm) / cm.sum(axis=0)
        assert w.expected["acsa"] == pytest.approx(recalls.mean(), abs=2 * tol * k)
        assert w.expected["min_recall"] == pytest.approx(recalls.min(), abs=2 * tol * k)
        assert w.expected["max_recall"] == pytest.approx(recalls.max(), abs=2 * tol * k)
        f1 = 2 * precisions * recalls / (precisions + recalls)
        assert w.expected["macro_f1"] == pytest.approx(f1.mean(), abs=10 * tol * k)
        for metric, value in w.expected.items():
            assert e.expected_lower[metric] <= value + 1e-12 and value <= e.expected_upper[metric] + 1e-12


def test_expected_values_at_k_classes_are_the_multiclass_ones() -> None:
    """At K > 2 the expected values are the catalog's multiclass metrics (as the hard-label estimate's), plus the
    scores' macro one-vs-rest ``roc_auc`` and ``average_precision``."""
    _, scores, predicted = window(3, shifted(3), 300, seed=2)
    w = monitor(3, scores, predicted).report().windows["cumulative"]
    assert {"accuracy", "acsa", "min_recall", "macro_f1", "roc_auc", "average_precision"} <= set(w.expected)
    assert 0.5 < w.expected["roc_auc"] <= 1 and 0 < w.expected["average_precision"] <= 1


def test_the_mix_intervals_cover_the_true_window_mix() -> None:
    """Over 50 trials — each a fresh validation set of 1,000 and a window of 600 predictions at a shifted mix —
    each class's interval covers the window's true share in at least 90 % of the cases (nominal 95 %). The
    validation is drawn again each time: the intervals carry its noise, which one fixed validation set would
    turn into one shared bias (with a single set, 84 % here)."""
    k, mix = 3, np.array([0.6, 0.3, 0.1])
    means, model, _, order = setup(k)
    names = np.array([f"c{i}" for i in range(k)])
    columns = [int(c[1:]) for c in order]
    covered = total = 0
    for seed in range(50):
        rng = np.random.default_rng(1000 + seed)
        xv, yv = draw(means, np.full(k, 1 / k), 1000, rng)
        pv = model.predict_proba(xv)
        validation = Validation(names[yv], names[pv.argmax(axis=1)], pv, classes=list(names), bootstrap=30)
        x, y = draw(means, mix, 600, rng)
        p = model.predict_proba(x)
        m = Monitor(classes=order, baseline=validation, detector=None, windows=[Sliding(1000)])
        m.predict_many([f"k{i}" for i in range(600)], names[p.argmax(axis=1)].tolist(), y_score=p[:, columns])
        e = m.report().windows["sliding_1000"].estimate
        assert e is not None and e.method == "em"
        for c in order:
            share = float(np.mean(y == int(c[1:])))
            covered += e.lower[c] <= share <= e.upper[c]
            total += 1
    assert covered / total >= 0.90, covered / total


def test_a_window_over_the_exact_limit_falls_back_with_the_reason() -> None:
    """A window holding more scored predictions than the exact ones kept reads the hard-label estimate and says
    why; a window of the last 1,000 of the same predictions reads EM."""
    n = PREDICTION_LIMIT + 100
    _, scores, predicted = window(3, shifted(3), n, seed=3)
    report = monitor(3, scores, predicted, windows=[Cumulative(), Sliding(1000)]).report()
    whole = report.windows["cumulative"].estimate
    assert whole is not None and whole.method != "em"
    assert f"{PREDICTION_LIMIT} scored predictions" in whole.reason and f"holds {n}" in whole.reason
    last = report.windows["sliding_1000"].estimate
    assert last is not None and last.method == "em" and last.reason == ""


def test_a_window_without_scores_keeps_the_hard_label_estimate() -> None:
    _, _, v, order = setup(3)
    m = Monitor(classes=order, baseline=v, detector=None)
    m.predict_many([f"k{i}" for i in range(200)], ["c0", "c1"] * 100)
    e = m.report().windows["cumulative"].estimate
    assert e is not None and e.method != "em" and e.reason == ""


def test_save_and_load_keep_the_estimate_and_the_exact_predictions() -> None:
    _, scores, predicted = window(3, shifted(3), 800, seed=4)
    m = monitor(3, scores, predicted)
    _, _, v, _ = setup(3)
    again = Monitor.loads(m.dumps(), validation=v)
    for name, w in m.report().windows.items():
        there = again.report().windows[name]
        assert there.estimate is not None and w.estimate is not None and there.estimate.method == "em"
        assert dict(there.estimate.priors) == dict(w.estimate.priors)
        assert dict(there.expected) == pytest.approx(dict(w.expected), nan_ok=True)


def test_an_older_state_file_without_the_prediction_ring_loads() -> None:
    """A state file written before the prediction side kept exact scores loads: its windows fall back to the
    hard-label estimate (saying why) until they hold only predictions that came since."""
    _, scores, predicted = window(3, shifted(3), 800, seed=5)
    m = monitor(3, scores, predicted, windows=[Cumulative(), Sliding(500)])
    _, _, v, _ = setup(3)
    body = dict(json.loads(m.dumps())["body"])
    del body["prediction_scores"]["tallies"]["exact"]
    old = Monitor.loads(state.dumps(body), validation=v)
    for w in old.report().windows.values():
        assert w.estimate is not None and w.estimate.method != "em" and "the monitor's last" in w.estimate.reason
    _, more, more_predicted = window(3, shifted(3), 500, seed=6)
    old.predict_many([f"n{i}" for i in range(500)], more_predicted.tolist(), y_score=more)
    report = old.report()
    assert report.windows["sliding_500"].estimate.method == "em"  # type: ignore[union-attr]
    assert report.windows["cumulative"].estimate.method != "em"  # type: ignore[union-attr]


def test_a_timed_window_reads_em_on_exactly_the_predictions_it_holds() -> None:
    """A timed window of 60 s (six 10-s buckets) over 300 predictions one a second holds those of t in [240, 300):
    its estimate is EM on exactly their scores, recounted here (the prediction side's suffix rule, timed)."""
    _, _, v, order = setup(3)
    _, scores, predicted = window(3, shifted(3), 300, seed=7)
    m = Monitor(classes=order, baseline=v, detector=None, windows=[Timed(60.0, buckets=6)])
    m.predict_many([f"k{i}" for i in range(300)], predicted.tolist(), t=np.arange(300.0), y_score=scores)
    e = m.report().windows["timed_60s"].estimate
    assert e is not None and e.method == "em", e
    held = scores[240:]
    in_validation = np.empty_like(held)
    in_validation[:, [v.labels.index(c) for c in order]] = held
    mine = saerens(v.calibration.apply(in_validation), np.asarray(v.priors))
    for c in order:
        assert e.priors[c] == pytest.approx(mine[v.labels.index(c)], abs=1e-6), c
