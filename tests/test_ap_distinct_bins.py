"""Average precision of a window past the exact limit: a bin whose samples hold distinct scores is read in random
order, a bin of one repeated score tied — checked against scikit-learn on the window's samples, against the
definition of the random-order term, and across a save and a load."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from streammon import Cumulative, Monitor, Sliding
from streammon.counting.exact_scores import ScoreRing
from streammon.counting.score_tally import ScoreTally
from streammon.metrics import average_precision, average_precision_bin_error, average_precision_interval
from streammon.metrics.distinct_bins import distinct_bins
from streammon.metrics.exact_ranking import EXACT_RANKING_LIMIT
from streammon.metrics.score_bins import BINS, score_bins, tally
from streammon.metrics.window_score_loop import DIRECT_TERMS, HARMONIC_TERMS, _harmonic, random_order_share

N = 12_000  # every window past EXACT_RANKING_LIMIT: read from its bins


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def binary_stream(kind: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(true 0/1, the positive class's score) of N samples: scores that are continuous but crowded (a weak
    model's, a rare class's) or take few values (rounded, k-NN)."""
    rng = np.random.default_rng(seed)
    if kind == "fraud":  # 1 % positives, scores near 0 (logit -6 ± 1, positives 2 higher)
        y = (rng.random(N) < 0.01).astype(int)
        return y, sigmoid(rng.normal(size=N) - 6.0 + 2.0 * y)
    y = (rng.random(N) < 0.2).astype(int)
    if kind == "weak":  # logit spread 0.3 about 0: scores within ~[0.35, 0.65]
        return y, sigmoid(0.3 * (rng.normal(size=N) + y - 0.5))
    if kind == "beta":  # Beta(55, 45) against Beta(50, 50)
        return y, np.where(y == 1, rng.beta(55, 45, N), rng.beta(50, 50, N))
    if kind == "rounded":  # two decimals: every bin holds one value
        return y, np.round(sigmoid(rng.normal(size=N) + 1.5 * y - 1.0), 2)
    assert kind == "knn"  # 15 neighbours: k/15
    return y, rng.binomial(15, np.where(y == 1, 0.7, 0.3)) / 15


def monitor_fed(y: np.ndarray, s: np.ndarray) -> Monitor:
    m = Monitor([Cumulative(), Sliding(5_000)], reference={0: 0.8, 1: 0.2}, positive=1, detector=None)
    for start in range(0, N, 3_000):
        part = slice(start, start + 3_000)
        m.update_many(y[part].tolist(), (s[part] > 0.5).astype(int).tolist(), y_score=s[part])
    return m


@pytest.mark.parametrize("kind", ["weak", "fraud", "beta"])
def test_crowded_continuous_scores_read_within_the_target(kind: str) -> None:
    """Continuous scores crowded into few bins: read tied, the bins miss scikit-learn's AP by more than the
    issue's 0.002 (the contrast); read in random order where the last exact scores show distinct values, within
    it, as read and at the reference mix (scikit-learn with sample weights); the report's value is the per-metric
    function's on the window's tally, and the bin error bound still covers scikit-learn's."""
    y, s = binary_stream(kind, seed=3)
    m = monitor_fed(y, s)
    report = m.report()
    misses = []
    for name, rows in (("cumulative", slice(None)), ("sliding_5000", slice(N - 5_000, None))):
        w = report.windows[name]
        assert w.score_tally is not None and w.score_tally.samples is None and w.score_tally.distinct is not None
        yy, ss = y[rows], s[rows]
        exact = average_precision_score(yy, ss)
        misses.append(abs(average_precision(tally(yy, ss, 2)) - exact))  # every bin tied
        assert abs(w.scores["average_precision"] - exact) <= 0.002, name
        assert w.scores["average_precision"] == pytest.approx(average_precision(w.score_tally.parts), abs=1e-12)
        assert abs(w.scores["average_precision"] - exact) <= average_precision_bin_error(w.score_tally.parts)
        n1 = yy.sum()
        weights = np.where(yy == 1, 0.2 * len(yy) / n1, 0.8 * len(yy) / (len(yy) - n1))
        assert abs(w.corrected["average_precision"] - average_precision_score(yy, ss, sample_weight=weights)) <= 0.005
    assert max(misses) > 0.002  # the tied reading missed the target on these windows


@pytest.mark.parametrize("kind", ["rounded", "knn"])
def test_repeated_scores_stay_tied_and_exact(kind: str) -> None:
    """Scores that take few values: every bin the exact scores show holds one value, so the bins are read tied,
    which is scikit-learn's reading of tied scores: equal to rounding."""
    y, s = binary_stream(kind, seed=4)
    w = monitor_fed(y, s).report().windows["cumulative"]
    assert w.score_tally is not None and w.score_tally.samples is None
    assert w.score_tally.distinct is not None
    assert not w.score_tally.distinct[0, score_bins(s)].any()
    assert w.scores["average_precision"] == pytest.approx(average_precision_score(y, s), abs=1e-12)


