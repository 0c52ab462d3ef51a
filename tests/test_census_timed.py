"""A window sliding by time past the exact limit reads its bins by its own value counts
(``streammon.counting.windows.timed_values``): against scikit-learn on the window's own samples, in the cases its
marks are least obvious — a labelled batch whose first bucket takes only unscored samples (predictions made
without a score), which the window never closes and so never named when the bucket left."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from streammon import Cumulative, Monitor, Timed
from streammon.counting.score_census import ValueCensus
from streammon.counting.windows import timed_values
from streammon.counting.windows.scored_batch import ScoredBatch
from streammon.counting.windows.timed_values import TimedValues
from streammon.metrics.value_census import CENSUS_LIMIT


def test_a_bucket_of_only_unscored_labels_leaves_with_its_mark() -> None:
    """Each label batch: ten predictions made without a score labelled in one bucket, then 1,500 scored ones in
    the next (one ``label_many``); four 10 s buckets hold two such batches (3,000 scored samples, past the exact
    limit), a few-valued binary model (2,000 values at 4 decimals, several to a bin). Before the fix the
    unscored bucket's mark stayed for good — a copy of the census's counts a batch, and the oldest mark, so the
    window's counts were the census's since the start and it read the ring's values (ROC AUC ~3e-5 off)."""
    rng = np.random.default_rng(0)
    pool = np.round(rng.random(2_000), 4)
    monitor = Monitor([Cumulative(), Timed(40.0, buckets=4)], reference={0: 1.0, 1: 1.0}, positive=1, detector=None)
    times, ys, ss = [], [], []
    t = 0.0
    for step in range(8):
        n = 1_500
        s = pool[rng.integers(0, len(pool), n)]
        y = (rng.random(n) < s).astype(int)
        scored, bare = [f"a{step}-{i}" for i in range(n)], [f"b{step}-{i}" for i in range(10)]
        monitor.predict_many(scored, y.tolist(), t, y_score=np.c_[1 - s, s])
        monitor.predict_many(bare, [0] * 10, t)
        monitor.label_many(bare + scored, [0] * 10 + y.tolist(), np.r_[np.full(10, t + 1.0), np.full(n, t + 11.0)])
        times.append(np.full(n, t + 11.0))
        ys.append(y)
        ss.append(s)
        t += 20.0
        tt, yy, sc = map(np.concatenate, (times, ys, ss))
        held = tt >= (np.floor(tt[-1] / 10.0) - 3) * 10.0
        w = monitor.report().windows["timed_40s"]
        assert w.n_scored == held.sum()
        assert abs(w.scores["roc_auc"] - roc_auc_score(yy[held], sc[held])) < 1e-12, step
        assert abs(w.scores["average_precision"] - average_precision_score(yy[held], sc[held])) < 1e-12, step
    timed = monitor._tally.scoring.windows[-1]
    assert len(timed.values._buckets) + len(timed.values._unknown) <= 4  # the buckets in the window only


def test_a_bucket_keeps_only_the_open_columns_counts() -> None:
    """K = 16, column 0 at 3 decimals, the 15 others continuous (closed by the census within its first batches,
    after its counts grew to 4,096 entries): each later bucket that opens keeps a copy of column 0's counts only.
    Before, it copied the census's whole counts, the closed columns' zeros included — 4 MiB a bucket here, 64 MiB
    at K = 64 (30 buckets: 1.8 GiB) — and the memory traced over 8 more buckets grew by ~32 MiB."""
    k = 16
    rng = np.random.default_rng(1)
    monitor = Monitor([Timed(600.0, buckets=60)], reference={c: 1.0 for c in range(k)}, detector=None)

    def batch(i: int) -> None:
        p = rng.dirichlet(np.ones(k) * 5, 1_000)
        r = np.round(p[:, 0], 3)
        p[:, 1] += p[:, 0] - r
        p[:, 0] = r
        monitor.update_many(rng.integers(0, k, 1_000).tolist(), [0] * 1_000, 10.0 * i, y_score=p)

    for i in range(8):
        batch(i)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(8, 16):
            batch(i)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 2 * 2**20, grown


def test_the_census_gives_back_the_room_of_closed_columns() -> None:
    """Column 0 takes 55 values, the 63 others are continuous: they grow the census's counts to 4,096 entries
    before they close. Once they closed the counts are as wide as column 0 needs (64 entries: 1 MiB at K = 64,
    not 64 MiB), and column 0 still counts as NumPy recounts it."""
    k = 64
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(k) * 5, 8_000)
    r = np.round(p[:, 0], 3)
    p[:, 1] += p[:, 0] - r
    p[:, 0] = r
    y = rng.integers(0, k, 8_000)
    census = ValueCensus(columns=k)
    for i in range(0, 8_000, 1_000):
        census.add(y[i:i + 1_000], p[i:i + 1_000])
    assert census.open_columns.tolist() == [True] + [False] * (k - 1)
    counts = census.counts
    assert counts is not None and counts.nbytes <= k * 64 * k * 4, counts.shape
    values, inverse = np.unique(p[:, 0], return_inverse=True)
    expected = np.zeros((len(values), k), np.int64)
    np.add.at(expected, (inverse, y), 1)
    assert census.counted(0) == (values.tolist(), expected.tolist())


