"""Every count a monitor keeps, fed one validated batch at a time, in stream order.

The tally holds the class index, the windows, the lifetime counters (the exported ``_total``
series), the per-class degradation detectors and the warm-up counts that learn the reference.
It takes no lock and knows no clock: ``Monitor`` validates, buffers, keeps time and holds the
lock; the tally counts what it is given. A batch goes one way through it — the detectors (one
compiled scan in stream order, which counts the batch's confusion cells on its way), then every
window, which adds those counts. Its ``state()``/``restore()`` pair is the declared state of
``streammon.state`` files.

>>> from streammon.counting.windows import Sliding
>>> from streammon.counting.batch import Batch
>>> from streammon.detection.baseline import DetectorSettings
>>> tally = Tally([Sliding(2)], ClassIndex(["a", "b"]), DegradationWatch(DetectorSettings()),
...               reference=None, positive=None, warmup=10)
>>> tally.ingest(Batch(np.array([0, 1, 1]), np.array([0, 0, 1]), None, tally.stride))
>>> tally.view(None).windows[0][2].tolist(), tally.ingested, tally.warmup_left
([[0, 0], [1, 1]], 3, 7)
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.batch import Batch
from streammon.counting.counts import ClassIndex
from streammon.counting.score_input import as_score_rows, check_column_names
from streammon.counting.scoring import Scoring
from streammon.counting.windows import Cumulative, Sliding, Timed, Window
from streammon.detection.watch import DegradationWatch
from streammon.findings.assemble import CountsView
from streammon.findings.reference import Reference
from streammon.state import StateError, decode_label, encode_label

WINDOW_TYPES: dict[str, type[Window]] = {"cumulative": Cumulative, "sliding": Sliding, "timed": Timed}


def capacity_for(k: int) -> int:
    """Matrix side for ``k`` classes: the next power of two (at least 2), so growth is rare."""
    return max(2, 1 << (k - 1).bit_length())


class Tally:
    """Windows, lifetime counts, detectors and the warm-up, for the classes of ``index``."""

    def __init__(
        self,
        windows: Sequence[Window],
        index: ClassIndex,
        watch: DegradationWatch,
        *,
        reference: Reference | None,
        positive: Hashable | None,
        warmup: int,
    ) -> None:
        self.windows = list(windows)
        self.index = index
        self.watch = watch
        self.reference = reference
        self.positive = positive
        self.stride = index.max_classes
        self.capacity = capacity_for(max(len(index), 2))
        self.lifetime = Cumulative(name="lifetime")  # every sample ever: the exported _total counters
        for w in [*self.windows, self.lifetime]:
            w.attach(self.stride, self.capacity)
        self.warmup_left = 0 if reference else warmup
        self.warm_counts = np.zeros(self.capacity, np.int64)
        self.ingested = 0
        self.declared = len(index)  # the classes given up front: the columns of K-class scores
        self.scoring: Scoring | None = None  # the score side, from the first score on (streammon.counting.scoring)
        self.column_order: str | None = None  # why scores by column are refused (column_order_refusal), if so

    def score_layout(self, ndim: int, columns: int | None) -> Scoring:
        """The score side, or a new one (not attached yet) for a first score of this shape; raises
        ``ValueError`` (nothing changed) if no score can be taken yet."""
        if self.scoring is not None:
            return self.scoring
        if self.positive is not None:  # named: known even before the other class is met
            positive: int | None = self.index.ids[self.positive]
        else:
            positive = self.positive_index() if self.reference is not None else None
        scoring = Scoring.of_first(declared=self.declared, labels=len(self.index), positive=positive, ndim=ndim,
                                   columns=columns)
        if self.column_order is not None and (scoring.columns > 1 or ndim == 2):  # a row per class: its order
            raise ValueError(self.column_order)
        return scoring

    def batch_scores(self, y_score: Any, given: npt.NDArray[np.float64],
                     n: int) -> tuple[Scoring, npt.NDArray[np.float64]]:
        """A batch's ``n`` scores (``y_score`` as given, ``given`` its float array) checked against the score side
        they fit (``score_layout``), as (n, C) rows; raises, nothing changed. A table's column names are checked
        before the layout is chosen: they must be the classes in order (``check_column_names``)."""
        if given.ndim == 2 and given.shape[1] == len(self.index.labels):
            check_column_names(y_score, self.index.labels)
        scoring = self.score_layout(given.ndim, given.shape[1] if given.ndim == 2 else None)
        return scoring, as_score_rows(given, n, columns=scoring.columns, positive=scoring.positive)

    def start_scoring(self, scoring: Scoring) -> None:
        """Keep score tallies from now on, with ``scoring``'s layout (``score_layout``)."""
        if self.scoring is None:
            scoring.attach(self.windows, self.capacity)
            self.scoring = scoring

    def register(self, labels: Iterable[Any]) -> None:
        """Register new labels (validated, all or nothing) and grow every window."""
        self.index.register(labels)
        needed = capacity_for(len(self.index))
        if needed > self.capacity:
            for w in [*self.windows, self.lifetime]:
                w.grow(needed)
            if self.scoring is not None:
                self.scoring.grow(needed)
            grown = np.zeros(needed, np.int64)
            grown[: self.capacity] = self.warm_counts
            self.warm_counts = grown
            self.capacity = needed

    def ingest(self, batch: Batch, now: float | None = None) -> None:
        """Count a validated batch: warm-up, detectors (counting the batch), windows. ``now``: the batch's time for
        the detectors' class rates where ``batch.times`` is None (the monitor's clock; None: no time)."""
        if self.warmup_left:
            take = min(self.warmup_left, len(batch))
            self.warm_counts += np.bincount(batch.indices(0, take)[0], minlength=self.capacity)
            self.warmup_left -= take
            if not self.warmup_left:
                counts = {label: int(self.warm_counts[i]) for i, label in enumerate(self.index.labels)}
                self.reference = Reference.of(counts, source="warmup")
        if self.watch.settings.enabled:  # first: its scan counts the batch for the windows on its way
            span = batch.code_span(len(self.index))
            cells = np.zeros(span * span, np.int64)
            self.watch.feed(batch.true, batch.pred, k=len(self.index), lut=batch.lut, times=batch.times, cells=cells,
                            now=now)
            batch.preset_delta(self.capacity, cells.reshape(span, span))
        else:
            self.watch.skip(len(batch))
        for w in [*self.windows, self.lifetime]:
            w.ingest(batch)
        if self.scoring is not None:
            self.scoring.ingest(batch.indices()[0], batch.scores, batch.times, rows=len(self.index))
        self.ingested += len(batch)

    def positive_index(self) -> int | None:
        """The index of the binary positive class: the given one, else the reference (or warm-up) minority."""
        labels = self.index.labels
        if len(labels) != 2:
            return None
        if self.positive is not None:
            return labels.index(self.positive)
        if self.reference is not None:
            priors = self.reference.aligned(labels)
        else:
            priors = self.warm_counts[:2].astype(np.float64)
        return 0 if priors[0] < priors[1] else 1

    def view(self, now: float | None) -> CountsView:
        """A K×K copy of every window's counts as of ``now``, with what a report needs besides."""
        k = len(self.index)
        labels = self.index.labels
        return CountsView(
            labels=labels,
            windows=tuple((w.name, w.kind, w.snapshot(now, k)) for w in self.windows),
            lifetime=self.lifetime.snapshot(now, k),
            reference=self.reference,
            positive=self.positive_index(),
            samples=self.ingested,
            warmup_remaining=self.warmup_left,
            degraded={labels[c]: (i.baseline, i.since, i.since_time, i.change_at, i.recall_after)
                      for c, i in self.watch.incidents().items()},
            baseline={labels[c]: p0 for c, p0 in self.watch.baselines().items()},
            now=now,
            scores=None if self.scoring is None else self.scoring.view(now, k, self.ingested),
            budget={labels[c]: values for c, values in self.watch.budgets().items()},
        )

    # -- declared state -------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """Every count and the class index as plain JSON data (labels typed by ``encode_label``)."""
        reference = None
        if self.reference is not None:
            reference = {"priors": [[encode_label(k), v] for k, v in self.reference.priors.items()],
                         "source": self.reference.source}
        return {
            "labels": [encode_label(label) for label in self.index.labels],
            "max_classes": self.index.max_classes,
            "capacity": self.capacity,
            "windows": [{"describe": w.describe(), "state": w.state()} for w in self.windows],
            "lifetime": self.lifetime.state(),
            "reference": reference,
            "positive": None if self.positive is None else encode_label(self.positive),
            "warmup_left": self.warmup_left,
            "warm_counts": self.warm_counts.tolist(),
            "ingested": self.ingested,
            "watch": self.watch.state(),
            "scores": None if self.scoring is None else self.scoring.state(),
        }

    def restore(self, body: dict[str, Any]) -> None:
        """Load ``state()`` into this tally, built with the same windows and classes; ``StateError`` if it
        does not fit or contradicts itself (a window holding samples the lifetime counts never saw)."""
        if self.capacity != body["capacity"]:
            raise StateError(f"saved capacity {body['capacity']!r} does not match {len(self.index)} classes")
        for window, item in zip(self.windows, body["windows"], strict=True):
            window.restore(item["state"])
        self.lifetime.restore(body["lifetime"])
        if body["reference"] is not None:
            priors = {decode_label(k): float(v) for k, v in body["reference"]["priors"]}
            # a file of an older version may hold a zero given prior: restored as saved, not judged again
            self.reference = Reference.of(priors, source=str(body["reference"]["source"]), given=False)
        self.warmup_left = _count(body["warmup_left"], "warmup_left")
        warm = np.asarray(body["warm_counts"], dtype=np.int64)
        if warm.shape != (self.capacity,) or (warm < 0).any():
            raise StateError(f"warm_counts must be {self.capacity} counts >= 0")
        self.warm_counts = warm
        self.ingested = _count(body["ingested"], "ingested")
        self.watch.restore(body["watch"])
        saved = body.get("scores")  # absent from files written before scores were taken
        if saved is not None:
            try:
                self.scoring = Scoring.restored(saved, self.windows, self.capacity, len(self.index))
            except (ValueError, TypeError, KeyError) as exc:
                raise StateError(f"saved scores do not fit this monitor: {exc}") from exc
        self._cross_check()
        if self.scoring is not None:
            for window, scores in zip(self.windows, self.scoring.view(None, self.capacity), strict=True):
                if (scores.class_counts > window.snapshot(None).sum(axis=1)).any():
                    raise StateError(f"window {window.name!r} holds more scores of a class than samples of it")

    def _cross_check(self) -> None:
        lifetime = self.lifetime.snapshot(None)
        if self.ingested != int(lifetime.sum()):
            raise StateError(f"saved sample count {self.ingested} does not match the saved counts "
                             f"({int(lifetime.sum())})")
        if self.watch.position != self.ingested:
            raise StateError(f"the detector's position {self.watch.position} is not the sample count {self.ingested}")
        for w in self.windows:
            counts = w.snapshot(None)
            if (counts > lifetime).any():
                raise StateError(f"window {w.name!r} holds {int(counts.sum())} samples that the lifetime counts "
                                 f"({self.ingested}) do not contain")
            if isinstance(w, Cumulative) and not np.array_equal(counts, lifetime):
                raise StateError(f"cumulative window {w.name!r} ({int(counts.sum())} samples) differs from the "
                                 f"lifetime counts ({self.ingested})")
            if isinstance(w, Sliding) and int(counts.sum()) != min(w.size, self.ingested):
                raise StateError(f"sliding window {w.name!r} holds {int(counts.sum())} samples, expected "
                                 f"{min(w.size, self.ingested)}")


def _count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise StateError(f"{what} must be an int >= 0, got {value!r}")
    return value


def column_order_refusal(classes: list[Any], labels: tuple[Any, ...]) -> str | None:
    """The refusal of scores with a column per class when ``classes=`` lists its classes in another order than
    ``Monitor.labels`` (the reference's first): the columns could follow either. None where the orders agree."""
    listed = list(dict.fromkeys(classes))
    kept = [label for label in labels if label in set(listed)]
    if kept == listed:
        return None
    return (f"classes={listed!r} lists the classes in another order than Monitor.labels {list(labels)!r} (the "
            "reference's classes first, in its order): a score's columns (one per class) follow Monitor.labels, and "
            "scores given in classes='s order would be read as the wrong classes; pass classes= in the order of "
            "Monitor.labels, or reference= in classes='s order")