def test_k3_macro_average_precision_within_the_target() -> None:
    """K = 3 softmax scores of a weak model: the macro one-vs-rest AP within 0.002 of scikit-learn as read, within
    0.005 at the reference mix."""
    rng = np.random.default_rng(5)
    y = rng.choice(3, size=N, p=[0.7, 0.2, 0.1])
    logits = 0.4 * rng.normal(size=(N, 3))
    logits[np.arange(N), y] += 0.5
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    m = Monitor([Cumulative()], reference={0: 0.5, 1: 0.3, 2: 0.2}, detector=None)
    m.update_many(y.tolist(), p.argmax(axis=1).tolist(), y_score=p)
    w = m.report().windows["cumulative"]
    onehot = np.eye(3)[y]
    assert abs(w.scores["average_precision"] - average_precision_score(onehot, p, average="macro")) <= 0.002
    weights = (np.array([0.5, 0.3, 0.2]) / (np.bincount(y) / N))[y]
    assert abs(w.corrected["average_precision"]
               - average_precision_score(onehot, p, average="macro", sample_weight=weights)) <= 0.005
    assert w.score_tally is not None
    assert w.scores["average_precision"] == pytest.approx(average_precision(w.score_tally.parts), abs=1e-12)


def test_a_saved_and_loaded_monitor_reads_the_same() -> None:
    """The distinct bins come from the exact scores the state file carries: a loaded monitor's report reads the
    same average precision, and so does the next batch's."""
    y, s = binary_stream("weak", seed=6)
    m = monitor_fed(y, s)
    twin = Monitor.loads(m.dumps())
    for a, b in ((m, twin), (m, twin)):
        for name in ("cumulative", "sliding_5000"):
            assert a.report().windows[name].scores["average_precision"] == \
                b.report().windows[name].scores["average_precision"]
        for monitor in (a, b):
            monitor.update_many(y[:500].tolist(), (s[:500] > 0.5).astype(int).tolist(), y_score=s[:500])


def test_a_batch_tally_past_the_limit_knows_its_distinct_bins() -> None:
    """``ScoreTally.of`` of more samples than the exact limit flags the bins from all of them; a sum of tallies
    does not know which bins hold distinct scores (None: tied)."""
    y, s = binary_stream("weak", seed=7)
    t = ScoreTally.of(y, s[:, None], 2, positive=1)
    assert t.samples is None and t.distinct is not None
    assert abs(average_precision(t.parts) - average_precision_score(y, s)) <= 0.002
    assert (t + t).distinct is None
    small = ScoreTally.of(y[:EXACT_RANKING_LIMIT], s[:EXACT_RANKING_LIMIT, None], 2, positive=1)
    assert small.samples is not None and small.distinct is None


def test_distinct_bins_against_a_recount() -> None:
    """Per (column, bin): two differing scores among those it holds -> distinct; a bin shown fewer than two
    samples takes its column's majority of the bins shown two or more (distinct if none is)."""
    rng = np.random.default_rng(8)
    values = np.r_[np.round(rng.random(300), 2), rng.random(300)]  # repeated and distinct values
    scores = rng.choice(values, size=(1_500, 2))
    scores[:, 1] = np.round(scores[:, 1], 1)  # column 1: eleven values, each its own bin
    bins = score_bins(scores).astype(np.int16)
    flags = distinct_bins(bins, scores)
    for c in range(2):
        held: dict[int, set[float]] = {}
        for b, v in zip(bins[:, c].tolist(), scores[:, c].tolist(), strict=True):
            held.setdefault(b, set()).add(v)
        shown = {b: vs for b, vs in held.items() if (bins[:, c] == b).sum() >= 2}
        majority = sum(len(vs) > 1 for vs in shown.values()) * 2 > len(shown) if shown else True
        expected = np.full(BINS, majority)
        for b, vs in shown.items():
            expected[b] = len(vs) > 1
        assert flags[c].tolist() == expected.tolist()
    assert not flags[1].any()
    assert distinct_bins(np.zeros((0, 1), np.int16), np.zeros((0, 1))).all()


@pytest.mark.parametrize("count", [1, 2, DIRECT_TERMS, DIRECT_TERMS + 1, 30, HARMONIC_TERMS, HARMONIC_TERMS + 1,
                                   500, 40_000])
