"""Windows equal a brute-force recount of the stream, and batch updates equal per-sample updates."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streammon import ConfusionCounts, Cumulative, Monitor, Sliding, Timed
from tests.strategies import label_streams
from tests.threads import update_concurrently

SIZES = (1, 3, 17)
TIMED_SECONDS, TIMED_BUCKETS = 10.0, 5


def _windows() -> list:
    return [Cumulative(), *(Sliding(s) for s in SIZES), Timed(TIMED_SECONDS, buckets=TIMED_BUCKETS)]


def _recount(pairs: list[tuple[object, object]]) -> ConfusionCounts:
    counts = ConfusionCounts()
    for (t, p), n in Counter(pairs).items():
        counts.add(t, p, count=n)
    return counts


def _expected(pairs: list, times: list[float]) -> dict[str, ConfusionCounts]:
    width = TIMED_SECONDS / TIMED_BUCKETS
    out = {"cumulative": _recount(pairs)}
    for s in SIZES:
        out[f"sliding_{s}"] = _recount(pairs[-s:])
    if times:
        newest = math.floor(times[-1] / width)
        live = [pair for pair, t in zip(pairs, times, strict=True) if math.floor(t / width) > newest - TIMED_BUCKETS]
    else:
        live = []
    out[f"timed_{TIMED_SECONDS:g}s"] = _recount(live)
    return out


@settings(max_examples=80, deadline=None)
@given(label_streams(), st.data())
def test_every_window_equals_a_recount_of_its_samples(stream: tuple[list, list], data: st.DataObject) -> None:
    """After any mix of per-sample and batch updates, timed by ``t`` or by the clock, each window holds
    exactly the samples it should (per-sample updates by the clock take the lock-free path)."""
    truth, preds = stream
    gaps = data.draw(st.lists(st.sampled_from([0.0, 0.3, 1.0, 2.5, 7.0]), min_size=len(truth), max_size=len(truth)))
    times = list(np.cumsum(gaps))
    by_clock = data.draw(st.booleans())
    clock = [0.0]
    monitor = Monitor(_windows(), clock=lambda: clock[0])
    position = 0
    while position < len(truth):
        step = data.draw(st.integers(1, 40))
        chunk = slice(position, min(len(truth), position + step))
        if data.draw(st.booleans()):
            if by_clock:  # one clock reading stamps the whole batch
                clock[0] = times[chunk.stop - 1]
                times[chunk] = [clock[0]] * (chunk.stop - chunk.start)
                monitor.update_many(truth[chunk], preds[chunk])
            else:
                monitor.update_many(truth[chunk], preds[chunk], t=times[chunk])
        else:
            for y, p, t in zip(truth[chunk], preds[chunk], times[chunk], strict=True):
                if by_clock:
                    clock[0] = t
                    monitor.update(y, p)
                else:
                    monitor.update(y, p, t=t)
        position = chunk.stop
        pairs = list(zip(truth[:position], preds[:position], strict=True))
        report = monitor.report()
        for name, expected in _expected(pairs, times[:position]).items():
            assert report.windows[name].confusion == expected, name
            assert report.windows[name].n == expected.n


def test_lock_free_updates_from_many_threads_lose_no_sample() -> None:
    """4 threads calling update (the lock-free path) with thread switches forced every microsecond,
    through buffer flushes and ~100 timed-bucket switches: every sample is counted exactly once."""
    ticks = itertools.count()
    monitor = Monitor([Cumulative(), Sliding(50_000), Timed(1e6, buckets=1000)], clock=lambda: next(ticks) * 0.01)
    rng = np.random.default_rng(1)
    streams = [(rng.integers(0, 5, 25_000).tolist(), rng.integers(0, 5, 25_000).tolist()) for _ in range(4)]
    monitor.update_many(list(range(5)), list(range(5)))

    update_concurrently(monitor, streams)
    pairs = [(i, i) for i in range(5)] + [pair for t, p in streams for pair in zip(t, p, strict=True)]
    expected = _recount(pairs)
    report = monitor.report()
    assert report.samples == 100_005
    for name in ("cumulative", "sliding_50000", "timed_1e+06s"):
        counts = report.windows[name].confusion
        assert counts.n == min(100_005, 50_000 if name.startswith("sliding") else 100_005)
        if not name.startswith("sliding"):
            assert counts == expected, name


def _same_report(a, b) -> None:  # type: ignore[no-untyped-def]
    assert a.labels == b.labels
    for name, wa in a.windows.items():
        wb = b.windows[name]
        assert wa.confusion == wb.confusion
        assert wa.scores.keys() == wb.scores.keys()
        for metric, value in wa.scores.items():
            assert value == wb.scores[metric] or (math.isnan(value) and math.isnan(wb.scores[metric]))
        assert wa.flags == wb.flags


@settings(max_examples=60, deadline=None)
@given(label_streams(max_size=200))
def test_update_many_equals_repeated_update(stream: tuple[list, list]) -> None:
    """update_many on lists or numpy arrays gives the same report (classes, counts, scores) as update per sample."""
    truth, preds = stream
    one, lists, arrays = (Monitor([Cumulative(), Sliding(5)], warmup=7) for _ in range(3))
    for y, p in zip(truth, preds, strict=True):
        one.update(y, p)
    lists.update_many(truth, preds)
    arrays.update_many(np.array(truth), np.array(preds))
    _same_report(one.report(), lists.report())
    if truth and all(isinstance(x, (bool, str)) or type(x) is int for x in truth + preds):
        _same_report(one.report(), arrays.report())


def test_class_appearing_mid_stream_grows_every_window() -> None:
    """A class first seen after many samples gets a row and column in every window, including past the capacity."""
    monitor = Monitor([Cumulative(), Sliding(50), Timed(60)], clock=lambda: 0.0)
    monitor.update_many([0, 1] * 30, [0, 1] * 30)
    for k in range(2, 40):
        monitor.update(k, 0)
    report = monitor.report()
    assert len(report.labels) == 40
    assert report.windows["cumulative"].confusion.to_dict()[39] == {0: 1}
    assert report.windows["sliding_50"].n == 50
    assert report.windows["timed_60s"].n == 98


def test_timed_window_follows_sample_time_and_injected_clock() -> None:
    """With sample times the window ends at the last t; with a clock, a quiet period empties it."""
    now = [0.0]
    monitor = Monitor([Timed(60, buckets=6)], clock=lambda: now[0])
    monitor.update("a", "a")
    now[0] = 30.0
    monitor.update("b", "a")
    assert monitor.report().windows["timed_60s"].n == 2
    now[0] = 65.0
    assert monitor.report().windows["timed_60s"].n == 1  # the t=0 bucket left the window
    now[0] = 200.0
    assert monitor.report().windows["timed_60s"].n == 0
    now[0] = 65.0
    monitor.update("c", "c")  # the same read time for raw counts and reports
    assert monitor.counts()["timed_60s"].n == monitor.report().windows["timed_60s"].n
    now[0] = 500.0
    assert monitor.counts()["timed_60s"].n == monitor.report().windows["timed_60s"].n == 0
    by_sample = Monitor([Timed(60, buckets=6)])
    by_sample.update_many(["a"] * 3, ["a"] * 3, t=[0.0, 10.0, 100.0])
    assert by_sample.report().windows["timed_60s"].n == 1


def test_window_arguments_are_validated() -> None:
    """Bad window sizes, durations and names raise; a window cannot serve two monitors."""
    with pytest.raises(ValueError, match="size"):
        Sliding(0)
    with pytest.raises(ValueError, match="seconds"):
        Timed(math.inf)
    with pytest.raises(ValueError, match="buckets"):
        Timed(60, buckets=0)
    with pytest.raises(ValueError, match="unique"):
        Monitor([Sliding(5), Sliding(5)])
    shared = Sliding(5)
    Monitor([shared])
    with pytest.raises(ValueError, match="already belongs"):
        Monitor([shared])
