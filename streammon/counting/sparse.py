"""A count matrix as its non-zero cells: the form every count matrix takes in a state file (version 4 on).

``{"cells": [...], "counts": [...]}``: the flat ids (``row * side + column``) of the non-zero cells,
sorted and unique, and their counts (each > 0). A K×K window of a few thousand samples is
as long as its samples, not K²: a Timed bucket at K = 1,000 is tens of kB instead of 3 MB.

>>> m = np.array([[3, 0], [0, 1]])
>>> sparse(m)
{'cells': [0, 3], 'counts': [3, 1]}
>>> dense(sparse(m), 2).tolist()
[[3, 0], [0, 1]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammon.counting.counts import IntMatrix


def sparse(matrix: IntMatrix) -> dict[str, list[int]]:
    """The non-zero cells of a square count matrix (or a vector) and their counts, as plain lists."""
    flat = np.ravel(matrix)
    cells = np.flatnonzero(flat)
    return {"cells": cells.tolist(), "counts": flat[cells].tolist()}


def dense(value: Any, side: int) -> IntMatrix:
    """The ``side × side`` matrix ``sparse`` stored; ``ValueError`` unless its cells fit, sorted, counts > 0.

    >>> dense({"cells": [5], "counts": [1]}, 2)
    Traceback (most recent call last):
    ...
    ValueError: a saved count matrix must hold cells in [0, 4) with counts > 0, sorted and unique
    """
    cells = np.asarray(value["cells"], dtype=np.int64)
    counts = np.asarray(value["counts"], dtype=np.int64)
    if (cells.ndim != 1 or cells.shape != counts.shape
            or (cells.size and (cells[0] < 0 or cells[-1] >= side * side or (np.diff(cells) <= 0).any()
                                or (counts <= 0).any()))):
        raise ValueError(f"a saved count matrix must hold cells in [0, {side * side}) with counts > 0, "
                         "sorted and unique")
    matrix = np.zeros(side * side, np.int64)
    matrix[cells] = counts
    return matrix.reshape(side, side)
