"""The read path's shared-work evaluator equals the per-metric path, and a cached window report equals a fresh one."""

from __future__ import annotations

import math

import numpy as np
import pytest

from streammon import Cumulative, Monitor, Sliding
from streammon.findings.assemble import WindowCache, evaluate_view
from streammon.findings.distortion import Policy
from streammon.metrics import Confusion, catalog, reweight
from streammon.metrics.window_math import evaluate_all

PARAMS = {"holder": {"p": 0.5}, "iba": {"alpha": 0.1, "squared": True}}


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


def _matrices() -> list[np.ndarray]:
    rng = np.random.default_rng(17)
    out = []
    for k in range(2, 13):
        for _ in range(12):
            m = rng.integers(0, 20, (k, k)) * (rng.random((k, k)) < 0.7)
            if rng.random() < 0.5:
                m[rng.integers(k)] = 0  # an absent class
            if rng.random() < 0.5:
                m[:, rng.integers(k)] = 0  # a class never predicted
            out.append(m)
    out += [np.zeros((2, 2), int), np.array([[0, 0], [3, 0]]), np.array([[5, 0], [0, 0]])]
    return out


@pytest.mark.parametrize("reweighted", [False, True])
def test_every_metric_equals_its_own_function(reweighted: bool) -> None:
    """On random matrices (K = 2..12, with zero rows and columns), as read and reweighted to a prior with NaN
    rows, every catalog value of ``evaluate_all`` equals ``MetricSpec.evaluate`` on ``Confusion.of`` to 1e-12."""
    checked = 0
    for counts in _matrices():
        k = counts.shape[0]
        matrix = reweight(counts, np.full(k, 1 / k)) if reweighted and counts.sum() else counts
        c = Confusion.of(matrix)
        for positive in range(min(k, 2) if k == 2 else 1):
            names = [n for n, s in catalog().items() if s.applies_to(k)]
            got = evaluate_all(c, names, positive=positive, params=lambda n: PARAMS.get(n, {}))
            for name in names:
                expected = catalog()[name].evaluate(Confusion.of(matrix), positive=positive, **PARAMS.get(name, {}))
                assert _same(got[name], expected), (name, counts.tolist(), got[name], expected)
                checked += 1
    assert checked > 2000


def test_a_cached_report_equals_a_fresh_one_and_changes_with_the_counts() -> None:
    """An unchanged window returns the very same frozen report; equal to one computed without a cache; new samples,
    a new reference or a new policy compute it again."""
    monitor = Monitor([Cumulative(), Sliding(50)], reference={"a": 5, "b": 3, "c": 2})
    rng = np.random.default_rng(3)
    monitor.update_many(rng.choice(["a", "b", "c"], 300).tolist(), rng.choice(["a", "b", "c"], 300).tolist())
    first, second = monitor.report(), monitor.report()
    view = monitor._tally.view(None)
    fresh, _ = evaluate_view(view, Policy())
    for name, w in first.windows.items():
        assert second.windows[name] is w
        assert w == fresh[name] or w.to_dict() == fresh[name].to_dict()
    cache = WindowCache()
    one, _ = evaluate_view(view, Policy(), cache)
    assert evaluate_view(view, Policy(), cache)[0]["cumulative"] is not one["cumulative"]  # another Policy object
    policy = Policy()
    one, _ = evaluate_view(view, policy, cache)
    assert evaluate_view(view, policy, cache)[0]["cumulative"] is one["cumulative"]
    monitor.update("a", "b")
    third = monitor.report()
    assert third.windows["cumulative"] is not first.windows["cumulative"]
    assert third.windows["cumulative"].n == first.windows["cumulative"].n + 1
