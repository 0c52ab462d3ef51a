"""The numbers of a report's windows as arrays, and the read-only mappings a ``WindowReport`` shows them through.

``evaluate_windows`` computes every number of W windows together, as arrays (windows × classes, metrics ×
windows). Turning them into one ``FrozenMap`` per window and field — a dozen per window — would cost more than
the arithmetic, and most readers read a few of them (the exporter its families, a dashboard a score or two).
So a window report holds ``Deferred`` mappings: each builds its ``FrozenMap`` from the table the first time it is
read, then keeps it, and otherwise reads, compares, pickles and prints as that map. The intervals are the one
thing computed, not just arranged, on first read: for every window of the table at once (closed forms,
``streammon.metrics.intervals``), when the exporter, a dashboard or an incompetence alert first needs one.

>>> import numpy as np
>>> table = WindowTable([("a", "b")], ("acsa",), {RECALL: np.array([[0.8, np.nan]])}, {SCORES: np.array([[0.8]])},
...                     correct=np.array([[8.0, 0.0]]), totals=np.array([[10.0, 0.0]]), confidence=0.95)
>>> recall = Deferred(table, 0, RECALL)
>>> recall["a"], len(recall), Deferred(table, 0, SCORES)
(0.8, 2, {'acsa': 0.8})
>>> [round(x, 3) for x in Deferred(table, 0, RECALL_INTERVAL)["a"]], Deferred(table, 0, RECALL_INTERVAL)["b"]
([0.49, 0.943], (nan, nan))
>>> Deferred(table, 0, RECALL)["c"]
Traceback (most recent call last):
...
KeyError: "no class 'c' here; the classes are 'a', 'b'"
"""

from __future__ import annotations

from collections.abc import Hashable, ItemsView, Iterator, KeysView, Mapping, Sequence, ValuesView
from typing import Any

import numpy as np

from streammon.findings.frozen import FrozenMap
from streammon.metrics.confusion import FloatArray
from streammon.metrics.holder import competitiveness
from streammon.metrics.intervals import window_intervals

# per class: arrays of windows × classes
COUNTS, PREDICTED, PRIORS, RECALL, PRECISION, CORRECTED_PRECISION = (
    "counts", "predicted", "priors", "recall", "precision", "corrected_precision")
# per metric: arrays of metrics × windows (competitiveness: built from the scores when read)
SCORES, CORRECTED, DISTORTION, COMPETITIVENESS = "scores", "corrected", "distortion", "competitiveness"
# computed on first read
RECALL_INTERVAL, INTERVALS = "recall_interval", "intervals"


class WindowTable:
    """Every per-class and per-metric number of W windows (each with its classes: ``labels`` per window), and the
    maps of each window built from them."""

    def __init__(self, labels: Sequence[tuple[Hashable, ...]], metrics: tuple[str, ...],
                 by_class: Mapping[str, np.ndarray], by_metric: Mapping[str, np.ndarray], *, correct: FloatArray,
                 totals: FloatArray, confidence: float, exponents: Mapping[str, float] | None = None) -> None:
        self.labels, self.metrics = labels, metrics
        self._by_class, self._by_metric = by_class, by_metric
        self._exponents = exponents or {}  # the Hölder exponent of each Hölder-mean score (competitiveness)
        self._correct, self._totals, self._confidence = correct, totals, confidence
        self._intervals: dict[str, list[FrozenMap[Any, tuple[float, float]]]] | None = None

    def build(self, window: int, which: str) -> FrozenMap[Any, Any]:
        """The map ``which`` of one window."""
        if which in self._by_class:
            return FrozenMap(zip(self.labels[window], self.row(window, which), strict=True), noun="class")
        if which == COMPETITIVENESS:  # seed 001's verdict on each Hölder-mean score against the random classifier
            scores = dict(zip(self.metrics, self.row(window, SCORES), strict=True))
            classes = int((self._totals[window] > 0).sum())
            return FrozenMap({m: competitiveness(scores[m], p=p, k=classes) for m, p in self._exponents.items()},
                             noun="metric")
        if which in self._by_metric:
            return FrozenMap(zip(self.metrics, self.row(window, which), strict=True), noun="metric")
        return self._interval_maps()[which][window]

    def row(self, window: int, which: str) -> list[Any]:
        """The values of the map ``which`` of one window, in key order, without building the map."""
        if which in self._by_class:
            out: list[Any] = self._by_class[which][window].tolist()
            return out
        if which in self._by_metric:
            out = self._by_metric[which][:, window].tolist()
            return out
        return list(self.build(window, which).values())

    def _interval_maps(self) -> dict[str, list[FrozenMap[Any, tuple[float, float]]]]:
        maps = self._intervals
        if maps is None:  # computed once, for every window (two threads may both compute it: equal maps)
            (low, high), indices = window_intervals(self._correct, self._totals, self._confidence)
            by_class = [FrozenMap(zip(labels, zip(lows, highs, strict=True), strict=True), noun="class")
                        for labels, lows, highs in zip(self.labels, low.tolist(), high.tolist(), strict=True)]
            by_metric = [FrozenMap(values, noun="metric") for values in indices]
            maps = self._intervals = {RECALL_INTERVAL: by_class, INTERVALS: by_metric}
        return maps