def delong(y: np.ndarray, s: np.ndarray) -> tuple[float, float]:
    """DeLong's 95 % interval of a binary ROC AUC by its placement values (ties ½), recounted with NumPy."""
    pos, neg = np.sort(s[y == 1]), np.sort(s[y == 0])
    v10 = (np.searchsorted(neg, s[y == 1], "left") + np.searchsorted(neg, s[y == 1], "right")) / 2 / len(neg)
    v01 = (2 * len(pos) - np.searchsorted(pos, s[y == 0], "right") - np.searchsorted(pos, s[y == 0], "left")) / 2 \
        / len(pos)
    auc, spread = v10.mean(), 1.959963984540054 * np.sqrt(v10.var(ddof=1) / len(pos) + v01.var(ddof=1) / len(neg))
    return max(0.0, auc - spread), min(1.0, auc + spread)


@pytest.mark.parametrize("raw_limit", [timed_values.RAW_LIMIT, 0, 3_000])  # as shipped; every mark whole; mixed
@pytest.mark.parametrize("seed", range(4))
def test_timed_window_reads_scikit_learn_after_buckets_leave(monkeypatch: pytest.MonkeyPatch, raw_limit: int,
                                                             seed: int) -> None:
    """Predictions (some without a score) labelled later in shuffled order, label batches spanning up to three
    10 s buckets, gaps of up to 2.5 buckets, a few-valued binary model (200 or 3,000 values at 4 decimals): a
    40 s window of more than 2,048 scored samples reads scikit-learn's ROC AUC and AP, its AP at the reference mix
    (scikit-learn with sample weights) and DeLong's interval, on the scored samples whose label time is in it.
    Fails with the timed path off (TimedValues.counts None: the ring's values read). ``raw_limit``: the scores
    since the newest mark kept as their entries (``timed_values.RAW_LIMIT``): 0 makes every mark whole, 3,000
    mixes the two kinds of bucket."""
    monkeypatch.setattr(timed_values, "RAW_LIMIT", raw_limit)
    rng = np.random.default_rng(seed)
    pool = np.round(rng.random(int(rng.choice([200, 3_000]))), 4)
    monitor = Monitor([Cumulative(), Timed(40.0, buckets=4)], reference={0: 0.8, 1: 0.2}, positive=1, detector=None)
    pending: dict[str, tuple[int, float, bool]] = {}
    held: list[tuple[float, int, float, bool]] = []  # (label time, class, score, scored) in label order
    t, key, checks = 0.0, 0, 0
    for _ in range(24):
        n = int(rng.choice([1, 1_500, 3_000]))
        s = pool[rng.integers(0, len(pool), n)]
        y = (rng.random(n) < s).astype(int)
        keys = [f"k{key + i}" for i in range(n)]
        key += n
        scored = bool(rng.random() > 0.2)
        monitor.predict_many(keys, y.tolist(), t, y_score=np.c_[1 - s, s] if scored else None)
        pending.update({kk: (int(y[i]), float(s[i]), scored) for i, kk in enumerate(keys)})
        labelled = list(pending)
        rng.shuffle(labelled)
        labelled = labelled[: int(rng.integers(0, len(labelled) + 1))]
        if labelled:
            times = t + np.sort(rng.random(len(labelled))) * float(rng.choice([0.0, 6.0, 30.0]))
            monitor.label_many(labelled, [pending[kk][0] for kk in labelled], times)
            held += [(float(u), *pending.pop(kk)) for kk, u in zip(labelled, times, strict=True)]
            t = float(times[-1])
        t += float(rng.choice([0.0, 1.0, 7.0, 25.0]))
        if not held:
            continue
        tt, yy, ss, sc = (np.array(column) for column in zip(*held, strict=True))
        inside = sc.astype(bool) & (tt >= (np.floor(tt[-1] / 10.0) - 3) * 10.0)
        w = monitor.report().windows["timed_40s"]
        assert w.n_scored == inside.sum()
        yv, sv = yy[inside].astype(int), ss[inside]
        if len(yv) <= 2_048 or len(set(yv)) < 2:
            continue
        checks += 1
        weights = np.where(yv == 1, 0.2 / yv.mean(), 0.8 / (1 - yv.mean()))
        assert abs(w.scores["roc_auc"] - roc_auc_score(yv, sv)) < 1e-12
        assert abs(w.scores["average_precision"] - average_precision_score(yv, sv)) < 1e-12
        assert abs(w.corrected["average_precision"] - average_precision_score(yv, sv, sample_weight=weights)) < 1e-12
        assert np.allclose(w.intervals["roc_auc"], delong(yv, sv), rtol=0, atol=1e-12)
    assert checks >= 3


