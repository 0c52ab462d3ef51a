"""river integration: every catalog metric as a river metric, and a whole Monitor inside a river loop.

Each class subclasses river's ``metrics.base.BinaryMetric`` or ``MultiClassMetric``, so
``+`` composition, ``clone()``, ``works_with`` and ``evaluate.progressive_val_score``
behave as river users expect. Differences from river's own metrics, on purpose:

- counts are integers and ``revert`` is exact (evicting what was never added raises),
  so ``utils.Rolling(GMean, window_size=...)`` holds exactly the tail — no 2.8e-17
  leftovers, no ghost class;
- ``pos_val`` works for any label (``Precision(pos_val="spam")``); every other label is
  the negative class;
- undefined values (a real 0/0: MCC of a constant stream, an empty metric) are NaN, not 0;
  a single correct prediction reads as scikit-learn says (accuracy and ACSA 1.0);
- sample weights ``w`` are counts: whole numbers in [0, 2**53], Python or numpy ints or
  floats; a fractional, negative or non-finite ``w`` raises ValueError and counts nothing.

The metric classes live in ``streammon.river.metrics``; import them from here.

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
import time
from collections.abc import Mapping, Sequence
from numbers import Real
from typing import Any

from river import base as river_base
from river.metrics import base as metrics_base

from streammon.counting.windows import Window
from streammon.findings.report import Report
from streammon.metrics import catalog
from streammon.monitor import Monitor
from streammon.river.metrics import (
    ACSA,
    AUROCOVA,
    AUROCOVO,
    AURPC,
    AURPCOVA,
    F1,
    HMNC,
    IBA,
    MAURPC,
    MAURPCOVA,
    MCC,
    METRIC_CLASSES,
    NAUROCOVA,
    NPV,
    TNR,
    TPR,
    Accuracy,
    ACScore,
    BalancedAccuracy,
    BinaryCatalogMetric,
    CatalogDirection,
    CohenKappa,
    Dominance,
    GMean,
    HMean,
    HolderMean,
    Informedness,
    MacroF1,
    MaxRecall,
    MinRecall,
    MPrecision,
    MultiClassCatalogMetric,
    OptimizedPrecision,
    Precision,
    Recall,
    as_count,
    decision,
    make,
    no_prediction,
)

__all__ = [
    "ACSA", "AUROCOVA", "AUROCOVO", "AURPC", "AURPCOVA", "F1", "HMNC", "IBA", "MAURPC", "MAURPCOVA", "MCC",
    "METRIC_CLASSES", "NAUROCOVA", "NPV", "TNR", "TPR", "ACScore", "Accuracy", "BalancedAccuracy",
    "BinaryCatalogMetric", "CohenKappa", "Dominance", "GMean", "HMean", "HolderMean", "Informedness", "MPrecision",
    "MacroF1", "MaxRecall", "MinRecall", "MonitorMetric", "MultiClassCatalogMetric", "OptimizedPrecision",
    "Precision", "Recall", "make",
]


class MonitorMetric(CatalogDirection, metrics_base.MultiClassMetric):
    """A whole ``Monitor`` as one river metric: windows, flags and alerts in a river loop.

    ``get()`` is ``metric`` in ``window`` (default: the first window); ``report()``
    gives everything else. Windows are templates: each instance (and each
    ``clone()``) counts in fresh copies. ``revert`` is not supported — the monitor's
    own ``Sliding``/``Timed`` windows do what ``utils.Rolling`` would.

    ``scores=True``: the monitor keeps the model's scores too (``WindowReport.score_tally``):
    ``requires_labels`` is then False, so ``evaluate.progressive_val_score`` passes
    ``predict_proba_one`` dicts; each counts as its arg-max (the decision, as ``predict_one``) with
    its probabilities, normalised to sum to 1, as the score — of the positive class for a binary
    monitor, else one per class in the order of ``Monitor.labels``. The classes must be known up
    front (``reference=``; for a binary model it also names the positive class, its minority),
    and a class the dict gives a probability but the monitor does not know is refused
    (``ValueError``), as is a probability that is not a finite number >= 0 or a dict whose probabilities sum
    to 0: nothing is counted. Labels (not dicts) still count, without a score.

    ``pickle`` and ``copy.deepcopy`` carry the monitor as its saved state
    (``streammon.state``: the monitor's lock is not copied, a fresh one is made), so
    labels must be str, int, float or bool, as for ``Monitor.save``; the copy continues
    exactly where the original was.

    >>> from streammon import Sliding
    >>> m = MonitorMetric(windows=[Sliding(100)], reference={True: 1, False: 9}, metric="gmean")
    >>> for y, p in [(True, True), (False, False), (True, False)]:
    ...     m.update(y, p)
    >>> round(m.get(), 3), m.report().windows["sliding_100"].n
    (0.707, 3)
    >>> s = MonitorMetric(reference={True: 1, False: 9}, scores=True)
    >>> s.update(True, {True: 0.8, False: 0.2}); s.update(False, {True: 0.6, False: 0.4})
    >>> w = s.report().windows["cumulative"]
    >>> w.confusion.to_dict(), w.n_scored
    ({True: {True: 1}, False: {True: 1}}, 2)
    """

    def __init__(
        self,
        windows: Sequence[Window] | None = None,
        reference: Mapping[Any, Any] | None = None,
        metric: str = "acsa",
        window: str | None = None,
        *,
        scores: bool = False,
        **monitor_options: Any,
    ) -> None:
        if not isinstance(scores, bool):
            raise TypeError(f"scores must be True or False, got {scores!r}")
        if scores and reference is None:
            raise ValueError("MonitorMetric(scores=True) needs reference=: the classes (the columns of the scores) "
                             "and, for a binary model, its positive class must be known before the first score")
        valid = (*catalog(), *catalog("scores")) if scores else tuple(catalog())
        if metric not in valid:  # the score metrics (roc_auc, ...) read predict_proba_one: scores=True
            raise ValueError(f"unknown metric {metric!r}; valid names{' with scores=True' if scores else ''}: "
                             f"{', '.join(valid)}")
        self.windows = windows
        self.reference = reference
        self.metric = metric
        self.window = window
        self.monitor_options = monitor_options
        self.scores = scores
        fresh = None if windows is None else [w.fresh() for w in windows]
        self.monitor = Monitor(fresh, reference=reference, **monitor_options)
        self._window = window or self.monitor.window_names[0]
        if self._window not in self.monitor.window_names:
            raise ValueError(f"unknown window {window!r}; the monitor has {self.monitor.window_names}")

    @property
    def requires_labels(self) -> bool:
        """False with ``scores=True``: river then passes ``predict_proba_one`` dicts."""
        return not self.scores

    def _score(self, proba: dict[Any, Any]) -> Any:
        """The monitor's score of a ``predict_proba_one`` dict (see the class docstring)."""
        labels = self.monitor.labels
        unknown = [label for label in proba if label not in labels]
        if unknown:
            raise ValueError(f"predict_proba_one gave probabilities of {unknown!r:.80}, which are not classes of "
                             f"the monitor {list(labels)!r:.200}: give every class in reference=")
        bad = [v for v in proba.values()
               if isinstance(v, bool) or not isinstance(v, Real) or not (math.isfinite(v) and float(v) >= 0)]
        if bad:  # a NaN made the sum NaN and the sample was counted silently without a score
            raise ValueError(f"predict_proba_one gave {proba!r:.200}: each probability must be a finite number "
                             f">= 0, got {bad[0]!r}")
        total = float(sum(proba.values()))
        if not total > 0:
            raise ValueError(f"predict_proba_one gave {proba!r:.200}: the probabilities sum to 0, so they cannot "
                             "be normalised into a score")
        if len(labels) == 2:
            positive = self.monitor.positive
            return float(proba.get(positive, 0.0)) / total
        return [float(proba.get(label, 0.0)) / total for label in labels]

    def update(self, y_true: Any, y_pred: Any, w: Any = 1) -> None:
        if no_prediction(y_pred):  # predict_one before any learning: skipped, as river's progressive validation
            return
        count = as_count(w)
        score = self._score(y_pred) if self.scores and isinstance(y_pred, dict) else None
        y_pred = decision(y_pred)
        if count == 1:
            self.monitor.update(y_true, y_pred, y_score=score)
        elif count:
            self.monitor.update_many([y_true] * count, [y_pred] * count,
                                     y_score=None if score is None else [score] * count)

    def revert(self, y_true: Any, y_pred: Any, w: Any = 1) -> None:
        raise NotImplementedError("MonitorMetric keeps its own windows: use Sliding/Timed instead of utils.Rolling")

    def report(self) -> Report:
        """The monitor's full report: every window's scores, flags, intervals, and the alerts."""
        return self.monitor.report()

    def get(self) -> float:
        return float(self.report().windows[self._window].scores.get(self.metric, math.nan))

    def works_with(self, model: river_base.Estimator) -> bool:
        return isinstance(model, river_base.Classifier)

    def __getstate__(self) -> dict[str, Any]:
        """Everything but the live monitor, which travels as its state text (it holds a lock)."""
        return {**self.__dict__, "monitor": self.monitor.dumps()}

    def __setstate__(self, saved: dict[str, Any]) -> None:
        clock = saved["monitor_options"].get("clock", time.time)
        self.__dict__.update({**saved, "monitor": Monitor.loads(saved["monitor"], clock=clock)})
