"""Labels that come late, or never: a river model on Phishing with lognormal label delays.

A logistic regression learns from river's bundled Phishing data (1 250 web pages). Its first 250
pages, labelled at once, are the reference mix. The other 1 000 arrive one a minute: the model
predicts each at once (``Monitor.predict`` under the page's key) and learns from it only when its
label arrives — after a lognormal delay (median 2 hours) — while 30 % of the labels never arrive.
At the end streammon knows, before and beside the labels: the coverage, the label latency, how many
predictions still wait or expired, the predicted-class mix against the one the reference implies,
and the scores of the joined (labelled) predictions. Run it:

    python examples/delayed_labels.py
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from river import compose, datasets, linear_model, preprocessing

from streammon import Cumulative, Monitor, Report, Sliding, Timed

WARMUP = 250
MINUTE = 60.0


@dataclass
class LateLabels:
    """The labels on their way (a heap by label time) and what the example saw, for a recount."""

    monitor: Monitor
    model: Any
    heap: list[tuple[float, int]] = field(default_factory=list)
    truth: dict[int, bool] = field(default_factory=dict)
    features: dict[int, dict[str, float]] = field(default_factory=dict)
    predicted: dict[int, tuple[bool, float]] = field(default_factory=dict)
    joined: list[tuple[bool, bool, float]] = field(default_factory=list)  # (true, predicted, latency)

    def deliver(self, now: float) -> None:
        """Give every label due by ``now``, in time order; the model learns from it then."""
        while self.heap and self.heap[0][0] <= now:
            t, key = heapq.heappop(self.heap)
            self.monitor.label(key, self.truth[key], t=t)
            self.model.learn_one(self.features.pop(key), self.truth[key])
            pred, at = self.predicted[key]
            self.joined.append((self.truth[key], pred, t - at))


def run(*, never: float = 0.3, median_delay: float = 7200.0, seed: int = 3, show: bool = True
        ) -> tuple[Report, dict[str, Any]]:
    """Stream Phishing with late labels; return the final report and what really happened (for a recount)."""
    rng = np.random.default_rng(seed)
    data = list(datasets.Phishing())
    model = compose.Pipeline(preprocessing.StandardScaler(), linear_model.LogisticRegression())
    for x, y in data[:WARMUP]:
        model.learn_one(x, y)
    reference = Counter(y for _, y in data[:WARMUP])
    stream = data[WARMUP:]
    end = len(stream) * MINUTE
    monitor = Monitor([Cumulative(), Sliding(500), Timed(6 * 3600, buckets=12)], reference=reference,
                      label_ttl=7 * 24 * 3600.0, clock=lambda: end)
    delays = rng.lognormal(np.log(median_delay), 1.0, len(stream))
    arrives = rng.random(len(stream)) >= never
    late = LateLabels(monitor, model)
    for key, ((x, y), delay, comes) in enumerate(zip(stream, delays, arrives, strict=True)):
        now = key * MINUTE
        late.deliver(now)
        pred = bool(model.predict_one(x))
        monitor.predict(key, pred, t=now)
        late.predicted[key] = (pred, now)
        late.truth[key], late.features[key] = y, x
        if comes:
            heapq.heappush(late.heap, (now + float(delay), key))
    late.deliver(end)
    report = monitor.report()
    if show:
        _show(report)
    facts = {"predicted": [p for p, _ in late.predicted.values()], "joined": late.joined, "late": len(late.heap)}
    return report, facts


def _show(report: Report) -> None:
    s = report.label_stats
    assert s is not None
    print(f"predictions {s.predictions}: labelled {s.labelled} (coverage {s.coverage:.1%}), pending {s.pending}, "
          f"expired {s.expired}, orphans {s.orphans}, duplicates {s.duplicates}")
    print("label latency: " + ", ".join(f"{k} {v / 3600:.2f} h" for k, v in s.latency.items()))
    mix = ", ".join(f"{c}: {s.predicted_mix[c]:.3f} (implied {s.implied_mix.get(c, float('nan')):.3f})"
                    for c in report.labels)
    print(f"predicted mix {mix}")
    for name, w in itertools.islice(report.windows.items(), 2):
        scores = "  ".join(f"{m}={w.scores[m]:.3f}" for m in ("acsa", "gmean", "min_recall", "precision"))
        print(f"{name:<14} joined n={w.n:<4} {scores}")
    for alert in report.alerts:
        print(f"ALERT {alert.kind} [{alert.window}] {alert.subject}")


if __name__ == "__main__":
    run()
