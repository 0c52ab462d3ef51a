"""Against a real Prometheus: three replica exporters, the checked-in rules and every dashboard query."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from streammon import ConfusionCounts
from streammon.export.grafana import dashboard, expected_queries, queries, score_queries
from tests.live import LivePrometheus, stop_process
from tests.replica_exporter import LABELLED, REFERENCE, UPDATED, replica_samples

pytestmark = pytest.mark.prometheus

ROOT = Path(__file__).resolve().parents[1]
SEEDS = (0, 1, 2)
SUBSTITUTIONS = {"$model": "fraud", "$window": "sliding_1000"}


class Stack:
    """Replica exporters scraped by one Prometheus that loads grafana/rules."""

    def __init__(self, prometheus: LivePrometheus, replicas: list[subprocess.Popen[str]], ports: list[int]) -> None:
        self.prometheus = prometheus
        self.replicas = replicas
        self.ports = ports


@pytest.fixture(scope="session")
def stack(prometheus_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Start the replicas (idle), Prometheus, let it scrape zeros, then let every replica count its samples."""
    replicas, ports = [], []
    prometheus = None
    try:
        for seed in SEEDS:
            process = subprocess.Popen([sys.executable, str(ROOT / "tests" / "replica_exporter.py"), str(seed)],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
            replicas.append(process)
            assert process.stdout is not None
            ports.append(int(process.stdout.readline().split()[1]))
        rules = ROOT / "grafana" / "rules" / "streammon.rules.yml"
        targets = [f"127.0.0.1:{p}" for p in ports]
        prometheus = LivePrometheus(prometheus_binary, tmp_path_factory.mktemp("prometheus"), targets, [rules])
        prometheus.wait_for("count(up == 1)", lambda r: r and float(r[0]["value"][1]) == len(SEEDS))
        prometheus.wait_for("min(count_over_time(streammon_samples_total[1m]))",
                            lambda r: r and float(r[0]["value"][1]) >= 5)
        for process in replicas:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write("go\n")
            process.stdin.flush()
            assert process.stdout.readline().strip() == "counted"
        total = LABELLED * len(SEEDS)  # the labelled samples; the rest still wait for their labels
        prometheus.wait_for("sum(streammon_samples_total)", lambda r: r and float(r[0]["value"][1]) == total)
        time.sleep(6)  # more scrapes after the data: keeps increase()'s end extrapolation small
        yield Stack(prometheus, replicas, ports)
    finally:
        if prometheus is not None:
            prometheus.stop()
        for process in replicas:
            if process.stdin is not None:
                process.stdin.close()
            stop_process(process)


def _merged() -> ConfusionCounts:
    merged = ConfusionCounts()
    for seed in SEEDS:
        truth, preds = replica_samples(seed)
        truth, preds = truth[:LABELLED], preds[:LABELLED]
        part = ConfusionCounts()
        for t, p in zip(truth.tolist(), preds.tolist(), strict=True):
            part.add(t, p)
        merged = merged + part
    return merged


def _by_class(result: list[dict[str, Any]]) -> dict[str, float]:
    return {r["metric"].get("class", ""): float(r["value"][1]) for r in result}


def test_cross_replica_rules_equal_the_metrics_of_the_merged_counts(stack: Stack) -> None:
    """Recording rules over three replicas equal recall, ACSA, G-mean, min recall, mix, RRT and TV of the merged
    counts. Tolerance 0.01: increase() extrapolates each replica's series to the window end by up to one scrape
    interval, by a slightly different factor per replica."""
    merged = _merged()
    labels, m = merged.labels, merged.matrix
    recalls = {str(lab): m[i, i] / m[i].sum() for i, lab in enumerate(labels)}
    priors = {str(lab): m[i].sum() / m.sum() for i, lab in enumerate(labels)}
    q = stack.prometheus.query
    got = _by_class(q('streammon:class_recall:ratio_1h{model="fraud"}'))
    assert got.keys() == recalls.keys()
    for cls, value in recalls.items():
        assert got[cls] == pytest.approx(value, abs=0.01)
    assert float(q('streammon:acsa:ratio_1h{model="fraud"}')[0]["value"][1]) == pytest.approx(
        sum(recalls.values()) / 2, abs=0.01)
    assert float(q('streammon:gmean:ratio_1h{model="fraud"}')[0]["value"][1]) == pytest.approx(
        math.sqrt(math.prod(recalls.values())), abs=0.01)
    assert float(q('streammon:min_recall:ratio_1h{model="fraud"}')[0]["value"][1]) == pytest.approx(
        min(recalls.values()), abs=0.01)
    mix = _by_class(q('streammon:class_prior:ratio_1h{model="fraud"}'))
    for cls, value in priors.items():
        assert mix[cls] == pytest.approx(value, abs=0.01)
    assert float(q('streammon:rrt:ratio_1h{model="fraud"}')[0]["value"][1]) == pytest.approx(
        max(priors.values()) / min(priors.values()), rel=0.05)
    reference = {k: v / sum(REFERENCE.values()) for k, v in REFERENCE.items()}
    tv = 0.5 * sum(abs(priors[c] - reference[c]) for c in reference)
    assert float(q('streammon:prior_shift_tv:ratio_1h{model="fraud"}')[0]["value"][1]) == pytest.approx(tv, abs=0.01)


def test_label_rules_equal_a_recount_of_the_replicas_predictions(stack: Stack) -> None:
    """Over three replicas, the predicted mix (1h) is the recount of every predict_many call's predictions, and the
    lifetime coverage is the labelled share of them (tolerance as above for increase())."""
    predicted = np.concatenate([replica_samples(seed)[1][UPDATED:] for seed in SEEDS])
    mix = _by_class(stack.prometheus.query('streammon:predicted_mix:ratio_1h{model="fraud"}'))
    assert mix.keys() == {"legit", "fraud"}
    for cls, value in mix.items():
        assert value == pytest.approx(float(np.mean(predicted == cls)), abs=0.01)
    coverage = float(stack.prometheus.query('streammon:label_coverage:ratio{model="fraud"}')[0]["value"][1])
    assert coverage == (LABELLED - UPDATED) / (len(predicted) / len(SEEDS))


def test_every_rule_evaluates_without_error(stack: Stack) -> None:
    """Prometheus loaded every recording and alerting rule of the committed file and evaluates them all healthily."""
    groups = stack.prometheus.api("rules")["groups"]
    rules = [rule for group in groups for rule in group["rules"]]
    committed = yaml.safe_load((ROOT / "grafana" / "rules" / "streammon.rules.yml").read_text())["groups"]
    assert len(rules) == sum(len(group["rules"]) for group in committed) >= 38
    assert all(rule["health"] == "ok" for rule in rules), [r for r in rules if r["health"] != "ok"]


def _substitute(expr: str) -> str:
    for variable, value in SUBSTITUTIONS.items():
        expr = expr.replace(variable, value)
    match = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", expr)
    return match.group(1) if match else expr  # a variable query: its selector must return series


@pytest.mark.parametrize("expr", list(queries(dashboard())))
def test_every_dashboard_query_parses_and_returns_data(stack: Stack, expr: str) -> None:
    """Each dashboard query, template variables substituted, runs as a range query and returns data."""
    now = time.time()
    data = stack.prometheus.api("query_range", query=_substitute(expr), start=str(now - 30), end=str(now), step="2")
    if expr in score_queries() | expected_queries():  # the replicas send no scores: the panels stay empty, no
        assert data["result"] == [], expr  # made-up line (tests/test_dashboard_scores_live.py feeds them scores)
    else:
        assert data["result"], f"no data for {expr}"


def test_promtool_check_metrics_on_a_live_scrape(stack: Stack, promtool: str) -> None:
    """A live replica's exposition passes promtool check metrics with no finding."""
    body = urllib.request.urlopen(f"http://127.0.0.1:{stack.ports[0]}/metrics", timeout=5).read().decode()
    result = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, text=True, check=False)
    assert result.returncode == 0 and not result.stdout.strip() and not result.stderr.strip(), result


