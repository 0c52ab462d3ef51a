"""Alerts where SREs read them: the exporter's baseline, `streammon rules` flags and profiles, examples/prometheus
checked by promtool and amtool, and a real Prometheus + Alertmanager watching `streammon demo`."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from streammon import Cumulative, Monitor
from streammon.cli import RULE_FLAGS, main
from streammon.demo import REFERENCE, VALIDATION
from streammon.export.prometheus import MonitorCollector
from streammon.export.rules import PROFILES, RuleSettings, render_rules
from tests.live import LiveAlertmanager, LivePrometheus, free_port, stop_process

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "prometheus"
DEGRADATION_ALERTS = ("StreammonClassDegraded", "StreammonClassRecallDegraded")


def _baselines(monitor: Monitor) -> dict[str, float]:
    registry = CollectorRegistry()
    registry.register(MonitorCollector({"demo": monitor}))
    families = text_string_to_metric_families(generate_latest(registry).decode())
    return {s.labels["class"]: s.value for f in families for s in f.samples if s.name == "streammon_baseline_recall"}


def test_exporter_exports_each_classs_baseline_recall_from_the_first_scrape() -> None:
    """With validation counts, streammon_baseline_recall is there before any sample, and is the Jeffreys posterior
    mean (right + 1/2)/(total + 1) of each class's validation recall; a class still learning its baseline has no
    series (not 0)."""
    monitor = Monitor([Cumulative()], reference=REFERENCE, baseline=VALIDATION)
    got = _baselines(monitor)
    assert got.keys() == {"legit", "fraud"}
    assert got["fraud"] == pytest.approx(850.5 / 1001, abs=1e-12)
    assert got["legit"] == pytest.approx(18_050.5 / 19_001, abs=1e-12)
    learning = Monitor([Cumulative()], reference=REFERENCE)
    learning.update_many(["legit"] * 9 + ["fraud"], ["legit"] * 10)
    assert _baselines(learning) == {}


def _blocks(text: str) -> dict[str, str]:
    """Each rule's YAML block, keyed by its alert or record name."""
    parts = re.split(r"\n\s+- (?=alert: |record: )", text)
    return {re.match(r'(?:alert|record): "([^"]+)"', p).group(1): p for p in parts[1:]}  # type: ignore[union-attr]


def _seconds(duration: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+)(ms|s|m|h|d|w|y)", duration))


def test_rules_flags_set_windows_thresholds_replicas_for_and_runbook(capsys: pytest.CaptureFixture[str]) -> None:
    """Each `streammon rules` flag lands in the rule it names."""
    assert main(["rules", "--window", "30m", "--baseline-window", "6h", "--recall-drop", "0.2",
                 "--min-class-samples", "50", "--min-samples-per-class", "40", "--shift-min-ratio", "2.5",
                 "--recall-clear-drop", "0.1", "--hold-class-samples", "20", "--hold-samples-per-class", "10",
                 "--incompetent-confidence", "0.9", "--shift-keep-firing-for", "3h",
                 "--label-coverage-clear-fraction", "0.8", "--hold-aged-predictions", "40",
                 "--shift-alpha", "0.002", "--keep-firing-for", "45m",
                 "--cusum-replicas", "2", "--cusum-for", "2m", "--degradation-for", "7m", "--incompetent-for", "8m",
                 "--class-set-for", "9m", "--shift-for", "11m", "--label-shift-p-value", "0.001",
                 "--not-prior-shift-for", "12m", "--expected-drop", "0.1", "--expected-drop-for", "13m",
                 "--runbook", "https://wiki.example/streammon"]) == 0
    rules = _blocks(capsys.readouterr().out)
    cusum = rules["StreammonClassDegraded"]
    assert 'expr: "streammon:class_degraded:replicas >= 2"' in cusum and 'for: "2m"' in cusum
    assert 'runbook_url: "https://wiki.example/streammon#streammonclassdegraded"' in cusum
    recall = rules["StreammonClassRecallDegraded"]
    assert "streammon:class_recall:ratio_30m < on (model, class) (streammon:class_recall:baseline - 0.2)" in recall
    assert "streammon:class_samples:increase_30m >= 50" in recall and 'for: "7m"' in recall
    assert "(streammon:class_recall:baseline - 0.1) and on (model, class) streammon:class_samples:increase_30m >= 20" \
        in recall and 'alertname=\\"StreammonClassRecallDegraded\\", alertstate=\\"firing\\"}[30m]' in recall
    assert "(streammon:class_samples:increase_30m > 0) >= 10" in rules["StreammonIncompetent"]
    assert "ln(0.05 / streammon:classes_present:count_30m)" in rules["streammon:min_recall_z:threshold_30m"]
    coverage = rules["StreammonLabelCoverageLow"]
    assert "(0.8 * streammon:label_coverage:ratio)" in coverage and "streammon:aged_predictions:sum >= 40" in coverage
    assert "streammon:class_recall:ratio_6h" in rules["streammon:class_recall:baseline"]
    assert ">= 40" in rules["StreammonIncompetent"] and 'for: "8m"' in rules["StreammonIncompetent"]
    assert 'for: "9m"' in rules["StreammonClassSetChanged"]
    shift = rules["StreammonPriorShift"]
    assert "streammon:prior_ratio:max_30m >= 2.5" in shift and 'for: "11m"' in shift
    assert 'keep_firing_for: "3h"' in shift and 'keep_firing_for: "45m"' in rules["StreammonIncompetent"]
    assert "ln(0.002 / (2 * " in rules["streammon:prior_shift_t:ratio"]
    not_prior = rules["StreammonNotPriorShift"]
    assert "streammon:label_shift_p_value:min < 0.001" in not_prior and 'for: "12m"' in not_prior
    assert "streammon:not_prior_shift:replicas >= 1" in not_prior
    drop = rules["StreammonExpectedPerformanceDrop"]
    assert "(streammon:validation_balanced_accuracy:min - 0.1)" in drop and 'for: "13m"' in drop
    assert set(RULE_FLAGS) == {name for name in RuleSettings.__dataclass_fields__}  # every setting has a flag


