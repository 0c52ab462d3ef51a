"""A window sliding by time closes each bucket by its samples' own histogram cells while they are few
(``streammon.metrics.bucket_cells``) and by scanning the bucket's histogram past that: either way, after every batch
the timed window's histogram and sums are a NumPy recount of the scored samples whose times are in it, and the
cumulative window's (which takes what leaves the open bucket) a recount of every scored sample — with batches that
span many buckets, batches without scores, rows without a score in a scored batch, gaps longer than the window,
and a state file saved and loaded mid-stream."""

from __future__ import annotations

import numpy as np
import pytest

from streammon import Cumulative, Monitor, Timed
from streammon.counting.windows import scored_timed
from streammon.metrics.score_bins import BINS, score_bins


def recount(true: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """The histogram (k, C, BINS) of these samples, by NumPy."""
    hist = np.zeros((k, scores.shape[1], BINS), np.int64)
    bins = score_bins(scores)
    for c in range(scores.shape[1]):
        np.add.at(hist, (true, c, bins[:, c]), 1)
    return hist


@pytest.mark.parametrize("share", [scored_timed.TOUCHED_SHARE, 0.0, 1e9])  # as shipped, always scanned, never
@pytest.mark.parametrize("seed", range(3))
def test_timed_histogram_is_a_recount_of_its_samples(monkeypatch: pytest.MonkeyPatch, share: float,
                                                     seed: int) -> None:
    monkeypatch.setattr(scored_timed, "TOUCHED_SHARE", share)
    rng = np.random.default_rng(seed)
    k = 3
    clock = [0.0]
    monitor = Monitor([Cumulative(), Timed(60.0, buckets=5)], reference={c: 1.0 for c in range(k)}, detector=None,
                      clock=lambda: clock[0])
    times: list[np.ndarray] = []
    trues: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    t = 0.0
    for step in range(40):
        n = int(rng.choice([1, 7, 300, 2_500]))
        y = rng.integers(0, k, n)
        p = rng.dirichlet(np.ones(k), n)
        if rng.random() < 0.3:
            p = np.round(p, 2)
            p[:, -1] = 1.0 - p[:, :-1].sum(axis=1)
            p = np.clip(p, 0.0, 1.0)
            p /= p.sum(axis=1, keepdims=True)
        span = float(rng.choice([0.0, 5.0, 40.0, 150.0]))
        u = t + np.sort(rng.random(n)) * span
        scored = rng.random() > 0.15
        if scored and rng.random() < 0.3:  # predictions, some without a score, labelled in one batch of mixed rows
            bare = rng.random(n) < 0.2
            keys = [f"{step}-{i}" for i in range(n)]
            monitor.predict_many([kk for kk, b in zip(keys, bare, strict=True) if not b], y[~bare].tolist(), t,
                                 y_score=p[~bare])
            monitor.predict_many([kk for kk, b in zip(keys, bare, strict=True) if b], y[bare].tolist(), t)
            monitor.label_many(keys, y.tolist(), u)
            p[bare] = np.nan
        else:
            monitor.update_many(y.tolist(), y.tolist(), u, y_score=p if scored else None)
        times.append(u)
        trues.append(y)
        scores.append(p if scored else np.full((n, k), np.nan))
        t = float(u[-1]) + float(rng.choice([0.0, 3.0, 30.0, 400.0]))
        if step == 20:  # saved and loaded: the open bucket comes back with its cells
            state = monitor.dumps()
            monitor = Monitor.loads(state, clock=lambda: clock[0])
        tt, yy, ss = (np.concatenate(a) for a in (times, trues, scores))
        has = ~np.isnan(ss[:, 0])
        clock[0] = now = float(tt[-1])
        inside = has & (tt >= (np.floor(now / 12.0) - 4) * 12.0)
        report = monitor.report()
        for name, rows in (("timed_60s", inside), ("cumulative", has)):
            tally = report.windows[name].score_tally
            if tally is None:  # (no score yet)
                assert not has.any()
                continue
            assert tally.n_scored == rows.sum(), (step, name)
            got = np.zeros((k, k, BINS), np.int64)
            got[: len(tally.hist)] = tally.hist
            assert np.array_equal(got, recount(yy[rows], ss[rows], k)), (step, name)
            sums = np.zeros((k, k))
            np.add.at(sums, yy[rows], ss[rows])
            assert np.allclose(tally.sums[:, :, 0], sums[: len(tally.sums)], rtol=0, atol=1e-9), (step, name)
