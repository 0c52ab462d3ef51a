"""A batch's two label columns for ``update_many`` (``streammon.intake``): validated, equal in length, and encoded
against the class index — dictionary-encoded columns one used category at a time, anything else label by label.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from streammon.counting.coded import as_coded, map_coded
from streammon.counting.counts import ClassIndex
from streammon.counting.labels import IndexArray, as_label_array, code_labels


class _Encoder:
    """A batch's two label columns, validated, and their encoding against a class index: dictionary-encoded
    columns (pandas categorical, Arrow dictionary) one used category at a time (``streammon.counting.coded``),
    anything else by ``code_labels``. Coded columns the category path refuses are judged again label by label,
    so the error names the sample."""

    def __init__(self, y_true: Any, y_pred: Any) -> None:
        coded_true, coded_pred = as_coded(y_true), as_coded(y_pred)
        self._coded = None if coded_true is None or coded_pred is None else (coded_true, coded_pred)
        self._labels: tuple[np.ndarray, np.ndarray] | None = None
        if self._coded is None:
            self._labels = (as_label_array(y_true, "y_true"), as_label_array(y_pred, "y_pred"))
        sizes = [len(column) for column in self._coded or self._labels or ()]
        if sizes[0] != sizes[1]:
            raise ValueError(f"y_true and y_pred must have the same length, got {sizes[0]} and {sizes[1]}")
        self.size = sizes[0]

    def __call__(self, index: ClassIndex) -> tuple[IndexArray, IndexArray, IndexArray | None, list[Hashable]]:
        if self._coded is not None:
            try:
                true_idx, pred_idx, new = map_coded(*self._coded, index)
                return true_idx, pred_idx, None, new
            except (ValueError, TypeError):  # judged label by label, from now on (unchanged if that refuses too:
                # a second call, under the lock, says the same)
                labels = (as_label_array(self._coded[0].labels(), "y_true"),
                          as_label_array(self._coded[1].labels(), "y_pred"))
                self._coded, self._labels = None, labels
        assert self._labels is not None
        return code_labels(*self._labels, index)
