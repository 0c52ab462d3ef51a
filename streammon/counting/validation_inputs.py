"""The checks of a validation set's inputs (``Validation``): labels, the class order, the positive class, and the
scores as (n, K) probabilities in that order. Each refusal names the value and what was expected."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from streammon.counting.classes import check_label
from streammon.counting.score_input import SUM_TOLERANCE, check_column_names
from streammon.metrics.confusion import FloatArray

ROW_TOLERANCE = SUM_TOLERANCE  # |Σ_k s_k − 1| per row of K > 2 scores: the monitor's, so both take the same rows


def labels_of(values: Any, name: str) -> list[Any]:
    if isinstance(values, (str, bytes)) or np.ndim(values) != 1:
        raise TypeError(f"{name} must be a 1-D sequence of class labels, got {values!r:.80}")
    out = list(np.asarray(values, dtype=object))
    if not out:
        raise ValueError(f"{name} is empty: a validation set needs samples")
    return out


def class_order(true: list[Hashable], pred: list[Hashable], classes: Sequence[Any] | None) -> tuple[Hashable, ...]:
    seen = set(true) | set(pred)
    if classes is None:
        try:
            labels = tuple(sorted(seen))  # type: ignore[type-var]
        except TypeError:
            raise TypeError(f"the labels {sorted(seen, key=repr)} do not sort: give their order as classes=") from None
    else:
        labels = tuple(check_label(c) for c in classes)
        if len(set(labels)) != len(labels):
            raise ValueError(f"classes must be distinct, got {list(classes)}")
        unknown = seen - set(labels)
        if unknown:
            raise ValueError(f"labels {sorted(unknown, key=repr)} are not in classes={list(classes)}")
    if len(labels) < 2:
        raise ValueError(f"a validation set needs at least 2 classes, got {list(labels)}")
    return labels


def positive_index(labels: tuple[Hashable, ...], present: Any, positive: Any) -> int | None:
    if len(labels) > 2:
        if positive is not None:
            raise ValueError(f"positive= is for binary scores; there are {len(labels)} classes")
        return None
    if positive is None:
        return int(np.argmin(present))  # the validation's minority class, as the monitor's default (seed 004)
    label = check_label(positive)
    if label not in labels:
        raise ValueError(f"positive={positive!r} is not one of the classes {list(labels)}")
    return labels.index(label)


def score_matrix(y_score: Any, n: int, k: int, labels: tuple[Hashable, ...], positive: int | None) -> FloatArray:
    """Scores as (n, K) probabilities in the class order (a binary (n,) score is the positive class's)."""
    if np.asarray(y_score).dtype.kind == "b":  # as the monitor refuses them: decisions, not scores
        raise TypeError("y_score must be probabilities, got booleans (decisions, not scores: a bool is no probability)")
    try:
        s = np.asarray(y_score, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"y_score must be numbers, got {y_score!r:.80}") from None
    shape = "(n,) scores of the positive class or (n, 2)" if k == 2 else f"(n, {k}) in the order {list(labels)}"
    if s.ndim not in (1, 2) or (s.ndim == 1 and k != 2) or (s.ndim == 2 and s.shape[1] != k) or s.shape[0] != n:
        raise ValueError(f"y_score must be {shape} with n = {n}, got shape {s.shape}")
    if s.ndim == 2:  # a DataFrame's column names must be the classes, in order
        check_column_names(y_score, labels)
    bad = ~np.isfinite(s) | (s < 0.0) | (s > 1.0)
    if bad.any():
        where = np.argwhere(bad)[0]
        raise ValueError(f"y_score must be probabilities in [0, 1], got {float(s[tuple(where)])!r} at "
                         f"{tuple(where.tolist())}")
    if s.ndim == 1:
        out = np.empty((n, 2))
        out[:, positive or 0] = s
        out[:, 1 - (positive or 0)] = 1.0 - s
        return out
    rows = np.abs(s.sum(axis=1) - 1.0)
    if np.any(rows > ROW_TOLERANCE):
        i = int(np.argmax(rows))
        raise ValueError(f"each y_score row must sum to 1 (within {ROW_TOLERANCE}); row {i} sums to "
                         f"{float(s[i].sum())!r}")
    return s
