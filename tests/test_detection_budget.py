"""False degradation alarms budgeted in time: each class's run length from its measured rate
(``streammon.detection.rates``), checked against the formula ``arl_c = interval · λ_c · W`` with the rates
recounted from the generated stream, against a Poisson count of simulated false alarms, and through save/load."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from streammon import Cumulative, Monitor, state
from streammon.detection.baseline import DAY, DEFAULT_INTERVAL, DetectorSettings
from streammon.detection.rates import ARL_CAP, ARL_FLOOR, HORIZON, RETUNE_FACTOR

BASELINE = {"legit": {"legit": 9_000_000, "fraud": 1_000_000}, "fraud": {"fraud": 9_000_000, "legit": 1_000_000}}


def _stream(n: int, share: float, recall: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    true = np.where(rng.random(n) < share, "fraud", "legit")
    wrong = rng.random(n) >= recall
    pred = np.where(wrong, np.where(true == "fraud", "legit", "fraud"), true)
    return true, pred


def test_each_class_gets_the_interval_times_its_rate_times_the_watched_classes() -> None:
    """A steady stream with times: each class's run length is ``interval · λ_c · W`` with ``λ_c`` recounted from the
    stream (samples of the class / seconds), its implied interval ``interval · W``; the exported gauges agree."""
    interval = 10 * DAY
    monitor = Monitor([Cumulative()], baseline=BASELINE, detector=DetectorSettings(false_alarm_interval=interval))
    n, spacing = 400_000, 0.25  # 4 samples/s
    true, pred = _stream(n, 0.1, 0.9, seed=1)
    times = np.arange(n) * spacing
    for start in range(0, n, 50_000):
        monitor.update_many(true[start:start + 50_000], pred[start:start + 50_000], t=times[start:start + 50_000])
    detector = monitor.report().detector
    elapsed = times[-1] - times[0]
    for label in ("legit", "fraud"):
        rate = float((true == label).sum()) / elapsed  # (the decay weighs a steady stream's batches alike)
        assert detector[label].rate == pytest.approx(rate, rel=0.02)
        assert detector[label].arl == pytest.approx(interval * rate * 2, rel=RETUNE_FACTOR - 1)
        assert detector[label].interval == pytest.approx(interval * 2, rel=RETUNE_FACTOR - 1)
    model = 1 / sum(1 / b.interval for b in detector.values())
    assert model == pytest.approx(interval, rel=RETUNE_FACTOR - 1)
    as_json = json.loads(json.dumps(monitor.report().to_dict(), allow_nan=False))["detector"]
    assert as_json["fraud"]["arl"] == detector["fraud"].arl


def test_before_a_rate_is_known_the_cap_and_tiny_rates_the_floor() -> None:
    """No time has passed: the cap (the most conservative run length); a class with a tiny rate: the floor."""
    still = Monitor([Cumulative()], baseline=BASELINE, clock=lambda: 5.0)
    still.update_many(*_stream(10_000, 0.1, 0.9, seed=2))
    assert [b.arl for b in still.report().detector.values()] == [ARL_CAP, ARL_CAP]
    slow = Monitor([Cumulative()], baseline=BASELINE)
    true, pred = _stream(20_000, 0.01, 0.9, seed=3)
    slow.update_many(true, pred, t=np.arange(20_000) * 100.0)  # 0.01 samples/s; fraud 10⁻⁴/s
    detector = slow.report().detector
    assert detector["fraud"].arl == ARL_FLOOR  # 30 days · 10⁻⁴/s · 2 = 518 samples: floored
    assert detector["legit"].arl == pytest.approx(DEFAULT_INTERVAL * 0.0099 * 2, rel=0.2)


def test_a_rate_that_moves_is_measured_again_and_the_run_length_follows() -> None:
    """Four times the traffic for 6 horizons: the run length follows the new rate (within the re-derivation factor);
    the expert ``arl=`` ignores rates."""
    def run(settings: DetectorSettings) -> Monitor:
        monitor = Monitor([Cumulative()], baseline=BASELINE, detector=settings)
        t0 = 0.0
        for rate, seconds, seed in ((0.5, 6 * HORIZON, 4), (2.0, 6 * HORIZON, 5)):
            n = int(rate * seconds)
            true, pred = _stream(n, 0.2, 0.9, seed)
            times = t0 + np.arange(1, n + 1) / rate
            for start in range(0, n, 100_000):
                monitor.update_many(true[start:start + 100_000], pred[start:start + 100_000],
                                    t=times[start:start + 100_000])
            t0 = times[-1]
        return monitor

    detector = run(DetectorSettings()).report().detector
    for label, share in (("legit", 0.8), ("fraud", 0.2)):
        expected = DEFAULT_INTERVAL * 2.0 * share * 2
        assert expected / RETUNE_FACTOR / 1.02 <= detector[label].arl <= expected * RETUNE_FACTOR * 1.02
    fixed = run(DetectorSettings(arl=1e5)).report().detector
    assert {b.arl for b in fixed.values()} == {1e5}


def test_bad_settings_are_refused_with_their_name_and_range() -> None:
    """``false_alarm_interval`` takes seconds in [1, 100 years]; ``arl`` None or a finite number > 1."""
    for bad in (0, -1.0, 0.5, math.nan, math.inf, "30d", True, None, 1e12):
        with pytest.raises(ValueError, match=r"DetectorSettings\.false_alarm_interval must be a number of seconds"):
            DetectorSettings(false_alarm_interval=bad)  # type: ignore[arg-type]
    for bad in (1.0, math.inf, math.nan, "1e6", False):
        with pytest.raises(ValueError, match=r"DetectorSettings\.arl must be None .* or a finite number > 1"):
            DetectorSettings(arl=bad)  # type: ignore[arg-type]
    assert DetectorSettings().arl is None and DetectorSettings().false_alarm_interval == 30 * 86400


def test_rates_and_run_lengths_survive_save_and_load(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Saved mid-stream and loaded, fed the rest: the same rates, run lengths, thresholds and alarms as never
    stopping; a file written before the time budget (no interval, no rates; arl fixed) still loads, as fixed."""
    true, pred = _stream(600_000, 0.1, 0.9, seed=6)
    times = np.arange(600_000) * 0.5
    settings = DetectorSettings(false_alarm_interval=2 * DAY)
    whole = Monitor([Cumulative()], baseline=BASELINE, detector=settings)
    part = Monitor([Cumulative()], baseline=BASELINE, detector=settings)
    for start in range(0, 600_000, 100_000):
        whole.update_many(true[start:start + 100_000], pred[start:start + 100_000], t=times[start:start + 100_000])
        if start < 300_000:
            part.update_many(true[start:start + 100_000], pred[start:start + 100_000], t=times[start:start + 100_000])
    part.save(tmp_path / "m.json")
    loaded = Monitor.load(tmp_path / "m.json")
    assert loaded.report().detector == part.report().detector
    for start in range(300_000, 600_000, 100_000):
        loaded.update_many(true[start:start + 100_000], pred[start:start + 100_000], t=times[start:start + 100_000])
    assert loaded.tally.watch.state() == whole.tally.watch.state()
    assert loaded.report().detector == whole.report().detector
    body = json.loads(part.dumps())["body"]
    body["detector"].pop("false_alarm_interval")
    body["detector"]["arl"] = 1e6
    body["watch"].pop("budget")
    restored = Monitor.loads(state.dumps(body), clock=lambda: 0.0)  # (written as an older version wrote it)
    assert restored.tally.watch.settings == DetectorSettings(arl=1e6)
    assert {b.arl for b in restored.report().detector.values()} == {1e6}


