"""False degradation alarms budgeted in time: each class's measured rate, and the run length it is given.

A CUSUM's in-control run length is counted in samples of its class; an on-call team counts time.
With ``false_alarm_interval = I`` seconds per model, ``W`` watched classes and class ``c`` arriving at
``λ_c`` samples/s, class ``c`` gets the run length

    arl_c = I · λ_c · W  samples of the class

so that it alarms falsely on average once in ``arl_c / λ_c = I · W`` seconds. The W classes' false
alarms are W nearly independent streams, each close to Poisson at these run lengths (a CUSUM's
in-control run length is nearly exponential once it is long); their union has rate
``Σ_c 1/(I·W) = 1/I``: one false alarm per ``I`` seconds per model, whatever the mix of rates.

**Measuring λ_c.** ``RateMeter`` keeps, per class, the samples of the recent past decayed with time
constant ``HORIZON`` (7 days: daily and weekly cycles average out, a lasting change of traffic is
followed within days), and the decayed time span they were counted over; ``λ_c`` is their ratio (an
unbiased estimate at a constant rate, however the samples were batched). The samples of a batch
belong to the time from the previous batch's last time to this batch's last time; the samples up to
the first time stamp seen count, over a span that starts there (the first estimates are high by
``samples at the origin / span``, the safe side: a longer run length, fewer false alarms; it vanishes
as time passes, and it keeps the counts the same however a stream is cut into batches). Times are the
samples' ``t=`` or, where none was given, the monitor's clock read once per batch. Rates are updated, and
run lengths derived again, between batches (a long batch with times of its own: every 2²⁰ samples), so
where a stream is cut into batches can move an alarm a little; with a fixed ``arl=`` it cannot.

**When the rate is known, and when it is re-derived.** A class's rate is known once ``MIN_SAMPLES``
of its samples were counted over a positive span, or once the span reached ``KNOWN_SPAN`` (half the
horizon, ~4.8 days of time: a class rarer than ~14 samples a day is then known to be rare, and gets
the floor); until then it runs at the cap ``ARL_CAP`` (no
false-alarm storm while the rate is unknown, at the price of a later first alarm: the thresholds are
about ``ln(ARL_CAP / arl_c)`` higher). Its thresholds are derived again (statistics carried on, as a
refined baseline's are) when the samples behind the estimate have doubled since the last
derivation (the estimate got more precise; until ``PRECISE`` samples, a 1 % error), or when the run
length due now — its rate or the number of watched classes moved — left ``[1/RETUNE_FACTOR,
RETUNE_FACTOR]`` times the one it runs at (a change of 10 %: each re-derivation costs ~0.4 ms).

**Floor and cap.** ``arl_c`` is clamped to ``[ARL_FLOOR, ARL_CAP]`` class samples. Below the floor a
bank's thresholds collapse towards "alarm at the first wrong sample" and the thresholds tables
(``streammon.detection.thresholds``) are not calibrated; a class slower than ``ARL_FLOOR / (I·W)``
samples/s (about 166 a day at the default month and two classes) therefore raises *fewer* false
alarms than its share: the model stays within its budget. The cap (10¹² samples: 30 years at 1,000
samples/s) keeps thresholds and counts far from a float's exact range.

>>> budget_arl(30 * 86400.0, rate=0.5, watched=2)  # half a sample per second, two classes, a month
2592000.0
>>> budget_arl(30 * 86400.0, rate=1e-4, watched=2), budget_arl(30 * 86400.0, rate=None, watched=2)
(10000.0, 1000000000000.0)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

HORIZON = 7 * 86400.0  # seconds: the decay time of the rate estimate
MIN_SAMPLES = 100  # a class's samples behind its first rate (its relative error ~ 1/√100 = 10 %)
KNOWN_SPAN = HORIZON / 2  # ... or this much decayed time (~4.8 days) behind it, whatever the count: a rare class
RETUNE_FACTOR = 1.1  # thresholds are derived again when the run length due moves by more than this factor
CHECK_SAMPLES, CHECK_SPAN = 4096, 1e-3  # run lengths due are compared after this many samples or this share of
# the measured span in time, whichever comes first (and when the number of watched classes changes)
PRECISE = 10_000  # samples behind a rate (1 % relative error) after which their doubling no longer re-derives it
ARL_FLOOR = 1e4  # class samples: the shortest run length given (below it the tables are not calibrated)
ARL_CAP = 1e12  # class samples: the longest (also the run length while a class's rate is unknown)


def budget_arl(interval: float, *, rate: float | None, watched: int) -> float:
    """The run length, in samples of the class, that gives a class arriving at ``rate`` samples/s (None: not known
    yet) its share of one false alarm per ``interval`` seconds among ``watched`` classes, within the floor and cap."""
    if rate is None or not math.isfinite(rate) or rate <= 0.0:
        return ARL_CAP if rate is None else ARL_FLOOR
    return min(max(interval * rate * max(watched, 1), ARL_FLOOR), ARL_CAP)


class RateMeter:
    """Each class's arrival rate, in samples per second, decayed over ``HORIZON`` (see the module docstring).

    >>> meter = RateMeter()
    >>> meter.observe(np.array([0, 0]), 0.0)  # the first time seen: the origin
    >>> meter.observe(np.array([20, 5]), 10.0)
    >>> [round(r, 6) for r in meter.rates()], meter.behind().tolist()
    ([2.0, 0.5], [20.0, 5.0])
    """

    def __init__(self) -> None:
        self.counts = np.zeros(0)  # decayed samples per class
        self.span = 0.0  # decayed seconds they were counted over
        self.last = math.nan  # the latest time seen (nan: none yet)

    def observe(self, added: npt.NDArray[Any], at: float) -> None:
        """Count ``added[c]`` samples of class ``c`` that arrived up to time ``at`` (since the previous call)."""
        if len(added) > len(self.counts):
            grown = np.zeros(len(added))
            grown[: len(self.counts)] = self.counts
            self.counts = grown
        if not math.isfinite(at):
            return
        if math.isnan(self.last):  # the origin: its samples count, over no time yet (an estimate high at first)
            self.last = at
            self.counts[: len(added)] += added
            return
        elapsed = max(at - self.last, 0.0)  # (a clock that stepped back: no time passed)
        decay = math.exp(-elapsed / HORIZON)
        self.counts *= decay
        self.counts[: len(added)] += added
        self.span = self.span * decay + elapsed
        self.last = max(self.last, at)

    def rates(self) -> list[float]:
        """Every class's rate (samples/s; nan while no time has passed)."""
        if self.span <= 0.0:
            return [math.nan] * len(self.counts)
        return (self.counts / self.span).tolist()  # type: ignore[no-any-return]

    def behind(self) -> npt.NDArray[np.float64]:
        """The (decayed) samples each class's rate is measured from."""
        return self.counts

    def rate(self, cls: int) -> float | None:
        """Class ``cls``'s rate, or None while it is not known (fewer than ``MIN_SAMPLES`` behind it, or no span)."""
        if cls >= len(self.counts) or self.span <= 0.0 or (self.counts[cls] < MIN_SAMPLES and self.span < KNOWN_SPAN):
            return None
        return float(self.counts[cls] / self.span)

    def state(self) -> dict[str, Any]:
        """As plain data."""
        return {"counts": self.counts.tolist(), "span": self.span, "last": None if math.isnan(self.last) else self.last}

    def restore(self, saved: dict[str, Any]) -> None:
        """Load a ``state()``."""
        self.counts = np.array(saved["counts"], dtype=np.float64)
        self.span = float(saved["span"])
        self.last = math.nan if saved["last"] is None else float(saved["last"])


