"""The label-free estimate's edges, written out: refusals, the undefined estimate field by field, the baseline's
precomputed parts, the ill-conditioning reason, and the digamma/trigamma behind the intervals against scipy.

Written to kill mutants of ``streammon/metrics/label_shift.py`` (``bash .ci/mutation``: the metrics area).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from streammon.metrics import estimate_priors, prior_baseline
from streammon.metrics.intervals import _digamma_trigamma
from streammon.metrics.label_shift import METHOD


@pytest.mark.parametrize("alpha", [0.0, 1.0, 1.5, -0.1])
def test_alpha_outside_the_open_unit_interval_is_refused(alpha: float) -> None:
    with pytest.raises(ValueError, match=rf"alpha must be in \(0, 1\), got {alpha!r}"):
        estimate_priors([[9, 1], [2, 8]], [5, 5], alpha=alpha)


@pytest.mark.parametrize("predicted", [[5, -1], [5, math.nan], [5, math.inf], [1, 2, 3], [[5, 5]]])
def test_predicted_counts_must_be_k_finite_non_negative_numbers(predicted: list[float]) -> None:
    with pytest.raises(ValueError, match=r"predicted must be 2 finite non-negative counts, got"):
        estimate_priors([[9, 1], [2, 8]], predicted)


def test_an_empty_window_gives_the_undefined_estimate_field_by_field() -> None:
    e = estimate_priors([[9, 1, 0], [2, 8, 0], [0, 1, 9]], [0, 0, 0])
    assert e.priors.shape == e.lower.shape == e.upper.shape == e.predicted_mix.shape == (3,)
    assert np.isnan(e.priors).all() and np.isnan(e.predicted_mix).all()
    assert e.lower.tolist() == [0.0, 0.0, 0.0] and e.upper.tolist() == [1.0, 1.0, 1.0]
    assert math.isnan(e.p_value) and math.isnan(e.statistic) and e.df == 0
    assert e.method == METHOD and e.reason == "the window holds no predictions"
    assert not e.priors.flags.writeable and not e.lower.flags.writeable and not e.upper.flags.writeable


def test_a_class_without_validation_samples_keeps_the_predicted_mix_and_says_why() -> None:
    e = estimate_priors([[10, 0], [0, 0]], [3, 1])
    assert np.isnan(e.priors).all() and e.predicted_mix.tolist() == [0.75, 0.25]
    assert e.reason == "class 1 has no validation samples: its row of C is unknown" and e.method == METHOD
    two = prior_baseline([[0, 0, 0], [0, 5, 0], [0, 0, 0]])
    assert two.reason == "class 0, 2 has no validation samples: its row of C is unknown"
    assert two.condition == math.inf and two.inverse is None


def test_a_defined_estimate_names_its_method() -> None:
    assert estimate_priors([[9, 1], [2, 8]], [6, 4]).method == METHOD


def test_the_baseline_keeps_class_counts_condition_and_inverse() -> None:
    counts = np.array([[90, 10, 0], [20, 70, 10], [5, 5, 40]])
    b = prior_baseline(counts)
    rates = (counts / counts.sum(axis=1, keepdims=True)).T
    assert b.class_counts.tolist() == [100, 100, 50]
    assert b.condition == pytest.approx(np.linalg.cond(rates), rel=1e-12)
    np.testing.assert_allclose(b.inverse, np.linalg.inv(rates), rtol=1e-12)
    # smoothed rates (N + a) / (n_j + K·a) with a = max(½, z²/(2(K − 1))) = z²/4 at K = 3
    a = 1.959963984540054**2 / 4
    np.testing.assert_allclose(b.smoothed, ((counts + a) / (counts.sum(axis=1, keepdims=True) + 3 * a)).T)
    for j in range(3):  # each validation column a multinomial of its n_j samples
        c = b.smoothed[:, j]
        np.testing.assert_allclose(b.column_noise[j], (np.diag(c) - np.outer(c, c)) / counts[j].sum())


def test_an_ill_conditioned_channel_names_the_classes_it_cannot_tell_apart() -> None:
    """Classes 0 and 1 predicted alike (the null direction of C weighs them most: the classes of at least 0.3 of its
    largest weight are named); class 2 almost never predicted (its row of C averages 0.02/3 < 0.1/3): the reason
    says both, with the condition number."""
    counts = np.array([[50, 49, 1], [49, 50, 1], [50, 48, 2]])
    rates = (counts / counts.sum(axis=1, keepdims=True)).T
    b = prior_baseline(counts)
    condition = np.linalg.cond(rates)
    assert condition > 100
    null = np.abs(np.linalg.svd(rates)[2][-1])  # the mix direction C nearly maps to 0: the classes it mixes up
    involved = ", ".join(str(j) for j in np.flatnonzero(null >= 0.3 * null.max()))
    assert involved.startswith("0, 1")
    assert b.reason == (f"C is ill-conditioned (condition number {condition:.3g}): predictions barely tell classes "
                        f"{involved} apart; the model almost never predicts class 2; their intervals are wide")
    clear = prior_baseline([[50, 49, 1], [49, 50, 1], [10, 10, 80]])  # class 2 well predicted
    assert clear.reason.startswith("C is ill-conditioned") and "almost never" not in clear.reason


def test_a_well_conditioned_channel_has_no_reason() -> None:
    b = prior_baseline([[90, 10], [20, 80]])
    assert b.reason == "" and b.condition == pytest.approx(np.linalg.cond(np.array([[0.9, 0.2], [0.1, 0.8]])))


def test_digamma_and_trigamma_agree_with_scipy() -> None:
    x = np.concatenate([np.linspace(0.5, 3, 26), np.geomspace(3, 1e6, 40)])
    psi, tri = _digamma_trigamma(x)
    np.testing.assert_allclose(psi, special.digamma(x), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(tri, special.polygamma(1, x), rtol=1e-11, atol=1e-13)


def test_ties_are_broken_towards_the_uniform_mix() -> None:
    """Two identical columns of A (classes the model confuses completely) leave the split between them free: the
    solver's ridge returns the even split of the optimal total; a flat objective returns the uniform mix."""
    from streammon.metrics.simplex import simplex_least_squares

    a = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    b = np.array([0.6, 0.4])
    pi, active = simplex_least_squares(a.T @ a, a.T @ b)
    np.testing.assert_allclose(pi, [0.3, 0.3, 0.4], atol=1e-6)
    assert not active.any()
    flat, _ = simplex_least_squares(np.ones((4, 4)), np.zeros(4))
    np.testing.assert_allclose(flat, [0.25] * 4, atol=1e-6)
    corner = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # the optimum on an edge, still split evenly
    pi, active = simplex_least_squares(corner.T @ corner, corner.T @ np.array([1.2, -0.2]))
    np.testing.assert_allclose(pi, [0.5, 0.5, 0.0], atol=1e-6)
    assert active.tolist() == [False, False, True]


def test_evaluate_all_defaults_to_class_1_as_positive_and_takes_prepared_math() -> None:
    """The default positive class is 1 (recall of class 1 = 6/10 here, of class 0 = 8/10), and metrics coded once
    are read as they are (the report scores the catalog from its ``Setting``'s)."""
    import numpy as np

    from streammon.metrics import Confusion
    from streammon.metrics.window_math import code_metrics, evaluate_all, score_stack

    c = Confusion.of([[8, 2], [4, 6]])
    assert evaluate_all(c, ["recall", "precision"]) == {"recall": 0.6, "precision": 0.75}
    scored = score_stack(np.array([[[8.0, 2.0], [4.0, 6.0]]]), code_metrics(["recall", "acsa"]))
    assert scored.values.tolist() == [[0.6], [0.7]]
    assert scored.recalls.tolist() == [[0.8, 0.6]] and scored.precisions.tolist() == [[8 / 12, 0.75]]
