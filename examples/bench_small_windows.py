"""Small windows do not cry wolf: the prior-shift criterion's false-alarm rate at n = 1 … 50, and its power.

Windows of n samples are drawn from the reference mix itself (no shift) for several mixes — K = 2 with a minority
of 1 %, 5 %, 20 %; K = 10 with one class at that share and the rest spread evenly; K = 10 with a skewed mix — and
each is judged by the criterion (``streammon.findings.shift``: the exact binomial test, Bonferroni over classes,
and the prior ratio), vectorised over the windows. Per cell and size it prints the rate of ``shifted`` beside α,
the binomial error bound of that estimate (3σ = 3·√(α(1−α)/W)), and, for contrast, the rate of Pearson's
chi-square test (the criterion before issue #27) alone and with its JS ≥ 0.01 gate. A subsample goes through a
real, fresh ``Monitor`` (one per window, reference given) to check that the alert it raises is the same
decision. Then the power for a 1 % → 6 % minority shift at n = 100, 1,000 and 10,000.

    python examples/bench_small_windows.py            # 100,000 windows per cell and size: ~15 minutes here
    python examples/bench_small_windows.py --quick    # 10,000 windows, sizes 1, 2, 5, 10, 20, 50: ~15 s
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence

import numpy as np

import streammon
from streammon.findings.distortion import Policy
from streammon.metrics.binomial import prior_shift_tests
from streammon.metrics.mix_shift import mix_shifts

ALPHA = Policy().shift_alpha
MIN_RATIO = Policy().shift_min_ratio
OLD_MIN_JS = 0.01  # the JS gate of the criterion before #27
SKEWED = (0.4, 0.2, 0.12, 0.08, 0.06, 0.05, 0.04, 0.03, 0.015, 0.005)


def mixes() -> dict[str, np.ndarray]:
    """The reference mixes of the cells, by name."""
    out = {}
    for share in (0.01, 0.05, 0.20):
        out[f"K=2 minority {share:.0%}"] = np.array([1 - share, share])
        out[f"K=10 one class {share:.0%}"] = np.array([share] + [(1 - share) / 9] * 9)
    out["K=10 skewed 40%..0.5%"] = np.array(SKEWED)
    return out


def rates(priors: np.ndarray, n: int, windows: int, rng: np.random.Generator) -> tuple[float, float, float]:
    """Rates of: the criterion's ``shifted``, chi-square p < α, chi-square p < α with JS ≥ 0.01 — over ``windows``
    windows of ``n`` samples drawn at ``priors``."""
    counts = rng.multinomial(n, priors, size=windows).astype(np.float64)
    tests = prior_shift_tests(counts, priors)
    shifted = (tests.p_value < ALPHA) & (tests.prior_ratio >= MIN_RATIO)
    old = mix_shifts(counts, np.broadcast_to(priors, counts.shape), np.full(windows, -1, dtype=np.int64))
    chi2 = old.p_value < ALPHA
    return float(shifted.mean()), float(chi2.mean()), float((chi2 & (old.js >= OLD_MIN_JS)).mean())


def monitor_rate(priors: np.ndarray, n: int, windows: int, rng: np.random.Generator,
                 drawn_at: np.ndarray | None = None) -> tuple[float, float]:
    """The rate of prior-shift alerts of fresh monitors (reference ``priors``; one per window of ``n`` samples
    drawn at ``drawn_at``, by default the reference), and the share of windows where the monitor's alert and the
    vectorised ``shifted`` disagree."""
    labels = [f"c{i}" for i in range(len(priors))]
    reference = dict(zip(labels, priors.tolist(), strict=True))
    alerts = disagree = 0
    for _ in range(windows):
        drawn = rng.choice(len(priors), size=n, p=priors if drawn_at is None else drawn_at)
        monitor = streammon.Monitor([streammon.Cumulative()], reference=reference,
                                    detector=streammon.DetectorSettings(enabled=False))
        ys = [labels[i] for i in drawn]
        monitor.update_many(ys, ys)
        on = bool(monitor.report().alerting("prior_shift"))
        counts = np.bincount(drawn, minlength=len(priors))[None]
        tests = prior_shift_tests(counts, priors)
        alerts += on
        disagree += on != bool(tests.p_value[0] < ALPHA and tests.prior_ratio[0] >= MIN_RATIO)
    return alerts / windows, disagree / windows


def power(share_after: float, sizes: Sequence[int], windows: int, rng: np.random.Generator) -> None:
    """The share of windows judged shifted when the 1 % class moved to ``share_after`` (K = 2 and K = 10)."""
    print(f"\npower: a 1 % class at {share_after:.0%} ({windows:,} windows per cell; α = {ALPHA}, "
          f"min ratio {MIN_RATIO})")
    print(f"{'mix':<24}{'n':>8}{'shifted':>10}{'chi2 p<α':>10}{'chi2+JS':>10}")
    for k in (2, 10):
        before = np.array([0.01] + [0.99 / (k - 1)] * (k - 1))
        after = np.array([share_after] + [(1 - share_after) / (k - 1)] * (k - 1))
        for n in sizes:
            counts = rng.multinomial(n, after, size=windows).astype(np.float64)
            tests = prior_shift_tests(counts, before)
            old = mix_shifts(counts, np.broadcast_to(before, counts.shape), np.full(windows, -1, dtype=np.int64))
            shifted = (tests.p_value < ALPHA) & (tests.prior_ratio >= MIN_RATIO)
            chi2 = old.p_value < ALPHA
            print(f"{f'K={k} 1% -> {share_after:.0%}':<24}{n:>8,}{shifted.mean():>10.4f}{chi2.mean():>10.4f}"
                  f"{(chi2 & (old.js >= OLD_MIN_JS)).mean():>10.4f}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 windows, six sizes (~15 s)")
    parser.add_argument("--seed", type=int, default=27)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    windows = 10_000 if args.quick else 100_000
    sizes = (1, 2, 5, 10, 20, 50) if args.quick else tuple(range(1, 51))
    monitored, monitor_sizes = (100, (1, 5, 50)) if args.quick else (1_000, (1, 2, 5, 10, 20, 50))
    bound = 3 * math.sqrt(ALPHA * (1 - ALPHA) / windows)
    started = time.perf_counter()
    print(f"false alarms under no shift: {windows:,} windows per cell and size; α = {ALPHA}, binomial error bound "
          f"3σ = {bound:.4f} (a rate above α + 3σ = {ALPHA + bound:.4f} would break the target)")
    print(f"{'mix':<24}{'n':>4}{'shifted':>10}{'α':>7}{'α+3σ':>8}{'chi2 p<α':>10}{'chi2+JS':>10}  ok")
    worst = 0.0
    for name, priors in mixes().items():
        for n in sizes:
            rate, chi2, gated = rates(priors, n, windows, rng)
            worst = max(worst, rate)
            print(f"{name:<24}{n:>4}{rate:>10.5f}{ALPHA:>7}{ALPHA + bound:>8.4f}{chi2:>10.5f}{gated:>10.5f}  "
                  f"{'yes' if rate <= ALPHA + bound else 'NO'}")
    print(f"largest false-alarm rate of the criterion over every cell and size: {worst:.5f} (α = {ALPHA})")
    print(f"\nthrough fresh Monitors ({monitored:,} windows per cell and size; reference given, detector off)")
    print(f"{'mix':<24}{'n':>4}{'alerts':>10}{'disagree':>10}")
    for name, priors in mixes().items():
        for n in monitor_sizes:
            rate, disagree = monitor_rate(priors, n, monitored, rng)
            print(f"{name:<24}{n:>4}{rate:>10.4f}{disagree:>10.4f}")
    power(0.06, (100, 1_000, 10_000), windows // 10, rng)
    print(f"\n(ran in {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
