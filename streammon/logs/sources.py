"""Open a log — Parquet (a file or a folder of files), CSV, Arrow IPC, an Arrow table, a pandas or polars
DataFrame — as numpy chunks of (true labels, predicted labels, times), in bounded memory.

Files are read a record batch at a time (``batch_rows`` rows; Parquet a row group at a time), so
memory does not grow with the file. A folder is read file by file in path order (files starting
with ``_`` or ``.``, such as Spark's ``_SUCCESS`` and ``.crc``, are skipped). Each file's columns are
checked before its first row is read; every problem raises ``ReplayError`` naming the file, the
column and, where there is one, the row. Rows must be in time order across files too.

>>> import pyarrow as pa
>>> log = open_log(pa.table({"y": [0, 1, 1], "p": [0, 1, 0]}), true="y", pred="p")
>>> [(c.true.tolist(), c.pred.tolist(), c.times) for c in log.chunks()]
[([0, 1, 1], [0, 1, 0], None)]
>>> log.label_kind, log.name
('int', '<Arrow table>')
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from streammon.counting.coded import Coded
from streammon.logs.columns import (
    DictionaryCache,
    Where,
    check_names,
    check_order,
    check_types,
    kind_text,
    label_column,
    label_kind,
    labels,
    numbers,
    seconds,
)
from streammon.logs.csv_source import csv_part, slices
from streammon.logs.errors import ReplayError
from streammon.logs.ipc_limits import check_ipc
from streammon.logs.limits import checked_batches
from streammon.logs.prefetch import prefetched

BATCH_ROWS = 1 << 20
PARQUET = (".parquet", ".parq", ".pq")
CSV = (".csv", ".csv.gz", ".csv.bz2", ".csv.zst")
IPC = (".arrow", ".arrows", ".feather", ".ipc")


@dataclass(frozen=True)
class Chunk:
    """Consecutive rows of one file as arrays ``update_many`` takes; ``first_row`` is the file's row of the first."""

    true: np.ndarray | Coded
    pred: np.ndarray | Coded
    times: np.ndarray | None
    file: str
    first_row: int
    scores: np.ndarray | None = None  # the score columns' values, (n,) for one column, (n, C) for several


@dataclass(frozen=True)
class Part:
    """One file (or in-memory table) of a log: its name, Arrow schema and record batches."""

    name: str
    schema: Any
    batches: Callable[[], Iterator[Any]]


class Log:
    """A log opened for replay: the parts in order and the columns to read from each."""

    def __init__(self, name: str, parts: list[Part], *, true: str, pred: str, time: str | None,
                 score: tuple[str, ...] = ()) -> None:
        self.name = name
        self.parts = parts
        self.true, self.pred = true, pred
        self.score = score
        self.columns = {"true": true, "pred": pred, "time": time, **score_roles(score)}
        kinds = set()
        for part in parts:
            check_types(part.schema, self.columns, part.name)
            kinds.add((label_kind(part.schema.field(true).type), label_kind(part.schema.field(pred).type)))
        if len(kinds) > 1:
            raise ReplayError(f"label types differ between files or between the true and predicted columns: "
                              f"{sorted(kinds)}", file=name)
        true_kind, pred_kind = kinds.pop() if kinds else ("int", "int")
        if true_kind != pred_kind:
            schema = parts[0].schema
            raise ReplayError(f"the true column {true!r} holds {kind_text(schema.field(true).type)} but the predicted "
                              f"column {pred!r} holds {kind_text(schema.field(pred).type)}", file=name,
                              column=pred if true_kind == "str" else true)
        self.label_kind: str = true_kind or "int"

    def chunks(self, *, ordered: bool = True, coded: bool = False) -> Iterator[Chunk]:
        """The rows as numpy chunks, checked (nulls, types and, if ``ordered``, time order) as they are read;
        with ``coded``, string labels stay dictionary codes (``Coded``, for ``update_many``)."""
        rows = read_columns(self.parts, (self.true, self.pred), self.columns["time"], ordered=ordered,
                            read=label_column if coded else labels, extra=self.score)
        for (y, p, *more), times, file, row in rows:
            yield Chunk(y, p, times, file, row, stacked(more))