def test_a_mark_wider_than_the_census_once_columns_closed() -> None:
    """Buckets opened while two continuous columns were open (their counts 1,024 to 4,096 entries wide), then the
    columns close and the census cuts its room to the few-valued column's (64): the window's counts of that column
    are still a recount of its own samples by NumPy (before: unknown while such a mark was the oldest, the ring's
    values read)."""
    rng = np.random.default_rng(5)
    census, marks = ValueCensus(columns=3), TimedValues()
    batches = []
    for bucket in range(6):
        s = np.c_[np.round(rng.random(1_000), 1), rng.random(1_000), rng.random(1_000)]
        y = rng.integers(0, 3, 1_000)
        census.add(y, s)
        batch = ScoredBatch(y, s, None, positive=1)
        batch.census, batch.entries = census, census.entries
        marks.opened(bucket, batch, 0)
        marks.took(batch, 0, len(y))
        batches.append((y, s))
    assert census.open_columns.tolist() == [True, False, False]
    counts = census.counts
    assert counts is not None and counts.shape[1] == 64
    for oldest in (1, 2, 3):
        marks.leave(oldest)
        y = np.concatenate([b[0] for b in batches[oldest:]])
        s = np.concatenate([b[1] for b in batches[oldest:]])
        got = marks.counts(counts)
        assert got is not None
        values, inverse = np.unique(s[:, 0], return_inverse=True)
        expected = np.zeros((len(values), 3), np.int64)
        np.add.at(expected, (inverse, y), 1)
        entry_of = {v: e for e, v in enumerate(census._values[0, : len(values)].tolist())}  # value -> its entry
        assert got[0, [entry_of[v] for v in values.tolist()]].tolist() == expected.tolist(), oldest


def test_unscored_rows_of_a_class_never_scored_leave_the_marks_known() -> None:
    """K = 3, a few-valued model (300 probability rows at 4 decimals, several values to a bin): its scored
    samples are of classes a and b only, and each label batch also labels five predictions of class c made without
    a score. Those rows carry no score and the census never counts class c (its counts stay two classes wide), yet
    before the fix their class sized the marks kept from the samples' entries (three classes): once such a mark was
    the oldest the window's counts were unknown for good and it read the ring's values (ROC AUC 0.66527 against
    0.66522). The timed window now reads what a monitor fed the same stream without the unscored rows reads."""
    rng = np.random.default_rng(7)
    pool = np.round(rng.dirichlet(np.ones(3) * 3, 300), 4)
    pool[:, 2] = np.round(1.0 - pool[:, 0] - pool[:, 1], 4)
    pool = pool[(pool >= 0).all(axis=1)]

    def fed(bare: bool) -> Monitor:
        rng = np.random.default_rng(0)
        monitor = Monitor([Cumulative(), Timed(40.0, buckets=4)], reference={"a": 1.0, "b": 1.0, "c": 1.0},
                          detector=None)
        for step in range(12):
            p = pool[rng.integers(0, len(pool), 1_000)]
            y = np.where(rng.random(1_000) < p[:, 0] / (p[:, 0] + p[:, 1]), "a", "b").tolist()
            keys = [f"s{step}-{i}" for i in range(1_000)]
            monitor.predict_many(keys, y, 10.0 * step, y_score=p)
            if bare:
                unscored = [f"u{step}-{i}" for i in range(5)]
                monitor.predict_many(unscored, ["c"] * 5, 10.0 * step)
                keys, y = unscored + keys, ["c"] * 5 + y
            monitor.label_many(keys, y, np.full(len(keys), 10.0 * step + 1.0))
        return monitor

    got, expected = (fed(bare).report().windows["timed_40s"] for bare in (True, False))
    assert got.n_scored == expected.n_scored == 4_000
    for name in ("roc_auc", "average_precision", "auroc_ova", "aurpc_ova"):
        assert abs(got.scores[name] - expected.scores[name]) < 1e-12, name


