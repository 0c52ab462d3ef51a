"""The lock-free ``update`` never rewinds time: however threads interleave, the time a monitor keeps only grows."""

from __future__ import annotations

import inspect
import itertools
import sys
import threading
import time
from types import FrameType
from typing import Any

import numpy as np
import pytest

from streammon import Cumulative, Monitor, Timed
from streammon.intake import Intake
from tests.threads import update_concurrently


def _line_after_the_check() -> int:
    """The first line the lock-free path runs once it has decided a sample is fast (before it writes anything)."""
    lines, start = inspect.getsourcelines(Intake.update)
    index = next(i for i, line in enumerate(lines) if line.strip() == "if fast:")
    return start + index + 1


def test_a_thread_switched_out_after_its_check_cannot_rewind_time() -> None:
    """Thread A reads the clock at 1000.2 and is switched out right after its lock-free check; B then counts a
    sample at 1100 (a new bucket). When A resumes, B's sample still lies in the bucket of 1100 (it stays in a
    10 s window at 1109.5), only A's racing sample may move a bucket, and t = 1050 is refused as earlier."""
    now = [1000.0]
    monitor = Monitor([Cumulative(), Timed(10, buckets=10)], classes=["a", "b", "c"], clock=lambda: now[0])
    monitor.update("a", "a")  # the locked path opens the bucket [1000, 1001)
    paused, resume = threading.Event(), threading.Event()
    target = _line_after_the_check()

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line" and frame.f_lineno == target:
            paused.set()
            assert resume.wait(10)
        return local

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code is Intake.update.__code__ else None

    def racer() -> None:
        sys.settrace(tracer)
        try:
            monitor.update("b", "b")  # reads the clock at 1000.2: inside the open bucket, so lock-free
        finally:
            sys.settrace(None)

    now[0] = 1000.2
    thread = threading.Thread(target=racer)
    thread.start()
    assert paused.wait(10), "the racing thread never reached the lock-free path"
    now[0] = 1100.0
    monitor.update("c", "c")  # another thread's sample, 100 s later: a new bucket, under the lock
    resume.set()
    thread.join(10)
    assert not thread.is_alive()
    with pytest.raises(ValueError, match="earlier"):
        monitor.update("a", "a", t=1050.0)
    now[0] = 1109.5  # the 10 s window is (1099.5, 1109.5]: the sample at 1100 is in it
    window = monitor.report().windows["timed_10s"].confusion
    assert window.to_dict().get("c") == {"c": 1}, window.to_dict()
    assert "a" not in window.to_dict()  # the sample at 1000 has left
    assert window.n in (1, 2)  # B's sample, and A's racing one if it was counted a bucket late
    assert monitor.report().windows["cumulative"].n == 3


class _Recorded(Monitor):
    """A monitor that records every write of its last sample time that goes backwards, and lets other threads run
    whenever it asks whether it has a timed window (which the lock-free path does right after its check)."""

    @property
    def _timed(self) -> bool:
        time.sleep(0)  # releases the GIL: a thread switch here, between a check and what follows it
        return bool(self.__dict__["_timed_value"])

    @_timed.setter
    def _timed(self, value: bool) -> None:
        self.__dict__["_timed_value"] = value

    @property
    def _last_t(self) -> float:
        return self.__dict__["_last_t_value"]

    @_last_t.setter
    def _last_t(self, value: float) -> None:
        previous = self.__dict__.get("_last_t_value", -np.inf)
        if value < previous:
            self.__dict__.setdefault("backwards", []).append((previous, value))
        self.__dict__["_last_t_value"] = value


def test_the_kept_time_never_goes_back_under_forced_thread_switches() -> None:
    """4 threads calling update with thread switches forced every microsecond and after every lock-free check,
    the clock moving on with every read and a bucket switch every 3 reads: no write of the monitor's time is ever
    earlier than the one before, and every sample is counted once."""
    ticks = itertools.count()
    monitor = _Recorded([Cumulative(), Timed(150_000, buckets=50_000)], classes=list(range(5)),
                        clock=lambda: next(ticks) * 1.0)
    rng = np.random.default_rng(2)
    streams = [(rng.integers(0, 5, 5_000).tolist(), rng.integers(0, 5, 5_000).tolist()) for _ in range(4)]

    update_concurrently(monitor, streams)
    assert monitor.__dict__.get("backwards", []) == []
    report = monitor.report()
    assert report.samples == 20_000 == report.windows["cumulative"].n == report.windows["timed_150000s"].n
