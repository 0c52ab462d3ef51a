"""Replay logged predictions and labels (Parquet, CSV, Arrow IPC, DataFrames, Spark) through a monitor.

An edge of streammon: pyarrow, pandas, polars, duckdb and pyspark are imported inside functions,
only when used (``pip install streammon[replay]``, ``[duckdb]``, ``[spark]``).

- ``replay(source, true=..., pred=..., time=..., every=...)`` — the rows, in order, through
  ``Monitor.update_many``; a ``ReplayResult`` with the tidy timeline, final report and alerts.
- ``counts_from_rows`` / ``counts_with_duckdb`` / ``streammon.logs.spark.counts_from_spark`` — the
  bucket-count table (``COUNTS_COLUMNS``), the interchange format between engines;
  ``replay_counts(table, ...)`` replays it (cumulative and timed windows exact to a bucket).
- ``ReplayError`` — a malformed log, naming the file, the column and the row; ``ReferenceMismatch`` (one) — a
  reference class the log's first rows lack beside a look-alike log label (``streammon.logs.reference_check``).

``streammon.replay`` is ``replay``.
"""

from streammon.logs.counts_table import COUNTS_COLUMNS, counts_from_rows, counts_schema, replay_counts
from streammon.logs.duckdb_counts import counts_with_duckdb
from streammon.logs.errors import ReferenceMismatch, ReplayError
from streammon.logs.replayer import Every, replay
from streammon.logs.result import AlertSpan, ReplayResult, Snapshot
from streammon.logs.timeline import Timeline

__all__ = [
    "COUNTS_COLUMNS",
    "AlertSpan",
    "Every",
    "ReferenceMismatch",
    "ReplayError",
    "ReplayResult",
    "Snapshot",
    "Timeline",
    "counts_from_rows",
    "counts_schema",
    "counts_with_duckdb",
    "replay",
    "replay_counts",
]