def test_demo_serves_metrics_that_the_dashboard_and_promtool_accept(prometheus_binary: str, promtool: str,
                                                                    tmp_path: Path) -> None:
    """`streammon demo --port P --duration S` serves a lint-clean /metrics on which every dashboard query
    returns data, prints its live view, and exits 0 by itself."""
    from tests.live import free_port

    port = free_port()
    demo = subprocess.Popen([sys.executable, "-m", "streammon", "demo", "--port", str(port), "--duration", "14",
                             "--rate", "3000", "--every", "2", "--late-labels", "--label-delay", "1"],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    prometheus = None
    try:
        assert demo.stdout is not None
        assert f"127.0.0.1:{port}/metrics" in demo.stdout.readline()
        prometheus = LivePrometheus(prometheus_binary, tmp_path, [f"127.0.0.1:{port}"])
        prometheus.wait_for('min(count_over_time(streammon_samples_total{model="demo"}[1m]))',
                            lambda r: r and float(r[0]["value"][1]) >= 6)
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        lint = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, text=True, check=False)
        assert lint.returncode == 0 and not lint.stdout.strip() and not lint.stderr.strip(), lint
        now = time.time()
        for expr in queries(dashboard()):
            query = _substitute(expr.replace("$model", "demo").replace("$window", "sliding_2000"))
            data = prometheus.api("query_range", query=query, start=str(now - 20), end=str(now), step="2")
            scored = score_queries() | expected_queries()
            assert bool(data["result"]) is (expr not in scored), f"data for {expr}: {data['result']}"
        output, _ = demo.communicate(timeout=30)
        assert demo.returncode == 0
        assert "phase=" in output and "stopped after" in output
    finally:
        if prometheus is not None:
            prometheus.stop()
        stop_process(demo)