def score_roles(score: tuple[str, ...]) -> dict[str, str]:
    """The score columns as ``check_types`` takes them (``score 1``, ``score 2``, ...: each must hold numbers),
    in the order given: a binary model's positive-class column, or K columns in the monitor's class order."""
    return {f"score {i + 1}": column for i, column in enumerate(score)}


def stacked(columns: list[np.ndarray]) -> np.ndarray | None:
    """The score columns read for a chunk as ``y_score`` takes them: None without any, (n,) for one column,
    (n, K) for several (columns in the order given, which the monitor checks against its classes' count)."""
    return None if not columns else columns[0] if len(columns) == 1 else np.column_stack(columns)


ReadColumn = Callable[[Any, Where, DictionaryCache], "np.ndarray | Coded"]


def read_columns(parts: list[Part], names: tuple[str, str], time: str | None, *, ordered: bool = True,
                 read: ReadColumn | tuple[ReadColumn, ReadColumn] = labels, extra: tuple[str, ...] = (),
                 ) -> Iterator[tuple[tuple[Any, ...], np.ndarray | None, str, int]]:
    """Each non-empty batch of ``parts`` as ``((first, second), times, file, first_row)``: the two
    columns ``names`` read by ``read`` (one reader for both, or one each; nulls and types checked), the
    times in seconds (in order, if ``ordered``; None without a time column). The ``extra`` columns (scores) follow
    the two as float64 arrays, nulls refused."""
    readers = read if isinstance(read, tuple) else (read, read)
    last = -math.inf
    for part in parts:
        caches = (DictionaryCache(), DictionaryCache())
        row = 0
        for batch in guarded(part, lambda: row):  # noqa: B023 (read at once, within this iteration)
            n = batch.num_rows
            pair = tuple(reader(batch.column(name), Where(part.name, name, row), cache)
                         for reader, name, cache in zip(readers, names, caches, strict=True))
            times = None
            if time is not None:
                where = Where(part.name, time, row)
                times = seconds(batch.column(time), where)
                if ordered:
                    check_order(times, last, where)
                if n:
                    last = float(times[-1])
            if n:
                more = tuple(numbers(batch.column(name), Where(part.name, name, row)) for name in extra)
                yield (pair[0], pair[1], *more), times, part.name, row
            row += n


def guarded(part: Part, rows_read: Callable[[], int]) -> Iterator[Any]:
    """The part's batches, with a reading failure (a truncated or corrupt file) named by file and row."""
    import pyarrow as pa

    iterator = prefetched(part.batches)
    while True:
        try:
            batch = next(iterator)
        except StopIteration:
            return
        except ReplayError:
            raise
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise ReplayError(f"cannot read the rows after row {rows_read()}: {exc}", file=part.name,
                              row=rows_read()) from exc
        yield batch


def open_log(source: Any, *, true: str, pred: str, time: str | None = None, batch_rows: int = BATCH_ROWS,
             score: tuple[str, ...] = ()) -> Log:
    """A ``Log`` of ``source``: a path (Parquet file or folder, CSV, Arrow IPC), an Arrow table,
    record batch or reader, a pandas DataFrame, or anything exporting an Arrow stream (polars); ``score``: the
    columns of the model's scores, read beside the labels."""
    name, parts = open_parts(source, [true, pred, time, *score], batch_rows, time)
    return Log(name, parts, true=true, pred=pred, time=time, score=score)


def open_parts(source: Any, names: list[str | None], batch_rows: int, time: str | None) -> tuple[str, list[Part]]:
    """The name and parts of ``source`` (as ``open_log`` takes it), reading the columns ``names`` (None skipped)."""
    columns = [c for c in dict.fromkeys(names) if c is not None]
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        return str(path), file_parts(path, columns, batch_rows, time)
    name, table = in_memory(source, columns)
    return name, [table_part(name, table, columns, batch_rows)]


def _format(path: Path) -> str:
    name = path.name.lower()
    for fmt, suffixes in (("parquet", PARQUET), ("csv", CSV), ("ipc", IPC)):
        if name.endswith(suffixes):
            return fmt
    raise ReplayError(f"unknown log format: expected a name ending in one of {PARQUET + CSV + IPC}", file=str(path))


