"""The bank of CUSUMs that watches one class's correctness: which drops it is tuned for, and their LLRs.

A class's samples are Bernoulli: right with its recall ``p0`` while the model is as good as
its baseline. A degradation is a higher error rate ``q1 > q0 = 1 − p0``; the CUSUM tuned for
one ``q1`` is the fastest test for that drop (Lorden; Moustakides) but slow for others (its
drift is zero at about the midpoint between ``q0`` and ``q1``). So each class runs a small
**bank** of CUSUMs, one per error-odds ratio ``R`` in ``ODDS_RATIOS`` (``odds(q1) = R · odds(q0)``):
whatever the size of the drop, some member is within ~8 % of the optimal test's drift
(members spaced so that between two neighbours the better one's expected log-likelihood
ratio is ≥ 0.92 of the Kullback–Leibler divergence). The alarm is the first member to cross
its own threshold; the thresholds give every member an equal share of the false alarms
(``streammon.detection.thresholds``).

**The baseline's own noise.** ``p0`` is estimated from ``n`` baseline samples. A member tuned
for a drop smaller than that estimate's error would drift upwards on a model that did not
change: its expected step ``q·down − (1 − q)·up`` turns positive once the true error rate ``q``
passes ``up/(up + down)`` (between ``q0`` and ``q1``). Members whose turning point lies within
``MARGIN_Z`` standard errors of the baseline's ``q0`` are left out (``first_member``): as long
as the true error rate is within ``MARGIN_Z`` standard errors of the estimate (99.8 % of
baselines, one-sided), every member left drifts down while the model is unchanged. (At 1.645,
95 %, baselines learned from 500 samples raised 1.2–1.4× the false alarms of exact ones: a
member near the margin turns its in-control drift up on a small overestimate, and its
threshold is low — it takes an equal share of the false alarms.) A learned baseline still being
refined is moreover tuned ``YOUNG_Z`` standard errors below its estimate (``learned_recall``):
until its next refinement, an overestimate raises false alarms, an underestimate only delays
an alarm a little.

>>> bank = Bank.of(0.8, baseline_samples=100_000)
>>> [round(q, 3) for q in bank.q1[:3]]
[0.223, 0.241, 0.273]
>>> round(bank.up[0], 4), round(bank.down[0], 4)  # a right sample lowers S by up, a wrong one raises it by down
(0.0296, 0.1102)
>>> Bank.of(0.8, baseline_samples=500).first  # 500 baseline samples: drops under ~0.13 are not watched (yet)
3
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

ODDS_RATIOS = (1.15, 1.27, 1.5, 1.95, 2.94, 5.45, 13.1)
MEMBERS = len(ODDS_RATIOS)
MAX_ERROR = 0.99  # members whose post-change error rate would exceed this are left out
MARGIN_Z = 2.9
YOUNG_Z = 0.5
FINAL_Z = 1.0  # a final learned baseline under the time budget (``watch``): its long run lengths punish a high one
RECALL_LIMITS = (1e-3, 1 - 1e-4)  # a baseline recall is clipped into these (0 or 1 would make an LLR infinite)


def odds_shifted(q0: float, ratio: float) -> float:
    """The error rate whose odds are ``ratio`` times those of ``q0``.

    >>> round(odds_shifted(0.2, 1.5), 4)
    0.2727
    """
    odds = q0 / (1 - q0) * ratio
    return odds / (1 + odds)


def turning_point(q0: float, q1: float) -> float:
    """The error rate at which the CUSUM for ``q0 → q1`` has zero drift: ``up/(up + down)``.

    >>> round(turning_point(0.2, 0.3), 4)  # a little below the midpoint 0.25
    0.2477
    """
    up, down = math.log((1 - q0) / (1 - q1)), math.log(q1 / q0)
    return up / (up + down)


def first_member(p0: float, baseline_samples: float) -> int:
    """The first member whose turning point is ``MARGIN_Z`` standard errors of a baseline of that size above ``q0``."""
    if not math.isfinite(baseline_samples):
        return 0
    q0 = 1 - p0
    margin = MARGIN_Z * math.sqrt(p0 * q0 / max(baseline_samples, 1.0))
    for j, ratio in enumerate(ODDS_RATIOS):
        if turning_point(q0, odds_shifted(q0, ratio)) - q0 >= margin:
            return j
    return MEMBERS


def clip_recall(p: float) -> float:
    """``p`` within ``RECALL_LIMITS`` (a recall of 0 or 1 would make an LLR infinite)."""
    return min(max(p, RECALL_LIMITS[0]), RECALL_LIMITS[1])


def baseline_recall(right: float, total: float) -> float:
    """The in-control recall from baseline counts: the Jeffreys posterior mean ``(right + ½)/(total + 1)``, clipped.

    >>> round(baseline_recall(80, 100), 4), baseline_recall(0, 0)
    (0.797, 0.5)
    """
    return clip_recall((right + 0.5) / (total + 1.0))


def learned_recall(right: float, total: float, z: float = YOUNG_Z) -> float:
    """The in-control recall of a learned baseline that is still being refined: ``z`` (``YOUNG_Z``) standard errors
    below its Jeffreys estimate (clipped); a final one under the time budget is tuned ``FINAL_Z`` below.

    >>> round(baseline_recall(400, 500), 4), round(learned_recall(400, 500), 4)
    (0.7994, 0.7905)
    """
    p = baseline_recall(right, total)
    return clip_recall(p - z * math.sqrt(p * (1 - p) / (total + 1.0)))


@dataclass(frozen=True)
class Bank:
    """The members watching one class: post-change error rates ``q1`` and the LLR steps of each.

    Members left out (``j < first`` or ``q1 > MAX_ERROR``) have zero steps: their statistic stays 0.
    """

    p0: float
    first: int
    q1: tuple[float, ...]
    up: tuple[float, ...]  # |LLR| of a right sample (it lowers the statistic)
    down: tuple[float, ...]  # LLR of a wrong sample (it raises it)

    @classmethod
    def of(cls, p0: float, baseline_samples: float = math.inf) -> Bank:
        """The bank for in-control recall ``p0`` learned from ``baseline_samples`` samples."""
        p0 = clip_recall(p0)
        q0, first = 1 - p0, first_member(p0, baseline_samples)
        q1, up, down = [], [], []
        for j, ratio in enumerate(ODDS_RATIOS):
            q = odds_shifted(q0, ratio)
            used = j >= first and q <= MAX_ERROR
            q1.append(q)
            up.append(math.log(p0 / (1 - q)) if used else 0.0)
            down.append(math.log(q / q0) if used else 0.0)
        return cls(p0, first, tuple(q1), tuple(up), tuple(down))

    @property
    def watching(self) -> bool:
        """Whether any member is left: a baseline too small or too poor to tell any drop from noise has none."""
        return any(d > 0 for d in self.down)

    def arrays(self) -> tuple[FloatArray, FloatArray]:
        """(up, down) as arrays, one entry per member."""
        return np.array(self.up), np.array(self.down)
