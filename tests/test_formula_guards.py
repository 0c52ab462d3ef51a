"""Guards against plausible wrong formulas outside metrics/: each test pins one constant, gate or boundary
against a value written out independently (by hand, scikit-learn, or a per-sample recount)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from sklearn.metrics import precision_score

from streammon import Cumulative, DetectorSettings, Monitor, Policy
from streammon.detection.bank import Bank
from streammon.export.grafana import dashboard
from streammon.export.prometheus import MonitorCollector


def test_bank_log_likelihood_steps_are_those_of_each_odds_ratio() -> None:
    """p0 = 0.8 and error-odds ratio 1.5: q1 = 0.25·1.5/(1 + 0.25·1.5) = 3/11; a right sample lowers S by
    ln(0.8/(8/11)), a wrong one raises it by ln((3/11)/0.2)."""
    bank = Bank.of(0.8)
    j = [1.15, 1.27, 1.5].index(1.5)
    assert bank.q1[j] == pytest.approx(3 / 11, abs=1e-12)
    assert bank.up[j] == pytest.approx(math.log(0.8 / (8 / 11)), abs=1e-12)
    assert bank.down[j] == pytest.approx(math.log((3 / 11) / 0.2), abs=1e-12)


def test_monitor_baseline_p0_is_the_jeffreys_mean_of_the_given_counts() -> None:
    """A given baseline of 900/1000 right gives p0 = (900 + 1/2)/(1000 + 1), the Jeffreys posterior mean."""
    monitor = Monitor([Cumulative()], reference={"a": 1, "b": 1}, baseline={"a": {"a": 900, "b": 100},
                                                                             "b": {"b": 900, "a": 100}})
    assert monitor.report().baseline["a"] == pytest.approx(900.5 / 1001, abs=1e-12)


def test_a_recall_exactly_at_the_collapse_threshold_is_collapsed() -> None:
    """Recall 1/20 = 0.05 equals the default collapse threshold: the Condition 3 flag is raised (<=, not <)."""
    monitor = Monitor([Cumulative()], classes=["a", "b", "c"], warmup=10_000)
    truth = ["a"] * 20 + ["b"] * 20 + ["c"] * 20
    preds = ["a"] + ["b"] * 19 + ["b"] * 20 + ["c"] * 20
    monitor.update_many(truth, preds)
    w = monitor.report().windows["cumulative"]
    assert w.recall["a"] == Policy().collapse_recall
    assert "gmean" in w.flagged("condition3")
    strict = Monitor([Cumulative()], classes=["a", "b", "c"], warmup=10_000, policy=Policy(collapse_recall=0.049))
    strict.update_many(truth, preds)
    assert "gmean" not in strict.report().windows["cumulative"].flagged("condition3")


def test_a_significant_but_tiny_mix_change_raises_no_prior_shift_alert() -> None:
    """n = 1e6 at 51/49 against 50/50: the exact test rejects, but the prior ratio 1.04 < shift_min_ratio, so no
    alert; 70/30 (ratio 1.67) alerts."""
    monitor = Monitor([Cumulative()], reference={"a": 1, "b": 1}, detector=DetectorSettings(enabled=False))
    labels = np.array(["a"] * 510_000 + ["b"] * 490_000)
    monitor.update_many(labels, labels)
    report = monitor.report()
    shift = report.windows["cumulative"].prior_shift
    assert shift is not None and shift.p_value < 1e-50 and shift.prior_ratio < Policy().shift_min_ratio
    assert not report.alerting("prior_shift")
    labels = np.array(["a"] * 7_000 + ["b"] * 3_000)
    moved = Monitor([Cumulative()], reference={"a": 1, "b": 1}, detector=DetectorSettings(enabled=False))
    moved.update_many(labels, labels)
    assert moved.report().alerting("prior_shift")


def test_incompetence_needs_the_whole_interval_below_one_over_k() -> None:
    """Recall 4/10 of one class: below 1/K = 0.5 but its interval reaches above, so no alert; 400/1000 alerts."""
    def alerts(right: int, n: int) -> tuple[str, ...]:
        monitor = Monitor([Cumulative()], reference={"a": 1, "b": 1}, detector=DetectorSettings(enabled=False))
        truth = ["a"] * n + ["b"] * n
        preds = ["a"] * n + ["b"] * right + ["a"] * (n - right)
        monitor.update_many(truth, preds)
        return tuple(a.subject for a in monitor.report().alerting("incompetent"))

    assert alerts(4, 10) == ()
    assert "min_recall" in alerts(400, 1000)


def test_distortion_prone_scores_are_exported_as_read_not_corrected() -> None:
    """streammon_distortion_prone_score{metric="precision"} equals scikit-learn's precision of the window."""
    monitor = Monitor([Cumulative()], reference={"legit": 90, "fraud": 10})
    truth = ["legit"] * 60 + ["fraud"] * 40
    preds = ["legit"] * 50 + ["fraud"] * 10 + ["fraud"] * 30 + ["legit"] * 10
    monitor.update_many(truth, preds)
    registry = CollectorRegistry()
    registry.register(MonitorCollector({"m": monitor}, distortion_prone=True))
    samples = {
        (s.name, s.labels.get("metric")): s.value
        for family in text_string_to_metric_families(generate_latest(registry).decode())
        for s in family.samples if s.labels.get("window") == "cumulative"
    }
    expected = precision_score(truth, preds, pos_label="fraud")
    assert samples[("streammon_distortion_prone_score", "precision")] == pytest.approx(expected, abs=1e-12)
    corrected = monitor.report().windows["cumulative"].corrected["precision"]
    assert abs(corrected - expected) > 0.1  # the two differ here, so the test tells them apart


def test_every_dashboard_panel_has_a_non_empty_query() -> None:
    """Each panel of the generated dashboard has at least one target whose PromQL expression is not blank."""
    for panel in dashboard()["panels"]:
        exprs = [t.get("expr", "") for t in panel.get("targets", [])]
        assert exprs and all(e.strip() for e in exprs), panel["title"]
