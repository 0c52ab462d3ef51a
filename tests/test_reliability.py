"""Bad input never corrupts state, and concurrent use loses nothing."""

from __future__ import annotations

import math
import threading
import urllib.request
from collections import Counter
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streammon import Cumulative, Monitor, Sliding, Timed
from streammon.export.server import serve

GOOD = ["a", "b", 1, 2, True]
scalars = st.one_of(
    st.sampled_from(GOOD), st.none(), st.floats(), st.integers(-(2**70), 2**70), st.text(max_size=3),
    st.binary(max_size=3), st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=1), st.integers(),
                                                                               max_size=1),
    st.sets(st.integers(), max_size=2), st.tuples(st.integers()),
)
arrays = st.one_of(
    st.lists(scalars, max_size=6),
    st.builds(lambda xs: np.array(xs, dtype=object), st.lists(scalars, max_size=4)),
    st.builds(np.array, st.lists(st.floats(), max_size=5)),
    st.builds(np.array, st.lists(st.integers(-5, 5), max_size=5)),
    st.builds(lambda n: np.zeros((n, 2)), st.integers(0, 3)),
    st.builds(lambda n: np.array(["2024-01-01"] * n, dtype="datetime64[D]"), st.integers(1, 3)),
    st.builds(lambda n: np.ones(n, dtype=complex), st.integers(1, 3)),
    scalars,
)
times = st.one_of(st.none(), st.none(), st.none(), st.floats(), st.integers(-10, 10**6), st.text(max_size=2),
                  st.booleans(), st.lists(st.floats(), max_size=6))


def _state(monitor: Monitor) -> tuple:
    return monitor.labels, monitor.samples, {name: c.cells() for name, c in monitor.counts().items()}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.booleans(), arrays, arrays, times), min_size=1, max_size=8))
def test_random_garbage_raises_only_value_or_type_errors_and_changes_nothing(calls: list[tuple[Any, ...]]) -> None:
    """Fuzzing update/update_many: a call either succeeds or raises ValueError/TypeError leaving every window,
    the class index and the sample count exactly as they were; reports keep working."""
    monitor = Monitor([Cumulative(), Sliding(5), Timed(100)], reference={"a": 3, "b": 1}, max_classes=6,
                      clock=lambda: 1.0)
    monitor.update_many(["a", "b", "a"], ["a", "a", "b"], t=[1.0, 2.0, 3.0])
    for batch, y_true, y_pred, t in calls:
        before = _state(monitor)
        try:
            if batch:
                monitor.update_many(y_true, y_pred, t=t)
            else:
                monitor.update(y_true, y_pred, t=t)
        except (ValueError, TypeError):
            assert _state(monitor) == before
    report = monitor.report()
    for w in report.windows.values():
        assert w.n == sum(w.counts.values()) == w.confusion.n


def test_concurrent_updates_reports_and_scrapes_lose_nothing() -> None:
    """4 writer threads (update and update_many) against 2 report threads and a /metrics scraper:
    no exception, every sample counted exactly once, every report internally consistent."""
    monitor = Monitor([Cumulative(), Sliding(1000), Timed(60)], reference={"x": 1, "y": 1, "z": 1})
    rng = np.random.default_rng(0)
    streams = [(rng.choice(["x", "y", "z"], 20_000), rng.choice(["x", "y", "z"], 20_000)) for _ in range(4)]
    errors: list[BaseException] = []
    stop = threading.Event()
    inconsistent: list[str] = []

    def writer(i: int) -> None:
        try:
            truth, preds = streams[i]
            if i % 2:
                for start in range(0, len(truth), 997):
                    monitor.update_many(truth[start:start + 997], preds[start:start + 997])
            else:
                for y, p in zip(truth.tolist(), preds.tolist(), strict=True):
                    monitor.update(y, p)
        except BaseException as exc:
            errors.append(exc)

    def reader() -> None:
        try:
            while not stop.is_set():
                for w in monitor.report().windows.values():
                    if not (w.n == sum(w.counts.values()) == w.confusion.n == sum(w.predicted.values())):
                        inconsistent.append(w.name)
                    if w.n and not math.isclose(sum(w.priors.values()), 1.0):
                        inconsistent.append(w.name)
        except BaseException as exc:
            errors.append(exc)

    with serve(monitor, port=0) as server:
        def scraper() -> None:
            try:
                while not stop.is_set():
                    urllib.request.urlopen(server.url, timeout=10).read()
            except BaseException as exc:
                errors.append(exc)

        writers = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
        readers = [threading.Thread(target=reader) for _ in range(2)] + [threading.Thread(target=scraper)]
        for thread in writers + readers:
            thread.start()
        for thread in writers:
            thread.join()
        stop.set()
        for thread in readers:
            thread.join()
    assert not errors and not inconsistent, (errors, inconsistent)
    report = monitor.report()
    expected = Counter()
    for truth, preds in streams:
        expected.update(zip(truth.tolist(), preds.tolist(), strict=True))
    assert report.samples == 80_000
    assert report.windows["cumulative"].confusion.cells() == dict(expected)
    assert report.totals.cells() == dict(expected)
    assert report.windows["sliding_1000"].n == 1000