def test_random_order_share_is_its_definition(count: int) -> None:
    """The bin's term ``w·Σ_i (T + w·i)/(D + c·i)``, ``c = w + Q/(P + 1)``, summed term by term (math.fsum) —
    the closed forms beyond DIRECT_TERMS and HARMONIC_TERMS included — for weights, negatives and ranks above of
    several sizes; and the harmonic gap against its sum."""
    rng = np.random.default_rng(count)
    for _ in range(50):
        weight = float(rng.choice([1.0, 0.37, 5.2]))
        negatives = float(rng.random() * rng.choice([0.0, 3.0, 4_000.0]))
        above_pos = float(rng.random() * rng.choice([0.0, 50.0, 2e5]))
        above = above_pos + float(rng.random() * rng.choice([0.0, 10.0, 1e6]))
        if above == 0.0:
            above_pos = 0.0
        c = weight + negatives / (count + 1)
        expected = weight * math.fsum((above_pos + weight * i) / (above + c * i) for i in range(1, count + 1))
        assert random_order_share(above_pos, above, count, weight, negatives) == pytest.approx(expected, rel=1e-10)
        x = above / c
        assert _harmonic(x, count) == pytest.approx(math.fsum(1.0 / (x + j) for j in range(1, count + 1)), rel=1e-12)


@pytest.mark.parametrize("weight", [5e-324, 1e-310, 1e-300, 1e-150])
def test_random_order_share_at_the_smallest_weights(weight: float) -> None:
    """A positive weight near the smallest float (a reference prior of 5e-324): ``D/c`` overflows where a bin holds
    no negative; the share is still its definition summed term by term (it read NaN, or every positive at
    precision 1 under 1e10 of weight ranked above), and a monitor at that reference mix reads a finite AP in
    [0, 1]."""
    for count in (DIRECT_TERMS + 1, 10, 300):
        for above_pos_share, above, negatives in ((0.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.5, 1e10, 0.0), (0.0, 1e10, 1.0)):
            above_pos = above_pos_share * above * weight  # the positive weight above: so many samples of weight w
            c = weight + negatives / (count + 1)
            expected = weight * math.fsum((above_pos + weight * i) / (above + c * i) for i in range(1, count + 1))
            got = random_order_share(above_pos, above, count, weight, negatives)
            assert math.isfinite(got) and 0.0 <= got <= count * weight * (1 + 1e-15)  # each precision <= 1
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-12 * count * weight)  # AP's units: / count·w
    y, s = binary_stream("weak", seed=5)
    m = Monitor([Cumulative()], reference={0: 1.0, 1: weight}, positive=1, detector=None)
    m.update_many(y.tolist(), (s > 0.5).astype(int).tolist(), y_score=s)
    value = m.report().windows["cumulative"].corrected["average_precision"]
    assert math.isfinite(value) and 0.0 <= value <= 1.0


def test_a_bin_in_random_order_is_the_mean_over_orders() -> None:
    """One bin of 3 positives and 4 negatives at distinct scores under 2 positives and 1 negative above: the
    random-order reading against the mean of scikit-learn's AP over every order of the bin's samples: not equal
    (the term takes each positive's expected number of negatives ahead, not its expected precision: the two differ
    most in a small bin near the top, as here) but several times nearer than the tied reading."""
    above = [(1, 0.99), (1, 0.98), (0, 0.97)]
    inside = [1, 1, 1, 0, 0, 0, 0]
    orders = {perm for perm in itertools.permutations(inside)}
    aps = []
    for perm in orders:
        ys = [label for label, _ in above] + list(perm)
        ss = [score for _, score in above] + [0.5 + 1e-4 * (len(perm) - i) for i in range(len(perm))]
        aps.append(average_precision_score(ys, ss))
    mean = float(np.mean(aps))
    y = np.array([1, 1, 0, 1, 1, 1, 0, 0, 0, 0])
    s = np.array([0.99, 0.98, 0.97] + [0.5 + 1e-4 * (7 - i) for i in range(7)])
    t = ScoreTally.of(np.tile(y, 300), np.tile(s, 300)[:, None], 2, positive=1)  # past the limit: the bins
    flags = np.zeros((1, BINS), np.bool_)
    flags[0, score_bins(s[3:])] = True
    one = ScoreTally.of(y, s[:, None], 2, positive=1)
    random_order = average_precision((one.hist, one.sums, one.top, None, flags))
    tied = average_precision((one.hist, one.sums, one.top))
    assert 4 * abs(random_order - mean) < abs(tied - mean)  # 0.011 and 0.057 off the mean over orders
    assert t.distinct is not None and bool(t.distinct[0, score_bins(s[3:])].all())


