"""Scenario benchmark: streammon's alerts against the monitors people use today (run on demand).

Three monitors watch the same streams, side by side:

- streammon — ``Monitor(...).report().alerts`` (degradation: per-class CUSUM; class-set change);
- a threshold on a rolling F1 (river ``utils.Rolling(metrics.F1, 1000)``): alert when it falls 0.1 below
  the F1 at the training mix; and the same on rolling accuracy (0.05 below);
- river's ADWIN on the overall error stream: alert when it detects a change and the error rate rose.

Scenarios (a fixed binary classifier: minority recall 0.80, majority recall 0.95, training IR 19):

1. pure prior shift — RRT moves from 0.1× to 10× the training IR over 200 000 samples (10 seeds):
   false degradation alerts (target: zero);
2. a real degradation — minority recall 0.80 → 0.50 at 5 % prevalence after 40 000 samples (10 seeds):
   detection delay in samples (target: median under 2 000, no misses);
3. a new class appearing (3 classes → 4) — samples until the class-set-change alert, and whether
   auroc_ovo / auroc_ova are Type-2-flagged.

    python examples/bench_scenarios.py [--seeds 10]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from river import drift, metrics, utils

from streammon import Monitor, Sliding

IR = 19.0
MINORITY, MAJORITY = "fraud", "legit"
REFERENCE = {MAJORITY: 95_000, MINORITY: 5_000}
VALIDATION = {MAJORITY: {MAJORITY: 38_000, MINORITY: 2_000}, MINORITY: {MINORITY: 1_600, MAJORITY: 400}}
PRECISION_AT_TRAINING_MIX = 0.05 * 0.8 / (0.05 * 0.8 + 0.95 * 0.05)
F1_AT_TRAINING_MIX = 2 * 0.8 * PRECISION_AT_TRAINING_MIX / (0.8 + PRECISION_AT_TRAINING_MIX)
ACCURACY_AT_TRAINING_MIX = 0.05 * 0.8 + 0.95 * 0.95
CHUNK = 500


def _stream(rng: np.random.Generator, shares: np.ndarray, recall: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    truth = np.where(rng.random(len(shares)) < shares, MINORITY, MAJORITY)
    hit = rng.random(len(shares)) < np.where(truth == MINORITY, recall, 0.95)
    return truth, np.where(hit, truth, np.where(truth == MINORITY, MAJORITY, MINORITY))


class Baselines:
    """The rolling-threshold and ADWIN monitors, fed one sample at a time."""

    def __init__(self) -> None:
        # river's own F1 reads 0 for a string pos_val, so it is fed booleans (is the sample fraud?)
        self.f1 = utils.Rolling(metrics.F1, window_size=1000, pos_val=True)
        self.accuracy = utils.Rolling(metrics.Accuracy, window_size=1000)
        self.adwin = drift.ADWIN()
        self.seen = 0
        self.episodes: dict[str, list[list[int]]] = {name: [] for name in ("rolling_f1", "rolling_accuracy",
                                                                             "adwin_error")}
        self.alarms = dict.fromkeys(("rolling_f1", "rolling_accuracy", "adwin_error"), 0)
        self._on = dict.fromkeys(self.alarms, False)

    def _signal(self, name: str, on: bool) -> None:
        if on and not self._on[name]:
            self.alarms[name] += 1
            self.episodes[name].append([self.seen, -1])
        if not on and self._on[name]:
            self.episodes[name][-1][1] = self.seen
        self._on[name] = on

    def update(self, truth: np.ndarray, preds: np.ndarray) -> None:
        for y, p in zip(truth.tolist(), preds.tolist(), strict=True):
            self.f1.update(y == MINORITY, p == MINORITY)
            self.accuracy.update(y, p)
            before = self.adwin.estimation
            self.adwin.update(float(y != p))
            self.seen += 1
            if self.seen >= 1000:
                self._signal("rolling_f1", self.f1.get() < F1_AT_TRAINING_MIX - 0.1)
                self._signal("rolling_accuracy", self.accuracy.get() < ACCURACY_AT_TRAINING_MIX - 0.05)
            if self.adwin.drift_detected:
                self._signal("adwin_error", self.adwin.estimation > before)
                self._on["adwin_error"] = False


def _run(truth: np.ndarray, preds: np.ndarray, monitor: Monitor, baselines: Baselines) -> list[list[int]]:
    """Feed both in chunks; streammon's degradation alert episodes as [start, end] (end -1: still on)."""
    episodes: list[list[int]] = []
    for start in range(0, len(truth), CHUNK):
        t, p = truth[start:start + CHUNK], preds[start:start + CHUNK]
        monitor.update_many(t, p)
        baselines.update(t, p)
        degraded = monitor.report().alerting("degradation")
        active = bool(episodes) and episodes[-1][1] < 0
        if degraded and not active:
            episodes.append([degraded[0].since_sample, -1])
        elif active and not degraded:
            episodes[-1][1] = start + len(t)
    return episodes


