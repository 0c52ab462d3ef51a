"""The bucket-count table made by DuckDB: one multi-threaded ``GROUP BY`` over Parquet, CSV or a DataFrame.

Bucket starts are computed as ``streammon`` computes them (``floor(seconds / width) * width`` on
the same doubles), so the table equals ``counts_from_rows`` on the same data, to the count. A
null label or time is found again by streammon's own reader, which names its file, column and row.

>>> import pyarrow as pa
>>> rows = pa.table({"t": [0.0, 10.0, 70.0], "y": ["a", "b", "b"], "p": ["a", "b", "a"]})
>>> counts_with_duckdb(rows, true="y", pred="p", time="t", bucket="1m").to_pylist()[-1]
{'bucket_start': 60.0, 'true': 'b', 'pred': 'a', 'count': 1}
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from streammon.logs.errors import ReplayError
from streammon.logs.feed import duration_seconds
from streammon.logs.sources import CSV, IPC, PARQUET, in_memory, open_log

_INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT")
_FLOATS = ("FLOAT", "DOUBLE")  # labels: whole numbers read as int labels, as update_many and replay read them
_SECONDS = {"TIMESTAMP": "epoch_us({c}) / 1e6", "TIMESTAMP WITH TIME ZONE": "epoch_us({c}) / 1e6",
            "TIMESTAMP_NS": "epoch_ns({c}) / 1e9", "TIMESTAMPTZ_NS": "epoch_ns({c}) / 1e9",
            # epoch_ms() of a TIMESTAMP_MS/_S fails in DuckDB 1.x-2.0 ("Unimplemented type for cast"); microseconds
            # of a whole ms or s are exact, so this is replay's ticks / 1e3 to the bit
            "TIMESTAMP_MS": "epoch_us({c}) / 1e6", "TIMESTAMP_S": "epoch_us({c}) / 1e6", "DATE": "epoch_ms({c}) / 1e3"}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _relation(source: Any, con: Any, columns: list[str]) -> tuple[str, dict[str, Any], str]:
    """SQL for the rows of ``source``, its parameters, and a name for errors."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise ReplayError("no such file or folder", file=str(path))
        lower = path.name.lower()
        if path.is_dir():
            return "read_parquet($path)", {"path": str(path / "**" / "*.parquet")}, str(path)
        if lower.endswith(PARQUET):
            return "read_parquet($path)", {"path": str(path)}, str(path)
        if lower.endswith(CSV):
            return "read_csv($path)", {"path": str(path)}, str(path)
        if lower.endswith(IPC):
            import pyarrow as pa

            con.register("streammon_log", pa.ipc.open_file(pa.memory_map(str(path))).read_all())
            return "streammon_log", {}, str(path)
        raise ReplayError("unknown log format", file=str(path))
    import pyarrow as pa

    name, table = in_memory(source, columns)  # as replay reads it (DuckDB's own pandas scan fails on datetime64[s])
    con.register("streammon_log", table if isinstance(table, pa.Table) else source)
    return "streammon_log", {}, name


def _not_whole(con: Any, relation: str, params: dict[str, Any], floats: list[str]) -> bool:
    """Whether a float label column holds a NaN, a fraction or a number beyond int64 (replay then says where)."""
    if not floats:
        return False
    test = " OR ".join(f"isnan({c}) OR {c} != floor({c}) OR abs({c}) >= 9.223372036854775807e18"
                       for c in map(_quote, floats))
    found = con.sql(f"SELECT count(*) FROM {relation} WHERE {test}",
                    params={k: v for k, v in params.items() if k != "width"}).fetchall()
    return bool(found[0][0])


def counts_with_duckdb(source: Any, *, true: str, pred: str, time: str | None = None, bucket: float | str = 60.0,
                       connection: Any = None) -> Any:
    """The bucket-count table of ``source`` (a Parquet file or folder, a CSV, an Arrow IPC file, an Arrow
    table or a DataFrame) by one DuckDB ``GROUP BY``; sorted by bucket, then labels. ``connection``: a
    DuckDB connection to use (default: a new in-memory one, all cores)."""
    import duckdb
    import pyarrow as pa

    from streammon.logs.counts_table import counts_schema

    width = duration_seconds(bucket)
    con = connection if connection is not None else duckdb.connect()
    relation, params, name = _relation(source, con, [c for c in dict.fromkeys((true, pred, time)) if c is not None])
    try:
        described = {row[0]: row[1] for row in con.sql(f"DESCRIBE SELECT * FROM {relation}", params=params).fetchall()}
    except duckdb.Error as exc:
        raise ReplayError(f"DuckDB cannot read it: {exc}", file=name) from exc
    for role, column in (("true", true), ("pred", pred), ("time", time)):
        if column is None:
            continue
        if column not in described:
            raise ReplayError(f"no column {column!r} (the {role} column); it has {list(described)[:20]}", file=name,
                              column=column)
        kind = described[column]
        usable = (kind in _SECONDS or kind in _INTEGERS or kind in ("FLOAT", "DOUBLE") or kind.startswith("DECIMAL")
                  ) if role == "time" else (kind in _INTEGERS or kind in _FLOATS or kind in ("BOOLEAN", "VARCHAR"))
        if not usable:
            raise ReplayError(f"type {kind} cannot be {'a time' if role == 'time' else 'a class label'}", file=name,
                              column=column)
    if time is None:
        start = "CAST(NULL AS DOUBLE)"
    else:
        seconds = _SECONDS.get(described[time], "CAST({c} AS DOUBLE)").format(c=_quote(time))
        start = f"floor(({seconds}) / $width) * $width"
        params = {**params, "width": width}
    floats = [c for c in dict.fromkeys((true, pred)) if described[c] in _FLOATS]
    y_sql, p_sql = (f"CAST({_quote(c)} AS BIGINT)" if c in floats else _quote(c) for c in (true, pred))
    sql = (f'SELECT {start} AS bucket_start, {y_sql} AS "true", {p_sql} AS "pred", '
           f'count(*) AS "count" FROM {relation} GROUP BY ALL')
    table = None if _not_whole(con, relation, params, floats) else con.sql(sql, params=params).to_arrow_table()
    bad = table is None or table.column("true").null_count or table.column("pred").null_count or (
        time is not None and table.column("bucket_start").null_count)
    if bad:
        for _ in open_log(source, true=true, pred=pred, time=time).chunks(ordered=False):
            pass  # raises the ReplayError naming the file, column and row
        raise ReplayError("null or fractional labels, or null times", file=name)
    assert table is not None
    label_type = table.schema.field("true").type
    if pa.types.is_string_view(label_type) or pa.types.is_large_string(label_type):
        label_type = pa.string()
    elif pa.types.is_integer(label_type):
        label_type = pa.int64()
    table = table.cast(counts_schema(label_type))
    return table.sort_by([("bucket_start", "ascending"), ("true", "ascending"), ("pred", "ascending")])
