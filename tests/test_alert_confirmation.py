"""Confirmation: a prior-shift or class-set-change alert that is off is raised only when its condition held at
reads a window turnover apart (disjoint samples), unless one read's evidence reaches ``shift_alpha²``.

The p-values are recomputed here with scipy (the doubled smaller binomial tail of the minority's count) and the
raises checked against that recount, read by read."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from streammon import DetectorSettings, Monitor, Sliding, Timed
from streammon.findings.distortion import Policy
from streammon.findings.report import CLASS_SET_CHANGE, PRIOR_SHIFT
from streammon.state import _digest

N, PI = 200, 0.05  # window size, the reference minority's share


def _p_and_ratio(count: int, n: int = N, pi: float = PI) -> tuple[float, float]:
    """The exact two-sided p-value (doubled smaller tail) and the largest per-class prior ratio, by scipy."""
    p = min(1.0, 2 * min(stats.binom.cdf(count, n, pi), stats.binom.sf(count - 1, n, pi)))
    shares = np.array([count / n, 1 - count / n])
    priors = np.array([pi, 1 - pi])
    ratio = max(max(s / q, q / s) if s > 0 else np.inf for s, q in zip(shares, priors, strict=True))
    return p, ratio


def _monitor(policy: Policy, windows: list[Sliding | Timed] | None = None) -> Monitor:
    return Monitor(windows or [Sliding(N)], reference={"a": 1 - PI, "b": PI}, policy=policy,
                   detector=DetectorSettings(enabled=False), clock=lambda: 0.0)


def _read(monitor: Monitor, minority: int, rng: np.random.Generator) -> bool:
    labels = np.array(["b"] * minority + ["a"] * (N - minority))
    rng.shuffle(labels)
    monitor.update_many(labels, labels)
    return bool(monitor.report().alerting(PRIOR_SHIFT))


@pytest.mark.parametrize("seed", [0, 1])
def test_every_raise_rests_on_two_disjoint_reads_or_on_alpha_squared(seed: int) -> None:
    """Hourly-like reads of a 200-sample window, each on fresh samples, the minority drawn around its reference
    share and 7 % in turns of 20 reads (α = 0.2 so that the test is often on; the off test at confidence 0.5 so
    that a turn at the reference share clears the alert): an alert turns on exactly where the recount says so — the
    strict criterion at this read and at the read before (a turnover apart), or p < α² at this one."""
    rng = np.random.default_rng(seed)
    policy = Policy(shift_alpha=0.2, shift_min_ratio=1.2, shift_clear_ratio=1.1, confidence=0.5, alert_confirm=1)
    monitor = _monitor(policy)
    on, strict_before, raises, confirmed_raises = False, False, 0, 0
    for read in range(400):
        minority = int(rng.binomial(N, (PI, 0.07)[read // 20 % 2]))
        p, ratio = _p_and_ratio(minority)
        strict = p < policy.shift_alpha and ratio >= policy.shift_min_ratio
        now = _read(monitor, minority, rng)
        if not on:
            expected = strict and (strict_before or p < policy.shift_alpha ** 2)
            assert now == expected, (minority, p, ratio, strict_before)
            raises += now
            confirmed_raises += now and p >= policy.shift_alpha ** 2
        on, strict_before = now, strict
    assert raises >= 5 and confirmed_raises >= 2  # both ways of raising were exercised


def test_no_confirmation_raises_at_the_first_strict_read() -> None:
    """alert_confirm = 0: the first read where the criterion holds raises the alert (p between α³ and α); 1: the
    read a turnover later; the default 2: the read two turnovers later."""
    rng = np.random.default_rng(3)
    p, ratio = _p_and_ratio(20)
    assert 0.01 ** 2 < p < 0.01 and ratio >= 1.5  # the recount: a moderate shift, 20 of 200 against 5 %
    assert _read(_monitor(Policy(alert_confirm=0)), 20, rng)
    once = _monitor(Policy(alert_confirm=1))
    assert not _read(once, 20, rng) and _read(once, 20, rng)  # pending, then raised a turnover later
    twice = _monitor(Policy())
    assert [_read(twice, 20, rng) for _ in range(3)] == [False, False, True]


def test_a_confirmed_alert_is_on_since_its_first_read_and_a_failed_read_resets_the_wait() -> None:
    """The raised alert's since_sample is the read where its condition first held; a read in between where it did
    not hold starts the wait again. A monitor saved while an alert waits keeps the wait."""
    rng = np.random.default_rng(4)
    monitor = _monitor(Policy())
    assert not _read(monitor, 20, rng) and not _read(monitor, 10, rng)  # pending, then dropped (10 of 200: no shift)
    assert not _read(monitor, 20, rng)  # pending again, from sample 600
    restored = Monitor.loads(monitor.dumps())
    assert json.loads(restored.dumps())["body"]["alert_pending"] == [[PRIOR_SHIFT, f"sliding_{N}", "class_mix", 600,
                                                                     0.0, 1]]  # first held at 600, at one read
    assert not _read(restored, 20, rng) and _read(restored, 20, rng)  # two turnovers after sample 600
    assert [(a.kind, a.since_sample) for a in restored.report().alerts] == [(PRIOR_SHIFT, 600)]


def test_strong_evidence_and_a_new_class_are_raised_at_once() -> None:
    """p < α² needs no second read (40 of 200 against 5 %: p ≈ 1e-13 by scipy); nor does a class the reference
    lacks."""
    rng = np.random.default_rng(5)
    assert _p_and_ratio(40)[0] < 1e-10
    assert _read(_monitor(Policy()), 40, rng)
    monitor = _monitor(Policy(), [Sliding(N)])
    monitor.update_many(["a"] * 180 + ["b"] * 10 + ["c"] * 10, ["a"] * 200)
    assert any(a.kind == CLASS_SET_CHANGE and a.subject == "+c" for a in monitor.report().alerts)


def test_a_timed_window_confirms_after_its_span_in_seconds() -> None:
    """A timed window of 60 s: reads 30 s and 60 s after the first, its condition still holding, do not confirm
    (the default asks for two spans); one 120 s after it does."""
    monitor = Monitor([Timed(60, buckets=6)], reference={"a": 1 - PI, "b": PI}, policy=Policy(),
                      detector=DetectorSettings(enabled=False))

    def read(t: float, minority: int, n: int) -> bool:
        batch = ["b"] * minority + ["a"] * (n - minority)
        monitor.update_many(batch, batch, t=[t] * n)
        return bool(monitor.report().alerting(PRIOR_SHIFT))

    # the recount: 20 of 200, then 21 of 210 in the window, both strict (p < 0.01) and neither strong (p > 1e-4)
    assert all(1e-4 < _p_and_ratio(k, n)[0] < 0.01 for k, n in ((20, 200), (21, 210)))
    assert not read(0.0, 20, 200) and not read(30.0, 1, 10) and not read(60.0, 20, 200) and read(120.0, 20, 200)


def test_a_lost_class_whose_label_holds_a_comma_is_still_raised() -> None:
    """A class-set-change subject joins labels with commas; a label holding one cannot be looked up again, so its
    loss is not raised at once — but it is raised after confirmation, and nothing fails on the way."""
    monitor = Monitor([Sliding(50)], reference={"a,b": 0.5, "c": 0.45, "d": 0.05},
                      detector=DetectorSettings(enabled=False))
    kinds = []
    for _ in range(3):
        monitor.update_many(["c"] * 50, ["c"] * 50)
        kinds.append({(a.kind, a.subject) for a in monitor.report().alerts})
    assert [(CLASS_SET_CHANGE, "-a,b") in k for k in kinds] == [False, False, True]


def test_reads_farther_apart_than_a_turnover_still_confirm_on_three_reads() -> None:
    """A timed window of 30 s read every 60 s (each read on fresh samples): the second read already comes two
    turnovers after the first, but the default confirmation (two turnovers) asks for three reads where the
    condition held — three disjoint looks, as closer reads get. A pending entry of an older state file (no reads
    count) loads as one read."""
    assert all(1e-6 < _p_and_ratio(k, n)[0] < 0.01 for k, n in ((20, 200),))  # strict, not strong (scipy)
    monitor = Monitor([Timed(30, buckets=3)], reference={"a": 1 - PI, "b": PI},
                      detector=DetectorSettings(enabled=False))

    def read(at: Monitor, t: float) -> bool:
        batch = ["b"] * 20 + ["a"] * 180
        at.update_many(batch, batch, t=[t] * 200)
        return bool(at.report().alerting(PRIOR_SHIFT))

    assert [read(monitor, t) for t in (0.0, 60.0)] == [False, False]
    body = json.loads(monitor.dumps())
    assert body["body"]["alert_pending"] == [[PRIOR_SHIFT, "timed_30s", "class_mix", 200, 0.0, 2]]  # since read 1
    assert read(monitor, 120.0)
    body["body"]["alert_pending"][0] = body["body"]["alert_pending"][0][:5]  # as an older version wrote it
    body["sha256"] = _digest(body["body"])
    older = Monitor.loads(json.dumps(body))
    assert [read(older, t) for t in (120.0, 180.0)] == [False, True]  # one read known: two more needed
