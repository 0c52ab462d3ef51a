"""The degradation detectors against a plain-Python CUSUM written out from the module's rules, block by block.

Written to kill mutants of ``streammon/detection/`` (``bash .ci/mutation detection``). The oracle below
restates the rules of ``streammon.detection.cusum``'s docstring in loops: blocks of 256 samples aligned to the
stream; a class without a given baseline learns it from its first complete blocks holding ``baseline_samples``
of its samples (Wilson lower bound, from statsmodels); then, per block, ``S = max(0, S + ΣLLR)`` with
``LLR = ln(p1/p0)`` for a right sample and ``ln((1−p1)/(1−p0))`` for a wrong one; at ``S ≥ ln(arl)`` the alarm
switches on and a mirror CUSUM ``T = max(0, T − ΣLLR)`` switches it off at ``T ≥ ln(arl)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from streammon import Cumulative, Monitor
from streammon.counting.counts import ConfusionCounts
from streammon.detection.baseline import DetectorSettings, baseline_counts
from streammon.detection.cusum import ClassDetector, DegradationWatch

BLOCK = 256  # the block length the module documents


def _wilson_low(correct: float, total: float, confidence: float) -> float:
    return float(proportion_confint(correct, total, alpha=1 - confidence, method="wilson")[0])


@dataclass
class _Class:
    """One class in the oracle: learning counts, then its detector's constants and state."""

    learned: list[int] = field(default_factory=lambda: [0, 0])
    baseline: tuple[float, float] | None = None
    p0: float = math.nan
    p1: float = math.nan
    s: float = 0.0
    active: bool = False
    since: int = -1
    since_time: float = math.nan


def _start(c: _Class, correct: float, total: float, settings: DetectorSettings) -> None:
    c.baseline = (correct, total)
    c.p0 = min(max(_wilson_low(correct, total, settings.baseline_confidence), 1e-6), 1 - 1e-6)
    c.p1 = max(c.p0 - settings.drop, 1e-6)


