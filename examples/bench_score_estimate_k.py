"""The label-free estimate with scores at K > 2 inside the monitor: what a report costs and what it buys.

For K = 3, 5 and 10 (Gaussian classes in 6-D, a logistic model fitted at a uniform mix; per trial a fresh
validation set of 3,000 at the uniform mix and a window of 2,000 predictions at a shifted mix, a Sliding(2,000)
window — within the prediction side's exact scores, ``EXACT_RANKING_LIMIT``), side by side in one run:

1. **Time of a report** whose window took 100 new predictions since the last one, and of one whose window did
   not change, with ``streammon.Validation`` as the baseline (EM, 50 bootstrap replicas) and with its confusion
   counts (the hard-label estimate).
2. **Trials**: the mix's mean absolute error over the classes and its 95 % intervals' coverage (per class), with
   scores (EM) and from the decisions alone; the ``not_prior_shift`` rate under pure label shift (false alarms,
   level ``shift_alpha`` = 0.01) and when class 0's inputs move halfway to class 1's (a recall drop, printed).

Run: ``python examples/bench_score_estimate_k.py`` (100 trials per K: about 3 minutes here, 2 shared cores) or
``--quick`` (20 trials, under a minute).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.linear_model import LogisticRegression

import streammon
from streammon import Monitor, Sliding

N = 2_000
FEATURES = 6


class World:
    """K Gaussian classes and a logistic model fitted at the uniform mix."""

    def __init__(self, k: int, rng: np.random.Generator) -> None:
        self.k = k
        self.means = rng.normal(size=(k, FEATURES)) * 1.2
        self.names = np.array([f"c{i}" for i in range(k)])
        x, y = self.draw(rng, 5_000, np.full(k, 1 / k))
        self.model = LogisticRegression(max_iter=2_000).fit(x, y)
        mix = np.linspace(1.0, 3.0, k)
        self.shifted = mix / mix.sum()

    def draw(self, rng: np.random.Generator, n: int, mix: np.ndarray, move: float = 0.0) -> tuple[np.ndarray, ...]:
        y = rng.choice(self.k, n, p=mix)
        centre = self.means[y].copy()
        centre[y == 0] += move * (self.means[1] - self.means[0])  # class 0's inputs moved towards class 1's
        return centre + rng.normal(size=(n, FEATURES)), y

    def scored(self, rng: np.random.Generator, n: int, mix: np.ndarray,
               move: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x, y = self.draw(rng, n, mix, move)
        p = self.model.predict_proba(x)
        return y, self.names[p.argmax(axis=1)], p

    def validation(self, rng: np.random.Generator) -> streammon.Validation:
        y, pred, p = self.scored(rng, 3_000, np.full(self.k, 1 / self.k))
        return streammon.Validation(self.names[y], pred, p, classes=list(self.names))

    def monitor(self, baseline: object) -> Monitor:
        return Monitor([Sliding(N)], baseline=baseline, classes=list(self.names), detector=None)


def report_times(world: World, rng: np.random.Generator, reports: int) -> None:
    validation = world.validation(rng)
    for name, base in (("Validation (EM)", validation), ("confusion counts (hard-label)", validation.confusion)):
        m = world.monitor(base)
        _, pred, p = world.scored(rng, N, world.shifted)
        m.predict_many(list(range(N)), pred.tolist(), y_score=p)
        m.report()  # compiles and warms every path
        changed, unchanged = [], []
        for r in range(reports):
            _, pred, p = world.scored(rng, 100, world.shifted)
            m.predict_many([f"{r}-{i}" for i in range(100)], pred.tolist(), y_score=p)
            t = time.perf_counter()
            e = m.report().windows[f"sliding_{N}"].estimate
            changed.append(time.perf_counter() - t)
            assert e is not None and (e.method == "em") == (base is validation), e.reason
            t = time.perf_counter()
            m.report()
            unchanged.append(time.perf_counter() - t)
        print(f"  report, {name:<31}{1e3 * np.median(changed):>10.1f} ms changed{1e3 * np.median(unchanged):>9.2f}"
              " ms unchanged")


def trials(world: World, rng: np.random.Generator, count: int) -> None:
    rows: dict[str, list[float]] = {k: [] for k in ("em_err", "em_cov", "hard_err", "hard_cov", "em_fa", "hard_fa",
                                                    "em_power", "hard_power", "drop")}
    for _ in range(count):
        validation = world.validation(rng)
        for move, key in ((0.0, "fa"), (0.5, "power")):
            y, pred, p = world.scored(rng, N, world.shifted, move)
            share = np.bincount(y, minlength=world.k) / N
            if move:
                y0, before, _ = world.scored(rng, N, world.shifted)  # the same window without the move
                rows["drop"].append(float(np.mean(before[y0 == 0] == "c0") - np.mean(pred[y == 0] == "c0")))
            for base, name in ((validation, "em"), (validation.confusion, "hard")):
                m = world.monitor(base)
                m.predict_many(list(range(N)), pred.tolist(), y_score=p)
                report = m.report()
                e = report.windows[f"sliding_{N}"].estimate
                assert e is not None and (e.method == "em") == (name == "em"), e.reason
                rows[f"{name}_{key}"].append(float(bool(report.alerting("not_prior_shift"))))
                if not move:
                    got = np.array([e.priors[c] for c in world.names])
                    low = np.array([e.lower[c] for c in world.names])
                    high = np.array([e.upper[c] for c in world.names])
                    rows[f"{name}_err"].append(float(np.mean(np.abs(got - share))))
                    rows[f"{name}_cov"].append(float(np.mean((low <= share) & (share <= high))))
    mean = {k: float(np.mean(v)) for k, v in rows.items()}
    print(f"  {count} trials{'':<30}{'with scores (EM)':>18}{'decisions only':>16}{'ratio':>8}")
    print(f"  {'mix MAE (pure label shift)':<38}{mean['em_err']:>18.4f}{mean['hard_err']:>16.4f}"
          f"{mean['em_err'] / mean['hard_err']:>8.2f}")
    print(f"  {'95 % interval coverage (per class)':<38}{mean['em_cov']:>18.2f}{mean['hard_cov']:>16.2f}")
    print(f"  {'not_prior_shift, pure label shift':<38}{mean['em_fa']:>18.2f}{mean['hard_fa']:>16.2f}")
    print(f"  {'not_prior_shift, recall drop ' + format(mean['drop'], '.2f'):<38}{mean['em_power']:>18.2f}"
          f"{mean['hard_power']:>16.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 trials and 5 reports per K instead of 100 and 15")
    parser.add_argument("--k", type=int, nargs="*", default=[3, 5, 10], help="the class counts (default 3 5 10)")
    args = parser.parse_args()
    rng = np.random.default_rng(2029)
    started = time.perf_counter()
    for k in args.k:
        world = World(k, rng)
        print(f"K = {k}: validation 3,000 at the uniform mix, windows of {N:,} at {np.round(world.shifted, 3)}")
        report_times(world, rng, 5 if args.quick else 15)
        trials(world, rng, 20 if args.quick else 100)
    print(f"\nrun time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
