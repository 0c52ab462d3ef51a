"""Per-window score tallies (#28): every window kind holds exactly the scores of the samples it holds, recounted
sample by sample in plain Python (bins found by bisection of the documented edges), eviction and expiry included;
the tallies merge and subtract as a group, and survive save/load."""

from __future__ import annotations

import bisect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streammon import Cumulative, Monitor, Sliding, Timed
from streammon.counting.score_tally import ScoreTally, sample_cells
from streammon.metrics.score_bins import BINS, CLIP, ECE_BINS, bin_edges, tally

EDGES = bin_edges().tolist()


def recount(samples: list[tuple[int, tuple[float, ...]]], k: int, positive: int,
            columns: int | None = None) -> tuple[np.ndarray, ...]:
    """The tally of ``(true, score row)`` samples, one at a time, from the documented layout alone (``columns``:
    1 for k = 2, else k, unless given)."""
    columns = columns or (1 if k == 2 else k)
    hist = np.zeros((k, columns, BINS), np.int64)
    sums = np.zeros((k, columns, 4))
    top = np.zeros((k, ECE_BINS, 3))
    for true, row in samples:
        for c, s in enumerate(row):
            b = min(bisect.bisect_right(EDGES, s) - 1, BINS - 1)
            hist[true, c, b] += 1
            clipped = min(max(s, CLIP), 1 - CLIP)
            sums[true, c] += (s, s * s, math.log(clipped), math.log(1 - clipped))
        if columns == 1:
            probs = [1 - row[0], row[0]] if positive == 1 else [row[0], 1 - row[0]]
            chosen = positive if row[0] > 0.5 else 1 - positive
            confidence = max(row[0], 1 - row[0])
        else:
            probs = list(row)
            confidence = max(probs)
            chosen = probs.index(confidence)
        e = min(int(confidence * ECE_BINS), ECE_BINS - 1)
        top[true, e] += (1, chosen == true, confidence)
    return hist, sums, top


def assert_tally(got: ScoreTally | None, samples: list[tuple[int, tuple[float, ...]]], k: int, positive: int,
                 columns: int | None = None) -> None:
    assert got is not None
    hist, sums, top = recount(samples, k, positive, columns)
    assert got.n_scored == len(samples)
    np.testing.assert_array_equal(got.class_counts, hist[:, 0, :].sum(axis=1))  # read from the confidence bins
    np.testing.assert_array_equal(got.hist, hist)
    np.testing.assert_allclose(got.sums, sums, rtol=1e-9, atol=1e-7)
    np.testing.assert_allclose(got.top, top, rtol=1e-9, atol=1e-9)


def stream(rng: np.random.Generator, n: int, k: int, scored_share: float) -> list[tuple[int, int, object]]:
    """``(true, pred, score or None)`` samples: a binary score for k = 2, K probabilities otherwise."""
    out: list[tuple[int, int, object]] = []
    for _ in range(n):
        true = int(rng.integers(k))
        if rng.random() >= scored_share:
            out.append((true, int(rng.integers(k)), None))
            continue
        if k == 2:
            # scores spread over the logit bins, the extremes 0 and 1 included now and then
            s = float(rng.choice([0.0, 1.0])) if rng.random() < 0.02 else float(1 / (1 + math.exp(-rng.normal(0, 6))))
            out.append((true, int(s > 0.5), s))
        else:
            p = rng.dirichlet(np.ones(k) * 0.3)
            out.append((true, int(np.argmax(p)), tuple(float(x) for x in p)))
    return out


def test_sample_cells_is_the_dense_tally() -> None:
    """The sparse batch tally the windows keep has exactly the histogram, sums and confidence bins of
    ``score_bins.tally``, binary (both positive classes) and with K columns."""
    rng = np.random.default_rng(1)
    for k, columns in ((2, 1), (5, 5)):
        true = rng.integers(k, size=500)
        scores = rng.dirichlet(np.ones(k), size=500) if columns > 1 else rng.random((500, 1))
        for positive in (0, 1):
            cells, counts, sums, top = sample_cells(true, scores, k, positive=positive)
            hist, sums_ref, top_ref = tally(true, scores if columns > 1 else scores[:, 0], k, positive=positive)
            flat = np.zeros(hist.size, np.int64)
            flat[cells] = counts
            np.testing.assert_array_equal(flat.reshape(hist.shape), hist)
            np.testing.assert_allclose(sums, sums_ref)
            np.testing.assert_allclose(top, top_ref)


