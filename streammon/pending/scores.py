"""The scores on the prediction side: the score tallies of every ``predict`` call's prediction (by predicted class,
in the monitor's windows by prediction time), and the state of the pending predictions' scores.

A prediction given a score (``y_score=``) is buffered with its position among the buffered predictions; when the
buffer is flushed, every buffered prediction — with a score or without (a NaN row) — goes to the prediction side's
score windows, so a sliding window evicts exactly the predictions its confusion counterpart evicts. The pending
store keeps each pending prediction's score (``PendingRecords.scores``) until its label takes it; ``state`` and
``restore`` carry those scores and the tallies in the state file (its ``prediction_scores`` entry).

At K > 2 the side keeps its last ``PREDICTION_LIMIT`` (10,000: the default ``sliding_10000``) scored predictions exact
(``Scoring``'s ring, rows the predicted class; the labelled side keeps ``EXACT_RANKING_LIMIT``): a K > 2 window's
label-free estimate by EM needs each prediction's score vector (``streammon.findings.score_estimate``). The ring's
suffix rule (``streammon.counting.exact_scores``) holds here as on the labelled side: these windows only ever take
predictions, in the order they were accepted (a label that joins later moves the prediction's status in the label
side's count windows, ``pending.sides``, never here), and evict the oldest first. A state file written without the
ring loads with an empty one.

>>> from streammon.counting.windows import Cumulative
>>> side = PredictionScores()
>>> side.buffered.append((1, (0.9,)))
>>> side.feed(Scoring(1, 1), [Cumulative()], 2, [0, 1], [0.0, 0.0])
>>> side.tallies is not None and side.tallies.view(None, 2)[0].class_counts.tolist()
[0, 1]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from streammon.counting.exact_scores import PREDICTION_LIMIT
from streammon.counting.scoring import Scoring
from streammon.counting.windows import Window
from streammon.pending.memory import PendingRecords


class PredictionScores:
    """The buffered scored predictions and the prediction side's score windows (allocated by the first feed)."""

    def __init__(self) -> None:
        self.buffered: list[tuple[int, Any]] = []  # (position among the buffered predictions, score row)
        self.tallies: Scoring | None = None  # rows: the predicted class

    def feed(self, scoring: Scoring, windows: Sequence[Window], capacity: int, codes: Sequence[int],
             times: Sequence[float]) -> None:
        """Count the buffered predictions (``codes``, ``times``; the scored ones from ``buffered``)."""
        if self.tallies is None:
            # rows: predicted classes; exact score vectors only where EM reads them (K > 2: a binary estimate reads
            # the histogram), so a binary monitor's state file does not carry 10,000 unused scores
            self.tallies = Scoring(scoring.columns, scoring.positive, exact=scoring.columns > 1, limit=PREDICTION_LIMIT,
                                   distinct=False)
            self.tallies.attach(windows, capacity)
        elif self.tallies.windows[0].rows < capacity:
            self.tallies.grow(capacity)
        scores = np.full((len(codes), scoring.columns), np.nan)
        for at, row in self.buffered:
            scores[at] = row
        self.buffered = []
        self.tallies.ingest(np.asarray(codes, dtype=np.intp), scores, np.asarray(times, dtype=np.float64))

    def state(self, records: PendingRecords) -> dict[str, Any] | None:
        """The pending predictions' scores and the tallies as plain data (None before any score)."""
        if self.tallies is None and not records.scores:
            return None
        rows = [[seq, *(row if isinstance(row, tuple) else (row,))] for seq, row in records.scores.items()]
        return {"records": rows, "tallies": None if self.tallies is None else self.tallies.state()}

    def restore(self, saved: Any, records: PendingRecords, scoring: Scoring | None, *, windows: Sequence[Window],
                capacity: int, labels: int) -> None:
        """Load ``state`` into an empty side and the restored ``records`` (``ValueError`` naming what does not fit)."""
        if saved is None:
            return
        if scoring is None or not isinstance(saved, dict) or set(saved) != {"records", "tallies"} \
                or not isinstance(saved["records"], list):
            raise ValueError("saved prediction scores need the monitor's scores and hold records and tallies")
        for item in saved["records"]:
            if not isinstance(item, list) or len(item) != 1 + scoring.columns or type(item[0]) is not int:
                raise ValueError(f"a saved pending score must be [seq, {scoring.columns} score(s)], got {item!r:.60}")
            seq, values = item[0], [float(v) for v in item[1:]]
            if not all(0.0 <= v <= 1.0 for v in values) or seq in records.scores:
                raise ValueError(f"saved pending score of prediction {seq} is out of [0, 1] or repeated")
            if not records.holds_pending(seq):
                raise ValueError(f"saved pending score of prediction {seq}, which is not pending")
            records.attach_score(seq, values[0] if len(values) == 1 else tuple(values))
        if saved["tallies"] is not None:
            self.tallies = Scoring.restored(saved["tallies"], windows, capacity, labels, exact=scoring.columns > 1,
                                            limit=PREDICTION_LIMIT, distinct=False)
