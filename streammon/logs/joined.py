"""Replay a predictions log and a labels log joined on a key, through the delayed-labels machinery.

The predictions log holds (key, predicted label[, time][, scores]); the labels log (key, true label[, time]).
Score columns (``score=``, read as ``replay`` reads them from a log of labelled predictions) go with their
predictions to ``predict_many(..., y_score=...)``: counted by true class when the label joins, and by predicted
class at once for the label-free estimate.
With times, the two streams are merged in time order: each prediction chunk goes to
``Monitor.predict_many`` and each label chunk to ``Monitor.label_many``, a chunk being cut at the
other stream's next time so every call sees non-decreasing times. **Ties: at the same time,
predictions come before labels** (a label at the time of its own prediction joins it). Without
times, all the predictions are replayed, then all the labels. A label without a prediction is an
orphan, a second label a duplicate, a prediction never labelled stays pending: counted in
``label_stats``, never an error (see ``streammon.labelling``).

>>> import pyarrow as pa
>>> preds = pa.table({"id": ["a", "b", "c"], "p": ["x", "y", "x"], "t": [0.0, 1.0, 2.0]})
>>> labs = pa.table({"id": ["a", "z", "b"], "y": ["x", "x", "x"], "t": [1.0, 1.5, 9.0]})
>>> result = replay_joined(preds, labs, key="id", true="y", pred="p", time="t", label_time="t", every=10)
>>> s = result.report.windows["cumulative"].label_stats
>>> s.predictions, s.labelled, s.pending, s.orphans
(3, 2, 1, 1)
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from streammon.logs import columns
from streammon.logs.columns import check_types, key_kind, label_kind
from streammon.logs.errors import ReplayError
from streammon.logs.feed import Every, Replayer, replay_monitor
from streammon.logs.result import ReplayResult
from streammon.logs.sources import BATCH_ROWS, open_parts, read_columns, score_roles, stacked


@dataclass(frozen=True)
class Keyed:
    """Consecutive rows of one file of one stream: keys, labels (predicted or true), times and scores."""

    keys: np.ndarray
    values: np.ndarray
    times: np.ndarray | None
    file: str
    first_row: int
    scores: np.ndarray | None = None  # the predictions' score columns, as ``sources.stacked`` gives them


class KeyedLog:
    """One stream (predictions or labels) opened for replay: key, label, time (and score) columns of each part."""

    def __init__(self, source: Any, *, key: str, value: str, role: str, time: str | None, batch_rows: int,
                 score: tuple[str, ...] = ()) -> None:
        self.name, self.parts = open_parts(source, [key, value, time, *score], batch_rows, time)
        self.key, self.value, self.time, self.score = key, value, time, score
        kinds, key_kinds = set(), set()
        for part in self.parts:
            check_types(part.schema, {"key": key, role: value, "time": time, **score_roles(score)}, part.name)
            kinds.add(label_kind(part.schema.field(value).type))
            key_kinds.add(key_kind(part.schema.field(key).type))
        if len(kinds) > 1:
            raise ReplayError(f"the {role} column {value!r} holds labels of different types between files: "
                              f"{sorted(map(str, kinds))}", file=self.name, column=value)
        if len(key_kinds) > 1:
            raise ReplayError(f"the key column {key!r} holds keys of different types between files: "
                              f"{sorted(map(str, key_kinds))} (a str key never matches an int key)", file=self.name,
                              column=key)
        self.label_kind: str = (kinds.pop() or "int") if kinds else "int"
        self.key_kind: str | None = key_kinds.pop() if key_kinds else None

    def chunks(self) -> Iterator[Keyed]:
        """The rows as numpy chunks, checked (nulls, types, time order) as they are read."""
        for (keys, values, *more), times, file, row in read_columns(self.parts, (self.key, self.value), self.time,
                                                                    read=(columns.keys, columns.labels),
                                                                    extra=self.score):
            yield Keyed(keys, values, times, file, row, stacked(more))


class _Head:
    """A stream's current chunk and how far into it the replay is."""

    def __init__(self, chunks: Iterator[Keyed]) -> None:
        self._chunks = chunks
        self.chunk: Keyed | None = None
        self.at = 0
        self.advance()

    def advance(self) -> None:
        """Move to the next chunk when the current one is used up (``chunk`` None at the end)."""
        while self.chunk is None or self.at >= len(self.chunk.keys):
            self.chunk, self.at = next(self._chunks, None), 0
            if self.chunk is None:
                return

    def next_time(self) -> float:
        """The time of the next row (``inf`` at the end)."""
        if self.chunk is None or self.chunk.times is None:
            return math.inf
        return float(self.chunk.times[self.at])


