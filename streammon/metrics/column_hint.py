"""Whether a window's scores read as if their columns were meant in another order (pure).

The trap: scikit-learn's ``predict_proba`` orders its columns by ``classes_``, sorted; a monitor reads a score's
columns in the order of its classes (``Monitor.labels``: the reference's, or ``classes=``). Where the two differ —
a reference written majority first, ``{"ok": 0.9, "fraud": 0.1}``, against ``classes_ == ["fraud", "ok"]`` — every
value is valid, every row sums to 1, and the monitor reads the model's ROC AUC 0.97 as 0.03: no check of one row
can tell. The labelled samples can: a column meant for class k scores k's own samples higher than the others'.

``column_order_hint`` reads that from a window's score sums per (true class, column) and its class counts: for a
column per class, the mean over classes of how much higher the class's own column scores its samples than the other
classes' samples (the *separation*), in the monitor's order and in sorted order; a hint when the monitor's order
reads below ``-MARGIN`` and the sorted order above ``+MARGIN``. For one binary column (the positive class's
probability), a hint when it scores the positive class's samples lower than the other's (the other class's
probability, or a model worse than chance) by more than ``MARGIN`` and ``SIGMAS`` standard errors. Only with at
least ``MIN_SAMPLES`` scored samples of each class it reads. A hint, never a refusal: a model can be worse than
chance.

>>> sums = np.array([[30.0, 270.0], [90.0, 10.0]])   # 300 "ok" samples score 0.1 in column 0 ...
>>> column_order_hint(sums, np.array([300, 100]), ["ok", "fraud"]) is not None   # ... which sorted order reads
True
>>> column_order_hint(sums[:, ::-1], np.array([300, 100]), ["ok", "fraud"]) is None
True
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

MIN_SAMPLES = 30  # scored samples of a class before its separation is read
MARGIN = 0.05  # the separation (a difference of mean probabilities) a hint needs, either way
SIGMAS = 4.0  # and, for a binary score, that many standard errors of the difference of the two means


def separation(sums: npt.NDArray[np.float64], counts: npt.NDArray[Any], column_of: Sequence[int]) -> float:
    """The mean over classes k (with ``MIN_SAMPLES`` scored samples, and as many of the others together) of the
    mean score of column ``column_of[k]`` on k's samples minus on the other classes' samples; NaN where no class
    qualifies. ``sums`` (K, C): Σ score by true class and column; ``counts`` (K,): scored samples by class."""
    n = np.asarray(counts, dtype=np.float64)
    parts = []
    for k, column in enumerate(column_of):
        others = n.sum() - n[k]
        if n[k] >= MIN_SAMPLES and others >= MIN_SAMPLES:
            own = sums[k, column] / n[k]
            rest = (sums[:, column].sum() - sums[k, column]) / others
            parts.append(own - rest)
    return float(np.mean(parts)) if parts else float("nan")


def _sorted_order(labels: Sequence[Hashable]) -> list[int] | None:
    """The indices of ``labels`` in sorted order (scikit-learn's ``classes_``), or None if they do not compare."""
    try:
        return sorted(range(len(labels)), key=lambda i: labels[i])  # type: ignore[arg-type,return-value]
    except TypeError:
        return None


def column_order_hint(sums: npt.NDArray[np.float64], counts: npt.NDArray[Any], labels: Sequence[Hashable], *,
                      positive: int | None = None, squares: npt.NDArray[np.float64] | None = None) -> str | None:
    """What to tell a user whose scores read as if meant in another column order (module docstring), or None.
    ``sums`` (K, C): Σ score by true class and column, C = K (a column per class, ``labels`` their order) or
    C = 1 (a binary model's score of class ``positive``; ``squares``, Σ score² likewise, then asks the gap to be
    ``SIGMAS`` standard errors too, so that a model at chance is not told it is below it)."""
    k, columns = sums.shape
    order = _sorted_order(labels)
    if columns == 1:
        if positive is None or k != 2:
            return None
        other = 1 - positive
        n = np.asarray(counts, dtype=np.float64)
        if min(n[positive], n[other]) < MIN_SAMPLES:
            return None
        own, rest = sums[positive, 0] / n[positive], sums[other, 0] / n[other]
        error = 0.0
        if squares is not None:
            spread = np.maximum(squares[[positive, other], 0] / n[[positive, other]] - np.array([own, rest]) ** 2, 0)
            error = float(np.sqrt(spread[0] / n[positive] + spread[1] / n[other]))
        if own - rest >= -max(MARGIN, SIGMAS * error):
            return None
        why = "" if order is None or order == list(range(k)) else (
            f" A two-column predict_proba is read in the order of Monitor.labels {list(labels)!r}; scikit-learn's "
            "columns follow model.classes_ (sorted).")
        return (f"y_score reads lower on the samples of positive class {labels[positive]!r} ({own:.2f} on average) "
                f"than on those of {labels[other]!r} ({rest:.2f}): is it the probability of {labels[positive]!r} "
                f"(Monitor.positive: positive=, else the reference's minority)?{why} Pass "
                f"proba[:, list(model.classes_).index({labels[positive]!r})]")
    if columns != k or order is None:
        return None
    rank = [0] * k
    for position, i in enumerate(order):
        rank[i] = position
    if rank == list(range(k)):
        return None
    stated, by_sorted = separation(sums, counts, range(k)), separation(sums, counts, rank)
    if not (stated < -MARGIN and by_sorted > MARGIN):
        return None
    return (f"y_score's columns, read in the order of Monitor.labels {list(labels)!r}, score each class lower on "
            f"its own samples than on the others' (mean separation {stated:+.2f}); read in sorted order "
            f"{[labels[i] for i in order]!r} (scikit-learn's model.classes_) they score it higher ({by_sorted:+.2f}). "
            "Pass the columns in Monitor.labels order: proba[:, [list(model.classes_).index(c) for c in "
            "monitor.labels]]")