class Deferred(Mapping[Any, Any]):
    """One window's map ``which`` from its ``WindowTable``, built on first read and kept."""

    __slots__ = ("_built", "_table", "_which", "_window")

    def __init__(self, table: WindowTable, window: int, which: str) -> None:
        self._table, self._window, self._which = table, window, which
        self._built: FrozenMap[Any, Any] | None = None

    def row(self) -> list[Any]:
        """The values in key order (``list(self.values())``; read from the table's arrays if the map was not
        built: what the exporter reads)."""
        built = self._built
        return list(built.values()) if built is not None else self._table.row(self._window, self._which)

    def _map(self) -> FrozenMap[Any, Any]:
        built = self._built
        if built is None:  # two threads may both build it: equal maps, either kept
            built = self._built = self._table.build(self._window, self._which)
        return built

    def __getitem__(self, key: Any) -> Any:
        return self._map()[key]

    # the dict's own views and lookups (Mapping's would go through __getitem__ key by key)
    def keys(self) -> KeysView[Any]:
        return self._map().keys()

    def values(self) -> ValuesView[Any]:
        return self._map().values()

    def items(self) -> ItemsView[Any, Any]:
        return self._map().items()

    def get(self, key: Any, default: Any = None) -> Any:
        return self._map().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._map()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._map())

    def __len__(self) -> int:
        return len(self._map())

    def __setitem__(self, key: Any, value: Any) -> None:
        self._map()[key] = value  # refused: a FrozenMap is read-only

    def __delitem__(self, key: Any) -> None:
        del self._map()[key]  # refused likewise

    def __eq__(self, other: object) -> bool:
        return self._map() == (other._map() if isinstance(other, Deferred) else other)

    __hash__ = None  # type: ignore[assignment]  # a mapping: unhashable, like dict

    def __repr__(self) -> str:
        return repr(self._map())

    def __reduce__(self) -> tuple[Any, ...]:
        return self._map().__reduce__()  # pickles and copies as the FrozenMap it stands for


class Extended(Deferred):
    """A window's map (``base``: a ``Deferred`` or any mapping) with ``extra`` entries after its own — the score
    metrics beside the confusion metrics — built on first read like ``Deferred``, so that adding them does not
    build (or compute, for intervals) the base map of a report nobody reads.

    >>> table = WindowTable([("a", "b")], ("acsa",), {}, {SCORES: np.array([[0.8]])},
    ...                     correct=np.array([[8.0, 0.0]]), totals=np.array([[10.0, 0.0]]), confidence=0.95)
    >>> scores = Extended(Deferred(table, 0, SCORES), {"roc_auc": 0.9})
    >>> scores.row(), scores["roc_auc"], scores
    ([0.8, 0.9], 0.9, {'acsa': 0.8, 'roc_auc': 0.9})
    """

    __slots__ = ("_base", "_extra")

    def __init__(self, base: Mapping[Any, Any], extra: Mapping[Any, Any]) -> None:
        self._base, self._extra = base, extra
        self._built = None

    def row(self) -> list[Any]:
        base = self._base
        head = base.row() if isinstance(base, Deferred) else list(base.values())
        return head + list(self._extra.values())

    def _map(self) -> FrozenMap[Any, Any]:
        built = self._built
        if built is None:
            built = self._built = FrozenMap({**self._base, **self._extra}, noun="metric")
        return built
