"""A window past the exact limit reads a bin of repeated distinct values split over the values it holds
(``streammon.metrics.bin_values``): a cumulative window by the monitor's census of every value
(``streammon.counting.score_census``) and a window sliding by count by its own samples — exact, checked against
scikit-learn on the window's samples; a window sliding by time by the values the monitor's last 2,048 exact scores
show, exact where their class shares are the window's, misled where they are not (a model swapped mid-window), its
bin-error bounds still holding; the shares checked against a recount by brute force."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from streammon import Cumulative, Monitor, Sliding, Timed, state
from streammon.counting import exact_scores
from streammon.counting.score_tally import ScoreTally
from streammon.metrics import (
    average_precision,
    average_precision_bin_error,
    average_precision_interval,
    roc_auc,
    roc_auc_bin_error,
)
from streammon.metrics.bin_values import bin_values
from streammon.metrics.exact_ranking import EXACT_RANKING_LIMIT
from streammon.metrics.score_bins import score_bins
from tests.census_streams import THREE_TO_A_BIN, three_to_a_bin

BLOCK = EXACT_RANKING_LIMIT  # a block the ring holds whole


def few_valued_binary(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A block of a few-valued model: values 1e-5 apart, three to a logit bin, each taken by both classes in
    unequal shares (the positives higher), and a few values alone in their bins."""
    values = np.array([0.30000, 0.30001, 0.30002, 0.6, 0.60001, 0.60002, 0.9])
    y = (rng.random(BLOCK) < 0.3).astype(int)
    p_neg = np.array([0.3, 0.25, 0.15, 0.12, 0.1, 0.05, 0.03])
    p_pos = np.array([0.05, 0.1, 0.15, 0.1, 0.2, 0.25, 0.15])
    s = np.where(y == 1, rng.choice(values, BLOCK, p=p_pos), rng.choice(values, BLOCK, p=p_neg))
    return y, s


def few_valued_k3(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A block of a K = 3 few-valued model: each row one of six probability vectors 1e-5 apart (one logit bin a
    column), each class taking them in its own proportions, rows summing to 1."""
    a = np.array([0, 1, 2, 3, 4, 5]) * 1e-5
    b = np.array([3, 5, 0, 4, 1, 2]) * 1e-5
    protos = np.array([0.4, 0.35, 0.25]) + np.stack([a, b, -(a + b)], axis=1)
    prefer = np.array([[1, 1, 2, 4, 6, 8], [4, 8, 1, 6, 2, 2], [6, 1, 8, 2, 4, 1]], dtype=float)
    y = rng.choice(3, BLOCK, p=[0.5, 0.3, 0.2])
    pick = np.array([rng.choice(6, p=prefer[c] / prefer[c].sum()) for c in y])
    return y, protos[pick]


def fed(y: np.ndarray, s: np.ndarray, k: int, repeats: int = 3) -> Monitor:
    """A monitor with a cumulative window fed the block ``repeats`` times: its ring holds the last block, whose
    class shares inside every bin are the window's."""
    reference = {c: 1.0 for c in range(k)}
    m = Monitor([Cumulative()], reference=reference, positive=1 if k == 2 else None, detector=None)
    pred = (s > 0.5).astype(int) if k == 2 else s.argmax(axis=1)
    for _ in range(repeats):
        m.update_many(y.tolist(), pred.tolist(), y_score=s)
    return m


def test_a_binary_window_reads_scikit_learns_values_where_the_ring_holds_every_value() -> None:
    """Distinct values of both classes within one logit bin, the ring's shares the window's: ROC AUC, AP, their
    values at a class mix and DeLong's interval's centre read scikit-learn's on the window's 6,144 samples (the
    bins read tied miss by more than 0.01), and the per-metric functions read what the report reads."""
    y, s = few_valued_binary(np.random.default_rng(0))
    w = fed(y, s, 2).report().windows["cumulative"]
    t = w.score_tally
    assert t is not None and t.samples is None and t.values is not None and t.values.split > 0
    yy, ss = np.tile(y, 3), np.tile(s, 3)
    assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(yy, ss), abs=1e-12)
    assert w.scores["average_precision"] == pytest.approx(average_precision_score(yy, ss), abs=1e-12)
    weights = np.where(yy == 1, 0.5 / yy.mean(), 0.5 / (1 - yy.mean()))
    assert w.corrected["average_precision"] == pytest.approx(
        average_precision_score(yy, ss, sample_weight=weights), abs=1e-12)
    assert roc_auc(t.parts) == pytest.approx(w.scores["roc_auc"], abs=1e-12)
    assert average_precision(t.parts) == pytest.approx(w.scores["average_precision"], abs=1e-12)
    assert average_precision(t.parts, priors=[0.5, 0.5]) == pytest.approx(w.corrected["average_precision"],
                                                                          abs=1e-12)
    tied = (t.hist, t.sums, t.top)
    assert abs(roc_auc(tied) - roc_auc_score(yy, ss)) > 0.01
    assert abs(average_precision(tied) - average_precision_score(yy, ss)) > 0.01
    low, high = w.intervals["roc_auc"]
    assert low < roc_auc_score(yy, ss) < high
    low, high = average_precision_interval(t.parts)
    assert low < average_precision_score(yy, ss) < high