@pytest.mark.parametrize("k", [2, 4])
def test_every_window_kind_holds_the_scores_of_its_samples(k: int) -> None:
    """Batches and single samples, scored and not, at increasing times: after each step the cumulative, sliding and
    timed windows' tallies equal a per-sample recount of the scored samples each window holds."""
    rng = np.random.default_rng(k)
    labels = [f"c{i}" for i in range(k)]
    ref = {label: 10 * (i + 1) for i, label in enumerate(labels)}  # binary positive: the minority, "c0"
    positive = 0
    m = Monitor([Cumulative(), Sliding(7), Sliding(60), Timed(10, buckets=5)], reference=ref, detector=None)
    held: list[tuple[float, int, tuple[float, ...] | None]] = []
    t = 0.0
    for step in range(40):
        size = int(rng.choice([1, 1, 3, 9, 25, 80]))
        data = stream(rng, size, k, scored_share=0.3 if step % 5 == 0 else 0.8)
        times = (t + np.sort(rng.random(size)) * 3).tolist()
        t = times[-1]
        rows = [None if s is None else ((s,) if k == 2 else s) for _, _, s in data]
        if size == 1 or step % 3 == 0:  # one sample at a time
            for (true, pred, s), when in zip(data, times, strict=True):
                m.update(labels[true], labels[pred], t=when, y_score=s)
        elif all(s is not None for _, _, s in data):
            m.update_many([labels[a] for a, _, _ in data], [labels[b] for _, b, _ in data], t=times,
                          y_score=np.array([r[0] for r in rows]) if k == 2 else np.array(rows))
        else:  # a batch without scores
            data = [(a, b, None) for a, b, _ in data]
            rows = [None] * size
            m.update_many([labels[a] for a, _, _ in data], [labels[b] for _, b, _ in data], t=times)
        held += [(when, true, row) for when, (true, _, _), row in zip(times, data, rows, strict=True)]
        if step % 4 != 3:
            continue
        report = m.report()
        def scored(items: list[tuple[float, int, tuple[float, ...] | None]]) -> list[tuple[int, tuple[float, ...]]]:
            return [(true, row) for _, true, row in items if row is not None]
        if not scored(held):
            continue
        assert_tally(report.windows["cumulative"].score_tally, scored(held), k, positive)
        assert_tally(report.windows["sliding_7"].score_tally, scored(held[-7:]), k, positive)
        assert_tally(report.windows["sliding_60"].score_tally, scored(held[-60:]), k, positive)
        newest = math.floor(t / 2.0)  # buckets of 2 s: the window holds the 5 newest bucket ids
        assert_tally(report.windows["timed_10s"].score_tally,
                     scored([h for h in held if math.floor(h[0] / 2.0) > newest - 5]), k, positive)
        assert report.windows["sliding_60"].n_scored == len(scored(held[-60:]))


def test_tallies_form_a_group() -> None:
    """Merging is addition and eviction subtraction: (a + b) − b is a, the empty tally is the identity, and
    subtracting what was never counted raises."""
    rng = np.random.default_rng(3)
    a = ScoreTally.of(rng.integers(3, size=50), rng.dirichlet(np.ones(3), size=50), 3, positive=None)
    b = ScoreTally.of(rng.integers(3, size=20), rng.dirichlet(np.ones(3), size=20), 3, positive=None)
    empty = ScoreTally.of(np.zeros(0, np.intp), np.zeros((0, 3)), 3, positive=None)
    back = (a + b) - b
    np.testing.assert_array_equal(back.hist, a.hist)
    np.testing.assert_allclose(back.sums, a.sums, atol=1e-12)
    np.testing.assert_array_equal((a + empty).hist, a.hist)
    np.testing.assert_array_equal((a + b).hist, (b + a).hist)
    with pytest.raises(ValueError, match="never counted"):
        _ = b - a


def test_save_load_keeps_the_tallies_and_their_eviction() -> None:
    """A monitor restored from its state file reports the same tallies, and both evict the same scores afterwards."""
    m = Monitor([Cumulative(), Sliding(30), Timed(20, buckets=4)], classes=["a", "b", "c"], detector=None)
    labels = ["a", "b", "c"]
    def feed(target: Monitor, start: float) -> None:
        r = np.random.default_rng(int(start))
        p = r.dirichlet(np.ones(3), size=25)
        target.update_many([labels[i] for i in r.integers(3, size=25)], [labels[i] for i in p.argmax(1)],
                           t=start + np.arange(25) * 0.5, y_score=p)
    for i in range(3):
        feed(m, 20.0 * i)
    m.update("a", "b", t=61.0)  # one sample without a score
    text = m.dumps()
    restored = Monitor.loads(text)
    assert restored.dumps() == text
    for target in (m, restored):
        feed(target, 100.0)
    mine, theirs = m.report(), restored.report()
    for name in mine.windows:
        a, b = mine.windows[name].score_tally, theirs.windows[name].score_tally
        assert a is not None and b is not None
        np.testing.assert_array_equal(a.hist, b.hist)
        np.testing.assert_allclose(a.sums, b.sums)
    assert mine.windows["sliding_30"].n_scored == 29  # 4 of the third batch, the unscored sample, 25 new


def test_an_old_state_file_without_scores_loads() -> None:
    """A state written before scores existed (no ``scores`` entry) loads, with no tally until the first score."""
    from streammon import state

    m = Monitor([Sliding(5)], reference={"x": 1, "y": 3})
    m.update_many(["x", "y"], ["x", "x"])
    body = state.loads(m.dumps())
    body.pop("scores")
    old = Monitor._from_body(body, clock=lambda: 0.0)
    assert old.report().windows["sliding_5"].score_tally is None
    old.update("y", "y", y_score=0.2)
    assert old.report().windows["sliding_5"].n_scored == 1


