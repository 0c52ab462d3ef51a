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

The detector steps once per **block** of ``BLOCK`` (256) samples, aligned to absolute
stream positions, with each class's (right, total) counts in the block: the block's
LLR sum enters ``S' = max(0, S' + ΣLLR)``. ``S'`` never exceeds the per-sample CUSUM
(it only skips resets inside a block), so the false-alarm bound still holds — but an
alarm can come several blocks later than the per-sample CUSUM's (a reset skipped inside
a block keeps evidence against the change that the per-sample statistic forgets). Because
blocks are aligned to the stream, not to calls, ``update`` and ``update_many`` raise the same
alerts; a partial block waits for its remaining samples. Per-block counts come from
``streammon.counting.blocks``; the recursion over
blocks uses Lindley's form ``S_t = C_t − min(−S_0, min_{k≤t} C_k)`` on cumulative sums.

>>> d = ClassDetector(p0=0.8, drop=0.2, arl=1e7)
>>> rng = np.random.default_rng(0)
>>> d.feed(rng.random(5000) < 0.8, np.arange(5000))
>>> d.active
False
>>> d.feed(rng.random(400) < 0.4, np.arange(5000, 5400))
>>> d.active, 5000 <= d.since < 5400
(True, True)
>>> BLOCK
256
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.blocks import BLOCK
from streammon.detection.baseline import DetectorSettings

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
FEED_CELLS = 1 << 15  # (block, class) cells per vectorised CUSUM pass


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

    def feed(self, correct: BoolArray, positions: IntArray, times: npt.NDArray[np.float64] | None = None) -> None:
        """Process this class's samples one by one (a block per sample); ``positions`` are stream indices."""
        # (Mutation testing: float ones or 0/1 give the same LLR sums: the dtype mutants are equivalent.)
        ones = np.ones(len(correct), np.int64)
        self.feed_blocks(correct.astype(np.int64), ones, positions, times)

    def feed_blocks(self, right: IntArray, total: IntArray, ends: IntArray,
                    times: npt.NDArray[np.float64] | None = None) -> None:
        """Process blocks of this class's samples: ``right`` of ``total`` correct, the block's last sample
        at stream index ``ends`` (and time ``times``). Blocks without samples are skipped."""
        if not self.can_degrade:
            return
        keep = total > 0
        if not keep.all():
            right, total, ends = right[keep], total[keep], ends[keep]
            times = None if times is None else times[keep]
        llr = right * self.up + (total - right) * self.down
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
                self.since = int(ends[position - 1])
                self.since_time = math.nan if times is None else float(times[position - 1])

    def state(self) -> dict[str, float | bool | int]:
        """Everything needed to restore the detector."""
        return {"statistic": self.statistic, "active": self.active, "since": self.since, "since_time": self.since_time}