@pytest.mark.parametrize("raw_limit", [timed_values.RAW_LIMIT, 0, 500])
def test_timed_windows_value_counts_are_a_recount_of_their_samples(monkeypatch: pytest.MonkeyPatch,
                                                                   raw_limit: int) -> None:
    """K = 3, a few-valued model; two windows sliding by time of different bucket widths (4 x 10 s, 2 x 25 s: a
    batch asks the census for marks at different samples, window after window); label batches spanning up to
    eight buckets, a tenth of their rows without a score and of a class never scored, gaps past both windows.
    After every batch each window's own value counts (``TimedValues.counts``), where known, are a NumPy recount
    of the scored samples whose buckets are in it, at the census's entries, and they are known once the census
    counted the window's first sample (always, here)."""
    monkeypatch.setattr(timed_values, "RAW_LIMIT", raw_limit)
    rng = np.random.default_rng(3)
    pool = np.round(rng.dirichlet(np.ones(3) * 3, 200), 3)
    pool[:, 2] = np.round(1.0 - pool[:, 0] - pool[:, 1], 3)
    pool = pool[(pool >= 0).all(axis=1)]
    monitor = Monitor([Timed(40.0, buckets=4), Timed(50.0, buckets=2)], reference={"a": 1.0, "b": 1.0, "c": 1.0},
                      detector=None)
    labels = {"a": 0, "b": 1, "c": 2}
    held_t, held_y, held_s = [], [], []
    t, known = 0.0, 0
    for step in range(30):
        n = int(rng.choice([1, 40, 600]))
        p = pool[rng.integers(0, len(pool), n)]
        y = rng.choice(["a", "b"], n).tolist()
        keys = [f"s{step}-{i}" for i in range(n)]
        monitor.predict_many(keys, y, t, y_score=p)
        bare = [f"u{step}-{i}" for i in range(n // 10)]
        if bare:
            monitor.predict_many(bare, ["c"] * len(bare), t)
        order = rng.permutation(n + len(bare))
        keys, y = [(keys + bare)[i] for i in order], [(y + ["c"] * len(bare))[i] for i in order]
        times = t + np.sort(rng.random(len(keys))) * float(rng.choice([0.0, 15.0, 80.0]))
        monitor.label_many(keys, y, times)
        scored = [i for i, k in enumerate(keys) if k.startswith("s")]
        held_t.append(times[scored])
        held_y.append(np.array([labels[y[i]] for i in scored]))
        held_s.append(np.array([p[int(keys[i].split("-")[1])] for i in scored]).reshape(-1, 3))
        t = float(times[-1]) + float(rng.choice([0.0, 4.0, 30.0, 120.0]))
        tt, yy, ss = (np.concatenate(a) for a in (held_t, held_y, held_s))
        scoring = monitor._tally.scoring
        assert scoring is not None and scoring.census is not None and scoring.census.counts is not None
        census = scoring.census
        for window in scoring.windows:
            width, buckets = window.window.width, window.window.buckets
            got = window.values.counts(census.counts)
            inside = np.floor(tt / width) > np.floor(float(times[-1]) / width) - buckets
            if got is None:
                assert not inside.any(), (step, width)  # (no bucket holds a sample)
                continue
            known += 1
            for c in range(3):
                values = census._values[c, : int(census._used[c])]
                expected = np.zeros((len(values), got.shape[2]), np.int64)
                np.add.at(expected, (np.searchsorted(np.sort(values), ss[inside, c]), yy[inside]), 1)
                by_entry = np.argsort(np.argsort(values))  # entry -> its rank among the values
                assert np.array_equal(got[c, : len(values)], expected[by_entry]), (step, width, c)
                assert not got[c, len(values):].any()
    assert known >= 40


def test_a_mark_made_from_entries_is_no_wider_than_the_census_can_be() -> None:
    """A column of 3,000 values when the first bucket opens (its mark 3,000 entries wide), then 500 more values in
    the next buckets, whose marks are made from their samples' entries: they grow to hold entries up to 3,499 —
    at most the census's ``CENSUS_LIMIT`` entries, not twice the mark's width (6,000: at K = 64, two marks of
    64 x 6,000 x 64 int64 counts, 188 MiB each where 128 MiB hold every entry). The window's counts stay a
    recount."""
    census, marks = ValueCensus(columns=1), TimedValues()
    values = np.arange(3_500) / 3_500
    batches = [values[:3_000], values[3_000:3_200], values[3_200:]]
    for bucket, s in enumerate(batches):
        y = np.arange(len(s)) % 2
        census.add(y, s[:, None])
        batch = ScoredBatch(y, s[:, None], None, positive=1)
        batch.census, batch.entries = census, census.entries
        marks.opened(bucket, batch, 0)
        marks.took(batch, 0, len(y))
    assert marks._last is not None and marks._last.shape[1] <= CENSUS_LIMIT
    marks.leave(1)
    counts = census.counts
    assert counts is not None
    got = marks.counts(counts)
    assert got is not None and got.shape[1] <= CENSUS_LIMIT
    assert got[0, :3_000].sum() == 0 and got[0, 3_000:3_500].sum(axis=1).tolist() == [1] * 500
