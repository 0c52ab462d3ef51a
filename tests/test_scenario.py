"""The core promise: a fixed classifier under a moving class mix flags the mix-sensitive metrics only."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as skm

from streammon import Monitor, Sliding

TPR, TNR = 0.8, 0.9
REFERENCE = {"neg": 9_000, "pos": 1_000}  # IR 9
FLAGGED = ("precision", "f1", "accuracy", "mcc")
STEADY = ("gmean", "balanced_accuracy", "acsa", "mprecision")


def _window(rng: np.random.Generator, rrt: float, size: int) -> tuple[np.ndarray, np.ndarray]:
    """`size` samples at RRT `rrt` (negatives per positive) from the fixed classifier."""
    positives = round(size / (1 + rrt))
    truth = np.array(["pos"] * positives + ["neg"] * (size - positives))
    hit = rng.random(size) < np.where(truth == "pos", TPR, TNR)
    preds = np.where(hit, truth, np.where(truth == "pos", "neg", "pos"))
    return truth, preds


@pytest.mark.parametrize("rrt", [9.0, 4.0, 2.0, 1.0])
def test_fixed_classifier_under_prior_shift(rrt: float) -> None:
    """As RRT moves from 9 (the reference) to 1, precision/F1/accuracy/MCC are Type-1-flagged with distortion
    f − f_π (f_π from scikit-learn with reference-mix sample weights); G-mean, balanced accuracy, ACSA and
    mPrecision are never flagged and have zero distortion."""
    rng = np.random.default_rng(int(rrt * 10))
    monitor = Monitor([Sliding(20_000)], reference=REFERENCE)
    truth, preds = _window(rng, rrt, 20_000)
    monitor.update_many(truth, preds)
    w = monitor.report().windows["sliding_20000"]
    assert w.rrt == pytest.approx(rrt, rel=1e-3)

    # Independent f_π: weight each sample by π_class / window prior_class, then let scikit-learn count.
    window_prior = {c: np.mean(truth == c) for c in ("neg", "pos")}
    weights = np.array([REFERENCE[c] / 10_000 / window_prior[c] for c in truth])
    at_reference = {
        "precision": skm.precision_score(truth, preds, pos_label="pos", sample_weight=weights),
        "f1": skm.f1_score(truth, preds, pos_label="pos", sample_weight=weights),
        "accuracy": skm.accuracy_score(truth, preds, sample_weight=weights),
        "mcc": skm.matthews_corrcoef(truth, preds, sample_weight=weights),
    }
    as_read = {
        "precision": skm.precision_score(truth, preds, pos_label="pos"),
        "f1": skm.f1_score(truth, preds, pos_label="pos"),
        "accuracy": skm.accuracy_score(truth, preds),
        "mcc": skm.matthews_corrcoef(truth, preds),
    }
    for name in FLAGGED:
        assert w.scores[name] == pytest.approx(as_read[name])
        assert w.corrected[name] == pytest.approx(at_reference[name])
        distortion = as_read[name] - at_reference[name]
        assert w.distortion[name] == pytest.approx(distortion, abs=1e-9)
        if rrt != 9.0:  # the mix differs significantly: flagged exactly when the distortion is material
            assert (name in w.flagged("type1")) == (abs(distortion) > 0.01), name
        if rrt == 1.0:
            assert name in w.flagged("type1"), name
    if rrt == 9.0:
        assert w.flagged("type1") == ()  # the window is at the reference mix
    for name in STEADY:
        assert name not in w.flagged()
        assert w.distortion[name] == 0.0


def test_small_window_at_reference_mix_does_not_cry_wolf() -> None:
    """A 300-sample window drawn at the reference mix is not flagged, though its mix is off by chance."""
    rng = np.random.default_rng(3)
    flagged = 0
    for _ in range(100):
        monitor = Monitor([Sliding(300)], reference=REFERENCE)
        truth = np.where(rng.random(300) < 0.1, "pos", "neg")
        hit = rng.random(300) < np.where(truth == "pos", TPR, TNR)
        monitor.update_many(truth, np.where(hit, truth, np.where(truth == "pos", "neg", "pos")))
        flagged += bool(monitor.report().windows["sliding_300"].flagged("type1"))
    assert flagged <= 5  # the shift test runs at alpha = 0.01
