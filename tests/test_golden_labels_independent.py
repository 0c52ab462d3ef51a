"""The label families of tests/golden/label_exposition.txt, recounted without streammon from the scenario's raw
calls (tests/test_label_export.py): predictions, joins, orphans, duplicates, expiries, the latency histogram,
coverage, the predicted, labelled and implied mixes, the JS divergence (scipy) and the latency quantiles."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from scipy.spatial.distance import jensenshannon

GOLDEN = Path(__file__).parent / "golden" / "label_exposition.txt"
MODEL = "late-model"
PRED = ["legit"] * 5 + ["fraud"] * 3 + ["legit"] * 2  # key k predicted at t = k; key 9 again at 9.5 (repeated)
TRUTH = ["legit"] * 6 + ["fraud"] * 4
JOINED = {0: 20.0, 1: 21.0, 2: 40.0, 3: 41.0, 5: 100.0, 7: 3000.0}  # key -> label time; key 0 again at 1000
EXPIRED = [4, 6, 8, 9]  # unlabelled and older than 3600 s at the orphan's time 3650
REFERENCE = {"legit": 0.9, "fraud": 0.1}
CLASSES = ("legit", "fraud")
LATENCY = [t - k for k, t in JOINED.items()]


def _golden(name: str, **labels: str) -> float:
    wanted = {"model": MODEL, **labels}
    found = [s.value for f in text_string_to_metric_families(GOLDEN.read_text()) for s in f.samples
             if s.name == name and s.labels == wanted]
    assert len(found) == 1, (name, wanted, found)
    return float(found[0])


def _upper(latency: float) -> float:
    """The smallest 2**(j/6) above ``latency``: the upper edge of its 6-per-doubling bucket."""
    j = math.floor(6 * math.log2(latency)) + 1
    return float(2.0 ** (j / 6))


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return _upper(ordered[math.ceil(q * len(ordered)) - 1])


def test_lifetime_counters() -> None:
    """Predictions per class (the repeat not counted), joins, the orphan, the duplicate, expiries, nothing pending."""
    for cls, n in Counter(PRED).items():
        assert _golden("streammon_predictions_total", **{"class": cls}) == n
    assert _golden("streammon_label_joined_total") == len(JOINED)
    assert _golden("streammon_label_orphans_total") == 1
    assert _golden("streammon_label_duplicates_total") == 1
    assert _golden("streammon_predictions_expired_total") == len(EXPIRED)
    assert _golden("streammon_predictions_evicted_total") == 0
    assert _golden("streammon_predictions_repeated_total") == 1
    assert _golden("streammon_predictions_pending") == len(PRED) - len(JOINED) - len(EXPIRED)


def test_latency_histogram_counts_latencies_below_each_power_of_two() -> None:
    """The buckets are le = 2**k s, k = -4 … 26, then +Inf; each counts the joined latencies below it."""
    buckets = {s.labels["le"]: s.value for f in text_string_to_metric_families(GOLDEN.read_text())
               for s in f.samples if s.name == "streammon_label_latency_seconds_bucket"}
    assert [float(le) for le in buckets] == [2.0**k for k in range(-4, 27)] + [math.inf]
    for le, value in buckets.items():
        assert value == sum(lat < float(le) for lat in LATENCY), le


def test_coverage_mixes_and_divergence() -> None:
    """Coverage, predicted and labelled-predicted mixes per window; the implied mix q = Σ π_j P(ŷ | y = j) from the
    joined confusion; the predicted mix's JS divergence from it (scipy, bits, squared distance)."""
    rows = {y: Counter(PRED[k] for k in JOINED if TRUTH[k] == y) for y in CLASSES}
    implied = {c: sum(REFERENCE[y] * rows[y][c] / sum(rows[y].values()) for y in CLASSES) for c in CLASSES}
    for c in CLASSES:
        assert _golden("streammon_implied_prior", **{"class": c}) == pytest.approx(implied[c], abs=1e-12)
    windows = {"cumulative": list(range(10)), "sliding_4": [6, 7, 8, 9]}
    for window, keys in windows.items():
        labelled = [k for k in keys if k in JOINED]
        assert _golden("streammon_window_predictions", window=window) == len(keys)
        assert _golden("streammon_label_coverage", window=window) == pytest.approx(len(labelled) / len(keys))
        mix = [sum(PRED[k] == c for k in keys) / len(keys) for c in CLASSES]
        for c, share in zip(CLASSES, mix, strict=True):
            assert _golden("streammon_predicted_prior", window=window, **{"class": c}) == pytest.approx(share)
            lab = sum(PRED[k] == c for k in labelled) / len(labelled)
            assert _golden("streammon_labelled_predicted_prior", window=window, **{"class": c}) == pytest.approx(lab)
        js = jensenshannon(mix, [implied[c] for c in CLASSES], base=2) ** 2
        assert _golden("streammon_predicted_mix_shift", window=window) == pytest.approx(js, rel=1e-9)


def test_window_latency_quantiles() -> None:
    """p50/p90/p99 of the joined latencies by label time: all six (cumulative), the last four label events'
    two joins (sliding_4: key 5, the duplicate, key 7, the orphan), each the upper edge of its bucket."""
    for window, lat in (("cumulative", LATENCY), ("sliding_4", [JOINED[5] - 5, JOINED[7] - 7])):
        for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
            got = _golden("streammon_window_label_latency_seconds", window=window, percentile=name)
            assert got == pytest.approx(_quantile(lat, q), rel=1e-12)


def test_a_model_that_never_predicted_exports_zero_label_counters() -> None:
    """The update-only golden model (tests/golden/exposition.txt) has every label counter, pending and histogram
    bucket at 0 from its first scrape, one predictions series per class, and no window label gauge."""
    text = (Path(__file__).parent / "golden" / "exposition.txt").read_text()
    samples = [s for f in text_string_to_metric_families(text) for s in f.samples
               if s.name.startswith(("streammon_label", "streammon_predict", "streammon_aged", "streammon_implied"))]
    assert samples and all(s.value == 0 for s in samples)
    assert {s.labels["class"] for s in samples if s.name == "streammon_predictions_total"} == {"legit", "fraud"}
    assert not [s for s in samples if "window" in s.labels]
