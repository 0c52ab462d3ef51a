"""Dictionary-encoded label columns: each distinct label mapped once, not once per sample.

A pandas ``Categorical`` (or a Series of dtype ``category``) and a pyarrow
``DictionaryArray`` hold a column as small integer codes into its categories. Such a
column's labels are validated and looked up once per *used* category, and the
samples' class indices are one gather of the codes — what makes string labels as
cheap as integer ones on the batch path (replayed Parquet string columns arrive
dictionary-encoded). Anything else, and any column with a missing value, is left to
``streammon.counting.labels``, whose errors name the sample.

>>> from streammon.counting.counts import ClassIndex
>>> idx = ClassIndex(["b"])
>>> true = Coded(np.array([1, 0, 1]), np.array(["b", "a", "unused"], dtype=object))
>>> pred = Coded(np.array([0, 0, 0]), np.array(["c"], dtype=object))
>>> t, p, new = map_coded(true, pred, idx)
>>> t.tolist(), p.tolist(), new   # new labels in first-seen order: "a" (true of sample 0), then "c"
([1, 0, 1], [2, 2, 2], ['a', 'c'])
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammon.counting.counts import ClassIndex
from streammon.counting.labels import IndexArray, as_label_array, label_kinds, map_one, settle_new


@dataclass(frozen=True)
class Coded:
    """A label column as ``categories[codes]`` (codes: non-negative ints, each below ``len(categories)``)."""

    codes: np.ndarray
    categories: np.ndarray

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, rows: slice) -> Coded:
        return Coded(self.codes[rows], self.categories)

    def labels(self) -> np.ndarray:
        """The labels, one per sample (materialised)."""
        out: np.ndarray = self.categories[self.codes]
        return out

    def tolist(self) -> list[Any]:
        out: list[Any] = self.labels().tolist()
        return out


def as_coded(values: Any) -> Coded | None:
    """``values`` as codes and categories when it is a dictionary-encoded column with no missing value (pandas
    or pyarrow, recognised without importing either); None otherwise."""
    if isinstance(values, Coded):
        return values
    try:
        if hasattr(values, "indices") and hasattr(values, "dictionary"):  # pyarrow DictionaryArray
            if values.null_count or values.dictionary.null_count:
                return None
            codes = np.asarray(values.indices.to_numpy(zero_copy_only=False))
            categories = np.asarray(values.dictionary.to_numpy(zero_copy_only=False))
        else:
            categorical = getattr(values, "cat", values)  # a category Series' accessor, or a Categorical
            if not (hasattr(categorical, "codes") and hasattr(categorical, "categories")):
                return None
            codes = np.asarray(categorical.codes)
            categories = np.asarray(categorical.categories)
    except (AttributeError, TypeError, ValueError):
        return None
    if codes.ndim != 1 or codes.dtype.kind not in "iu" or (len(codes) and int(codes.min()) < 0):
        return None  # a missing value (code -1): the general path names the sample
    if len(codes) and int(codes.max()) >= len(categories):
        raise ValueError(f"a code {int(codes.max())} points past the {len(categories)} categories of the column")
    return Coded(codes, categories)


def map_coded(truth: Coded, preds: Coded, index: ClassIndex) -> tuple[IndexArray, IndexArray, list[Hashable]]:
    """Class indices of two coded columns and the new labels, as ``map_labels`` gives for their labels."""
    pending: dict[Hashable, int] = {}
    kinds: set[str] = set()
    out = []
    # (Mutation testing: not mutated, two lines whose mutants are all equivalent — ``what`` only names an error,
    # and every error here is judged again label by label by the caller (``streammon.intake``), whose message
    # names the sample; the fill value of ``ids`` is read for no sample, since only used categories are looked
    # up. The kind and pending mutants that survive fail over to that same path: equivalent too.)
    for column, what in ((truth, "y_true"), (preds, "y_pred")):  # pragma: no mutate
        used = np.bincount(column.codes, minlength=len(column.categories)) > 0
        labels = as_label_array(column.categories[used], f"{what} categories")
        ids = np.full(len(column.categories), -1, np.intp)  # pragma: no mutate
        ids[used] = map_one(labels, index, pending)
        kinds |= label_kinds(labels) if index.declared else set()
        out.append(ids[column.codes])
    return settle_new(out[0], out[1], pending, index, lambda: kinds)
