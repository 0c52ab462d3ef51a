"""The dashboard's score panels against a real Prometheus: two replicas expose a model's score metrics under the
exporter's names (``streammon_score{metric="roc_auc"}`` with its interval, ``streammon_corrected_score`` and the
type-1 ``streammon_distortion`` of ``ece``/``brier``/``log_loss``), the values computed by scikit-learn (and ECE
counted by hand) on each replica's samples; every score query returns data, and what it shows is the mean over
the replicas of the values as read and at the reference mix."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from streammon.export.grafana import score_queries
from tests.live import LivePrometheus

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


class _Replica(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def prometheus(prometheus_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LivePrometheus]:
    servers = []
    for seed in (0, 1):
        handler = type(f"Replica{seed}", (_Replica,), {"body": _exposition(seed)})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
    live = None
    try:
        live = LivePrometheus(prometheus_binary, Path(tmp_path_factory.mktemp("prometheus-scores")),
                              [f"127.0.0.1:{s.server_address[1]}" for s in servers])
        live.wait_for("count(up == 1)", lambda r: r and float(r[0]["value"][1]) == 2)
        live.wait_for("min(count_over_time(streammon_score[1m]))", lambda r: r and float(r[0]["value"][1]) >= 3)
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
