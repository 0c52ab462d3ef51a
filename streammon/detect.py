"""Per-class degradation detection: a Bernoulli CUSUM on each class's correctness stream.

The detector never looks at the class mix: it sees, for one class at a time, the
sequence "was this sample of the class predicted right?". A pure prior shift
changes how many samples each class gets, not their correctness, so it cannot
raise a degradation alarm.

For class ``i`` with in-control recall ``p0`` (the Wilson lower bound, at
``baseline_confidence``, of the baseline's recall — so that a noisy baseline does
not raise false alarms) and out-of-control recall ``p1 = p0 − drop``, each
sample adds the log-likelihood ratio ``ln(p1/p0)`` (right) or
``ln((1−p1)/(1−p0))`` (wrong) to ``S = max(0, S + LLR)``; the alarm rings when
``S ≥ h = ln(arl)``. **False-alarm bound** (Lorden): with the class's recall at
``p0`` or above, the average number of that class's samples between false
alarms is at least ``arl`` (default 10⁶; the conservative ``p0`` makes real false
alarms far rarer — none in the scenario benchmark's 2 million samples). After an alarm a mirror CUSUM
(evidence for ``p0`` over ``p1``) clears it once recall is back.

The recursion is evaluated with numpy over whole batches (Lindley's form
``S_t = C_t − min(−S_0, min_{k≤t} C_k)`` on the cumulative sums ``C``), split only
where the alarm switches on or off.

>>> d = ClassDetector(p0=0.8, drop=0.2, arl=1e7)
>>> rng = np.random.default_rng(0)
>>> d.feed(rng.random(5000) < 0.8, np.arange(5000))
>>> d.active
False
>>> d.feed(rng.random(400) < 0.4, np.arange(5000, 5400))
>>> d.active, 5000 <= d.since < 5400
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from streammon.metrics.intervals import wilson

BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class DetectorSettings:
    """How degradation is detected (see the module docstring).

    ``drop`` — the absolute recall drop the CUSUM is tuned for (smaller drops are
    detected later); ``arl`` — the false-alarm bound in samples of a class;
    ``baseline_confidence`` — the in-control recall is the Wilson lower bound of
    the baseline at this confidence; ``baseline_samples`` — when no baseline is
    given, each class's first this-many labelled samples make its baseline.
    """

    drop: float = 0.2
    arl: float = 1e6
    baseline_confidence: float = 0.95
    baseline_samples: int = 500

    def in_control_recall(self, correct: float, total: float) -> float:
        """The conservative baseline recall ``p0`` from baseline counts."""
        return wilson(correct, total, self.baseline_confidence)[0]


def cusum_path(llr: npt.NDArray[np.float64], start: float) -> npt.NDArray[np.float64]:
    """``S_t = max(0, S_{t−1} + llr_t)`` for every t, from ``S_0 = start`` (vectorised).

    >>> cusum_path(np.array([1.0, -3.0, 2.0, 0.5]), 0.0).tolist()
    [1.0, 0.0, 2.0, 2.5]
    """
    c = np.cumsum(llr)
    return np.asarray(c - np.minimum(np.minimum.accumulate(c), -start))


class ClassDetector:
    """The CUSUM pair of one class; ``active`` while a degradation is signalled."""

    __slots__ = ("active", "down", "h", "p0", "p1", "since", "since_time", "statistic", "up")

    def __init__(self, *, p0: float, drop: float, arl: float) -> None:
        self.p0 = min(max(p0, 1e-6), 1 - 1e-6)
        self.p1 = max(self.p0 - drop, 1e-6)
        self.up = math.log(self.p1 / self.p0)  # a correct sample: evidence against degradation
        self.down = math.log((1 - self.p1) / (1 - self.p0))  # a wrong one: evidence for it
        self.h = math.log(arl)
        self.statistic = 0.0  # S (looking for degradation) or, while active, T (looking for recovery)
        self.active = False
        self.since = -1  # stream index of the sample that switched the alarm on
        self.since_time = math.nan

    @property
    def can_degrade(self) -> bool:
        """False when the baseline recall is already too low to drop by ``drop``."""
        return self.p1 < self.p0

    def feed(self, correct: BoolArray, positions: npt.NDArray[np.int64],
             times: npt.NDArray[np.float64] | None = None) -> None:
        """Process this class's samples in order; ``positions`` are their stream indices, ``times`` their times."""
        if not self.can_degrade or len(correct) == 0:
            return
        llr = np.where(correct, self.up, self.down)
        position = 0
        while position < len(llr):
            chunk = llr[position:] if not self.active else -llr[position:]
            path = cusum_path(chunk, self.statistic)
            crossed = np.flatnonzero(path >= self.h)
            if len(crossed) == 0:
                self.statistic = float(path[-1])
                return
            position += int(crossed[0]) + 1
            self.active = not self.active
            self.statistic = 0.0
            if self.active:
                self.since = int(positions[position - 1])
                self.since_time = math.nan if times is None else float(times[position - 1])

    def state(self) -> dict[str, float | bool | int]:
        """Everything needed to restore the detector."""
        return {"p0": self.p0, "p1": self.p1, "statistic": self.statistic, "active": self.active, "since": self.since}