def test_the_compiled_pass_is_the_numpy_tally() -> None:
    """The compiled loop's bins are ``score_bins``' at and around every edge, 0 and 1 included, and its histogram,
    sums and confidence bins are those of ``score_bins.tally``, binary (both positive classes) and with K columns."""
    from streammon.metrics.score_bins import score_bins
    from streammon.metrics.score_kernel import accumulate, prepared

    edges = bin_edges()
    probes = np.concatenate([edges, np.nextafter(edges, 0.0), np.nextafter(edges, 1.0), [0.0, 1.0, 1e-300, 0.5]])
    spread = 1.0 / (1.0 + np.exp(-np.random.default_rng(4).uniform(-40.0, 40.0, 20_000)))  # tails and middle
    probes = np.clip(np.concatenate([probes, spread, 1.0 - np.arange(1, 300) * 2.0**-53]), 0.0, 1.0)
    bins, _, _ = prepared(probes[:, None])
    np.testing.assert_array_equal(bins[:, 0], score_bins(probes))
    rng = np.random.default_rng(5)
    for k, columns in ((2, 1), (6, 6)):
        true = rng.integers(k, size=2_000)
        scores = rng.dirichlet(np.ones(k) * 0.2, size=2_000) if columns > 1 else rng.beta(0.3, 0.3, (2_000, 1))
        for positive in (0, 1):
            hist = np.zeros((k, columns, BINS), np.int64)
            sums, top = np.zeros((k, columns, 4)), np.zeros((k, ECE_BINS, 3))
            accumulate(true, scores, *prepared(scores), positive, 1, hist, True, sums, top)
            ref = tally(true, scores if columns > 1 else scores[:, 0], k, positive=positive)
            np.testing.assert_array_equal(hist, ref[0])
            np.testing.assert_allclose(sums, ref[1], rtol=1e-10)
            np.testing.assert_allclose(top, ref[2], rtol=1e-10)


def test_the_one_pass_batch_tally_is_the_numpy_tally() -> None:
    """``prepared_tally`` (bins, sums, confidence bins and optionally the histogram in one pass, a chunk of rows at
    a time) and ``add_hist`` give ``score_bins.tally``'s histogram, sums and confidence bins, samples without a score
    (NaN rows) left out, and the bins ``accumulate`` reads, binary (both positive classes) and with K columns; so
    does ``accumulate_scores`` (its logarithms made a chunk at a time), adding and then subtracting the batch."""
    from streammon.metrics import score_kernel
    from streammon.metrics.score_kernel import accumulate_scores, add_hist, prepared, prepared_tally

    rng = np.random.default_rng(11)
    for k, columns in ((2, 1), (7, 7)):
        n = 3_000
        true = rng.integers(k, size=n)
        scores = rng.dirichlet(np.ones(k) * 0.3, size=n) if columns > 1 else rng.beta(0.2, 0.2, (n, 1))
        scores[:5] = np.eye(columns)[0] if columns > 1 else [[0.0], [1.0], [0.5], [1e-300], [1 - 2**-53]]
        unscored = rng.random(n) < 0.1
        given = scores.copy()
        given[unscored] = np.nan
        for positive in (0, 1):
            bins, sums, top = prepared_tally(true, given, positive, k)
            hist = np.zeros((k, columns, BINS), np.int64)
            add_hist(true, given, bins, hist)
            kept = ~unscored
            ref = tally(true[kept], scores[kept] if columns > 1 else scores[kept, 0], k, positive=positive)
            np.testing.assert_array_equal(hist, ref[0])
            np.testing.assert_allclose(sums, ref[1], rtol=1e-10)
            np.testing.assert_allclose(top, ref[2], rtol=1e-10)
            fused = np.zeros((k, columns, BINS), np.int64)  # the histogram made in the same pass
            prepared_tally(true, given, positive, k, hist=fused)
            np.testing.assert_array_equal(fused, ref[0])
            np.testing.assert_array_equal(bins, prepared(given)[0])
            counts = [np.zeros((k, columns, BINS), np.int64), np.zeros((k, columns, 4)), np.zeros((k, ECE_BINS, 3))]
            accumulate_scores(true, given, bins, positive, 1, *counts)
            np.testing.assert_array_equal(counts[0], ref[0])
            np.testing.assert_allclose(counts[1], ref[1], rtol=1e-10)
            np.testing.assert_allclose(counts[2], ref[2], rtol=1e-10)
            accumulate_scores(true, given, bins, positive, -1, *counts)  # subtracted: counts 0, sums 0 but rounding
            assert not counts[0].any() and not counts[2][:, :, :2].any()
            np.testing.assert_allclose(counts[1], 0.0, atol=1e-9)
    # chunks smaller than the batch (many chunk boundaries, a short last chunk): the same tally
    chunk = score_kernel.CHUNK_SCORES
    try:
        score_kernel.CHUNK_SCORES = 7 * 61  # 61 rows of 7 columns a chunk
        bins, sums, top = prepared_tally(true, given, 1, k)
        ref = tally(true[kept], scores[kept], k, positive=1)
        np.testing.assert_array_equal(bins, prepared(given)[0])
        np.testing.assert_allclose(sums, ref[1], rtol=1e-10)
        np.testing.assert_allclose(top, ref[2], rtol=1e-10)
        counts = [np.zeros((k, columns, BINS), np.int64), np.zeros((k, columns, 4)), np.zeros((k, ECE_BINS, 3))]
        accumulate_scores(true, given, bins, 1, 1, *counts)
        np.testing.assert_array_equal(counts[0], ref[0])
        np.testing.assert_allclose(counts[1], ref[1], rtol=1e-10)
    finally:
        score_kernel.CHUNK_SCORES = chunk


