"""Size limits checked before the bytes are decoded: a hostile log is refused from its metadata, not after
its cells have been inflated in memory.

A label has at most ``MAX_LABEL_LENGTH`` (256) characters and a key ``MAX_KEY_LENGTH`` (512): no legal cell
of a log takes more than ``MAX_CELL_BYTES`` (4 bytes a character in UTF-8, 2048 bytes) and a time or an
integer at most 16. Parquet allocates each page at the size its page header states before decompressing
it, so every page header of the columns read is looked at before its row group is read (a few bytes a
page, none decompressed; on the reading thread, while the rows before are counted): a page stating more
bytes than its values could take if each were as long as a legal cell, plus ``PAGE_SLACK`` for levels
and encodings, holds a cell over the limit (a 1 GB label cell compressed to 31 kB, say), and the file is
refused with a ``ReplayError`` naming the file, the column, the row group and the limit. CSV is read in
blocks of ``CSV_BLOCK_BYTES`` (16 MiB): a line longer than a block is refused (``streammon.logs.csv_source``).

>>> page_bound(num_values=3, cell_bytes=MAX_CELL_BYTES)
71728
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from streammon.counting.classes import MAX_LABEL_LENGTH
from streammon.logs.errors import ReplayError
from streammon.logs.page_walk import OK, OVER, walk
from streammon.pending.keys import MAX_KEY_LENGTH

MAX_CELL_BYTES = 4 * max(MAX_LABEL_LENGTH, MAX_KEY_LENGTH)  # a str cell in UTF-8, at most 4 bytes a character
FIXED_CELL_BYTES = 16  # an integer, boolean, float, date, timestamp (INT96: 12 bytes)
CELL_OVERHEAD = 16  # length prefix, levels, delta-encoded lengths: at most this much a value
PAGE_SLACK = 1 << 16  # headers of levels and encodings, bit-packing runs, alignment
MAX_PAGE_HEADER = 16 << 20  # Arrow's own default limit of a Parquet page header
CSV_BLOCK_BYTES = 16 << 20
DICTIONARY_PAGE, DATA_PAGE, DATA_PAGE_V2 = 2, 0, 3


def page_bound(num_values: int, cell_bytes: int) -> int:
    """The most bytes a page of ``num_values`` legal values of at most ``cell_bytes`` bytes can take."""
    return num_values * (cell_bytes + CELL_OVERHEAD) + PAGE_SLACK


def check_parquet(name: str, metadata: Any, columns: list[str]) -> None:
    """Refuse a Parquet file whose page headers (of ``columns``) state more bytes than legal cells could take.

    ``metadata`` is the file's ``FileMetaData``; the page headers are read from the file ``name``.
    """
    with open(name, "rb", buffering=0) as file:
        data = _mapped(name)
        for group in range(metadata.num_row_groups):
            check_row_group(file, name, metadata, group, columns=columns, data=data)


def checked_batches(name: str, metadata: Any, columns: list[str], batches: Iterator[Any],
                    batch_rows: int) -> Iterator[Any]:
    """The record batches of ``batches`` (of the Parquet file ``name``, ``batch_rows`` rows at most), the page
    headers of each row group a batch may reach into checked before that batch is asked for (so on the reading
    thread, while the rows before are being counted, not all at open)."""
    starts = [0]
    for group in range(metadata.num_row_groups):
        starts.append(starts[-1] + metadata.row_group(group).num_rows)
    checked = done = 0
    with open(name, "rb", buffering=0) as file:
        data = _mapped(name)
        while True:
            while checked < metadata.num_row_groups and starts[checked] < done + batch_rows:
                check_row_group(file, name, metadata, checked, columns=columns, data=data)
                checked += 1
            batch = next(batches, None)
            if batch is None:
                return
            done += batch.num_rows
            yield batch


def _mapped(name: str) -> Any:
    """The file's bytes, memory-mapped (only the page headers walked are touched)."""
    import numpy as np

    return np.memmap(name, dtype=np.uint8, mode="r")


def check_row_group(file: BinaryIO, name: str, metadata: Any, group: int, *, columns: list[str],
                    data: Any = None) -> None:
    """Refuse the row group ``group`` if a page header of ``columns`` states more bytes than legal cells take:
    walked in compiled code over ``data`` (the file's bytes) when given, in Python from ``file`` otherwise or when
    the compiled walk meets something unusual (to say what is wrong)."""
    row_group = metadata.row_group(group)
    for index in range(row_group.num_columns):
        chunk = row_group.column(index)
        if chunk.path_in_schema not in columns:
            continue
        strings = chunk.physical_type in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY")
        cell = MAX_CELL_BYTES if strings else FIXED_CELL_BYTES
        if data is not None:
            start, end = _span(chunk)
            status, kind, size, values, _ = walk(data, start, end, cell, PAGE_SLACK)
            if status == OK:
                continue
            if status == OVER:
                _refuse(name, chunk.path_in_schema, group, page_type=kind, size=size, values=values, cell=cell)
        _check_chunk(file, chunk, cell, name, group)


def _span(chunk: Any) -> tuple[int, int]:
    """Where a column chunk's pages start and end in the file."""
    start = chunk.data_page_offset
    if chunk.has_dictionary_page and 0 < chunk.dictionary_page_offset < start:
        start = chunk.dictionary_page_offset
    return start, start + chunk.total_compressed_size


