"""Label-free estimates in reports: expected values against scikit-learn on reweighted samples, a simulation
with a known mix, the not_prior_shift alert, the baseline fallback and the JSON form."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score, precision_score

from streammon import Monitor, Sliding
from streammon.findings.expected import PriorBaselines

BASE = {"neg": {"neg": 900, "pos": 100}, "pos": {"neg": 40, "pos": 160}}  # FPR 0.1, TPR 0.8
RATES = {"neg": 0.1, "pos": 0.8}  # P(predict pos | true class)


def _stream(rng: np.random.Generator, n: int, mix: float, rates: dict[str, float]) -> tuple[list[str], list[str]]:
    truth = np.where(rng.random(n) < mix, "pos", "neg")
    pred = np.where(rng.random(n) < np.vectorize(rates.get)(truth), "pos", "neg")
    return truth.tolist(), pred.tolist()


def _monitor(**kwargs: object) -> Monitor:
    return Monitor([Sliding(4000)], reference={"neg": 900, "pos": 100}, **kwargs)  # type: ignore[arg-type]


def _weighted_baseline(priors: dict[str, float]) -> tuple[list[str], list[str], list[float]]:
    """The baseline as samples, each true class weighted to carry ``priors`` — scikit-learn's reweighting."""
    y, p, w = [], [], []
    for true, row in BASE.items():
        total = sum(row.values())
        for pred, count in row.items():
            y.append(true)
            p.append(pred)
            w.append(count / total * priors[true])
    return y, p, w


