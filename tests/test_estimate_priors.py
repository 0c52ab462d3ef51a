"""The label-free class-mix estimate: exact cases, closed forms, laws, and simulations with a known truth."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

from streammon.metrics import estimate_priors, prior_baseline
from streammon.metrics.simplex import simplex_least_squares
from tests.strategies import confusion_matrices

Z = stats.norm.ppf(0.975)


def _rates(n: np.ndarray) -> np.ndarray:
    """C[i, j] = P(ŷ = i | y = j) from counts with rows true, columns predicted."""
    return (n / n.sum(axis=1, keepdims=True)).T


def _draw(rng: np.random.Generator, c: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Predicted counts of ``sizes[j]`` samples of each true class j through the channel ``c``."""
    return sum(rng.multinomial(int(s), c[:, j]) for j, s in enumerate(sizes))


def test_permutation_channel_reads_the_mix_through_the_permutation() -> None:
    """A model that always predicts σ(y) gives the window's mix exactly: π_j = q_σ(j), and the test accepts."""
    sigma = [2, 0, 3, 1]
    n = np.zeros((4, 4))
    n[np.arange(4), sigma] = [40, 70, 10, 25]
    predicted = np.array([13, 0, 250, 37])
    e = estimate_priors(n, predicted)
    assert e.priors == pytest.approx(predicted[sigma] / predicted.sum(), abs=1e-12)
    assert e.p_value == 1.0


def test_identity_channel_reads_the_predicted_mix() -> None:
    """A perfect model's estimate is the predicted mix; its interval for each class contains it."""
    e = estimate_priors(np.diag([30, 50, 20]), [100, 300, 600])
    assert e.priors == pytest.approx([0.1, 0.3, 0.6], abs=1e-12)
    assert np.all(e.lower <= e.priors) and np.all(e.priors <= e.upper)


def test_interior_estimate_is_the_inverse_of_c() -> None:
    """When Ĉ⁻¹q̂ lies in the simplex it is the estimate (the joint maximum-likelihood solution), also from a
    baseline prepared once."""
    n = np.array([[80, 15, 5], [10, 70, 20], [5, 25, 70]])
    q = np.array([300, 420, 280])
    expected = np.linalg.solve(_rates(n), q / q.sum())
    assert np.all(expected > 0)
    e = estimate_priors(n, q)
    assert e.priors == pytest.approx(expected, abs=1e-9)
    assert e.p_value == 1.0 and e.df == 0
    assert estimate_priors(prior_baseline(n), q).priors == pytest.approx(expected, abs=1e-9)  # precomputed once


@pytest.mark.parametrize("rate", [0.05, 0.3, 0.45, 0.75, 0.95])
def test_binary_estimate_is_the_clipped_closed_form(rate: float) -> None:
    """At K = 2 the estimate is (q − FPR)/(TPR − FPR) clipped to [0, 1] (Forman's adjusted count)."""
    n = np.array([[180, 20], [30, 70]])  # FPR 0.1, TPR 0.7
    window = 2000
    e = estimate_priors(n, [window * (1 - rate), window * rate])
    assert e.priors[1] == pytest.approx(min(1.0, max(0.0, (rate - 0.1) / 0.6)), abs=1e-9)


def test_binary_interval_is_the_scalar_delta_method() -> None:
    """At K = 2 the interval is π̃ ± z·se with se² = [q̃(1−q̃)/n + Σ_j π_j² c̃_j(1−c̃_j)/n_j] / (TPR − FPR)²."""
    n = np.array([[180, 20], [30, 70]])
    counts = np.array([1300, 700])
    e = estimate_priors(n, counts)
    fpr, tpr, q = 20 / 200, 70 / 100, 700 / 2000
    pi1 = (q - fpr) / (tpr - fpr)
    a = max(0.5, Z**2 / 2)  # the documented smoothing at K = 2
    f_s, t_s = (20 + a) / (200 + 2 * a), (70 + a) / (100 + 2 * a)
    q_s = (1 - pi1) * f_s + pi1 * t_s
    var = (q_s * (1 - q_s) / 2000 + (1 - pi1) ** 2 * f_s * (1 - f_s) / 200 + pi1**2 * t_s * (1 - t_s) / 100)
    half = Z * math.sqrt(var) / (tpr - fpr)
    assert (e.lower[1], e.upper[1]) == pytest.approx((pi1 - half, pi1 + half), rel=1e-9)


