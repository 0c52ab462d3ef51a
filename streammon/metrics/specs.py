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

Score metrics (``needs="scores"``) read a window's score tally (``score_bins``), not a confusion matrix: they
live in their own table, ``catalog("scores")``, so every consumer of ``catalog()`` keeps reading confusion
metrics only; ``spec`` finds both kinds.

>>> tuple(catalog("scores"))
('roc_auc', 'average_precision', 'brier', 'log_loss', 'ece')
>>> spec("roc_auc").needs, spec("roc_auc").params["multi_class"], "roc_auc" in catalog()
('scores', 'ovo', False)
>>> import numpy as np
>>> from streammon.metrics.score_bins import tally
>>> compute_scores("roc_auc", tally(np.array([0, 0, 1]), np.array([0.2, 0.7, 0.6]), 2))
0.5
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from streammon.metrics import binary, multiclass
from streammon.metrics.confusion import Confusion
from streammon.metrics.metric_spec import (
    BINARY,
    CONFUSION,
    MULTICLASS,
    NEEDS,
    PER_CLASS,
    REQUIRED,
    SCORES,
    MetricSpec,
)
from streammon.metrics.score_specs import score_specs

__all__ = [
    "BINARY", "CONFUSION", "MULTICLASS", "NEEDS", "PER_CLASS", "REQUIRED", "SCORES", "MetricSpec",
    "applicable", "catalog", "check_positive", "compute", "compute_scores", "names", "spec",
]


def _ovo_floor(c: int) -> float:
    """Seed 004, Lemma 2: the lower bound of AUROC-OVO over C classes."""
    return (c - 2) / (2 * (c - 1))


def _ova_floor(c: int) -> float:
    """Seed 004: λ_C = (C−2)/(2C), the weak lower bound of AUROC-OVA."""
    return (c - 2) / (2 * c)