def test_a_k3_window_reads_scikit_learns_values_where_the_ring_holds_every_value() -> None:
    """K = 3: Hand & Till's ROC AUC, the macro one-vs-rest ROC AUC and the macro AP, as read and at a mix, are
    scikit-learn's on the window's samples, each column's bins split over its values."""
    y, p = few_valued_k3(np.random.default_rng(1))
    w = fed(y, p, 3).report().windows["cumulative"]
    t = w.score_tally
    assert t is not None and t.samples is None and t.values is not None and t.values.split > 0
    yy, pp = np.tile(y, 3), np.tile(p, (3, 1))
    onehot = np.eye(3)[yy]
    assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(yy, pp, multi_class="ovo"), abs=1e-12)
    assert w.scores["average_precision"] == pytest.approx(average_precision_score(onehot, pp), abs=1e-12)
    weights = (np.full(3, 1 / 3) / (np.bincount(yy) / len(yy)))[yy]
    assert w.corrected["average_precision"] == pytest.approx(
        average_precision_score(onehot, pp, sample_weight=weights), abs=1e-12)
    assert roc_auc(t.parts, multi_class="ovr", priors=[1 / 3] * 3) == pytest.approx(
        roc_auc_score(yy, pp, multi_class="ovr", sample_weight=weights), abs=1e-12)
    assert roc_auc(t.parts) == pytest.approx(w.scores["roc_auc"], abs=1e-12)
    assert average_precision(t.parts) == pytest.approx(w.scores["average_precision"], abs=1e-12)
    tied = (t.hist, t.sums, t.top)
    assert abs(average_precision(tied) - average_precision_score(onehot, pp)) > 0.002


