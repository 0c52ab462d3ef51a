"""Spark: a DataFrame of predictions becomes the bucket-count table by one ``groupBy`` (no per-row Python),
is collected (it is small: buckets × classes²) and replayed on the driver.

Bucket starts are computed in Spark SQL exactly as streammon computes them — the time in
microseconds since 1970 UTC divided by 1e6 (timestamps, with or without a time zone), days × 86400
(dates), or the number itself (seconds), then ``floor(seconds / width) * width`` — so the table
equals ``counts_from_rows`` on the same rows, to the count, and its replay equals the single-machine
counts replay. Nanosecond Parquet timestamps are not read by Spark: write microseconds.

Cluster recipe (the README has it in full)::

    spark-submit --py-files streammon.whl job.py   # job.py: replay_spark(spark.read.parquet(...), ...)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from streammon.counting.labels import as_label_array
from streammon.counting.windows import Window
from streammon.logs.counts_table import counts_schema, replay_counts
from streammon.logs.errors import ReplayError
from streammon.logs.feed import OnSnapshot, duration_seconds
from streammon.logs.result import ReplayResult
from streammon.monitor import Monitor


def _seconds(df: Any, time: str) -> Any:
    """A Spark column of the time in float seconds, computed as streammon computes it."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    kind = df.schema[time].dataType
    column = F.col(time)
    if isinstance(kind, T.TimestampType):
        return F.unix_micros(column).cast("double") / 1e6
    if type(kind).__name__ == "TimestampNTZType":
        return F.expr(f"timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', `{time}`)").cast(
            "double") / 1e6
    if isinstance(kind, T.DateType):
        return F.unix_date(column).cast("double") * 86_400.0
    if isinstance(kind, T.NumericType):
        return column.cast("double")
    raise ReplayError(f"type {kind.simpleString()} cannot be a time: expected timestamps, dates or seconds",
                      file="<Spark DataFrame>", column=time)


def _whole(df: Any, column: str) -> None:
    """A float label column holds whole numbers only (``update_many``'s rule): else one job finds a value that is
    not, refused with ``update_many``'s message (Spark rows have no order to name a row by)."""
    import numpy as np
    from pyspark.sql import functions as F

    col = F.col(column)
    beyond = F.abs(col) >= 9.223372036854775807e18  # outside int64
    wrong = df.filter(col.isNotNull() & (F.isnan(col) | (col != F.floor(col)) | beyond))
    first = wrong.select(column).limit(1).collect()
    if first:
        value = float(first[0][0])
        if math.isnan(value):
            raise ReplayError("NaN label (a missing label: every row needs a class label)", file="<Spark DataFrame>",
                              column=column)
        try:
            as_label_array(np.array([value]), column)
        except ValueError as exc:
            raise ReplayError(str(exc), file="<Spark DataFrame>", column=column) from exc


def counts_from_spark(df: Any, *, true: str, pred: str, time: str | None = None, bucket: float | str = 60.0) -> Any:
    """The bucket-count table (a ``pyarrow.Table``) of a Spark DataFrame, by one ``groupBy`` on the cluster."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    width = duration_seconds(bucket)
    for role, column in (("true", true), ("pred", pred), ("time", time)):
        if column is not None and column not in df.columns:
            raise ReplayError(f"no column {column!r} (the {role} column); it has {df.columns[:20]}",
                              file="<Spark DataFrame>", column=column)
    labels = {}
    for column in (true, pred):
        kind = df.schema[column].dataType
        if isinstance(kind, (T.FloatType, T.DoubleType)):
            _whole(df, column)
            labels[column] = F.col(column).cast("long")
        elif isinstance(kind, (T.IntegralType, T.BooleanType, T.StringType)):
            labels[column] = F.col(column)
        else:
            raise ReplayError(f"type {kind.simpleString()} cannot hold class labels: expected integers, booleans, "
                              "strings or whole-number floats", file="<Spark DataFrame>", column=column)
    start = F.lit(None).cast("double") if time is None else F.floor(_seconds(df, time) / width).cast("double") * width
    grouped = (df.select(start.alias("bucket_start"), labels[true].alias("true"), labels[pred].alias("pred"))
               .groupBy("bucket_start", "true", "pred").agg(F.count(F.lit(1)).alias("count")))
    rows = grouped.toArrow() if hasattr(grouped, "toArrow") else pa.Table.from_pandas(grouped.toPandas())
    for column, source in (("true", true), ("pred", pred), ("bucket_start", time)):
        if source is not None and rows.column(column).null_count:
            nulls = df.filter(F.col(source).isNull()).count()
            raise ReplayError(f"{nulls} rows have a null {'time' if column == 'bucket_start' else 'label'}",
                              file="<Spark DataFrame>", column=source)
    label_type = rows.schema.field("true").type
    label_type = pa.int64() if pa.types.is_integer(label_type) else (
        pa.string() if not pa.types.is_boolean(label_type) else label_type)
    table = rows.select(["bucket_start", "true", "pred", "count"]).cast(counts_schema(label_type))
    return table.sort_by([("bucket_start", "ascending"), ("true", "ascending"), ("pred", "ascending")])


def replay_spark(
    df: Any,
    *,
    true: str,
    pred: str,
    time: str | None = None,
    bucket: float | str = 60.0,
    every: str | int | None = None,
    windows: Iterable[Window] | None = None,
    reference: Mapping[Any, Any] | None = None,
    baseline: Any = None,
    positive: Any = None,
    monitor: Monitor | None = None,
    on_snapshot: OnSnapshot | None = None,
) -> ReplayResult:
    """Count a Spark DataFrame into buckets on the cluster and replay the counts (see ``replay_counts``)."""
    table = counts_from_spark(df, true=true, pred=pred, time=time, bucket=bucket)
    return replay_counts(table, every=every, windows=windows, reference=reference, baseline=baseline,
                         positive=positive, monitor=monitor, on_snapshot=on_snapshot)
