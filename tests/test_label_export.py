"""Predictions and late labels in the Prometheus exposition: a golden file, lint, and the alert inputs."""

from __future__ import annotations

import subprocess
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from streammon import Cumulative, Monitor, Sliding, Timed
from streammon.export.prometheus import MonitorCollector

GOLDEN = Path(__file__).parent / "golden" / "label_exposition.txt"
MODEL = "late-model"
# The scenario tests/test_golden_labels_independent.py recounts: ten predictions (key k at t = k), key 9 predicted
# again while pending; labels by time: keys 0, 1, 2, 3, 5 (t 20, 21, 40, 41, 100), key 0 again (t 1000, a
# duplicate), key 7 (t 3000), an unknown key (t 3650, an orphan: its time expires keys 4, 6, 8, 9 with ttl 3600).
PRED = ["legit"] * 5 + ["fraud"] * 3 + ["legit"] * 2
TRUTH = ["legit"] * 6 + ["fraud"] * 4
LABELS = [(0, 20.0), (1, 21.0), (2, 40.0), (3, 41.0), (5, 100.0), (0, 1000.0), (7, 3000.0), ("tx-unknown", 3650.0)]


def late_monitor() -> Monitor:
    """The golden scenario's monitor."""
    monitor = Monitor([Cumulative(), Sliding(4)], reference={"legit": 90, "fraud": 10}, label_ttl=3600.0,
                      clock=lambda: 3650.0)
    for key, pred in enumerate(PRED):
        monitor.predict(key, pred, t=float(key))
    monitor.predict(9, "fraud", t=9.5)  # repeated: the first prediction stands
    for key, t in LABELS:
        monitor.label(key, TRUTH[key] if isinstance(key, int) else "legit", t=t)
    return monitor


def _exposition(collector: MonitorCollector) -> str:
    registry = CollectorRegistry()
    registry.register(collector)
    return generate_latest(registry).decode()


def test_label_exposition_matches_the_golden_file() -> None:
    """The exposition of the late-label scenario is byte-for-byte the reviewed golden file."""
    assert _exposition(MonitorCollector({MODEL: late_monitor()})) == GOLDEN.read_text()


def test_promtool_check_metrics_is_clean_with_label_families(promtool: str) -> None:
    """promtool check metrics reports nothing on an exposition holding every label family."""
    text = _exposition(MonitorCollector({MODEL: late_monitor()}, distortion_prone=True, confusion=True))
    result = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, check=False)
    assert result.returncode == 0 and not result.stdout.strip() and not result.stderr.strip(), result


def _values(text: str, name: str) -> dict[str, float]:
    return {s.labels.get("window", ""): s.value for f in text_string_to_metric_families(text) for s in f.samples
            if s.name == name}


def test_aged_gauges_say_what_the_coverage_alert_judged() -> None:
    """When the label pipeline stops, the timed window's aged gauges fall below half the lifetime coverage exactly
    when the in-report label_coverage_low alert holds; a model without predict exports zero counters only."""
    monitor = Monitor([Timed(300, buckets=10)], reference={"a": 1, "b": 1}, clock=lambda: 2000.0)
    seen: list[tuple[bool, bool]] = []
    for t in range(0, 2000):
        monitor.predict(t, "a" if t % 3 else "b", t=float(t))
        if t >= 10 and t < 1000:  # every prediction gets its label 10 s later, until the pipeline breaks at 1000
            monitor.label(t - 10, "a" if (t - 10) % 3 else "b", t=float(t))
        if t % 250 == 249:
            report = monitor.report()
            text = _exposition(MonitorCollector({"m": monitor}))
            aged = _values(text, "streammon_aged_predictions").get("timed_300s", 0.0)
            labelled = _values(text, "streammon_aged_labelled_predictions").get("timed_300s", 0.0)
            joined = _values(text, "streammon_label_joined_total")[""]
            predictions = sum(s.value for f in text_string_to_metric_families(text) for s in f.samples
                              if s.name == "streammon_predictions_total")
            gauges_say = aged >= 100 and labelled / aged < 0.5 * joined / predictions
            alert = any(a.kind == "label_coverage_low" for a in report.alerts)
            seen.append((gauges_say, alert))
    assert all(g == a for g, a in seen), seen
    assert (True, True) in seen and (False, False) in seen
    bare = _exposition(MonitorCollector({"m": Monitor([Sliding(5)], reference={"a": 1, "b": 1})}))
    label_samples = {(s.name, s.labels.get("class", s.labels.get("le", ""))): s.value
                     for f in text_string_to_metric_families(bare) for s in f.samples
                     if s.name.startswith(("streammon_label", "streammon_predict", "streammon_aged",
                                           "streammon_implied", "streammon_window_label", "streammon_window_pred"))}
    assert set(label_samples.values()) == {0.0}
    assert ("streammon_predictions_total", "b") in label_samples
    assert {name for name, _ in label_samples} == {
        "streammon_predictions_total", "streammon_label_joined_total", "streammon_label_orphans_total",
        "streammon_label_duplicates_total", "streammon_predictions_expired_total",
        "streammon_predictions_evicted_total", "streammon_predictions_repeated_total", "streammon_predictions_pending",
        "streammon_label_latency_seconds_bucket"}
