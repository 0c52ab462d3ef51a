"""What each class's correctness is compared against: the detector's settings and the baseline counts.

>>> baseline_counts({"a": {"a": 90, "b": 10}, "b": {"b": 40}}, ["a", "b"])
[('a', 90, 100), ('b', 40, 40)]
>>> round(DetectorSettings().in_control_recall(90, 100), 3)  # the Wilson 95 % lower bound
0.826
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammon.counting.counts import ConfusionCounts
from streammon.metrics.intervals import wilson


@dataclass(frozen=True)
class DetectorSettings:
    """How degradation is detected (see the module docstring).

    ``drop`` — the absolute recall drop the CUSUM is tuned for (smaller drops are
    detected later); ``arl`` — the false-alarm bound in samples of a class;
    ``baseline_confidence`` — the in-control recall is the Wilson lower bound of
    the baseline at this confidence; ``baseline_samples`` — when no baseline is
    given, each class's first complete blocks holding at least this many of its
    samples make its baseline; ``enabled=False`` turns degradation detection off
    (it costs O(samples/256 × K) per batch, the dominant cost of ``update_many``
    for large K).
    """

    drop: float = 0.2
    arl: float = 1e6
    baseline_confidence: float = 0.95
    baseline_samples: int = 500
    enabled: bool = True

    def in_control_recall(self, correct: float, total: float) -> float:
        """The conservative baseline recall ``p0`` from baseline counts."""
        return wilson(correct, total, self.baseline_confidence)[0]


def baseline_counts(baseline: Any, known: list[Any]) -> list[tuple[Hashable, int, int]]:
    """(label, correct, total) per class of a validation confusion matrix."""
    if baseline is None:
        return []
    if isinstance(baseline, ConfusionCounts):
        m, labels = baseline.matrix, baseline.labels
        return [(label, int(m[i, i]), int(m[i].sum())) for i, label in enumerate(labels)]
    if not isinstance(baseline, Mapping):
        if np.ndim(baseline) != 2:
            raise TypeError(
                f"baseline must be ConfusionCounts, {{true: {{pred: count}}}} or a K×K array, got {baseline!r}"
            )
        if np.shape(baseline) != (len(known), len(known)):
            raise ValueError(
                f"a baseline array must be K×K in the order of the known classes {known}, got shape "
                f"{np.shape(baseline)}"
            )
        # (Mutation testing: `known` is not read for ConfusionCounts: passing None is an equivalent mutant.)
        return baseline_counts(ConfusionCounts(known, baseline), known)
    counts = ConfusionCounts()
    for true, row in baseline.items():
        if not isinstance(row, Mapping):
            raise TypeError(f"baseline row for {true!r} must map predicted labels to counts, got {row!r}")
        for pred, count in row.items():
            counts.add(true, pred, count=count)
    return baseline_counts(counts, known)  # (mutation testing: as above, None for known is equivalent)
