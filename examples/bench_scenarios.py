"""Scenario benchmark: streammon's degradation alerts against the optimum, a GLR and per-class ADWIN (on demand).

Every monitor watches exactly the same simulated streams. A classifier with fixed per-class recalls is
sampled at a class mix that may move; errors go to another class chosen uniformly.

**Degradation scenarios** (one class degrades at ``change`` and stays degraded to the end; streammon
gets a validation confusion matrix at the pre-change recalls, 2 000 samples per class at least):

- a. minority recall 0.80 → 0.50 at 5 % prevalence (binary, IR 19, majority recall 0.95), change after 40k;
- b. K = 10, Zipf priors (p_i ∝ 1/i), recall 0.9 everywhere; class rank 3 drops 0.9 → 0.6 at 40k while
  the mix drifts linearly from Zipf to reversed Zipf over the rest of the stream (100k);
- c. gradual: minority (10 %) recall 0.85 → 0.55 linearly over 50k samples from 40k (delay from the ramp's start);
- d. the majority degrades: recall 0.95 → 0.85 at IR 19;
- e. the mix moves towards the degraded class: recall 0.8 → 0.6 while its prevalence rises 5 % → 30 %;
- f. a small drop 0.8 → 0.7 of a class at 20 % prevalence.

**Pure prior shifts** (recalls fixed: every degradation alert is false): the RRT moving 0.1× → 10× the
training IR over 200k samples; daily swings (K = 10, each class's share swings ×e^±1.5 sinusoidally, ten
"days" over 500k samples, recalls 0.95 … 0.6); and minority prevalence steps 5 → 10 → … → 25 % (200k).
streammon runs here with ``recovery_arl=1e300`` (``DetectorSettings`` takes no inf), so an alarm mostly stays on
(detection itself is untouched: recovery only acts after an alarm); its count is its incidents, read from its
detector (``Monitor.tally.watch``: open and closed ones) so that none is missed — one that clears anyway (after
ln 10³⁰⁰ / KL(p0 ‖ middle) class samples, tens of thousands after an alarm on a short burst) is watched again and a
new alarm counts. Its expected count at the calibrated ARL is class samples / ARL (also shown over the class samples
the banks watched, those inside an open incident left out); the observed count is set against it by a two-sided
Poisson p-value: a pure prior shift should add no false alarms beyond the in-control rate (at ARL 10⁶ over 100
seeds × 200k–500k samples that rate alone gives 20–50 alerts). The same streams are run again with
``DetectorSettings(arl=1e8)`` (streammon only): asking for a longer ARL is how a user gets (almost) no false alerts.
Rolling F1 (binary: of the minority; K = 10: macro) over the last 1 000 samples alerts 0.1 below its value at
the training mix, rolling accuracy 0.05 below (both computed with NumPy, the same windows as river's
``utils.Rolling``); river's ``ADWIN`` on the overall error alerts when it detects a change and the error rose.

**In-control run length**: a single-class correctness stream at exactly its baseline recall p0 ∈ {0.8, 0.95},
``DetectorSettings(arl=1e5)`` and ``arl=1e6`` (1e5 only with ``--quick``), a given baseline of (p0·10⁹, 10⁹)
counts: the class samples to the first false alarm, one run per seed, against the documented ARL (target
±25 %). The same with baselines learned from the first 500 samples (refined as samples double, the default, or
frozen at 500), and with the old Wilson shortcut emulated (below), on the same streams. Runs are censored at 10× the
ARL; the ARL estimate is watched samples / alarms; ``recovery_arl=1e300``, the first incident read from the
detector (as above) every 131 072 samples.

**Baseline treatments** (scenario a and the in-control check): the given validation matrix; learned from
each class's first 500 samples (Jeffreys estimate, members within 1.645 σ of the baseline left out) and refined —
re-estimated, bank re-tuned — each time the class's samples double up to 32 000 (``DetectorSettings``' default),
or frozen at those 500 (``refine_until=500``, the previous behaviour);
"Wilson-500": the 95 % Wilson lower bound of those same 500 samples given as counts (round(low·500), 500);
"Wilson, all members": the same bound given as (low·10⁹, 10⁹), i.e. no member left out — the old shortcut.

**Yardsticks**, on the degraded class's own correctness stream (restarted after every alarm):

1. the optimal CUSUM knowing p0 and p1 (the final recall in c), threshold for an in-control ARL of exactly
   10⁶ class samples by Brook & Evans' Markov chain on an integer lattice (the two LLRs' ratio approximated by
   a fraction of denominator ≤ 200, relative error < 10⁻⁴; banded solve), checked by simulation at ARL 10³;
2. the GLR-CUSUM not knowing p1: max over the change point (the whole past since the last alarm) and over
   q1 ≥ q0 of the binomial log-likelihood ratio, evaluated exactly at wrong samples only (a right one never
   raises it) over the lower convex hull of the (samples, wrongs) path, where every maximiser lies. Its
   threshold: first passages of 400 in-control paths (3·10⁵ class samples each) at thresholds 3 … 16; the
   ARL at each (samples watched / passages) is fitted as ln ARL = α + β·h on the thresholds whose ARL is
   10³ … 10⁵ and extrapolated to 10⁶; 200 paths of up to 5·10⁶ samples then give the ARL on a 0.05 grid
   around that h, and the smallest h whose ARL reaches 10⁶ is used (the GLR's ARL is a staircase in h —
   its false alarms are mostly short bursts of wrongs, each worth ln(1/q0) — so the line can land mid-step);
3. river's ``ADWIN`` (default delta) on the class's error indicator, alarm when it detects a change and the
   error estimate rose. Its delays use the degraded class only; its false alarms on the other classes are
   counted on the first 10 seeds (river per sample is slow on the big classes) and shown separately.

Measured: median delay (stream samples from the change to the alarm; streammon: ``since_sample − change``),
misses (no alarm by the end; a miss counts as ∞ in the median), false alarms (streammon: any class before
the change, other classes after it), and flaps: streammon's alert on the degraded class polled after every
chunk of 1 000 samples — a clear while the model stays degraded is a flap (a new ``since_sample`` is a new
incident); ADWIN: repeated alarms after the first. Targets (``--check`` exits 1 if one fails): streammon's
median delay ≤ 1.3× the optimum's and ≤ 1.15× the GLR's in a–f; under pure prior shifts, false alerts
consistent with the calibrated ARL (two-sided Poisson p ≥ 0.01 against class samples / 10⁶); in-control ARL within
±25 % (exact baselines); no flaps. Scenario a under each baseline treatment also counts the runs ending alerted: a
false incident (majority, or minority raised before the change) still open at the end, the recovery test on.
A new-class scenario (class-set-change alert) is kept.

    python examples/bench_scenarios.py [--quick | --seeds N] [--check]

The full run (100 seeds) takes about 6 minutes on one core; ``--quick`` (10 seeds) about one.
"""

from __future__ import annotations

import argparse
import logging
import math
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numba
import numpy as np
import numpy.typing as npt
from river import drift
from scipy.linalg import solve_banded
from scipy.stats import poisson

from streammon import Cumulative, DetectorSettings, Monitor, Sliding

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

