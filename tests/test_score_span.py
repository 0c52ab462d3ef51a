"""A report copies and reads only the score bins the monitor's samples fall in (``metrics.bin_span``, #28's report
cost): the span covers the bin of every scored sample taken (found by bisection of the documented edges), each
window's snapshot equals a per-sample recount over all BINS bins, and the score metrics read from the span are
bit for bit those read from every bin — for scores that drift across the bins, through every window kind, after
a restart, and in a monitor that took no score yet."""

from __future__ import annotations

import bisect

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from streammon import Cumulative, Monitor, Sliding, Timed
from streammon.metrics.bin_span import empty_span, occupied, widen
from streammon.metrics.score_bins import BINS, bin_edges
from streammon.metrics.window_scores import score_values

EDGES = bin_edges().tolist()


def bins_of(scores: np.ndarray) -> np.ndarray:
    """Each score's bin by bisection of the documented edges (the last bin holds 1)."""
    return np.array([[min(bisect.bisect_right(EDGES, s) - 1, BINS - 1) for s in row] for row in scores])


def drifting(rng: np.random.Generator, n: int, k: int, step: int) -> tuple[np.ndarray, np.ndarray]:
    """True classes and (n, k) probabilities whose logits move with ``step``: early batches low, later ones high."""
    true = rng.integers(k, size=n)
    logits = rng.normal(size=(n, k)) + 1.5 * np.eye(k)[true] + (step - 4) * 0.8 * (np.arange(k) == 0)
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return true, p


@pytest.mark.parametrize("k", [2, 4])
def test_the_span_covers_every_sample_and_reading_it_changes_nothing(k: int) -> None:
    """Scores drifting across the bins, batches with unscored samples, a save and load midway: after each read, the
    span holds the bin of every scored sample so far (bisection), every window's histogram equals its slab placed
    in BINS bins with zeros elsewhere (the cumulative one: a recount by bisection) and reads the same five metrics
    from the slab as from the whole histogram, and the cumulative ROC AUC is scikit-learn's on the samples."""
    rng = np.random.default_rng(k)
    labels = [f"c{i}" for i in range(k)]
    m = Monitor([Cumulative(), Sliding(300), Sliding(3000), Timed(50, buckets=5)], classes=labels, positive=
                "c1" if k == 2 else None, detector=None)
    seen_true: list[np.ndarray] = []
    seen_scores: list[np.ndarray] = []
    for step in range(8):
        true, p = drifting(rng, 400, k, step)
        scores = p[:, 1] if k == 2 else p
        names, predicted = [labels[t] for t in true], [labels[i] for i in p.argmax(axis=1)]
        times = step * 10.0 + np.arange(400) * 0.01
        kept = np.ones(400, bool)
        if step % 3 == 1:  # one by one, every third without a score (its bin 0 must not widen the span)
            for i in range(40):
                kept[i] = i % 3 != 0
                m.update(names[i], predicted[i], t=float(times[i]), y_score=scores[i] if kept[i] else None)
            m.update_many(names[40:], predicted[40:], t=times[40:], y_score=scores[40:])
        else:
            m.update_many(names, predicted, t=times, y_score=scores)
        seen_true.append(true[kept])
        seen_scores.append(scores[kept].reshape(int(kept.sum()), -1))
        if step == 4:
            m = Monitor.loads(m.dumps())
        report = m.report()
        all_scores = np.concatenate(seen_scores)
        b = bins_of(all_scores)
        span = report.windows["cumulative"].score_tally.span
        assert span is not None
        assert (span[:, 0] <= b.min(axis=0)).all() and (span[:, 1] > b.max(axis=0)).all()
        y = np.concatenate(seen_true)
        expected = np.zeros((k, b.shape[1], BINS), np.int64)  # the cumulative window: every scored sample
        np.add.at(expected, (y[:, None], np.arange(b.shape[1]), b), 1)
        np.testing.assert_array_equal(report.windows["cumulative"].score_tally.hist, expected)
        for w in report.windows.values():
            t = w.score_tally
            assert t is not None and t.span is not None
            whole = np.zeros((len(t.slab), t.columns, BINS), t.slab.dtype)
            whole[:, :, t.offset:t.offset + t.slab.shape[2]] = t.slab
            np.testing.assert_array_equal(t.hist, whole)
            assert not t.hist.flags.writeable
            lo, hi = occupied(t.hist)[:, 0], occupied(t.hist)[:, 1]
            assert ((lo >= t.span[:, 0]) | (lo == BINS)).all() and (hi <= t.span[:, 1]).all()
            mix = np.full(k, 1 / k)
            slab_values, slab_var = score_values(t.slab, t.sums, t.top, (None, mix), positive=1,
                                                  span=t.span - t.offset)
            full_values, full_var = score_values(t.hist, t.sums, t.top, (None, mix), positive=1)
            np.testing.assert_array_equal(slab_values, full_values)
            assert slab_var == full_var or (np.isnan(slab_var) and np.isnan(full_var))
        if k == 2 and report.windows["cumulative"].score_tally.samples is None:  # past the exact limit: bins
            auc = report.windows["cumulative"].scores["roc_auc"]
            assert auc == pytest.approx(roc_auc_score(y, all_scores[:, 0]), abs=2e-3)


