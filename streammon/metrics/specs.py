"""The metric catalog: one ``MetricSpec`` per canonical name (METRICS.md).

This table is the single source of the metric facts used everywhere in
streammon — Condition 1/2/3 (seed 004), binary-only, direction, parameters and
the seed that defines each metric. The exporter, the distortion flags, the docs
and the tests all read it.

>>> compute("gmean", [[90, 10], [20, 80]])
0.848528137423857
>>> spec("precision").condition1, spec("acsa").condition3
(False, True)
>>> compute("tpr", [[1, 2, 3], [4, 5, 6], [7, 8, 9]])
Traceback (most recent call last):
...
ValueError: metric 'tpr' is binary-only and does not apply to K=3; valid for K=3: recall, precision, acsa, gmean, hmean, min_recall, max_recall, holder, auroc_ovo, auroc_ova, nauroc_ova, aurpc_ova, maurpc_ova, accuracy, mcc, kappa, macro_f1
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from streammon.metrics import binary, multiclass
from streammon.metrics.confusion import Confusion

REQUIRED = object()  # marks a parameter without a default


@dataclass(frozen=True)
class MetricSpec:
    """The facts about one metric, and the pure function that computes it.

    ``condition1`` — invariant under prior shift (a function of the row-normalised
    matrix alone; seed 004, Condition 1). ``condition2`` — bounds independent of
    the number of classes (``None``: not established for this index).
    ``condition3`` — keeps information when one class is almost entirely
    misclassified (``None``: does not apply, or depends on a parameter — see
    ``satisfies_condition3``). ``kind`` is ``"binary"`` (K = 2 only),
    ``"per_class"`` (about one class, chosen by ``positive``) or ``"multiclass"``.
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

    @property
    def seed(self) -> str:
        """The seed paper that defines the metric (the first of ``seeds``; see shared/seeds/README.md)."""
        return self.seeds[0]

    @property
    def binary_only(self) -> bool:
        """True when the metric is defined for K = 2 only."""
        return self.kind == "binary"

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
        return resolved

    def hoelder_exponent(self, params: Mapping[str, Any] | None = None) -> float | None:
        """The Hölder exponent ``p`` if this is a Hölder mean of recalls, else None."""
        if self.name == "holder":
            return float(self.resolve_params(params or {})["p"])
        return self.holder_p

    def satisfies_condition3(self, params: Mapping[str, Any] | None = None) -> bool | None:
        """Condition 3 with parameters resolved: a Hölder mean keeps it iff p > 0."""
        if self.name == "holder":
            return float(self.resolve_params(params or {})["p"]) > 0
        return self.condition3

    def evaluate(self, c: Confusion, *, positive: int = 1, **params: Any) -> float:
        """Compute the metric on a prepared matrix (no applicability check)."""
        resolved = self.resolve_params(params)
        if self.kind == "multiclass":
            return float(self.function(c, **resolved))
        return float(self.function(c, positive, **resolved))


def _ovo_floor(c: int) -> float:
    """Seed 004, Lemma 2: the lower bound of AUROC-OVO over C classes."""
    return (c - 2) / (2 * (c - 1))


def _ova_floor(c: int) -> float:
    """Seed 004: λ_C = (C−2)/(2C), the weak lower bound of AUROC-OVA."""
    return (c - 2) / (2 * c)