def test_a_model_swapped_mid_window_misleads_the_split_of_a_restored_timed_window_and_the_bounds_hold() -> None:
    """The limit: model A scores positives 0.3000 and negatives 0.3002 (one bin), then model B the other way
    round; after B's 2,048 the ring shows only B's values, and a window that splits its bins by them — here one
    sliding by time, restored from a state file (which keeps no value counts of its buckets) and no longer holding
    every sample the census counted — reads its A samples at them: ROC AUC 1 where scikit-learn reads 1/3 (the
    bins read tied: 1/2). ``roc_auc_bin_error`` and ``average_precision_bin_error`` — the bins' bounds, whatever
    the reading inside a bin — still hold. The cumulative window (the census: every value counted) and the window
    sliding by count (its own samples) read scikit-learn's values."""
    rng = np.random.default_rng(2)
    y = (rng.random(3 * BLOCK) < 0.3).astype(int)
    s = np.where(y == 1, 0.3000, 0.3002)
    s[-BLOCK:] = np.where(y[-BLOCK:] == 1, 0.3002, 0.3000)
    m = Monitor([Cumulative(), Sliding(3 * BLOCK), Timed(3600.0, buckets=4)], reference={0: 0.7, 1: 0.3},
                positive=1, detector=None)
    m.update_many([0] * 100, [0] * 100, 0.0, y_score=[0.9] * 100)  # left the timed window by t = 5,000
    m.update_many(y.tolist(), [0] * len(y), 5_000.0, y_score=s)
    report = Monitor.loads(m.dumps()).report()
    truth = roc_auc_score(y, s)
    ap_truth = average_precision_score(y, s)
    assert truth == pytest.approx(1 / 3, abs=0.01)
    y_all, s_all = np.r_[[0] * 100, y], np.r_[[0.9] * 100, s]
    for name, yy, ss in (("cumulative", y_all, s_all), (f"sliding_{3 * BLOCK}", y, s)):
        w = report.windows[name]
        assert w.score_tally is not None and w.score_tally.samples is None  # past the exact limit: its bins
        assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(yy, ss), abs=1e-12)
        assert w.scores["average_precision"] == pytest.approx(average_precision_score(yy, ss), abs=1e-12)
    w = report.windows["timed_3600s"]
    t = w.score_tally
    assert t is not None and t.values is not None
    assert w.scores["roc_auc"] == pytest.approx(1.0)
    assert abs(w.scores["roc_auc"] - truth) <= roc_auc_bin_error(t.parts)
    assert abs(w.scores["average_precision"] - ap_truth) > 0.3
    assert abs(w.scores["average_precision"] - ap_truth) <= average_precision_bin_error(t.parts) + 1e-12
    assert roc_auc((t.hist, t.sums, t.top)) == pytest.approx(0.5)


def test_the_shares_are_a_recount() -> None:
    """Each split bin's values and each class's share at each are the sample's counts recounted by brute force
    (a class the bin lacks: the bin's samples' shares); a bin of one value, of once-seen values, or of one sample
    is not split — and with ``complete`` the once-seen values are."""
    rng = np.random.default_rng(3)
    s = np.round(rng.random((3_000, 3)), 4)
    s[:40, 0] = 0.5 + rng.random(40) * 1e-4  # once-seen values in one bin
    true = rng.integers(0, 3, len(s))
    bins = score_bins(s).astype(np.int16)
    v = bin_values(bins, s, true, 3)
    full = bin_values(bins, s, true, 3, complete=True)
    for c in range(3):
        for b in np.unique(bins[:, c]):
            inside = bins[:, c] == b
            values = np.unique(s[inside, c])
            repeated = len(values) < inside.sum()
            lo, hi = v.starts[c, b], v.starts[c, b + 1]
            assert hi - lo == (len(values) if len(values) > 1 and repeated else 0)
            assert full.starts[c, b + 1] - full.starts[c, b] == (len(values) if len(values) > 1 else 0)
            for m, value in enumerate(values if hi > lo else []):
                for k in range(3):
                    mine = inside & (true == k)
                    want = (np.sum(mine & (s[:, c] == value)) / mine.sum() if mine.any()
                            else np.sum(inside & (s[:, c] == value)) / inside.sum())
                    assert v.shares[c, k, lo + m] == pytest.approx(want, abs=1e-15)


def test_sums_and_a_batch_past_the_limit() -> None:
    """A sum of tallies carries no values (which samples a sum's bins hold is not what either ring showed): it
    reads its bins as before; a batch's own tally past the limit (``ScoreTally.of``) splits its bins over its last
    2,048 samples' values, exact for a block repeated."""
    y, s = few_valued_binary(np.random.default_rng(4))
    yy, ss = np.tile(y, 3), np.tile(s, 3)[:, None]
    t = ScoreTally.of(yy, ss, 2, positive=1)
    assert t.samples is None and t.values is not None
    assert roc_auc(t.parts) == pytest.approx(roc_auc_score(yy, ss[:, 0]), abs=1e-12)
    assert average_precision(t.parts) == pytest.approx(average_precision_score(yy, ss[:, 0]), abs=1e-12)
    both = t + t
    assert both.values is None and both.distinct is None
    assert roc_auc(both.parts) == roc_auc((both.hist, both.sums, both.top))
    assert not math.isnan(roc_auc(both.parts))


