"""The label-free estimate with scores inside the monitor: what a report costs and what it buys.

Two parts, side by side in one run:

1. **Time of a report** of a binary monitor whose window of predictions changed since the last report (a batch of
   100 predictions with scores, then ``report()``), and of one whose window did not change, for three baselines:
   the validation's confusion counts (the hard-label estimate), ``streammon.Validation`` with its intervals'
   default 50 bootstrap replicas, and ``Validation(..., bootstrap=0)`` (delta-method intervals).
2. **Trials** (fresh validation set of 3,000 at 10 % fraud per trial, windows of 2,000 predictions at 30 % fraud):
   the estimate's mean absolute error and 95 % interval coverage, with scores (EM) and from the decisions alone;
   the ``not_prior_shift`` alert rate under pure label shift (false alarms, level ``shift_alpha`` = 0.01) and
   under a recall drop of ~0.2 (the frauds' logits 1.24 lower), with scores and without.

Run: ``python examples/bench_score_estimate_monitor.py`` (100 trials: about 50 s here, 2 shared cores) or
``--quick`` (20 trials, about 10 s).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import streammon
from streammon import Monitor, Sliding

N = 2_000


def draw(rng: np.random.Generator, n: int, share: float, drop: float = 0.0) -> tuple[np.ndarray, ...]:
    """Labels, decisions at 0.5 and fraud scores: logit ±2 plus N(0, 1) noise; ``drop`` lowers the frauds'."""
    y = np.where(rng.random(n) < share, "fraud", "ok")
    z = np.where(y == "fraud", 2.0 - drop, -2.0) + rng.normal(size=n)
    s = 1.0 / (1.0 + np.exp(-z))
    return y, np.where(s > 0.5, "fraud", "ok"), s


def monitor(baseline: object) -> Monitor:
    return Monitor([Sliding(N)], baseline=baseline, classes=["fraud", "ok"], positive="fraud",
                   reference={"fraud": 0.1, "ok": 0.9})


def report_times(rng: np.random.Generator, reports: int) -> None:
    validation = draw(rng, 3_000, 0.1)
    baselines = {"confusion counts (hard-label)": streammon.Validation(*validation).confusion,
                 "Validation, 50 bootstrap replicas": streammon.Validation(*validation),
                 "Validation, bootstrap=0": streammon.Validation(*validation, bootstrap=0)}
    print(f"report time, K = 2, sliding window of {N:,}, median of {reports} reports (ms)")
    print(f"{'baseline':<36}{'window changed':>16}{'unchanged':>12}")
    for name, base in baselines.items():
        m = monitor(base)
        _, pred, score = draw(rng, N, 0.3)
        m.predict_many(list(range(N)), pred, y_score=score)
        m.report()  # compiles and warms every path
        changed, unchanged = [], []
        for r in range(reports):
            _, pred, score = draw(rng, 100, 0.3)
            m.predict_many([f"{r}-{i}" for i in range(100)], pred, y_score=score)
            t = time.perf_counter()
            m.report()
            changed.append(time.perf_counter() - t)
            t = time.perf_counter()
            m.report()
            unchanged.append(time.perf_counter() - t)
        print(f"{name:<36}{1e3 * np.median(changed):>16.1f}{1e3 * np.median(unchanged):>12.2f}")


def trials(rng: np.random.Generator, count: int) -> None:
    rows: dict[str, list[float]] = {k: [] for k in ("em_err", "em_cov", "hard_err", "hard_cov", "em_fa", "hard_fa",
                                                    "em_power", "hard_power", "drop")}
    for _ in range(count):
        validation = streammon.Validation(*draw(rng, 3_000, 0.1))
        for drop, key in ((0.0, "fa"), (1.24, "power")):
            y, pred, score = draw(rng, N, 0.3, drop)
            share = float(np.mean(y == "fraud"))
            if drop:
                rows["drop"].append(0.977 - float(np.mean(pred[y == "fraud"] == "fraud")))
            for base, name in ((validation, "em"), (validation.confusion, "hard")):
                m = monitor(base)
                m.predict_many(list(range(N)), pred, y_score=score)
                report = m.report()
                e = report.windows[f"sliding_{N}"].estimate
                assert e is not None and (e.method == "em") == (name == "em")
                rows[f"{name}_{key}"].append(float(bool(report.alerting("not_prior_shift"))))
                if not drop:
                    rows[f"{name}_err"].append(abs(e.priors["fraud"] - share))
                    rows[f"{name}_cov"].append(float(e.lower["fraud"] <= share <= e.upper["fraud"]))
    mean = {k: float(np.mean(v)) for k, v in rows.items()}
    print(f"\n{count} trials: validation 3,000 at 10 % fraud, windows of {N:,} at 30 % fraud")
    print(f"{'':<44}{'with scores (EM)':>18}{'decisions only':>16}{'ratio':>8}")
    print(f"{'mix MAE (pure label shift)':<44}{mean['em_err']:>18.4f}{mean['hard_err']:>16.4f}"
          f"{mean['em_err'] / mean['hard_err']:>8.2f}")
    print(f"{'95 % interval coverage':<44}{mean['em_cov']:>18.2f}{mean['hard_cov']:>16.2f}")
    print(f"{'not_prior_shift rate, pure label shift':<44}{mean['em_fa']:>18.2f}{mean['hard_fa']:>16.2f}")
    print(f"{'not_prior_shift rate, recall drop ' + format(mean['drop'], '.2f'):<44}{mean['em_power']:>18.2f}"
          f"{mean['hard_power']:>16.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 trials and 10 reports instead of 100 and 30")
    args = parser.parse_args()
    rng = np.random.default_rng(2028)
    started = time.perf_counter()
    report_times(rng, 10 if args.quick else 30)
    trials(rng, 20 if args.quick else 100)
    print(f"\nrun time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
