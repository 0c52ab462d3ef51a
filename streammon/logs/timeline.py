"""The replay timeline: one tidy row per (snapshot, window, metric[, class]), written as JSON or Parquet.

Columns: ``time`` (the snapshot's time in seconds — for timestamp logs UTC seconds since 1970 — or
None without a time column), ``samples`` (rows counted so far), ``window``, ``metric``, ``class``
(the class label as text for per-class rows, else None), ``value``, ``corrected`` (the value at the
reference mix), ``distortion`` (``value − corrected``), ``flag`` (the flag kinds raised on the
metric, comma-separated, else None), ``lower`` and ``upper`` (the interval, where one is computed).

Per window the metrics are ``n``, ``rrt``, ``ir``, ``prior_shift_js``, ``prior_shift_tv``,
``prior_shift_p`` (the exact test's p-value) and ``prior_shift_ratio`` (the largest per-class prior
ratio) — flagged ``prior_shift`` while the report's prior-shift alert on the window is on (the
criterion with its hysteresis, ``docs/reference/alerts.md``) — every score of the report, and
per class ``class_recall`` (Wilson interval), ``class_precision`` (with its corrected value) and
``class_prior``. A window with a label-free estimate (``WindowReport.estimate``: a baseline and
predictions) adds ``estimated_prior`` per class (the mix read from the predictions alone, with its
interval), ``label_shift_p`` (the p-value of "only the class mix changed") and ``expected_METRIC`` rows,
as the exporter sends them: with scores and a ``streammon.Validation`` (``method == "em"``) every metric
expected without labels, with its bounds over the mix's interval as ``lower``/``upper``
(``streammon_expected_performance``); from the decisions alone the distortion-prone ones, with
``corrected`` their expected value at the reference mix (``streammon_expected_score``). Non-finite
numbers are written as null in JSON.

>>> import streammon
>>> m = streammon.Monitor([streammon.Cumulative()], reference={0: 1, 1: 1})
>>> m.update_many([0, 1, 1], [0, 1, 0], t=5.0)
>>> timeline = Timeline()
>>> timeline.add(10.0, m.report())
>>> row = next(r for r in timeline.records() if r["metric"] == "class_recall" and r["class"] == "1")
>>> row["time"], row["samples"], row["window"], row["value"]
(10.0, 3, 'cumulative', 0.5)
"""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from streammon.atomic import write_file
from streammon.findings.report import PRIOR_SHIFT, Report, WindowReport
from streammon.metrics.specs import catalog

COLUMNS = ("time", "samples", "window", "metric", "class", "value", "corrected", "distortion", "flag", "lower",
           "upper")
Row = tuple[str, str | None, float, float | None, float | None, str | None, float | None, float | None]


def window_rows(w: WindowReport, shift_alert: bool | None = None) -> Iterator[Row]:
    """(metric, class, value, corrected, distortion, flag, lower, upper) of one window (``shift_alert``: whether
    its prior-shift alert is on; None: the window's own decision ``prior_shift.shifted``)."""
    kinds: dict[str, list[str]] = {}
    for raised in w.flags:
        kinds.setdefault(raised.metric, []).append(raised.kind)
    yield "n", None, float(w.n), None, None, None, None, None
    yield "rrt", None, w.rrt, None, None, None, None, None
    yield "ir", None, w.ir, None, None, None, None, None
    if w.prior_shift is not None:
        on = w.prior_shift.shifted if shift_alert is None else shift_alert
        shifted = "prior_shift" if on else None
        yield "prior_shift_js", None, w.prior_shift.js, None, None, shifted, None, None
        yield "prior_shift_tv", None, w.prior_shift.tv, None, None, shifted, None, None
        yield "prior_shift_p", None, w.prior_shift.p_value, None, None, shifted, None, None
        yield "prior_shift_ratio", None, w.prior_shift.prior_ratio, None, None, shifted, None, None
    for metric, value in w.scores.items():
        lower, upper = w.intervals.get(metric, (None, None))
        flag = ",".join(dict.fromkeys(kinds[metric])) if metric in kinds else None
        yield metric, None, value, w.corrected.get(metric), w.distortion.get(metric), flag, lower, upper
    for label in w.labels:
        text = str(label)
        lower, upper = w.recall_interval.get(label, (None, None))
        yield "class_recall", text, w.recall.get(label, math.nan), None, None, None, lower, upper
        yield ("class_precision", text, w.precision.get(label, math.nan), w.corrected_precision.get(label),
               None, None, None, None)
        yield "class_prior", text, w.priors.get(label, math.nan), None, None, None, None, None
    yield from estimate_rows(w)


def estimate_rows(w: WindowReport) -> Iterator[Row]:
    """The label-free estimate's rows of one window (none without an estimate): what ``estimate_families``
    exports, so a replay's timeline and a scrape agree."""
    e = w.estimate
    if e is None:
        return
    for label, share in e.priors.items():
        yield "estimated_prior", str(label), share, None, None, None, e.lower.get(label), e.upper.get(label)
    yield "label_shift_p", None, e.p_value, None, None, None, None, None
    table = catalog()
    em = e.method == "em"
    for metric, value in w.expected.items():
        if not em and (metric not in table or table[metric].condition1):
            continue
        distortion = w.expected_distortion.get(metric)
        corrected = None if distortion is None else value - distortion
        yield (f"expected_{metric}", None, value, corrected, distortion, None, e.expected_lower.get(metric),
               e.expected_upper.get(metric))


class Timeline:
    """The tidy timeline, kept as columns (a list per column)."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}

    def __len__(self) -> int:
        return len(self.columns["time"])

    def add(self, time: float | None, report: Report) -> None:
        """Append every window of one snapshot's report."""
        cols = [self.columns[name] for name in COLUMNS]
        shifted = {a.window for a in report.alerting(PRIOR_SHIFT)}
        for w in report.windows.values():
            for row in window_rows(w, w.name in shifted):
                for column, value in zip(cols, (time, report.samples, w.name, *row), strict=True):
                    column.append(value)

    def records(self) -> Iterator[dict[str, Any]]:
        """The rows as dicts (column -> value)."""
        for values in zip(*self.columns.values(), strict=True):
            yield dict(zip(COLUMNS, values, strict=True))

    def to_arrow(self) -> Any:
        """The timeline as a ``pyarrow.Table`` (needs pyarrow)."""
        import pyarrow as pa

        text, number = pa.string(), pa.float64()
        types = {"time": number, "samples": pa.int64(), "window": text, "metric": text, "class": text,
                 "flag": text}
        return pa.table({name: pa.array(values, type=types.get(name, number)) for name, values in
                         self.columns.items()})

    def to_pandas(self) -> Any:
        """The timeline as a ``pandas.DataFrame`` (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.columns, columns=list(COLUMNS))

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write to ``path``: Parquet if it ends in ``.parquet``, else JSON (a list of row objects).

        Written through ``streammon.atomic``: a temporary file of a random name, created exclusively beside it,
        then renamed; a failure leaves no partial file.
        """
        if Path(path).suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            table = self.to_arrow()
            write_file(path, lambda out: pq.write_table(table, out))
        else:
            rows = [{k: _finite(v) for k, v in row.items()} for row in self.records()]
            write_file(path, lambda out: _dump(rows, out))


def _dump(rows: list[dict[str, Any]], out: BinaryIO) -> None:
    """JSON to a binary file, encoded as it is written (the whole text is never held)."""
    text = io.TextIOWrapper(out, encoding="utf-8")
    json.dump(rows, text, allow_nan=False)
    text.flush()
    text.detach()


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value
