"""The layouts that ``examples/bench_ap_bins.py`` measures compute what its docstring says they do.

- ``random``: per bin, Σ_i (T + i)/(T + F + i·(1 + Q/(P + 1))) over the bin's P positives, summed pair by pair
  here, not through the digamma identity the script uses;
- ``moments`` (normal or uniform spread): a class whose samples in a bin share one score is a point mass, so
  bins whose classes each sit at one score — exact duplicates, ties across classes — read scikit-learn's AP
  exactly (here the patterns behind the benchmark's two largest errors), and at a class mix its weighted AP;
- ``x8``: on scores one per eighth of a bin apart it reads scikit-learn's AP exactly.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn import metrics as skm

from streammon.metrics.score_bins import BINS, bin_edges, score_bins

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="module")
def bench() -> dict[str, Any]:
    sys.path.insert(0, str(EXAMPLES))
    try:
        return runpy.run_path(str(EXAMPLES / "bench_ap_bins.py"))
    finally:
        sys.path.remove(str(EXAMPLES))


def test_random_order_is_the_interpolated_sum(bench: dict[str, Any]) -> None:
    rng = np.random.default_rng(5)
    pos, neg = rng.integers(0, 4, 60).astype(float), rng.integers(0, 6, 60).astype(float)
    total, t, f = 0.0, 0.0, 0.0
    for p, q in zip(pos[::-1], neg[::-1], strict=True):  # from the top bin down
        total += sum((t + i) / (t + f + i * (1 + q / (p + 1))) for i in range(1, int(p) + 1))
        t, f = t + p, f + q
    assert bench["_random_order"](pos, neg) == pytest.approx(total / pos.sum(), rel=1e-12)


def _ap_moments(bench: dict[str, Any], y: np.ndarray, s: np.ndarray, weights: np.ndarray | None = None, *,
                uniform: bool = False) -> float:
    n, s1, s2 = bench["_moments"](y, s, 2)
    return float(bench["_moments_ap"](n, s1, s2, 1, np.ones(2) if weights is None else weights, uniform=uniform))


@pytest.mark.parametrize("uniform", [False, True])
def test_moments_read_point_masses_exactly(bench: dict[str, Any], uniform: bool) -> None:
    edges = bin_edges()
    b = int(score_bins(np.array([0.8525]))[0])
    lo, hi = edges[b], edges[b + 1]
    cases = [  # (scores, classes) within one bin, then samples elsewhere
        ([lo + 0.7 * (hi - lo)] * 8 + [lo + 0.2 * (hi - lo)] * 6, [1] * 8 + [0] * 6),  # positives above negatives
        ([lo + 0.5 * (hi - lo)] * 12, [1] * 7 + [0] * 5),  # a tie across the classes
        ([lo + 0.1 * (hi - lo)] * 5 + [lo + 0.6 * (hi - lo)] * 3, [1] * 5 + [0] * 3),  # negatives above
    ]
    grid = lambda u: np.round(u * 64) / 64  # noqa: E731 - distinct multiples of 1/64 never share a bin
    rng = np.random.default_rng(2)
    for scores, classes in cases:
        s = np.r_[scores, grid(0.9 + 0.1 * rng.random(100)), grid(0.3 * rng.random(300))]
        y = np.r_[classes, (rng.random(100) < 0.85).astype(int), (rng.random(300) < 0.1).astype(int)]
        assert _ap_moments(bench, y, s, uniform=uniform) == pytest.approx(skm.average_precision_score(y, s), abs=1e-12)
        w = np.array([0.3, 2.5])
        assert _ap_moments(bench, y, s, w, uniform=uniform) == pytest.approx(
            skm.average_precision_score(y, s, sample_weight=w[y]), abs=1e-12)


def test_eightfold_bins_read_scores_an_eighth_of_a_bin_apart_exactly(bench: dict[str, Any]) -> None:
    edges = bin_edges()
    rng = np.random.default_rng(3)
    b = rng.integers(300, BINS - 300, 400)
    s = edges[b] + (rng.integers(0, 8, 400) + 0.5) / 8 * (edges[b + 1] - edges[b])
    y = (rng.random(400) < 0.3).astype(np.int64)
    fine = bench["_split"](y, s, 2, 8)
    assert bench["_tied"](fine[1], fine[0]) == pytest.approx(skm.average_precision_score(y, s), abs=1e-12)