class Budget:
    """The run length each watched class is given, and when to give it again (see the module docstring).

    ``interval``: the model's false-alarm interval in seconds; ``fixed``: a run length in class samples for every
    class (the expert ``arl=``), the rates then only measured for the report.

    >>> budget = Budget(interval=1000.0, fixed=None)
    >>> budget.observe(np.array([0, 0]), 0.0); budget.observe(np.array([400, 100]), 100.0)
    >>> budget.give(0, watched=2), budget.give(1, watched=2)  # 4/s and 1/s: 1000 s · rate · 2, floored at 10⁴
    (10000.0, 10000.0)
    >>> budget.observe(np.array([40_000, 10_000]), 200.0)
    >>> budget.due(2).tolist(), round(budget.give(0, watched=2), -2)  # more samples behind both rates: again
    ([0, 1], 404000.0)
    """

    def __init__(self, *, interval: float, fixed: float | None) -> None:
        self.interval, self.fixed = interval, fixed
        self.meter = RateMeter()
        self.arl = np.zeros(0)  # the run length each class was given (0: none)
        self.rate = np.zeros(0)  # the rate it was derived from (nan: the rate was unknown)
        self.behind = np.zeros(0)  # the samples behind that rate
        self.watched = 0  # the watched classes it was derived for
        self._unchecked = (0, 0.0)  # (samples, seconds) since ``due`` last looked: it looks at most so often

    def grow(self, k: int) -> None:
        """Room for ``k`` classes."""
        if k > len(self.arl):
            self.arl, self.rate, self.behind = (np.concatenate([x, np.zeros(k - len(x))])
                                                for x in (self.arl, self.rate, self.behind))
        if k > len(self.meter.counts):
            self.meter.observe(np.zeros(k), math.inf)  # (grows the meter: no time given)

    def looks(self, samples: int, at: float) -> bool:
        """Whether ``samples`` new samples up to time ``at`` are worth observing now: ``CHECK_SAMPLES`` of them, or
        ``CHECK_SPAN`` of the measured span passed, or no time seen yet (else they wait for a later batch)."""
        last = self.meter.last
        return samples >= CHECK_SAMPLES or math.isnan(last) or at - last >= self.meter.span * CHECK_SPAN

    def observe(self, added: npt.NDArray[Any], at: float) -> None:
        """Samples per class up to time ``at`` (``RateMeter.observe``)."""
        self.grow(len(added))
        last = self.meter.last
        self.meter.observe(added, at)
        samples, seconds = self._unchecked
        moved = 0.0 if math.isnan(last) else self.meter.last - last
        self._unchecked = (samples + int(added.sum()), seconds + moved)

    def give(self, cls: int, *, watched: int) -> float:
        """Derive ``cls``'s run length now (class samples) and remember what it was derived from."""
        self.grow(cls + 1)
        rate = self.meter.rate(cls)
        arl = self.fixed if self.fixed is not None else budget_arl(self.interval, rate=rate, watched=watched)
        self.arl[cls] = arl
        self.rate[cls] = math.nan if rate is None or self.fixed is not None else rate
        self.behind[cls] = self.meter.counts[cls] if self.fixed is None else 0.0  # (fixed: never derived again)
        self.watched = watched
        return arl

    def forget(self, cls: int) -> None:
        """``cls`` is not watched (no run length)."""
        self.grow(cls + 1)
        self.arl[cls] = 0.0

    def due(self, watched: int) -> npt.NDArray[np.intp]:
        """The watched classes whose run length should be derived again: the one they would get now is more than
        ``RETUNE_FACTOR`` away from theirs (their rate or the number of watched classes moved, or their rate
        became known), or the samples behind their rate doubled (a more precise estimate; until ``PRECISE``)."""
        span = self.meter.span
        samples, seconds = self._unchecked
        if self.fixed is not None or span <= 0.0 or (
                watched == self.watched and samples < CHECK_SAMPLES and seconds < span * CHECK_SPAN):
            return np.flatnonzero(np.zeros(0, bool))  # (small batches: looked at every 4,096 samples, not each)
        self._unchecked = (0, 0.0)
        given = self.arl > 0
        counts = self.meter.counts[: len(given)]
        known = (counts >= MIN_SAMPLES) | (span >= KNOWN_SPAN)
        target = np.clip(self.interval * (counts / span) * max(watched, 1), ARL_FLOOR, ARL_CAP)
        moved = (target > self.arl * RETUNE_FACTOR) | (target * RETUNE_FACTOR < self.arl)
        sharper = (counts >= 2 * self.behind) & (self.behind < PRECISE)
        return np.flatnonzero(given & known & (moved | sharper | np.isnan(self.rate)))

    def of(self, cls: int) -> tuple[float, float, float]:
        """(rate in samples/s — nan while unknown —, run length in class samples, the class's own expected seconds
        between false alarms, ``arl / rate``) as derived last; the rate is the one measured now."""
        rates = self.meter.rates()
        rate = rates[cls] if cls < len(rates) else math.nan
        arl = float(self.arl[cls])
        interval = arl / rate if rate > 0 else math.inf if rate == 0 else math.nan
        return float(rate), arl, interval

    def state(self) -> dict[str, Any]:
        """As plain data (nan rates as null)."""
        return {**self.meter.state(), "arl": self.arl.tolist(),
                "rate": [None if math.isnan(r) else r for r in self.rate.tolist()], "behind": self.behind.tolist(),
                "watched": self.watched, "unchecked": list(self._unchecked)}

    def restore(self, saved: dict[str, Any]) -> None:
        """Load a ``state()``."""
        self.meter.restore(saved)
        self.arl = np.array(saved["arl"], dtype=np.float64)
        self.rate = np.array([math.nan if r is None else r for r in saved["rate"]], dtype=np.float64)
        self.behind = np.array(saved["behind"], dtype=np.float64)
        self.watched = int(saved["watched"])
        self._unchecked = (int(saved["unchecked"][0]), float(saved["unchecked"][1]))
        self.grow(max(len(self.meter.counts), len(self.arl)))
