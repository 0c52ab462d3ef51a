"""SQUAREM's EM (``metrics.em_squarem``) reaches plain EM's fixed point: against a plain EM loop written here, run
far past its own stopping rule, on overlapping classes, a share near 0, and weighted rows; as near the maximum
likelihood as plain EM's own stop, in no more steps."""

from __future__ import annotations

import numpy as np
import pytest

from streammon.metrics.em_squarem import fixed_point


def plain_em(ratio: np.ndarray, w: np.ndarray, pi: np.ndarray,
             steps: int = 100_000) -> tuple[np.ndarray, np.ndarray, int]:
    """Saerens et al.'s EM to 1e-14; where it stopped at the rule of 1e-10, and the steps that took."""
    first, stopped = 0, pi
    for it in range(1, steps + 1):
        moved = ratio * pi
        moved /= moved.sum(axis=1, keepdims=True)
        new = (w @ moved) / w.sum()
        gap = np.abs(new - pi).max()
        if not first and gap < 1e-10:
            first, stopped = it, new
        pi = new
        if gap < 1e-14:
            break
    return pi, stopped, first


def case(k: int, mix: np.ndarray, spread: float, seed: int, weighted: bool) -> tuple[np.ndarray, np.ndarray]:
    """Posteriors at a uniform source mix of Gaussian classes (the exact Bayes posteriors) over the source."""
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(k, 3)) * spread
    y = rng.choice(k, 1500, p=mix)
    x = means[y] + rng.normal(size=(1500, 3))
    logits = -0.5 * ((x[:, None, :] - means[None]) ** 2).sum(axis=2)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    w = rng.integers(1, 5, 1500).astype(np.float64) if weighted else np.ones(1500)
    return p * k, w


@pytest.mark.parametrize(("k", "spread", "tiny", "weighted"), [
    (2, 1.0, False, False), (3, 0.6, False, True), (5, 0.8, True, False), (10, 1.2, False, True),
    (10, 0.7, True, True)])
def test_squarem_reaches_plain_em_fixed_point(k: int, spread: float, tiny: bool, weighted: bool) -> None:
    mix = np.r_[0.002, np.ones(k - 1)] if tiny else np.linspace(1, 3, k)
    mix = mix / mix.sum()
    ratio, w = case(k, mix, spread, seed=k, weighted=weighted)
    start = np.full(k, 1 / k)
    fast, steps, done = fixed_point(ratio, w, start.copy(), 1e-10, 10_000)
    exact, stopped, plain_steps = plain_em(ratio, w, start.copy())
    assert done and abs(fast.sum() - 1) < 1e-12 and (fast >= 0).all()
    # as near the fixed point as plain EM's own stop (1e-11 to 1.5e-7 off here, a share at the boundary the most)
    assert np.abs(fast - exact).max() <= 2 * np.abs(stopped - exact).max() + 1e-10

    def loglik(p: np.ndarray) -> float:
        return float(w @ np.log(ratio @ p))

    # as close to the maximum as plain EM's stop, up to what the stopping rule leaves (a share at the boundary:
    # ~1e-8 of it left, either way)
    assert loglik(fast) >= loglik(stopped) - 1e-8 * abs(loglik(stopped))
    assert steps <= plain_steps


def test_a_start_at_the_fixed_point_stops_at_once() -> None:
    ratio, w = case(3, np.full(3, 1 / 3), 1.0, seed=1, weighted=False)
    exact, _, _ = plain_em(ratio, w, np.full(3, 1 / 3))
    fast, steps, done = fixed_point(ratio, w, exact.copy(), 1e-10, 10_000)
    assert done and steps == 1 and np.abs(fast - exact).max() < 1e-10


def test_not_converged_within_the_budget_says_so() -> None:
    ratio, w = case(5, np.r_[0.002, np.ones(4)] / 4.002, 0.5, seed=2, weighted=False)
    _, steps, done = fixed_point(ratio, w, np.full(5, 0.2), 1e-14, 4)
    assert not done and steps == 4
