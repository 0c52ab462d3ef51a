"""The prior-shift criterion holds its false-alarm rate in windows of 1-50 samples (a small run of
examples/bench_small_windows.py), and a fresh monitor's alert is the same decision."""

from __future__ import annotations

import math
import runpy
from pathlib import Path

import numpy as np
import pytest

BENCH = runpy.run_path(str(Path(__file__).resolve().parents[1] / "examples" / "bench_small_windows.py"))
WINDOWS = 20_000


@pytest.mark.parametrize("name", list(BENCH["mixes"]()))
def test_false_alarm_rate_is_at_most_alpha_within_binomial_error_at_small_sizes(name: str) -> None:
    """At the reference mix, windows of 1, 3, 10, 30 and 50 samples are judged shifted at a rate <= α + 3σ, where
    Pearson's chi-square (the criterion before) exceeds α somewhere for the imbalanced mixes."""
    priors = BENCH["mixes"]()[name]
    rng = np.random.default_rng(27)
    alpha = BENCH["ALPHA"]
    bound = alpha + 3 * math.sqrt(alpha * (1 - alpha) / WINDOWS)
    old = []
    for n in (1, 3, 10, 30, 50):
        rate, chi2, _ = BENCH["rates"](priors, n, WINDOWS, rng)
        assert rate <= bound, (name, n, rate)
        old.append(chi2)
    if priors.min() <= 0.01:
        assert max(old) > bound  # the contrast the benchmark prints is real


def test_a_fresh_monitor_raises_exactly_the_vectorised_decision() -> None:
    """Through real Monitors (one per window), the prior-shift alert is on exactly where the criterion computed
    over the window's counts says shifted, at the reference mix and under a 1 % -> 30 % shift."""
    rng = np.random.default_rng(5)
    reference = np.array([0.99, 0.01])
    quiet, disagree = BENCH["monitor_rate"](reference, 40, 150, rng)
    assert disagree == 0.0 and quiet < 0.05
    loud, disagree = BENCH["monitor_rate"](reference, 40, 150, rng, drawn_at=np.array([0.7, 0.3]))
    assert disagree == 0.0 and loud > 0.9
