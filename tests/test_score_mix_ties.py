"""The scores' mix test inside a monitor on tied scores (a k-NN vote's k/15): the window's histogram and the
validation's exact scores fall in the same cells, so the monitor's test equals the test on the window's exact
scores (a recount), and under a pure label shift it alarms at most at its level (a law, over trials)."""

from __future__ import annotations

import numpy as np
import pytest

import streammon
from streammon import Monitor, Sliding
from streammon.metrics.score_bins import bin_edges, score_bins

N = 2_000
TRIALS = 40


def _draw(rng: np.random.Generator, n: int, share: float) -> tuple[np.ndarray, np.ndarray]:
    """Which samples are the positive class, and a 15-NN vote's score of it: k/15, k ~ Binomial(15, 0.7 or 0.2)."""
    positive = rng.random(n) < share
    return positive, rng.binomial(15, np.where(positive, 0.7, 0.2)) / 15


@pytest.mark.parametrize(("labels", "positive"), [((0, 1), 1), (("fraud", "ok"), "fraud"), ((0, 1), 0)])
def test_tied_scores_under_pure_label_shift(labels: tuple[object, object], positive: object) -> None:
    """Through the monitor's histogram the test's statistic is the one of the window's exact scores, whichever
    class the score is of (the validation's second column or its first), and under a pure label shift (10 % ->
    40 % positives) at most ~5 % of windows read p < 0.05 (before the cells were put on the histogram's grid, a
    cell edge on a tied value sent a bin's samples and its representative to different cells: p ~ 1e-24)."""
    rng = np.random.default_rng(7)
    other = next(label for label in labels if label != positive)
    is_pos, s = _draw(rng, 3_000, 0.1)
    as_label = np.vectorize(lambda b: positive if b else other, otypes=[object])
    v = streammon.Validation(as_label(is_pos), as_label(s > 0.5), s, positive=positive, bootstrap=0)
    p_values = []
    for _ in range(TRIALS):
        _, sw = _draw(rng, N, 0.4)
        monitor = Monitor([Sliding(N)], baseline=v, classes=list(labels), positive=positive)
        monitor.predict_many(list(range(N)), as_label(sw > 0.5), y_score=sw)
        e = monitor.report().windows[f"sliding_{N}"].estimate
        assert e is not None and e.method == "em"
        exact = v.mix_test(sw)
        assert e.statistic == pytest.approx(exact.statistic, rel=1e-9, abs=1e-9)
        assert e.df == exact.df
        p_values.append(e.p_value)
    # binomial(40, 0.05): P(more than 6 below 0.05) < 0.015
    assert np.sum(np.array(p_values) < 0.05) <= 6, sorted(p_values)[:8]


def test_cell_edges_hold_whole_bins() -> None:
    """Every binary cell edge is a histogram bin edge strictly below the quantile it replaces (a recount against
    ``score_bins``'s grid), tied quantiles give one edge, and none is at 0 (a cell below it would always be
    empty)."""
    rng = np.random.default_rng(1)
    s = np.r_[rng.binomial(15, 0.3, 2_000) / 15, np.full(500, 0.5), rng.random(500)]
    binning = streammon.Validation(np.r_[np.zeros(2_500, int), np.ones(500, int)], np.zeros(3_000, int), s,
                                   positive=1, bootstrap=0).binning
    edges = binning.edges[0]
    grid = bin_edges()
    assert np.all(np.isin(edges, grid)) and np.all(np.diff(edges) > 0)
    quantiles = np.unique(np.quantile(s, np.arange(1, 10) / 10))
    below = np.unique(grid[np.maximum(np.searchsorted(grid, quantiles) - 1, 0)])
    assert len(edges) == len(below[below > 0])
    for e in edges:  # every score of a bin is on one side of every edge
        b = score_bins(np.array([e]))[0]
        assert grid[b] == e


def test_scores_mostly_zero_leave_no_empty_cell() -> None:
    """A validation whose scores are 0 for more than a tenth of its samples (quantile edges at 0): every cell of
    the test holds some validation sample (an always-empty cell added a degree of freedom and nothing else)."""
    rng = np.random.default_rng(3)
    y = (rng.random(3_000) < 0.2).astype(int)
    s = np.where(rng.random(3_000) < 0.3, 0.0, rng.beta(1 + 3 * y, 4 - 3 * y))
    v = streammon.Validation(y, (s > 0.5).astype(int), s, positive=1, bootstrap=0)
    cells = np.bincount(v.binning.assign(s), minlength=v.binning.cells)
    assert np.all(cells > 0), cells
