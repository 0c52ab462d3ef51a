"""When a prior-shift alert on a window that turns over may turn off: once the samples since it stopped holding
show that the mix is back.

A sliding or timed window read hourly is a fresh small sample at each read: while the mix moves slowly across the
alert's levels, the window's own test passes and fails by chance, and a hold of a few turnovers (how the other
window alerts clear: ``streammon.findings.alerts.held_alerts``) ends inside the shift. Measured on the 90-day
scenario of ``examples/bench_alert_episodes.py`` (100 seeds): 8 of 100 seeds raised the alert twice on
``sliding_1000`` while the fraud share was still rising (6 on ``timed_3600s``), the off decision resting on three
windows of ~10–20 fraud samples each; with the pool, 1 and 0. So the off decision of these alerts pools its evidence:

- **clearing begins** at the first read where the alert's looser condition fails (p ≥ ``shift_clear_alpha`` or
  ratio < ``shift_clear_ratio``, ``streammon.findings.alerts.shift_holds``); from then the *pool* holds that
  window's true-class counts plus every sample counted since (kept as an offset from the lifetime counts, so it
  is exact however often the window is read);
- **the alert turns off** when at least ``Policy.alert_hold`` turnovers of the window have passed and the pool
  shows at level ``1 − Policy.confidence`` that every class's share is within ``shift_clear_ratio`` of its
  reference prior (``streammon.metrics.binomial.within_ratio``: exact two one-sided tests per class);
- **a read at the on level** (``shift_alpha`` and ``shift_min_ratio``: a read that would raise the alert) drops the
  pool: the shift is there again, and the next clearing starts afresh.

The equivalence test asks for evidence that the mix is back as the on test asks for evidence that it moved: a
1 % class needs about 10,000–20,000 samples at its reference share to pass at 95 % (ratio 1.25), a 20 % class a
few hundred; while the share stays 1.3× its prior it passes with probability below 2 %, however large the pool.

>>> import numpy as np
>>> from streammon.findings.distortion import Policy
>>> pool = start_pool(np.array([990, 10]), np.array([100_000, 3_000]))  # clearing begins on a 1 % window
>>> pool
(-99010, -2990)
>>> mix_back(pooled_counts(pool, np.array([120_000, 3_200])), np.array([0.99, 0.01]), Policy())  # 20,000 more at 1 %
True
>>> mix_back(pooled_counts(pool, np.array([120_000, 3_300])), np.array([0.99, 0.01]), Policy())  # at 1.5 %
False
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np
import numpy.typing as npt

from streammon.findings.alerts import AlertKey, Condition, Hold, held_alerts
from streammon.findings.assemble import CountsView
from streammon.findings.distortion import Policy
from streammon.findings.report import PRIOR_SHIFT, WindowReport
from streammon.metrics.binomial import within_ratio

Pool = tuple[int, ...]  # per class, in the monitor's class order: the pool's counts minus the lifetime counts
IntArray = npt.NDArray[np.int64]


def start_pool(window_true: IntArray, lifetime_true: IntArray) -> Pool:
    """A pool holding the window's true-class counts now, as an offset from the lifetime counts (so that
    ``offset + lifetime`` later holds those counts and every sample counted since)."""
    return tuple(int(a) - int(b) for a, b in zip(window_true, lifetime_true, strict=True))


def pooled_counts(pool: Pool, lifetime_true: IntArray) -> IntArray:
    """The pool's true-class counts now (a class met after the pool began has offset 0: all of it is new)."""
    counts = np.asarray(lifetime_true, dtype=np.int64).copy()
    counts[: len(pool)] += np.asarray(pool, dtype=np.int64)
    return counts


def mix_back(counts: IntArray, priors: npt.NDArray[np.float64], policy: Policy) -> bool:
    """Whether a pool's counts show every class within ``shift_clear_ratio`` of its prior at level
    ``1 − confidence``."""
    return within_ratio(counts, priors, policy.shift_clear_ratio, 1.0 - policy.confidence)