def test_false_alarms_of_a_stationary_stream_come_at_the_budgeted_rate() -> None:
    """Recall constant at its exact baseline, 1,000 samples/s, a 25-second budget (so that many false alarms
    happen): the false alarms counted while each class was watched are Poisson with the mean the formula gives,
    ``Σ_c (class samples while watched) / (interval · λ_c · W)`` (recounted from the stream, λ_c from the
    generator); a quick recovery keeps the incidents short."""
    interval, rate, share = 25.0, 1000.0, 0.5
    settings = DetectorSettings(false_alarm_interval=interval, recovery_arl=2.0)
    monitor = Monitor([Cumulative()], baseline=BASELINE, detector=settings)
    n = 4_000_000
    true, pred = _stream(n, share, 0.9, seed=7)
    times = np.arange(n) / rate
    for start in range(0, n, 200_000):
        monitor.update_many(true[start:start + 200_000], pred[start:start + 200_000], t=times[start:start + 200_000])
    watch = monitor.tally.watch
    alarms = len(watch.closed) + len(watch.open)
    assert len(watch.closed) < watch.closed.maxlen  # (every closed incident is still listed)
    codes = {label: i for i, label in enumerate(monitor.labels)}
    expected = 0.0
    for label, fraction in (("legit", 1 - share), ("fraud", share)):
        cls = codes[label]
        mine = np.cumsum(true == label)  # class samples up to each stream index
        away = sum(int(mine[min(cleared, n - 1)] - mine[incident.since]) for c, incident, cleared in watch.closed
                   if c == cls)
        away += sum(int(mine[-1] - mine[i.since]) for c, i in watch.open.items() if c == cls)
        expected += (int(mine[-1]) - away) / (interval * rate * fraction * 2)
    assert expected > 80
    p = 2 * min(stats.poisson.cdf(alarms, expected), stats.poisson.sf(alarms - 1, expected))
    assert p >= 0.01, (alarms, expected)


