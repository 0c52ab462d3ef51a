"""Hypothesis strategies shared by the tests (one module, as STYLE.md asks)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


@st.composite
def confusion_matrices(draw: st.DrawFn, *, k_min: int = 2, k_max: int = 6, all_present: bool = True,
                       max_count: int = 60) -> np.ndarray:
    """A K×K integer confusion matrix; with ``all_present`` every class has a true sample."""
    k = draw(st.integers(k_min, k_max))
    m = draw(hnp.arrays(np.int64, (k, k), elements=st.integers(0, max_count)))
    if all_present:
        empty = m.sum(axis=1) == 0
        m[empty, np.flatnonzero(empty)] = 1  # one correct sample for any empty row
    return m


def row_scales(k: int) -> st.SearchStrategy[list[float]]:
    """Positive factors for rescaling the rows of a K×K matrix (Condition 1)."""
    return st.lists(st.floats(0.05, 20.0, allow_nan=False), min_size=k, max_size=k)


LABEL_POOLS = {
    "str": ["legit", "fraud", "spam", "ham", "review"],
    "int": [0, 1, 2, 3, 4],
    "bool": [False, True],
}


@st.composite
def label_streams(draw: st.DrawFn, *, max_size: int = 300) -> tuple[list[object], list[object]]:
    """Two equal-length label lists drawn from one pool (str, int or bool)."""
    pool = LABEL_POOLS[draw(st.sampled_from(sorted(LABEL_POOLS)))]
    k = draw(st.integers(1, len(pool)))
    size = draw(st.integers(0, max_size))
    labels = st.sampled_from(pool[:k])
    truth = draw(st.lists(labels, min_size=size, max_size=size))
    preds = draw(st.lists(labels, min_size=size, max_size=size))
    return truth, preds
