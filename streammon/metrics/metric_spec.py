"""One row of the metric catalog: the facts about a metric and the pure function that computes it.

The rows themselves are in ``specs`` (confusion-matrix metrics) and ``score_specs`` (score metrics); this
module holds only the type, so that both tables can build rows without importing each other.

>>> REQUIRED is REQUIRED, CONFUSION in NEEDS, SCORES in NEEDS
(True, True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from streammon.metrics.confusion import Confusion

REQUIRED = object()  # marks a parameter without a default
BINARY = "binary"  # K = 2 only
PER_CLASS = "per_class"  # about one class, chosen by ``positive``
MULTICLASS = "multiclass"  # any K >= 2
CONFUSION = "confusion"  # computed from a K×K confusion matrix
SCORES = "scores"  # computed from a window's score tally (score_bins): the model's probabilities
NEEDS = (CONFUSION, SCORES)


@dataclass(frozen=True, kw_only=True)
class MetricSpec:
    """The facts about one metric, and the pure function that computes it.

    ``condition1`` — invariant under prior shift (a function of the row-normalised
    matrix alone; seed 004, Condition 1). ``condition2`` — bounds independent of
    the number of classes (``None``: not established for this index).
    ``condition3`` — keeps information when one class is almost entirely
    misclassified (``None``: does not apply, or depends on a parameter — see
    ``satisfies_condition3``). ``kind`` is ``"binary"`` (K = 2 only),
    ``"per_class"`` (about one class, chosen by ``positive``) or ``"multiclass"``.
    ``needs`` is what the metric reads: ``"confusion"`` (a confusion matrix; ``evaluate``) or ``"scores"`` (a
    score tally; ``evaluate_scores``; at K = 2 about ``positive``). ``sources`` cites the papers of a metric
    beyond the seeds (the score metrics). ``params`` holds each parameter's default (``REQUIRED``: none) — the one
    place in ``metrics`` that sets one; ``choices`` the names a parameter may take (a parameter without is a
    number or a boolean). Every field is passed by name.
    """

    name: str
    title: str
    formula: str
    kind: str
    condition1: bool
    condition2: bool | None
    condition3: bool | None
    higher_is_better: bool | None
    seeds: tuple[str, ...]
    function: Callable[..., float] = field(repr=False)
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    holder_p: float | None = None  # the Hölder exponent, for Hölder-family scores
    lower_bound: Callable[[int], float] | None = field(default=None, repr=False)
    needs: str = CONFUSION
    sources: tuple[str, ...] = ()
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def seed(self) -> str:
        """The seed paper that defines the metric (the first of ``seeds``; see shared/seeds/README.md); "" for
        a metric beyond the seeds (its ``sources`` say where it comes from)."""
        return self.seeds[0] if self.seeds else ""

    @property
    def binary_only(self) -> bool:
        """True when the metric is defined for K = 2 only."""
        return self.kind == BINARY

    def applies_to(self, k: int) -> bool:
        """Whether the metric is defined for a K×K matrix."""
        return k == 2 if self.binary_only else k >= 2

    def resolve_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Fill defaults and reject unknown or missing parameters."""
        unknown = set(params) - set(self.params)
        if unknown:
            allowed = ", ".join(self.params) or "none"
            raise TypeError(
                f"metric {self.name!r} got unknown parameter(s) {sorted(unknown)}; "
                f"it takes: {allowed}"
            )
        resolved = {key: params.get(key, default) for key, default in self.params.items()}
        missing = [key for key, value in resolved.items() if value is REQUIRED]
        if missing:
            raise TypeError(f"metric {self.name!r} needs parameter(s) {missing}")
        for key, value in resolved.items():  # a choice among names, or else a number or a boolean
            options = self.choices.get(key)
            if options is not None and value not in options:
                raise ValueError(f"metric {self.name!r} parameter {key!r} must be one of {options}, got {value!r}")
            if options is None and isinstance(value, str):
                raise TypeError(f"metric {self.name!r} parameter {key!r} takes a number or a boolean, got {value!r}")
        return resolved

    def hoelder_exponent(self, params: Mapping[str, Any] | None = None) -> float | None:
        """The Hölder exponent ``p`` if this is a Hölder mean of recalls, else None."""
        if self.name == "holder":
            return float(self.resolve_params(params or {})["p"])
        return self.holder_p

    def satisfies_condition1(self, params: Mapping[str, Any] | None = None, k: int = 3) -> bool:
        """Condition 1 with parameters resolved: ``roc_auc`` one-vs-rest pools the other classes, whose mix
        moves it, at K > 2 (binary and Hand & Till's one-vs-one keep it)."""
        if self.name == "roc_auc":
            return k == 2 or self.resolve_params(params or {})["multi_class"] != "ovr"
        return self.condition1

    def satisfies_condition3(self, params: Mapping[str, Any] | None = None) -> bool | None:
        """Condition 3 with parameters resolved: a Hölder mean keeps it iff p > 0."""
        if self.name == "holder":
            return float(self.resolve_params(params or {})["p"]) > 0
        return self.condition3

    def evaluate(self, c: Confusion, *, positive: int = 1, **params: Any) -> float:
        """Compute the metric on a prepared matrix (no applicability check)."""
        if self.needs != CONFUSION:
            raise TypeError(f"metric {self.name!r} needs a score tally, not a confusion matrix: use evaluate_scores")
        resolved = self.resolve_params(params)
        if self.kind == MULTICLASS:
            return float(self.function(c, **resolved))
        return float(self.function(c, positive, **resolved))


    def evaluate_scores(self, tally: Any, *, positive: int = 1, priors: Any = None, **params: Any) -> float:
        """Compute a score metric on a window's tally ``(hist, sums, top)``, as read or at the class mix
        ``priors`` (each class's samples weighted by ``π_c·n/n_c``)."""
        if self.needs != SCORES:
            raise TypeError(f"metric {self.name!r} needs a confusion matrix, not a score tally: use evaluate")
        return float(self.function(tally, positive=positive, priors=priors, **self.resolve_params(params)))