@pytest.mark.parametrize(("rate", "side"), [(0.02, "fpr"), (0.9, "tpr")])
def test_binary_p_value_is_the_one_sided_z_test(rate: float, side: str) -> None:
    """Outside [FPR, TPR] the p-value is the one-sided normal tail of the distance to the nearer end."""
    n = np.array([[180, 20], [30, 70]])
    window = 1000
    e = estimate_priors(n, [window * (1 - rate), window * rate])
    a = Z**2 / 2
    end, n_end, count = (20 / 200, 200, 20) if side == "fpr" else (70 / 100, 100, 70)
    smooth = (count + a) / (n_end + 2 * a)
    z = abs(rate - end) / math.sqrt(smooth * (1 - smooth) * (1 / window + 1 / n_end))
    assert e.p_value == pytest.approx(stats.norm.sf(z), rel=1e-9)
    assert e.df == 1


def test_simplex_solver_matches_scipy() -> None:
    """The active-set solver reaches scipy's SLSQP optimum (or better) on random problems."""
    rng = np.random.default_rng(3)
    for _ in range(100):
        k = int(rng.integers(2, 9))
        a = rng.normal(size=(k, k))
        h, g = a.T @ a, a.T @ (3 * rng.normal(size=k))
        pi, active = simplex_least_squares(h, g)
        ref = optimize.minimize(lambda p, h=h, g=g: p @ h @ p - 2 * g @ p, np.full(k, 1 / k), method="SLSQP",
                                bounds=[(0, 1)] * k, constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1}],
                                options={"ftol": 1e-14, "maxiter": 500})
        assert pi @ h @ pi - 2 * g @ pi <= ref.fun + 1e-7 * (1 + abs(ref.fun))
        assert np.all(pi[active] == 0) and np.all(pi[~active] > 0)


def test_boundary_estimate_is_the_euclidean_projection_quapy_acc_uses() -> None:
    """Outside the simplex the estimate is argmin ‖q̂ − Ĉπ‖² over the simplex (BBSE / QuaPy ACC), found here by
    scipy's SLSQP from the rates written out — not the noise-weighted projection the test uses."""
    rng = np.random.default_rng(11)
    outside = 0
    for _ in range(60):
        k = int(rng.integers(3, 7))
        n = rng.integers(0, 40, size=(k, k)) + np.diag(rng.integers(20, 200, size=k))
        c = _rates(n)
        predicted = rng.multinomial(2_000, rng.dirichlet(np.full(k, 0.2))).astype(float)
        q = predicted / predicted.sum()
        ref = optimize.minimize(lambda p, c=c, q=q: float(np.sum((c @ p - q) ** 2)), np.full(k, 1 / k),
                                method="SLSQP", bounds=[(0, 1)] * k,
                                constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1}],
                                options={"ftol": 1e-15, "maxiter": 1000})
        got = estimate_priors(n, predicted).priors
        outside += bool(np.linalg.solve(c, q).min() < 0)
        assert float(np.sum((c @ got - q) ** 2)) <= ref.fun + 1e-12
        np.testing.assert_allclose(got, ref.x, atol=1e-5)
    assert outside >= 20  # the boundary case is exercised


def _kkt_violation(h: np.ndarray, g: np.ndarray, pi: np.ndarray) -> float:
    """How far ``pi`` is from the KKT conditions of min πᵀHπ − 2gᵀπ on the simplex, relative to the scale of H·π:
    multipliers μ = Hπ − g + λ (λ from Σ π_j μ_j = 0) must be ≥ 0, and 0 where π_j > 0."""
    grad = h @ pi - g
    mu = grad - pi @ grad
    scale = np.abs(h).max() + np.abs(g).max()
    return float(max(-mu.min(), np.abs(mu[pi > 1e-9]).max(initial=0.0)) / scale)


def test_simplex_solver_is_optimal_on_nearly_singular_problems() -> None:
    """Low-rank and repeated-column problems (singular H, the solver's ridge at work): the answer satisfies the
    KKT conditions and is no worse than scipy's NNLS with the sum constraint as a heavy extra row."""
    rng = np.random.default_rng(11)
    for _ in range(300):
        k = int(rng.integers(2, 8))
        a = rng.normal(size=(k, int(rng.integers(1, k + 1))))
        a = a @ rng.normal(size=(a.shape[1], k))
        a[:, rng.integers(k)] = a[:, rng.integers(k)]  # often a repeated column
        b = a @ rng.dirichlet(np.full(k, 0.3)) + rng.normal(size=k) * 10.0 ** rng.integers(-6, 1)
        h, g = a.T @ a, a.T @ b
        pi, active = simplex_least_squares(h, g)
        assert _kkt_violation(h, g, pi) < 1e-7
        heavy = 1e4 * (1 + np.abs(a).max())
        ref = optimize.nnls(np.vstack([a, np.full(k, heavy)]), np.concatenate([b, [heavy]]), maxiter=2000)[0]
        ref /= ref.sum()
        assert np.sum((a @ pi - b) ** 2) <= np.sum((a @ ref - b) ** 2) + 1e-9 * (1 + np.abs(a).max() ** 2)
        assert np.all(pi[active] == 0)


