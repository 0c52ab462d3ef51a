"""Spark (local mode): the bucket-count table by a groupBy equals the single-machine table to the count, and its
replay equals the single-machine replays."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import missing
from tests.replay_data import BASELINE, REFERENCE, log_frame, same_report

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

JAVA_HINT = "install Debian's 'openjdk-17-jre-headless' (apt-get install -y openjdk-17-jre-headless)"
PYSPARK_HINT = "pip install pyspark (the 'spark' extra)"


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local Spark session for every Spark test (two cores, no UI, UTC), stopped at the end."""
    if shutil.which("java") is None:
        missing("java", JAVA_HINT)
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        missing("pyspark", PYSPARK_HINT)
    session = (SparkSession.builder.master("local[2]").appName("streammon-tests")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """A log with a mix shift and a degradation, written as Parquet (microsecond UTC timestamps)."""
    frame = log_frame(n=20_000)
    path = tmp_path_factory.mktemp("spark") / "log.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=5_000)
    return frame, path


def test_spark_counts_equal_single_machine_counts(spark: Any, logged: tuple[Any, Path]) -> None:
    """Spark's groupBy table equals counts_from_rows on the same Parquet, to the count, for timestamp and numeric
    times and for string and integer labels."""
    from streammon.logs import counts_from_rows
    from streammon.logs.spark import counts_from_spark

    _, path = logged
    df = spark.read.parquet(str(path))
    for true, pred, time in (("y", "p", "ts"), ("yi", "pi", "seconds")):
        expected = counts_from_rows(path, true=true, pred=pred, time=time, bucket="1m")
        assert counts_from_spark(df, true=true, pred=pred, time=time, bucket="1m").to_pylist() == expected.to_pylist()


def test_spark_replay_equals_the_row_replay(spark: Any, logged: tuple[Any, Path]) -> None:
    """replay_spark reports, at every hourly snapshot, what the row replay reports on its cumulative and timed
    windows, and raises the fraud degradation alert."""
    import streammon
    from streammon.logs import replay
    from streammon.logs.spark import replay_spark

    _, path = logged

    def windows() -> list[Any]:
        return [streammon.Cumulative(), streammon.Timed(3600)]

    rows: list[Any] = []
    replay(path, true="y", pred="p", time="ts", every="1h", windows=windows(), reference=REFERENCE,
           baseline=BASELINE, on_snapshot=lambda s, r: rows.append((s, r)))
    counted: list[Any] = []
    result = replay_spark(spark.read.parquet(str(path)), true="y", pred="p", time="ts", every="1h",
                          windows=windows(), reference=REFERENCE, baseline=BASELINE,
                          on_snapshot=lambda s, r: counted.append((s, r)))
    assert [s for s, _ in counted] == [s for s, _ in rows]
    for (_, got), (_, want) in zip(counted, rows, strict=True):
        same_report(got, want, alerts=False)
    assert ("degradation", "fraud") in {(a.kind, a.subject) for a in result.alerts}


def test_spark_errors_name_the_column(spark: Any, logged: tuple[Any, Path]) -> None:
    """A missing column and a column of scores (floats that are not whole numbers) are refused, naming the column."""
    from streammon.logs import ReplayError
    from streammon.logs.spark import counts_from_spark

    df = spark.read.parquet(str(logged[1]))
    with pytest.raises(ReplayError, match="no column 'label'"):
        counts_from_spark(df, true="label", pred="p", time="ts")
    with pytest.raises(ReplayError) as caught:
        counts_from_spark(df, true="seconds", pred="p", time="ts")
    assert caught.value.column == "seconds" and "not a whole number" in str(caught.value)  # update_many's reason


def test_spark_reads_whole_float_labels_as_replay_does(spark: Any) -> None:
    """0.0/1.0 float label columns give Spark the counts replay's reader gives (int labels); a 0.5 is refused with
    update_many's reason."""
    import numpy as np
    import pandas as pd

    from streammon.logs import ReplayError, counts_from_rows
    from streammon.logs.spark import counts_from_spark

    rng = np.random.default_rng(9)
    y = (rng.random(500) < 0.1).astype(float)
    frame = pd.DataFrame({"t": np.arange(500) * 3.0, "y": y, "p": np.where(rng.random(500) < 0.9, y, 1.0 - y)})
    got = counts_from_spark(spark.createDataFrame(frame), true="y", pred="p", time="t", bucket=60)
    assert got.equals(counts_from_rows(frame, true="y", pred="p", time="t", bucket=60))
    frame.loc[77, "p"] = 0.5
    with pytest.raises(ReplayError, match="not a whole number") as caught:
        counts_from_spark(spark.createDataFrame(frame), true="y", pred="p", time="t", bucket=60)
    assert caught.value.column == "p"