def _oracle(truth: np.ndarray, pred: np.ndarray, times: np.ndarray | None, k: int, *, settings: DetectorSettings,
            given: dict[int, tuple[float, float]]) -> dict[int, _Class]:
    """Every class's state after the complete blocks of the stream, one block and one class at a time."""
    classes = {c: _Class() for c in range(k)}
    for c, (correct, total) in given.items():
        if total > 0:
            _start(classes[c], correct, total, settings)
    h = math.log(settings.arl)
    for b in range(len(truth) // BLOCK):
        end = b * BLOCK + BLOCK - 1
        for cls, c in classes.items():
            total = right = 0
            for i in range(b * BLOCK, end + 1):
                if truth[i] == cls:
                    total += 1
                    right += int(pred[i] == cls)
            if total == 0:
                continue
            if c.baseline is None:  # learning: this block completes the baseline, the detector starts after it
                c.learned[0] += right
                c.learned[1] += total
                if c.learned[1] >= settings.baseline_samples:
                    _start(c, c.learned[0], c.learned[1], settings)
                continue
            if not c.p1 < c.p0:
                continue
            llr = right * math.log(c.p1 / c.p0) + (total - right) * math.log((1 - c.p1) / (1 - c.p0))
            c.s = max(0.0, c.s - llr) if c.active else max(0.0, c.s + llr)
            if c.s >= h:
                c.active, c.s = not c.active, 0.0
                if c.active:
                    c.since = end
                    c.since_time = math.nan if times is None else float(times[end])
    return classes


def _block_counts(truth: np.ndarray, pred: np.ndarray, start: int, stop: int, k: int) -> tuple[np.ndarray, ...]:
    """(right, total) per stream-aligned block touched by samples start..stop-1 and class, by a loop."""
    first, last = start // BLOCK, (stop - 1) // BLOCK
    right = np.zeros((last - first + 1, k), np.int64)
    total = np.zeros((last - first + 1, k), np.int64)
    for i in range(start, stop):
        total[i // BLOCK - first, truth[i]] += 1
        right[i // BLOCK - first, truth[i]] += int(truth[i] == pred[i])
    return right, total


def _stream(seed: int, n: int, k: int, priors: list[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """k classes; recall 0.9, then a drop to 0.35 and a recovery, twice."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(k, n, p=priors)
    recall = np.full(n, 0.9)
    for lo, hi in ((n // 5, 2 * n // 5), (3 * n // 5, 4 * n // 5)):
        recall[lo:hi] = 0.35
    wrong = (truth + rng.integers(1, k, n)) % k
    pred = np.where(rng.random(n) < recall, truth, wrong)
    pred[truth == k - 1] = k - 1  # the last class is always right: it never alarms
    return truth, pred


def _assert_like_oracle(watch: DegradationWatch, expected: dict[int, _Class]) -> None:
    for cls, c in expected.items():
        if c.baseline is None:
            assert cls not in watch.detectors
            assert watch.learning.get(cls, [0, 0]) == c.learned, cls
            continue
        d = watch.detectors[cls]
        assert watch.baseline[cls] == pytest.approx(c.baseline), cls
        assert (d.p0, d.p1) == pytest.approx((c.p0, c.p1), abs=1e-12), cls
        assert (d.active, d.since) == (c.active, c.since), cls
        assert d.since_time == pytest.approx(c.since_time, nan_ok=True), cls
        assert d.statistic == pytest.approx(c.s, abs=1e-7), cls
    assert {cls for cls, c in expected.items() if c.active} == set(watch.active())


@pytest.mark.parametrize("feed_cells", [6, 1 << 15])  # two blocks per vectorised pass, or all in one
@pytest.mark.parametrize("timing", ["array", "scalar", "none"])
@pytest.mark.parametrize("batches", ["irregular", "blocks"])  # random cuts, or cuts on block ends only
@pytest.mark.parametrize("priors", [None, [0.03, 0.5, 0.47]])  # a rare class: its mirror CUSUM grows slowly
def test_watch_fed_batches_is_the_written_out_block_cusum(feed_cells: int, timing: str, batches: str,
                                                          priors: list[float] | None,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of every size (inside a block, across many, ending on a block's end) leave every class where the
    oracle does: learning counts, baseline, p0/p1, alarm, since (sample and time), statistic and the partial
    block; after each batch."""
    monkeypatch.setattr("streammon.detection.cusum.FEED_CELLS", feed_cells)
    k, n = 3, 24_000
    truth, pred = _stream(7, n, k, priors)
    times = np.cumsum(np.random.default_rng(1).uniform(0.5, 1.5, n))
    settings = DetectorSettings(baseline_samples=300, arl=200.0, drop=0.3)
    given = {1: (450.0, 500.0), 0: (1.0, 1.0)}  # one sample is a baseline (a poor one: p0 = its Wilson bound)
    watch = DegradationWatch(settings, {**given, 2: (0.0, 0.0)})  # a zero-total baseline is no baseline
    assert watch.state() == {"position": 0, "pending": [], "learning": {}, "classes": {
        str(c): {"baseline": list(given[c]), "source": "given", "statistic": 0.0, "active": False, "since": -1,
                 "since_time": pytest.approx(math.nan, nan_ok=True)} for c in given}}
    rng = np.random.default_rng(3)
    if batches == "irregular":
        cuts = np.sort(rng.choice(np.arange(1, n), 60, replace=False)).tolist()
    else:
        # first 100 + 100 samples (a batch as long as its offset in its block), then whole blocks
        cuts = [100, 200, *(c for c in (np.cumsum(rng.integers(1, 4, 60)) * BLOCK).tolist() if c < n)]
    bounds = list(zip([0, *cuts], [*cuts, n], strict=True))
    # a block's time is its last sample's; with one time per batch, the time of the batch holding that sample
    batch_time = np.concatenate([np.full(hi - lo, times[hi - 1]) for lo, hi in bounds])
    oracle_times = {"array": times, "scalar": batch_time, "none": None}[timing]
    switches = 0
    for lo, hi in bounds:
        right, total = _block_counts(truth, pred, lo, hi, k)
        given_times = {"array": times[lo:hi], "scalar": float(times[hi - 1]), "none": None}[timing]
        watch.ingest(right, total, hi - lo, given_times)
        assert watch.position == hi
        expected = _oracle(truth[:hi], pred[:hi], oracle_times, k, settings=settings, given=given)
        _assert_like_oracle(watch, expected)
        switches += sum(c.active for c in expected.values())
        partial = range(hi // BLOCK * BLOCK, hi)  # the samples of the unfinished block: [total, right] per class
        assert watch.pending.tolist() == [[sum(int(truth[i] == c) for i in partial),
                                           sum(int(truth[i] == c == pred[i]) for i in partial)] for c in range(k)]
    assert switches > 0


def test_a_restored_watch_continues_as_the_oracle() -> None:
    """state() is plain data; a watch restored from it mid-block and mid-learning goes on exactly as the oracle."""
    k, n, cut = 3, 11_000, 4_000 + 77  # the cut and the end inside the drops (3,000-6,000 and 9,000-12,000)
    truth, pred = _stream(11, 15_000, k)
    truth, pred = truth[:n], pred[:n]
    times = np.arange(n, dtype=float) * 0.5
    settings = DetectorSettings(baseline_samples=2_000, arl=100.0, drop=0.3)
    given = {0: (880.0, 1000.0)}
    first = DegradationWatch(settings, given)
    right, total = _block_counts(truth, pred, 0, cut, k)
    first.ingest(right, total, cut, times[:cut])
    state = first.state()
    assert state["position"] == cut and len(state["pending"]) == k
    assert set(state["learning"]) == {"1", "2"}  # 2,000 samples of a class take longer than 4,077 samples
    assert state["classes"]["0"]["active"] is True  # restored while the alarm is on
    assert state["classes"]["0"]["source"] == "given" and state["classes"]["0"]["baseline"] == [880.0, 1000.0]
    restored = DegradationWatch(settings)
    restored.restore(state)
    right, total = _block_counts(truth, pred, cut, n, k)
    restored.ingest(right, total, n - cut, times[cut:])
    expected = _oracle(truth, pred, times, k, settings=settings, given=given)
    _assert_like_oracle(restored, expected)
    assert expected[0].active  # the round trips below carry an active alarm
    assert {restored.source[c] for c in restored.detectors} == {"given", "learned"}
    again = DegradationWatch(settings)
    again.restore(restored.state())
    _assert_like_oracle(again, expected)  # statistic, active, since and since_time survive a second round


def test_class_detector_constants_clamp_p0_and_floor_p1() -> None:
    """p0 is kept within [1e-6, 1 − 1e-6] and p1 = max(p0 − drop, 1e-6); the LLR steps and threshold follow."""
    top = ClassDetector(p0=1.0, drop=0.2, arl=1e6)
    assert top.p0 == 1 - 1e-6 and top.p1 == pytest.approx(1 - 1e-6 - 0.2, abs=1e-15)
    assert top.down == pytest.approx(math.log((0.2 + 1e-6) / 1e-6))
    low = ClassDetector(p0=0.1, drop=0.2, arl=1e6)
    assert (low.p0, low.p1, low.can_degrade) == (0.1, 1e-6, True)
    assert low.up == pytest.approx(math.log(1e-6 / 0.1)) and low.down == pytest.approx(math.log((1 - 1e-6) / 0.9))
    floor = ClassDetector(p0=0.0, drop=0.2, arl=1e6)
    assert (floor.p0, floor.p1, floor.can_degrade) == (1e-6, 1e-6, False)
    fresh = ClassDetector(p0=0.8, drop=0.2, arl=50.0)
    assert fresh.h == pytest.approx(math.log(50.0))
    assert fresh.state() == {"statistic": 0.0, "active": False, "since": -1, "since_time": pytest.approx(math.nan,
                                                                                                      nan_ok=True)}


def test_a_detector_that_cannot_degrade_never_alarms_even_at_a_zero_threshold() -> None:
    """With p1 = p0 (no room to drop) the detector is off: all-wrong blocks leave it inactive, S at 0."""
    d = ClassDetector(p0=1e-7, drop=0.2, arl=1.0)  # h = ln 1 = 0: any step would reach it
    d.feed_blocks(np.array([0, 0, 0]), np.array([5, 5, 5]), np.array([10, 20, 30]))
    assert (d.active, d.statistic, d.since) == (False, 0.0, -1)


def test_empty_blocks_are_skipped_and_the_alarm_time_is_its_own_block_s() -> None:
    """Blocks without samples take no step; since and since_time are those of the block that crossed."""
    d = ClassDetector(p0=0.9, drop=0.4, arl=math.exp(2.0))  # a wrong sample adds ln(0.5/0.1) = 1.609
    right = np.array([0, 0, 0, 0, 0])
    total = np.array([1, 0, 0, 1, 0])
    d.feed_blocks(right, total, np.array([10, 20, 30, 40, 50]), np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert (d.active, d.since, d.since_time, d.statistic) == (True, 40, 4.0, 0.0)
    # the mirror: each right sample takes ln(0.5/0.9) = −0.588 off the degradation evidence, i.e. +0.588 for T
    d.feed_blocks(np.array([3, 0]), np.array([3, 0]), np.array([60, 70]), np.array([6.0, 7.0]))
    assert d.active and d.statistic == pytest.approx(3 * math.log(0.9 / 0.5))
    d.feed_blocks(np.array([1]), np.array([1]), np.array([80]), None)
    assert not d.active and d.statistic == 0.0 and (d.since, d.since_time) == (40, 4.0)  # kept from the alarm
    d.feed_blocks(np.array([0, 0]), np.array([1, 1]), np.array([90, 100]), None)
    assert d.active and d.since == 100 and math.isnan(d.since_time)


def test_detector_settings_defaults_are_the_documented_ones() -> None:
    """drop 0.2, arl 10⁶, 95 % Wilson lower bound, 500 baseline samples, enabled (the README and docstring)."""
    s = DetectorSettings()
    assert (s.drop, s.arl, s.baseline_confidence, s.baseline_samples, s.enabled) == (0.2, 1e6, 0.95, 500, True)
    assert s.in_control_recall(90, 100) == pytest.approx(_wilson_low(90, 100, 0.95), abs=1e-12)
    assert DetectorSettings(baseline_confidence=0.99).in_control_recall(90, 100) == pytest.approx(
        _wilson_low(90, 100, 0.99), abs=1e-12)


def test_baseline_counts_read_each_form_by_row() -> None:
    """(label, diagonal, row sum) per known class from ConfusionCounts, {true: {pred: n}} or a K×K array."""
    assert baseline_counts(None, ["a"]) == []
    counts = ConfusionCounts(["a", "b"], [[7, 3], [1, 9]])
    assert baseline_counts(counts, ["a", "b"]) == [("a", 7, 10), ("b", 9, 10)]
    nested = {"b": {"b": 9, "a": 1}, "a": {"a": 7, "b": 3}}
    assert sorted(baseline_counts(nested, ["a", "b"])) == [("a", 7, 10), ("b", 9, 10)]
    assert baseline_counts(np.array([[7, 3], [1, 9]]), ["a", "b"]) == [("a", 7, 10), ("b", 9, 10)]
    assert baseline_counts([[2, 0], [5, 5]], ["y", "x"]) == [("y", 2, 2), ("x", 5, 10)]


def test_baseline_counts_refuse_other_forms_saying_which() -> None:
    with pytest.raises(TypeError, match=r"^baseline must be ConfusionCounts, \{true: \{pred: count\}\} or a K×K "
                                        r"array, got 'x'$"):
        baseline_counts("x", ["a", "b"])
    with pytest.raises(ValueError, match=r"^a baseline array must be K×K in the order of the known classes "
                                         r"\['a', 'b'\], got shape \(2, 3\)$"):
        baseline_counts([[1, 2, 3], [4, 5, 6]], ["a", "b"])
    with pytest.raises(TypeError, match=r"^baseline row for 'a' must map predicted labels to counts, got \[1, 2\]$"):
        baseline_counts({"a": [1, 2]}, ["a", "b"])


def test_a_monitor_learns_then_alarms_where_the_oracle_does() -> None:
    """End to end through Monitor.update_many (labels registered out of order): the degradation alert's class
    and since_sample are the oracle's."""
    k, n = 3, 22_000
    truth, pred = _stream(5, 30_000, k)
    truth, pred = truth[:n], pred[:n]  # the stream stops inside the second drop
    settings = DetectorSettings(baseline_samples=400, arl=1e3)
    names = ["c2", "c0", "c1"]  # class c is names.index(f"c{c}") in the monitor
    monitor = Monitor([Cumulative()], classes=names, detector=settings)
    for lo in range(0, n, 7_000):
        monitor.update_many([f"c{c}" for c in truth[lo:lo + 7_000]], [f"c{c}" for c in pred[lo:lo + 7_000]])
    expected = _oracle(truth, pred, None, k, settings=settings, given={})
    report = monitor.report()
    assert dict(report.baseline) == pytest.approx({f"c{c}": e.p0 for c, e in expected.items()}, abs=1e-12)
    on = {a.subject: a.since_sample for a in report.alerting("degradation")}
    assert on == {f"c{c}": e.since for c, e in expected.items() if e.active} and on


def _exact_threshold(down: float) -> float:
    """An arl whose ln is exactly ``down`` (one wrong sample then reaches the threshold exactly)."""
    arl = math.exp(down)
    for _ in range(64):
        if math.log(arl) == down:
            return arl
        arl = math.nextafter(arl, math.inf if math.log(arl) < down else -math.inf)
    pytest.skip("no float arl with ln(arl) == down")


def test_a_statistic_exactly_at_the_threshold_rings_the_alarm() -> None:
    """The alarm rings at S ≥ h (the module docstring): one wrong sample whose LLR is exactly ln(arl) rings it, fed
    to a detector or through the watch's vectorised pass."""
    probe = ClassDetector(p0=0.8, drop=0.2, arl=1e6)
    d = ClassDetector(p0=0.8, drop=0.2, arl=_exact_threshold(probe.down))
    assert d.h == d.down
    d.feed_blocks(np.array([0]), np.array([1]), np.array([7]))
    assert d.active and d.since == 7
    settings = DetectorSettings()
    p0 = ClassDetector(p0=settings.in_control_recall(900, 1000), drop=settings.drop, arl=1e6)
    exact = DetectorSettings(arl=_exact_threshold(p0.down))
    watch = DegradationWatch(exact, {0: (900.0, 1000.0)})
    assert watch.detectors[0].h == watch.detectors[0].down
    right = np.zeros((1, 2), np.int64)
    total = np.array([[1, BLOCK - 1]])  # one wrong sample of class 0, the rest class 1 (still learning)
    watch.ingest(right, total, BLOCK)
    assert watch.detectors[0].active and watch.detectors[0].since == BLOCK - 1


def test_feed_passes_the_sample_times_on() -> None:
    """ClassDetector.feed with times: since_time is the time of the sample that rang the alarm."""
    d = ClassDetector(p0=0.9, drop=0.4, arl=math.exp(3.0))  # two wrong samples: 2 · ln 5 = 3.22 ≥ 3
    d.feed(np.array([True, False, False, True]), np.array([0, 1, 2, 3]), np.array([10.0, 11.0, 12.0, 13.0]))
    assert (d.active, d.since, d.since_time) == (True, 2, 12.0)


def test_a_zero_threshold_rings_at_the_first_block_holding_samples() -> None:
    """With arl = 1 (h = 0) any step reaches the threshold; empty blocks take no step, so the alarm is at the
    first block that holds samples of the class."""
    d = ClassDetector(p0=0.8, drop=0.2, arl=1.0)  # every step that is taken switches the alarm (on, off, on, ...)
    d.feed_blocks(np.array([0, 0]), np.array([0, 1]), np.array([10, 20]), np.array([1.0, 2.0]))
    assert (d.active, d.since, d.since_time) == (True, 20, 2.0)


def test_skipped_samples_move_the_stream_position_on() -> None:
    """skip(n) (detection off) advances the position by n: later blocks stay aligned to the stream."""
    watch = DegradationWatch(DetectorSettings())
    watch.skip(100)
    watch.skip(156)
    assert watch.position == 256


def test_after_an_alarm_inside_a_batch_the_next_pass_runs_the_mirror_cusum(monkeypatch: pytest.MonkeyPatch) -> None:
    """One block per vectorised pass: the first block rings the alarm, the second (one right sample) starts the
    mirror CUSUM at T = ln(p0/p1), the evidence of one right sample for p0 over p1 (p0 from statsmodels' Wilson)."""
    monkeypatch.setattr("streammon.detection.cusum.FEED_CELLS", 1)
    settings = DetectorSettings(arl=20.0)
    watch = DegradationWatch(settings, {0: (90.0, 100.0)})
    right = np.array([[0, 0], [1, 0]])
    total = np.array([[BLOCK, 0], [1, BLOCK - 1]])  # block 2: one sample of class 0, the rest of class 1 (learning)
    watch.ingest(right, total, 2 * BLOCK)
    p0 = _wilson_low(90, 100, 0.95)
    d = watch.detectors[0]
    assert d.active and d.since == BLOCK - 1
    assert d.statistic == pytest.approx(math.log(p0 / (p0 - 0.2)), abs=1e-12)