def _specs() -> tuple[MetricSpec, ...]:
    """The catalog rows, every fact named (a misplaced fact shows in review).

    Each row's last line, ``title`` and ``formula``, is display text that no code
    reads; mutation testing leaves those lines alone (pyproject, ``[tool.mutmut]``).
    """
    return (
        MetricSpec(name="tpr", kind=BINARY, function=binary.tpr, seeds=("004", "000", "002", "003"),
                   condition1=True, condition2=None, condition3=None, higher_is_better=True,
                   title="True positive rate", formula="TP/(TP+FN)"),
        MetricSpec(name="tnr", kind=BINARY, function=binary.tnr, seeds=("000", "002", "003"),
                   condition1=True, condition2=None, condition3=None, higher_is_better=True,
                   title="True negative rate", formula="TN/(TN+FP)"),
        MetricSpec(name="npv", kind=BINARY, function=binary.npv, seeds=("002",),
                   condition1=False, condition2=None, condition3=None, higher_is_better=True,
                   title="Negative predictive value", formula="TN/(TN+FN)"),
        MetricSpec(name="f1", kind=BINARY, function=binary.f1, seeds=("002", "003"),
                   condition1=False, condition2=None, condition3=None, higher_is_better=True,
                   title="F1 score", formula="2·precision·tpr/(precision+tpr)"),
        MetricSpec(name="balanced_accuracy", kind=BINARY, function=binary.balanced_accuracy, seeds=("000", "002", "004"),
                   condition1=True, condition2=None, condition3=None, higher_is_better=True,
                   title="Balanced accuracy", formula="(TPR+TNR)/2"),
        MetricSpec(name="informedness", kind=BINARY, function=binary.informedness, seeds=("002",),
                   condition1=True, condition2=None, condition3=None, higher_is_better=True,
                   title="Bookmaker informedness", formula="TPR+TNR−1"),
        MetricSpec(name="dominance", kind=BINARY, function=binary.dominance, seeds=("000",),
                   condition1=True, condition2=None, condition3=None, higher_is_better=None,
                   title="Dominance", formula="TPR−TNR"),
        MetricSpec(name="iba", kind=BINARY, function=binary.iba, seeds=("000",),
                   condition1=True, condition2=None, condition3=None, higher_is_better=True,
                   params=MappingProxyType({"alpha": 0.05, "squared": False}),
                   title="Index of balanced accuracy", formula="(1+α·dominance)·M"),
        MetricSpec(name="optimized_precision", kind=BINARY, function=binary.optimized_precision, seeds=("000",),
                   condition1=False, condition2=None, condition3=None, higher_is_better=True,
                   title="Optimized precision", formula="accuracy−|TNR−TPR|/(TNR+TPR)"),
        MetricSpec(name="ac_score", kind=BINARY, function=binary.ac_score, seeds=("002",),
                   condition1=True, condition2=None, condition3=None, higher_is_better=True,
                   title="AC-score", formula="2·TPR·TNR/(TPR+TNR)"),
        MetricSpec(name="hmnc", kind=BINARY, function=binary.hmnc, seeds=("003",),
                   condition1=False, condition2=None, condition3=None, higher_is_better=True,
                   title="HMNC", formula="TP·TN·n/((TP+TN)·P·N)"),
        MetricSpec(name="aurpc", kind=BINARY, function=binary.aurpc, seeds=("004",),
                   condition1=False, condition2=None, condition3=None, higher_is_better=True,
                   title="AURPC (discrete)", formula="(TPR+precision)/2"),
        MetricSpec(name="mprecision", kind=BINARY, function=binary.mprecision, seeds=("004",),
                   condition1=True, condition2=None, condition3=None, higher_is_better=True,
                   title="mPrecision", formula="TPR/(TPR+FPR)"),
        MetricSpec(name="maurpc", kind=BINARY, function=binary.maurpc, seeds=("004",),
                   condition1=True, condition2=None, condition3=None, higher_is_better=True,
                   title="mAURPC", formula="(TPR+mPrecision)/2"),
        MetricSpec(name="recall", kind=PER_CLASS, function=multiclass.recall, seeds=("001", "004"),
                   condition1=True, condition2=True, condition3=None, higher_is_better=True,
                   title="Recall of a class", formula="m_ii/n_i"),
        MetricSpec(name="precision", kind=PER_CLASS, function=multiclass.class_precision, seeds=("004", "001", "003"),
                   condition1=False, condition2=True, condition3=None, higher_is_better=True,
                   title="Precision of a class", formula="m_ii/k_i"),
        MetricSpec(name="acsa", kind=MULTICLASS, function=multiclass.acsa, seeds=("001", "004"),
                   condition1=True, condition2=True, condition3=True, higher_is_better=True,
                   holder_p=1.0,
                   title="Average class-specific accuracy", formula="(1/C)Σr_i"),
        MetricSpec(name="gmean", kind=MULTICLASS, function=multiclass.gmean, seeds=("004", "000", "001", "003"),
                   condition1=True, condition2=True, condition3=False, higher_is_better=True,
                   holder_p=0.0,
                   title="Geometric mean of recalls", formula="(Πr_i)^(1/C)"),
        MetricSpec(name="hmean", kind=MULTICLASS, function=multiclass.hmean, seeds=("001",),
                   condition1=True, condition2=True, condition3=False, higher_is_better=True,
                   holder_p=-1.0,
                   title="Harmonic mean of recalls", formula="C/Σ(1/r_i)"),
        MetricSpec(name="min_recall", kind=MULTICLASS, function=multiclass.min_recall, seeds=("001",),
                   condition1=True, condition2=True, condition3=False, higher_is_better=True,
                   holder_p=-math.inf,
                   title="Minimum recall", formula="min r_i"),
        MetricSpec(name="max_recall", kind=MULTICLASS, function=multiclass.max_recall, seeds=("001",),
                   condition1=True, condition2=True, condition3=True, higher_is_better=True,
                   holder_p=math.inf,
                   title="Maximum recall", formula="max r_i"),
        MetricSpec(name="holder", kind=MULTICLASS, function=multiclass.holder, seeds=("001",),
                   condition1=True, condition2=True, condition3=None, higher_is_better=True,
                   params=MappingProxyType({"p": REQUIRED}),
                   title="Hölder mean of recalls", formula="((1/C)Σr_i^p)^(1/p)"),
        MetricSpec(name="auroc_ovo", kind=MULTICLASS, function=multiclass.auroc_ovo, seeds=("004",),
                   condition1=True, condition2=False, condition3=None, higher_is_better=True,
                   lower_bound=_ovo_floor,
                   title="AUROC one-vs-one", formula="C/(2(C−1))·acsa+(C−2)/(2(C−1))"),
        MetricSpec(name="auroc_ova", kind=MULTICLASS, function=multiclass.auroc_ova, seeds=("004",),
                   condition1=False, condition2=False, condition3=None, higher_is_better=True,
                   lower_bound=_ova_floor,
                   title="AUROC one-vs-all", formula="(1/2C)Σ(1+r_i−(k_i−m_ii)/(n−n_i))"),
        MetricSpec(name="nauroc_ova", kind=MULTICLASS, function=multiclass.nauroc_ova, seeds=("004",),
                   condition1=False, condition2=True, condition3=None, higher_is_better=True,
                   title="Normalised AUROC one-vs-all", formula="(auroc_ova−λ_C)/(1−λ_C)"),
        MetricSpec(name="aurpc_ova", kind=MULTICLASS, function=multiclass.aurpc_ova, seeds=("004",),
                   condition1=False, condition2=True, condition3=None, higher_is_better=True,
                   title="AURPC one-vs-all", formula="(1/2C)Σ(m_ii/k_i+r_i)"),
        MetricSpec(name="maurpc_ova", kind=MULTICLASS, function=multiclass.maurpc_ova, seeds=("004",),
                   condition1=True, condition2=True, condition3=True, higher_is_better=True,
                   title="mAURPC one-vs-all", formula="(1/2C)Σ((m_ii/n_i)/(Σ_j m_ji/n_j)+r_i)"),
        MetricSpec(name="accuracy", kind=MULTICLASS, function=multiclass.accuracy, seeds=("001", "003"),
                   condition1=False, condition2=True, condition3=True, higher_is_better=True,
                   title="Accuracy", formula="Σm_ii/n"),
        MetricSpec(name="mcc", kind=MULTICLASS, function=multiclass.mcc, seeds=("002", "003"),
                   condition1=False, condition2=None, condition3=None, higher_is_better=True,
                   title="Matthews correlation coefficient", formula="Gorodkin's R_K"),
        MetricSpec(name="kappa", kind=MULTICLASS, function=multiclass.kappa, seeds=("003",),
                   condition1=False, condition2=None, condition3=None, higher_is_better=True,
                   title="Cohen's kappa", formula="(p_o−p_e)/(1−p_e)"),
        MetricSpec(name="macro_f1", kind=MULTICLASS, function=multiclass.macro_f1, seeds=("002",),
                   condition1=False, condition2=None, condition3=None, higher_is_better=True,
                   title="Macro-averaged F1", formula="(1/C)Σ2m_ii/(n_i+k_i)"),
    )