def test_the_compiled_score_check_is_the_numpy_check() -> None:
    """``scores_ok`` is true exactly when every value is in [0, 1] (NaN and infinities not) and, with a tolerance,
    every row sums to 1 within it — the conditions the numpy checks of ``score_input`` raise for."""
    from streammon.metrics.score_kernel import scores_ok

    rng = np.random.default_rng(12)
    for _ in range(300):
        rows, columns = int(rng.integers(1, 6)), int(rng.integers(1, 5))
        a = rng.dirichlet(np.ones(columns), size=rows)
        for _ in range(int(rng.integers(0, 3))):
            a[rng.integers(rows), rng.integers(columns)] = rng.choice([np.nan, np.inf, -np.inf, -1e-9, 1 + 1e-9,
                                                                       0.0, 1.0, a[0, 0] + 2e-4])
        in_range = bool(((a >= 0) & (a <= 1)).all())
        with np.errstate(invalid="ignore"):  # inf - inf in a row sum
            sums_one = bool((np.abs(a.sum(axis=1) - 1.0) <= 1e-4).all())
        assert scores_ok(a, -1.0) == in_range
        assert scores_ok(a, 1e-4) == (in_range and sums_one)


def test_the_state_memory_bound_counts_the_score_histograms() -> None:
    """``Monitor.load`` bounds the memory a file makes it allocate: the score histograms (capacity × columns ×
    2,048 int64 a window, two for a timed window) count, with the same number of bins the tallies use."""
    from streammon import state
    from streammon.state_schema.memory import SCORE_BINS, matrix_bytes

    assert SCORE_BINS == BINS
    m = Monitor([Cumulative(), Sliding(10)], classes=["a", "b", "c"])
    without = matrix_bytes(state.loads(m.dumps()))
    m.update_many(["a"], ["b"], y_score=[[0.2, 0.5, 0.3]])
    assert matrix_bytes(state.loads(m.dumps())) - without == 8 * 4 * 3 * BINS * 2  # capacity 4, 3 columns, 2 windows
    plain, timed = (Monitor([Cumulative(), Timed(60)], classes=["a", "b", "c"], clock=lambda: 5.0) for _ in "ab")
    plain.update_many(["a"], ["b"])
    timed.update_many(["a"], ["b"], y_score=[[0.2, 0.5, 0.3]])
    scored_bytes = matrix_bytes(state.loads(timed.dumps())) - matrix_bytes(state.loads(plain.dumps()))
    assert scored_bytes == 8 * 4 * 3 * BINS * 3  # the timed window's open bucket too


@pytest.mark.parametrize("tamper", [
    lambda b: b["scores"].update(columns=7),
    lambda b: b["scores"].update(positive=5),
    lambda b: b["scores"]["windows"][1].update(scores=[[1.5]] * len(b["scores"]["windows"][1]["scores"])),
    lambda b: b["scores"]["windows"][0]["tally"].update(counts=[c + 1 for c in b["scores"]["windows"][0]["tally"]["counts"]]),  # noqa: E501
    lambda b: b["scores"]["windows"][1]["tally"].update(cells=b["scores"]["windows"][1]["tally"]["cells"][::-1]),
    lambda b: b["scores"]["windows"][2]["buckets"][0].update(id="x"),
    lambda b: b["scores"]["windows"][2]["tally"]["sums"][0][0].__setitem__(0, float("nan")),
    lambda b: b.update(prediction_scores={"records": [[0, 0.5]], "tallies": None}),
    # the cumulative tally's newest score one bin down: its bin holds fewer than the timed window's newest bucket
    lambda b: b["scores"]["windows"][0]["tally"]["cells"].__setitem__(-1, b["scores"]["windows"][0]["tally"]["cells"][-1] - 1),  # noqa: E501
])
def test_a_tampered_score_state_is_refused(tamper: object) -> None:
    """Score entries that do not fit the monitor or contradict each other fail ``load`` with ``StateError``."""
    from streammon import state

    m = Monitor([Cumulative(), Sliding(10), Timed(60)], reference={"x": 3, "y": 1})
    m.update_many(["x", "y", "y"], ["x", "x", "y"], t=[1.0, 2.0, 3.0], y_score=[0.1, 0.4, 0.9])
    body = state.loads(m.dumps())
    assert callable(tamper)
    tamper(body)
    with pytest.raises(state.StateError):
        Monitor._from_body(body, clock=lambda: 0.0)