def test_the_bootstrap_interval_reads_its_resamples_as_the_point_value() -> None:
    """``average_precision_interval`` of a tally that knows its distinct bins reads each resample as the point
    value is read: the interval holds the value and centres on it, where the tied resamples centre lower."""
    y, s = binary_stream("weak", seed=9)
    t = ScoreTally.of(y, s[:, None], 2, positive=1)
    point = average_precision(t.parts)
    low, high = average_precision_interval(t.parts)
    tied_low, tied_high = average_precision_interval((t.hist, t.sums, t.top))
    assert low < point < high
    assert abs((low + high) / 2 - point) < 0.001 < abs((tied_low + tied_high) / 2 - point)


def test_an_empty_ring_says_nothing() -> None:
    """A ring holding no sample (a state file written before exact scores were kept) gives no flags: every bin
    reads tied, as before."""
    ring = ScoreRing(1, bins=True)
    assert ring.distinct() is None
    ring.append(np.array([0, 1]), np.array([[0.5], [0.5001]]))
    flags = ring.distinct()
    assert flags is not None and bool(flags[0, score_bins(np.array([0.5]))[0]])
    assert ScoreRing(1).distinct() is None  # keeps no bins: the prediction side


def test_average_precision_never_reads_over_1() -> None:
    """Every positive above every negative: scikit-learn's AP is exactly 1. Positives crowded in a few bins of
    distinct scores (read in random order) at a class mix of uneven weights summed bin by bin could round an
    ulp over 1 (1.0000000000000002 in 7 of 400 such readings, tied bins as well); AP is a mean of precisions, each
    at most 1: never over 1."""
    rng = np.random.default_rng(0)
    for trial in range(60):
        k = 2 if trial % 2 == 0 else 3
        n = 3_000
        if k == 2:
            y = (rng.random(n) < rng.uniform(0.05, 0.5)).astype(int)
            score = np.where(y == 1, rng.uniform(0.6, 0.6 + rng.uniform(1e-4, 1e-2), n), rng.uniform(0.1, 0.4, n))
            pred = (score > 0.5).astype(int)
        else:  # each class's own score in a crowded band above every other sample's score of that class
            y = rng.integers(0, k, n)
            score = rng.uniform(0.05, 0.1, (n, k))
            score[np.arange(n), y] = rng.uniform(0.7, 0.7 + 1e-3, n)
            score /= score.sum(1, keepdims=True)
            pred = score.argmax(1)
        mix = rng.dirichlet(np.ones(k))
        m = Monitor([Cumulative()], reference={c: float(mix[c]) for c in range(k)}, positive=1 if k == 2 else None,
                    detector=None)
        m.update_many(y.tolist(), pred.tolist(), y_score=score)
        w = m.report().windows["cumulative"]
        assert w.score_tally is not None and w.score_tally.distinct is not None
        exact = average_precision_score(y, score) if k == 2 else average_precision_score(np.eye(k)[y], score)
        assert exact == pytest.approx(1.0, abs=1e-12)  # (scikit-learn's own sum rounds too)
        for value in (w.scores["average_precision"], w.corrected["average_precision"],
                      average_precision(w.score_tally.parts), average_precision(w.score_tally.parts, priors=mix)):
            assert value <= 1.0 and value == pytest.approx(exact, abs=1e-12), trial


def test_the_flags_are_made_only_for_a_window_that_reads_its_bins(monkeypatch: pytest.MonkeyPatch) -> None:
    """While every window holds at most the exact limit (a quiet monitor's usual state), a report makes no flags
    (a pass over the ring it would not read); nor while the census counts every score column (it stands in for
    the ring: the cumulative window of 3,000 continuous scores reads them exactly); once the column closes (past
    4,096 values) it does, once per new batch."""
    made: list[int] = []
    original = ScoreRing.distinct

    def counted(self: ScoreRing) -> Any:
        made.append(self.total)
        return original(self)

    monkeypatch.setattr(ScoreRing, "distinct", counted)
    y, s = binary_stream("weak", seed=10)
    m = Monitor([Cumulative(), Sliding(1_000)], reference={0: 0.8, 1: 0.2}, positive=1, detector=None)
    for start in range(0, 2_000, 500):
        m.update_many(y[start:start + 500].tolist(), (s[start:start + 500] > 0.5).astype(int).tolist(),
                      y_score=s[start:start + 500])
        m.report()
    assert made == []
    m.update_many(y[2_000:3_000].tolist(), (s[2_000:3_000] > 0.5).astype(int).tolist(), y_score=s[2_000:3_000])
    w = m.report().windows["cumulative"]
    assert made == [] and w.score_tally is not None and w.score_tally.values is not None
    m.update_many(y[3_000:5_000].tolist(), (s[3_000:5_000] > 0.5).astype(int).tolist(), y_score=s[3_000:5_000])
    w = m.report().windows["cumulative"]
    m.report()
    assert made == [5_000] and w.score_tally is not None and w.score_tally.distinct is not None
