"""Arrow IPC (Feather v2) size limits: each record batch's buffer sizes read from its message header before
the batch is read (and, for a compressed file, decompressed).

A buffer compressed with LZ4 or ZSTD starts with its decompressed length, and each message header
lists its buffers and the length of each column: a buffer of a column read that would take more
than its values could at ``MAX_CELL_BYTES`` a str value (16 bytes a fixed-width one), plus
``PAGE_SLACK``, holds a cell over the limit, and the file is refused naming the file, the column
and the batch. Schemas with nested columns (lists, structs, maps, unions, views) are not checked
(their buffers do not map to one column's values); their batches are read as before.

>>> flat_buffers("large_string"), flat_buffers("int64"), flat_buffers("list<item: int64>")
(3, 2, None)
"""

from __future__ import annotations

import struct
from typing import Any

from streammon.logs.errors import ReplayError
from streammon.logs.limits import FIXED_CELL_BYTES, MAX_CELL_BYTES, page_bound

BUFFERS = {"string": 3, "large_string": 3, "binary": 3, "large_binary": 3}


def flat_buffers(type_name: str) -> int | None:
    """Buffers of a flat column of this Arrow type (validity and values, + offsets for strings); None if nested."""
    if type_name in BUFFERS:
        return BUFFERS[type_name]
    if any(mark in type_name for mark in ("<", "struct", "view", "union", "null")):
        return None
    return 2


def check_ipc(name: str, schema: Any, columns: list[str]) -> None:
    """Refuse the IPC file ``name`` if a buffer of one of ``columns`` states more bytes than legal cells take."""
    import pyarrow as pa

    fields = []
    for field in schema:
        kind = field.type.index_type if pa.types.is_dictionary(field.type) else field.type
        count = flat_buffers(str(kind))
        if count is None:
            return  # nested columns: buffers do not map to one column's values (see the module docstring)
        strings = kind in (pa.string(), pa.large_string(), pa.binary(), pa.large_binary())
        fields.append((field.name, count, MAX_CELL_BYTES if strings else FIXED_CELL_BYTES, field.name in columns))
    dictionaries = any(pa.types.is_dictionary(f.type) for f in schema if f.name in columns)
    source = pa.memory_map(name)
    if source.read(8) != b"ARROW1\0\0":
        source.seek(0)
    batch = 0
    for message in pa.ipc.MessageReader.open_stream(source):
        if message.type not in ("record batch", "dictionary batch") or (
                message.type == "dictionary batch" and not dictionaries):
            continue
        meta = bytes(message.metadata)
        if message.type == "dictionary batch":  # its values: one column, checked as a str column (a dictionary
            # of a column not read is checked too when one read is dictionary-encoded: ids are not compared)
            nodes, buffers, compressed = _record_batch(meta, dictionary=True)
            plan = [("<dictionary>", len(buffers), MAX_CELL_BYTES, True)]
        else:
            nodes, buffers, compressed = _record_batch(meta, dictionary=False)
            plan = fields
        _check_batch(name, batch, body=message.body, nodes=nodes, buffers=buffers, compressed=compressed, plan=plan)
        batch += message.type == "record batch"


def _check_batch(name: str, batch: int, *, body: Any, nodes: list[tuple[int, int]], buffers: list[tuple[int, int]],
                 compressed: bool, plan: list[tuple[str, int, int, bool]]) -> None:
    at = 0
    for index, (column, count, cell, wanted) in enumerate(plan):
        if index >= len(nodes):
            return
        values = nodes[index][0]
        for offset, length in buffers[at:at + count]:
            size = length
            if offset < 0 or length < 0 or offset + length > body.size:
                raise ValueError(f"record batch {batch}: a buffer lies outside the message body (corrupt file?)")
            if compressed and length >= 8:
                stated = struct.unpack("<q", body[offset:offset + 8].to_pybytes())[0]
                size = length - 8 if stated == -1 else stated
            if wanted and size > page_bound(values, cell):
                raise ReplayError(f"record batch {batch}: a buffer of {values} values states {size} bytes, more than "
                                  f"{page_bound(values, cell)} (a value takes at most {cell} bytes: a label has at "
                                  "most 256 characters): a cell is over the limit, the file is refused before the "
                                  "batch is read", file=name, column=None if column.startswith("<") else column)
        at += count


def _table(data: bytes, at: int) -> tuple[int, bytes]:
    """A flatbuffer table at ``at``: (its position, its vtable)."""
    vtable = at - struct.unpack_from("<i", data, at)[0]
    size = struct.unpack_from("<H", data, vtable)[0]
    return at, data[vtable:vtable + size]


def _field(data: bytes, table: tuple[int, bytes], index: int) -> int | None:
    at, vtable = table
    if 4 + 2 * index + 2 > len(vtable):
        return None
    offset = struct.unpack_from("<H", vtable, 4 + 2 * index)[0]
    return at + offset if offset else None


def _ref(data: bytes, at: int) -> int:
    return at + int(struct.unpack_from("<I", data, at)[0])


def _record_batch(meta: bytes, *, dictionary: bool) -> tuple[list[tuple[int, int]], list[tuple[int, int]], bool]:
    """(nodes (length, nulls), buffers (offset, length), compressed) of a RecordBatch or DictionaryBatch message."""
    try:
        message = _table(meta, _ref(meta, 0))
        header = _field(meta, message, 2)
        if header is None:
            return [], [], False
        table = _table(meta, _ref(meta, header))
        if dictionary:
            data = _field(meta, table, 1)
            if data is None:
                return [], [], False
            table = _table(meta, _ref(meta, data))
        vectors: list[list[tuple[int, int]]] = []
        for index in (1, 2):
            at = _field(meta, table, index)
            if at is None:
                vectors.append([])
                continue
            start = _ref(meta, at)
            count = struct.unpack_from("<I", meta, start)[0]
            vectors.append([(int(a), int(b)) for a, b in (struct.unpack_from("<qq", meta, start + 4 + 16 * i)
                                                          for i in range(count))])
        return vectors[0], vectors[1], _field(meta, table, 3) is not None
    except struct.error as exc:
        raise ValueError(f"a message header cannot be read: {exc}") from exc
