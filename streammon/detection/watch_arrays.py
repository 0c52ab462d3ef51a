"""The per-class state of the degradation watch (``streammon.detection.watch``): each class's baseline and its
bank of CUSUMs (``streammon.detection.bank``), held in arrays the compiled scan (``streammon.detection.kernel``)
steps on, grown as classes appear, and the open incidents' record (``Incident``). ``DegradationWatch`` builds on
it with feeding, incidents, reading and its saved state.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammon.detection import kernel
from streammon.detection.bank import FINAL_Z, MEMBERS, Bank, baseline_recall, learned_recall
from streammon.detection.baseline import DetectorSettings
from streammon.detection.rates import Budget
from streammon.detection.thresholds import thresholds

CLOSED_KEPT = 256  # closed incidents kept in memory (not saved): the latest ones


@dataclass(frozen=True)
class Incident:
    """An open degradation incident of one class.

    ``since``/``since_time``: the stream index (samples before it) and time of the sample at which
    the alarm rang; ``change_at``: the estimated change point (stream index of the first sample of the
    alarming excursion); ``recall_after``: the class's recall since then (estimate); ``baseline``: ``p0``.
    """

    baseline: float
    since: int
    since_time: float
    change_at: int
    recall_after: float
    samples: int  # the class's samples in the alarming excursion


class WatchArrays:
    """Every class's baseline, bank and arrays (see the module docstring); ``DegradationWatch`` feeds and reads them."""

    def __init__(self, settings: DetectorSettings, given: dict[int, tuple[float, float]] | None = None) -> None:
        self.settings = settings
        self._reset(given or {})

    def _reset(self, given: dict[int, tuple[float, float]]) -> None:
        self.position = 0  # stream index of the next sample
        self.banks: dict[int, Bank] = {}
        self.baseline: dict[int, tuple[float, float]] = {}
        self.source: dict[int, str] = {}
        self.open: dict[int, Incident] = {}
        self.assessed: dict[int, tuple[int, int]] = {}  # (right, total) after the alarm of an open incident
        self.closed: deque[tuple[int, Incident, int]] = deque(maxlen=CLOSED_KEPT)  # (class, incident, cleared at)
        self._k = 0
        self._arrays: dict[str, Any] = {}
        self._scratch = np.empty(0, np.int64)  # the scan's per-code scratch space
        self._wrongs_found = np.empty(kernel.SEGMENT + 1, np.int64)
        self._identity = np.arange(0, dtype=np.intp)  # feed's code table where codes are class indices
        self.budget = Budget(interval=self.settings.false_alarm_interval, fixed=self.settings.arl)
        self._observed = np.zeros(0, np.int64)  # each class's count when the rates last saw it (few batches do)
        self._watched = 0  # classes whose bank watches (degraded ones included): the W of the time budget
        self._grow(max(given, default=-1) + 1)
        for cls, (correct, total) in given.items():
            if total > 0:
                self._start(cls, correct, total, "given")

    # -- arrays -------------------------------------------------------------------------------

    def _grow(self, k: int) -> None:
        """Room for ``k`` classes; a new class learns its baseline (or is not watched when learning is off)."""
        if k <= self._k:
            return
        shapes = {"status": (np.int8, ()), "stat": (np.float64, (MEMBERS,)), "up": (np.float64, (MEMBERS,)),
                  "down": (np.float64, (MEMBERS,)), "h": (np.float64, (MEMBERS,)), "count": (np.int64, ()),
                  "seen": (np.int64, ()), "start": (np.int64, (MEMBERS,)), "start_at": (np.int64, (MEMBERS,)),
                  "recovery": (np.float64, ()), "rec_up": (np.float64, ()), "rec_down": (np.float64, ()),
                  "rec_h": (np.float64, ()), "learned": (np.int64, (2,)), "target": (np.int64, ())}
        for name, (dtype, tail) in shapes.items():
            grown = np.zeros((k, *tail), dtype)
            if self._k:
                grown[: self._k] = self._arrays[name]
            self._arrays[name] = grown
        self._arrays["status"][self._k:] = kernel.LEARNING
        self._arrays["h"][self._k:] = math.inf
        self._arrays["target"][self._k:] = self.settings.baseline_samples
        self._k = k
        self.budget.grow(k)
        self._observed = np.concatenate([self._observed, np.zeros(k - len(self._observed), np.int64)])

    def _start(self, cls: int, correct: float, total: float, source: str, h: list[float] | None = None, *,
               restart: bool = True) -> None:
        """Watch ``cls`` from baseline counts (``h``: saved thresholds, else the tables'); ``restart=False`` keeps
        the statistics (a refined baseline: the same members, re-tuned — evidence of a change under way stays)."""
        was_watching = cls in self.banks and self.banks[cls].watching
        self.baseline[cls], self.source[cls] = (correct, total), source
        # (to be refined again: ½ s.e. below; or for good under the time budget: 1 s.e. below — at its long run
        # lengths an overestimate by the baseline's own noise raises false alarms by a convex factor with a heavy
        # tail, one baseline in ~30 at 4–15×; at ½ s.e. 60 seeds × 60 days at 10/s ran at 1.5× the budget —
        # examples/bench_false_alarm_budget.py part 4, docs/explanation/detection.md)
        young = source == "learned" and total < self.settings.refine_until
        final = source == "learned" and not young and self.settings.arl is None
        p0 = (learned_recall(correct, total) if young else learned_recall(correct, total, FINAL_Z) if final
              else baseline_recall(correct, total))
        bank = Bank.of(p0, total)
        self.banks[cls] = bank
        a = self._arrays
        a["up"][cls], a["down"][cls] = bank.arrays()
        self._watched += bank.watching - was_watching
        if bank.watching:
            a["h"][cls] = thresholds(bank, arl=self.budget.give(cls, watched=self._watched)) if h is None else h
            a["status"][cls] = kernel.WATCHING
        else:
            self.budget.forget(cls)
            a["status"][cls] = kernel.UNWATCHED
        if restart or not bank.watching:
            a["stat"][cls] = 0.0
        a["seen"][cls] = a["count"][cls]
        a["target"][cls] = self._next_target(int(total)) if source == "learned" and bank.watching else kernel.NEVER

    def _next_target(self, total: int) -> int:
        """When a learned baseline is next due: at twice its samples, up to ``refine_until``."""
        return min(2 * total, self.settings.refine_until) if total < self.settings.refine_until else kernel.NEVER
