"""The dashboard's score panels against a real Prometheus: two replicas expose a model's score metrics under the
exporter's names (``streammon_score{metric="roc_auc"}`` with its interval, ``streammon_corrected_score`` and the
type-1 ``streammon_distortion`` of ``ece``/``brier``/``log_loss``), the values computed by scikit-learn (and ECE
counted by hand) on each replica's samples; every score query returns data, and what it shows is the mean over
the replicas of the values as read and at the reference mix. Two more replicas serve the real exporter's text of
two monitors with a ``streammon.Validation`` baseline and scored predictions — ``triage`` at K = 3, ``screen`` at
K = 2 — so the panels of the performance expected without labels (EM) and of the estimated mix show, per window
and bound, the replicas' mean of what each monitor's report holds."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from prometheus_client import CollectorRegistry, generate_latest

import streammon
from streammon import Monitor, Sliding
from streammon.export.grafana import dashboard, expected_queries, queries, score_queries
from streammon.export.prometheus import MonitorCollector
from streammon.findings.report import Report
from tests.live import LivePrometheus
from tests.test_score_estimate_k3 import setup, shifted, window
from tests.test_score_estimate_monitor import _draw

sklearn_metrics = pytest.importorskip("sklearn.metrics")
pytestmark = pytest.mark.prometheus

REFERENCE = (0.9, 0.1)  # negatives, positives
SELECT = {"$model": "fraud", "$window": "sliding_1000"}


def _samples(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(1000) < 0.1 + 0.1 * seed).astype(np.int64)  # the second replica sees twice the positives
    return y, 1.0 / (1.0 + np.exp(-(1.5 * rng.normal(0.0, 1.0, 1000) + 3.0 * y - 2.5)))


def _ece(y: np.ndarray, s: np.ndarray, w: np.ndarray) -> float:
    """ECE over 15 equal-width bins of max(s, 1 − s), weighted, counted directly."""
    confidence, right = np.maximum(s, 1 - s), ((s > 0.5).astype(np.int64) == y)
    bins = np.minimum(np.floor(confidence * 15).astype(int), 14)
    gaps = [abs(float(w[bins == b] @ (right[bins == b] - confidence[bins == b]))) for b in range(15)]
    return sum(gaps) / float(w.sum())


def _values(seed: int) -> dict[str, tuple[float, float]]:
    """Per score metric: (as read, at the reference mix) on one replica's samples."""
    y, s = _samples(seed)
    share = np.bincount(y, minlength=2) / len(y)
    w = np.asarray(REFERENCE)[y] / share[y]  # sample weights that move the window to the reference mix
    ones = np.ones(len(y))
    auc = float(sklearn_metrics.roc_auc_score(y, s))
    return {"roc_auc": (auc, auc),
            "brier": (sklearn_metrics.brier_score_loss(y, s), sklearn_metrics.brier_score_loss(y, s, sample_weight=w)),
            "log_loss": (sklearn_metrics.log_loss(y, s), sklearn_metrics.log_loss(y, s, sample_weight=w)),
            "ece": (_ece(y, s, ones), _ece(y, s, w))}


def _exposition(seed: int) -> bytes:
    values = _values(seed)
    key = 'model="fraud",window="sliding_1000"'
    auc = values["roc_auc"][0]
    lines = ["# TYPE streammon_score gauge", f'streammon_score{{{key},metric="roc_auc"}} {auc}',
             "# TYPE streammon_score_interval gauge",
             f'streammon_score_interval{{{key},metric="roc_auc",bound="low"}} {auc - 0.02}',
             f'streammon_score_interval{{{key},metric="roc_auc",bound="high"}} {auc + 0.02}',
             "# TYPE streammon_corrected_score gauge",
             *(f'streammon_corrected_score{{{key},metric="{m}"}} {values[m][1]}' for m in ("brier", "log_loss", "ece")),
             "# TYPE streammon_distortion gauge",
             *(f'streammon_distortion{{{key},metric="{m}",type="type1"}} {values[m][0] - values[m][1]}'
               for m in ("brier", "log_loss", "ece"))]
    return ("\n".join(lines) + "\n").encode()


def _em_monitors(seed: int) -> dict[str, Monitor]:
    """Replica ``seed``'s two label-free monitors, 1,000 scored predictions each and no label: ``triage`` (K = 3,
    a shifted mix) and ``screen`` (K = 2, 20 % then 30 % fraud against a validation set of 10 %)."""
    _, _, validation, order = setup(3)
    _, scores, predicted = window(3, shifted(3), 1000, seed=20 + seed)
    triage = Monitor([Sliding(1000)], classes=order, baseline=validation, detector=None)
    triage.predict_many([f"k{i}" for i in range(1000)], predicted.tolist(), y_score=scores)
    rng = np.random.default_rng(40 + seed)
    checked = streammon.Validation(*_draw(rng, 3_000, 0.1))
    _, pred, score = _draw(rng, 1000, 0.2 + 0.1 * seed)
    screen = Monitor([Sliding(1000)], baseline=checked, classes=["fraud", "ok"], positive="fraud",
                     reference={"fraud": 0.1, "ok": 0.9}, detector=None)
    screen.predict_many(list(range(1000)), pred, y_score=score)
    return {"triage": triage, "screen": screen}


