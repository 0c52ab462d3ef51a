"""The hostile strings the rule accepts, as model, window and class names, scraped by a real Prometheus: every
series arrives with its labels exactly as given, beside a healthy model, and the target stays up."""

from __future__ import annotations

from pathlib import Path

from streammon.export import serve
from tests.live import LivePrometheus
from tests.strategies import HOSTILE_STRINGS
from tests.test_user_strings import _fed, accepted


def test_a_real_prometheus_stores_every_accepted_hostile_name_exactly(prometheus_binary: str,
                                                                      tmp_path: Path) -> None:
    """Prometheus scrapes 37 models named by the accepted hostile strings (and ``healthy``): ``up`` is 1 and the
    stored model, window and class label values are the strings given, each once."""
    names = [s for s in HOSTILE_STRINGS if accepted(s)]
    models = {"healthy": _fed("fraud"), **{name: _fed(name) for name in names}}
    server = serve(models, port=0)
    prometheus = None
    try:
        prometheus = LivePrometheus(prometheus_binary, tmp_path, [f"127.0.0.1:{server.port}"])
        samples = prometheus.wait_for("streammon_window_samples", lambda r: len(r) == len(models))
        assert sorted((r["metric"]["model"], r["metric"]["window"]) for r in samples) == sorted(
            [("healthy", "fraud"), *((name, name) for name in names)])
        recall = prometheus.query("streammon_recall")
        assert sorted((r["metric"]["model"], r["metric"]["class"]) for r in recall) == sorted(
            (model, label) for model in models for label in (model if model != "healthy" else "fraud",
                                                            "other" if model != "other" else "else"))
        assert [r["value"][1] for r in prometheus.query("up")] == ["1"]
    finally:
        if prometheus is not None:
            prometheus.stop()
        server.stop()
