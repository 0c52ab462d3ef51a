"""The last ``EXACT_RANKING_LIMIT`` scored samples of a monitor, exact: what a window that holds few scored samples
reads its ROC AUC and average precision from (``streammon.metrics.exact_ranking``), instead of its bins.

One ring a monitor, not one a window: every window's scored samples are a *suffix* of the monitor's scored
samples in the order the windows ingest them — cumulative: all of them; sliding by count: those among the last
``size`` samples; sliding by time: those of buckets still live, which (sample times never decreasing) came after
every sample of an expired bucket. So a window of ``n`` scored samples, ``n`` at most what the ring holds, holds
exactly the ring's last ``n`` (``ScoreRing.last``). A timed window that took a sample out of time order is a
suffix again only once it holds no sample up to that one (``TimedScores.broken_at``).

A prediction side of K > 2 classes keeps one too (``streammon.pending.scores``: its "true" classes are the
predicted ones, its windows take every prediction in order and never remove one), whose exact score vectors feed
the K > 2 label-free estimate by EM (``streammon.findings.score_estimate``).

Each batch appends its scored rows (a copy of at most ``limit`` rows: the cost of a memcpy); the ring counts every
sample appended (``total``) so that a window can say where its suffix starts. Saved in the state file with the
score tallies (an optional part: a file without it loads with an empty ring, and the windows read their bins
until they qualify again).

>>> ring = ScoreRing(columns=1, limit=3)
>>> ring.append(np.array([0, 1, 1, 0]), np.array([[0.1], [0.9], [0.7], [0.2]]))
>>> ring.total, ring.held
(4, 3)
>>> true, scores = ring.last(2)
>>> true.tolist(), scores[:, 0].tolist()
([1, 0], [0.7, 0.2])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.bin_values import BinValues, bin_values
from streammon.metrics.distinct_bins import distinct_bins
from streammon.metrics.exact_ranking import EXACT_RANKING_LIMIT
from streammon.metrics.score_bins import score_bins

Samples = tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]  # (true classes (n,), scores (n, C)), read-only

# The prediction side's ring (``streammon.pending.scores``) is longer: its exact score vectors feed the label-free
# EM estimate at K > 2 (``streammon.findings.score_estimate``), which needs every prediction's vector, and 10,000
# covers the default windows' ``sliding_10000``. EM on 10,000 predictions costs ~0.35 s at K = 3 and ~1.5 s at K =
# 10 of a report's CPU with the Validation's 50 bootstrap replicas (once per changed window and report; an unchanged
# window is cached); the ring takes 10,000 × (K + 1) × 8 bytes (0.9 MB at K = 10).
PREDICTION_LIMIT = 10_000


class ScoreRing:
    """The last ``limit`` scored samples (true class, scores) appended, and how many were appended (``total``).
    ``bins``: keep each score's bin too, to say which bins hold distinct scores (``distinct``)."""

    __slots__ = ("_bins", "_distinct", "_scores", "_true", "_values", "limit", "total")

    def __init__(self, columns: int, limit: int = EXACT_RANKING_LIMIT, *, bins: bool = False) -> None:
        self.limit = limit
        self.total = 0
        self._true = np.zeros(limit, np.intp)
        self._scores = np.zeros((limit, columns))
        self._bins = np.zeros((limit, columns), np.int16) if bins else None
        self._distinct: tuple[int, npt.NDArray[np.bool_]] | None = None  # (total, flags) of the last ``distinct``
        self._values: tuple[int, int, BinValues] | None = None  # (total, k, values) of the last ``values``

    @property
    def held(self) -> int:
        """The samples the ring holds: the last ``held`` appended."""
        return min(self.total, self.limit)

    def append(self, true: npt.NDArray[np.intp], scores: npt.NDArray[np.float64],
               bins: npt.NDArray[np.int16] | None = None) -> None:
        """Append scored samples in order (every row of ``scores`` finite: the caller took the scored rows; ``bins``
        their bins, if the caller made them: a ring that keeps bins makes them otherwise)."""
        m = len(true)
        if self._bins is not None and bins is None:
            bins = score_bins(scores).astype(np.int16)
        if m > self.limit:  # only the last ``limit`` stay
            true, scores = true[m - self.limit:], scores[m - self.limit:]
            bins = None if bins is None else bins[m - self.limit:]
        first = (self.total + m - len(true)) % self.limit
        head = min(len(true), self.limit - first)
        self._true[first:first + head] = true[:head]
        self._scores[first:first + head] = scores[:head]
        self._true[:len(true) - head] = true[head:]
        self._scores[:len(true) - head] = scores[head:]
        if self._bins is not None and bins is not None:
            self._bins[first:first + head] = bins[:head]
            self._bins[:len(true) - head] = bins[head:]
        self.total += m

    def distinct(self) -> npt.NDArray[np.bool_] | None:
        """The (C, BINS) bins that hold distinct scores as the held samples show them
        (``streammon.metrics.score_kernel.distinct_bins``), read-only; None for a ring that keeps no bins or holds
        no sample (a state file written before exact scores were kept: every bin then reads tied, as before).
        Made again only once more samples came."""
        if self._bins is None or self.held == 0:
            return None
        if self._distinct is None or self._distinct[0] != self.total:
            held = self.held
            flags = distinct_bins(self._bins[:held], self._scores[:held])  # the slots in any order: a set
            flags.flags.writeable = False
            self._distinct = (self.total, flags)
        return self._distinct[1]

    def values(self, k: int) -> BinValues | None:
        """What the held samples show inside the bins (``streammon.metrics.bin_values``: the values of each bin
        that holds repeated distinct ones, each class's share at each, and ``distinct``'s flags), for classes
        ``[0, k)``; None where ``distinct`` is. Made once per ``total`` and ``k``, and only when asked (a window
        that reads its bins)."""
        flags = self.distinct()
        if flags is None or self._bins is None:
            return None
        if self._values is None or self._values[:2] != (self.total, k):
            held = self.held
            self._values = (self.total, k, bin_values(self._bins[:held], self._scores[:held], self._true[:held], k,
                                                      flags=flags))
        return self._values[2]

    def last(self, n: int) -> Samples:
        """A read-only copy of the last ``n`` samples appended (``n`` at most ``held``), oldest first."""
        start = (self.total - n) % self.limit
        head = min(n, self.limit - start)  # the slots up to the ring's end, then from its start
        true = np.concatenate([self._true[start:start + head], self._true[:n - head]])
        scores = np.concatenate([self._scores[start:start + head], self._scores[:n - head]])
        true.flags.writeable = False
        scores.flags.writeable = False
        return true, scores

    def state(self) -> dict[str, Any]:
        """Plain data: ``total`` and the held samples, oldest first."""
        true, scores = self.last(self.held)
        return {"total": self.total, "true": true.tolist(), "scores": scores.tolist()}

    def restore(self, state: Any, rows: int) -> None:
        """Load ``state()`` (``ValueError`` naming what does not fit: classes in [0, rows), finite scores in
        [0, 1] of this ring's columns, as many as ``total`` leaves held); nothing changes on an error."""
        if not isinstance(state, dict) or set(state) != {"total", "true", "scores"}:
            raise ValueError("saved exact scores must hold total, true and scores")
        total = state["total"]
        if type(total) is not int or total < 0:
            raise ValueError(f"saved exact scores' total must be an int >= 0, got {total!r:.60}")
        held = min(total, self.limit)
        try:
            true = np.asarray(state["true"], dtype=np.int64).reshape(-1)
            scores = np.asarray(state["scores"], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"saved exact scores must be numbers: {exc}") from None
        columns = self._scores.shape[1]
        if scores.size == 0:  # JSON keeps no shape for an empty list
            scores = scores.reshape(0, columns)
        if true.shape != (held,) or scores.shape != (held, columns):
            raise ValueError(f"saved exact scores must hold the last {held} of {total} samples: {held} classes and "
                             f"({held}, {columns}) scores, got {true.shape} and {scores.shape}")
        if held and (true.min() < 0 or true.max() >= rows):
            raise ValueError(f"saved exact scores' classes must lie in [0, {rows})")
        if not (np.isfinite(scores).all() and (scores >= 0).all() and (scores <= 1).all()):
            raise ValueError("saved exact scores must be finite and in [0, 1]")
        self.total = total - held  # appended from there, sample number p lands in slot ``p mod limit``
        self.append(true.astype(np.intp), scores)