def test_a_batch_longer_than_a_large_sliding_window_replaces_its_tally() -> None:
    """A batch at least as long as a sliding window (one large enough that clearing beats subtracting) leaves the
    tally of its last ``size`` samples, and later samples evict from there as usual."""
    rng = np.random.default_rng(8)
    m = Monitor([Sliding(600)], reference={"x": 3, "y": 1})
    true = rng.integers(2, size=1_000)
    scores = rng.random(1_000)
    labels = np.array(["x", "y"])
    m.update_many(labels[true[:700]], labels[true[:700]], y_score=scores[:700])
    assert_tally(m.report().windows["sliding_600"].score_tally,
                 [(int(t), (float(s),)) for t, s in zip(true[100:700], scores[100:700], strict=True)], 2, 1)
    m.update_many(labels[true[700:]], labels[true[700:]], y_score=scores[700:])
    assert_tally(m.report().windows["sliding_600"].score_tally,
                 [(int(t), (float(s),)) for t, s in zip(true[400:], scores[400:], strict=True)], 2, 1)


def test_a_stray_class_grows_every_score_window() -> None:
    """In an open binary monitor, a stray label met after the first scores becomes a row of every tally (timed
    buckets and sliding rings included), and the tallies still recount exactly."""
    m = Monitor([Cumulative(), Sliding(6), Timed(30, buckets=3)], reference={"x": 3, "y": 1})
    m.update_many(["x", "y", "x"], ["x", "y", "y"], t=[1.0, 2.0, 3.0], y_score=[0.1, 0.7, 0.6])
    m.update_many(["z", "x", "z"], ["x", "x", "y"], t=[4.0, 5.0, 6.0], y_score=[0.3, 0.2, 0.8])
    m.update("z", "z", t=7.0, y_score=0.4)  # the stray class predicted too: a class of its own
    samples = [(0, (0.1,)), (1, (0.7,)), (0, (0.6,)), (2, (0.3,)), (0, (0.2,)), (2, (0.8,)), (2, (0.4,))]
    r = m.report()
    assert m.labels == ("x", "y", "z")
    assert_tally(r.windows["cumulative"].score_tally, samples, 3, 1, columns=1)
    assert_tally(r.windows["sliding_6"].score_tally, samples[1:], 3, 1, columns=1)
    assert_tally(r.windows["timed_30s"].score_tally, samples, 3, 1, columns=1)
    m.update("x", "x", t=45.0, y_score=0.5)  # the buckets of t < 20 leave the timed window
    assert_tally(m.report().windows["timed_30s"].score_tally, [(0, (0.5,))], 3, 1, columns=1)


def _tallies(seed: int, k: int) -> list[ScoreTally]:
    rng = np.random.default_rng(seed)
    out = []
    for size in rng.integers(0, 40, size=3):
        true = rng.integers(k, size=int(size))
        rows = rng.dirichlet(np.ones(k) * 0.5, size=int(size)) if k > 2 else rng.random((int(size), 1))
        out.append(ScoreTally.of(true, rows, k, positive=None if k > 2 else 1))
    return out