def merged(predictions: KeyedLog, labels_: KeyedLog) -> Iterator[tuple[bool, Keyed]]:
    """``(is_prediction, rows)`` in time order: predictions up to and including the next label's time, then labels
    before the next prediction's time, and so on (untimed: all predictions, then all labels)."""
    preds, labs = _Head(predictions.chunks()), _Head(labels_.chunks())
    while preds.chunk is not None or labs.chunk is not None:
        is_pred = labs.chunk is None or (preds.chunk is not None and preds.next_time() <= labs.next_time())
        head, other = (preds, labs) if is_pred else (labs, preds)
        chunk = head.chunk
        assert chunk is not None
        stop = len(chunk.keys)
        if chunk.times is not None and other.chunk is not None:
            side: Literal["left", "right"] = "right" if is_pred else "left"  # ties: predictions first
            stop = head.at + int(np.searchsorted(chunk.times[head.at:], other.next_time(), side=side))
        start = head.at
        yield is_pred, Keyed(chunk.keys[start:stop], chunk.values[start:stop],
                             None if chunk.times is None else chunk.times[start:stop], chunk.file,
                             chunk.first_row + start, None if chunk.scores is None else chunk.scores[start:stop])
        head.at = stop
        head.advance()


def replay_joined(source: Any, labels_source: Any, *, key: str, true: str, pred: str, time: str | None = None,
                  label_time: str | None = None, every: str | int | None = None, batch_rows: int = BATCH_ROWS,
                  score: tuple[str, ...] = (), **options: Any) -> ReplayResult:
    """``replay`` with ``key=`` and ``labels=``: see the module docstring; ``score``: the predictions log's score
    columns (as ``replay`` takes them); ``options`` as ``replay`` takes them."""
    timed = time is not None
    if label_time is not None and not timed:
        raise ValueError("label_time names the labels' time column: give time (the predictions' time column) too")
    predictions = KeyedLog(source, key=key, value=pred, role="pred", time=time, batch_rows=batch_rows, score=score)
    labels_ = KeyedLog(labels_source, key=key, value=true, role="true", time=label_time or time,
                       batch_rows=batch_rows)
    if predictions.parts and labels_.parts and predictions.label_kind != labels_.label_kind:
        raise ReplayError(f"the predicted column {pred!r} holds {predictions.label_kind} labels but the labels' "
                          f"true column {true!r} holds {labels_.label_kind} labels", file=labels_.name, column=true)
    if predictions.key_kind and labels_.key_kind and predictions.key_kind != labels_.key_kind:
        raise ReplayError(f"the key column {key!r} holds {predictions.key_kind} keys in the predictions log but "
                          f"{labels_.key_kind} keys in the labels log: a str key never matches an int key (cast one "
                          "of them)", file=labels_.name, column=key)
    on_snapshot = options.pop("on_snapshot", None)
    monitor = options.pop("monitor", None)
    fed = replay_monitor(monitor, timed=timed, windows=options.pop("windows", None),
                         reference=options.pop("reference", None), baseline=options.pop("baseline", None),
                         positive=options.pop("positive", None), label_kind=predictions.label_kind,
                         text_labels=options.pop("text_labels", False), detector=options.pop("detector", None),
                         policy=options.pop("policy", None))
    if options:
        raise TypeError(f"replay() got unexpected options {sorted(options)}")
    replayer = Replayer(fed, Every.parse(every, timed=timed), timed=timed, on_snapshot=on_snapshot)
    for is_pred, rows in merged(predictions, labels_):
        method = fed.predict_many if is_pred else fed.label_many
        replayer.feed(rows.keys, rows.values, rows.times, rows.file, rows.first_row, method=method,
                      scores=rows.scores)
    if not replayer.samples:
        raise ReplayError("the predictions and labels logs hold no rows", file=predictions.name)
    return replayer.finish(predictions.name)