def test_demo_profile_fires_within_a_demo_phase_and_the_default_does_not_rush() -> None:
    """Demo: every for: at most 15 s (a demo phase is a minute or less), windows of a minute. Default: for: of a
    minute or more, the 1h window; every alert has summary, description and runbook_url."""
    demo, default = _blocks(render_rules(PROFILES["demo"])), _blocks(render_rules(PROFILES["default"]))
    for rules, low, high in ((demo, 0, 15), (default, 60, math.inf)):
        alerts = {name: block for name, block in rules.items() if name.startswith("Streammon")}
        assert set(alerts) == {"StreammonClassDegraded", "StreammonClassRecallDegraded", "StreammonIncompetent",
                               "StreammonClassSetChanged", "StreammonPriorShift", "StreammonLabelCoverageLow",
                               "StreammonPredictedMixShift", "StreammonNotPriorShift",
                               "StreammonExpectedPerformanceDrop"}
        for block in alerts.values():
            duration = re.search(r'for: "([^"]+)"', block)
            assert duration is not None and low <= _seconds(duration.group(1)) <= high, block
            assert all(f"{key}: " in block for key in ("summary", "description", "runbook_url"))
    assert "streammon:class_recall:ratio_1m" in demo and "streammon:class_recall:ratio_1h" in default


