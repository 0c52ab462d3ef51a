"""Run writer threads with a thread switch forced every microsecond (shared by the concurrency tests)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence

from streammon import Monitor


def update_concurrently(monitor: Monitor, streams: Sequence[tuple[list[int], list[int]]]) -> None:
    """One thread per (truth, preds) stream calling ``monitor.update`` per sample, switching every µs."""

    def writer(truth: list[int], preds: list[int]) -> None:
        for y, p in zip(truth, preds, strict=True):
            monitor.update(y, p)

    run_switching(writer, streams)


def run_switching(target: Callable[..., object], arguments: Sequence[tuple[object, ...]]) -> None:
    """One thread per argument tuple running ``target``, with a thread switch forced every microsecond."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=target, args=args) for args in arguments]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
