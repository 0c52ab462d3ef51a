"""The per-class degradation detector, and the alerts a monitor raises (and does not raise)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from streammon import ConfusionCounts, Cumulative, Monitor, Sliding
from streammon.counting.blocks import BLOCK, block_ids
from streammon.detection.baseline import DetectorSettings
from streammon.detection.cusum import ClassDetector, cusum_path
from streammon.metrics.intervals import wilson

REFERENCE = {"legit": 95, "fraud": 5}


@given(st.lists(st.floats(-5, 5), max_size=60), st.floats(0, 10))
def test_vectorised_cusum_equals_the_recursion(llr: list[float], start: float) -> None:
    """cusum_path is exactly S_t = max(0, S_{t−1} + L_t), computed one step at a time."""
    s, expected = start, []
    for value in llr:
        s = max(0.0, s + value)
        expected.append(s)
    assert cusum_path(np.array(llr, dtype=float), start).tolist() == pytest.approx(expected, abs=1e-9)


@given(st.integers(0, 2000), st.integers(0, 2000))
def test_block_ids_are_positions_divided_by_the_block(offset: int, n: int) -> None:
    """block_ids(offset, n) is (offset + arange(n)) // BLOCK."""
    assert block_ids(offset, n).tolist() == ((offset + np.arange(n)) // BLOCK).tolist()


@given(st.lists(st.booleans(), min_size=1, max_size=300), st.integers(1, 40))
def test_block_statistic_never_exceeds_the_per_sample_cusum(correct: list[bool], block: int) -> None:
    """Aggregating the LLR of a block before the reflection at 0 gives S' ≤ S: alarms are never early."""
    d = ClassDetector(p0=0.8, drop=0.2, arl=1e300)  # no alarm: compare the statistics
    llr = np.where(correct, d.up, d.down)
    exact = cusum_path(llr, 0.0)
    sums = np.add.reduceat(llr, np.arange(0, len(llr), block))
    blocked = cusum_path(sums, 0.0)
    ends = np.minimum(np.arange(block, len(llr) + block, block), len(llr)) - 1
    assert np.all(blocked <= exact[ends] + 1e-9)


def test_in_control_recall_raises_no_alarm() -> None:
    """At its baseline recall a class raises no alarm over 10 × 200 000 of its samples (bound: one per 10⁷)."""
    rng = np.random.default_rng(0)
    for _ in range(10):
        d = ClassDetector(p0=0.8, drop=0.2, arl=1e7)
        d.feed(rng.random(200_000) < 0.8, np.arange(200_000))
        assert not d.active and d.since == -1


def test_a_recall_drop_is_detected_and_clears_when_recall_recovers() -> None:
    """Recall 0.8 → 0.5: alarm within 150 class samples; back at 0.8 the alarm clears."""
    rng = np.random.default_rng(1)
    d = ClassDetector(p0=0.8, drop=0.2, arl=1e7)
    d.feed(rng.random(1000) < 0.8, np.arange(1000))
    d.feed(rng.random(150) < 0.5, np.arange(1000, 1150))
    assert d.active and 1000 <= d.since < 1150
    d.feed(rng.random(5000) < 0.8, np.arange(1150, 6150))
    assert not d.active


def _stream(rng: np.random.Generator, n: int, fraud_share: float, fraud_recall: float) -> tuple[list, list]:
    truth = np.where(rng.random(n) < fraud_share, "fraud", "legit")
    recall = np.where(truth == "fraud", fraud_recall, 0.95)
    preds = np.where(rng.random(n) < recall, truth, np.where(truth == "fraud", "legit", "fraud"))
    return truth.tolist(), preds.tolist()


BASELINE = {"legit": {"legit": 19_000, "fraud": 1_000}, "fraud": {"fraud": 1_600, "legit": 400}}


def test_pure_prior_shift_raises_prior_shift_alerts_but_never_degradation() -> None:
    """A fixed classifier while the fraud share moves 0.5 % → 50 %: prior-shift alerts, no degradation alert."""
    rng = np.random.default_rng(2)
    monitor = Monitor([Sliding(5000)], reference=REFERENCE, baseline=BASELINE)
    kinds = set()
    for share in np.linspace(0.005, 0.5, 20):
        monitor.update_many(*_stream(rng, 10_000, share, 0.8))
        kinds |= {a.kind for a in monitor.report().alerts}
    assert "prior_shift" in kinds and "degradation" not in kinds


def test_update_and_update_many_raise_the_same_degradation_alerts() -> None:
    """Blocks are aligned to the stream, not to calls: per-sample and batch updates alert identically."""
    rng = np.random.default_rng(4)
    truth, preds = _stream(rng, 30_000, 0.05, 0.8)
    later = _stream(rng, 5_000, 0.05, 0.4)
    one = Monitor([Sliding(5000)], reference=REFERENCE, baseline=BASELINE)
    many = Monitor([Sliding(5000)], reference=REFERENCE, baseline=BASELINE)
    for y, p in zip(truth + later[0], preds + later[1], strict=True):
        one.update(y, p)
    for start in range(0, 35_000, 3_333):
        many.update_many((truth + later[0])[start:start + 3_333], (preds + later[1])[start:start + 3_333])
    assert one.report().alerting("degradation") == many.report().alerting("degradation") != ()


def test_real_degradation_raises_a_degradation_alert_soon_after_the_change() -> None:
    """Fraud recall 0.8 → 0.5 at 5 % prevalence: a degradation alert on 'fraud', since within 3 000 samples."""
    rng = np.random.default_rng(3)
    monitor = Monitor([Sliding(5000)], reference=REFERENCE, baseline=BASELINE)
    monitor.update_many(*_stream(rng, 50_000, 0.05, 0.8))
    assert monitor.report().alerting("degradation") == ()
    for y, p in zip(*_stream(rng, 6000, 0.05, 0.5), strict=True):
        monitor.update(y, p)
    alerts = monitor.report().alerting("degradation")
    assert [a.subject for a in alerts] == ["fraud"] and alerts[0].window == "stream"
    assert 50_000 <= alerts[0].since_sample < 53_000
    assert "fell below its baseline" in alerts[0].reason


def test_baseline_is_learned_per_class_when_not_given() -> None:
    """Without baseline=, each class's first complete blocks holding baseline_samples of it set its recall."""
    monitor = Monitor([Cumulative()], reference=REFERENCE, detector=DetectorSettings(baseline_samples=100))
    preds = ["legit"] * 200 + ["fraud"] * 56 + ["fraud"] * 50
    monitor.update_many(["legit"] * 256 + ["fraud"] * 50, preds)
    baseline = monitor.report().baseline
    assert set(baseline) == {"legit"}  # fraud's 50 samples sit in an unfinished block: still learning
    assert baseline["legit"] == pytest.approx(wilson(200, 256)[0])  # the whole first block of 256


def test_given_baseline_accepts_confusion_counts_and_rejects_garbage() -> None:
    """baseline= takes ConfusionCounts or {true: {pred: count}}; anything else is a TypeError."""
    counts = ConfusionCounts(["legit", "fraud"], [[90, 10], [20, 80]])
    report = Monitor([Cumulative()], baseline=counts).report()
    assert report.baseline["fraud"] == pytest.approx(0.7, abs=0.02)  # Wilson lower bound of 80/100
    as_array = Monitor([Cumulative()], reference={"legit": 9, "fraud": 1}, baseline=[[90, 10], [20, 80]])
    assert as_array.report().baseline == report.baseline  # rows and columns in the reference's order
    with pytest.raises(ValueError, match="K×K"):
        Monitor([Cumulative()], reference={"legit": 9, "fraud": 1}, baseline=[[1, 2, 3]] * 3)
    with pytest.raises(TypeError, match="baseline"):
        Monitor([Cumulative()], baseline="validation.csv")  # type: ignore[arg-type]


def test_class_set_change_and_incompetence_alerts() -> None:
    """A class the reference lacks raises class_set_change; a class confidently below 1/K raises incompetent."""
    monitor = Monitor([Sliding(3000)], reference={"a": 1, "b": 1})
    preds = ["a"] * 1000 + ["a"] * 800 + ["b"] * 200 + ["c"] * 300
    monitor.update_many(["a"] * 1000 + ["b"] * 1000 + ["c"] * 300, preds)
    alerts = {(a.kind, a.subject) for a in monitor.report().alerts}
    assert ("class_set_change", "+c") in alerts
    assert ("incompetent", "min_recall") in alerts  # recall of b = 0.2 < 1/3
    assert not any(kind == "degradation" for kind, _ in alerts)


def test_alert_since_is_kept_while_the_alert_stays_on() -> None:
    """since_sample is when the alert turned on, not when it was last seen."""
    monitor = Monitor([Sliding(1000)], reference={"a": 1, "b": 1}, clock=lambda: 100.0)
    monitor.update_many(["a"] * 900 + ["b"] * 100, ["a"] * 900 + ["b"] * 100)
    first = monitor.report().alerting("prior_shift")[0]
    monitor.update_many(["a"] * 50, ["a"] * 50)
    again = monitor.report().alerting("prior_shift")[0]
    assert first.since_sample == again.since_sample == 1000 and not math.isnan(first.since_time)


def test_detection_can_be_turned_off() -> None:
    """DetectorSettings(enabled=False): no baseline, no degradation alert, windows unaffected."""
    rng = np.random.default_rng(5)
    off = Monitor([Sliding(5000)], reference=REFERENCE, baseline=BASELINE, detector=DetectorSettings(enabled=False))
    on = Monitor([Sliding(5000)], reference=REFERENCE, baseline=BASELINE)
    for truth, preds in (_stream(rng, 20_000, 0.05, 0.8), _stream(rng, 6_000, 0.05, 0.3)):
        off.update_many(truth, preds)
        on.update_many(truth, preds)
    assert on.report().alerting("degradation") and not off.report().alerting("degradation")
    assert off.report().windows["sliding_5000"].confusion == on.report().windows["sliding_5000"].confusion


@pytest.mark.parametrize("k", [5, 20])  # the shared per-block confusion path, and the (block, class) path
@pytest.mark.parametrize("feed_cells", [40, 1 << 15])  # many CUSUM passes per batch, or one
@pytest.mark.parametrize("scrambled", [False, True])  # labels registered out of order: counts permuted from codes
def test_monitor_detectors_equal_one_detector_per_class_fed_its_blocks(k: int, feed_cells: int, scrambled: bool,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Each class's alarm state after irregular batches equals a ClassDetector fed that class's (right, total)
    per 256-sample block, recounted directly; through degradations, recoveries and pass boundaries."""
    monkeypatch.setattr("streammon.detection.cusum.FEED_CELLS", feed_cells)
    rng = np.random.default_rng(k)
    n = 120_000
    truth = rng.integers(0, k, n)
    accuracy = np.full(n, 0.9)
    accuracy[30_000:60_000] = 0.3  # every class degrades, then recovers, then degrades again
    accuracy[90_000:] = 0.3
    preds = np.where(rng.random(n) < accuracy, truth, (truth + rng.integers(1, k, n)) % k)
    baseline = np.full((k, k), 10) + np.eye(k, dtype=int) * 900
    classes = rng.permutation(k).tolist() if scrambled else list(range(k))
    monitor = Monitor([Cumulative()], classes=classes, baseline=baseline)
    settings = DetectorSettings()
    p0 = settings.in_control_recall(910, 900 + 10 * k)
    switches = 0
    cuts = np.sort(rng.choice(np.arange(1, n), 8, replace=False))  # long batches: switches inside them
    for lo, hi in zip([0, *cuts], [*cuts, n], strict=True):
        monitor.update_many(truth[lo:hi], preds[lo:hi])
        complete = hi // BLOCK * BLOCK  # the detectors have seen every complete block
        blocks = np.arange(complete) // BLOCK
        for c in range(k):
            mine = truth[:complete] == c
            total = np.bincount(blocks[mine], minlength=complete // BLOCK)
            right = np.bincount(blocks[mine & (preds[:complete] == c)], minlength=complete // BLOCK)
            expected = ClassDetector(p0=p0, drop=settings.drop, arl=settings.arl)
            expected.feed_blocks(right, total, np.arange(complete // BLOCK) * BLOCK + BLOCK - 1)
            got = monitor.tally.watch.detectors[classes.index(c)]
            assert (got.active, got.since) == (expected.active, expected.since), (c, hi)
            assert got.statistic == pytest.approx(expected.statistic, abs=1e-6), (c, hi)
            switches += got.active
    assert switches > 0
