"""A river model on Shuttle whose class mix shifts in production: what streammon tells you.

Train a Gaussian naive Bayes model on the first 10 000 samples of river's bundled Shuttle data (their class
mix is the reference), validate it on the next 5 000 (their confusion matrix is the baseline of
the degradation detector), then stream the rest — keeping only one normal sample in five, an
induced prior shift — while the model keeps learning progressively.

Accuracy, precision and F1 move with the mix and are Type-1-flagged, with their measured
distortion; the class-conditional scores hold still and no degradation alert fires. Run it:

    python examples/river_shuttle_prior_shift.py
"""

from __future__ import annotations

import itertools
from collections import Counter

from river import datasets, naive_bayes

from streammon import ConfusionCounts, Cumulative, Monitor, Report, Sliding

TRAIN, VALIDATION = 10_000, 5_000


def run(limit: int | None = None, keep_normal_every: int = 5, show: bool = True) -> Report:
    """Train, validate, then stream with a shifted mix; return the final report."""
    stream = datasets.Shuttle()
    model = naive_bayes.GaussianNB()
    train = list(itertools.islice(stream, TRAIN))
    for x, y in train:
        model.learn_one(x, y)
    reference = Counter(y for _, y in train)

    validation = ConfusionCounts()
    for x, y in itertools.islice(stream, TRAIN, TRAIN + VALIDATION):
        validation.add(y, model.predict_one(x))
        model.learn_one(x, y)

    monitor = Monitor([Cumulative(), Sliding(2000)], reference=reference, baseline=validation, positive=1)
    production = itertools.islice(stream, TRAIN + VALIDATION, None if limit is None else TRAIN + VALIDATION + limit)
    seen = 0
    for i, (x, y) in enumerate(production):
        if y == 0 and i % keep_normal_every:
            continue  # the induced prior shift: most normal samples never reach production
        monitor.update(y, model.predict_one(x))
        model.learn_one(x, y)
        seen += 1
        if show and seen % 2000 == 0:
            _print(monitor.report())
    report = monitor.report()
    if show:
        _print(report)
    return report


def _print(report: Report) -> None:
    w = report.windows["sliding_2000"]
    flagged = set(w.flagged("type1"))
    names = ("acsa", "gmean", "accuracy", "precision", "f1", "mcc")
    cells = [f"{m}={w.scores[m]:.3f}{'*' if m in flagged else ''}" for m in names]
    alerts = ", ".join(sorted({f"{a.kind}:{a.subject}" for a in report.alerts})) or "-"
    print(f"n={report.samples:<6} RRT={w.rrt:5.2f} (IR {w.ir:5.2f})  {'  '.join(cells)}  alerts: {alerts}")


if __name__ == "__main__":
    final = run()
    w = final.windows["sliding_2000"]
    print("\nWhy the starred scores moved:")
    for flag in w.flags:
        if flag.kind == "type1" and flag.metric in ("precision", "f1", "mcc"):
            print(" -", flag.reason)
