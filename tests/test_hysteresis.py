"""Hysteresis: every alert kind turns on at one level and off only at a looser one, so one episode is one alert."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from streammon import DetectorSettings, Monitor, Sliding
from streammon.findings.alerts import holds, window_conditions
from streammon.findings.distortion import Policy
from streammon.findings.label_view import LabelView, window_label_stats
from streammon.findings.reference import Reference
from streammon.findings.report import CLASS_SET_CHANGE, INCOMPETENT, LABEL_COVERAGE_LOW, PRIOR_SHIFT
from streammon.findings.shift import PriorShift
from streammon.state import _digest


def _window(truth: list[str], pred: list[str], reference: dict[str, int]):  # type: ignore[no-untyped-def]
    monitor = Monitor([Sliding(len(truth))], reference=reference, detector=DetectorSettings(enabled=False))
    monitor.update_many(truth, pred)
    return monitor.report().windows[f"sliding_{len(truth)}"]


def test_prior_shift_turns_on_at_alpha_and_min_ratio_and_holds_at_the_clear_levels() -> None:
    """p between shift_alpha and shift_clear_alpha (0.01, 0.5), or a ratio between shift_clear_ratio and
    shift_min_ratio (1.25, 1.5): no alert for a window not alerting, the alert kept for one that is; beyond the
    clear levels it goes off."""
    policy = Policy()
    ref = Reference.of({"a": 99, "b": 1})
    w = _window(["a"] * 100, ["a"] * 100, {"a": 99, "b": 1})
    key = (PRIOR_SHIFT, w.name, "class_mix")
    cases = [(0.05, 3.0, False, True), (0.001, 1.3, False, True), (0.001, 3.0, True, True),
             (0.6, 3.0, False, False), (0.001, 1.2, False, False)]
    for p_value, ratio, turns_on, stays_on in cases:
        shift = PriorShift(0.1, 0.1, 1.0, 1, p_value, p_value < policy.shift_alpha and ratio >= policy.shift_min_ratio,
                           ratio)
        shifted = dataclasses.replace(w, prior_shift=shift)
        fresh = [c for c in window_conditions(shifted, ref, policy=policy) if c[0] == PRIOR_SHIFT]
        held = [c for c in window_conditions(shifted, ref, policy=policy, active={key}) if c[0] == PRIOR_SHIFT]
        assert (bool(fresh), bool(held)) == (turns_on, stays_on), (p_value, ratio)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_window_near_the_edge_raises_one_or_two_alerts_not_many(seed: int) -> None:
    """A sliding window of 2,000 samples read every 100 samples, its 1 % class at 2 % for 40,000 samples (p
    hovering about 0.01 at times): one prior-shift episode in the shift with the defaults (level hysteresis and
    the hold of three window turnovers, and the confirmation), at most two with the levels alone; without hysteresis
    (clear levels = on levels, no hold, no confirmation) the alert flaps, three times as many at least."""
    rng = np.random.default_rng(seed)
    stream = np.concatenate([rng.random(6_000) < 0.01, rng.random(40_000) < 0.02])
    labels = np.where(stream, "b", "a")

    def episodes(policy: Policy) -> int:
        monitor = Monitor([Sliding(2_000)], reference={"a": 99, "b": 1}, policy=policy,
                          detector=DetectorSettings(enabled=False))
        count, on = 0, False
        for start in range(0, len(labels), 100):
            monitor.update_many(labels[start:start + 100], labels[start:start + 100])
            now = bool(monitor.report().alerting(PRIOR_SHIFT))
            count += now and not on and start >= 6_000
            on = now
        return count

    levels_only = episodes(Policy(alert_hold=0, alert_confirm=0))
    held = episodes(Policy())
    flapping = episodes(Policy(shift_clear_alpha=0.01, shift_clear_ratio=1.5, alert_hold=0, alert_confirm=0))
    assert held <= 1 and levels_only <= 2 and flapping >= 3 * max(levels_only, 1), (held, levels_only, flapping)


def test_class_set_change_holds_a_lost_class_until_chance_explains_its_absence_at_clear_alpha() -> None:
    """A 5 % class absent from 60 samples (0.95⁶⁰ = 0.046): not lost for a fresh window (> 0.01), still lost for a
    window whose alert names it (< shift_clear_alpha 0.5)."""
    ref = Reference.of({"a": 90, "b": 5, "c": 5})
    w = _window(["c"] + ["a"] * 59, ["c"] + ["a"] * 59, {"a": 90, "b": 5, "c": 5})
    assert 0.01 < 0.95**60 < 0.1
    assert [c for c in window_conditions(w, ref) if c[0] == CLASS_SET_CHANGE] == []
    held = [c for c in window_conditions(w, ref, active={(CLASS_SET_CHANGE, w.name, "-b")})
            if c[0] == CLASS_SET_CHANGE]
    assert [c[2] for c in held] == ["-b"]


def test_incompetence_holds_while_the_score_stays_below_one_over_k() -> None:
    """An interval reaching above 1/K does not raise the alert; once on it holds while the score is below 1/K."""
    truth, pred = ["a"] * 10 + ["b"] * 10, ["a"] * 10 + ["a"] * 7 + ["b"] * 3  # recall of b: 0.3 < 1/2
    w = _window(truth, pred, {"a": 1, "b": 1})
    assert w.scores["min_recall"] < 0.5 < w.intervals["min_recall"][1]
    key = (INCOMPETENT, w.name, "min_recall")
    assert [c for c in window_conditions(w, None) if c[0] == INCOMPETENT] == []
    assert [c[2] for c in window_conditions(w, None, active={key}) if c[0] == INCOMPETENT] == ["min_recall"]


def test_label_coverage_turns_on_below_half_and_clears_at_three_quarters_of_the_lifetime_coverage() -> None:
    """Lifetime coverage 0.8; aged coverage 0.5 (between 0.4 and 0.6): no alert for a fresh window, kept for one
    alerting; 0.35 raises it; 0.65 clears it."""
    life = np.array([[10, 80, 10, 0], [0, 0, 0, 0]])
    for labelled, turns_on, stays_on in ((100, False, True), (70, True, True), (130, False, False)):
        view = LabelView(predictions=(life, life), events=(np.zeros(256, np.int64),) * 2,
                         aged=(np.array([[200 - labelled, labelled, 0, 0], [0, 0, 0, 0]]), None), repeated=0,
                         typical_latency=10.0)
        got = []
        for active in (set(), {(LABEL_COVERAGE_LOW, "timed", "labels")}):
            _, conditions = window_label_stats(view, ("a", "b"), None, None, Policy(), names=("timed", "lifetime"),
                                               active=active)
            got.append(any(c[0] == LABEL_COVERAGE_LOW for c in conditions))
        assert got == [turns_on, stays_on], labelled


def test_holds_is_the_rule_every_kind_shares() -> None:
    """holds(on, turns_on, stays_on): an alert off needs the strict test, one on only the loose one."""
    assert [holds(on, a, b) for on in (False, True) for a, b in ((True, True), (False, True), (False, False))] == [
        True, False, False, True, True, False]


def test_the_clear_levels_must_be_looser_than_the_on_levels() -> None:
    """A clear alpha below shift_alpha or a clear ratio above shift_min_ratio is refused, naming the bound."""
    with pytest.raises(ValueError, match=r"shift_clear_ratio must be a number in \[1, shift_min_ratio\]"):
        Policy(shift_clear_ratio=2.0)
    with pytest.raises(ValueError, match="shift_min_ratio must be a number in"):
        Policy(shift_min_ratio=math.nan)


def test_a_loaded_monitor_keeps_its_alert_memory_every_kind_included() -> None:
    """Monitor.save keeps the alerts on (not_prior_shift too) and load restores them, so a restored monitor holds
    its alerts at the clear levels like the one saved."""
    monitor = Monitor([Sliding(100)], reference={"a": 99, "b": 1}, detector=DetectorSettings(enabled=False))
    monitor.update_many(["a"] * 90 + ["b"] * 10, ["a"] * 100)
    assert monitor.report().alerting(PRIOR_SHIFT)
    body = json.loads(monitor.dumps())
    body["body"]["alert_since"].append(["not_prior_shift", "sliding_100", "predictions", 5, 1.0])
    body["sha256"] = _digest(body["body"])
    restored = Monitor.loads(json.dumps(body))
    kinds = {k for k, *_ in json.loads(restored.dumps())["body"]["alert_since"]}
    assert kinds == {PRIOR_SHIFT, INCOMPETENT, "not_prior_shift"}