ARL = 1e6  # the yardsticks' run length, given to streammon as DetectorSettings(arl=ARL) (its default until the
# time budget false_alarm_interval replaced it: see budget_section)
DAY = 86_400.0
RATES = (10.0, 1000.0)  # samples/s of the streams in budget_section (times t = index / rate)
INTERVALS = (1 * DAY, 7 * DAY, 30 * DAY, 90 * DAY)  # false_alarm_interval values set against each other
LONG_ARL = 1e8  # the prior shifts again, for a user who asks for (almost) no false alerts
LONG_ARL_SEEDS = 100  # seeds of that run (at most --seeds)
NO_RECOVERY = 1e300  # recovery_arl when an alarm should stay on (DetectorSettings takes no inf; ln 1e300 ≈ 691)
P_MIN = 0.01  # --check: a two-sided Poisson p-value of false alerts under a prior shift at least this
CHUNK = 1000  # samples per update_many between polls of the degradation alert
BASELINE = 500  # DetectorSettings.baseline_samples
ROLLING = 1000  # window of the rolling F1 / accuracy
ADWIN_ALL_SEEDS = 10  # seeds on which ADWIN watches every class (false alarms on the others)
CAP = 10  # in-control runs end after CAP × ARL watched samples
Z95 = 1.959964  # the 95 % Wilson interval's lower end
LEGIT, FRAUD = "legit", "fraud"
BINARY = (LEGIT, FRAUD)
IR = 19.0
VALIDATION_IR19 = (40_000, 2_000)  # validation samples per class of the IR-19 designs (the README's matrix)
GLR_LEVELS = np.arange(3.0, 16.01, 0.25)


