"""Intervals from a window's own counts: correct against scipy, and covering the truth as often as promised."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from streammon import Monitor, Sliding
from streammon.metrics.intervals import index_interval, index_intervals, wilson


@pytest.mark.parametrize(("k", "n"), [(0, 5), (3, 8), (8, 8), (50, 100), (999, 1000), (1, 10_000)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    """The Wilson interval equals scipy's binomtest(...).proportion_ci(method='wilson')."""
    expected = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson(k, n) == pytest.approx((expected.low, expected.high), abs=1e-12)


def _coverage(recalls: list[float], sizes: list[int], trials: int, seed: int) -> dict[str, float]:
    """Share of trials whose 95 % intervals cover the true recall (class 0) and the true indices."""
    rng = np.random.default_rng(seed)
    truth = {"acsa": float(np.mean(recalls)), "gmean": float(np.exp(np.mean(np.log(recalls)))),
             "min_recall": min(recalls)}
    hits = dict.fromkeys([*truth, "recall"], 0)
    for _ in range(trials):
        correct = rng.binomial(sizes, recalls)
        intervals = index_intervals(correct, sizes)
        for name, value in truth.items():
            low, high = intervals[name]
            hits[name] += low <= value <= high
        low, high = wilson(correct[0], sizes[0])
        hits["recall"] += low <= recalls[0] <= high
    return {name: count / trials for name, count in hits.items()}


@pytest.mark.parametrize(("recalls", "sizes"), [
    ([0.8, 0.95], [8, 200]),  # 8 minority samples
    ([0.5, 0.7, 0.9], [30, 30, 30]),
    ([0.6, 0.05, 0.95, 0.8, 0.3], [50, 20, 400, 100, 1000]),  # recall checked on class 0 (n·r ≥ 2)
    ([0.9] * 3 + [0.7] * 3 + [0.5] * 4, [100] * 10),  # four classes tie for the minimum
])
def test_95_percent_intervals_cover_the_truth_at_least_93_percent_of_the_time(recalls: list[float],
                                                                              sizes: list[int]) -> None:
    """Simulated coverage of the 95 % intervals (recall: Wilson; ACSA: Wilson with the posterior's effective
    sample size; G-mean: log-normal from the Jeffreys posterior moments; minimum recall: Bonferroni-Wilson) is
    ≥ 93 % for the documented sizes."""
    coverage = _coverage(recalls, sizes, trials=2000, seed=len(recalls))
    assert all(value >= 0.93 for value in coverage.values()), coverage


def test_eight_minority_samples_give_a_wide_interval() -> None:
    """A window with 8 minority samples reports a wide interval for recall and G-mean, not a confident number."""
    monitor = Monitor([Sliding(1000)], reference={"neg": 95, "pos": 5})
    monitor.update_many(["pos"] * 8 + ["neg"] * 500, ["pos"] * 6 + ["neg"] * 2 + ["neg"] * 480 + ["pos"] * 20)
    w = monitor.report().windows["sliding_1000"]
    low, high = w.recall_interval["pos"]
    assert high - low > 0.4 and low < 0.75 < high
    g_low, g_high = w.intervals["gmean"]
    assert g_high - g_low > 0.25 and g_low < w.scores["gmean"] < g_high
    assert w.intervals["min_recall"][0] < w.scores["min_recall"]


def test_empty_windows_and_bad_levels() -> None:
    """No samples: NaN intervals; a confidence outside (0, 1) or an unknown index is an error."""
    assert all(math.isnan(v) for pair in index_intervals([0, 0], [0, 0]).values() for v in pair)
    with pytest.raises(ValueError, match="confidence"):
        wilson(1, 2, confidence=1.5)
    with pytest.raises(ValueError, match="intervals exist for"):
        index_interval("precision", [1], [2])
