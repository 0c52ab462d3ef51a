"""Per-class degradation detection: a bank of CUSUMs on each class's correctness, sample by sample.

The detector never looks at the class mix: it sees, for one class at a time, the sequence
"was this sample of the class predicted right?". A pure prior shift changes how many samples
each class gets, not their correctness, so it cannot raise a degradation alarm.

**Watching.** Each class's in-control recall ``p0`` comes from its baseline (given counts, or
its first ``baseline_samples`` samples; ``bank.baseline_recall``). Its bank of CUSUMs
(``streammon.detection.bank``), one per size of drop, steps on every sample of the class; the
alarm is the first member whose statistic reaches its threshold — each member its own, set
together for the average in-control run length ``arl`` (in samples of the class), each member
taking an equal share of the false alarms (``thresholds``). The alarm
time is the sample at which the statistic crossed, whether the samples came one by one or in
a batch (the scan is one compiled loop over the batch in stream order, ``kernel``).

**Learned baselines keep learning** while their class is watched: each time the class's samples
double (1,000, 2,000, …, up to ``refine_until``) the baseline is re-estimated from all of them and
the bank re-tuned, its statistics carrying on (a change under way keeps its evidence) — a
500-sample baseline that happened to overestimate the recall is corrected before it has raised
many false alarms. An incident freezes it. (``recall_after`` is read from the alarming member's
statistic; across a re-tune that statistic mixes two banks' units, so the estimate is rougher
there, the more so the smaller the baseline.)

**An incident.** At the alarm the class's incident opens: its start (the alarm's sample), its
estimated change point (where the alarming member's statistic last left 0) and the recall
since then (the maximum-likelihood estimate over the excursion — biased low when the alarm
came fast: an excursion ends on a run of bad luck). While it is open the class is watched for
**recovery** only: a CUSUM of "recall back at ``p0``" against "recall at ``middle``" clears the
incident when it reaches ``ln(recovery_arl)`` — Lorden's bound: with the recall at or below
``middle``, a false clear comes at most once per ``recovery_arl`` samples of the class on
average. ``middle`` is halfway between ``p0`` and a cautious degraded recall: the excursion's
Wilson upper bound (99 % one-sided), so that an estimate biased low by a short excursion does not
put ``middle`` below the degraded recall (which would let the alert clear while the model is still
degraded) — and at most the recall of the smallest drop the bank watches, so that ``middle`` is at
most that member's point of zero drift: any recall low enough for the bank to alarm on lies below
it. Clearing takes about ``ln(recovery_arl)`` over the Kullback–Leibler divergence of ``p0`` from
``middle`` class samples once the recall is back. One incident is one alert; a model that stays
degraded stays alerted.

>>> watch = DegradationWatch(DetectorSettings(), given={0: (8000, 10000)})
>>> rng = np.random.default_rng(0)
>>> true = np.zeros(6000, np.int64)
>>> pred = np.where(rng.random(6000) < np.r_[np.full(5000, 0.8), np.full(1000, 0.5)], 0, 1)
>>> watch.feed(true, pred, k=2)
>>> incident = watch.incidents()[0]
>>> 4900 <= incident.change_at <= incident.since < 5100, incident.recall_after < 0.8
(True, True)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.detection import kernel
from streammon.detection.baseline import DetectorSettings  # noqa: F401 (the module docstring's example builds one)
from streammon.detection.thresholds import thresholds
from streammon.detection.watch_arrays import Incident as Incident  # noqa: PLC0414 (re-exported: moved there)
from streammon.detection.watch_arrays import WatchArrays
from streammon.metrics.intervals import wilson

STATUS_NAMES = ("learning", "watching", "degraded", "unwatched", "assessing")
RECOVERY_CONFIDENCE = 0.98  # two-sided: the upper bounds are one-sided 99 %
ASSESS_SAMPLES = 200  # class samples after an alarm that tell how far the recall fell, before recovery is watched
RATE_CHUNK = 1 << 20  # samples with times of their own are scanned in chunks of at most this many (rates follow)
FIRST_CHUNK = 1 << 12  # ... and of at least this many, or the samples seen so far: a stream's start is measured soon


class DegradationWatch(WatchArrays):
    """Baselines, CUSUM banks and incidents of every class, fed batches in stream order."""

    # -- feeding ------------------------------------------------------------------------------

    def feed(self, true: npt.NDArray[np.intp], pred: npt.NDArray[np.intp], *, k: int,
             lut: npt.NDArray[np.intp] | None = None, times: npt.NDArray[np.float64] | float | None = None,
             cells: npt.NDArray[np.int64] | None = None, now: float | None = None) -> None:
        """Scan a batch of label codes (``lut`` maps a code to one of ``k`` class indices; None: codes are
        indices) in stream order. ``cells``: a flat (codes × codes) array the batch's confusion counts are
        added to on the way (``true · codes + pred``), so that nobody counts the batch twice. ``times``: the
        samples' times (one each, or one for all); ``now``: the time of the batch where ``times`` is None (the
        clock), for the classes' rates (``streammon.detection.rates``)."""
        self._grow(k)
        if lut is None:  # codes are indices: the identity table, kept between batches
            if len(self._identity) != k:
                self._identity = np.arange(k, dtype=np.intp)
            lut = self._identity
        flat = np.zeros(len(lut) ** 2, np.int64) if cells is None else cells
        if not isinstance(times, np.ndarray):
            self._feed(true, pred, lut, times=times, flat=flat, at=now if times is None else times)
            return
        if math.isnan(self.budget.meter.last) and len(times):  # the first time seen: the origin of the rates
            self.budget.observe(np.zeros(k), float(times[0]))
        begin = 0
        while begin < len(true):  # (rates re-derived between chunks of a long batch: short ones while they are young)
            end = begin + min(RATE_CHUNK, max(FIRST_CHUNK, self.position))
            self._feed(true[begin:end], pred[begin:end], lut, times=times[begin:end], flat=flat,
                       at=float(times[min(end, len(times)) - 1]))
            begin = end

    def _feed(self, true: npt.NDArray[np.intp], pred: npt.NDArray[np.intp], lut: npt.NDArray[np.intp], *,
              times: npt.NDArray[np.float64] | float | None, flat: npt.NDArray[np.int64], at: float | None) -> None:
        """``feed`` one part of a batch; then count its samples into the rates as of time ``at`` (None: not)."""
        n = len(true)
        a = self._arrays
        codes = len(lut)
        if len(self._scratch) < 2 * codes:  # (kept between batches: a batch of one sample should not allocate)
            self._scratch = np.empty(2 * codes, np.int64)
        local, stop_at = self._scratch[:codes], self._scratch[codes: 2 * codes]
        wrongs_found = self._wrongs_found
        t = 0
        while t < n:
            event, t, cls, member = kernel.scan(
                true, pred, lut, t, flat, codes, a["status"], a["stat"], a["up"], a["down"], a["h"], a["count"],
                a["seen"], a["start"], a["start_at"], a["recovery"], a["rec_up"], a["rec_down"], a["rec_h"],
                a["learned"], a["target"], self.position, local, stop_at, wrongs_found)
            if event == kernel.ALARM:
                self._alarm(cls, member, self.position + t, _time_at(times, t))
            elif event == kernel.RECOVERED:
                self._recovered(cls, self.position + t)
            elif event in (kernel.LEARNED, kernel.REFINED):
                right, total = (int(v) for v in a["learned"][cls])
                self._start(cls, right, total, "learned", restart=event == kernel.LEARNED)
            elif event == kernel.ASSESSED:
                self.assessed[cls] = (int(a["learned"][cls, 0]), int(a["learned"][cls, 1]))
                self._watch_recovery(cls)
            t += 1
        self.position += n
        if at is not None and self.budget.looks(int(a["count"].sum() - self._observed.sum()), at):
            self.budget.observe(a["count"] - self._observed, at)  # (small batches: every 4,096 samples, not each)
            self._observed = a["count"].copy()
            for cls in self.budget.due(self._watched).tolist():  # (thresholds only: the statistics carry on)
                a["h"][cls] = thresholds(self.banks[cls], arl=self.budget.give(cls, watched=self._watched))

    def skip(self, n: int) -> None:
        """Move past ``n`` samples without looking at them (detection turned off)."""
        self.position += n

    def _alarm(self, cls: int, member: int, at: int, at_time: float) -> None:
        a, bank = self._arrays, self.banks[cls]
        up, down = bank.up[member], bank.down[member]
        length = int(a["seen"][cls] - a["start"][cls, member] + 1)  # class samples in the excursion
        # S = wrong·down − right·up over the excursion (clipped: across a re-tune the units are mixed)
        wrong = min(max(round((float(a["stat"][cls, member]) + length * up) / (up + down)), 0), length)
        recall = (length - wrong) / length
        self.open[cls] = Incident(bank.p0, at, at_time, int(a["start_at"][cls, member]), recall, length)
        self._assess(cls)

    def _assess(self, cls: int, right: int = 0, total: int = 0) -> None:
        """Count the class's first ``ASSESS_SAMPLES`` samples after the alarm (``right``/``total`` so far)."""
        a = self._arrays
        a["status"][cls] = kernel.ASSESSING
        a["learned"][cls] = right, total
        a["target"][cls] = ASSESS_SAMPLES  # (a baseline still being refined stops here: it must not learn the drop)
        a["seen"][cls] = a["count"][cls]
        a["stat"][cls] = 0.0

    def _watch_recovery(self, cls: int) -> None:
        """Arm the recovery test: ``middle`` between ``p0`` and a cautious degraded recall — the higher of the
        alarming excursion's and the assessment's 99 % Wilson upper bounds, at most the smallest drop watched."""
        a, incident = self._arrays, self.open[cls]
        p0, recall = incident.baseline, min(incident.recall_after, incident.baseline)
        upper = wilson(recall * incident.samples, incident.samples, RECOVERY_CONFIDENCE)[1]
        right, total = self.assessed.get(cls, (0, 0))
        if total:  # (none in a state file of version 2, whose recovery test was armed at the alarm)
            upper = max(upper, wilson(right, total, RECOVERY_CONFIDENCE)[1])
        bank = self.banks[cls]
        middle = (p0 + min(upper, 1 - bank.q1[bank.first])) / 2
        a["status"][cls] = kernel.DEGRADED
        a["target"][cls] = kernel.NEVER
        a["rec_up"][cls] = math.log(p0 / middle)  # a right sample: evidence of recovery
        a["rec_down"][cls] = math.log((1 - p0) / (1 - middle))  # a wrong one: against it
        a["rec_h"][cls] = math.log(self.settings.recovery_arl)
        a["seen"][cls] = a["count"][cls]
        a["stat"][cls] = 0.0

    def _recovered(self, cls: int, at: int) -> None:
        a = self._arrays
        self.closed.append((cls, self.open.pop(cls), at))
        self.assessed.pop(cls, None)
        a["status"][cls] = kernel.WATCHING
        a["recovery"][cls] = 0.0
        a["stat"][cls] = 0.0
        a["seen"][cls] = a["count"][cls]
        right, total = self.baseline[cls]
        if self.settings.arl is None and self.source[cls] == "learned" and total < self.settings.refine_until:
            # (under the time budget a learned baseline that a false alarm froze too high alarmed again and again,
            # 70 times in 60 days: once the recall is back, its refinement resumes, the incident's samples left out)
            a["learned"][cls] = int(right), int(total)
            a["target"][cls] = self._next_target(int(total))

    # -- reading ------------------------------------------------------------------------------

    def incidents(self) -> dict[int, Incident]:
        """The open incidents by class index."""
        return dict(self.open)

    def baselines(self) -> dict[int, float]:
        """Every class's in-control recall ``p0`` (classes with a baseline)."""
        return {cls: bank.p0 for cls, bank in self.banks.items()}

    def budgets(self) -> dict[int, tuple[float, float, float]]:
        """Every watched class's (rate in samples/s, run length in class samples, expected seconds between its false
        alarms) — ``streammon.detection.rates.Budget.of``."""
        return {cls: self.budget.of(cls) for cls, bank in self.banks.items() if bank.watching}

    def statistics(self, cls: int) -> npt.NDArray[np.float64]:
        """The bank's statistics of ``cls`` now (its run of right samples applied)."""
        a = self._arrays
        decay = (a["count"][cls] - a["seen"][cls]) * a["up"][cls]
        now: npt.NDArray[np.float64] = np.maximum(a["stat"][cls] - decay, 0.0)
        return now

    # -- state --------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """Baselines, statistics, learning counts and incidents, as plain data."""
        a = self._arrays
        classes: dict[str, Any] = {}
        learning: dict[str, list[int]] = {}
        for cls in range(self._k):
            status = int(a["status"][cls])
            if cls not in self.banks:
                if status == kernel.LEARNING:  # (the kernel keeps them as of the last wrong sample)
                    run = int(a["count"][cls] - a["seen"][cls])
                    learning[str(cls)] = [int(a["learned"][cls, 0]) + run, int(a["learned"][cls, 1]) + run]
                continue
            incident = self.open.get(cls)
            classes[str(cls)] = {
                # (floats, as a load reads them: a learned baseline's counts are ints until saved and loaded)
                "baseline": [float(x) for x in self.baseline[cls]], "source": self.source[cls],
                "status": STATUS_NAMES[status],
                "thresholds": None if status == kernel.UNWATCHED else [
                    float(h) if math.isfinite(h) else None for h in a["h"][cls].tolist()],
                "statistic": a["stat"][cls].tolist(),
                "run": int(a["count"][cls] - a["seen"][cls]),
                "seen": int(a["seen"][cls]), "start": a["start"][cls].tolist(), "start_at": a["start_at"][cls].tolist(),
                "recovery": float(a["recovery"][cls]),
                "refining": a["learned"][cls].tolist() if status == kernel.WATCHING and a["target"][cls] < kernel.NEVER
                else None,
                "incident": None if incident is None else [
                    incident.since, incident.since_time, incident.change_at, incident.recall_after, incident.samples,
                    *(a["learned"][cls].tolist() if status == kernel.ASSESSING else self.assessed[cls])],
            }
        return {"position": self.position, "classes_seen": self._k, "learning": learning, "classes": classes,
                "budget": {**self.budget.state(), "pending": (a["count"] - self._observed).tolist() if self._k else []}}

    def restore(self, state: dict[str, Any]) -> None:
        """Load a ``state()`` (checked by ``streammon.state_schema``)."""
        self._reset({})
        self.position = int(state["position"])
        self._grow(int(state["classes_seen"]))
        a = self._arrays
        for c, counts in state["learning"].items():
            a["learned"][int(c)] = counts
        for c, saved in state["classes"].items():
            cls = int(c)
            correct, total = saved["baseline"]
            h = saved["thresholds"]
            self._start(cls, float(correct), float(total), str(saved["source"]),
                        h=None if h is None else [math.inf if v is None else float(v) for v in h])
            a["status"][cls] = STATUS_NAMES.index(saved["status"])
            a["stat"][cls], a["seen"][cls] = saved["statistic"], saved["seen"]
            a["count"][cls] = saved["seen"] + saved["run"]
            a["start"][cls], a["start_at"][cls] = saved["start"], saved["start_at"]
            if saved["refining"] is not None:
                a["learned"][cls] = saved["refining"]
            else:
                a["target"][cls] = kernel.NEVER
            if saved["incident"] is not None:
                since, since_time, change_at, recall, samples, right_after, after = saved["incident"]
                self.open[cls] = Incident(self.banks[cls].p0, int(since), float(since_time), int(change_at),
                                          float(recall), int(samples))
                if saved["status"] == "assessing":
                    self._assess(cls, int(right_after), int(after))
                else:
                    self.assessed[cls] = (int(right_after), int(after))
                    self._watch_recovery(cls)
                a["seen"][cls] = saved["seen"]  # (as saved: the run of right samples since is still to apply)
            a["recovery"][cls] = saved["recovery"]
        if "budget" in state:  # (absent from files written before the time budget: their arl was fixed)
            self.budget.restore(state["budget"])
            if self._k:
                pending = np.zeros(self._k, np.int64)
                pending[: len(state["budget"]["pending"])] = state["budget"]["pending"]
                self._observed = a["count"] - pending
        else:
            for cls, bank in self.banks.items():
                if bank.watching:  # (the thresholds as saved; derived again once the rates are known)
                    self.budget.give(cls, watched=self._watched)


def _time_at(times: npt.NDArray[np.float64] | float | None, t: int) -> float:
    if times is None:
        return math.nan
    if isinstance(times, np.ndarray):
        return float(times[t])
    return float(times)
