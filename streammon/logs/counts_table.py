"""The bucket-count table — the interchange format between engines — made from rows, and replayed.

**The table** (Arrow schema, one row per (bucket, true class, predicted class) that occurs):

=================  ==========================================  ===========================================
column             type                                        meaning
=================  ==========================================  ===========================================
``bucket_start``   float64 (null: no time)                     start of the time bucket in seconds:
                                                               ``floor(t / width) * width``, with ``t`` the
                                                               row's time in seconds (timestamps: UTC
                                                               seconds since 1970, dates: their midnight)
``true``           the labels' type (int64, bool or string)    true class
``pred``           the same type                               predicted class
``count``          int64, >= 1                                 rows with these values
=================  ==========================================  ===========================================

Float seconds, not a timestamp type, because numeric time columns (seconds since the start of
a test, say) need it too, every engine computes it the same way (IEEE ``floor`` of one division),
and a monitor's times are seconds. Buckets are aligned to multiples of their width from time 0,
like the buckets of timed windows, so counts made by different engines merge by adding ``count``
over equal keys. Rows of the table may come in any order. Made here with numpy
(``counts_from_rows``), by DuckDB (``counts_with_duckdb``) or by Spark
(``streammon.logs.spark.counts_from_spark``).

**Replaying it** (``replay_counts``): buckets in time order; each bucket's rows are regenerated
from its counts (``np.repeat``) and counted at the bucket's start time. Cumulative windows are
exact; timed windows are exact to a bucket — exact when the table's bucket width divides every
timed window's bucket width (``Timed(3600)`` has 60 s buckets: tables of 60 s, 30 s, 10 s …);
snapshots every duration are exact when ``every`` is a multiple of the width. Sliding-by-count
windows need the rows' order, which counts do not keep: use ``replay`` on the rows for those.
Inside a bucket the regenerated rows are interleaved evenly — every class's right and wrong
predictions spread over the bucket in proportion — so the degradation detector, which steps per
256 rows, reads each step at the bucket's own per-class rates: in effect stepped per bucket, and
the order invents no run of errors that the counts do not hold (its false-alarm bound stands). A
given ``reference`` makes a replay independent of the order; a learned warm-up reference is
learned from the first regenerated rows.

>>> import pyarrow as pa
>>> rows = pa.table({"t": [0.0, 10.0, 70.0], "y": [0, 1, 1], "p": [0, 1, 0]})
>>> table = counts_from_rows(rows, true="y", pred="p", time="t", bucket=60)
>>> table.to_pylist()
[{'bucket_start': 0.0, 'true': 0, 'pred': 0, 'count': 1}, {'bucket_start': 0.0, 'true': 1, 'pred': 1, 'count': 1}, \
{'bucket_start': 60.0, 'true': 1, 'pred': 0, 'count': 1}]
>>> replay_counts(table, reference={0: 1, 1: 1}).report.windows["cumulative"].n
3
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from streammon.counting.windows import Window
from streammon.detection.baseline import DetectorSettings
from streammon.findings.distortion import Policy
from streammon.logs.columns import Where, is_time_type, labels, seconds
from streammon.logs.errors import ReplayError
from streammon.logs.feed import Every, OnSnapshot, Replayer, duration_seconds, replay_monitor
from streammon.logs.result import ReplayResult
from streammon.logs.sources import BATCH_ROWS, file_parts, guarded, in_memory, open_log, table_part
from streammon.monitor import Monitor

COUNTS_COLUMNS = ("bucket_start", "true", "pred", "count")
PIECE = 1 << 16  # rows regenerated at once inside a bucket


def counts_schema(label_type: Any) -> Any:
    """The Arrow schema of a bucket-count table whose labels have ``label_type``."""
    import pyarrow as pa

    return pa.schema([pa.field("bucket_start", pa.float64()), pa.field("true", label_type, nullable=False),
                      pa.field("pred", label_type, nullable=False), pa.field("count", pa.int64(), nullable=False)])


def bucket_starts(times: np.ndarray, width: float) -> np.ndarray:
    """``floor(t / width) * width``: the bucket start of every time (what every engine computes)."""
    return np.floor(times / width) * width


def counts_from_rows(source: Any, *, true: str, pred: str, time: str | None = None, bucket: float | str = 60.0,
                     batch_rows: int = BATCH_ROWS) -> Any:
    """The bucket-count table of a log (any source ``replay`` reads), counted with numpy in bounded memory
    (the rows need not be in time order); sorted by bucket, then labels."""
    import pyarrow as pa

    width = duration_seconds(bucket)
    log = open_log(source, true=true, pred=pred, time=time, batch_rows=batch_rows)
    totals: dict[tuple[Any, Any, Any], int] = {}
    for chunk in log.chunks(ordered=False):
        codes, uniques = _codes(np.concatenate([chunk.true, chunk.pred]))
        k, n = len(uniques), len(chunk.true)
        key = codes[:n] * k + codes[n:]
        if chunk.times is not None:
            starts, bucket_codes = np.unique(bucket_starts(chunk.times, width), return_inverse=True)
            key = bucket_codes.reshape(-1) * (k * k) + key
        cells, counts = np.unique(key, return_counts=True)
        for cell, count in zip(cells.tolist(), counts.tolist(), strict=True):
            b, rest = divmod(cell, k * k)
            name = (None if chunk.times is None else float(starts[b]), uniques[rest // k], uniques[rest % k])
            totals[name] = totals.get(name, 0) + count
    label_type = {"int": pa.int64(), "bool": pa.bool_(), "str": pa.string()}[log.label_kind]
    keys = list(totals)
    table = pa.table([pa.array([b for b, _, _ in keys], pa.float64()), pa.array([t for _, t, _ in keys], label_type),
                      pa.array([p for _, _, p in keys], label_type), pa.array(list(totals.values()), pa.int64())],
                     schema=counts_schema(label_type))
    return table.sort_by([("bucket_start", "ascending"), ("true", "ascending"), ("pred", "ascending")])


def _codes(values: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """Integer codes of a label array and the labels they stand for (Python values)."""
    uniques, inverse = np.unique(values, return_inverse=True)
    return inverse.reshape(-1), [u.item() if isinstance(u, np.generic) else u for u in uniques]


def load_counts(source: Any) -> tuple[str, Any]:
    """A counts table from a path (Parquet, CSV, Arrow IPC), an Arrow table or a DataFrame, columns checked."""
    import pyarrow as pa

    columns = list(COUNTS_COLUMNS)
    if isinstance(source, (str, os.PathLike)):
        name, parts = str(source), file_parts(Path(source), columns, BATCH_ROWS)
    else:
        name, table = in_memory(source, columns)
        parts = [table_part(name, table, columns, BATCH_ROWS)]
    tables = []
    for part in parts:
        missing = [c for c in columns if c not in part.schema.names]
        if missing:
            raise ReplayError(f"a counts table needs the columns {', '.join(columns)}", file=part.name,
                              column=missing[0])
        bucket_type = part.schema.field("bucket_start").type
        if not (is_time_type(bucket_type) or pa.types.is_null(bucket_type)):
            raise ReplayError(f"type {bucket_type} cannot be a bucket start: expected seconds or timestamps",
                              file=part.name, column="bucket_start")
        batches = list(guarded(part, lambda: 0))
        tables.append(pa.Table.from_batches(batches).select(columns) if batches else
                      pa.table({c: pa.array([], part.schema.field(c).type) for c in columns}))
    table = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
    return name, table


def expand(buckets: np.ndarray | None, true: np.ndarray, pred: np.ndarray, counts: np.ndarray,
           rows: int = BATCH_ROWS) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """Regenerate rows from counts, bucket by bucket in time order, interleaved evenly inside each bucket.

    >>> [(t.tolist(), p.tolist(), s.tolist()) for t, p, s in expand(np.array([0.0, 0.0, 60.0]),
    ...     np.array([0, 1, 1]), np.array([0, 1, 0]), np.array([2, 2, 1]))]
    [([0, 1, 0, 1, 1], [0, 1, 0, 1, 0], [0.0, 0.0, 0.0, 0.0, 60.0])]
    """
    order = np.argsort(buckets, kind="stable") if buckets is not None else np.arange(len(counts))
    true, pred, counts = true[order], pred[order], counts[order]
    if buckets is not None:
        buckets = buckets[order]
        edges = [0, *(np.flatnonzero(buckets[1:] != buckets[:-1]) + 1).tolist(), len(counts)]
    else:
        edges = [0, len(counts)]
    pending: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []
    held = 0
    for lo, hi in itertools.pairwise(edges):
        cell_counts = counts[lo:hi]
        total = int(cell_counts.sum())
        pieces = -(-total // PIECE)
        for p in range(pieces):
            share = cell_counts * (p + 1) // pieces - cell_counts * p // pieces
            cells = lo + _interleave(share)
            when = None if buckets is None else np.full(len(cells), buckets[lo])
            pending.append((true[cells], pred[cells], when))
            held += len(cells)
            if held >= rows:
                yield _join(pending)
                pending, held = [], 0
    if pending:
        yield _join(pending)


def _interleave(counts: np.ndarray) -> np.ndarray:
    """Cell indices, ``counts[i]`` of cell ``i``, spread evenly: the j-th of cell i sits at (j + ½) / counts[i]."""
    cells = np.repeat(np.arange(len(counts)), counts)
    rank = np.arange(len(cells)) - np.repeat(np.cumsum(counts) - counts, counts)
    return cells[np.argsort((rank + 0.5) / np.repeat(counts, counts), kind="stable")]


def _join(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]]) -> tuple[np.ndarray, np.ndarray,
                                                                                  np.ndarray | None]:
    times = None if parts[0][2] is None else np.concatenate([p[2] for p in parts])
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), times


def replay_counts(
    source: Any,
    *,
    every: str | int | None = None,
    windows: Iterable[Window] | None = None,
    reference: Mapping[Any, Any] | None = None,
    baseline: Any = None,
    positive: Any = None,
    detector: DetectorSettings | None = None,
    policy: Policy | None = None,
    monitor: Monitor | None = None,
    on_snapshot: OnSnapshot | None = None,
    text_labels: bool = False,
) -> ReplayResult:
    """Replay a bucket-count table (a path, an Arrow table or a DataFrame with ``COUNTS_COLUMNS``).

    Arguments as for ``replay``; see the module docstring for what is exact. A table whose
    ``bucket_start`` is all null has no times: one bucket, no timed windows.
    """
    name, table = load_counts(source)
    bucket_column = table.column("bucket_start").combine_chunks()
    timed = bucket_column.null_count < len(bucket_column)
    true = labels(table.column("true").combine_chunks(), Where(name, "true", 0))
    pred = labels(table.column("pred").combine_chunks(), Where(name, "pred", 0))
    counts = _counts(table.column("count").combine_chunks(), Where(name, "count", 0))
    buckets = seconds(bucket_column, Where(name, "bucket_start", 0)) if timed else None
    every_ = Every.parse(every, timed=timed)
    kind = "str" if true.dtype == object else ("bool" if true.dtype.kind == "b" else "int")
    fed = replay_monitor(monitor, timed=timed, windows=windows, reference=reference, baseline=baseline,
                         positive=positive, label_kind=kind, text_labels=text_labels, detector=detector,
                         policy=policy)
    replayer = Replayer(fed, every_, timed=timed, on_snapshot=on_snapshot)
    for y, p, t in expand(buckets, true, pred, counts):
        replayer.feed(y, p, t, name, 0)
    if not replayer.samples:
        raise ReplayError("the counts table holds no rows", file=name)
    return replayer.finish(name)


def _counts(array: Any, where: Where) -> np.ndarray:
    import pyarrow as pa

    if not pa.types.is_integer(array.type):
        raise where.error(f"type {array.type} cannot be a count: expected integers")
    if array.null_count:
        raise where.error("null count", int(np.flatnonzero(np.asarray(array.is_null()))[0]))
    counts = array.to_numpy().astype(np.int64)
    if (counts < 1).any():
        bad = int(np.flatnonzero(counts < 1)[0])
        raise where.error(f"count {counts[bad]} is not >= 1", bad)
    return counts  # type: ignore[no-any-return]