@given(seed=st.integers(0, 2**32 - 1), k=st.sampled_from([2, 3, 5]))
@settings(max_examples=40, deadline=None)
def test_score_tallies_obey_the_group_laws(seed: int, k: int) -> None:
    """Merging commutes and associates, the empty tally is the identity and evicting undoes merging — histograms
    exactly, sums to rounding."""
    a, b, c = _tallies(seed, k)
    empty = ScoreTally.of(np.zeros(0, np.intp), np.zeros((0, a.columns)), k, positive=a.positive)
    for left, right in (((a + b) + c, a + (b + c)), (a + b, b + a), (a + empty, a), ((a + b) - b, a)):
        np.testing.assert_array_equal(left.hist, right.hist)
        np.testing.assert_allclose(left.sums, right.sums, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(left.top, right.top, rtol=1e-12, atol=1e-12)


@given(st.lists(st.tuples(st.integers(0, 25), st.booleans(), st.sampled_from(["none", "read", "reload"])),
                min_size=1, max_size=25), st.integers(1, 8))
@settings(max_examples=60, deadline=None)
def test_a_sliding_score_window_caught_up_at_any_read_holds_its_last_samples(
        steps: list[tuple[int, bool, str]], size: int) -> None:
    """Batches of any size (none, below, at and beyond the window, twice beyond), scored or not, read or saved and
    loaded into a fresh window between any two: the lazily caught-up tally is the recount of the last ``size``
    samples' scores, and the saved state is the same after a reload."""
    from streammon.counting.windows.scored_batch import ScoredBatch
    from streammon.counting.windows.scored_sliding import SlidingScores

    rng = np.random.default_rng(size)
    window = SlidingScores(size, rows=3, columns=3, positive=0)
    held: list[tuple[int, tuple[float, ...] | None]] = []
    for m, scored, then in steps:
        true = rng.integers(3, size=m)
        scores = rng.dirichlet(np.ones(3) * 0.5, size=m) if scored else np.full((m, 3), np.nan)
        window.ingest(ScoredBatch(true, scores, None, positive=0))
        held += [(int(a), tuple(row) if scored else None) for a, row in zip(true, scores.tolist(), strict=True)]
        if then == "reload":
            saved = window.state()
            window = SlidingScores(size, rows=3, columns=3, positive=0)
            window.restore(saved)
            assert window.state() == saved
        if then != "none" and any(row is not None for _, row in held[-size:]):
            assert_tally(window.snapshot(None, 3, None), [(a, r) for a, r in held[-size:] if r is not None], 3, 0)
    last = [(a, r) for a, r in held[-size:] if r is not None]
    assert window.snapshot(None, 3, None).n_scored == len(last)


@given(st.lists(st.tuples(st.integers(0, 400), st.sampled_from(["all", "some", "none"]),
                          st.sampled_from(["none", "read", "read", "reload"])), min_size=1, max_size=30),
       st.integers(60, 250))
@settings(max_examples=40, deadline=None)
def test_a_sliding_window_that_counts_whole_batches_by_their_sums_holds_its_last_samples(
        steps: list[tuple[int, str, str]], size: int) -> None:
    """Batches large enough that a catch-up adds and subtracts them by their kept sums and bins (57 samples and up
    at 3 classes), smaller ones counted one by one, batches beyond the window, scored wholly, partly or not at all,
    read or reloaded between any two: the tally is the recount of the last ``size`` samples' scores, its histogram
    and confidence counts exactly, its sums to rounding."""
    from streammon.counting.windows.scored_batch import ScoredBatch
    from streammon.counting.windows.scored_sliding import SlidingScores

    rng = np.random.default_rng(size)
    window = SlidingScores(size, rows=3, columns=3, positive=0)
    held: list[tuple[int, tuple[float, ...] | None]] = []
    for m, scored, then in steps:
        true = rng.integers(3, size=m)
        scores = rng.dirichlet(np.ones(3) * 0.5, size=m)
        if scored != "all":
            scores[rng.random(m) < (0.3 if scored == "some" else 2.0)] = np.nan
        window.ingest(ScoredBatch(true, scores, None, positive=0, rows=3))
        held += [(int(a), None if math.isnan(row[0]) else tuple(row))
                 for a, row in zip(true, scores.tolist(), strict=True)]
        if then == "reload":
            saved = window.state()
            window = SlidingScores(size, rows=3, columns=3, positive=0)
            window.restore(saved)
        if then != "none" and any(row is not None for _, row in held[-size:]):
            assert_tally(window.snapshot(None, 3, None), [(a, r) for a, r in held[-size:] if r is not None], 3, 0)
    last = [(a, r) for a, r in held[-size:] if r is not None]
    assert window.snapshot(None, 3, None).n_scored == len(last)


def test_a_read_with_nothing_new_reuses_each_snapshot_and_any_change_makes_a_fresh_one() -> None:
    """Read twice with nothing new, every window returns the same read-only snapshot (its histogram is not copied
    again); after a scored batch, an unscored one, or — timed — a clock past the window's oldest bucket, each
    window's tally is the recount of the scored samples it holds."""
    now = [0.0]
    m = Monitor([Cumulative(), Sliding(5), Timed(10, buckets=5)], reference={0: 3, 1: 1}, detector=None,
                clock=lambda: now[0])
    held: list[tuple[float, int, tuple[float, ...] | None]] = []
    rng = np.random.default_rng(7)

    def check() -> dict[str, ScoreTally]:
        first, again = m._tally.view(now[0]).scores, m._tally.view(now[0]).scores  # what a report copies
        assert first is not None and again is not None
        assert all(a is b for a, b in zip(first, again, strict=True))
        tallies = dict(zip(m.window_names, first, strict=True))
        assert all(m.report().windows[name].score_tally is not None for name in tallies)
        scored = [(true, row) for _, true, row in held if row is not None]
        assert_tally(tallies["cumulative"], scored, 2, 1)
        assert_tally(tallies["sliding_5"], [(t, r) for _, t, r in held[-5:] if r is not None], 2, 1)
        recent = [(t, r) for when, t, r in held if math.floor(when / 2.0) > math.floor(now[0] / 2.0) - 5]
        assert_tally(tallies["timed_10s"], [(t, r) for t, r in recent if r is not None], 2, 1)
        return tallies

    for step in range(12):
        now[0] += 1.5
        true = rng.integers(2, size=3)
        scores = rng.random(3)
        if step % 3 == 2:  # no scores: only the sliding window's and the timed window's holdings change
            m.update_many(true.tolist(), true.tolist())
            held += [(now[0], int(t), None) for t in true]
        else:
            m.update_many(true.tolist(), true.tolist(), y_score=scores)
            held += [(now[0], int(t), (float(s),)) for t, s in zip(true, scores, strict=True)]
        before = check()
        after = check()
        assert all(after[name] is before[name] for name in before)
    now[0] += 6.0  # two buckets on, nothing new: the timed window drops its oldest samples
    expired = check()
    assert expired["cumulative"] is before["cumulative"] and expired["timed_10s"] is not before["timed_10s"]


def test_narrow_histogram_counts_never_wrap() -> None:
    """A sliding window keeps int16 counts up to 32,767 samples (its bins cannot hold more) and a snapshot is in
    the narrowest type that holds its fullest row's samples (a bin counts one row's): 40,000 equal scores, half
    of each class, read 20,000 per class in the cumulative window's bin (int16) and 32,767 in the sliding one's;
    36,000 of one class read 36,000 (int32) — the counts a plain recount gives, never wrapped."""
    from streammon.counting.score_tally import count_type

    m = Monitor([Cumulative(), Sliding(32_767)], reference={"x": 1, "y": 1})
    n = 40_000
    m.update_many(["x", "y"] * (n // 2), ["x", "y"] * (n // 2), y_score=np.full(n, 0.75))
    r = m.report()
    bin_of = bisect.bisect_right(EDGES, 0.75) - 1
    cumulative, sliding = r.windows["cumulative"].score_tally, r.windows["sliding_32767"].score_tally
    assert cumulative is not None and sliding is not None
    assert cumulative.hist.dtype == np.int16 and sliding.hist.dtype == np.int16
    assert cumulative.hist[:, 0, bin_of].tolist() == [n // 2, n // 2]
    assert sliding.hist[:, 0, bin_of].tolist() == [16_383, 16_384]  # the last 32,767 alternate, ending on y
    assert int(sliding.hist.sum()) == 32_767 and cumulative.n_scored == n
    lopsided = Monitor([Cumulative()], reference={"x": 1, "y": 1})
    lopsided.update_many(["x"] * 36_000 + ["y"] * 4_000, ["x"] * n, y_score=np.full(n, 0.75))
    tally = lopsided.report().windows["cumulative"].score_tally
    assert tally is not None and tally.hist.dtype == np.int32
    assert tally.hist[:, 0, bin_of].tolist() == [36_000, 4_000] and int(tally.hist.sum()) == n
    assert [count_type(x).__name__ for x in (32_767, 32_768, 2**31 - 1, 2**31)] == ["int16", "int32", "int32",
                                                                                    "int64"]


def test_a_saved_sliding_bin_beyond_its_count_type_is_refused() -> None:
    """A state file whose sliding-window bin holds more than the window's count type can (more than the window
    holds) fails ``load`` with a message naming the range, instead of wrapping."""
    from streammon import state

    m = Monitor([Sliding(10)], reference={"x": 3, "y": 1})
    m.update_many(["x", "y"], ["x", "y"], y_score=[0.1, 0.9])
    body = state.loads(m.dumps())
    body["scores"]["windows"][0]["tally"]["counts"][0] = 40_000
    with pytest.raises(state.StateError, match=r"counts in \[1, 32767\]"):
        Monitor._from_body(body, clock=lambda: 0.0)


def test_a_sliding_window_that_mostly_changed_between_reads_is_counted_afresh_exactly() -> None:
    """Read after batches of three quarters of a (binary, so small-histogram) sliding window — counted afresh,
    not by subtracting and adding — and after batches of a tenth (counted by subtracting and adding), the tally
    is the recount of the window's last samples each time."""
    rng = np.random.default_rng(11)
    labels = np.array(["x", "y"])
    for batch in (150, 20):
        m = Monitor([Sliding(200)], reference={"x": 3, "y": 1})
        true, scores = rng.integers(2, size=1_000), rng.random(1_000)
        for start in range(0, 1_000, batch):
            end = min(start + batch, 1_000)
            m.update_many(labels[true[start:end]], labels[true[start:end]], y_score=scores[start:end])
            last = slice(max(0, end - 200), end)
            assert_tally(m.report().windows["sliding_200"].score_tally,
                         [(int(t), (float(s),)) for t, s in zip(true[last], scores[last], strict=True)], 2, 1)


def indexed(items: list[tuple[float, str, tuple[float, ...] | None]],
            order: tuple[object, ...]) -> list[tuple[int, tuple[float, ...]]]:
    """The scored ``(time, label, row)`` items as ``(class index, row)`` in a monitor's class ``order``."""
    return [(order.index(label), row) for _, label, row in items if row is not None]


def test_a_cumulative_window_beside_a_timed_one_holds_every_scored_sample() -> None:
    """The cumulative window's histogram comes through the timed window's open bucket (one bin increment a score):
    it still holds every scored sample — through buckets closing and expiring (at a batch, and at a read after a
    quiet spell of the clock), a batch whose first samples are too old for the timed window, new classes growing
    the windows, samples without a score, and a save and load in the middle of a bucket — recounted sample by
    sample; the timed window holds its own samples only."""
    rng = np.random.default_rng(28)
    labels = ["c0", "c1", "c2", "s3", "s4", "s5"]  # the last three: stray classes met later (rows, no score column)
    now = [0.0]
    timed_by_time = Monitor([Cumulative(), Timed(10, buckets=5), Sliding(15)], classes=labels[:3], detector=None)
    by_clock = Monitor([Timed(10, buckets=5), Cumulative()], classes=labels[:3], detector=None,
                       clock=lambda: now[0])
    held: list[tuple[float, str, tuple[float, ...] | None]] = []
    clocked: list[tuple[float, str, tuple[float, ...] | None]] = []
    t = 0.0
    for step in range(36):
        k_now = 3 if step < 12 else (5 if step < 24 else 6)
        size = int(rng.choice([1, 4, 30]))
        true = rng.integers(k_now, size=size)
        rows = rng.dirichlet(np.ones(3) * 0.5, size=size)
        scored = step % 7 != 3
        gap = 60.0 if step % 9 == 8 else float(rng.choice([0.3, 4.0]))
        # every fifth batch spans 30 s: its first samples are older than the timed window
        times = t + gap + (np.linspace(0.0, 30.0, size) if step % 5 == 4 else np.sort(rng.random(size)))
        t = float(times[-1])
        names = [labels[i] for i in true]
        preds = [labels[i] for i in rows.argmax(axis=1)]
        if size == 1:
            timed_by_time.update(names[0], preds[0], t=t, y_score=rows[0].tolist() if scored else None)
        else:
            timed_by_time.update_many(names, preds, t=times, y_score=rows if scored else None)
        now[0] = t
        by_clock.update_many(names, preds, y_score=rows if scored else None)
        for i in range(size):
            score = tuple(rows[i].tolist()) if scored else None
            held.append((float(times[i]), names[i], score))
            clocked.append((t, names[i], score))
        if step % 6 == 5:  # a save and load in the middle of a bucket: the restored monitor goes on
            text = timed_by_time.dumps()
            timed_by_time = Monitor.loads(text)
            assert timed_by_time.dumps() == text
        if step % 3 != 2:
            continue
        k, order = len(timed_by_time.labels), timed_by_time.labels  # strays take indices as they come
        newest = math.floor(t / 2.0)  # buckets of 2 s: the window holds the 5 newest bucket ids
        report = timed_by_time.report()
        assert_tally(report.windows["cumulative"].score_tally, indexed(held, order), k, 0, columns=3)
        assert_tally(report.windows["timed_10s"].score_tally,
                     indexed([h for h in held if math.floor(h[0] / 2.0) > newest - 5], order), k, 0, columns=3)
        assert_tally(report.windows["sliding_15"].score_tally, indexed(held[-15:], order), k, 0, columns=3)
        now[0] = t + 25.0  # a quiet spell: the clock-driven timed window empties at this read
        report = by_clock.report()
        assert_tally(report.windows["cumulative"].score_tally, indexed(clocked, by_clock.labels),
                     len(by_clock.labels), 0, columns=3)
        assert report.windows["timed_10s"].n == 0


def test_the_open_time_bucket_widens_its_counts_before_they_could_wrap(monkeypatch: pytest.MonkeyPatch) -> None:
    """The open bucket of a timed score window counts in int32 until the samples given to it could exceed
    ``OPEN_LIMIT`` (here lowered to 50), then in int64: batches and single samples in one bucket beyond the limit,
    a state reloaded past it, and the next bucket all read the recount of the window's and the cumulative
    window's scores."""
    from streammon.counting.windows import scored_timed

    monkeypatch.setattr(scored_timed, "OPEN_LIMIT", 50)
    rng = np.random.default_rng(21)
    m = Monitor([Cumulative(), Timed(10, buckets=2)], reference={"x": 3, "y": 1}, detector=None)
    held: list[tuple[float, int, tuple[float, ...]]] = []

    def feed(targets: list[Monitor], n: int, at: float) -> None:
        true, scores = rng.integers(2, size=n), rng.random(n)
        labels = [["x", "y"][i] for i in true]
        for target in targets:
            if n == 1:
                target.update(labels[0], labels[0], t=at, y_score=float(scores[0]))
            else:
                target.update_many(labels, labels, t=at, y_score=scores)
        held.extend((at, int(t), (float(s),)) for t, s in zip(true, scores, strict=True))

    def check(target: Monitor, now: float) -> None:
        report = target.report()
        assert_tally(report.windows["cumulative"].score_tally, [(t, r) for _, t, r in held], 2, 1)
        recent = [(t, r) for when, t, r in held if math.floor(when / 5.0) > math.floor(now / 5.0) - 2]
        assert_tally(report.windows["timed_10s"].score_tally, recent, 2, 1)

    def bucket(target: Monitor) -> np.ndarray:
        scoring = target._tally.scoring
        assert scoring is not None
        return next(w for w in scoring.windows if isinstance(w, scored_timed.TimedScores)).open_bucket.hist

    feed([m], 30, 1.0)
    assert bucket(m).dtype == np.int32
    feed([m], 1, 1.5)
    feed([m], 30, 2.0)  # 61 samples in the bucket: widened before the batch
    assert bucket(m).dtype == np.int64
    check(m, 2.0)
    restored = Monitor.loads(m.dumps())
    assert bucket(restored).dtype == np.int64  # 61 restored samples
    check(restored, 2.0)
    feed([m, restored], 20, 6.0)  # the next bucket
    for target in (m, restored):
        check(target, 6.0)
