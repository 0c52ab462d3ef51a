"""The reference (training) class mix: priors, imbalance ratio, minority class.

Given as counts (``{"legit": 99_000, "fraud": 1_000}``: whole numbers, any total) or as priors
(``{"legit": 0.99, "fraud": 0.01}``: they must sum to 1, within ``PRIOR_SUM_TOLERANCE``); either is normalised
to sum to 1. A given reference needs a positive weight for every class it names (a class with weight 0 would
make IR infinite: leave it out); priors that do not sum to 1 are refused rather than renormalised silently
(``{"legit": 0.9}`` is a typo or a missing class, not a mix). A reference learned from the warm-up keeps every
known class, zeros too.

>>> Reference.of({"legit": 0.85, "fraud": 0.05})
Traceback (most recent call last):
...
ValueError: reference priors sum to 0.9: give counts (whole numbers, any total) or priors that sum to 1
>>> Reference.of({"legit": 99_000, "fraud": 0})
Traceback (most recent call last):
...
ValueError: reference class 'fraud' has weight 0: every class of a given reference needs a positive ...

>>> ref = Reference.of({"legit": 99_000, "fraud": 1_000})
>>> ref.ir, ref.minority, ref.majority
(99.0, 'fraud', 'legit')
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np

from streammon.counting.counts import check_label
from streammon.findings.encode import by_label, label_entries, label_keys
from streammon.findings.frozen import FrozenMap

PRIOR_SUM_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Reference:
    """A class mix: labels, their priors (summing to 1), and where it came from."""

    priors: Mapping[Hashable, float]
    source: str  # "given" or "warmup"

    @classmethod
    def of(cls, mix: Mapping[Any, Any], *, source: str = "given", given: bool | None = None) -> Reference:
        """Validate a label → count (or prior) mapping; ``given`` (default: ``source == "given"``) applies a
        user's reference's rules (no zero weight, priors that sum to 1)."""
        if not isinstance(mix, Mapping) or not mix:
            raise TypeError(
                f"reference must be a non-empty mapping of label -> count or prior, got {mix!r}"
            )
        weights: dict[Hashable, float] = {}
        for label, weight in mix.items():
            key = check_label(label)
            if isinstance(weight, bool) or not isinstance(weight, (Real, np.number)):
                raise TypeError(f"reference weight for {label!r} must be a number, got {weight!r}")
            w = float(weight)
            if not math.isfinite(w) or w < 0:
                raise ValueError(f"reference weight for {label!r} must be finite and >= 0, got {weight!r}")
            weights[key] = w
        total = math.fsum(weights.values())
        if total <= 0:
            raise ValueError(f"reference weights must not all be 0, got {mix!r}")
        if source == "given" if given is None else given:
            zero = next((label for label, w in weights.items() if w == 0), None)
            if zero is not None:
                raise ValueError(f"reference class {zero!r} has weight 0: every class of a given reference needs a "
                                 "positive count or prior (leave out a class training never saw)")
            whole = all(w.is_integer() for w in weights.values())
            if not whole and abs(total - 1) > PRIOR_SUM_TOLERANCE:
                raise ValueError(f"reference priors sum to {total:.6g}: give counts (whole numbers, any total) or "
                                 "priors that sum to 1")
        return cls(FrozenMap({k: w / total for k, w in weights.items()}, noun="class"), source)

    @functools.cached_property
    def expected(self) -> frozenset[Hashable]:
        """The classes with a positive prior (those a window at this mix is expected to hold)."""
        return frozenset(label for label, prior in self.priors.items() if prior > 0)

    @property
    def labels(self) -> tuple[Hashable, ...]:
        """The reference classes, in the order given."""
        return tuple(self.priors)

    @functools.cached_property
    def ir(self) -> float:
        """Imbalance ratio ``max π / min π`` (seed 004, Definition 1); inf if a prior is 0."""
        values = list(self.priors.values())
        low = min(values)
        return math.inf if low == 0 else max(values) / low

    @property
    def minority(self) -> Hashable:
        """The class with the smallest prior (ties: the later one, sklearn's positive)."""
        return min(reversed(self.labels), key=lambda label: self.priors[label])

    @property
    def majority(self) -> Hashable:
        """The class with the largest prior (ties: the earlier one)."""
        return max(self.labels, key=lambda label: self.priors[label])

    def to_dict(self, keys: Mapping[Hashable, str] | None = None) -> dict[str, Any]:
        """JSON-ready: ``labels``, ``priors`` by class key and ``source`` (``streammon.findings.encode``).

        ``keys`` gives each label's JSON key (a report passes its own); by default they
        follow ``encode.label_keys`` over the reference's labels.

        >>> Reference.of({0: 3, 1: 1}).to_dict()["priors"]
        {'0': 0.75, '1': 0.25}
        """
        keys = label_keys(self.labels) if keys is None else keys
        return {"labels": label_entries(self.labels, keys), "priors": by_label(self.priors, keys),
                "source": self.source}

    def aligned(self, labels: Sequence[Hashable]) -> np.ndarray:
        """Priors in the order of ``labels`` (0 for a class the reference lacks)."""
        return np.array([self.priors.get(label, 0.0) for label in labels], dtype=np.float64)