def test_under_the_time_budget_a_final_learned_baseline_stays_one_standard_error_low() -> None:
    """A learned baseline that is final (refine_until reached) is tuned 1 s.e. below its Jeffreys mean under the time
    budget, and at its Jeffreys mean under a fixed arl (the budget's long run lengths punish an overestimate)."""
    truth = ["legit"] * 150 + ["fraud"] * 50
    preds = ["legit"] * 80 + ["fraud"] * 20 + ["legit"] * 50 + ["fraud"] * 50
    mean = 80.5 / 101
    for arl, expected in ((None, mean - 1.0 * math.sqrt(mean * (1 - mean) / 101)), (1e6, mean)):
        monitor = Monitor([Cumulative()], reference={"legit": 9, "fraud": 1},
                          detector=DetectorSettings(arl=arl, baseline_samples=100, refine_until=100))
        monitor.update_many(truth, preds)
        assert monitor.report().baseline == {"legit": pytest.approx(expected)}


def test_a_learned_baseline_resumes_its_refinement_once_an_incident_clears() -> None:
    """Under the time budget, a class whose recall fell (alarm) and came back (cleared) refines its learned baseline
    again from the counts it had, the incident's samples left out; under a fixed arl it stays frozen."""
    rng = np.random.default_rng(8)
    recall = np.r_[np.full(700, 0.9), np.full(1500, 0.4), np.full(40_000, 0.9)]
    pred = (rng.random(len(recall)) >= recall).astype(np.int64)  # class 0 only: 1 = wrong
    for arl, resumes in ((None, True), (1e6, False)):
        monitor = Monitor([Cumulative()], classes=[0, 1], warmup=1,
                          detector=DetectorSettings(arl=arl, baseline_samples=500, recovery_arl=100.0))
        monitor.update_many(np.zeros(len(pred), np.int64), pred, t=np.arange(len(pred)) * 1.0)
        watch = monitor.tally.watch
        assert len(watch.closed) == 1 and not watch.open  # one incident, cleared
        _, _, cleared = watch.closed[0]
        total = watch.state()["classes"]["0"]["baseline"][1]
        assert (total > 1000) == resumes, (arl, total)
        if resumes:  # (refined from the 500 learned before the alarm and the samples after the clear)
            assert total <= 500 + len(pred) - cleared