class DegradationWatch:
    """Baselines and CUSUM detectors of every class, fed batches in stream order, one block at a time.

    A class's baseline comes from ``given`` (correct, total) counts, or else from its
    first blocks until they hold ``settings.baseline_samples`` of its samples; its
    detector starts with the next block.
    """

    def __init__(self, settings: DetectorSettings, given: dict[int, tuple[float, float]] | None = None) -> None:
        self.settings = settings
        self.detectors: dict[int, ClassDetector] = {}
        self.learning: dict[int, list[int]] = {}  # class -> [correct, total] while its baseline is learned
        self.baseline: dict[int, tuple[float, float]] = {}
        self.source: dict[int, str] = {}
        self.position = 0  # stream index of the next sample
        # (Mutation testing: an empty pending of any dtype or width is [] in state() and is replaced by the first
        # ingest before it is read; pending_time is never read: equivalent mutants.)
        self.pending = np.zeros((0, 2), np.int64)  # per class [total, right] of the partial block
        self.pending_time = math.nan
        for cls, (correct, total) in (given or {}).items():
            if total > 0:
                self._start(cls, correct, total, "given")

    def _start(self, cls: int, correct: float, total: float, source: str) -> None:
        self.baseline[cls] = (correct, total)
        self.source[cls] = source
        p0 = self.settings.in_control_recall(correct, total)
        self.detectors[cls] = ClassDetector(p0=p0, drop=self.settings.drop, arl=self.settings.arl)

    def ingest(self, right: IntArray, total: IntArray, n: int,
               times: npt.NDArray[np.float64] | float | None = None) -> None:
        """Feed the next ``n`` samples of the stream as their per-block counts (``block_counts``).

        ``right`` and ``total`` are blocks × classes, blocks aligned to the stream from
        ``self.position``; their first row is completed with the pending partial block.
        """
        offset = self.position % BLOCK
        n_blocks = len(total)
        if len(self.pending):
            total[0, : len(self.pending)] += self.pending[:, 0]
            right[0, : len(self.pending)] += self.pending[:, 1]
        complete = n_blocks if (offset + n) % BLOCK == 0 else n_blocks - 1
        # (Mutation testing: arange's default dtype is int64; a complete block ends at most at the batch's last
        # sample, so ends - position <= n - 1 and a larger bound than n - 1 is an equivalent mutant.)
        ends = self.position - offset + (np.arange(complete, dtype=np.int64) + 1) * BLOCK - 1
        end_times = None
        if isinstance(times, np.ndarray):
            end_times = times[np.minimum(ends - self.position, n - 1)]
        elif times is not None:
            end_times = np.full(complete, float(times))
        if complete:
            self._feed(right[:complete], total[:complete], ends, end_times)
        self.pending = np.zeros((total.shape[1], 2), np.int64)
        if complete < n_blocks:
            self.pending[:, 0], self.pending[:, 1] = total[-1], right[-1]
        self.position += n

    def skip(self, n: int) -> None:
        """Move past ``n`` samples without looking at them (detection turned off)."""
        self.position += n

    def _feed(self, right: IntArray, total: IntArray, ends: IntArray,
              times: npt.NDArray[np.float64] | None) -> None:
        """Complete blocks (blocks × classes): every running detector at once, per class only near a switch."""
        # (Mutation testing: every detector's class is a column (the index holds the baseline's classes), so
        # `c <= k` adds none and `or` only adds detectors that cannot degrade (p1 = p0: zero LLR, and feed_blocks
        # returns at once for them); `<=` in the next test only loops over classes that all have a detector; a
        # pass of 2 blocks for k > FEED_CELLS, and minimum.accumulate without axis= (axis 0 is its default),
        # compute the same paths: equivalent mutants.)
        running = [c for c, d in self.detectors.items() if c < total.shape[1] and d.can_degrade]
        if len(self.detectors) < total.shape[1]:  # some class still learns its baseline
            for cls in np.flatnonzero(total.any(axis=0)).tolist():
                if cls not in self.detectors:
                    self._feed_class(cls, right[:, cls], total[:, cls], ends, times)
        if not running:
            return
        k = total.shape[1]
        up, down, sign, start = np.zeros(k), np.zeros(k), np.ones(k), np.zeros(k)
        for c in running:
            d = self.detectors[c]
            up[c], down[c], start[c] = d.up, d.down, d.statistic
            sign[c] = -1.0 if d.active else 1.0
        h = self.detectors[running[0]].h
        step = max(1, FEED_CELLS // k)  # blocks per pass: the temporaries stay in cache
        for lo in range(0, len(total), step):
            hi = lo + step
            llr = total[lo:hi] * (sign * down)  # per block: right·up + wrong·down, mirrored while active
            llr += right[lo:hi] * (sign * (up - down))
            path = np.cumsum(llr, axis=0)
            low = np.minimum.accumulate(path, axis=0)
            np.minimum(low, -start, out=low)
            path -= low  # Lindley: S_t = C_t − min(−S_0, min_{k≤t} C_k)
            crossing = np.flatnonzero(path.max(axis=0) >= h)
            before, start = start, path[-1].copy()
            for col in crossing.tolist():  # rare: a switch inside these blocks, replayed exactly
                d = self.detectors[col]
                d.statistic = float(before[col])
                part = None if times is None else times[lo:hi]
                d.feed_blocks(right[lo:hi, col], total[lo:hi, col], ends[lo:hi], part)
                start[col], sign[col] = d.statistic, -1.0 if d.active else 1.0
        for c in running:
            self.detectors[c].statistic = float(start[c])

    def _feed_class(self, cls: int, right: IntArray, total: IntArray, ends: IntArray,
                    times: npt.NDArray[np.float64] | None) -> None:
        if cls not in self.detectors:
            learned = self.learning.setdefault(cls, [0, 0])
            seen = learned[1] + np.cumsum(total)
            done = int(np.searchsorted(seen, self.settings.baseline_samples))  # first block reaching the count
            if done >= len(total):
                learned[0] += int(right.sum())
                learned[1] += int(total.sum())
                return
            self._start(cls, learned[0] + int(right[: done + 1].sum()), int(seen[done]), "learned")
            del self.learning[cls]
            right, total, ends = right[done + 1:], total[done + 1:], ends[done + 1:]
            times = None if times is None else times[done + 1:]
            self.detectors[cls].feed_blocks(right, total, ends, times)

    def active(self) -> dict[int, ClassDetector]:
        """The classes whose degradation alarm is on."""
        return {cls: d for cls, d in self.detectors.items() if d.active}

    def state(self) -> dict[str, Any]:
        """Baselines, detector statistics, learning counts and the partial block, as plain data."""
        return {
            "position": self.position,
            "pending": self.pending.tolist(),
            "learning": {str(c): v for c, v in self.learning.items()},
            "classes": {
                str(c): {"baseline": list(self.baseline[c]), "source": self.source[c], **d.state()}
                for c, d in self.detectors.items()
            },
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Load a ``state()``; detectors are rebuilt from their baselines and settings."""
        self.position = int(state["position"])
        # (Mutation testing: saved ints read as int64 without dtype=, and reshape(-2, 2) is reshape(-1, 2) to
        # NumPy: equivalent mutants.)
        self.pending = np.asarray(state["pending"], dtype=np.int64).reshape(-1, 2)
        self.learning = {int(c): [int(v[0]), int(v[1])] for c, v in state["learning"].items()}
        self.detectors, self.baseline, self.source = {}, {}, {}
        for c, saved in state["classes"].items():
            correct, total = saved["baseline"]
            self._start(int(c), float(correct), float(total), str(saved["source"]))
            detector = self.detectors[int(c)]
            detector.statistic = float(saved["statistic"])
            detector.active = bool(saved["active"])
            detector.since = int(saved["since"])
            detector.since_time = float(saved["since_time"])
