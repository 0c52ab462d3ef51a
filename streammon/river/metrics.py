"""Every catalog metric as a river metric: the classes behind ``streammon.river``.

Binary metrics count TN/FP/FN/TP against ``pos_val`` (any label); multi-class metrics
count an integer ``ConfusionCounts``. A ``predict_proba_one`` dict given as ``y_pred`` counts as its arg-max
(``decision``). Both feed ``streammon.metrics.compute`` — the
classes only route (STYLE.md, habit 1). Import them from ``streammon.river``.

>>> metric = ACSA()
>>> metric.update("ham", "ham")
>>> metric.get()  # recall over the classes seen as true, as scikit-learn's balanced_accuracy_score
1.0
>>> metric.update("spam", "ham", w=np.int64(3))
>>> metric
ACSA: 50.00%
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from river.metrics import base as metrics_base

from streammon.counting.counts import ConfusionCounts
from streammon.metrics import compute, spec
from streammon.river.inputs import MAX_WEIGHT as MAX_WEIGHT  # noqa: PLC0414 (re-exported: moved there)
from streammon.river.inputs import as_count as as_count  # noqa: PLC0414 (re-exported: moved there)
from streammon.river.inputs import decision as decision  # noqa: PLC0414 (re-exported: moved there)
from streammon.river.inputs import no_prediction as no_prediction  # noqa: PLC0414 (re-exported: moved there)


class CatalogDirection:
    """``bigger_is_better`` from the catalog entry of ``self.metric`` (no direction, e.g. dominance: False)."""

    metric: str

    @property
    def bigger_is_better(self) -> bool:
        return bool(spec(self.metric).higher_is_better)  # either table: MonitorMetric reads score metrics too


class BinaryCatalogMetric(CatalogDirection, metrics_base.BinaryMetric):
    """A binary catalog metric over integer TP/FN/FP/TN counts; ``pos_val`` may be any label."""

    metric = ""

    def __init__(self, pos_val: Any = True) -> None:
        self.pos_val = pos_val
        self._cells = [0, 0, 0, 0]  # [TN, FP, FN, TP]: index 2·(true is positive) + (pred is positive)

    def _cell(self, y_true: Any, y_pred: Any) -> int:
        return 2 * bool(y_true == self.pos_val) + bool(y_pred == self.pos_val)

    def update(self, y_true: Any, y_pred: Any, w: Any = 1) -> None:
        if no_prediction(y_pred):
            return
        self._cells[self._cell(y_true, decision(y_pred))] += as_count(w)

    def revert(self, y_true: Any, y_pred: Any, w: Any = 1) -> None:
        if no_prediction(y_pred):
            return
        cell, count = self._cell(y_true, decision(y_pred)), as_count(w)
        if self._cells[cell] < count:
            raise ValueError(f"cannot revert ({y_true!r}, {y_pred!r}): it was not counted")
        self._cells[cell] -= count

    def _params(self) -> dict[str, Any]:
        return {}

    def get(self) -> float:
        tn, fp, fn, tp = self._cells
        return compute(self.metric, [[tn, fp], [fn, tp]], positive=1, **self._params())


class MultiClassCatalogMetric(CatalogDirection, metrics_base.MultiClassMetric):
    """A multi-class catalog metric over an integer ``ConfusionCounts``."""

    metric = ""

    def __init__(self) -> None:
        self._counts = ConfusionCounts()

    def update(self, y_true: Any, y_pred: Any, w: Any = 1) -> None:
        if not no_prediction(y_pred):
            self._counts.add(y_true, decision(y_pred), count=as_count(w))

    def revert(self, y_true: Any, y_pred: Any, w: Any = 1) -> None:
        if not no_prediction(y_pred):
            self._counts.evict(y_true, decision(y_pred), count=as_count(w))

    def _params(self) -> dict[str, Any]:
        return {}

    def get(self) -> float:
        """The metric over the labels that still have counts: after ``revert`` no ghost class remains.

        While one label has been seen, it is padded with an absent class (no true and no
        predicted sample), which the catalog leaves out: one correct prediction gives an
        accuracy and an ACSA of 1, as scikit-learn; a real 0/0 (MCC, kappa, AUROC) stays NaN.
        """
        m = self._counts.matrix
        live = (m.sum(axis=0) + m.sum(axis=1)) > 0
        block = m[np.ix_(live, live)]
        if len(block) < 2:
            block = np.pad(block, (0, 2 - len(block)))
        return compute(self.metric, block, **self._params())


# -- binary metrics (and the per-class recall and precision of pos_val) ---------------------------


class TPR(BinaryCatalogMetric):
    """True positive rate TP/(TP+FN)."""

    metric = "tpr"


class TNR(BinaryCatalogMetric):
    """True negative rate TN/(TN+FP)."""

    metric = "tnr"


class NPV(BinaryCatalogMetric):
    """Negative predictive value TN/(TN+FN)."""

    metric = "npv"


class F1(BinaryCatalogMetric):
    """F1 of the positive class."""

    metric = "f1"


class BalancedAccuracy(BinaryCatalogMetric):
    """(TPR + TNR)/2."""

    metric = "balanced_accuracy"


class Informedness(BinaryCatalogMetric):
    """TPR + TNR − 1."""

    metric = "informedness"


class Dominance(BinaryCatalogMetric):
    """TPR − TNR (no better direction; ``bigger_is_better`` is False)."""

    metric = "dominance"


class OptimizedPrecision(BinaryCatalogMetric):
    """Accuracy − |TNR − TPR|/(TNR + TPR)."""

    metric = "optimized_precision"


class ACScore(BinaryCatalogMetric):
    """AC-score 2·TPR·TNR/(TPR + TNR) (seed 002)."""

    metric = "ac_score"


class HMNC(BinaryCatalogMetric):
    """HMNC (seed 003)."""

    metric = "hmnc"


class AURPC(BinaryCatalogMetric):
    """Discrete AURPC (TPR + precision)/2."""

    metric = "aurpc"


class MPrecision(BinaryCatalogMetric):
    """mPrecision TPR/(TPR + FPR) (seed 004): precision at balanced priors."""

    metric = "mprecision"


class MAURPC(BinaryCatalogMetric):
    """mAURPC (TPR + mPrecision)/2 (seed 004)."""

    metric = "maurpc"


class Recall(BinaryCatalogMetric):
    """Recall of the class ``pos_val`` (any number of classes)."""

    metric = "recall"


class Precision(BinaryCatalogMetric):
    """Precision of the class ``pos_val`` (any number of classes)."""

    metric = "precision"


class IBA(BinaryCatalogMetric):
    """Index of balanced accuracy (1 + α·dominance)·M (seed 000; ``squared``: M = G-mean²)."""

    metric = "iba"

    def __init__(self, pos_val: Any = True, alpha: float = 0.05, squared: bool = False) -> None:
        super().__init__(pos_val)
        self.alpha = alpha
        self.squared = squared

    def _params(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "squared": self.squared}


# -- multi-class metrics ------------------------------------------------------------------------------


class ACSA(MultiClassCatalogMetric):
    """Average class-specific accuracy (mean recall over the classes seen as true)."""

    metric = "acsa"


class GMean(MultiClassCatalogMetric):
    """Geometric mean of recalls."""

    metric = "gmean"


class HMean(MultiClassCatalogMetric):
    """Harmonic mean of recalls."""

    metric = "hmean"


class MinRecall(MultiClassCatalogMetric):
    """Minimum recall."""

    metric = "min_recall"


class MaxRecall(MultiClassCatalogMetric):
    """Maximum recall."""

    metric = "max_recall"


class HolderMean(MultiClassCatalogMetric):
    """Hölder mean of recalls with exponent ``p`` (seed 001)."""

    metric = "holder"

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def _params(self) -> dict[str, Any]:
        return {"p": self.p}


class AUROCOVO(MultiClassCatalogMetric):
    """AUROC one-vs-one (seed 004)."""

    metric = "auroc_ovo"


class AUROCOVA(MultiClassCatalogMetric):
    """AUROC one-vs-all (seed 004)."""

    metric = "auroc_ova"


class NAUROCOVA(MultiClassCatalogMetric):
    """Normalised AUROC one-vs-all (seed 004)."""

    metric = "nauroc_ova"


class AURPCOVA(MultiClassCatalogMetric):
    """AURPC one-vs-all (seed 004)."""

    metric = "aurpc_ova"


class MAURPCOVA(MultiClassCatalogMetric):
    """mAURPC one-vs-all (seed 004, Definition 7)."""

    metric = "maurpc_ova"


class Accuracy(MultiClassCatalogMetric):
    """Accuracy."""

    metric = "accuracy"


class MCC(MultiClassCatalogMetric):
    """Matthews correlation coefficient (multi-class)."""

    metric = "mcc"


class CohenKappa(MultiClassCatalogMetric):
    """Cohen's kappa."""

    metric = "kappa"


class MacroF1(MultiClassCatalogMetric):
    """Mean per-class F1 over the classes seen as true."""

    metric = "macro_f1"


METRIC_CLASSES: Mapping[str, type[BinaryCatalogMetric] | type[MultiClassCatalogMetric]] = {
    cls.metric: cls
    for cls in (TPR, TNR, NPV, F1, BalancedAccuracy, Informedness, Dominance, IBA, OptimizedPrecision, ACScore,
                HMNC, AURPC, MPrecision, MAURPC, Recall, Precision, ACSA, GMean, HMean, MinRecall, MaxRecall,
                HolderMean, AUROCOVO, AUROCOVA, NAUROCOVA, AURPCOVA, MAURPCOVA, Accuracy, MCC, CohenKappa, MacroF1)
}


def make(name: str, **params: Any) -> BinaryCatalogMetric | MultiClassCatalogMetric:
    """The river metric for catalog metric ``name`` (``pos_val``, ``p``, ``alpha``, ``squared`` as params).

    >>> make("gmean"), make("precision", pos_val="spam").pos_val
    (GMean: nan%, 'spam')
    """
    try:
        cls = METRIC_CLASSES[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; valid names: {', '.join(METRIC_CLASSES)}") from None
    return cls(**params)