def _delay(episodes: list[list[int]], change: int) -> tuple[float, int]:
    """Samples from the change to the alarm (0 if one was already on; inf: missed), and false alarms before."""
    false_before = sum(1 for start, _ in episodes if start < change)
    if any(start < change and (end < 0 or end > change) for start, end in episodes):
        return 0.0, false_before
    after = [start - change for start, _ in episodes if start >= change]
    return (float(after[0]) if after else float("inf")), false_before


def prior_shift(seeds: int) -> dict[str, list[int]]:
    """False degradation alerts under a pure prior shift (RRT 0.1× → 10× IR)."""
    n = 200_000
    rrt = np.geomspace(0.1 * IR, 10 * IR, n)
    shares = 1 / (1 + rrt)
    out: dict[str, list[int]] = {"streammon": [], "rolling_f1": [], "rolling_accuracy": [], "adwin_error": []}
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        truth, preds = _stream(rng, shares, np.full(n, 0.8))
        monitor = Monitor([Sliding(2000)], reference=REFERENCE, baseline=VALIDATION)
        baselines = Baselines()
        out["streammon"].append(len(_run(truth, preds, monitor, baselines)))
        for name, count in baselines.alarms.items():
            out[name].append(count)
    return out


def degradation(seeds: int) -> dict[str, list[tuple[float, int]]]:
    """Detection delay (samples after the change) of minority recall 0.80 → 0.50 at 5 % prevalence."""
    before, after = 40_000, 40_000
    change = before
    recall = np.concatenate([np.full(before, 0.8), np.full(after, 0.5)])
    out: dict[str, list[tuple[float, int]]] = {"streammon": [], "rolling_f1": [], "rolling_accuracy": [],
                                                "adwin_error": []}
    for seed in range(seeds):
        rng = np.random.default_rng(100 + seed)
        truth, preds = _stream(rng, np.full(before + after, 0.05), recall)
        monitor = Monitor([Sliding(2000)], reference=REFERENCE, baseline=VALIDATION)
        baselines = Baselines()
        out["streammon"].append(_delay(_run(truth, preds, monitor, baselines), change))
        for name, episodes in baselines.episodes.items():
            out[name].append(_delay(episodes, change))
    return out


def new_class(seeds: int) -> tuple[list[int], list[bool]]:
    """Samples until the class-set-change alert when a 4th class appears; Type 2 flags on auroc_ovo/ova."""
    delays, flagged = [], []
    for seed in range(seeds):
        rng = np.random.default_rng(200 + seed)
        classes = np.array(["a", "b", "c", "d"])
        monitor = Monitor([Sliding(2000)], reference={"a": 60, "b": 30, "c": 10})
        old = rng.choice(classes[:3], size=20_000, p=[0.6, 0.3, 0.1])
        monitor.update_many(old, np.where(rng.random(20_000) < 0.85, old, rng.choice(classes[:3], 20_000)))
        seen = None
        for i in range(2000):
            y = classes[3] if rng.random() < 0.1 else rng.choice(classes[:3], p=[0.6, 0.3, 0.1])
            monitor.update(y, y if rng.random() < 0.85 else rng.choice(classes))
            if i % 25 == 24 and seen is None and monitor.report().alerting("class_set_change"):
                seen = i + 1
        delays.append(seen if seen is not None else -1)
        w = monitor.report().windows["sliding_2000"]
        flagged.append({"auroc_ovo", "auroc_ova"} <= set(w.flagged("type2")))
    return delays, flagged


def _fmt(results: list[tuple[float, int]]) -> str:
    delays = [d for d, _ in results]
    false_before = sum(f for _, f in results)
    finite = [v for v in delays if v != float("inf")]
    misses = len(delays) - len(finite)
    found = f"median {statistics.median(finite):,.0f}, max {max(finite):,.0f}" if finite else "never"
    return f"{found}; misses {misses}; false alarms before the change {false_before}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    seeds = parser.parse_args().seeds
    start = time.perf_counter()
    shift = prior_shift(seeds)
    degraded = degradation(seeds)
    delays, flagged = new_class(seeds)
    print(f"| monitor | 1. pure prior shift: false degradation alerts ({seeds} × 200k) "
          f"| 2. recall 0.80 → 0.50 at 5 % after 40k: delay in samples ({seeds} seeds) |")
    print("|---|---|---|")
    for name in ("streammon", "rolling_f1", "rolling_accuracy", "adwin_error"):
        print(f"| {name} | {sum(shift[name])} (runs with any: {sum(1 for v in shift[name] if v)}/{seeds}) "
              f"| {_fmt(degraded[name])} |")
    print(f"\n3. new class: class_set_change alert after {statistics.median(delays):.0f} samples (median of "
          f"{seeds}, checked every 25); auroc_ovo and auroc_ova Type-2-flagged in {sum(flagged)}/{seeds} runs.")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