@settings(max_examples=60, deadline=None)
@given(confusion_matrices(k_min=2, k_max=6), st.data())
def test_estimate_lies_on_the_simplex(n: np.ndarray, data: st.DataObject) -> None:
    """Whatever the counts, the estimate is a distribution and each interval holds it inside [0, 1]."""
    k = n.shape[0]
    predicted = data.draw(st.lists(st.integers(0, 500), min_size=k, max_size=k).filter(lambda v: sum(v) > 0))
    e = estimate_priors(n, predicted)
    assert np.all(e.priors >= 0) and e.priors.sum() == pytest.approx(1.0, abs=1e-9)
    assert np.all(e.lower >= 0) and np.all(e.upper <= 1)
    assert np.all(e.lower <= e.priors + 1e-12) and np.all(e.priors <= e.upper + 1e-12)
    assert 0 <= e.p_value <= 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 80), min_size=2, max_size=7), st.data())
def test_identity_channel_equals_the_predicted_mix(sizes: list[int], data: st.DataObject) -> None:
    """With C = identity the estimate equals the predicted mix, whatever the validation sizes."""
    k = len(sizes)
    predicted = np.array(data.draw(st.lists(st.integers(0, 400), min_size=k, max_size=k).filter(sum)))
    e = estimate_priors(np.diag(sizes), predicted)
    assert e.priors == pytest.approx(predicted / predicted.sum(), abs=1e-9)


@settings(max_examples=50, deadline=None)
@given(confusion_matrices(k_min=2, k_max=6), st.data())
def test_relabelling_classes_permutes_the_answer(n: np.ndarray, data: st.DataObject) -> None:
    """Renaming the classes (rows, columns and window counts alike) permutes the estimate and keeps the p-value."""
    k = n.shape[0]
    predicted = np.array(data.draw(st.lists(st.integers(0, 500), min_size=k, max_size=k).filter(sum)))
    perm = np.array(data.draw(st.permutations(range(k))))
    _assert_relabelling_permutes(n, predicted, perm)


def _assert_relabelling_permutes(n: np.ndarray, predicted: np.ndarray, perm: np.ndarray) -> None:
    """The fitted mix C·π and the p-value are unique, so they permute; π itself only when C is invertible."""
    e = estimate_priors(n, predicted)
    f = estimate_priors(n[np.ix_(perm, perm)], predicted[perm])
    rates = _rates(n.astype(float))
    assert (_rates(n[np.ix_(perm, perm)].astype(float)) @ f.priors) == pytest.approx((rates @ e.priors)[perm], abs=1e-6)
    assert f.p_value == pytest.approx(e.p_value, abs=1e-6)
    assert f.df == e.df
    if np.linalg.cond(rates) < 1e6:  # π is identified
        assert f.priors == pytest.approx(e.priors[perm], abs=1e-6)


def test_relabelling_a_singular_channel_keeps_the_p_value() -> None:
    """Regression (found by Hypothesis): C of rank 3 with four identical columns. The old test counted π's zeros
    as degrees of freedom, which gave df = 0 and p = 1 although the predicted mix lies off {C·π} (T = 6.3);
    the face the residual exposes is 2-dimensional in the 5-dimensional plane, so df = 3 whatever the order."""
    n = np.array([[0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 1], [1, 1, 1, 1, 1, 1],
                  [1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]])
    predicted = np.array([154, 0, 0, 331, 36, 428])
    _assert_relabelling_permutes(n, predicted, np.array([0, 3, 5, 2, 1, 4]))
    e = estimate_priors(n, predicted)
    assert e.df == 3 and e.statistic == pytest.approx(6.3186, abs=1e-3)
    assert e.p_value == pytest.approx(stats.chi2.sf(e.statistic, 3), rel=1e-9)


