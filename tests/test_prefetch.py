"""Read-ahead of record batches: order, bounded look-ahead, errors where they happened, no thread left behind."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from streammon.logs.prefetch import prefetched


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "streammon-read-ahead"]


def test_items_come_in_order_and_the_thread_ends() -> None:
    assert list(prefetched(lambda: iter(range(1000)), depth=3)) == list(range(1000))
    assert _readers() == []


def test_the_reader_stays_at_most_depth_ahead() -> None:
    produced: list[int] = []

    def source() -> Iterator[int]:
        for i in range(100):
            produced.append(i)
            yield i

    items = prefetched(source, depth=2)
    assert next(items) == 0
    time.sleep(0.3)  # ample time for the thread to run ahead if nothing held it back
    # 0 was taken; 1 and 2 wait in the queue; 3 is produced and blocks on the full queue
    assert len(produced) <= 4
    items.close()
    assert _readers() == []


def test_an_error_comes_after_the_items_before_it() -> None:
    def source() -> Iterator[int]:
        yield 1
        yield 2
        raise OSError("truncated at row 2")

    items = prefetched(source)
    assert next(items) == 1 and next(items) == 2
    with pytest.raises(OSError, match="truncated at row 2"):
        next(items)
    assert _readers() == []


def test_a_consumer_that_stops_early_stops_the_reader() -> None:
    def endless() -> Iterator[int]:
        i = 0
        while True:
            yield i
            i += 1

    items = prefetched(endless, depth=1)
    assert [next(items) for _ in range(5)] == [0, 1, 2, 3, 4]
    items.close()
    assert _readers() == []