def test_the_values_are_made_once_per_ring_total_and_only_for_a_window_that_reads_its_bins(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """While every window holds at most the exact limit, a report prepares no values; past it, none while the census
    counts every column (it stands in for them), and once per batch (ring total) however many windows and reports
    read them where it does not (here: a state file written before the census, whose census is off)."""
    made: list[int] = []
    original = exact_scores.bin_values

    def counted(bins: np.ndarray, scores: np.ndarray, true: np.ndarray, k: int, **kwargs: Any) -> Any:
        made.append(len(true))
        return original(bins, scores, true, k, **kwargs)

    monkeypatch.setattr(exact_scores, "bin_values", counted)
    y, s = few_valued_binary(np.random.default_rng(5))
    m = Monitor([Cumulative(), Sliding(2_500)], reference={0: 0.7, 1: 0.3}, positive=1, detector=None)
    m.update_many(y[:2_000].tolist(), [0] * 2_000, y_score=s[:2_000])
    m.report()
    assert made == []
    m.update_many(y.tolist(), [0] * len(y), y_score=s)
    m.report()
    assert made == []
    body = state.loads(m.dumps())
    del body["scores"]["census"]
    old = Monitor.loads(state.dumps(body))
    made.clear()  # (loading reads the restored windows once)
    old.update_many(y.tolist(), [0] * len(y), y_score=s)
    old.report()
    old.report()
    assert made == [BLOCK]


def test_a_tally_with_values_that_do_not_fit_is_refused() -> None:
    """The sixth part of a tally must be a ``BinValues`` covering its classes and columns: anything else raises,
    naming what was expected."""
    y, s = few_valued_binary(np.random.default_rng(6))
    t = ScoreTally.of(np.tile(y, 2), np.tile(s, 2)[:, None], 2, positive=1)
    assert t.values is not None
    with pytest.raises(TypeError, match="must be a BinValues"):
        roc_auc((*t.parts[:5], "values"))
    y3, p3 = few_valued_k3(np.random.default_rng(7))
    k3 = ScoreTally.of(np.tile(y3, 2), np.tile(p3, (2, 1)), 3, positive=None)
    assert k3.values is not None
    with pytest.raises(ValueError, match=r"cover its 2 classes and 1 column\(s\), got 3 classes and flags \(3, 2048\)"):
        average_precision((*t.parts[:5], k3.values))


def test_classes_outside_k_are_refused() -> None:
    """The compiled passes index by class: a sample class outside ``[0, k)`` raises, naming the range."""
    s = np.array([[0.3], [0.3], [0.30001]])
    with pytest.raises(ValueError, match=r"true classes in \[0, 2\), got 0 to 2"):
        bin_values(score_bins(s).astype(np.int16), s, np.array([0, 1, 2]), 2)


def test_which_columns_repeat_a_value_is_a_recount_for_float32_and_signed_zero_scores() -> None:
    """The pass that finds the columns repeating some value (only those can split a bin) agrees with a recount by
    ``np.unique`` on scores whose low bits are zero — a float32 model's, cast to float64, and dyadic fractions —
    with one repeated pair among 2,048 values, and counts 0.0 and -0.0 as one value (scikit-learn ties them)."""
    rng = np.random.default_rng(8)
    f32 = rng.random((EXACT_RANKING_LIMIT, 4)).astype(np.float32).astype(np.float64)
    f32[:, 1] = np.arange(EXACT_RANKING_LIMIT) / 4096 + 0.25  # dyadic, all distinct
    f32[:, 2] = f32[:, 1]
    f32[-1, 2] = f32[7, 2]  # one repeated pair, 0.25 + 7/4096 twice
    f32[:, 3] = np.arange(EXACT_RANKING_LIMIT) * 2.0 ** -30  # tiny dyadic values, 0.0 first ...
    f32[1, 3] = -0.0  # ... and -0.0: one value repeated, alone in bin 0 (which holds exactly 0)
    true = rng.integers(0, 2, EXACT_RANKING_LIMIT)
    bins = score_bins(f32).astype(np.int16)
    v = bin_values(bins, f32, true, 2)
    for c in range(f32.shape[1]):
        split = any(len(np.unique(f32[bins[:, c] == b, c])) not in (1, np.sum(bins[:, c] == b))
                    for b in np.unique(bins[:, c]))
        assert (v.starts[c, -1] > 0) == split, c
    assert v.starts[2, -1] > 0
    full = bin_values(bins, f32, true, 2, complete=True)  # every bin of distinct values split ...
    assert bins[0, 3] == bins[1, 3] == 0 and full.starts[3, 1] == full.starts[3, 0]  # ... 0.0 and -0.0 one value


def test_an_iid_window_reads_the_split_of_its_own_counts_by_the_rings_shares() -> None:
    """On an i.i.d. stream (the ring a sample of the window, not a copy of it) a window that splits its bins by the
    ring's values — one sliding by time restored from a state file, whose buckets keep no value counts — reads ROC
    AUC and AP as scikit-learn's weighted values on the atoms a brute-force recount makes: each class's window
    count in the split bin times the ring's (last 2,048 samples') share of that class at each value, the bins of 0
    and 1 as counted; scikit-learn's on the window's own samples differs by the ring's sampling noise (here
    ~0.008). The cumulative window (the census) and the window sliding by count (its own samples) read
    scikit-learn's on their samples."""
    rng = np.random.default_rng(1)
    n = 8_000
    y, s = three_to_a_bin(rng, n)
    m = Monitor([Cumulative(), Sliding(5_000), Timed(3600.0, buckets=4)], reference={0: 0.7, 1: 0.3}, positive=1,
                detector=None)
    m.update_many([0] * 100, [0] * 100, 0.0, y_score=[0.0] * 100)  # left the timed window by t = 5,000
    for i in range(0, n, 250):
        m.update_many(y[i:i + 250].tolist(), [0] * 250, 5_000.0, y_score=s[i:i + 250])
    report = Monitor.loads(m.dumps()).report()
    w = report.windows["timed_3600s"]
    ring_y, ring_s = y[-BLOCK:], s[-BLOCK:]
    atom_s, atom_y, atom_w = [], [], []
    for c in (0, 1):
        inside = np.sum((y == c) & (s > 0) & (s < 1))
        mine = (ring_y == c) & (ring_s > 0) & (ring_s < 1)
        for v in THREE_TO_A_BIN:
            atom_s.append(v)
            atom_y.append(c)
            atom_w.append(np.sum((y == c) & (s == v)) if v in (0.0, 1.0) else
                          inside * np.sum(mine & (ring_s == v)) / mine.sum())
    assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(atom_y, atom_s, sample_weight=atom_w), abs=1e-12)
    assert w.scores["average_precision"] == pytest.approx(
        average_precision_score(atom_y, atom_s, sample_weight=atom_w), abs=1e-12)
    assert abs(w.scores["roc_auc"] - roc_auc_score(y, s)) > 0.005  # the ring's noise: a limit, not a bug
    y_all, s_all = np.r_[[0] * 100, y], np.r_[[0.0] * 100, s]
    for name, yy, ss in (("cumulative", y_all, s_all), ("sliding_5000", y[-5_000:], s[-5_000:])):
        w = report.windows[name]
        assert w.score_tally is not None and w.score_tally.samples is None
        assert w.scores["roc_auc"] == pytest.approx(roc_auc_score(yy, ss), abs=1e-12)
        assert w.scores["average_precision"] == pytest.approx(average_precision_score(yy, ss), abs=1e-12)
