"""A CSV log (plain or compressed: .csv.gz, .csv.bz2, .csv.zst) read a block at a time, in bounded memory.

Arrow reads ``CSV_BLOCK_BYTES`` (16 MiB) of decompressed text a block, and a row must fit in one:
a longer line (a 1 GB label cell, say, compressed to a few MB) is refused as soon as the reader
meets it, before it grows (``ReplayError`` naming the file, the row before it and the limit). Every
reader is closed once used, so a refused file leaves no read-ahead decoding behind. The header is
checked first: a column name given twice (``y,y,p``) is refused, never read as the first of the two.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
>>> _ = path.write_text("y,y,p\\n1,0,1\\n")
>>> csv_part(str(path), ["y", "p"], 100)
Traceback (most recent call last):
...
streammon.logs.errors.ReplayError: ...log.csv, column 'y': the column name 'y' appears 2 times in the header: \
rename the columns so that each name is given once
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from streammon.logs.columns import check_names, label_kind
from streammon.logs.errors import ReplayError
from streammon.logs.limits import CSV_BLOCK_BYTES, MAX_CELL_BYTES

HEADER_BLOCK = 1 << 16  # the header is read alone first (a wider header: read again with a whole block)


def csv_part(name: str, columns: list[str], batch_rows: int,
             time: str | None = None) -> tuple[Any, Callable[[], Iterator[Any]]]:
    """The schema (of ``columns``) and the record batches (``batch_rows`` rows at most) of the CSV file ``name``."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    convert = pcsv.ConvertOptions(include_columns=columns, strings_can_be_null=True, auto_dict_encode=True)
    read = pcsv.ReadOptions(block_size=CSV_BLOCK_BYTES)

    header = _header(name)
    check_names(header.names, name, columns)
    missing = next((c for c in columns if c not in header.names), None)
    if missing is not None:
        raise ReplayError(f"no such column; the file has {', '.join(map(repr, header.names[:20]))}", file=name,
                          column=missing)
    try:
        schema = _schema(name, read, convert)
        if time is not None and label_kind(schema.field(time).type) == "str":  # a time column read as text
            found = first_bad(name, time, [pa.float64(), pa.timestamp("us")])
            if found is not None:
                raise ReplayError(f"value {found[1]!r} is not a time: expected timestamps, dates or seconds",
                                  file=name, column=time, row=found[0])
    except (pa.ArrowException, OSError) as exc:
        raise _unreadable(name, 0, exc) from exc

    def batches() -> Iterator[Any]:
        done = 0
        reader = pcsv.open_csv(name, read_options=read, convert_options=convert)
        try:
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    return
                except pa.ArrowInvalid as exc:
                    raise _csv_error(name, schema, done, exc) from exc
                done += batch.num_rows
                yield from slices(batch, batch_rows)
        finally:
            reader.close()

    return schema, batches


def _schema(name: str, read: Any, convert: Any) -> Any:
    import pyarrow.csv as pcsv

    reader = pcsv.open_csv(name, read_options=read, convert_options=convert)
    try:
        return reader.schema
    finally:
        reader.close()


def _header(name: str) -> Any:
    """The file's columns, all of them (names given twice included), from its first rows."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    for block in (HEADER_BLOCK, CSV_BLOCK_BYTES):
        try:
            return _schema(name, pcsv.ReadOptions(block_size=block), pcsv.ConvertOptions())
        except pa.ArrowInvalid as exc:
            if block == CSV_BLOCK_BYTES or not _straddles(exc):
                raise _unreadable(name, 0, exc) from exc
        except (pa.ArrowException, OSError) as exc:
            raise _unreadable(name, 0, exc) from exc
    raise AssertionError("unreachable")  # pragma: no cover


def _straddles(exc: Exception) -> bool:
    return "straddl" in str(exc)


def _unreadable(name: str, done: int, exc: Exception) -> ReplayError:
    """A reading failure as a ``ReplayError``: a line longer than a block said as such."""
    if isinstance(exc, ReplayError):
        return exc
    if _straddles(exc):
        return ReplayError(f"the line after row {done} (or the header) is longer than {CSV_BLOCK_BYTES >> 20} MiB: "
                           f"a row holds a few cells of at most {MAX_CELL_BYTES} bytes (a label has at most 256 "
                           "characters), so the file is refused before the line is read whole", file=name, row=done)
    return ReplayError(f"not a readable CSV file: {exc}", file=name)


def _csv_error(name: str, schema: Any, done: int, exc: Exception) -> ReplayError:
    """Find the row and column of a CSV value that does not parse as its column's (inferred) type."""
    if _straddles(exc):
        return _unreadable(name, done, exc)
    import pyarrow as pa

    for field in schema:
        if label_kind(field.type) != "str":
            try:
                found = first_bad(name, field.name, [field.type], done)
            except (pa.ArrowException, OSError) as again:
                return _unreadable(name, done, again)
            if found is not None:
                row, value = found
                return ReplayError(f"value {value!r} is not of the column's type {field.type} (inferred from the "
                                   "first rows)", file=name, column=field.name, row=row)
    return ReplayError(f"cannot parse the rows after row {done}: {exc}", file=name, row=done)


def first_bad(name: str, column: str, targets: list[Any], skip: int = 0) -> tuple[int, Any] | None:
    """The first row (from ``skip``) and value of a CSV column that casts to none of ``targets``."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    reader = pcsv.open_csv(name, read_options=pcsv.ReadOptions(skip_rows_after_names=skip,
                                                               block_size=CSV_BLOCK_BYTES),
                           convert_options=pcsv.ConvertOptions(include_columns=[column],
                                                               column_types={column: pa.string()}))
    row = skip
    try:
        for batch in reader:
            text = batch.column(0)
            if not any(_casts(text, t) for t in targets):
                lo, hi = 0, len(text)
                while hi - lo > 1:  # the first value that does not cast
                    mid = (lo + hi) // 2
                    lo, hi = (lo, mid) if not any(_casts(text.slice(lo, mid - lo), t) for t in targets) else (mid, hi)
                return row + lo, text[lo].as_py()
            row += len(text)
    finally:
        reader.close()
    return None


def _casts(text: Any, target: Any) -> bool:
    import pyarrow as pa

    try:
        text.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    return True


def slices(batch: Any, rows: int) -> Iterator[Any]:
    """The batch in slices of at most ``rows`` rows (an empty batch as itself)."""
    for start in range(0, max(batch.num_rows, 1), rows):
        yield batch.slice(start, rows)
