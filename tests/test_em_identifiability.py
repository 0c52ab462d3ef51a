"""EM where the scores do not locate the mix: a model whose scores are all alike, or that cannot tell two classes
apart. Checked against the likelihood itself (flat along what is not located, by brute force over a grid of
mixes) and against EM on the classes merged (what is located must read as if the indistinct classes were one)."""

from __future__ import annotations

import numpy as np
import pytest

import streammon
from streammon import Monitor, Sliding
from streammon.metrics.em_priors import NOT_LOCATED, em_priors


def _log_likelihood(posteriors: np.ndarray, source: np.ndarray, mix: np.ndarray) -> float:
    """Saerens et al.'s window log-likelihood up to a constant: Σᵢ log Σₖ mixₖ pᵢₖ / sourceₖ, by its definition."""
    return float(np.sum(np.log((posteriors / source) @ mix)))


def _constant_validation(rng: np.random.Generator) -> tuple[streammon.Validation, float]:
    """A model whose score is 0.3 for every input (a feature pipeline that lost its inputs), on a 20 % class; and
    that class's share of the validation set."""
    y = np.where(rng.random(500) < 0.2, "fraud", "ok")
    return streammon.Validation(y, np.full(500, "ok"), np.full(500, 0.3)), float(np.mean(y == "fraud"))


def test_constant_scores_leave_the_mix_at_the_validation_s_with_the_whole_range() -> None:
    """Every mix explains a window of one repeated score equally well (the likelihood is flat over a grid of
    mixes), so the estimate must not claim one: before, EM drifted on the posteriors' rounding to a 1.5 % share
    with the interval [0.001, 0.029]. Now it stays at the validation's mix, every interval is [0, 1] and
    ``reason`` says why."""
    rng = np.random.default_rng(3)
    validation, fraud = _constant_validation(rng)
    window = np.full(300, 0.3)
    posteriors = validation.posteriors(window)
    source = np.array([fraud, 1 - fraud])  # the validation's mix ("fraud" sorts first)
    grid = [np.array([q, 1 - q]) for q in np.linspace(0.01, 0.99, 99)]
    values = [_log_likelihood(posteriors, source, mix) for mix in grid]
    assert max(values) - min(values) < 1e-3  # flat: no mix is better supported than another
    e = validation.estimate(window)
    assert e.method == "em"
    np.testing.assert_allclose(e.priors, source, atol=1e-12)
    np.testing.assert_array_equal(e.lower, [0.0, 0.0])
    np.testing.assert_array_equal(e.upper, [1.0, 1.0])
    assert NOT_LOCATED in e.reason


def test_constant_scores_inside_the_monitor_raise_no_shift_and_say_why() -> None:
    """Through the monitor: the label-free estimate reads the validation's mix with intervals of the whole range,
    and no prior-shift finding follows from a mix nobody can see."""
    rng = np.random.default_rng(4)
    monitor = Monitor([Sliding(400)], baseline=_constant_validation(rng)[0], classes=["fraud", "ok"], positive="fraud",
                      reference={"fraud": 0.2, "ok": 0.8})
    monitor.predict_many(list(range(400)), np.full(400, "ok"), y_score=np.full(400, 0.3))
    report = monitor.report()
    estimate = report.windows["sliding_400"].estimate
    assert estimate is not None and estimate.method == "em"
    assert estimate.lower["fraud"] == 0.0 and estimate.upper["fraud"] == 1.0
    assert "not located" in estimate.reason
    assert not report.alerting("prior_shift")


@pytest.mark.parametrize("share", [0.1, 0.4, 0.7])
def test_two_indistinct_classes_read_as_one_and_their_split_is_not_claimed(share: float) -> None:
    """K = 3 where the model cannot tell class 1 from class 2 (their columns are always equal): the likelihood is
    flat along moving mass between them, so their split stays at the start's and each of their intervals is the
    whole range, while class 0 — which the scores do locate — reads what EM on the two classes merged reads."""
    rng = np.random.default_rng(int(share * 100))
    n = 2_000
    y = np.where(rng.random(n) < share, 0, rng.integers(1, 3, n))
    z = np.where(y == 0, 1.5, -1.5) + rng.normal(size=n)
    p0 = 1 / (1 + np.exp(-3 * z))  # P(class 0 | z) at 1:1 (the log-likelihood ratio of N(±1.5, 1) is 3z)
    posteriors = np.column_stack([p0, (1 - p0) / 2, (1 - p0) / 2])
    source = np.array([0.5, 0.25, 0.25])
    e = em_priors(posteriors, source)
    merged = em_priors(np.column_stack([p0, 1 - p0]), [0.5, 0.5])
    assert e.priors[0] == pytest.approx(merged.priors[0], abs=1e-6)
    assert e.priors[1] == pytest.approx(e.priors[2], abs=1e-9)  # the start's split: 0.25 against 0.25
    mass = e.priors[1] + e.priors[2]
    for mix in ([e.priors[0], mass, 0.0], [e.priors[0], 0.0, mass]):  # the split's ends explain the window as well
        assert _log_likelihood(posteriors, source, np.array(mix)) == pytest.approx(
            _log_likelihood(posteriors, source, e.priors), abs=1e-6)
    assert e.lower[1] == 0.0 and e.lower[2] == 0.0
    assert e.upper[1] >= mass and e.upper[2] >= mass
    assert e.upper[0] - e.lower[0] < 0.1  # class 0 stays located
    assert e.lower[0] <= y.tolist().count(0) / n <= e.upper[0]
    assert NOT_LOCATED in e.reason


def test_a_located_mix_is_left_alone() -> None:
    """A model that separates the classes: nothing moves off EM's fixed point and the reason stays empty."""
    rng = np.random.default_rng(9)
    y = rng.random(1_000) < 0.3
    p1 = 1 / (1 + np.exp(-4 * (np.where(y, 2.0, -2.0) + rng.normal(size=1_000))))  # calibrated at 1:1
    posteriors = np.column_stack([1 - p1, p1])
    e = em_priors(posteriors, [0.5, 0.5])
    assert e.reason == ""
    adjusted = posteriors * (e.priors / 0.5)
    adjusted /= adjusted.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(adjusted.mean(axis=0), e.priors, atol=1e-8)  # the EM fixed point, by its definition
    assert e.upper[1] - e.lower[1] < 0.1


def test_a_class_held_at_zero_by_the_simplex_is_not_loose() -> None:
    """K = 3, a window of samples the model calls class 0 with near certainty: the likelihood is highest at the
    vertex (by brute force over a grid of the simplex), and flat there between the two absent classes — a
    direction the simplex, not the scores, holds at 0. The estimate is the vertex with no reason, and the absent
    classes' intervals stay narrow rather than spanning the whole range."""
    posteriors = np.tile([0.999, 0.0006, 0.0004], (40, 1))
    source = np.array([0.5, 0.3, 0.2])
    grid = [np.array([a, b, 1 - a - b]) for a in np.linspace(0, 1, 41) for b in np.linspace(0, 1 - a, 41)]
    best = max(grid, key=lambda mix: _log_likelihood(posteriors, source, mix))
    np.testing.assert_allclose(best, [1.0, 0.0, 0.0], atol=1e-12)
    e = em_priors(posteriors, source)
    assert e.priors[0] == pytest.approx(1.0, abs=1e-6)
    assert e.reason == ""
    assert e.upper[1] < 0.2 and e.upper[2] < 0.2
