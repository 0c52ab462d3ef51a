"""The label rows of exported series, kept: the same tuple object from scrape to scrape.

``Sink.add_series`` takes a family's series as a tuple of label rows; a sink may keep what it derives from one
(``streammon.export.text`` keeps each row's formatted line head, by the tuple's identity). These builders return
the same tuple for the same arguments, for up to ``KEPT_SERIES`` models or windows each: about as much memory as
the exposition itself; with more than that, series still export right, their line heads formatted again.

>>> class_rows("m", ("a", "b"))
(('m', 'a'), ('m', 'b'))
>>> class_rows("m", names([1, "b"])) is class_rows("m", ("1", "b"))
True
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

Rows = tuple[tuple[str, ...], ...]
KEPT_SERIES = 4096


def names(labels: Iterable[object]) -> tuple[str, ...]:
    """Class labels as the label values they are exported under."""
    return tuple(str(label) for label in labels)


@functools.lru_cache(maxsize=KEPT_SERIES)
def rows(*given: tuple[str, ...]) -> Rows:
    """``given`` as the same tuple object from scrape to scrape."""
    return given


@functools.lru_cache(maxsize=KEPT_SERIES)
def class_rows(model: str, labels: tuple[str, ...]) -> Rows:
    """One row per class of a model."""
    return tuple((model, label) for label in labels)


@functools.lru_cache(maxsize=KEPT_SERIES)
def pair_rows(model: str, labels: tuple[str, ...]) -> Rows:
    """One row per (true class, predicted class) of a model."""
    return tuple((model, true, predicted) for true in labels for predicted in labels)


@functools.lru_cache(maxsize=KEPT_SERIES)
def bucket_rows(labels: tuple[str, ...], edges: tuple[str, ...]) -> Rows:
    """The rows of one histogram series' buckets, ``le`` last."""
    return tuple((*labels, le) for le in edges)
