"""Replay a log of predictions and labels through a ``Monitor``, snapshotting a report as it goes.

The rows are fed, chunk by chunk in file order, to ``Monitor.update_many`` with their times, so
the result is exactly that of a monitor fed the same rows by hand. A snapshot (a ``report()``,
turned into timeline rows) is taken every ``every``: a number of rows (``10000``), or a duration
of data time (``"90s"``, ``"15m"``, ``"1h"``, ``"1d"``, ``"1w"``) — then at the end of every
period of that length (aligned to multiples of it since time 0, like timed windows' buckets) that
holds rows, reporting the rows before the period's end; a period without rows has no snapshot.
The last rows always get a snapshot. Without a time column timed windows are refused and the
default windows are ``cumulative``, ``sliding_1000`` and ``sliding_10000``.

>>> import pyarrow as pa
>>> log = pa.table({"t": [0.0, 30.0, 70.0, 130.0], "y": ["a", "b", "a", "a"], "p": ["a", "b", "b", "a"]})
>>> result = replay(log, true="y", pred="p", time="t", every="1m", reference={"a": 1, "b": 1})
>>> [(s.time, s.samples) for s in result.snapshots]
[(60.0, 2), (120.0, 3), (180.0, 4)]
>>> result.report.windows["cumulative"].recall["a"]
0.6666666666666666
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from streammon.counting.windows import Window
from streammon.detection.baseline import DetectorSettings
from streammon.findings.distortion import Policy
from streammon.logs.errors import ReplayError
from streammon.logs.feed import (
    DEFAULT_EVERY_ROWS,
    DEFAULT_EVERY_TIMED,
    UNITS,
    Every,
    OnSnapshot,
    Replayer,
    duration_seconds,
    replay_monitor,
)
from streammon.logs.joined import replay_joined
from streammon.logs.result import ReplayResult
from streammon.logs.sources import BATCH_ROWS, open_log
from streammon.monitor import Monitor

__all__ = ["DEFAULT_EVERY_ROWS", "DEFAULT_EVERY_TIMED", "UNITS", "Every", "OnSnapshot", "Replayer", "duration_seconds",
           "replay", "replay_monitor"]


def replay(
    source: Any,
    *,
    true: str | None = None,
    pred: str,
    time: str | None = None,
    key: str | None = None,
    labels: Any = None,
    label_time: str | None = None,
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
    batch_rows: int = BATCH_ROWS,
    score: str | Sequence[str] | None = None,
) -> ReplayResult:
    """Replay a log of labelled predictions and return its timeline, final report and alerts.

    ``source``: a path (a Parquet file or folder, a CSV or an Arrow IPC file), an Arrow table, a
    pandas or polars DataFrame. ``true``/``pred``/``time`` name the columns (time: timestamps, dates or
    seconds; rows in time order). ``every``: snapshot spacing (default one day of data time, or
    100,000 rows without times). ``windows``/``reference``/``baseline``/``positive``/``detector``/``policy``
    build the monitor as ``Monitor`` does (default windows: ``default_windows()``), or pass a ready ``monitor``.
    ``on_snapshot(snapshot, report)`` sees every snapshot's full report. ``text_labels``: labels in
    ``reference``/``baseline``/``positive`` are text (as on the command line) and are read in the
    log's label type. ``score``: the column of a binary model's positive-class score, or the K columns of its class
    probabilities in the order of the monitor's classes (``reference=`` then gives them), fed as ``y_score`` (with
    ``key``/``labels``: columns of the predictions log, fed to ``predict_many``). Raises
    ``ReplayError`` (a ``ValueError``) naming the file, column and row of a
    malformed log; nothing is written by ``replay`` itself.

    With ``key`` and ``labels`` (a second source, as ``source``): ``source`` holds predictions (``key``,
    ``pred``, ``time``) and ``labels`` the labels (``key``, ``true``, and ``label_time``, default ``time``),
    joined through ``Monitor.predict_many``/``label_many`` in time order (see ``streammon.logs.joined``).
    """
    scores = (score,) if isinstance(score, str) else tuple(score or ())
    if key is not None or labels is not None:
        if key is None or labels is None or true is None:
            raise ValueError("joining predictions and labels needs key, labels and true (the labels' column)")
        return replay_joined(source, labels, key=key, true=true, pred=pred, time=time, label_time=label_time,
                             every=every, batch_rows=batch_rows, score=scores, windows=windows, reference=reference,
                             baseline=baseline, positive=positive, detector=detector, policy=policy,
                             monitor=monitor, on_snapshot=on_snapshot, text_labels=text_labels)
    if true is None:
        raise ValueError("true names the column of the true labels")
    if label_time is not None:
        raise ValueError("label_time names the time column of a labels log: give labels and key too")
    log = open_log(source, true=true, pred=pred, time=time, batch_rows=batch_rows, score=scores)
    timed = time is not None
    every_ = Every.parse(every, timed=timed)
    fed = replay_monitor(monitor, timed=timed, windows=windows, reference=reference, baseline=baseline,
                         positive=positive, label_kind=log.label_kind, text_labels=text_labels, detector=detector,
                         policy=policy)
    replayer = Replayer(fed, every_, timed=timed, on_snapshot=on_snapshot)
    for chunk in log.chunks(coded=True):
        replayer.feed(chunk.true, chunk.pred, chunk.times, chunk.file, chunk.first_row, scores=chunk.scores)
    if not replayer.samples:
        raise ReplayError("the log holds no rows", file=log.name)
    return replayer.finish(log.name)