class _Replica(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


EM_REPORTS: list[dict[str, Report]] = []  # per label-free replica, each model's report as it was served


def _em_exposition(seed: int) -> bytes:
    monitors = _em_monitors(seed)
    registry = CollectorRegistry()
    registry.register(MonitorCollector(monitors))
    EM_REPORTS.append({model: m.report() for model, m in monitors.items()})
    return generate_latest(registry)


@pytest.fixture(scope="module")
def prometheus(prometheus_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LivePrometheus]:
    servers = []
    EM_REPORTS.clear()
    bodies = [_exposition(0), _exposition(1), _em_exposition(0), _em_exposition(1)]
    for seed, body in enumerate(bodies):
        handler = type(f"Replica{seed}", (_Replica,), {"body": body})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
    live = None
    try:
        live = LivePrometheus(prometheus_binary, Path(tmp_path_factory.mktemp("prometheus-scores")),
                              [f"127.0.0.1:{s.server_address[1]}" for s in servers])
        live.wait_for("count(up == 1)", lambda r: r and float(r[0]["value"][1]) == len(bodies))
        live.wait_for("min(count_over_time(streammon_score[1m]))", lambda r: r and float(r[0]["value"][1]) >= 3)
        live.wait_for("min(count_over_time(streammon_expected_performance[1m]))",
                      lambda r: r and float(r[0]["value"][1]) >= 3)
        yield live
    finally:
        if live is not None:
            live.stop()
        for server in servers:
            server.shutdown()
            server.server_close()


def _query(expr: str) -> str:
    for variable, value in SELECT.items():
        expr = expr.replace(variable, value)
    return expr


@pytest.mark.parametrize("expr", sorted(score_queries()))
def test_every_score_query_returns_the_mean_over_replicas(prometheus: LivePrometheus, expr: str) -> None:
    """Each score panel query returns one line per (window, metric[, bound]) whose value is the replicas' mean of
    the value it names: as read (corrected + distortion) or at the reference mix."""
    now = time.time()
    assert prometheus.api("query_range", query=_query(expr), start=str(now - 10), end=str(now), step="2")["result"]
    result = prometheus.query(_query(expr))
    assert result, expr
    both = [_values(0), _values(1)]
    read = " + ignoring (type) " in expr
    for row in result:
        metric = row["metric"].get("metric") or ("log_loss" if "log_loss" in expr else "roc_auc")
        mean = float(np.mean([v[metric][0 if read else 1] for v in both]))
        shift = {"low": -0.02, "high": 0.02}.get(row["metric"].get("bound", ""), 0.0)
        assert float(row["value"][1]) == pytest.approx(mean + shift, abs=1e-9), (expr, row)
    if not read and "corrected" in expr:  # the two readings differ: the replicas' mix is not the reference's
        as_read = np.mean([v["brier"][0] for v in both])
        assert abs(as_read - np.mean([v["brier"][1] for v in both])) > 1e-3


def _em_query(expr: str) -> str:
    return expr.replace("$model", "screen|triage").replace("$window", "sliding_1000")


def _reported(model: str, metric: str, bound: str) -> float:
    """The replicas' mean of one expected-performance value as each monitor's report holds it."""
    values = []
    for reports in EM_REPORTS:
        w = reports[model].windows["sliding_1000"]
        e = w.estimate
        assert e is not None and e.method == "em"
        values.append({"estimate": w.expected[metric], "lower": e.expected_lower[metric],
                       "upper": e.expected_upper[metric], "validation": e.validation_scores.get(metric)}[bound])
    return float(np.mean(values))


@pytest.mark.parametrize("expr", sorted(expected_queries()))
def test_every_expected_performance_query_shows_the_reports_values_at_k_2_and_3(prometheus: LivePrometheus,
                                                                                   expr: str) -> None:
    """Each query of the expected-performance panels returns, for the K = 3 and the K = 2 model, one line per
    (window, metric, bound) whose value is the replicas' mean of the monitors' reports (estimate, its bounds over
    the mix's interval, the validation set's own value)."""
    now = time.time()
    query = _em_query(expr)
    assert prometheus.api("query_range", query=query, start=str(now - 10), end=str(now), step="2")["result"]
    result = prometheus.query(query)
    assert {row["metric"]["model"] for row in result} == {"screen", "triage"}, (expr, result)
    for row in result:
        labels = row["metric"]
        metric = labels.get("metric") or "acsa"  # the validation line aggregates the labels away but the model
        bound = labels.get("bound") or "validation"
        assert float(row["value"][1]) == pytest.approx(_reported(labels["model"], metric, bound), abs=1e-9), row
    if "lower|upper" in expr:
        assert {row["metric"]["bound"] for row in result} == {"lower", "upper"}


def test_the_estimated_mix_panel_shows_the_em_mix_with_its_bounds_at_k_2_and_3(prometheus: LivePrometheus) -> None:
    """The estimated-mix panel's queries read EM's class mix at K = 3 and K = 2: per class and bound, the value
    the replicas' reports hold (mean over the instances: Prometheus keeps one series per replica)."""
    exprs = [e for e in queries(dashboard()) if "streammon_estimated_prior" in e]
    assert len(exprs) == 2
    for expr in exprs:
        result = prometheus.query(f"avg without (instance, job) ({_em_query(expr)})")
        assert {row["metric"]["model"] for row in result} == {"screen", "triage"}, (expr, result)
        for row in result:
            labels = row["metric"]
            bound = labels["bound"]
            mine = []
            for reports in EM_REPORTS:
                e = reports[labels["model"]].windows["sliding_1000"].estimate
                assert e is not None and e.method == "em"
                mix = {"estimate": e.priors, "lower": e.lower, "upper": e.upper}[bound]
                mine.append({str(k): v for k, v in mix.items()}[labels["class"]])
            assert float(row["value"][1]) == pytest.approx(float(np.mean(mine)), abs=1e-9), row
        assert len(result) == (3 + 2) * (1 if 'bound="estimate"' in expr else 2)