# -- designs and streams ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Design:
    """A simulated deployment: class mix and per-class recall sample by sample, one class (maybe) degrading."""

    key: str
    title: str
    labels: tuple[str, ...]
    priors: FloatArray  # (n, K): the class mix of every sample
    recall: tuple[float, ...]  # per class, before any change
    change: int = -1  # stream index where the degradation starts (-1: none)
    target: int = -1  # the degrading class
    target_recall: FloatArray | None = None  # (n,): the target's recall sample by sample
    validation: tuple[int, ...] = ()  # validation samples per class (default: max(2000, 40000 · prior))
    training: tuple[float, ...] = ()  # the training mix (default: the first sample's)

    @property
    def n(self) -> int:
        return len(self.priors)

    @property
    def p0(self) -> float:
        return self.recall[self.target]

    @property
    def p1(self) -> float:
        assert self.target_recall is not None
        return float(self.target_recall[-1])

    @property
    def mix(self) -> FloatArray:
        """The training class mix."""
        return np.asarray(self.training) if self.training else self.priors[0]

    def reference(self) -> dict[str, int]:
        return {label: max(1, round(1e5 * p)) for label, p in zip(self.labels, self.mix, strict=True)}

    def baseline(self) -> dict[str, dict[str, int]]:
        """The validation confusion matrix at the pre-change recalls (errors spread evenly)."""
        totals = self.validation or tuple(max(2000, round(40_000 * p)) for p in self.mix)
        matrix: dict[str, dict[str, int]] = {}
        for label, r, total in zip(self.labels, self.recall, totals, strict=True):
            right = round(r * total)
            others = [x for x in self.labels if x != label]
            row = dict.fromkeys(others, (total - right) // len(others))
            row[others[0]] += total - right - sum(row.values())
            matrix[label] = {label: right, **row}
        return matrix


@dataclass(frozen=True)
class Stream:
    truth: IntArray  # class codes
    pred: IntArray


def draw(design: Design, rng: np.random.Generator) -> Stream:
    """Sample the design: each sample's class from its mix, right with its class's recall, else another class."""
    n, k = design.priors.shape
    truth = np.minimum((np.cumsum(design.priors, axis=1) <= rng.random(n)[:, None]).sum(axis=1), k - 1)
    recall = np.asarray(design.recall)[truth]
    if design.target_recall is not None:
        recall = np.where(truth == design.target, design.target_recall, recall)
    hit = rng.random(n) < recall
    pred = np.where(hit, truth, (truth + rng.integers(1, k, n)) % k)
    return Stream(truth.astype(np.int64), pred.astype(np.int64))


def _constant(priors: Iterable[float], n: int) -> FloatArray:
    return np.tile(np.asarray(list(priors), np.float64), (n, 1))


def _binary(minority: FloatArray) -> FloatArray:
    return np.column_stack([1 - minority, minority])


def _step(n: int, change: int, before: float, after: float) -> FloatArray:
    return np.where(np.arange(n) < change, before, after).astype(np.float64)


def zipf(k: int) -> FloatArray:
    w = 1 / np.arange(1, k + 1)
    return w / w.sum()


def degradation_designs() -> list[Design]:
    """Scenarios a–f."""
    change = 40_000
    n = 80_000
    zipf_drift = np.clip((np.arange(100_000) - change) / (100_000 - change), 0, 1)[:, None]
    ramp = np.clip((np.arange(120_000) - change) / 50_000, 0, 1)
    rising = 0.05 + 0.25 * np.clip((np.arange(n) - change) / (n - change), 0, 1)
    return [
        Design("a", "minority 0.80 → 0.50 at 5 %", BINARY, _binary(np.full(n, 0.05)), (0.95, 0.8), change, 1,
               _step(n, change, 0.8, 0.5), VALIDATION_IR19),
        Design("b", "K=10 Zipf, rank 3 0.9 → 0.6, mix → reversed Zipf", tuple(f"c{i}" for i in range(10)),
               (1 - zipf_drift) * zipf(10) + zipf_drift * zipf(10)[::-1], (0.9,) * 10, change, 2,
               _step(100_000, change, 0.9, 0.6)),
        Design("c", "gradual 0.85 → 0.55 over 50k at 10 %", BINARY, _binary(np.full(120_000, 0.1)), (0.95, 0.85),
               change, 1, 0.85 - 0.3 * ramp),
        Design("d", "majority 0.95 → 0.85 at IR 19", BINARY, _binary(np.full(60_000, 0.05)), (0.95, 0.8), change, 0,
               _step(60_000, change, 0.95, 0.85), VALIDATION_IR19),
        Design("e", "0.8 → 0.6, its prevalence 5 % → 30 %", BINARY, _binary(rising), (0.95, 0.8), change, 1,
               _step(n, change, 0.8, 0.6), VALIDATION_IR19),
        Design("f", "small drop 0.8 → 0.7 at 20 %", BINARY, _binary(np.full(n, 0.2)), (0.95, 0.8), change, 1,
               _step(n, change, 0.8, 0.7)),
    ]


def prior_shift_designs() -> list[Design]:
    """The pure prior shifts: RRT 0.1× → 10× IR, daily swings at K = 10, prevalence steps 5 → 25 %."""
    n = 200_000
    rrt = np.geomspace(0.1 * IR, 10 * IR, n)
    k, days, long = 10, 10, 500_000
    phase = 2 * np.pi * (np.arange(long)[:, None] * days / long + np.arange(k) / k)
    swing = zipf(k) * np.exp(1.5 * np.sin(phase))
    steps = np.repeat([0.05, 0.10, 0.15, 0.20, 0.25], n // 5)
    recalls = tuple(np.round(np.linspace(0.95, 0.6, k), 3).tolist())
    return [
        Design("rrt", "RRT 0.1× → 10× IR (200k)", BINARY, _binary(1 / (1 + rrt)), (0.95, 0.8),
               validation=VALIDATION_IR19, training=(0.95, 0.05)),
        Design("daily", "daily swings, K=10 (500k)", tuple(f"c{i}" for i in range(k)),
               swing / swing.sum(axis=1, keepdims=True), recalls, training=tuple(zipf(k).tolist())),
        Design("steps", "prevalence steps 5 → 25 % (200k)", BINARY, _binary(steps), (0.95, 0.8),
               validation=VALIDATION_IR19),
    ]


# -- streammon ------------------------------------------------------------------------------------------


def monitor_for(design: Design, baseline: dict[str, dict[str, int]] | None, settings: DetectorSettings | None = None
                ) -> Monitor:
    return Monitor([Sliding(2000)], reference=design.reference(), baseline=baseline,
                   detector=settings or DetectorSettings(arl=ARL))


@dataclass
class Episodes:
    """Degradation alerts seen by polling: per class, [since_sample, cleared by (−1: still on)]."""

    by_class: dict[str, list[list[int]]] = field(default_factory=dict)

    def poll(self, monitor: Monitor, now: int) -> None:
        active = {a.subject: a.since_sample for a in monitor.report().alerting("degradation")}
        for subject, since in active.items():
            runs = self.by_class.setdefault(subject, [])
            if not runs or runs[-1][0] != since:
                if runs and runs[-1][1] < 0:  # cleared and raised again within one chunk
                    runs[-1][1] = since
                runs.append([since, -1])
        for subject, runs in self.by_class.items():
            if runs[-1][1] < 0 and subject not in active:
                runs[-1][1] = now


def watch(design: Design, stream: Stream, monitor: Monitor) -> Episodes:
    labels = np.asarray(design.labels)
    truth, pred = labels[stream.truth], labels[stream.pred]
    episodes = Episodes()
    for start in range(0, design.n, CHUNK):
        monitor.update_many(truth[start:start + CHUNK], pred[start:start + CHUNK])
        episodes.poll(monitor, min(start + CHUNK, design.n))
    return episodes


@dataclass(frozen=True)
class Outcome:
    """One monitor on one seed."""

    delay: float  # stream samples from the change to the first alarm after it (inf: missed)
    false_alarms: int
    flaps: int  # streammon: clears while degraded; ADWIN: repeated alarms after the first
    on_share: float = math.nan  # streammon: share of post-detection samples with the alert on
    other_false: int = 0  # ADWIN: alarms on the other classes (first ADWIN_ALL_SEEDS seeds only)


def streammon_outcome(design: Design, episodes: Episodes) -> Outcome:
    change, target = design.change, design.labels[design.target]
    false = sum(len(r) for label, r in episodes.by_class.items() if label != target)
    runs = episodes.by_class.get(target, [])
    false += sum(1 for since, _ in runs if since < change)
    on_at_change = [r for r in runs if r[0] < change and (r[1] < 0 or r[1] > change)]
    after = on_at_change[-1:] + [r for r in runs if r[0] >= change]
    if not after:
        return Outcome(math.inf, false, 0, 0.0)
    detected = max(after[0][0], change)
    ends = [design.n if end < 0 else end for _, end in after]
    on = sum(end - max(since, detected) for (since, _), end in zip(after, ends, strict=True))
    flaps = sum(1 for _, end in after if end >= 0)
    return Outcome(float(detected - change), false, flaps, on / max(design.n - detected, 1))


# -- yardsticks: compiled loops -----------------------------------------------------------------------


@numba.njit(cache=True)
def cusum_alarms(wrong: Any, up: float, down: float, h: float) -> Any:
    """Class-sample indices of every alarm of S = max(0, S + LLR), restarted at 0 after each."""
    out = np.empty(len(wrong), np.int64)
    alarms = 0
    s = 0.0
    for i in range(len(wrong)):
        s = s + down if wrong[i] else max(0.0, s - up)
        if s >= h:
            out[alarms] = i
            alarms += 1
            s = 0.0
    return out[:alarms]


@numba.njit(cache=True)
def _binomial_llr(w: int, m: int, q0: float) -> float:
    """sup over q1 ≥ q0 of the log-likelihood ratio of w wrongs in m samples: m · KL(w/m ‖ q0), or 0."""
    if w <= q0 * m:
        return 0.0
    value = w * math.log(w / (m * q0))
    if w < m:
        value += (m - w) * math.log((m - w) / (m * (1 - q0)))
    return value


@numba.njit(cache=True)
def _hull_push(hull: Any, size: int, x: int, y: int) -> int:
    """Add (x, y) to the lower convex hull ``hull[0]``, ``hull[1]`` (points in increasing x); the new size."""
    hx, hy = hull[0], hull[1]
    while size >= 2 and (hx[size - 1] - hx[size - 2]) * (y - hy[size - 2]) \
            - (hy[size - 1] - hy[size - 2]) * (x - hx[size - 2]) <= 0:
        size -= 1
    hx[size] = x
    hy[size] = y
    return size + 1


@numba.njit(cache=True)
def _glr_top(hull: Any, size: int, m: int, w: int, q0: float) -> float:
    """The GLR after m samples with w wrongs: the best start among the hull's vertices."""
    top = 0.0
    for v in range(size):
        top = max(top, _binomial_llr(w - hull[1, v], m - hull[0, v], q0))
    return top


@numba.njit(cache=True)
def glr_alarms(wrong: Any, q0: float, h: float) -> Any:
    """Class-sample indices of every alarm of the GLR-CUSUM (restarted after each).

    The statistic after m samples with w wrongs is max over starts k of the binomial GLR of samples
    (k, m]; only starts just before a wrong sample on the lower convex hull of the path (k, wrongs
    before k) can maximise it, and only a wrong sample can raise it.
    """
    n = len(wrong)
    hull = np.empty((2, n + 1), np.int64)
    out = np.empty(n, np.int64)
    alarms = size = m = w = 0
    for i in range(n):
        m += 1
        if not wrong[i]:
            continue
        size = _hull_push(hull, size, m - 1, w)
        w += 1
        if _glr_top(hull, size, m, w, q0) >= h:
            out[alarms] = i
            alarms += 1
            size = m = w = 0
    return out[:alarms]


@numba.njit(cache=True)
def glr_passages(q0: float, levels: Any, paths: int, limit: int, rng: Any) -> Any:
    """(paths × levels) in-control class samples until the GLR first reaches each level (inf past limit)."""
    out = np.full((paths, len(levels)), np.inf)
    hull = np.empty((2, limit + 2), np.int64)
    for path in range(paths):
        size = m = w = reached = 0
        while reached < len(levels):
            m += rng.geometric(q0)
            if m > limit:
                break
            size = _hull_push(hull, size, m - 1, w)
            w += 1
            top = _glr_top(hull, size, m, w, q0)
            while reached < len(levels) and top >= levels[reached]:
                out[path, reached] = m
                reached += 1
    return out


@numba.njit(cache=True)
def cusum_run_lengths(q: float, steps: Any, paths: int, rng: Any) -> Any:
    """In-control run lengths (class samples) of the CUSUM with steps = (up, down, h) at error rate q."""
    up, down, h = steps[0], steps[1], steps[2]
    out = np.empty(paths)
    for path in range(paths):
        s = 0.0
        t = 0
        while s < h:
            rights = rng.geometric(q) - 1
            t += rights + 1
            s = max(0.0, s - rights * up) + down
        out[path] = t
    return out


# -- yardsticks: thresholds ---------------------------------------------------------------------------


def llr_steps(p0: float, p1: float) -> tuple[float, float]:
    """(|LLR| of a right sample, LLR of a wrong one) for recall p0 → p1."""
    return math.log(p0 / p1), math.log((1 - p1) / (1 - p0))


def _lattice(up: float, down: float) -> tuple[int, int, float]:
    """Integer steps (a, b) with a/b ≈ up/down (denominator ≤ 200) and the lattice spacing down/b."""
    ratio = up / down
    b = min(range(40, 201), key=lambda d: abs(round(d * ratio) - d * ratio) / d)
    return round(b * ratio), b, down / b


def _lattice_arl(p0: float, a: int, b: int, states: int) -> float:
    """Brook & Evans: the ARL from 0 of the lattice walk (right: −a floored at 0, wrong: +b), alarm at ≥ states."""
    ab = np.zeros((a + b + 1, states))
    ab[b] = 1.0
    i = np.arange(states)
    j = np.maximum(i - a, 0)
    ab[b + i - j, j] -= p0
    i = i[i + b < states]
    ab[0, i + b] -= 1 - p0
    return float(solve_banded((a, b), ab, np.ones(states))[0])


@cache
def optimal_threshold(p0: float, p1: float, arl: float) -> tuple[float, float]:
    """(h, its exact lattice ARL): the smallest lattice threshold whose in-control ARL is ≥ ``arl``."""
    a, b, delta = _lattice(*llr_steps(p0, p1))
    states = max(int((math.log(arl) - 1) / delta), b)
    for _ in range(30):
        step = round(math.log(arl / _lattice_arl(p0, a, b, states)) / delta)
        if step == 0:
            break
        states = max(states + step, 1)
    while _lattice_arl(p0, a, b, states) < arl:
        states += 1
    while states > 1 and _lattice_arl(p0, a, b, states - 1) >= arl:
        states -= 1
    return (states - 0.5) * delta, _lattice_arl(p0, a, b, states)


def optimal_check(p0: float, p1: float, paths: int) -> float:
    """Simulated / lattice ARL of the optimum at a threshold for ARL 10³."""
    h, exact = optimal_threshold(p0, p1, 1e3)
    runs = cusum_run_lengths(1 - p0, np.array([*llr_steps(p0, p1), h]), paths, np.random.default_rng(7))
    return float(runs.mean() / exact)


@dataclass(frozen=True)
class GlrCalibration:
    q0: float
    extrapolated: float  # h from the fit at ARL 10³ … 10⁵
    slope: float
    used: tuple[float, float]  # the thresholds whose ARLs were fitted
    at_extrapolated: float  # ARL simulated directly at the extrapolated h / ARL
    h: float  # the smallest h on the direct simulation's grid whose ARL is ≥ 10⁶
    at_h: float  # its ARL / ARL

    def line(self) -> str:
        return (f"GLR q0={self.q0:.2f}: ln ARL = α + {self.slope:.3f}·h fitted on h ∈ [{self.used[0]:.2f}, "
                f"{self.used[1]:.2f}] extrapolates to h = {self.extrapolated:.2f} (direct simulation there: "
                f"{self.at_extrapolated:.2f}× 10⁶); used: h = {self.h:.2f} ({self.at_h:.2f}× 10⁶)")


def _arl_estimates(runs: FloatArray, limit: int) -> FloatArray:
    """Per level: samples watched (censored at ``limit``) / first passages."""
    passages = np.isfinite(runs).sum(axis=0)
    watched = np.minimum(runs, limit).sum(axis=0)
    return np.where(passages > 0, watched / np.maximum(passages, 1), np.inf)


@cache
def glr_threshold(q0: float, paths: int) -> GlrCalibration:
    """The GLR's threshold for ARL 10⁶.

    ln ARL is fitted as a line in h where ARL ∈ [10³, 10⁵] and extrapolated; then in-control paths are run to
    ~10⁶ samples on a 0.05 grid of h around that point, and the smallest h whose ARL reaches 10⁶ is used.
    The ARL is a staircase in h (its false alarms are mostly short bursts of wrongs, each worth ln(1/q0)), so a
    straight line through the steps can land mid-step: the direct run corrects it.
    """
    limit = 300_000
    arl = _arl_estimates(glr_passages(q0, GLR_LEVELS, paths, limit, np.random.default_rng(11)), limit)
    fit = (arl >= 1e3) & (arl <= 1e5)
    slope, intercept = np.polyfit(GLR_LEVELS[fit], np.log(arl[fit]), 1)
    extrapolated = (math.log(ARL) - intercept) / slope
    below = 60  # grid points below the extrapolated h
    grid = extrapolated + 0.05 * np.arange(-below, 21)
    limit = 5 * int(ARL)
    direct = _arl_estimates(glr_passages(q0, grid, max(paths // 2, 20), limit, np.random.default_rng(12)), limit)
    chosen = int(np.argmax(direct >= ARL)) if (direct >= ARL).any() else len(grid) - 1
    used = (float(GLR_LEVELS[fit][0]), float(GLR_LEVELS[fit][-1]))
    return GlrCalibration(q0, float(extrapolated), float(slope), used, float(direct[below] / ARL), float(grid[chosen]),
                          float(direct[chosen] / ARL))


# -- yardsticks and ADWIN on one stream ---------------------------------------------------------------


def adwin_alarms(wrong: BoolArray) -> IntArray:
    """Indices at which river's ADWIN detects a change with the error estimate rising."""
    detector = drift.ADWIN()
    out = []
    for i, x in enumerate(wrong.tolist()):
        before = detector.estimation
        detector.update(float(x))
        if detector.drift_detected and detector.estimation > before:
            out.append(i)
    return np.asarray(out, np.int64)


def alarm_outcome(alarms: IntArray, positions: IntArray, change: int) -> Outcome:
    """Outcome of alarms given as class-sample indices (``positions``: their stream indices)."""
    at = positions[alarms]
    after = at[at >= change]
    delay = float(after[0] - change) if len(after) else math.inf
    return Outcome(delay, int((at < change).sum()), max(len(after) - 1, 0))


@dataclass(frozen=True)
class Yardsticks:
    up: float
    down: float
    h: float
    q0: float
    h_glr: float


def yardsticks_for(design: Design, glr_paths: int) -> Yardsticks:
    up, down = llr_steps(design.p0, design.p1)
    return Yardsticks(up, down, optimal_threshold(design.p0, design.p1, ARL)[0], 1 - design.p0,
                      glr_threshold(1 - design.p0, glr_paths).h)


def seeded(design: Design, seed: int) -> Stream:
    """The stream of ``design`` for ``seed`` (the same for every monitor and treatment)."""
    return draw(design, np.random.default_rng([ord(c) for c in design.key] + [seed]))


def run_seed(design: Design, seed: int, sticks: Yardsticks) -> dict[str, Outcome]:
    stream = seeded(design, seed)
    mine = stream.truth == design.target
    positions = np.flatnonzero(mine)
    wrong = stream.pred[mine] != design.target
    out = {
        "streammon": streammon_outcome(design, watch(design, stream, monitor_for(design, design.baseline()))),
        "optimum": alarm_outcome(cusum_alarms(wrong, sticks.up, sticks.down, sticks.h), positions, design.change),
        "glr": alarm_outcome(glr_alarms(wrong, sticks.q0, sticks.h_glr), positions, design.change),
        "adwin": alarm_outcome(adwin_alarms(wrong), positions, design.change),
    }
    if seed < ADWIN_ALL_SEEDS:
        others = sum(len(adwin_alarms(stream.pred[stream.truth == c] != c))
                     for c in range(len(design.labels)) if c != design.target)
        out["adwin"] = Outcome(out["adwin"].delay, out["adwin"].false_alarms, out["adwin"].flaps, math.nan, others)
    return out


# -- summaries ----------------------------------------------------------------------------------------


@dataclass
class Summary:
    """Outcomes of one monitor over the seeds."""

    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(o.delay for o in self.outcomes)

    @property
    def misses(self) -> int:
        return sum(1 for o in self.outcomes if math.isinf(o.delay))

    @property
    def false_alarms(self) -> int:
        return sum(o.false_alarms for o in self.outcomes)

    @property
    def flaps(self) -> int:
        return sum(o.flaps for o in self.outcomes)

    @property
    def on_share(self) -> float:
        shares = [o.on_share for o in self.outcomes if not math.isnan(o.on_share) and not math.isinf(o.delay)]
        return statistics.fmean(shares) if shares else math.nan


MONITORS = ("streammon", "optimum", "glr", "adwin")


def run_design(design: Design, seeds: int, sticks: Yardsticks) -> dict[str, Summary]:
    summaries = {name: Summary() for name in MONITORS}
    for seed in range(seeds):
        for name, outcome in run_seed(design, seed, sticks).items():
            summaries[name].outcomes.append(outcome)
    return summaries


def _n(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:,.0f}"


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 and math.isfinite(b) else math.inf


def delay_row(design: Design, s: dict[str, Summary]) -> str:
    sm, opt, glr, adw = (s[m] for m in MONITORS)
    others = sum(o.other_false for o in adw.outcomes)
    checked = min(len(adw.outcomes), ADWIN_ALL_SEEDS)
    return (f"| {design.key}. {design.title} | {_n(sm.median)} | {_n(opt.median)} | {_n(glr.median)} "
            f"| {_n(adw.median)} | {_ratio(sm.median, opt.median):.2f} | {_ratio(sm.median, glr.median):.2f} "
            f"| {sm.misses}/{opt.misses}/{glr.misses}/{adw.misses} "
            f"| {sm.false_alarms}/{opt.false_alarms}/{glr.false_alarms}/{adw.false_alarms} "
            f"(ADWIN other classes: {others} in {checked} seeds) "
            f"| streammon {sm.flaps} (alert on {100 * sm.on_share:.1f} % after detection); ADWIN repeats {adw.flaps} |")


# -- pure prior shifts ---------------------------------------------------------------------------------


def expected_scores(design: Design) -> tuple[float, float]:
    """(F1 — of the minority when binary, else macro —, accuracy) at the training mix, errors spread evenly."""
    pi, r = design.mix, np.asarray(design.recall)
    k = len(pi)
    wrong_into = ((pi * (1 - r)).sum() - pi * (1 - r)) / (k - 1)
    precision = pi * r / (pi * r + wrong_into)
    f1 = 2 * precision * r / (precision + r)
    return (float(f1[1]) if k == 2 else float(f1.mean())), float((pi * r).sum())


def _windowed(x: npt.NDArray[Any]) -> FloatArray:
    """Sums over the last ROLLING samples, for every sample from the ROLLING-th on (along axis 0)."""
    c = np.cumsum(x, axis=0, dtype=np.float64)
    return c[ROLLING - 1:] - np.concatenate([np.zeros((1, *c.shape[1:])), c[:-ROLLING]])


def rolling_scores(stream: Stream, k: int) -> tuple[FloatArray, FloatArray]:
    """Rolling F1 (minority / macro) and accuracy over the last ROLLING samples."""
    hit = stream.truth == stream.pred
    codes = np.arange(k)
    tp = _windowed((hit[:, None] & (stream.truth[:, None] == codes)).astype(np.int32))
    fn = _windowed(((stream.truth[:, None] == codes) & ~hit[:, None]).astype(np.int32))
    fp = _windowed(((stream.pred[:, None] == codes) & ~hit[:, None]).astype(np.int32))
    denominator = 2 * tp + fp + fn
    f1 = np.divide(2 * tp, denominator, out=np.zeros_like(tp), where=denominator > 0)
    return (f1[:, 1] if k == 2 else f1.mean(axis=1)), _windowed(hit.astype(np.int32)) / ROLLING


def episode_starts(below: BoolArray, offset: int) -> IntArray:
    """Stream indices at which a threshold alert turns on."""
    rising = below & ~np.concatenate([[False], below[:-1]])
    return np.flatnonzero(rising) + offset


def practitioner_alarms(design: Design, stream: Stream) -> dict[str, IntArray]:
    """Alarm starts of the rolling F1 / accuracy thresholds and of ADWIN on the overall error."""
    f1_ref, acc_ref = expected_scores(design)
    f1, accuracy = rolling_scores(stream, len(design.labels))
    return {"rolling_f1": episode_starts(f1 < f1_ref - 0.1, ROLLING - 1),
            "rolling_accuracy": episode_starts(accuracy < acc_ref - 0.05, ROLLING - 1),
            "adwin_error": adwin_alarms(stream.truth != stream.pred)}


@dataclass
class ShiftResult:
    """False degradation alerts under one pure prior shift, per seed (streammon: incidents; the others: alarms)."""

    design: Design
    arl: float
    alarms: dict[str, list[int]]
    class_samples: list[IntArray]  # per seed: samples of each class
    clears: int = 0  # streammon incidents that cleared (recovery_arl = NO_RECOVERY; the recall never moved)
    unwatched: int = 0  # class samples after an incident's alarm, while it was open (the bank does not watch them)

    @property
    def observed(self) -> int:
        return sum(self.alarms["streammon"])

    @property
    def expected(self) -> float:
        """streammon's false alarms at its calibrated ARL: class samples / ARL."""
        return sum(float(n.sum()) for n in self.class_samples) / self.arl

    @property
    def expected_watched(self) -> float:
        """The same over the class samples the banks watched: those inside an open incident left out."""
        return self.expected - self.unwatched / self.arl

    def p_value(self, expected: float | None = None) -> float:
        """Two-sided Poisson p-value of the observed count: twice the smaller tail, at most 1."""
        mean = self.expected if expected is None else expected
        k = self.observed
        return float(min(1.0, 2 * min(poisson.cdf(k, mean), poisson.sf(k - 1, mean))))


def shift_false_alarms(design: Design, seeds: int, arl: float = ARL, practitioners: bool = True) -> ShiftResult:
    """False degradation alerts per seed (streammon: incidents, read from its detector; the others: alarms)."""
    names = ("streammon", "rolling_f1", "rolling_accuracy", "adwin_error") if practitioners else ("streammon",)
    result = ShiftResult(design, arl, {name: [] for name in names}, [])
    labels = np.asarray(design.labels)
    settings = DetectorSettings(arl=arl, recovery_arl=NO_RECOVERY)
    for seed in range(seeds):
        stream = seeded(design, seed)
        result.class_samples.append(np.bincount(stream.truth, minlength=len(labels)))
        monitor = monitor_for(design, design.baseline(), settings)
        for start in range(0, design.n, 50_000):
            part = slice(start, start + 50_000)
            monitor.update_many(labels[stream.truth[part]], labels[stream.pred[part]])
        incidents = incidents_of(monitor)
        code = {label: c for c, label in enumerate(design.labels)}
        index = monitor.tally.index.labels  # the monitor's class index → label
        for cls, since, cleared in incidents:
            end = design.n if cleared < 0 else cleared
            result.unwatched += int((stream.truth[since + 1:end] == code[index[cls]]).sum())
            result.clears += cleared >= 0
        result.alarms["streammon"].append(len(incidents))
        if practitioners:
            for name, starts in practitioner_alarms(design, stream).items():
                result.alarms[name].append(len(starts))
    return result


def practitioners_on_a(design: Design, seeds: int) -> dict[str, list[tuple[float, int]]]:
    """Scenario a's delay and false alarms before the change for the rolling thresholds and ADWIN on error."""
    out: dict[str, list[tuple[float, int]]] = {}
    for seed in range(seeds):
        stream = seeded(design, seed)
        for name, starts in practitioner_alarms(design, stream).items():
            after = starts[starts >= design.change]
            delay = float(after[0] - design.change) if len(after) else math.inf
            out.setdefault(name, []).append((delay, int((starts < design.change).sum())))
    return out


# -- in-control run length and baseline treatments ----------------------------------------------------


def wilson_low(right: float, n: int) -> float:
    p = right / n
    centre = p + Z95 ** 2 / (2 * n)
    spread = Z95 * math.sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n))
    return (centre - spread) / (1 + Z95 ** 2 / n)


TREATMENTS = ("exact", "learned", "frozen", "wilson-500", "wilson-all")
TREATMENT_NAMES = {
    "exact": "exact (given validation matrix)",
    "learned": "learned & refined (default: refine_until=32 000)",
    "frozen": "learned & frozen at 500 (refine_until=500)",
    "wilson-500": "Wilson-500 (emulation)",
    "wilson-all": "Wilson, all members (emulation: the old shortcut)",
}


def treatment_baseline(treatment: str, p0: float, first_right: int) -> tuple[int, int] | None:
    """(right, total) given to streammon for one class (None: learn it from the first BASELINE samples)."""
    low = wilson_low(first_right, BASELINE)
    return {"exact": (round(p0 * 1e9), 10 ** 9), "learned": None, "frozen": None,
            "wilson-500": (round(low * BASELINE), BASELINE), "wilson-all": (round(low * 1e9), 10 ** 9)}[treatment]


def treatment_settings(treatment: str, **options: float) -> DetectorSettings:
    """The detector settings of a treatment: a learned baseline is refined (the default) or frozen at BASELINE."""
    options = {"arl": ARL, **options}
    if treatment == "frozen":
        return DetectorSettings(baseline_samples=BASELINE, refine_until=BASELINE, **options)
    return DetectorSettings(baseline_samples=BASELINE, **options)


def incidents_of(monitor: Monitor) -> list[tuple[int, int, int]]:
    """Every degradation incident the monitor has raised: (class index, since_sample, cleared at; −1: still open).

    Read from its detector (``Monitor.tally.watch``: the open incidents and the latest 256 closed ones), so that an
    incident raised and cleared between two reports is not missed: with ``recovery_arl=NO_RECOVERY`` a clear still
    comes after ln(10³⁰⁰) / KL(p0 ‖ middle) class samples of the recall at p0 — a few thousand when the alarm came
    from a short burst of wrongs."""
    monitor.flush()
    watch = monitor.tally.watch
    out = [(cls, incident.since, at) for cls, incident, at in watch.closed]
    return out + [(cls, incident.since, -1) for cls, incident in watch.incidents().items()]


def in_control_run(p0: float, arl: float, treatment: str, rng: np.random.Generator) -> tuple[float, bool]:
    """Class samples watched until streammon's first false alarm on a class at recall p0 (inf: none by CAP × arl),
    and whether that incident had already cleared when it was read (a poll of the report would have missed it)."""
    first = rng.random(BASELINE) < p0
    given = treatment_baseline(treatment, p0, int(first.sum()))
    baseline = None if given is None else {0: {0: given[0], 1: given[1] - given[0]}}
    settings = treatment_settings(treatment, arl=arl, recovery_arl=NO_RECOVERY)
    monitor = Monitor([Cumulative()], reference={0: 1, 1: 1}, baseline=baseline, detector=settings)
    fed = 0
    if given is None:
        monitor.update_many(np.zeros(BASELINE, np.int64), (~first).astype(np.int64))
        fed = BASELINE
    watched, cap = 0, int(CAP * arl)
    while watched < cap:
        size = min(1 << 17, cap - watched)
        monitor.update_many(np.zeros(size, np.int64), (rng.random(size) >= p0).astype(np.int64))
        incidents = incidents_of(monitor)
        if incidents:
            _, since, cleared = min(incidents, key=lambda i: i[1])
            return float(since + 1 - fed), cleared >= 0
        watched += size
    return math.inf, False


@dataclass(frozen=True)
class RunLengths:
    p0: float
    arl: float
    treatment: str
    runs: tuple[float, ...]
    cleared: int = 0  # first alarms already cleared when read (recovery_arl = NO_RECOVERY)

    @property
    def estimate(self) -> float:
        """Watched samples / alarms (runs without an alarm count their CAP × arl samples)."""
        alarms = sum(1 for r in self.runs if math.isfinite(r))
        watched = sum(min(r, CAP * self.arl) for r in self.runs)
        return watched / alarms if alarms else math.inf

    def line(self) -> str:
        alarms = sum(1 for r in self.runs if math.isfinite(r))
        early = sum(1 for r in self.runs if r <= self.arl)
        return (f"| {self.treatment} | {self.p0} | {self.arl:.0e} | {len(self.runs)} | {alarms} | {early} "
                f"| {_n(statistics.median(self.runs))} | {_n(self.estimate)} | {self.estimate / self.arl:.2f} |")


def run_lengths(p0: float, arl: float, treatment: str, runs: int) -> RunLengths:
    rng = np.random.default_rng([round(1e4 * p0), round(math.log10(arl))])  # the same streams for every treatment
    results = [in_control_run(p0, arl, treatment, rng) for _ in range(runs)]
    return RunLengths(p0, arl, treatment, tuple(r for r, _ in results), sum(1 for _, c in results if c))


def first_right(stream: Stream, cls: int) -> int:
    mine = np.flatnonzero(stream.truth == cls)[:BASELINE]
    return int((stream.pred[mine] == cls).sum())


def treatment_baselines(design: Design, stream: Stream, treatment: str) -> dict[str, dict[str, int]] | None:
    """The baseline counts streammon is given under ``treatment`` (binary designs; None: learn them)."""
    if treatment == "exact":
        return design.baseline()
    counts = {c: treatment_baseline(treatment, design.recall[c], first_right(stream, c)) for c in (0, 1)}
    if any(v is None for v in counts.values()):
        return None
    labels = design.labels
    return {labels[c]: {labels[c]: right, labels[1 - c]: total - right}
            for c, (right, total) in ((c, v) for c, v in counts.items() if v is not None)}


def stuck_alerts(design: Design, episodes: Episodes) -> tuple[int, int]:
    """False incidents still open at the end of the run: (on the other classes, on the target since before the change).

    streammon's recovery test is on (default ``recovery_arl``), so a false incident should clear; one that is still
    open at the end stayed on for good (its baseline overestimated the recall, say)."""
    target = design.labels[design.target]
    others = sum(1 for label, runs in episodes.by_class.items() if label != target and runs[-1][1] < 0)
    runs = episodes.by_class.get(target, [])
    return others, int(bool(runs) and runs[-1][1] < 0 and runs[-1][0] < design.change)


@dataclass
class TreatmentResult:
    summary: Summary
    p0s: tuple[float, float]  # mean baseline recall at the end of the run: (target, the other class)
    stuck: list[tuple[int, int]]  # per seed: stuck_alerts

    @property
    def ending_alerted(self) -> int:
        return sum(1 for o, t in self.stuck if o or t)


def treatment_run(design: Design, treatment: str, seeds: int) -> TreatmentResult:
    """streammon on scenario a with one baseline treatment: its summary, mean baseline recalls and stuck alerts."""
    summary, p0s, stuck = Summary(), [], []
    target, other = design.labels[design.target], design.labels[1 - design.target]
    for seed in range(seeds):
        stream = seeded(design, seed)
        baseline = treatment_baselines(design, stream, treatment)
        monitor = monitor_for(design, baseline, treatment_settings(treatment))
        episodes = watch(design, stream, monitor)
        summary.outcomes.append(streammon_outcome(design, episodes))
        stuck.append(stuck_alerts(design, episodes))
        p0 = monitor.report().baseline
        p0s.append((p0.get(target, math.nan), p0.get(other, math.nan)))
    return TreatmentResult(summary, (statistics.fmean(p[0] for p in p0s), statistics.fmean(p[1] for p in p0s)), stuck)


# -- the run ------------------------------------------------------------------------------------------


@dataclass
class Checks:
    results: list[tuple[str, bool]] = field(default_factory=list)

    def add(self, name: str, ok: bool) -> None:
        self.results.append((name, ok))

    def print(self) -> bool:
        print("\n### Targets\n")
        for name, ok in self.results:
            print(f"- {'PASS' if ok else 'FAIL'}: {name}")
        return all(ok for _, ok in self.results)


def degradation_section(seeds: int, glr_paths: int, checks: Checks) -> Design:
    designs = degradation_designs()
    rows, notes = [], []
    for design in designs:
        sticks = yardsticks_for(design, glr_paths)
        summaries = run_design(design, seeds, sticks)
        rows.append(delay_row(design, summaries))
        notes.append(f"- {design.key}: optimum p0 {design.p0} → p1 {design.p1:.2f}, h = {sticks.h:.2f}; "
                     f"GLR q0 = {sticks.q0:.2f}, h = {sticks.h_glr:.2f}; streammon false alarms expected at its "
                     f"calibrated ARL: {seeds * design.n / ARL:.1f} (class samples / 10⁶)")
        sm, opt, glr = summaries["streammon"], summaries["optimum"], summaries["glr"]
        checks.add(f"{design.key}: median delay {_n(sm.median)} ≤ 1.3 × optimum {_n(opt.median)}",
                   sm.median <= 1.3 * opt.median)
        checks.add(f"{design.key}: median delay {_n(sm.median)} ≤ 1.15 × GLR {_n(glr.median)}",
                   sm.median <= 1.15 * glr.median)
        checks.add(f"{design.key}: no flaps (alert cleared {sm.flaps} times while degraded)", sm.flaps == 0)
    print(f"### Degradation: delay in stream samples ({seeds} seeds each)\n")
    print("Misses and false alarms as streammon/optimum/GLR/ADWIN. ADWIN's other-class false alarms are counted "
          f"on the first {ADWIN_ALL_SEEDS} seeds only.\n")
    print("| scenario | streammon median delay | optimum | GLR | per-class ADWIN | ratio to optimum | ratio to GLR "
          "| misses | false alarms | flaps |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print("\nYardstick thresholds (in-control ARL 10⁶ class samples):\n")
    print("\n".join(notes))
    return designs[0]


def budget_delay(design: Design, seed: int, settings: DetectorSettings, rate: float) -> tuple[float, int]:
    """(stream samples from the change to the first alarm on the degraded class, inf: missed; false alarms) of
    streammon with ``settings`` on the stream of ``seed`` timed at ``rate`` samples/s (t = index / rate), incidents
    read from its detector once the whole stream is in (an alarm on at the change counts from the change)."""
    stream = seeded(design, seed)
    labels = np.asarray(design.labels)
    monitor = monitor_for(design, design.baseline(), settings)
    times = np.arange(design.n) / rate
    for start in range(0, design.n, 50_000):
        part = slice(start, start + 50_000)
        monitor.update_many(labels[stream.truth[part]], labels[stream.pred[part]], t=times[part])
    index = monitor.tally.index.ids
    target = index[design.labels[design.target]]
    incidents = incidents_of(monitor)
    false = sum(1 for cls, since, _ in incidents if cls != target or since < design.change)
    found = [max(since, design.change) for cls, since, cleared in incidents
             if cls == target and (since >= design.change or cleared < 0 or cleared > design.change)]
    return (float(min(found) - design.change) if found else math.inf), false


def budget_section(seeds: int) -> None:
    """The six degradation scenarios' median delays with the time budget (the default false_alarm_interval, and
    others) at 10 and 1,000 samples/s, beside those at arl = 10⁶ class samples."""
    designs = degradation_designs()
    columns = [("arl = 10⁶", DetectorSettings(arl=ARL), RATES[0])]
    columns += [(f"{interval / DAY:g} d @ {rate:g}/s", DetectorSettings(false_alarm_interval=interval), rate)
                for rate in RATES for interval in INTERVALS]
    print(f"\n### Time budget: median delay in stream samples (misses; false alarms) over {seeds} seeds\n")
    print("Each stream timed at t = index / rate; the default is `false_alarm_interval` = "
          f"{DetectorSettings().false_alarm_interval / DAY:g} days per model. Delays in stream samples "
          "(divide by the rate for seconds).\n")
    print("| scenario | " + " | ".join(name for name, _, _ in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for design in designs:
        cells = []
        for _, settings, rate in columns:
            outcomes = [budget_delay(design, seed, settings, rate) for seed in range(seeds)]
            delays = [d for d, _ in outcomes]
            misses = sum(1 for d in delays if math.isinf(d))
            cells.append(f"{_n(statistics.median(delays))} ({misses}; {sum(f for _, f in outcomes)})")
        print(f"| {design.key}. {design.title} | " + " | ".join(cells) + " |")


def yardstick_checks(glr_paths: int) -> None:
    print("\nYardstick checks:\n")
    for p0, p1 in ((0.8, 0.5), (0.9, 0.6), (0.85, 0.55), (0.95, 0.85), (0.8, 0.6), (0.8, 0.7)):
        h, exact = optimal_threshold(p0, p1, ARL)
        print(f"- optimum {p0} → {p1}: h = {h:.3f} (lattice ARL {exact:,.0f}); at a lattice ARL of 10³ a "
              f"simulation of 4000 runs gives {optimal_check(p0, p1, 4000):.3f}× it")
    for q0 in (0.2, 0.1, 0.15, 0.05):
        print(f"- {glr_threshold(q0, glr_paths).line()}")


def prior_shift_section(seeds: int, river_seeds: int, long_seeds: int, a: Design, checks: Checks) -> None:
    results = [shift_false_alarms(d, seeds) for d in prior_shift_designs()]
    on_a = practitioners_on_a(a, river_seeds)
    longer = [shift_false_alarms(d, long_seeds, LONG_ARL, practitioners=False) for d in prior_shift_designs()]
    print(f"\n### Pure prior shift: false degradation alerts ({seeds} seeds each)\n")
    print("streammon: incidents read from its detector, recovery_arl = 10³⁰⁰ (an alert mostly stays on; one that "
          "clears is watched again, and a new alarm counts). Its expected count at the calibrated ARL is class samples "
          "/ ARL (the stream's samples: every class is watched), or, more exactly, the class samples its banks "
          "watched (those inside an open incident left out) / ARL. p: two-sided Poisson p-value of the observed "
          "count (twice the smaller tail).\n")
    heads = " | ".join(r.design.title for r in results)
    print(f"| monitor | {heads} | a. minority 0.80 → 0.50: delay, false alarms before ({river_seeds} seeds) |")
    print("|---|" + "---|" * (len(results) + 1))
    for name in ("streammon", "rolling_f1", "rolling_accuracy", "adwin_error"):
        cells = [f"{sum(r.alarms[name])} (runs with any: {sum(1 for v in r.alarms[name] if v)}/{seeds})"
                 for r in results]
        a_cell = "(above)" if name == "streammon" else _practitioner_cell(on_a[name])
        print(f"| {name} | {' | '.join(cells)} | {a_cell} |")

    def row(title: str, cells: Iterable[str]) -> None:
        print(f"| {title} | {' | '.join(cells)} | |")

    row("(streammon expected at its calibrated ARL: class samples / 10⁶)", (f"{r.expected:.1f}" for r in results))
    row("streammon observed / expected", (f"{r.observed / r.expected:.2f}" for r in results))
    row("streammon two-sided Poisson p (observed vs expected)", (f"{r.p_value():.3f}" for r in results))
    row("(over the watched class samples: expected; observed / it; p)",
        (f"{r.expected_watched:.1f}; {r.observed / r.expected_watched:.2f}; p = {r.p_value(r.expected_watched):.3f}"
         for r in results))
    row(f"streammon with DetectorSettings(arl=1e8), {long_seeds} seeds: alerts (runs with any); expected",
        (f"{r.observed} ({sum(1 for v in r.alarms['streammon'] if v)}/{long_seeds}); {r.expected:.2f}" for r in longer))
    print(f"\nstreammon incidents that cleared (recovery_arl = 10³⁰⁰; the recall never moved): "
          f"{', '.join(f'{r.design.key} {r.clears}' for r in results)} at ARL 10⁶; "
          f"{', '.join(f'{r.design.key} {r.clears}' for r in longer)} at 10⁸.")
    for r in results:
        p = r.p_value()
        checks.add(f"{r.design.title}: {r.observed} false degradation alerts vs {r.expected:.1f} expected at the "
                   f"calibrated ARL (ratio {r.observed / r.expected:.2f}; two-sided Poisson p = {p:.3f} ≥ {P_MIN}): "
                   "a pure prior shift adds no false alarms beyond the in-control rate", p >= P_MIN)


def _practitioner_cell(results: list[tuple[float, int]]) -> str:
    delays = [d for d, _ in results]
    misses = sum(1 for d in delays if math.isinf(d))
    return f"median {_n(statistics.median(delays))}; misses {misses}; false before {sum(f for _, f in results)}"


def in_control_section(runs: int, arls: tuple[float, ...], checks: Checks) -> dict[str, list[RunLengths]]:
    print(f"\n### In-control run length (class samples to the first false alarm; censored at {CAP}× ARL)\n")
    print("Runs alarming within 1× ARL: 63 % when the run length is exponential with that mean. learned: refined as "
          "the samples double (the default); frozen: refine_until=500. recovery_arl = 10³⁰⁰; the first incident is "
          "read from the detector every 131 072 samples.\n")
    print("| baseline | p0 | ARL asked | runs | alarms | within 1× ARL | median run length | ARL estimate | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    out: dict[str, list[RunLengths]] = {}
    for treatment in TREATMENTS:
        for arl in arls:
            for p0 in (0.8, 0.95):
                result = run_lengths(p0, arl, treatment, runs)
                out.setdefault(treatment, []).append(result)
                print(result.line())
                if treatment == "exact":
                    ratio = result.estimate / arl
                    checks.add(f"in-control ARL p0={p0}, arl={arl:.0e}: ratio {ratio:.2f} within ±25 %",
                               0.75 <= ratio <= 1.25)
    cleared = {f"{r.treatment} p0={r.p0} arl={r.arl:.0e}": r.cleared for rs in out.values() for r in rs if r.cleared}
    print(f"\nFirst alarms already cleared when read (a poll of the report would have missed them): "
          f"{'; '.join(f'{k}: {v}' for k, v in cleared.items()) or 'none'}")
    return out


def treatment_section(a: Design, seeds: int, in_control: dict[str, list[RunLengths]]) -> None:
    optimum = statistics.median(
        alarm_outcome(*_optimum_on(a, seed), a.change).delay for seed in range(seeds))
    print(f"\n### Baseline treatments: scenario a ({seeds} seeds) and the in-control ARL ratios above\n")
    print("False alarms: any class before the change, the majority after it. Runs ending alerted: a false incident "
          "still open at the end of the run (recovery on, default recovery_arl), as majority + minority (raised before "
          "the change and never cleared). p0 at the end: the baseline recall in use when the run ended (true: "
          f"minority {a.recall[1]}, majority {a.recall[0]}). In-control: ARL estimate / ARL asked, p0 = 0.8 / 0.95, "
          "per ARL asked (those runs stop at the first alarm).\n")
    print("| treatment | p0 at the end: minority / majority (mean) | median delay | ratio to optimum | misses "
          "| false alarms | runs with one | runs ending alerted | flaps | in-control ARL ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for treatment in TREATMENTS:
        result = treatment_run(a, treatment, seeds)
        summary = result.summary
        runs = in_control[treatment]
        ratios = "; ".join(f"{r.arl:.0e}: " + " / ".join(f"{x.estimate / x.arl:.2f}" for x in runs if x.arl == r.arl)
                           for r in runs if r.p0 == runs[0].p0)
        with_false = sum(1 for o in summary.outcomes if o.false_alarms)
        majority = sum(1 for o, _ in result.stuck if o)
        minority = sum(t for _, t in result.stuck)
        print(f"| {TREATMENT_NAMES[treatment]} | {result.p0s[0]:.3f} / {result.p0s[1]:.3f} | {_n(summary.median)} "
              f"| {_ratio(summary.median, optimum):.2f} | {summary.misses} | {summary.false_alarms} "
              f"| {with_false}/{seeds} | {result.ending_alerted}/{seeds} ({majority} + {minority}) | {summary.flaps} "
              f"| {ratios} |")


def _optimum_on(design: Design, seed: int) -> tuple[IntArray, IntArray]:
    stream = seeded(design, seed)
    mine = stream.truth == design.target
    up, down = llr_steps(design.p0, design.p1)
    alarms = cusum_alarms(stream.pred[mine] != design.target, up, down, optimal_threshold(design.p0, design.p1, ARL)[0])
    return alarms, np.flatnonzero(mine)


def new_class(seeds: int) -> tuple[list[int], list[bool]]:
    """Samples until the class-set-change alert when a 4th class appears; Type 2 flags on auroc_ovo/ova."""
    delays, flagged = [], []
    classes = np.array(["a", "b", "c", "d"])
    for seed in range(seeds):
        rng = np.random.default_rng(200 + seed)
        monitor = Monitor([Sliding(2000)], reference={"a": 60, "b": 30, "c": 10})
        old = rng.choice(classes[:3], size=20_000, p=[0.6, 0.3, 0.1])
        monitor.update_many(old, np.where(rng.random(20_000) < 0.85, old, rng.choice(classes[:3], 20_000)))
        seen = -1
        for i in range(2000):
            y = classes[3] if rng.random() < 0.1 else rng.choice(classes[:3], p=[0.6, 0.3, 0.1])
            monitor.update(y, y if rng.random() < 0.85 else rng.choice(classes))
            if i % 25 == 24 and seen < 0 and monitor.report().alerting("class_set_change"):
                seen = i + 1
        delays.append(seen)
        flagged.append({"auroc_ovo", "auroc_ova"} <= set(monitor.report().windows["sliding_2000"].flagged("type2")))
    return delays, flagged


def timed(label: str, step: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    result = step()
    print(f"\n({label}: {time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 seeds, in-control at ARL 1e5 only")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per scenario (default 100; --quick 10)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target fails")
    parser.add_argument("--budget-only", action="store_true",
                        help="only the time-budget delays (the default false_alarm_interval beside arl = 10⁶)")
    args = parser.parse_args()
    seeds = args.seeds or (10 if args.quick else 100)
    if args.budget_only:
        logging.getLogger("streammon.alerts").setLevel(logging.ERROR)
        start = time.perf_counter()
        budget_section(seeds)
        print(f"\n({time.perf_counter() - start:.0f} s)")
        return
    glr_paths = 100 if args.quick else 400
    logging.getLogger("streammon.alerts").setLevel(logging.ERROR)  # "alert raised/cleared" lines
    start = time.perf_counter()
    checks = Checks()
    a = timed("degradation", lambda: degradation_section(seeds, glr_paths, checks))
    timed("time budget", lambda: budget_section(seeds))
    timed("yardstick checks", lambda: yardstick_checks(glr_paths))
    timed("prior shift", lambda: prior_shift_section(seeds, seeds, min(seeds, LONG_ARL_SEEDS), a, checks))
    arls = (1e5,) if args.quick else (1e5, 1e6)
    in_control = timed("in-control", lambda: in_control_section(seeds, arls, checks))
    timed("treatments", lambda: treatment_section(a, seeds, in_control))
    delays, flagged = timed("new class", lambda: new_class(seeds))
    print(f"\nNew class: class_set_change alert after {statistics.median(delays):.0f} samples (median of "
          f"{len(delays)}, checked every 25); auroc_ovo and auroc_ova Type-2-flagged in {sum(flagged)}/{len(delays)}.")
    passed = checks.print()
    print(f"\n({time.perf_counter() - start:.0f} s)")
    if args.check and not passed:
        sys.exit(1)


if __name__ == "__main__":
    main()
