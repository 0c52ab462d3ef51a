"""Timed windows at bucket widths other than one second, against a recount of the samples' buckets.

Every other timed-window test used 1 s or 5 s buckets; mutants that multiply where the code divides, or shift
a row index by the batch's skipped prefix, survived them (``bash .ci/mutation counting``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from streammon import Monitor
from streammon.counting.batch import Batch
from streammon.counting.timing import MAX_TIME, check_times
from streammon.counting.windows import Timed


def _recount(true: np.ndarray, pred: np.ndarray, times: np.ndarray, *, width: float, buckets: int, now: float,
             k: int) -> list[list[int]]:
    """The K×K counts of the samples whose bucket ``floor(t / width)`` is among the last ``buckets`` at ``now``."""
    newest = math.floor(now / width)
    out = np.zeros((k, k), np.int64)
    for t, p, time in zip(true.tolist(), pred.tolist(), times.tolist(), strict=True):
        if math.floor(time / width) > newest - buckets:
            out[t, p] += 1
    return out.tolist()


@given(
    width=st.floats(min_value=1e-3, max_value=1e4, allow_nan=False, allow_infinity=False),
    t=st.floats(min_value=-MAX_TIME / 2, max_value=MAX_TIME / 2, allow_nan=False, allow_infinity=False),
)
def test_bucket_end_is_the_first_time_of_the_next_bucket(width: float, t: float) -> None:
    """bucket_end(t) is in a later bucket than t, and the float just before it is not (buckets as floor(t / w))."""
    w = Timed(width * 10, buckets=10)
    end = w.bucket_end(t)
    bucket = math.floor(t / w.width)
    assert math.floor(end / w.width) > bucket
    assert math.floor(math.nextafter(end, -math.inf) / w.width) <= bucket


@pytest.mark.parametrize(("seconds", "t"), [(1.659, 207840077.192), (0.012, 674938164.193), (354.308, 182199165.863),
                                          (1875.858, -805091380.538), (12800.0, -1.0)])
def test_bucket_end_is_exact_where_rounding_puts_the_first_guess_off(seconds: float, t: float) -> None:
    """Where (bucket + 1) * width is not the first time of the next bucket (rounding; a guess of 0.0 when the
    float just below it still divides to -0.0), bucket_end still returns that first time."""
    w = Timed(seconds, buckets=10)
    bucket = math.floor(t / w.width)
    guess = (bucket + 1) * w.width
    assert not math.floor(guess / w.width) > bucket >= math.floor(math.nextafter(guess, -math.inf) / w.width)
    end = w.bucket_end(t)
    assert math.floor(end / w.width) > bucket >= math.floor(math.nextafter(end, -math.inf) / w.width)


@pytest.mark.parametrize(("seconds", "buckets"), [(1.0, 4), (60.0, 6), (0.3, 3)])
def test_one_batch_spanning_more_buckets_than_the_window_keeps_exactly_the_live_ones(seconds: float,
                                                                                     buckets: int) -> None:
    """A batch whose first rows' buckets have already left the window counts exactly the rows of live buckets."""
    rng = np.random.default_rng(7)
    width = seconds / buckets
    n = 400
    times = np.sort(rng.uniform(0.0, 40 * width, n))
    true, pred = rng.integers(0, 3, n), rng.integers(0, 3, n)
    w = Timed(seconds, buckets=buckets)
    w.attach(3, 3)
    w.ingest(Batch(true.astype(np.intp), pred.astype(np.intp), times, 3))
    for now in (float(times[-1]), float(times[-1]) + width, float(times[-1]) + 2.5 * width):
        assert w.snapshot(now).tolist() == _recount(true, pred, times, width=width, buckets=buckets, now=now, k=3), now


def test_a_bucket_added_to_twice_expires_whole() -> None:
    """Two batches in one bucket share its matrix: when the bucket expires, both leave the window."""
    w = Timed(1.0, buckets=4)  # buckets of 0.25 s
    w.attach(2, 2)
    w.ingest(Batch(np.array([0, 1], np.intp), np.array([0, 1], np.intp), 0.05, 2))
    w.ingest(Batch(np.array([1], np.intp), np.array([0], np.intp), 0.2, 2))
    assert w.snapshot(0.2).tolist() == [[1, 0], [1, 1]]
    w.ingest(Batch(np.array([0], np.intp), np.array([1], np.intp), 1.1, 2))  # bucket 4: bucket 0 leaves
    assert w.snapshot(1.1).tolist() == [[0, 1], [0, 0]]


def test_an_out_of_range_time_is_named_at_its_own_position() -> None:
    """A time exactly at the bound is valid: the message names the first time beyond it (a plain float)."""
    with pytest.raises(ValueError, match=r"got 2000000000000\.0 at position 1$"):
        check_times(np.array([MAX_TIME, 2 * MAX_TIME]), last=-math.inf)


def test_a_timed_window_holds_its_newest_buckets_as_its_docstring_says() -> None:
    """A timed window of 1,200 s in 60 buckets (20 s) at ``now`` holds exactly the samples with
    t ≥ (⌊now/20⌋ − 59)·20, recounted by brute force for a few ``now``, on and off a bucket edge."""
    for now in (2999.0, 3000.0, 2990.5, 1234.0):
        times = [float(t) for t in range(int(now) + 1)] + ([now] if now % 1 else [])
        m = Monitor([Timed(1200, buckets=60)], classes=[0, 1])
        m.update_many([0] * len(times), [0] * len(times), t=times)
        start = (np.floor(now / 20.0) - 59) * 20.0
        assert m.report().windows["timed_1200s"].n == sum(t >= start for t in times)
