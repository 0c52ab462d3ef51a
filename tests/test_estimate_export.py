"""The label-free estimate families: the exposition carries the report's estimate, parsed back by
prometheus_client's own text parser (independent of how streammon writes it)."""

from __future__ import annotations

import math

import numpy as np
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from streammon import Monitor, Sliding
from streammon.export.prometheus import MonitorCollector
from streammon.metrics import estimate_priors

BASE = {"neg": {"neg": 900, "pos": 100}, "pos": {"neg": 40, "pos": 160}}


def test_exposition_carries_the_estimate_the_p_value_and_expected_scores() -> None:
    m = Monitor([Sliding(1000)], reference={"neg": 900, "pos": 100}, baseline=BASE)
    m.predict_many(list(range(1000)), ["pos"] * 450 + ["neg"] * 550)  # rate 0.45: π = (0.45 − 0.1)/0.7 = 0.5
    registry = CollectorRegistry()
    registry.register(MonitorCollector({"m": m}))
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in text_string_to_metric_families(generate_latest(registry).decode())
               for s in f.samples}

    def value(name: str, **labels: str) -> float:
        return samples[(name, tuple(sorted({"model": "m", "window": "sliding_1000", **labels}.items())))]

    truth = estimate_priors([[900, 100], [40, 160]], [550, 450])
    assert math.isclose(value("streammon_estimated_prior", **{"class": "pos", "bound": "estimate"}), 0.5)
    assert math.isclose(value("streammon_estimated_prior", **{"class": "pos", "bound": "upper"}), truth.upper[1])
    assert math.isclose(value("streammon_estimated_rrt"), 1.0)
    assert value("streammon_label_shift_p_value") == 1.0
    assert value("streammon_estimate_from_scores") == 0.0  # a confusion baseline: the hard-label estimate
    tp, fp = 0.8 * 0.5, 0.1 * 0.5
    assert math.isclose(value("streammon_expected_score", metric="precision"), tp / (tp + fp))
    at_ref = 0.8 * 0.1 / (0.8 * 0.1 + 0.1 * 0.9)
    assert math.isclose(value("streammon_expected_distortion", metric="precision"), tp / (tp + fp) - at_ref)
    assert not any(name == "streammon_expected_score" and dict(lab).get("metric") == "recall"
                   for name, lab in samples)  # Condition-1 metrics have nothing to expect
    assert np.isfinite(value("streammon_expected_score", metric="f1"))