@pytest.mark.parametrize(("argv", "named"), [
    (["--window", "1 hour"], "'1 hour'"), (["--cusum-for", "5"], "'5'"), (["--recall-drop", "1.5"], "1.5"),
    (["--cusum-replicas", "0"], "0"), (["--window", "1d"], "'1d'"), (["--runbook", "a b"], "'a b'"),
])
def test_bad_rule_flags_exit_2_naming_the_value(argv: list[str], named: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A bad flag value stops `streammon rules` with usage status 2, naming the flag and the value; nothing printed."""
    with pytest.raises(SystemExit) as stop:
        main(["rules", *argv])
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and not out
    assert argv[0] in err and named in err


def test_rule_settings_reject_bad_values_with_value_error() -> None:
    """RuleSettings rejects non-durations, out-of-range thresholds, zero counts, equal windows and off levels
    (hysteresis) stricter than their on levels."""
    for bad in ({"shift_for": "15 m"}, {"shift_alpha": 0}, {"recall_drop": True}, {"min_class_samples": 2.5},
                {"baseline": "1h"}, {"recall_clear_drop": 0.2}, {"hold_class_samples": 101},
                {"hold_samples_per_class": 31}, {"hold_samples_per_class": 0}, {"incompetent_confidence": 1.0},
                {"label_coverage_clear_fraction": 0.4}, {"hold_aged_predictions": 101}):
        with pytest.raises(ValueError, match=re.escape(repr(next(iter(bad.values()))))):
            RuleSettings(**bad)  # type: ignore[arg-type]


def test_example_rules_are_the_demo_profile() -> None:
    """examples/prometheus/streammon.demo.rules.yml is what `streammon rules --profile demo` prints."""
    assert (EXAMPLES / "streammon.demo.rules.yml").read_text() == render_rules(PROFILES["demo"])


@pytest.mark.prometheus
def test_promtool_checks_the_example_prometheus_config_and_its_rules(promtool: str) -> None:
    """promtool check config accepts examples/prometheus/prometheus.yml and the rule file it loads."""
    result = subprocess.run([promtool, "check", "config", "prometheus.yml"], cwd=EXAMPLES,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 1 rule files found" in result.stdout + result.stderr


@pytest.mark.prometheus
def test_amtool_checks_the_example_alertmanager_config(amtool: str) -> None:
    """amtool check-config accepts examples/prometheus/alertmanager.yml."""
    result = subprocess.run([amtool, "check-config", "alertmanager.yml"], cwd=EXAMPLES,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0 and "SUCCESS" in result.stdout, result.stdout + result.stderr


class _Webhook:
    """An HTTP server on 127.0.0.1 that keeps every JSON body POSTed to it."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        bodies = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


PHASE = 12.0  # seconds per demo phase: steady 0-12 s, mix_drift 12-24 s, degradation 24-36 s


@pytest.fixture
def webhook() -> Iterator[_Webhook]:
    hook = _Webhook()
    try:
        yield hook
    finally:
        hook.stop()


def _firing(alerts: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [a for a in alerts if a["labels"]["alertname"] == name and a["state"] == "firing"]


@pytest.mark.prometheus
def test_demo_degradation_fires_in_prometheus_and_reaches_alertmanager_but_the_mix_drift_does_not(
        prometheus_binary: str, alertmanager_binary: str, webhook: _Webhook, tmp_path: Path) -> None:
    """A real Prometheus with examples/prometheus (demo rules) scrapes `streammon demo` with 12-second phases:
    StreammonClassDegraded for class fraud fires during the degradation phase and Alertmanager hands it to the
    webhook; during steady and mix_drift no degradation alert is even pending, and the exporter's own CUSUM is quiet,
    while its prior-shift alert shows that the mix did move."""
    hook_url = f"127.0.0.1:{webhook.port}"
    am_config = (EXAMPLES / "alertmanager.yml").read_text()
    assert "127.0.0.1:5001" in am_config
    demo_port = free_port()
    prom_config = (EXAMPLES / "prometheus.yml").read_text()
    assert "127.0.0.1:9464" in prom_config and "127.0.0.1:9093" in prom_config
    shutil.copy(EXAMPLES / "streammon.demo.rules.yml", tmp_path)
    alertmanager = prometheus = demo = None
    try:
        alertmanager = LiveAlertmanager(alertmanager_binary, tmp_path, am_config.replace("127.0.0.1:5001", hook_url))
        prom_config = prom_config.replace("127.0.0.1:9464", f"127.0.0.1:{demo_port}")
        prometheus = LivePrometheus(prometheus_binary, tmp_path, [], config_text=prom_config.replace(
            "127.0.0.1:9093", f"127.0.0.1:{alertmanager.port}"))
        demo = subprocess.Popen([sys.executable, "-m", "streammon", "demo", "--port", str(demo_port),
                                 "--phase-seconds", str(PHASE), "--duration", str(4 * PHASE), "--rate", "2000",
                                 "--every", "5"], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert demo.stdout is not None
        assert f"127.0.0.1:{demo_port}/metrics" in demo.stdout.readline()
        t0 = time.time()  # the demo's clock starts right after that line
        stdout = demo.stdout
        threading.Thread(target=stdout.read, daemon=True).start()  # drain the live view

        fired_at, alert = None, None
        while time.time() < t0 + 3 * PHASE:
            firing = _firing(prometheus.api("alerts")["alerts"], "StreammonClassDegraded")
            if firing:
                fired_at, alert = time.time(), firing[0]
                break
            time.sleep(0.25)
        assert alert is not None, "StreammonClassDegraded did not fire during the degradation phase"
        assert fired_at is not None and t0 + 2 * PHASE < fired_at < t0 + 3 * PHASE
        print(f"StreammonClassDegraded firing {fired_at - t0 - 2 * PHASE:.1f} s into the degradation phase")
        assert alert["labels"]["model"] == "demo" and alert["labels"]["class"] == "fraud"
        assert alert["annotations"]["runbook_url"].endswith("#streammonclassdegraded")

        start, end = str(t0), str(t0 + 2 * PHASE - 0.5)  # steady and mix_drift, as Prometheus recorded them
        names = "|".join(DEGRADATION_ALERTS)
        quiet = prometheus.api("query_range", query=f'ALERTS{{alertname=~"{names}"}}', start=start, end=end,
                               step="0.5")
        assert quiet["result"] == [], quiet
        cusum = prometheus.api("query_range", query='streammon_alert{kind="degradation"}', start=start, end=end,
                               step="0.5")
        assert cusum["result"] == [], cusum
        drift = prometheus.api("query_range", query='streammon_alert{kind="prior_shift"}', start=str(t0 + PHASE),
                               end=end, step="0.5")
        assert drift["result"], "the mix_drift phase moved no class mix: the quiet check above would be vacuous"

        deadline = time.time() + 20
        while time.time() < deadline and not any(
                a["labels"].get("alertname") == "StreammonClassDegraded" and a["status"] == "firing"
                for body in webhook.bodies for a in body["alerts"]):
            time.sleep(0.25)
        held = [a for a in alertmanager.alerts() if a["labels"]["alertname"] == "StreammonClassDegraded"]
        assert held and held[0]["labels"]["class"] == "fraud" and held[0]["status"]["state"] == "active"
        notified = [a for body in webhook.bodies for a in body["alerts"]
                    if a["labels"].get("alertname") == "StreammonClassDegraded" and a["status"] == "firing"]
        assert notified and notified[0]["labels"]["class"] == "fraud", webhook.bodies
        assert "fell below its baseline" in notified[0]["annotations"]["description"]
    finally:
        for process in (demo, prometheus, alertmanager):
            if isinstance(process, subprocess.Popen):
                stop_process(process)
            elif process is not None:
                process.stop()