@pytest.mark.parametrize(("n", "predicted", "df"), [
    ([[1, 1, 2], [0, 2, 2], [2, 2, 2]], [0, 174, 0], 1),  # a tie: the residual exposes the edge {1, 2}
    ([[3, 3, 0, 0], [1, 3, 2, 0], [2, 2, 2, 1], [2, 3, 3, 3]], [293, 0, 0, 0], 2),
])
def test_ties_give_the_same_degrees_of_freedom_in_every_order(n: list[list[int]], predicted: list[int],
                                                                df: int) -> None:
    """Symmetric counts make a multiplier exactly 0; π then held 1e-16 in one order and 0 in another, and the
    number of zeros (the old degrees of freedom) with it. Every order of the classes now agrees."""
    m, q = np.array(n), np.array(predicted)
    for perm in itertools.permutations(range(len(q))):
        _assert_relabelling_permutes(m, q, np.array(perm))
    assert estimate_priors(m, q).df == df


def test_a_class_never_predicted_gives_wide_intervals_and_a_reason() -> None:
    """If the model (almost) never predicts class 2, the classes it confuses get wide intervals and a reason."""
    n = np.array([[90, 10, 0], [10, 89, 1], [30, 70, 0]])
    e = estimate_priors(n, [400, 600, 0])
    assert "ill-conditioned" in e.reason and "class 2" in e.reason
    assert e.upper[2] - e.lower[2] > 0.5
    singular = estimate_priors([[90, 10, 0], [10, 90, 0], [90, 10, 0]], [500, 500, 0])
    assert singular.lower.tolist() == [0, 0, 0] and singular.upper.tolist() == [1, 1, 1]


def test_undefined_cases_say_why() -> None:
    """An empty window or a class without validation samples gives NaN priors and a reason, never a guess."""
    empty = estimate_priors([[5, 1], [1, 5]], [0, 0])
    assert np.isnan(empty.priors).all() and "no predictions" in empty.reason
    unseen = estimate_priors([[5, 1, 0], [1, 5, 0], [0, 0, 0]], [3, 3, 3])
    assert np.isnan(unseen.priors).all() and "class 2 has no validation samples" in unseen.reason
    with pytest.raises(ValueError, match="3 finite non-negative counts"):
        estimate_priors(np.eye(3), [1, 2])


def _channel(k: int, accuracy: float, rng: np.random.Generator) -> np.ndarray:
    """A K×K channel whose columns put ``accuracy`` on the diagonal and the rest at random."""
    c = np.zeros((k, k))
    for j in range(k):
        c[:, j] = np.insert(rng.dirichlet(np.full(k - 1, 0.5)) * (1 - accuracy), j, accuracy)
    return c


@pytest.mark.parametrize("k", [2, 3, 6])
def test_intervals_cover_and_test_is_calibrated_under_pure_prior_shift(k: int) -> None:
    """Under pure prior shift with finite validation, 95 % intervals cover the true mix in ≥ 93 % of trials
    and the test raises at most its 5 % level (+ simulation error); the estimate beats counting."""
    rng = np.random.default_rng(k)
    c = _channel(k, 0.7, rng)
    hits, alarms, err_est, err_count, trials = [], 0, 0.0, 0.0, 300
    for t in range(trials):
        sizes = rng.multinomial(80 * k, rng.dirichlet(np.full(k, 5.0))) + 5
        validation = np.array([rng.multinomial(s, c[:, j]) for j, s in enumerate(sizes)])
        pi = rng.dirichlet(np.full(k, 0.1 if t % 2 else 1.0))
        window = int(rng.choice([500, 2000, 10_000]))
        truth = rng.multinomial(window, pi)
        e = estimate_priors(validation, _draw(rng, c, truth))
        hits.extend((e.lower <= pi) & (pi <= e.upper))
        alarms += e.p_value < 0.05
        err_est += np.abs(e.priors - truth / window).mean()
        err_count += np.abs(e.predicted_mix - truth / window).mean()
    assert np.mean(hits) >= 0.93
    assert alarms / trials <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / trials)
    assert err_est <= 0.75 * err_count


def test_test_detects_a_model_change_no_mix_explains() -> None:
    """When the model starts predicting class 2 for every sample of classes 0 and 1, no mix explains the
    predicted counts (each class is predicted ≥ 10 % of the time at any mix), and the test rejects."""
    rng = np.random.default_rng(7)
    c = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
    changed = c.copy()
    changed[:, :2] = [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    rejected = 0
    for _ in range(100):
        validation = np.array([rng.multinomial(300, c[:, j]) for j in range(3)])
        truth = rng.multinomial(2000, [0.3, 0.3, 0.4])
        rejected += estimate_priors(validation, _draw(rng, changed, truth)).p_value < 0.05
    assert rejected >= 95
