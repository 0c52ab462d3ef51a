"""The window base class and the cumulative window (``streammon.counting.windows`` says what each window keeps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from streammon.counting.batch import Batch
from streammon.counting.counts import IntMatrix
from streammon.counting.sparse import dense, sparse
from streammon.counting.user_text import check_text

EMPTY_BUCKET = int(np.iinfo(np.int64).min)  # the id of a ring slot that holds no bucket


class Window:
    """Base class: one count matrix fed by a monitor. Subclasses route, math lives elsewhere."""

    kind = "window"

    def __init__(self, name: str) -> None:
        self.name = check_text(name, "window name")  # the rule for user strings (streammon.counting.user_text)
        # (Mutation testing: attach() sets capacity and stride before any use, and tests `if self._stride` only:
        # other falsy or overwritten values are equivalent mutants.)
        self._capacity = 0
        self._stride = 0
        self._counts: IntMatrix = np.zeros((0, 0), np.int64)

    def attach(self, stride: int, capacity: int) -> None:
        """Allocate for a monitor; a window serves one monitor only."""
        if self._stride:
            raise ValueError(f"window {self.name!r} already belongs to a monitor; make a new one")
        self._stride = stride
        self._capacity = capacity
        self._counts = np.zeros((capacity, capacity), np.int64)

    @staticmethod
    def _embed(m: IntMatrix, capacity: int) -> IntMatrix:
        grown = np.zeros((capacity, capacity), np.int64)
        grown[: m.shape[0], : m.shape[1]] = m  # (mutation testing: m is square, shape[1] for [0] is equivalent)
        return grown

    def grow(self, capacity: int) -> None:
        """Make room for more classes, keeping every count."""
        self._counts = self._embed(self._counts, capacity)
        self._capacity = capacity

    def ingest(self, batch: Batch) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def snapshot(self, now: float | None, size: int | None = None) -> IntMatrix:
        """A copy of the counts as of ``now``: ``capacity × capacity``, or the first ``size`` classes'."""
        return (self._counts if size is None else self._counts[:size, :size]).copy()

    def describe(self) -> dict[str, Any]:
        """The window's kind and parameters, for reports and exporters."""
        return {"kind": self.kind, "name": self.name}

    def state(self) -> dict[str, Any]:
        """The window's counts (and ring) as plain data, for ``streammon.state``: matrices as their non-zero cells."""
        return {"counts": sparse(self._counts)}

    def restore(self, state: dict[str, Any]) -> None:
        """Load a ``state()`` into this attached window; raises ``ValueError`` if it does not fit."""
        self._counts = _matrix(state["counts"], self._capacity)

    def fresh(self) -> Window:
        """A new, empty window with the same parameters (free to join another monitor)."""
        params = {k: v for k, v in self.describe().items() if k != "kind"}
        return type(self)(**params)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.describe().items() if k != "kind")
        return f"{type(self).__name__}({params})"


def _matrix(values: Any, capacity: int) -> IntMatrix:
    if not isinstance(values, dict):
        raise ValueError(f"a saved count matrix must be its non-zero cells and counts, got {type(values).__name__}")
    return dense(values, capacity)


class Cumulative(Window):
    """Every sample seen.

    >>> Cumulative(name="all").describe()
    {'kind': 'cumulative', 'name': 'all'}
    """

    kind = "cumulative"

    def __init__(self, *, name: str = "cumulative") -> None:
        super().__init__(name)

    def ingest(self, batch: Batch) -> None:
        self._counts += batch.delta(self._capacity)


