"""Pure metric math: the catalog, binary and multi-class formulas, Hölder bounds,
prior correction, the label-free class-mix estimate, and the score metrics (ROC AUC, average
precision, Brier score, log loss, ECE) of a window's score tally — ROC AUC and average precision from the
window's exact scores where it holds at most ``EXACT_RANKING_LIMIT`` scored samples. No state, no I/O.

>>> from streammon import metrics
>>> round(metrics.compute("acsa", [[8, 2], [1, 9]]), 12)
0.85
>>> metrics.holder_bounds(1, 2)
(0.5, 0.75)
>>> import numpy as np
>>> t = metrics.score_tally(np.array([0, 0, 1, 1]), np.array([0.1, 0.7, 0.4, 0.9]), 2)
>>> metrics.roc_auc(t), metrics.compute_scores("roc_auc", t)
(0.75, 0.75)
"""

from streammon.metrics.confusion import Confusion, safe_divide
from streammon.metrics.exact_ranking import EXACT_RANKING_LIMIT
from streammon.metrics.holder import competitiveness, holder_bounds, holder_mean
from streammon.metrics.label_shift import PriorBaseline, PriorEstimate, estimate_priors, prior_baseline
from streammon.metrics.prior import normalise_priors, reweight
from streammon.metrics.score_calibration import brier, ece, log_loss
from streammon.metrics.score_input import score_tally
from streammon.metrics.score_ranking import (
    average_precision,
    average_precision_bin_error,
    average_precision_interval,
    roc_auc,
    roc_auc_bin_error,
    roc_auc_interval,
)
from streammon.metrics.specs import (
    MetricSpec,
    applicable,
    catalog,
    check_positive,
    compute,
    compute_scores,
    names,
    spec,
)

__all__ = [
    "EXACT_RANKING_LIMIT",
    "Confusion",
    "MetricSpec",
    "PriorBaseline",
    "PriorEstimate",
    "applicable",
    "average_precision",
    "average_precision_bin_error",
    "average_precision_interval",
    "brier",
    "catalog",
    "check_positive",
    "competitiveness",
    "compute",
    "compute_scores",
    "ece",
    "estimate_priors",
    "holder_bounds",
    "holder_mean",
    "log_loss",
    "names",
    "normalise_priors",
    "prior_baseline",
    "reweight",
    "roc_auc",
    "roc_auc_bin_error",
    "roc_auc_interval",
    "safe_divide",
    "score_tally",
    "spec",
]
