"""The quantities every metric reads from a confusion matrix, computed once.

Notation follows ``shared/design/METRICS.md``: rows are the true class, columns the
predicted class; ``n_i`` is the true count of class ``i`` (row sum), ``k_i`` the
predicted count (column sum), ``n`` the total.

Zero-division policy (one for the whole package): a ratio of counts whose
denominator is 0 is **NaN** — undefined, never a silent 0. A mean of rates that
are all defined is always defined: harmonic and geometric means with a zero
component take their limit, 0.

>>> c = Confusion.of([[8, 2], [1, 9]])
>>> c.recalls.tolist()
[0.8, 0.9]
>>> safe_divide(0.0, 0.0)
nan
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def safe_divide(numerator: float, denominator: float) -> float:
    """Return ``numerator / denominator``, or NaN when the denominator is 0.

    >>> safe_divide(1.0, 4.0)
    0.25
    >>> safe_divide(3.0, 0.0)
    nan
    """
    if denominator == 0.0 or math.isnan(denominator):
        return math.nan
    return numerator / denominator


def divide_arrays(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """Element-wise ``numerator / denominator`` with NaN where the denominator is 0.

    >>> divide_arrays(np.array([1.0, 0.0, 3.0]), np.array([2.0, 0.0, np.nan])).tolist()
    [0.5, nan, nan]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(denominator == 0, math.nan, numerator / denominator)
    return out


def as_matrix(cm: Any) -> FloatArray:
    """Validate ``cm`` as a square matrix of finite non-negative counts.

    Integer counts and the real-valued matrices made by ``reweight`` are both
    accepted; a row of NaN (a class whose rates are unknown) is allowed.

    >>> as_matrix([[1, 2], [3, 4]]).shape
    (2, 2)
    >>> as_matrix([[1, 2, 3]])
    Traceback (most recent call last):
    ...
    ValueError: confusion matrix must be square K×K (rows = true class, columns = predicted), got shape (1, 3)
    """
    try:
        m = np.asarray(cm, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"confusion matrix must be a K×K array of counts, got {cm!r}") from exc
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(
            "confusion matrix must be square K×K (rows = true class, columns = predicted), "
            f"got shape {m.shape}"
        )
    finite = m[~np.isnan(m)]
    if np.any(finite < 0) or np.any(np.isinf(finite)):
        raise ValueError(f"confusion matrix counts must be finite and >= 0, got {m.tolist()}")
    return m


@dataclass(frozen=True)
class Confusion:
    """A validated K×K confusion matrix with its margins and per-class rates.

    ``present`` marks the classes with at least one true sample (``n_i > 0``);
    recall-based indices are computed over those classes only (METRICS.md,
    "absent classes"). A class whose row is NaN (unknown rates after prior
    correction) is not absent: it makes every index that needs it NaN.
    """

    matrix: FloatArray
    true_counts: FloatArray  # n_i
    predicted_counts: FloatArray  # k_i
    total: float  # n
    present: npt.NDArray[np.bool_]
    recalls: FloatArray  # r_i (NaN for absent classes)

    @classmethod
    def of(cls, cm: Any) -> Confusion:
        """Prepare ``cm`` (any K×K array-like of counts)."""
        m = as_matrix(cm)
        n_i = m.sum(axis=1)
        k_i = m.sum(axis=0)
        present = ~(n_i == 0)  # NaN rows count as present (unknown, not absent)
        recalls = divide_arrays(np.diagonal(m).copy(), n_i)
        return cls(m, n_i, k_i, float(m.sum()), present, recalls)

    @property
    def k(self) -> int:
        """The number of rows K (known classes, present or not)."""
        return int(self.matrix.shape[0])

    @property
    def n_present(self) -> int:
        """C: the number of classes present."""
        return int(self.present.sum())

    def present_recalls(self) -> FloatArray:
        """The recalls of the classes present, in class order."""
        return self.recalls[self.present]
