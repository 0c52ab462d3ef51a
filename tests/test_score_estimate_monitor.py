"""The label-free estimate with scores inside the monitor (``Monitor(baseline=streammon.Validation(...))``): EM's
mix against the hidden labels' mix (coverage over trials), the expected performance against scikit-learn on the
hidden labels, the not_prior_shift alert under a recall drop and under pure label shift (rates over trials), the
exported series, the JSON report and the Prometheus rule (promtool)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from sklearn.metrics import average_precision_score, precision_score, recall_score, roc_auc_score

import streammon
from streammon import Monitor, Sliding
from streammon.counting.exact_scores import PREDICTION_LIMIT
from streammon.export.prometheus import MonitorCollector
from streammon.export.rules import RuleSettings, render_rules, rule_groups

TRIALS = 50
N = 2_000


def _draw(rng: np.random.Generator, n: int, share: float, drop: float = 0.0) -> tuple[np.ndarray, ...]:
    """Labels, decisions at 0.5 and scores of a fraud model: the logit is ±2 plus noise; ``drop`` moves the frauds'
    logits down (a recall drop with the model's inputs changed, not the mix)."""
    y = np.where(rng.random(n) < share, "fraud", "ok")
    z = np.where(y == "fraud", 2.0 - drop, -2.0) + rng.normal(size=n)
    s = 1.0 / (1.0 + np.exp(-z))
    return y, np.where(s > 0.5, "fraud", "ok"), s


def _window(baseline: object, pred: np.ndarray, score: np.ndarray) -> tuple[Monitor, streammon.Report]:
    monitor = Monitor([Sliding(N)], baseline=baseline, classes=["fraud", "ok"], positive="fraud",
                      reference={"fraud": 0.1, "ok": 0.9})
    monitor.predict_many(list(range(len(pred))), pred, y_score=score)
    return monitor, monitor.report()


@pytest.fixture(scope="module")
def trials() -> list[dict[str, float]]:
    """Per trial, a fresh validation set (10 % fraud) and two unlabelled windows of N predictions: pure label shift
    to 30 % fraud, and 30 % fraud with the frauds' logits 1.24 lower (recall 0.977 -> ~0.78)."""
    rng = np.random.default_rng(28)
    out = []
    for _ in range(TRIALS):
        validation = streammon.Validation(*_draw(rng, 3_000, 0.1))
        y, pred, score = _draw(rng, N, 0.3)
        _, report = _window(validation, pred, score)
        w = report.windows[f"sliding_{N}"]
        assert w.estimate is not None
        truth = y == "fraud"
        row = {"method_em": float(w.estimate.method == "em"), "share": float(truth.mean()),
               "estimate": w.estimate.priors["fraud"], "lower": w.estimate.lower["fraud"],
               "upper": w.estimate.upper["fraud"],
               "shift_alert": float(bool(report.alerting("not_prior_shift")))}
        decided = pred == "fraud"
        for metric, value in (("recall", recall_score(truth, decided)), ("precision", precision_score(truth, decided)),
                              ("roc_auc", roc_auc_score(truth, score)),
                              ("average_precision", average_precision_score(truth, score))):
            row[f"error_{metric}"] = w.expected[metric] - value
        y, pred, score = _draw(rng, N, 0.3, drop=1.24)
        row["drop_recall"] = recall_score(y == "fraud", pred == "fraud")
        row["drop_alert"] = float(bool(_window(validation, pred, score)[1].alerting("not_prior_shift")))
        out.append(row)
    return out


def test_em_estimates_the_hidden_mix_within_its_interval(trials: list[dict[str, float]]) -> None:
    """Every window with scores is estimated by EM; the 95 % interval holds the window's true fraud share in
    most trials (≥ 0.86 of 50: 0.95 less three binomial standard errors) and the estimate is near it."""
    assert all(t["method_em"] == 1.0 for t in trials)
    covered = np.mean([t["lower"] <= t["share"] <= t["upper"] for t in trials])
    assert covered >= 0.86, covered
    assert np.mean([abs(t["estimate"] - t["share"]) for t in trials]) < 0.01


def test_expected_performance_is_close_to_scikit_learn_on_the_hidden_labels(trials: list[dict[str, float]]) -> None:
    """Expected recall, precision, ROC AUC and AP without labels against scikit-learn's with the labels: small
    mean error (bias) and no trial far off (the labels' own sampling noise is ~0.006 for recall)."""
    for metric in ("recall", "precision", "roc_auc", "average_precision"):
        errors = np.array([t[f"error_{metric}"] for t in trials])
        assert abs(errors.mean()) < 0.01, (metric, errors.mean())
        assert np.abs(errors).max() < 0.04, (metric, np.abs(errors).max())


def test_not_prior_shift_fires_under_a_recall_drop_and_rarely_under_pure_label_shift(
        trials: list[dict[str, float]]) -> None:
    """The scores' mix test as the alert's evidence: under a recall drop of ~0.2 the alert is raised in ≥ 80 % of
    trials; under a pure label shift in at most 4 of 50 (its level is shift_alpha = 0.01: 0.5 expected)."""
    assert 0.15 < 0.977 - np.mean([t["drop_recall"] for t in trials]) < 0.25  # the drop is the 0.2
    assert np.mean([t["drop_alert"] for t in trials]) >= 0.8
    assert sum(t["shift_alert"] for t in trials) <= 4


def _samples(monitor: Monitor, name: str) -> dict[tuple[str, str], float]:
    registry = CollectorRegistry()
    registry.register(MonitorCollector({"m": monitor}))
    text = generate_latest(registry).decode()
    return {(s.labels["metric"], s.labels["bound"]): s.value for f in text_string_to_metric_families(text)
            for s in f.samples if s.name == name}


def test_exporter_series_and_json_round_trip() -> None:
    """streammon_expected_performance carries each expected metric with its bounds and the validation's value
    (recounted from the validation's decisions); the JSON report round-trips the estimate; a confusion baseline
    (no scores) keeps the hard-label estimate and exports no such series."""
    rng = np.random.default_rng(5)
    y, pred, score = _draw(rng, 3_000, 0.1)
    validation = streammon.Validation(y, pred, score)
    _, wpred, wscore = _draw(rng, N, 0.3)
    monitor, report = _window(validation, wpred, wscore)
    w = report.windows[f"sliding_{N}"]
    assert w.estimate is not None
    got = _samples(monitor, "streammon_expected_performance")
    truth, decided = y == "fraud", pred == "fraud"
    balanced = (recall_score(truth, decided) + recall_score(~truth, ~decided)) / 2
    assert got[("balanced_accuracy", "validation")] == pytest.approx(balanced, abs=1e-12)
    for metric in ("balanced_accuracy", "recall", "precision", "roc_auc"):
        assert got[(metric, "lower")] <= got[(metric, "estimate")] <= got[(metric, "upper")]
        assert got[(metric, "estimate")] == pytest.approx(w.expected[metric])
    back = json.loads(json.dumps(report.to_dict(), allow_nan=False))["windows"][f"sliding_{N}"]
    assert back["estimate"]["method"] == "em"
    assert back["estimate"]["priors"]["fraud"] == pytest.approx(w.estimate.priors["fraud"])
    assert back["expected"]["roc_auc"] == pytest.approx(w.expected["roc_auc"])
    assert back["estimate"]["expected_upper"]["balanced_accuracy"] == pytest.approx(
        w.estimate.expected_upper["balanced_accuracy"])
    plain, plain_report = _window(validation.confusion, wpred, wscore)
    estimate = plain_report.windows[f"sliding_{N}"].estimate
    assert estimate is not None and estimate.method != "em"
    assert not _samples(plain, "streammon_expected_performance")


def test_em_at_k3_only_within_the_exact_predictions() -> None:
    """K = 3: EM needs each prediction's score vector, kept exact for the last PREDICTION_LIMIT scored
    predictions — a window holding N of them reads EM, one holding more the hard-label estimate, saying why (the
    K = 3 estimate itself is checked against an EM written in the test in test_score_estimate_k3)."""
    rng = np.random.default_rng(9)
    big = PREDICTION_LIMIT + 500
    y = rng.choice(["a", "b", "c"], big, p=[0.2, 0.3, 0.5])
    logits = rng.normal(size=(big, 3)) + 2.0 * (y[:, None] == np.array(["a", "b", "c"]))
    s = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    pred = np.array(["a", "b", "c"])[s.argmax(axis=1)]
    validation = streammon.Validation(y, pred, s, bootstrap=0)
    monitor = Monitor([Sliding(N), Sliding(big)], baseline=validation, classes=["a", "b", "c"])
    monitor.predict_many(list(range(big)), pred, y_score=s)
    report = monitor.report()
    assert report.windows[f"sliding_{N}"].estimate.method == "em"  # type: ignore[union-attr]
    estimate = report.windows[f"sliding_{big}"].estimate
    assert estimate is not None and estimate.method != "em" and not estimate.expected_upper
    assert "the scores are not used at K = 3" in estimate.reason  # says why a Validation gave no EM
    assert f"holds {big}" in estimate.reason
    plain = Monitor([Sliding(big)], baseline=validation.confusion, classes=["a", "b", "c"])
    plain.predict_many(list(range(big)), pred)
    same = plain.report().windows[f"sliding_{big}"].estimate
    assert same is not None and dict(same.priors) == dict(estimate.priors) and same.reason == ""
    registry = CollectorRegistry()
    registry.register(MonitorCollector({"m": monitor}))
    text = generate_latest(registry).decode()
    from_scores = {s.labels["window"]: s.value for f in text_string_to_metric_families(text) for s in f.samples
                   if s.name == "streammon_estimate_from_scores"}
    assert from_scores == {f"sliding_{N}": 1.0, f"sliding_{big}": 0.0}  # which estimator, where users look


def test_expected_performance_drop_rule_fires_on_every_replica_below(tmp_path: Path, promtool: str) -> None:
    """StreammonExpectedPerformanceDrop fires when the highest upper bound over the replicas of the expected
    balanced accuracy is more than expected_drop (0.05) below the validation's, not when one replica's upper bound
    is within it; its value is that highest upper bound."""
    (tmp_path / "rules.yml").write_text(render_rules(RuleSettings()))
    inputs = []
    for model, uppers in (("drop", (0.80, 0.82)), ("fine", (0.80, 0.93))):
        for instance, upper in zip(("r1", "r2"), uppers, strict=True):
            for bound, value in (("upper", upper), ("validation", 0.95)):
                inputs.append({"series": f'streammon_expected_performance{{model="{model}",window="w",'
                                         f'metric="balanced_accuracy",bound="{bound}",instance="{instance}"}}',
                               "values": f"{value}+0x30"})
    description = ("Read from the scores without labels, the expected balanced accuracy is at most 0.820 (upper "
                   "bound of its interval, highest replica), more than 0.05 below the validation set's. A class-mix "
                   "change alone does not move it: the scores moved to where the model is less sure. Check the "
                   "input features and the model version; the labels, as they arrive, confirm through the recall "
                   "alerts.")
    expected = [{"exp_labels": {"severity": "warning", "model": "drop", "window": "w"},
                 "exp_annotations": {"summary": "Expected balanced accuracy of model drop dropped without labels (w)",
                                     "description": description,
                                     "runbook_url": "README.md#streammonexpectedperformancedrop"}}]
    doc = {"rule_files": ["rules.yml"], "evaluation_interval": "1m",
           "group_eval_order": [g["name"] for g in rule_groups()["groups"]],
           "tests": [{"interval": "1m", "input_series": inputs,
                      "alert_rule_test": [{"eval_time": "10m", "alertname": "StreammonExpectedPerformanceDrop",
                                           "exp_alerts": []},
                                          {"eval_time": "30m", "alertname": "StreammonExpectedPerformanceDrop",
                                           "exp_alerts": expected}]}]}
    (tmp_path / "test.yml").write_text(json.dumps(doc))  # JSON is YAML
    result = subprocess.run([promtool, "test", "rules", "test.yml"], cwd=tmp_path, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_monitor_whose_positive_is_the_validations_other_class() -> None:
    """A monitor whose positive class is "ok" (its score 1 − the fraud score) while the validation's is "fraud":
    the same mix, and recall, precision, ROC AUC and AP read about "ok", as scikit-learn reads them on the hidden
    labels."""
    rng = np.random.default_rng(11)
    validation = streammon.Validation(*_draw(rng, 3_000, 0.1))
    y, pred, score = _draw(rng, N, 0.3)
    monitor = Monitor([Sliding(N)], baseline=validation, classes=["ok", "fraud"], positive="ok")
    monitor.predict_many(list(range(N)), pred, y_score=1.0 - score)
    w = monitor.report().windows[f"sliding_{N}"]
    assert w.estimate is not None and w.estimate.method == "em"
    assert abs(w.estimate.priors["fraud"] - np.mean(y == "fraud")) < 0.03
    truth, decided = y == "ok", pred == "ok"
    for metric, value in (("recall", recall_score(truth, decided)), ("precision", precision_score(truth, decided)),
                          ("roc_auc", roc_auc_score(truth, 1.0 - score)),
                          ("average_precision", average_precision_score(truth, 1.0 - score))):
        assert abs(w.expected[metric] - value) < 0.02, (metric, w.expected[metric], value)


def test_load_reattaches_the_validation_and_refuses_another(tmp_path: Path) -> None:
    """A saved monitor keeps the Validation's counts only: loaded without it, the hard-label estimate; with it,
    the same EM estimate and expected values as before saving; another validation set is refused, naming it."""
    rng = np.random.default_rng(12)
    validation = streammon.Validation(*_draw(rng, 3_000, 0.1), bootstrap=5)
    _, pred, score = _draw(rng, N, 0.3)
    monitor, before = _window(validation, pred, score)
    monitor.save(tmp_path / "m.json")
    plain = Monitor.load(tmp_path / "m.json").report().windows[f"sliding_{N}"].estimate
    assert plain is not None and plain.method != "em"
    after = Monitor.load(tmp_path / "m.json", validation=validation).report().windows[f"sliding_{N}"]
    assert after.estimate == before.windows[f"sliding_{N}"].estimate
    assert after.expected == before.windows[f"sliding_{N}"].expected
    other = streammon.Validation(*_draw(rng, 3_000, 0.1), bootstrap=0)
    with pytest.raises(ValueError, match="other counts"):
        Monitor.load(tmp_path / "m.json", validation=other)
    with pytest.raises(TypeError, match=r"streammon\.Validation"):
        Monitor.load(tmp_path / "m.json", validation=validation.confusion)  # type: ignore[arg-type]


def test_the_cached_estimate_follows_the_window() -> None:
    """The per-window cache never serves a stale estimate: after more predictions the report's estimate is a fresh
    monitor's fed the same predictions at once, and reports from several threads agree."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(13)
    validation = streammon.Validation(*_draw(rng, 3_000, 0.1), bootstrap=5)
    _, pred, score = _draw(rng, 1_500, 0.3)
    _, more_pred, more_score = _draw(rng, 500, 0.6)
    monitor, first = _window(validation, pred, score)
    monitor.predict_many(list(range(1_500, 2_000)), more_pred, y_score=more_score)
    with ThreadPoolExecutor(4) as pool:
        reports = list(pool.map(lambda _: monitor.report(), range(4)))
    _, fresh = _window(validation, np.concatenate([pred, more_pred]), np.concatenate([score, more_score]))
    name = f"sliding_{N}"
    assert first.windows[name].estimate != fresh.windows[name].estimate
    for report in reports:
        assert report.windows[name].estimate == fresh.windows[name].estimate
        assert report.windows[name].expected == fresh.windows[name].expected


def test_a_window_with_unscored_predictions_says_that_em_read_the_scored_ones() -> None:
    """EM reads scores only: in a window of 60 predictions of which 10 came with a score, its mix is that of the
    10 — the mix of the window's 10 scored predictions by EM on them directly (``Validation.estimate``) — and
    ``reason`` says so (it was empty: the estimate looked like the whole window's)."""
    rng = np.random.default_rng(3)
    validation = streammon.Validation(*_draw(rng, 3_000, 0.1))
    monitor = Monitor([Sliding(N)], baseline=validation, classes=["fraud", "ok"], positive="fraud",
                      reference={"fraud": 0.1, "ok": 0.9})
    _, pred, score = _draw(rng, 60, 0.3)
    monitor.predict_many(list(range(50)), pred[:50])
    monitor.predict_many(list(range(50, 60)), pred[50:], y_score=score[50:])
    estimate = monitor.report().windows[f"sliding_{N}"].estimate
    assert estimate is not None and estimate.method == "em"
    assert "EM read the 10 scored predictions of the window's 60" in estimate.reason
    direct = validation.estimate(score[50:])
    assert estimate.priors["fraud"] == pytest.approx(float(direct.priors[validation.labels.index("fraud")]), abs=2e-3)


def test_a_binary_validation_names_the_positive_class_when_nothing_else_does() -> None:
    """Monitor(baseline=Validation(...)) with neither positive= nor reference= took no scores ("the positive class
    is not known yet"); it now reads the validation's positive, and its estimate is the one of a monitor told
    positive= outright (the same EM mix and expected recall)."""
    rng = np.random.default_rng(12)
    validation = streammon.Validation(*_draw(rng, 3_000, 0.1))
    _, pred, score = _draw(rng, 1_000, 0.3)
    implicit = Monitor([Sliding(1_000)], baseline=validation)
    explicit = Monitor([Sliding(1_000)], baseline=validation, positive=validation.positive)
    for m in (implicit, explicit):
        m.predict_many(list(range(1_000)), pred, y_score=score)
    assert implicit.positive == validation.positive == "fraud"
    got, want = (m.report().windows["sliding_1000"] for m in (implicit, explicit))
    assert got.estimate is not None and want.estimate is not None and got.estimate.method == "em"
    assert dict(got.estimate.priors) == dict(want.estimate.priors)
    assert got.expected["recall"] == want.expected["recall"]


def test_the_validation_positive_outlives_a_warm_up_whose_minority_is_the_other_class() -> None:
    """The reference learned by warm-up does not move a Validation's positive class (the class its scores are
    about): after a warm-up where 'fraud' is the majority, the monitor's positive is still 'fraud', and it survives
    dumps/loads (as a monitor told positive= outright)."""
    rng = np.random.default_rng(13)
    validation = streammon.Validation(*_draw(rng, 3_000, 0.1))
    m = Monitor([Sliding(1_000)], baseline=validation, warmup=50)
    true = ["fraud"] * 40 + ["ok"] * 10
    m.update_many(true, true)
    assert m.reference is not None and m.reference.priors["fraud"] == pytest.approx(0.8)  # the minority: ok
    assert m.positive == validation.positive == "fraud"
    assert Monitor.loads(m.dumps(), validation=validation).positive == "fraud"
