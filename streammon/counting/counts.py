"""Integer confusion counts: ``ConfusionCounts``, labelled K×K counts that form a group.

Counts form a group: ``merge`` (``+``) adds, ``evict`` (``-``) subtracts and
never goes below zero, the empty ``ConfusionCounts()`` is the identity. That is
what lets replicas or partitions be combined exactly.

Labels are checked by ``streammon.counting.classes`` (re-exported here).

>>> a = ConfusionCounts(["legit", "fraud"], [[90, 10], [2, 8]])
>>> b = ConfusionCounts(["fraud", "spam"], [[1, 0], [0, 3]])
>>> (a + b).labels
('legit', 'fraud', 'spam')
>>> (a + b - b) == a
True
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.classes import (
    DEFAULT_MAX_CLASSES,
    HARD_MAX_CLASSES,
    LABEL_INT_BOUND,
    MAX_LABEL_LENGTH,
    SCORE_HINT,
    ClassIndex,
    check_label,
    is_missing,
    label_kind,
    show,
)

# The class-label names lived here before classes.py was split out; importing them from here keeps working.
__all__ = [
    "DEFAULT_MAX_CLASSES",
    "HARD_MAX_CLASSES",
    "LABEL_INT_BOUND",
    "MAX_LABEL_LENGTH",
    "SCORE_HINT",
    "ClassIndex",
    "ConfusionCounts",
    "IntMatrix",
    "check_label",
    "is_missing",
    "label_kind",
    "show",
]

IntMatrix = npt.NDArray[np.int64]

def _as_count_matrix(matrix: Any, k: int) -> IntMatrix:
    m = np.asarray(matrix)
    if m.shape != (k, k):
        raise ValueError(f"matrix must be {k}×{k} for {k} labels, got shape {m.shape}")
    # (Mutation testing: a dtype kind is one character, so "XXiubXX" holds the same kinds: equivalent.)
    integral = m.dtype.kind in "iub" or (
        m.dtype.kind == "f" and bool(np.all(np.isfinite(m))) and bool(np.all(m == np.round(m)))
    )
    if not integral:
        raise TypeError(f"counts must be integers, got dtype {m.dtype}")
    if np.any(m < 0):
        raise ValueError("counts must be >= 0")
    return m.astype(np.int64)


def _check_count(count: Any) -> None:
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise ValueError(f"count must be an int >= 0, got {count!r}")


class ConfusionCounts:
    """A label-aware integer confusion matrix (rows = true class, columns = predicted).

    >>> c = ConfusionCounts()
    >>> c.add("cat", "dog"); c.add("cat", "cat", count=3)
    >>> c.n, c.to_dict()
    (4, {'cat': {'cat': 3, 'dog': 1}})
    >>> c.evict("dog", "dog")
    Traceback (most recent call last):
    ...
    ValueError: cannot evict 1 sample(s) of (true='dog', pred='dog'): only 0 counted
    """

    __slots__ = ("_index", "_m")

    def __init__(self, labels: Iterable[Any] = (), matrix: Any = None) -> None:
        given = list(labels)
        self._index = ClassIndex(given, max_classes=HARD_MAX_CLASSES)
        k = len(self._index)
        if k != len(given):
            raise ValueError(f"labels must be distinct, got {given!r}")
        self._m: IntMatrix = (
            np.zeros((k, k), np.int64) if matrix is None else _as_count_matrix(matrix, k)
        )

    @classmethod
    def of_known(cls, labels: Sequence[Hashable] | ClassIndex, matrix: IntMatrix) -> ConfusionCounts:
        """Counts of a monitor's own classes (``labels`` from its index, or an index of them to copy; ``matrix``
        K×K int64, not shared): what a report holds, without checking the labels again."""
        counts = cls.__new__(cls)
        counts._index = labels.copy() if isinstance(labels, ClassIndex) else ClassIndex.of_known(labels)
        counts._m = matrix
        return counts

    @property
    def labels(self) -> tuple[Hashable, ...]:
        """The class labels in row/column order."""
        return self._index.labels

    @property
    def matrix(self) -> IntMatrix:
        """A copy of the K×K integer counts."""
        return self._m.copy()

    @property
    def n(self) -> int:
        """The number of samples counted."""
        return int(self._m.sum())

    def _grow_to(self, labels: Iterable[Any]) -> None:
        self._index.register(labels)
        k = len(self._index)
        # (Mutation testing: `>=` regrows to the same size and shape[1] is shape[0]: equivalent mutants.)
        if k > self._m.shape[0]:
            grown = np.zeros((k, k), np.int64)
            old = self._m.shape[0]
            grown[:old, :old] = self._m
            self._m = grown

    def add(self, y_true: Any, y_pred: Any, count: int = 1) -> None:
        """Count ``count`` samples of class ``y_true`` predicted as ``y_pred``."""
        _check_count(count)
        # (Mutation testing: get(None) for either label sends a known pair through the growing path, which finds
        # the same indices: equivalent mutants.)
        i, j = self._index.get(y_true), self._index.get(y_pred)
        if i is None or j is None:
            self._grow_to([y_true, y_pred])
            i, j = self._index.ids[check_label(y_true)], self._index.ids[check_label(y_pred)]
        self._m[i, j] += count

    def evict(self, y_true: Any, y_pred: Any, count: int = 1) -> None:
        """Remove samples counted before; evicting what was never added raises."""
        _check_count(count)
        i, j = self._index.get(y_true), self._index.get(y_pred)
        have = 0 if i is None or j is None else int(self._m[i, j])
        if have < count:
            raise ValueError(
                f"cannot evict {count} sample(s) of (true={y_true!r}, pred={y_pred!r}): only {have} counted"
            )
        if i is not None and j is not None:  # (mutation testing: `or` is equivalent, only count 0 gets here then)
            self._m[i, j] -= count

    def _aligned(self, other: ConfusionCounts) -> tuple[tuple[Hashable, ...], IntMatrix, IntMatrix]:
        merged = ClassIndex(self.labels, max_classes=HARD_MAX_CLASSES)
        merged.register(other.labels)
        k = len(merged)
        mine = np.zeros((k, k), np.int64)
        theirs = np.zeros((k, k), np.int64)
        # (Mutation testing: shape[1] for either shape[0] is an equivalent mutant, the matrix is square.)
        mine[: self._m.shape[0], : self._m.shape[0]] = self._m
        pos = np.array([merged.ids[label] for label in other.labels], dtype=np.intp)
        theirs[np.ix_(pos, pos)] = other._m
        return merged.labels, mine, theirs

    def merge(self, other: ConfusionCounts) -> ConfusionCounts:
        """The sum of two count matrices, aligned by label (a new object)."""
        labels, mine, theirs = self._aligned(other)
        return ConfusionCounts(labels, mine + theirs)

    def subtract(self, other: ConfusionCounts) -> ConfusionCounts:
        """``self − other``; raises if any cell would go below zero."""
        labels, mine, theirs = self._aligned(other)
        diff = mine - theirs
        if np.any(diff < 0):
            raise ValueError("cannot subtract counts that were never added (a cell would go below 0)")
        return ConfusionCounts(labels, diff)

    def __add__(self, other: ConfusionCounts) -> ConfusionCounts:
        return self.merge(other)

    def __sub__(self, other: ConfusionCounts) -> ConfusionCounts:
        return self.subtract(other)

    def cells(self) -> dict[tuple[Hashable, Hashable], int]:
        """The non-zero cells as ``{(true, pred): count}``."""
        labels = self.labels
        rows, cols = np.nonzero(self._m)  # (mutation testing: equally long, zip's strict= mutants are equivalent)
        return {(labels[i], labels[j]): int(self._m[i, j]) for i, j in zip(rows, cols, strict=True)}

    def __eq__(self, other: object) -> bool:
        """Equal when every (true, pred) cell has the same count; zero classes do not matter."""
        if not isinstance(other, ConfusionCounts):
            return NotImplemented
        return self.cells() == other.cells()

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[Hashable, dict[Hashable, int]]:
        """Non-zero counts as ``{true: {pred: count}}``."""
        out: dict[Hashable, dict[Hashable, int]] = {}
        for (t, p), count in self.cells().items():
            out.setdefault(t, {})[p] = count
        return out

    def __repr__(self) -> str:
        return f"ConfusionCounts(labels={list(self.labels)!r}, n={self.n})"