_CATALOG: Mapping[str, MetricSpec] = MappingProxyType({s.name: s for s in _specs()})
_SCORE_CATALOG: Mapping[str, MetricSpec] = MappingProxyType({s.name: s for s in score_specs()})
_ALL: Mapping[str, MetricSpec] = MappingProxyType({**_CATALOG, **_SCORE_CATALOG})


def catalog(needs: str = CONFUSION) -> Mapping[str, MetricSpec]:
    """Every metric spec by canonical name (read-only): the confusion-matrix metrics, or with ``"scores"`` the
    score metrics (a separate table, so that confusion consumers never meet a metric they cannot compute)."""
    if needs not in NEEDS:
        raise ValueError(f"needs must be one of {NEEDS}, got {needs!r}")
    return _CATALOG if needs == CONFUSION else _SCORE_CATALOG


def names(needs: str = CONFUSION) -> tuple[str, ...]:
    """The canonical metric names of one table (``catalog(needs)``), in catalog order."""
    return tuple(catalog(needs))


def applicable(k: int) -> tuple[str, ...]:
    """The metric names defined for a K×K matrix.

    >>> "tpr" in applicable(2), "tpr" in applicable(3)
    (True, False)
    """
    return tuple(name for name, s in _CATALOG.items() if s.applies_to(k))


def spec(name: str) -> MetricSpec:
    """The spec of ``name`` (either table); an unknown name raises listing the valid ones."""
    try:
        return _ALL[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown metric {name!r}; valid names: {', '.join(_ALL)}"
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
    if s.needs != CONFUSION:
        raise ValueError(f"metric {name!r} reads the model's scores, not a confusion matrix: use "
                         f"compute_scores({name!r}, tally) with a score tally (score_bins.tally)")
    c = Confusion.of(cm)
    if not s.applies_to(c.k):
        valid = ", ".join(applicable(c.k)) or "none (K must be >= 2)"
        what = "is binary-only and does not apply" if s.binary_only else "does not apply"
        raise ValueError(f"metric {name!r} {what} to K={c.k}; valid for K={c.k}: {valid}")
    if s.kind != MULTICLASS:
        positive = check_positive(positive, c.k)
    return s.evaluate(c, positive=positive, **params)


def compute_scores(name: str, tally: Any, *, positive: int = 1, priors: Any = None, **params: Any) -> float:
    """Compute score metric ``name`` on a window's score tally ``(hist, sums, top)`` (``score_bins.tally``):
    binary about class ``positive``; as read, or at the class mix ``priors`` (the prior-corrected value).
    ``params`` carries metric parameters (``multi_class`` for ``roc_auc``). Undefined values are NaN.

    >>> import numpy as np
    >>> from streammon.metrics.score_bins import tally
    >>> t = tally(np.array([0, 0, 0, 1]), np.array([0.1, 0.6, 0.3, 0.8]), 2)
    >>> compute_scores("average_precision", t), compute_scores("average_precision", t, priors=[0.5, 0.5])
    (1.0, 1.0)
    >>> compute_scores("acsa", t)
    Traceback (most recent call last):
    ...
    ValueError: metric 'acsa' reads a confusion matrix, not scores; valid score metrics: roc_auc, average_precision, brier, log_loss, ece
    """
    s = spec(name)
    if s.needs != SCORES:
        raise ValueError(f"metric {name!r} reads a confusion matrix, not scores; valid score metrics: "
                         f"{', '.join(_SCORE_CATALOG)}")
    return s.evaluate_scores(tally, positive=positive, priors=priors, **params)