def _refuse(name: str, column: str, group: int, *, page_type: int, size: int, values: int, cell: int) -> None:
    kind = "dictionary page" if page_type == DICTIONARY_PAGE else "data page"
    limit = (f"a label has at most {MAX_LABEL_LENGTH} characters and a key {MAX_KEY_LENGTH}, at most "
             f"{MAX_CELL_BYTES} bytes" if cell == MAX_CELL_BYTES else f"a value of this type takes at "
             f"most {FIXED_CELL_BYTES} bytes")
    raise ReplayError(f"row group {group}: a {kind} of {values} values states {size} bytes once decompressed, more "
                      f"than {page_bound(values, cell)} ({limit}): a cell is over the limit, the file is refused "
                      "before it is decoded", file=name, column=column)


def _check_chunk(file: BinaryIO, chunk: Any, cell: int, name: str, group: int) -> None:
    for page_type, size, values, _, _ in pages(file, chunk, name):
        if page_type in (DATA_PAGE, DATA_PAGE_V2, DICTIONARY_PAGE) and size > page_bound(values, cell):
            _refuse(name, chunk.path_in_schema, group, page_type=page_type, size=size, values=values, cell=cell)


def pages(file: BinaryIO, chunk: Any, name: str) -> Iterator[tuple[int, int, int, int, int]]:
    """``(type, uncompressed size, values, compressed size, header length)`` of each page of a column chunk
    (``ColumnChunkMetaData``), from its page headers in ``file``."""
    column = chunk.path_in_schema
    at, end = _span(chunk)
    while at < end:
        page_type, size, compressed, values, header_bytes = _page_header(file, at, name, column)
        if min(size, compressed, values) < 0:
            raise ReplayError(f"a page header at byte {at} states a negative size or count (corrupt file?)",
                              file=name, column=column)
        yield page_type, size, values, compressed, header_bytes
        at += header_bytes + compressed


def _page_header(file: BinaryIO, at: int, name: str, column: str) -> tuple[int, int, int, int, int]:
    """(type, uncompressed size, compressed size, values, header length) of the page header at ``at``."""
    want = 256
    while True:
        file.seek(at)
        data = file.read(want)
        try:
            return _parse_header(data)
        except IndexError:
            if len(data) < want or want >= MAX_PAGE_HEADER:
                raise ReplayError(f"a page header at byte {at} is truncated or over {MAX_PAGE_HEADER} bytes "
                                  "(corrupt file?)", file=name, column=column) from None
            want *= 16
        except ValueError as exc:
            raise ReplayError(f"a page header at byte {at} cannot be read (corrupt file?): {exc}", file=name,
                              column=column) from None


class _Reader:
    """The Thrift compact protocol, as far as a Parquet page header needs it (IndexError: more bytes needed)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def byte(self) -> int:
        value = self.data[self.at]
        self.at += 1
        return value

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise ValueError("a varint longer than 10 bytes")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def skip(self, kind: int) -> None:
        if kind in (1, 2):  # booleans live in the field header
            return
        if kind == 3:
            self.byte()
        elif kind in (4, 5, 6):
            self.varint()
        elif kind in (7, 8):  # a double, a binary
            length = 8 if kind == 7 else self.varint()
            self.at += length
            if self.at > len(self.data):
                raise IndexError
        elif kind in (9, 10):
            head = self.byte()
            size = head >> 4 if head >> 4 != 15 else self.varint()
            for _ in range(size):
                self.skip_element(head & 0x0F)
        elif kind == 11:
            size = self.varint()
            types = self.byte() if size else 0
            for _ in range(size):
                self.skip_element(types >> 4)
                self.skip_element(types & 0x0F)
        elif kind == 12:
            self.struct(lambda field, kind: False)
        else:
            raise ValueError(f"unknown Thrift type {kind}")

    def skip_element(self, kind: int) -> None:
        if kind in (1, 2):  # in a list a boolean takes a byte
            self.byte()
        else:
            self.skip(kind)

    def struct(self, read: Any) -> None:
        """Fields until the end of the struct: ``read(field, kind)`` consumes a field it wants (returns True)."""
        last = 0
        while True:
            head = self.byte()
            if head == 0:
                return
            kind, delta = head & 0x0F, head >> 4
            field = last + delta if delta else self.zigzag()
            last = field
            if not read(field, kind):
                self.skip(kind)


def _parse_header(data: bytes) -> tuple[int, int, int, int, int]:
    """(type, uncompressed size, compressed size, values, header length) of the Thrift-compact PageHeader at the
    start of ``data`` (IndexError: more bytes needed). Written flat, without a call per byte: it runs once a page
    of every column read (a few hundred times a file), before a row is read."""
    found = [-1, 0, 0, 0]
    at, last = 0, 0
    lasts: list[int] = []
    path: list[int] = []
    while True:
        head = data[at]
        at += 1
        if head == 0:  # the end of a struct
            if not path:
                return found[0], found[1], found[2], found[3], at
            last = lasts.pop()
            path.pop()
            continue
        kind, delta = head & 0x0F, head >> 4
        if delta:
            field = last + delta
        else:
            value, at = _varint(data, at)
            field = (value >> 1) ^ -(value & 1)
        last = field
        if kind == 12:
            lasts.append(last)
            path.append(field)
            last = 0
        elif kind in (4, 5, 6):
            value, at = _varint(data, at)
            if kind == 5 and not path and field <= 3:  # type, uncompressed_page_size, compressed_page_size
                found[field - 1] = (value >> 1) ^ -(value & 1)
            elif kind == 5 and field == 1 and len(path) == 1 and path[0] in (5, 7, 8):  # num_values
                found[3] = (value >> 1) ^ -(value & 1)
        elif kind == 8:
            length, at = _varint(data, at)
            at += length
        elif kind in (3, 7):
            at += 1 if kind == 3 else 8
        elif kind not in (1, 2):  # a list, set or map: rare in a page header
            reader = _Reader(data)
            reader.at = at
            reader.skip(kind)
            at = reader.at


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[at]
        at += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise ValueError("a varint longer than 10 bytes")
