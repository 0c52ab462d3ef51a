"""Read ahead: a file's next record batches are decoded on a thread while the monitor counts the current one.

Arrow decodes Parquet, CSV and IPC without holding the GIL, so reading and counting
overlap on two cores. At most ``depth`` batches wait (memory stays bounded by the
batch size, not the file). The batches come out in order; a reading error comes out
where the batch it stopped would have; a consumer that stops early (an error in its
own rows, a closed generator) stops the thread and waits for it.

>>> list(prefetched(lambda: iter(range(5))))
[0, 1, 2, 3, 4]
>>> def broken():
...     yield 1
...     raise OSError("truncated")
>>> items = prefetched(broken)
>>> next(items), next(items)
Traceback (most recent call last):
...
OSError: truncated
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

DEPTH = 2
_DONE = object()
_POLL = 0.05  # seconds between checks of the stop flag while the queue is full


def prefetched(batches: Callable[[], Iterator[T]], depth: int = DEPTH) -> Iterator[T]:
    """The items of ``batches()``, produced on a worker thread at most ``depth`` ahead of the consumer."""
    waiting: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                waiting.put(item, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in batches():
                if not put((item, None)):
                    return
            put((_DONE, None))
        except BaseException as exc:  # handed to the consumer, raised there
            put((_DONE, exc))

    worker = threading.Thread(target=work, name="streammon-read-ahead", daemon=True)
    worker.start()
    try:
        while True:
            item, error = waiting.get()
            if item is _DONE:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
        worker.join()