def held_shifts(  # noqa: PLR0917 (the monitor's bookkeeping, passed as it is kept)
    keys: Collection[AlertKey],
    clearing: Mapping[AlertKey, tuple[int, float]],
    pools: Mapping[AlertKey, Pool],
    conditions: list[Condition],
    windows: Mapping[str, WindowReport],
    window_true: Mapping[str, IntArray],
    lifetime_true: IntArray,
    priors: npt.NDArray[np.float64] | None,
    policy: Policy,
    sample: int,
    time: float,
    turnover: Mapping[str, Hold],
) -> tuple[list[Condition], dict[AlertKey, tuple[int, float]], dict[AlertKey, Pool]]:
    """The conditions with the prior-shift alerts ``keys`` (on now, on windows that turn over) decided by their
    pools (module docstring), and those alerts' clearing (first failing sample and time) and pools.

    ``conditions`` holds an alert of ``keys`` when its looser condition held at this read; the returned list
    holds it when it stays on (held, with why, where its condition failed) and not when it turned off.
    """
    out = [c for c in conditions if c[:3] not in keys]
    by_key = {c[:3]: c for c in conditions if c[:3] in keys}
    still: dict[AlertKey, tuple[int, float]] = {}
    kept: dict[AlertKey, Pool] = {}
    for key in keys:
        window = key[1]
        w = windows.get(window)
        if w is None or priors is None:
            continue  # the window or the reference is gone: nothing can hold the alert
        on_level = w.prior_shift is not None and w.prior_shift.shifted
        if key in by_key and (on_level or key not in pools):
            out.append(by_key[key])  # at the on level (the pool is dropped), or held at the looser level
            continue
        first = clearing.get(key, (sample, time))
        pool = pools.get(key) or start_pool(window_true[window], lifetime_true)
        samples, seconds = turnover.get(window, (0, 0.0))
        waited = (not samples or sample - first[0] >= samples) and (not seconds or time - first[1] >= seconds)
        counts = pooled_counts(pool, lifetime_true)
        if waited and mix_back(counts, priors, policy):
            continue  # off: the pool shows the mix back within the clear ratio
        still[key], kept[key] = first, pool
        n = int(counts.sum())
        span = f"{samples} samples" if samples else f"{seconds:g} s"
        out.append(by_key.get(key) or (PRIOR_SHIFT, window, key[2], (
            f"no longer holds since sample {first[0]}; held until the {n} samples since then show every class "
            f"within {policy.shift_clear_ratio:g}× of its reference share (exact one-sided bounds at "
            f"{policy.confidence:g}) and the window has turned over ({span}): one episode, one alert")))
    return out, still, kept


def hold_window_alerts(  # noqa: PLR0917 (the monitor's bookkeeping, passed as it is kept)
    since: Mapping[AlertKey, tuple[int, float]],
    clearing: Mapping[AlertKey, tuple[int, float]],
    pools: Mapping[AlertKey, Pool],
    conditions: list[Condition],
    windows: Mapping[str, WindowReport],
    view: CountsView,
    policy: Policy,
    time: float,
    turnover: Mapping[str, Hold],
) -> tuple[list[Condition], dict[AlertKey, tuple[int, float]], dict[AlertKey, Pool]]:
    """Every window alert's hold: the prior-shift alerts of windows that turn over by their pools
    (``held_shifts``), the others for ``Policy.alert_hold`` turnovers (``held_alerts``). Returns the conditions
    with the held alerts, and the clearing and pools to keep."""
    pooled = {key for key in since if key[0] == PRIOR_SHIFT and any(turnover.get(key[1], (0, 0.0)))}
    shift_clearing: dict[AlertKey, tuple[int, float]] = {}
    kept: dict[AlertKey, Pool] = {}
    if pooled:  # (the sums only where a prior-shift alert is on)
        window_true = {name: counts.sum(axis=1) for name, _, counts in view.windows}
        priors = None if view.reference is None else view.reference.aligned(view.labels)
        conditions, shift_clearing, kept = held_shifts(pooled, clearing, pools, conditions, windows, window_true,
                                                       view.lifetime.sum(axis=1), priors, policy, view.samples,
                                                       time, turnover)
    held, still = held_alerts({k: v for k, v in since.items() if k not in pooled}, clearing, conditions,
                              view.samples, time, turnover)
    return conditions + held, {**still, **shift_clearing}, kept
