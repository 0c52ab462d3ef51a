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
DAY = 86400.0
DEFAULT_INTERVAL = 30 * DAY  # the expected time between false degradation alerts of a model
MIN_INTERVAL, MAX_INTERVAL = 1.0, 100 * 365 * DAY  # seconds: the intervals accepted

@dataclass(frozen=True)
class DetectorSettings:
    """How degradation is detected (``streammon.detection.watch``).

    ``false_alarm_interval`` — the expected time, in seconds, between false degradation alerts of the
    **model** (all its classes together) while every recall stays at its baseline (default 30 days): each
    watched class gets the run length ``false_alarm_interval · λ_c · W`` in its own samples, ``λ_c`` its
    measured rate (samples/s) and ``W`` the number of watched classes (``streammon.detection.rates``: how the
    rates are measured, re-derived, floored and capped); ``arl`` — the expert knob: when given, every
    class's average run length, in samples of the class, between false degradation alarms while its
    recall stays at its baseline, whatever its rate (the bank's threshold is calibrated for it, not bounded;
    ``false_alarm_interval`` is then not used);
    ``recovery_arl`` — the same for a false clear while the recall stays at or below the midpoint
    between the baseline and a cautious degraded recall (Lorden's bound; ``inf``: an incident never
    clears by itself); ``baseline_samples`` —
    when no baseline is given, each class's first this many samples make its baseline (drops smaller
    than the baseline's noise are not watched: ``bank.first_member``); ``refine_until`` — a learned
    baseline is re-estimated from all the class's samples each time they double, up to this many
    (``baseline_samples`` or less: never); ``enabled=False`` turns degradation detection off.
    """

    arl: float | None = None
    recovery_arl: float = 1e6
    baseline_samples: int = 500
    refine_until: int = 32_000
    enabled: bool = True
    false_alarm_interval: float = DEFAULT_INTERVAL

    def __post_init__(self) -> None:
        arl = self.arl
        if arl is not None and (isinstance(arl, bool) or not isinstance(arl, int | float) or not 1 < arl < math.inf):
            raise ValueError(f"DetectorSettings.arl must be None (the time budget false_alarm_interval decides) or "
                             f"a finite number > 1 (samples of a class), got {arl!r}")
        value = self.false_alarm_interval
        if isinstance(value, bool) or not isinstance(value, int | float) or not MIN_INTERVAL <= value <= MAX_INTERVAL:
            raise ValueError(f"DetectorSettings.false_alarm_interval must be a number of seconds in [{MIN_INTERVAL:g}, "
                             f"{MAX_INTERVAL:g}] (the expected time between false degradation alerts of the model; "
                             f"30 days = {DEFAULT_INTERVAL:g}), got {value!r}")
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
