"""river integration: every catalog metric as a river metric, and a whole Monitor inside a river loop.

Each class subclasses river's ``metrics.base.BinaryMetric`` or ``MultiClassMetric``, so
``+`` composition, ``clone()``, ``works_with`` and ``evaluate.progressive_val_score``
behave as river users expect. Differences from river's own metrics, on purpose:

- counts are integers and ``revert`` is exact (evicting what was never added raises),
  so ``utils.Rolling(GMean, window_size=...)`` holds exactly the tail — no 2.8e-17
  leftovers, no ghost class;
- ``pos_val`` works for any label (``Precision(pos_val="spam")``); every other label is
  the negative class;
- undefined values are NaN, not 0;
- sample weights must be whole numbers (they are counts).

>>> from river import datasets, evaluate, linear_model, preprocessing
>>> model = preprocessing.StandardScaler() | linear_model.LogisticRegression()
>>> evaluate.progressive_val_score(datasets.Phishing(), model, GMean() + MPrecision(pos_val=True))
GMean: 89.29%
MPrecision: 89.20%
>>> metric = make("holder", p=-1)
>>> for y, p in [("a", "a"), ("b", "a"), ("b", "b")]:
...     metric.update(y, p)
>>> metric
HolderMean: 66.67%
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from river import base as river_base
from river.metrics import base as metrics_base

from streammon.counting.counts import ConfusionCounts
from streammon.counting.windows import Window
from streammon.findings.report import Report
from streammon.metrics import catalog, compute
from streammon.monitor import Monitor


def _count(w: Any) -> int:
    """A sample weight as a count: a whole number >= 0."""
    if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0 or w != int(w):
        raise ValueError(f"streammon metrics count samples: w must be a whole number >= 0, got {w!r}")
    return int(w)


class BinaryCatalogMetric(metrics_base.BinaryMetric):
    """A binary catalog metric over integer TP/FN/FP/TN counts; ``pos_val`` may be any label."""

    metric: ClassVar[str] = ""

    def __init__(self, pos_val: Any = True) -> None:
        self.pos_val = pos_val
        self._cells = [0, 0, 0, 0]  # [TN, FP, FN, TP]: index 2·(true is positive) + (pred is positive)

    def _cell(self, y_true: Any, y_pred: Any) -> int:
        return 2 * bool(y_true == self.pos_val) + bool(y_pred == self.pos_val)

    def update(self, y_true: Any, y_pred: Any, w: Any = 1) -> None:
        self._cells[self._cell(y_true, y_pred)] += _count(w)

    def revert(self, y_true: Any, y_pred: Any, w: Any = 1) -> None:
        cell, count = self._cell(y_true, y_pred), _count(w)
        if self._cells[cell] < count:
            raise ValueError(f"cannot revert ({y_true!r}, {y_pred!r}): it was not counted")
        self._cells[cell] -= count

    def _params(self) -> dict[str, Any]:
        return {}

    def get(self) -> float:
        tn, fp, fn, tp = self._cells
        return compute(self.metric, [[tn, fp], [fn, tp]], positive=1, **self._params())

    @property
    def bigger_is_better(self) -> bool:
        return bool(catalog()[self.metric].higher_is_better)


class MultiClassCatalogMetric(metrics_base.MultiClassMetric):
    """A multi-class catalog metric over an integer ``ConfusionCounts``."""

    metric: ClassVar[str] = ""

    def __init__(self) -> None:
        self._counts = ConfusionCounts()

    def update(self, y_true: Any, y_pred: Any, w: Any = 1) -> None:
        self._counts.add(y_true, y_pred, count=_count(w))

    def revert(self, y_true: Any, y_pred: Any, w: Any = 1) -> None:
        self._counts.evict(y_true, y_pred, count=_count(w))

    def _params(self) -> dict[str, Any]:
        return {}

    def get(self) -> float:
        """The metric over the labels that still have counts: after ``revert`` no ghost class remains."""
        m = self._counts.matrix
        live = (m.sum(axis=0) + m.sum(axis=1)) > 0
        if live.sum() < 2:
            return math.nan
        return compute(self.metric, m[np.ix_(live, live)], **self._params())

    @property
    def bigger_is_better(self) -> bool:
        return bool(catalog()[self.metric].higher_is_better)


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


class MonitorMetric(metrics_base.MultiClassMetric):
    """A whole ``Monitor`` as one river metric: windows, flags and alerts in a river loop.

    ``get()`` is ``metric`` in ``window`` (default: the first window); ``report()``
    gives everything else. Windows are templates: each instance (and each
    ``clone()``) counts in fresh copies. ``revert`` is not supported — the monitor's
    own ``Sliding``/``Timed`` windows do what ``utils.Rolling`` would.

    >>> from streammon import Sliding
    >>> m = MonitorMetric(windows=[Sliding(100)], reference={True: 1, False: 9}, metric="gmean")
    >>> for y, p in [(True, True), (False, False), (True, False)]:
    ...     m.update(y, p)
    >>> round(m.get(), 3), m.report().windows["sliding_100"].n
    (0.707, 3)
    """

    def __init__(
        self,
        windows: Sequence[Window] | None = None,
        reference: Mapping[Any, Any] | None = None,
        metric: str = "acsa",
        window: str | None = None,
        **monitor_options: Any,
    ) -> None:
        if metric not in catalog():
            raise ValueError(f"unknown metric {metric!r}; valid names: {', '.join(catalog())}")
        self.windows = windows
        self.reference = reference
        self.metric = metric
        self.window = window
        self.monitor_options = monitor_options
        fresh = None if windows is None else [w.fresh() for w in windows]
        self.monitor = Monitor(fresh, reference=reference, **monitor_options)
        self._window = window or self.monitor.window_names[0]
        if self._window not in self.monitor.window_names:
            raise ValueError(f"unknown window {window!r}; the monitor has {self.monitor.window_names}")

    def update(self, y_true: Any, y_pred: Any, w: Any = 1) -> None:
        count = _count(w)
        if count == 1:
            self.monitor.update(y_true, y_pred)
        elif count:
            self.monitor.update_many([y_true] * count, [y_pred] * count)

    def revert(self, y_true: Any, y_pred: Any, w: Any = 1) -> None:
        raise NotImplementedError("MonitorMetric keeps its own windows: use Sliding/Timed instead of utils.Rolling")

    def report(self) -> Report:
        """The monitor's full report: every window's scores, flags, intervals, and the alerts."""
        return self.monitor.report()

    def get(self) -> float:
        return float(self.report().windows[self._window].scores.get(self.metric, math.nan))

    @property
    def bigger_is_better(self) -> bool:
        return bool(catalog()[self.metric].higher_is_better)

    def works_with(self, model: river_base.Estimator) -> bool:
        return isinstance(model, river_base.Classifier)