def test_expected_values_are_scikit_learn_on_the_reweighted_baseline() -> None:
    """Before any label, a window at mix 0.5 reports π̂ (covering 0.5) and, for the metrics that move with the
    mix, scikit-learn's value on the baseline samples weighted to π̂; the expected distortion is that minus
    the value at the reference mix, 0 for recall (Condition 1)."""
    rng = np.random.default_rng(1)
    m = _monitor(baseline=BASE)
    _, pred = _stream(rng, 4000, 0.5, RATES)
    m.predict_many(list(range(4000)), pred)
    w = m.report().windows["sliding_4000"]
    e = w.estimate
    assert e is not None and e.source == "baseline"
    assert e.lower["pos"] <= 0.5 <= e.upper["pos"] and e.p_value > 0.01
    assert e.rrt == pytest.approx(e.priors["neg"] / e.priors["pos"])
    pi = {"neg": e.priors["neg"], "pos": e.priors["pos"]}
    y, p, wt = _weighted_baseline(pi)
    assert w.expected["precision"] == pytest.approx(precision_score(y, p, pos_label="pos", sample_weight=wt))
    assert w.expected["f1"] == pytest.approx(f1_score(y, p, pos_label="pos", sample_weight=wt))
    assert w.expected["accuracy"] == pytest.approx(accuracy_score(y, p, sample_weight=wt))
    yr, pr, wr = _weighted_baseline({"neg": 0.9, "pos": 0.1})
    assert w.expected_distortion["precision"] == pytest.approx(
        precision_score(y, p, pos_label="pos", sample_weight=wt) - precision_score(yr, pr, pos_label="pos",
                                                                                  sample_weight=wr))
    assert w.expected_distortion["balanced_accuracy"] == pytest.approx(0.0, abs=1e-12)
    assert w.expected["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, p, sample_weight=wt))
    assert not m.report().alerting("not_prior_shift")


def test_labelled_values_arrive_beside_the_expected_ones() -> None:
    """With the model unchanged, the labelled precision the labels later give sits near the expected one
    (the truth: 0.8·0.5 / (0.8·0.5 + 0.1·0.5) = 0.889)."""
    rng = np.random.default_rng(2)
    m = _monitor(baseline=BASE)
    truth, pred = _stream(rng, 4000, 0.5, RATES)
    m.predict_many(list(range(4000)), pred)
    m.label_many(list(range(4000)), truth)
    w = m.report().windows["sliding_4000"]
    assert w.expected["precision"] == pytest.approx(0.889, abs=0.03)
    assert w.scores["precision"] == pytest.approx(w.expected["precision"], abs=0.03)
    d = w.to_dict()
    assert d["expected"]["precision"] == w.expected["precision"] and d["scores"]["precision"] == w.scores["precision"]


def test_a_model_change_no_mix_explains_raises_not_prior_shift() -> None:
    """Predicting 'pos' 95 % of the time lies beyond TPR = 0.8: no mix explains it, before any label."""
    rng = np.random.default_rng(3)
    m = _monitor(baseline=BASE)
    _, pred = _stream(rng, 4000, 0.5, {"neg": 0.95, "pos": 0.95})
    m.predict_many(list(range(4000)), pred)
    report = m.report()
    (alert,) = report.alerting("not_prior_shift")
    assert alert.window == "sliding_4000" and alert.subject == "predictions"
    assert report.windows["sliding_4000"].estimate.p_value < 1e-6  # type: ignore[union-attr]


def test_false_alarms_under_pure_label_shift_stay_below_the_level() -> None:
    """Under pure label shift (the model's rates are the baseline's, the mix anywhere) the alert fires in at
    most its level (policy shift_alpha = 1 %) of windows, plus simulation error."""
    rng = np.random.default_rng(4)
    val_rng = np.random.default_rng(5)
    alarms, trials = 0, 120
    for _ in range(trials):
        neg_pos = int(val_rng.binomial(1000, 0.1))
        pos_pos = int(val_rng.binomial(200, 0.8))
        base = {"neg": {"neg": 1000 - neg_pos, "pos": neg_pos}, "pos": {"neg": 200 - pos_pos, "pos": pos_pos}}
        m = Monitor([Sliding(2000)], reference={"neg": 900, "pos": 100}, baseline=base)
        _, pred = _stream(rng, 2000, float(rng.uniform(0, 1)), RATES)
        m.predict_many(list(range(2000)), pred)
        alarms += bool(m.report().alerting("not_prior_shift"))
    assert alarms / trials <= 0.01 + 2 * np.sqrt(0.01 * 0.99 / trials)


def test_without_a_baseline_the_labelled_lifetime_confusion_serves_once_every_class_has_30() -> None:
    """No baseline: no estimate until every class has 30 labelled samples, then one read through them."""
    rng = np.random.default_rng(6)
    m = _monitor()
    truth, pred = _stream(rng, 400, 0.05, RATES)  # about 20 positives
    m.predict_many(list(range(400)), pred)
    m.label_many(list(range(400)), truth)
    assert truth.count("pos") < 30 and m.report().windows["sliding_4000"].estimate is None
    truth, pred = _stream(rng, 1000, 0.5, RATES)
    m.predict_many(list(range(400, 1400)), pred)
    m.label_many(list(range(400, 1400)), truth)
    e = m.report().windows["sliding_4000"].estimate
    assert e is not None and e.source == "lifetime"


def test_the_baseline_is_prepared_once_per_distinct_counts() -> None:
    baselines = PriorBaselines(None)
    a = np.array([[90, 10], [20, 80]])
    first = baselines.prepare(a)
    assert baselines.prepare(a.copy()) is first
    assert baselines.prepare(a + 1) is not first


def test_estimates_go_to_json_and_not_to_the_state() -> None:
    """to_dict carries the estimate (per-class keys, numbers by the JSON rules); save/load keeps no estimate."""
    m = _monitor(baseline=BASE)
    m.predict_many(list(range(50)), ["pos"] * 10 + ["neg"] * 40)
    d = m.report().to_dict()["windows"]["sliding_4000"]
    json.dumps(d, allow_nan=False)
    assert set(d["estimate"]["priors"]) == {"neg", "pos"} and d["estimate"]["source"] == "baseline"
    assert "precision" in d["expected"] and "precision" in d["expected_distortion"]
    assert "estimate" not in m.dumps() and "expected" not in m.dumps()
