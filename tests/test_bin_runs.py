"""Long bin runs in ``streammon.metrics.bin_values`` (sorted by ``streammon.metrics.bin_sort``): a bin of more than
``SMALL_RUN`` samples taking at most ``FEW_VALUES`` distinct values is sorted by counting (``_group_run``), one of
more values falls back to a merge sort, one of at most ``SMALL_RUN`` samples is sorted by insertion. Whichever
path a run takes, the values a bin is split over and each class's share at each are a brute-force recount of the
sample, and a window read through them is scikit-learn's ROC AUC and average precision on its samples."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from streammon import Monitor, Sliding
from streammon.metrics.bin_sort import FEW_VALUES, SMALL_RUN
from streammon.metrics.bin_values import bin_values
from streammon.metrics.exact_ranking import EXACT_RANKING_LIMIT
from streammon.metrics.score_bins import score_bins


def runs(rng: np.random.Generator) -> np.ndarray:
    """Five columns, each one long run in the bin of 0.5 (values 1e-7 apart) amid scattered samples elsewhere:
    ``FEW_VALUES`` values over 300 samples (counting), ``FEW_VALUES + 1`` (merge sort), two values over
    ``SMALL_RUN + 1`` and over ``SMALL_RUN`` samples (the edges), and 0.0 / -0.0 / the smallest subnormal, one
    value and another in the bin of 0, over 100 samples; in each, ten values seen once in one bin (split only
    where the sample is the whole window)."""
    n = 600
    out = rng.choice(np.round(np.linspace(0.6, 0.99, 40), 5), (n, 5))  # elsewhere: repeated values, other bins
    near = 0.5 + np.arange(FEW_VALUES + 1) * 1e-7
    out[:300, 0] = rng.choice(near[:FEW_VALUES], 300)
    out[:300, 0][:FEW_VALUES] = near[:FEW_VALUES]  # every value taken
    out[:300, 1] = rng.choice(near, 300)
    out[:300, 1][: FEW_VALUES + 1] = near
    out[: SMALL_RUN + 1, 2] = rng.choice(near[:2], SMALL_RUN + 1)
    out[:2, 2] = near[:2]
    out[:SMALL_RUN, 3] = rng.choice(near[:2], SMALL_RUN)
    out[:2, 3] = near[:2]
    out[:100, 4] = rng.choice(np.array([0.0, -0.0, 5e-324]), 100)
    out[:3, 4] = [0.0, -0.0, 5e-324]
    out[-10:] = 0.7051 + np.arange(10)[:, None] * 1e-7  # values each seen once, in one bin of every column
    return out[rng.permutation(n)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_long_runs_split_as_a_brute_force_recount(seed: int) -> None:
    """The runs of ``runs`` (every sorting path of a bin) split over their values, class by class, as a recount by
    ``np.unique`` of each bin splits them (0.0 and -0.0 one value, as scikit-learn ties them) — every bin of
    distinct values in the columns ``complete`` names, only those that repeat a value in the others."""
    rng = np.random.default_rng(seed)
    s = runs(rng)
    true = rng.integers(0, 3, len(s))
    bins = score_bins(s).astype(np.int16)
    assert len({int(b) for b in bins[s[:, 0] < 0.51, 0]}) == 1  # the run is one bin
    assert len({int(b) for b in bins[(s[:, 0] > 0.705) & (s[:, 0] < 0.706), 0]}) == 1  # and the ten
    for complete in (False, True, np.array([True, False, True, False, True])):
        v = bin_values(bins, s, true, 3, complete=complete)
        for c in range(s.shape[1]):
            whole = bool(np.broadcast_to(complete, (s.shape[1],))[c])
            for b in np.unique(bins[:, c]):
                inside = bins[:, c] == b
                values = np.unique(s[inside, c] + 0.0)
                split = len(values) > 1 and (whole or len(values) < inside.sum())
                lo, hi = v.starts[c, b], v.starts[c, b + 1]
                assert hi - lo == (len(values) if split else 0), (c, b)
                for m, value in enumerate(values if split else []):
                    for k in range(3):
                        mine = inside & (true == k)
                        want = (np.sum(mine & (s[:, c] == value)) / mine.sum() if mine.any()
                                else np.sum(inside & (s[:, c] == value)) / inside.sum())
                        assert v.shares[c, k, lo + m] == pytest.approx(want, abs=1e-15), (c, b, m, k)


@pytest.mark.parametrize("values", [FEW_VALUES, FEW_VALUES + 1])
def test_a_window_of_long_runs_reads_scikit_learns_values(values: int) -> None:
    """A window sliding by count over 4,000 of 3 × 2,048 samples, whose positives and negatives share one bin of
    ``values`` distinct scores 1e-7 apart, splits the bin by its own samples (``bin_values``: a run of 4,000 counted,
    or merge-sorted past ``FEW_VALUES``) and reads scikit-learn's ROC AUC and AP on them."""
    rng = np.random.default_rng(values)
    n = 3 * EXACT_RANKING_LIMIT
    y = (rng.random(n) < 0.3).astype(int)
    near = 0.5 + np.arange(values) * 1e-7
    weights = np.arange(1, values + 1, dtype=float)
    s = np.where(y == 1, rng.choice(near, n, p=weights / weights.sum()),
                 rng.choice(near, n, p=weights[::-1] / weights.sum()))
    m = Monitor([Sliding(4_000)], reference={0: 0.7, 1: 0.3}, positive=1, detector=None)
    for i in range(0, n, 1_000):
        m.update_many(y[i:i + 1_000].tolist(), [0] * len(y[i:i + 1_000]), y_score=s[i:i + 1_000])
    w = m.report().windows["sliding_4000"]
    assert w.score_tally is not None and w.score_tally.samples is None  # its bins, not its exact samples
    assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(y[-4_000:], s[-4_000:]), abs=1e-12)
    assert w.scores["average_precision"] == pytest.approx(average_precision_score(y[-4_000:], s[-4_000:]), abs=1e-12)