def class_groups(true: npt.NDArray[np.intp], k: int) -> list[tuple[int, npt.NDArray[np.intp]]]:
    """For each class present in ``true``, the positions of its samples in arrival order.

    >>> [(c, idx.tolist()) for c, idx in class_groups(np.array([1, 0, 1, 2]), 3)]
    [(0, [1]), (1, [0, 2]), (2, [3])]
    """
    counts = np.bincount(true, minlength=k)
    present = np.flatnonzero(counts)
    if len(present) == 1:
        return [(int(present[0]), np.arange(len(true)))]
    small = true.astype(np.int16) if k < 2**15 else true  # 16-bit keys: numpy's stable sort is a radix sort
    order = np.argsort(small, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(counts[present])])
    return [(int(c), order[bounds[i]:bounds[i + 1]]) for i, c in enumerate(present)]


class DegradationWatch:
    """Baselines and CUSUM detectors of every class; fed batches of class indices in stream order.

    A class's baseline comes from ``given`` (correct, total) counts, or else from its
    first ``settings.baseline_samples`` labelled samples; its detector starts then.
    """

    def __init__(self, settings: DetectorSettings, given: dict[int, tuple[float, float]] | None = None) -> None:
        self.settings = settings
        self.detectors: dict[int, ClassDetector] = {}
        self.learning: dict[int, list[int]] = {}  # class -> [correct, total] while its baseline is learned
        self.baseline: dict[int, tuple[float, float]] = {}
        self.source: dict[int, str] = {}
        for cls, (correct, total) in (given or {}).items():
            if total > 0:
                self._start(cls, correct, total, "given")

    def _start(self, cls: int, correct: float, total: float, source: str) -> None:
        self.baseline[cls] = (correct, total)
        self.source[cls] = source
        p0 = self.settings.in_control_recall(correct, total)
        self.detectors[cls] = ClassDetector(p0=p0, drop=self.settings.drop, arl=self.settings.arl)

    def ingest(self, true: npt.NDArray[np.intp], pred: npt.NDArray[np.intp], first_index: int, k: int,
               times: npt.NDArray[np.float64] | None = None) -> None:
        """Feed one batch; ``first_index`` is the stream index of its first sample."""
        for cls, idx in class_groups(true, k):
            correct = pred[idx] == cls
            positions = idx.astype(np.int64) + first_index
            stamps = None if times is None else times[idx]
            if cls not in self.detectors:
                learned = self.learning.setdefault(cls, [0, 0])
                take = min(len(correct), self.settings.baseline_samples - learned[1])
                learned[0] += int(correct[:take].sum())
                learned[1] += take
                if learned[1] < self.settings.baseline_samples:
                    continue
                self._start(cls, learned[0], learned[1], "learned")
                del self.learning[cls]
                correct, positions = correct[take:], positions[take:]
                stamps = None if stamps is None else stamps[take:]
            self.detectors[cls].feed(correct, positions, stamps)

    def active(self) -> dict[int, ClassDetector]:
        """The classes whose degradation alarm is on."""
        return {cls: d for cls, d in self.detectors.items() if d.active}
