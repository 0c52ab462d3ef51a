"""The off decision of a prior-shift alert on a window that turns over: the samples since its condition first
failed, pooled, must show every class back within ``shift_clear_ratio`` of its reference share (exact two
one-sided tests at ``1 − confidence``), and the hold's turnovers must have passed; a read at the on level starts
the clearing again.

The tests are recounted with scipy (binomial tails) and the monitor's decisions checked read by read against a
state machine written here from the documented rule."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from streammon import DetectorSettings, Monitor, Sliding
from streammon.findings.distortion import Policy
from streammon.findings.report import PRIOR_SHIFT
from streammon.metrics.binomial import within_ratio
from streammon.state import StateError, _digest

N, PI = 200, 0.05  # window size (reads on fresh samples), the reference minority's share


def _tost(counts: np.ndarray, priors: np.ndarray, ratio: float, alpha: float) -> bool:
    """Every class within ``ratio`` of its prior, by scipy: both one-sided exact tests reject at ``alpha``."""
    n = int(counts.sum())
    if n == 0:
        return False
    for k, pi in zip(counts, priors / priors.sum(), strict=True):
        if pi == 0:
            if k:
                return False
            continue
        high = ratio * pi >= 1 or stats.binom.cdf(k, n, min(1.0, ratio * pi)) < alpha
        low = stats.binom.sf(k - 1, n, pi / ratio) < alpha
        if not (high and low):
            return False
    return True


def test_within_ratio_is_scipys_two_one_sided_tests() -> None:
    """Random counts and priors (K = 2, 3, 5, a class the reference lacks now and then) at several ratios and
    levels: the same decision as the recount, and both decisions occur."""
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(600):
        k = int(rng.choice([2, 3, 5]))
        priors = rng.dirichlet(np.ones(k))
        if rng.random() < 0.1:
            priors[-1] = 0.0
        n = int(rng.choice([0, 10, 300, 5_000, 50_000]))
        share = priors * rng.uniform(0.8, 1.25, k) + 1e-3 * (priors == 0) * rng.integers(0, 2)
        counts = rng.multinomial(n, share / share.sum())
        ratio, alpha = float(rng.choice([1.1, 1.25, 2.0])), float(rng.choice([0.01, 0.05]))
        got = within_ratio(counts, priors, ratio, alpha)
        assert got == _tost(counts, priors, ratio, alpha), (counts, priors, ratio, alpha)
        seen.add(got)
    assert seen == {True, False}


def test_within_ratio_refuses_what_it_cannot_test() -> None:
    with pytest.raises(ValueError, match="within_ratio needs"):
        within_ratio([1, 2], [0.5, 0.3, 0.2], 1.25, 0.05)
    with pytest.raises(ValueError, match=r"ratio 0\.5"):
        within_ratio([1, 2], [0.5, 0.5], 0.5, 0.05)


def _p_ratio(count: int, n: int) -> tuple[float, float]:
    p = min(1.0, 2 * min(stats.binom.cdf(count, n, PI), stats.binom.sf(count - 1, n, PI)))
    shares = (count / n, 1 - count / n)
    ratio = max(max(s / q, q / s) if s > 0 else np.inf for s, q in zip(shares, (PI, 1 - PI), strict=True))
    return p, ratio


def _monitor() -> Monitor:  # raised after one turnover's confirmation (at once below α²), to keep the recount short
    return Monitor([Sliding(N)], reference={"a": 1 - PI, "b": PI}, detector=DetectorSettings(enabled=False),
                   clock=lambda: 0.0, policy=Policy(alert_confirm=1))


def _feed(monitor: Monitor, minority: int, rng: np.random.Generator) -> bool:
    labels = np.array(["b"] * minority + ["a"] * (N - minority))
    rng.shuffle(labels)
    monitor.update_many(labels, labels)
    return bool(monitor.report().alerting(PRIOR_SHIFT))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_alert_turns_off_exactly_when_the_pool_shows_the_mix_back(seed: int) -> None:
    """A 200-sample window read on fresh samples: the minority at 15 % raises the alert, then wanders between its
    reference share and shares the alert should hold at (7–12 %). The monitor's alert is on exactly where the
    documented rule, recounted here, says so: clearing begins at the first read failing the looser levels, its pool
    is that read's window and every later read's, a read at the on level drops it, and the alert goes off once
    three turnovers (600 samples) have passed and the pool passes the two one-sided tests at 0.05."""
    rng = np.random.default_rng(seed)
    policy, monitor = Policy(alert_confirm=1), _monitor()
    on, pool, since, strict_before, offs, resets = False, None, 0, False, 0, 0
    for read in range(260):
        share = 0.15 if read < 5 else float(rng.choice([PI, PI, PI, 0.07, 0.12, 0.15], p=[.5, .2, .1, .1, .05, .05]))
        minority = int(rng.binomial(N, share))
        p, ratio = _p_ratio(minority, N)
        strict = p < policy.shift_alpha and ratio >= policy.shift_min_ratio
        looser = p < policy.shift_clear_alpha and ratio >= policy.shift_clear_ratio
        counts = np.array([N - minority, minority])
        if not on:
            expected = strict and (strict_before or p < policy.shift_alpha ** 2)
            pool = None
        elif strict or (looser and pool is None):
            resets += pool is not None and strict
            expected, pool = True, None
        else:
            if pool is None:
                pool, since = counts.copy(), read
            else:
                pool = pool + counts
            waited = (read - since) * N >= 3 * N
            expected = not (waited and _tost(pool, np.array([1 - PI, PI]), policy.shift_clear_ratio, 0.05))
            offs += not expected
        now = _feed(monitor, minority, rng)
        assert now == expected, (read, minority, p, ratio, pool)
        on, strict_before = now, strict
    assert offs >= 3 and resets >= 1  # both ways out of a clearing were exercised


def test_a_saved_monitor_keeps_its_pool() -> None:
    """Saved in the middle of a clearing, a restored monitor turns the alert off at the same read as the one
    that went on; the pool is in the state file and a malformed one is refused by name."""
    rng = np.random.default_rng(7)
    monitor = _monitor()
    for _ in range(4):
        _feed(monitor, 30, rng)
    assert _feed(monitor, 10, rng)  # the looser level fails: clearing begins, the alert is held
    body = json.loads(monitor.dumps())
    assert body["body"]["alert_pools"] and body["body"]["alert_clearing"]
    restored = Monitor.loads(monitor.dumps(), clock=lambda: 0.0)
    states = []
    for _ in range(30):
        minority = int(rng.binomial(N, PI))
        states.append((_feed(monitor, minority, np.random.default_rng(1)), _feed(restored, minority,
                                                                                np.random.default_rng(1))))
    assert all(a == b for a, b in states) and states[0][0] and not states[-1][0], states
    body["body"]["alert_pools"][0][3] = [1.5, 2]
    body["sha256"] = _digest(body["body"])
    with pytest.raises(StateError, match=r"alert_pools\[0\] pool\[0\] must be an int"):
        Monitor.loads(json.dumps(body))