def _specs() -> tuple[MetricSpec, ...]:
    b, m = "binary", "multiclass"
    pc = "per_class"
    a = MetricSpec
    return (
        a("tpr", "True positive rate", "TP/(TP+FN)", b, True, None, None, True, ("004", "000", "002", "003"), binary.tpr),
        a("tnr", "True negative rate", "TN/(TN+FP)", b, True, None, None, True, ("000", "002", "003"), binary.tnr),
        a("npv", "Negative predictive value", "TN/(TN+FN)", b, False, None, None, True, ("002",), binary.npv),
        a("f1", "F1 score", "2·precision·tpr/(precision+tpr)", b, False, None, None, True, ("002", "003"), binary.f1),
        a("balanced_accuracy", "Balanced accuracy", "(TPR+TNR)/2", b, True, None, None, True, ("000", "002", "004"), binary.balanced_accuracy),
        a("informedness", "Bookmaker informedness", "TPR+TNR−1", b, True, None, None, True, ("002",), binary.informedness),
        a("dominance", "Dominance", "TPR−TNR", b, True, None, None, None, ("000",), binary.dominance),
        a("iba", "Index of balanced accuracy", "(1+α·dominance)·M", b, True, None, None, True, ("000",), binary.iba,
          params=MappingProxyType({"alpha": 0.05, "squared": False})),
        a("optimized_precision", "Optimized precision", "accuracy−|TNR−TPR|/(TNR+TPR)", b, False, None, None, True, ("000",), binary.optimized_precision),
        a("ac_score", "AC-score", "2·TPR·TNR/(TPR+TNR)", b, True, None, None, True, ("002",), binary.ac_score),
        a("hmnc", "HMNC", "TP·TN·n/((TP+TN)·P·N)", b, False, None, None, True, ("003",), binary.hmnc),
        a("aurpc", "AURPC (discrete)", "(TPR+precision)/2", b, False, None, None, True, ("004",), binary.aurpc),
        a("mprecision", "mPrecision", "TPR/(TPR+FPR)", b, True, None, None, True, ("004",), binary.mprecision),
        a("maurpc", "mAURPC", "(TPR+mPrecision)/2", b, True, None, None, True, ("004",), binary.maurpc),
        a("recall", "Recall of a class", "m_ii/n_i", pc, True, True, None, True, ("001", "004"), multiclass.recall),
        a("precision", "Precision of a class", "m_ii/k_i", pc, False, True, None, True, ("004", "001", "003"), multiclass.class_precision),
        a("acsa", "Average class-specific accuracy", "(1/C)Σr_i", m, True, True, True, True, ("001", "004"), multiclass.acsa, holder_p=1.0),
        a("gmean", "Geometric mean of recalls", "(Πr_i)^(1/C)", m, True, True, False, True, ("004", "000", "001", "003"), multiclass.gmean, holder_p=0.0),
        a("hmean", "Harmonic mean of recalls", "C/Σ(1/r_i)", m, True, True, False, True, ("001",), multiclass.hmean, holder_p=-1.0),
        a("min_recall", "Minimum recall", "min r_i", m, True, True, False, True, ("001",), multiclass.min_recall, holder_p=-math.inf),
        a("max_recall", "Maximum recall", "max r_i", m, True, True, True, True, ("001",), multiclass.max_recall, holder_p=math.inf),
        a("holder", "Hölder mean of recalls", "((1/C)Σr_i^p)^(1/p)", m, True, True, None, True, ("001",), multiclass.holder,
          params=MappingProxyType({"p": REQUIRED})),
        a("auroc_ovo", "AUROC one-vs-one", "C/(2(C−1))·acsa+(C−2)/(2(C−1))", m, True, False, None, True, ("004",), multiclass.auroc_ovo,
          lower_bound=_ovo_floor),
        a("auroc_ova", "AUROC one-vs-all", "(1/2C)Σ(1+r_i−(k_i−m_ii)/(n−n_i))", m, False, False, None, True, ("004",), multiclass.auroc_ova,
          lower_bound=_ova_floor),
        a("nauroc_ova", "Normalised AUROC one-vs-all", "(auroc_ova−λ_C)/(1−λ_C)", m, False, True, None, True, ("004",), multiclass.nauroc_ova),
        a("aurpc_ova", "AURPC one-vs-all", "(1/2C)Σ(m_ii/k_i+r_i)", m, False, True, None, True, ("004",), multiclass.aurpc_ova),
        a("maurpc_ova", "mAURPC one-vs-all", "(1/2C)Σ((m_ii/n_i)/(Σ_j m_ji/n_j)+r_i)", m, True, True, True, True, ("004",), multiclass.maurpc_ova),
        a("accuracy", "Accuracy", "Σm_ii/n", m, False, True, True, True, ("001", "003"), multiclass.accuracy),
        a("mcc", "Matthews correlation coefficient", "Gorodkin's R_K", m, False, None, None, True, ("002", "003"), multiclass.mcc),
        a("kappa", "Cohen's kappa", "(p_o−p_e)/(1−p_e)", m, False, None, None, True, ("003",), multiclass.kappa),
        a("macro_f1", "Macro-averaged F1", "(1/C)Σ2m_ii/(n_i+k_i)", m, False, None, None, True, ("002",), multiclass.macro_f1),
    )


_CATALOG: Mapping[str, MetricSpec] = MappingProxyType({s.name: s for s in _specs()})


def catalog() -> Mapping[str, MetricSpec]:
    """Every metric spec by canonical name (read-only)."""
    return _CATALOG


def names() -> tuple[str, ...]:
    """The canonical metric names, in catalog order."""
    return tuple(_CATALOG)


def applicable(k: int) -> tuple[str, ...]:
    """The metric names defined for a K×K matrix.

    >>> "tpr" in applicable(2), "tpr" in applicable(3)
    (True, False)
    """
    return tuple(name for name, s in _CATALOG.items() if s.applies_to(k))


def spec(name: str) -> MetricSpec:
    """The spec of ``name``; an unknown name raises listing the valid ones."""
    try:
        return _CATALOG[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown metric {name!r}; valid names: {', '.join(_CATALOG)}"
        ) from None


def check_positive(positive: Any, k: int) -> int:
    """Validate a class index for binary and per-class metrics."""
    if isinstance(positive, bool) or not isinstance(positive, int):
        raise TypeError(f"positive must be an int class index in [0, {k}), got {positive!r}")
    if not 0 <= positive < k:
        raise ValueError(f"positive must be a class index in [0, {k}), got {positive}")
    return positive


def compute(name: str, cm: Any, *, positive: int = 1, **params: Any) -> float:
    """Compute metric ``name`` on ``cm`` (K×K counts, rows = true class).

    ``positive`` is the index of the positive class for binary metrics (default
    1, scikit-learn's ``[negative, positive]`` order) and of the class for the
    per-class ``recall`` and ``precision``. ``params`` carries metric parameters
    (``p`` for ``holder``; ``alpha``, ``squared`` for ``iba``). Undefined values
    are NaN.

    >>> compute("precision", [[90, 10], [20, 80]])
    0.8888888888888888
    >>> round(compute("holder", [[9, 1], [5, 5]], p=-1), 6)  # 2/(1/0.9 + 1/0.5)
    0.642857
    """
    s = spec(name)
    c = Confusion.of(cm)
    if not s.applies_to(c.k):
        valid = ", ".join(applicable(c.k)) or "none (K must be >= 2)"
        what = "is binary-only and does not apply" if s.binary_only else "does not apply"
        raise ValueError(f"metric {name!r} {what} to K={c.k}; valid for K={c.k}: {valid}")
    if s.kind != "multiclass":
        positive = check_positive(positive, c.k)
    return s.evaluate(c, positive=positive, **params)
