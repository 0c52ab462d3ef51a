"""What each class's correctness is compared against: the detector's settings and the baseline counts.

>>> baseline_counts({"a": {"a": 90, "b": 10}, "b": {"b": 40}}, ["a", "b"])
[('a', 90, 100), ('b', 40, 40)]
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammon.counting.counts import ConfusionCounts
from streammon.counting.validation import Validation

MAX_SAMPLES = 2**53  # counts past this are not exact as the floats a saved state holds

@dataclass(frozen=True)
class DetectorSettings:
    """How degradation is detected (``streammon.detection.watch``).

    ``arl`` — the average run length, in samples of a class, between false degradation alarms
    while its recall stays at its baseline (the bank's threshold is calibrated for it, not bounded);
    ``recovery_arl`` — the same for a false clear while the recall stays at or below the midpoint
    between the baseline and a cautious degraded recall (Lorden's bound; ``inf``: an incident never
    clears by itself); ``baseline_samples`` —
    when no baseline is given, each class's first this many samples make its baseline (drops smaller
    than the baseline's noise are not watched: ``bank.first_member``); ``refine_until`` — a learned
    baseline is re-estimated from all the class's samples each time they double, up to this many
    (``baseline_samples`` or less: never); ``enabled=False`` turns degradation detection off.
    """

    arl: float = 1e6
    recovery_arl: float = 1e6
    baseline_samples: int = 500
    refine_until: int = 32_000
    enabled: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.arl, bool) or not isinstance(self.arl, int | float) or not 1 < self.arl < math.inf:
            raise ValueError(f"DetectorSettings.arl must be a finite number > 1 (samples), got {self.arl!r}")
        value = self.recovery_arl
        if isinstance(value, bool) or not isinstance(value, int | float) or not 1 < value <= math.inf:
            raise ValueError(f"DetectorSettings.recovery_arl must be a number > 1 (samples; inf: an incident never "
                             f"clears by itself), got {value!r}")
        for name in ("baseline_samples", "refine_until"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SAMPLES:
                raise ValueError(f"DetectorSettings.{name} must be an int in [1, {MAX_SAMPLES}], got {value!r}")
        if not isinstance(self.enabled, bool):
            raise TypeError(f"DetectorSettings.enabled must be True or False, got {self.enabled!r}")


def baseline_counts(baseline: Any, known: list[Any]) -> list[tuple[Hashable, int, int]]:
    """(label, correct, total) per class of a validation confusion matrix."""
    if baseline is None:
        return []
    if isinstance(baseline, Validation):  # a scored validation set is a confusion baseline too
        baseline = baseline.confusion
    if isinstance(baseline, ConfusionCounts):
        m, labels = baseline.matrix, baseline.labels
        return [(label, int(m[i, i]), int(m[i].sum())) for i, label in enumerate(labels)]
    if not isinstance(baseline, Mapping):
        if np.ndim(baseline) != 2:
            raise TypeError(
                f"baseline must be ConfusionCounts, a Validation, {{true: {{pred: count}}}} or a K×K array, "
                f"got {baseline!r}"
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