def test_a_monitor_without_scores_yet_has_an_empty_span() -> None:
    """Before any score, and after a batch of unscored samples, the span is empty and a first scored sample makes
    it that sample's bins."""
    span = empty_span(3)
    assert (span[:, 0] == BINS).all() and (span[:, 1] == 0).all()
    widen(span, np.array([[5, 6, 7]], np.int16), np.array([[np.nan] * 3]))
    assert (span[:, 0] == BINS).all() and (span[:, 1] == 0).all()
    p = np.array([[0.2, 0.3, 0.5]])
    widen(span, bins_of(p).astype(np.int16), p)
    np.testing.assert_array_equal(span, np.stack([bins_of(p)[0], bins_of(p)[0] + 1], axis=1))
    m = Monitor([Cumulative()], classes=["a", "b", "c"], detector=None)
    m.update_many(["a", "b"], ["a", "c"])
    assert m.report().windows["cumulative"].score_tally is None
    m.update_many(["a"], ["c"], y_score=p)
    t = m.report().windows["cumulative"].score_tally
    assert t is not None and t.n_scored == 1
    assert t.hist[0, np.arange(3), bins_of(p)[0]].tolist() == [1, 1, 1] and int(t.hist.sum()) == 3


def test_a_cumulative_window_beside_a_timed_one_reads_every_sample_as_buckets_open_close_and_empty() -> None:
    """A cumulative window takes its histogram through a timed window's open bucket: read while every sample is in
    the open bucket, with samples in closed buckets too, and after a batch without scores moved the timed window
    past them (its open bucket empty), its histogram is the recount by bisection of every scored sample."""
    labels = ["a", "b", "c"]
    m = Monitor([Cumulative(), Timed(10, buckets=2)], classes=labels, detector=None)
    rng = np.random.default_rng(5)
    seen_true: list[np.ndarray] = []
    seen_scores: list[np.ndarray] = []

    def check() -> None:
        y, s = np.concatenate(seen_true), np.concatenate(seen_scores)
        expected = np.zeros((3, 3, BINS), np.int64)
        np.add.at(expected, (y[:, None], np.arange(3), bins_of(s)), 1)
        tally = m.report().windows["cumulative"].score_tally
        assert tally is not None
        np.testing.assert_array_equal(tally.hist, expected)

    for start in (0.0, 1.0, 20.0, 22.0, 60.0):
        true = rng.integers(3, size=50)
        p = rng.dirichlet(np.ones(3) * 0.5, size=50)
        m.update_many([labels[t] for t in true], [labels[i] for i in p.argmax(axis=1)],
                      t=start + np.arange(50) * 0.01, y_score=p)
        seen_true.append(true)
        seen_scores.append(p)
        check()
        if start in (1.0, 22.0):  # no score: the timed window's buckets move on, its open bucket holds none
            m.update_many(["a", "b"], ["a", "a"], t=[start + 16.0, start + 16.5])
            check()