def file_parts(path: Path, columns: list[str], batch_rows: int, time: str | None = None) -> list[Part]:
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(("_", "."))
                       and not any(q.startswith(("_", ".")) for q in p.relative_to(path).parts[:-1]))
        if not files:
            raise ReplayError("the folder holds no log files", file=str(path))
        formats = {_format(p) for p in files}
        if len(formats) > 1:
            raise ReplayError(f"the folder mixes formats {sorted(formats)}", file=str(path))
    elif path.is_file():
        files = [path]
    else:
        raise ReplayError("no such file or folder", file=str(path))
    fmt = _format(files[0])
    if fmt == "csv":
        return [Part(str(p), *csv_part(str(p), columns, batch_rows, time)) for p in files]
    opener = _parquet_part if fmt == "parquet" else _ipc_part
    return [opener(str(p), columns, batch_rows) for p in files]


def _parquet_part(name: str, columns: list[str], batch_rows: int) -> Part:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(name)
        metadata = pq.read_metadata(name)
    except (pa.ArrowException, OSError) as exc:
        raise ReplayError(f"not a readable Parquet file (truncated or corrupt?): {exc}", file=name) from exc
    check_names(schema.names, name, columns)
    strings = [c for c in columns if c in schema.names and label_kind(schema.field(c).type) == "str"]

    def batches() -> Iterator[Any]:
        parquet = pq.ParquetFile(name, read_dictionary=strings, memory_map=False, pre_buffer=False)
        read = parquet.iter_batches(batch_size=batch_rows, columns=columns, use_threads=True)
        yield from checked_batches(name, metadata, [c for c in columns if c in schema.names], read, batch_rows)

    return Part(name, schema, batches)


def _ipc_part(name: str, columns: list[str], batch_rows: int) -> Part:
    import pyarrow as pa

    def reader() -> Any:
        source = pa.memory_map(name)  # IPC batches are read in place: mapped pages, not copies
        try:
            return pa.ipc.open_file(source)
        except pa.ArrowInvalid:
            source.seek(0)
            return pa.ipc.open_stream(source)

    try:
        schema = reader().schema
        check_names(schema.names, name, columns)
        check_ipc(name, schema, columns)
    except (pa.ArrowException, OSError, ValueError) as exc:
        if isinstance(exc, ReplayError):
            raise
        raise ReplayError(f"not a readable Arrow IPC file (truncated or corrupt?): {exc}", file=name) from exc

    def batches() -> Iterator[Any]:
        opened = reader()
        stream = (opened.get_batch(i) for i in range(opened.num_record_batches)) if hasattr(
            opened, "get_batch") else iter(opened)
        for batch in stream:
            yield from slices(batch.select(columns), batch_rows)

    return Part(name, schema, batches)


def in_memory(source: Any, columns: list[str]) -> tuple[str, Any]:
    """A name and an Arrow table (or reader) for an in-memory source."""
    import pyarrow as pa

    if isinstance(source, pa.Table):
        return "<Arrow table>", source
    if isinstance(source, pa.RecordBatch):
        return "<Arrow record batch>", pa.Table.from_batches([source])
    if isinstance(source, pa.RecordBatchReader):
        return "<Arrow stream>", source
    module = type(source).__module__.split(".")[0]
    if module == "pandas" and hasattr(source, "columns"):
        check_names(list(source.columns), "<pandas DataFrame>", columns)
        missing = [c for c in columns if c not in source.columns]
        if missing:
            raise ReplayError(f"no column {missing[0]!r}; the DataFrame has {list(source.columns)[:20]}",
                              file="<pandas DataFrame>", column=missing[0])
        return "<pandas DataFrame>", pa.Table.from_pandas(source[columns], preserve_index=False)
    if hasattr(source, "__arrow_c_stream__"):
        return f"<{module} DataFrame>", pa.RecordBatchReader.from_stream(source)
    raise TypeError(f"cannot replay a {type(source).__name__}: expected a path, an Arrow table, a pandas or "
                    "polars DataFrame, or an object with __arrow_c_stream__")


def table_part(name: str, table: Any, columns: list[str], batch_rows: int) -> Part:
    def batches() -> Iterator[Any]:
        for batch in (table.to_batches(max_chunksize=batch_rows) if hasattr(table, "to_batches") else table):
            yield from slices(batch.select(columns), batch_rows)

    return Part(name, table.schema, batches)
