"""A saved census column as ``ValueCensus.state`` writes it (``streammon.counting.score_census``), read back and
checked: only that form is accepted, so a file accepted saves back byte for byte; and a restored census checked
against the windows saved with it (``check_binned``, ``check_sample``).

>>> values, counts = parsed_column({"values": [0.25, 0.5], "counts": [[2, 0], [0, 1]]}, 0, 3, 2)
>>> values.tolist(), counts.tolist()
([0.25, 0.5], [[2, 0], [0, 1]])
>>> parsed_column({"values": [0.5, 0.25], "counts": [[2, 0], [0, 1]]}, 0, 3, 2)
Traceback (most recent call last):
...
ValueError: a saved score census column 0 must hold finite values in [0, 1], ascending (0.0, never -0.0)
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.score_bins import BINS, score_bins
from streammon.metrics.value_census import CENSUS_LIMIT

if TYPE_CHECKING:
    from streammon.counting.score_census import ValueCensus


def parsed_column(column: Any, index: int, total: int, rows: int,
            ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]] | None:
    """One saved column (``index``; None: closed) as (values (m,), counts (m, ≤ ``rows``)), checked: a list of
    floats ascending (0.0, never -0.0), finite, in [0, 1], at most ``CENSUS_LIMIT``; a list of lists of ints, one a
    value, each value counted, adding up to ``total``."""
    if column is None:
        return None
    if not isinstance(column, dict) or set(column) != {"values", "counts"}:
        raise ValueError(f"a saved score census column {index} must be null or hold values and counts")
    # only the form ``state`` writes (floats; lists of ints), so a file accepted saves back byte for byte
    raw_values, raw_counts = column["values"], column["counts"]
    if not isinstance(raw_values, list) or not set(map(type, raw_values)) <= {float} \
            or not isinstance(raw_counts, list) or not set(map(type, raw_counts)) <= {list} \
            or not set(map(type, chain.from_iterable(raw_counts))) <= {int}:
        raise ValueError(f"a saved score census column {index} must hold a list of floats and a list of lists "
                         "of ints")
    try:
        values = np.asarray(column["values"], dtype=np.float64).reshape(-1)
        counts = np.asarray(column["counts"], dtype=np.int64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"a saved score census column {index} must hold numbers: {exc}") from None
    if counts.size == 0:
        counts = counts.reshape(len(values), 0)
    if len(values) > CENSUS_LIMIT or counts.ndim != 2 or len(counts) != len(values) or counts.shape[1] > rows:
        raise ValueError(f"a saved score census column {index} must hold at most {CENSUS_LIMIT} values, each with "
                         f"a count per class of at most {rows}")
    if not (np.isfinite(values).all() and (values >= 0).all() and (values <= 1).all()) \
            or (np.diff(values) <= 0).any() or np.signbit(values).any():
        raise ValueError(f"a saved score census column {index} must hold finite values in [0, 1], ascending "
                         "(0.0, never -0.0)")
    if (counts < 0).any() or int(counts.sum()) != total or (counts.sum(axis=1) == 0).any():
        raise ValueError(f"a saved score census column {index} must hold counts >= 0 adding up to {total}, each "
                         "value counted")
    return values, counts


def _open_columns(census: ValueCensus) -> Iterator[tuple[int, npt.NDArray[np.float64], npt.NDArray[np.int64]]]:
    """Each open column of a counting ``census``: its index, values (ascending) and counts per class (m, R)."""
    if not census.counting:
        return
    for c in range(census.columns):
        got = census.counted(c)
        if got is not None:
            values = np.asarray(got[0], np.float64)
            counts = np.asarray(got[1], np.int64).reshape(len(values), -1) if len(values) else np.zeros((0, 0), int)
            yield c, values, counts


def check_binned(census: ValueCensus, hist: npt.NDArray[np.signedinteger[Any]]) -> None:
    """``ValueError`` unless ``census``, complete, bins to ``hist`` (K, C, BINS), the histogram of a window that
    holds every sample it counted, in every open column (a census that does not belong to the saved tallies is
    refused)."""
    for c, values, counts in _open_columns(census):
        rows = max(len(hist), counts.shape[1])
        recount = np.zeros((BINS, rows), np.int64)  # per bin and class, the values' counts summed
        np.add.at(recount[:, : counts.shape[1]], score_bins(values), counts)
        window = np.zeros((rows, BINS), np.int64)
        window[: len(hist)] = hist[:, c]
        if not np.array_equal(recount.T, window):
            raise ValueError(f"the saved score census of column {c} does not bin to the cumulative window's histogram")


def check_sample(census: ValueCensus, true: npt.NDArray[np.intp], scores: npt.NDArray[np.float64]) -> None:
    """``ValueError`` unless every open column of ``census`` holds each value of ``scores`` (n, C; samples it
    counted: the monitor's last exact ones) at least as often per class of ``true`` — what a census whose counts
    were moved between values of one bin (its histogram the window's) rarely does."""
    if not len(true):
        return
    for c, values, counts in _open_columns(census):
        m = len(values)
        wanted = scores[:, c] + 0.0
        at = np.minimum(np.searchsorted(values, wanted), max(m - 1, 0))
        if m == 0 or (values[at] != wanted).any() or int(np.max(true)) >= counts.shape[1]:
            raise ValueError(f"the saved score census of column {c} lacks a value of the last exact scores")
        need = np.zeros_like(counts)
        np.add.at(need, (at, true), 1)
        if (need > counts).any():
            raise ValueError(f"the saved score census of column {c} counts a value less often than the last "
                             "exact scores hold it")
