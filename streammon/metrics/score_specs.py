"""The score metrics' rows of the catalog (``needs="scores"``; METRICS.md, "Scores"): metrics of a model's
probabilities, read from a window's score tally (``score_bins``) — a table apart from the confusion-matrix
metrics of ``specs``, so that no confusion consumer meets a metric it cannot compute.

``auroc``/``auroc_ovo``/``auroc_ova`` of the confusion table are the seed papers' single-threshold indices
(at K = 2 ``auroc_ova`` equals balanced accuracy); ``roc_auc`` here is the area under the scores' ROC curve.

>>> [row.name for row in score_specs()]
['roc_auc', 'average_precision', 'brier', 'log_loss', 'ece']
"""

from __future__ import annotations

from types import MappingProxyType

from streammon.metrics import score_calibration, score_ranking
from streammon.metrics.metric_spec import MULTICLASS, SCORES, MetricSpec


def score_specs() -> tuple[MetricSpec, ...]:
    """The score metrics' rows (``needs="scores"``; METRICS.md, "Scores"). Condition 2: ROC AUC, log loss and
    ECE keep their bounds ([0, 1], [0, −ln 1e-15], [0, 1]) at every K; the Brier score's range is [0, 1] at K = 2
    (scikit-learn's binary form) and [0, 2] at K > 2; average precision's floor (the worst ranking) moves
    with each class's share. Condition 3: the macro ROC AUC averages per-class (per-pair) values, so one class
    ranked backwards leaves the others' information; not established for the rest."""
    return (
        MetricSpec(name="roc_auc", kind=MULTICLASS, needs=SCORES, function=score_ranking.roc_auc, seeds=(),
                   sources=("Hanley & McNeil 1982", "Hand & Till 2001", "DeLong et al. 1988"),
                   condition1=True, condition2=True, condition3=True, higher_is_better=True,
                   params=MappingProxyType({"multi_class": "ovo"}), choices=MappingProxyType({"multi_class": ("ovo", "ovr")}),
                   title="ROC AUC of the scores", formula="P(s⁺>s⁻)+½P(s⁺=s⁻); K>2: Hand & Till's M (ovo) or macro one-vs-rest (ovr)"),
        MetricSpec(name="average_precision", kind=MULTICLASS, needs=SCORES, function=score_ranking.average_precision, seeds=(),
                   sources=("scikit-learn average_precision_score", "Davis & Goadrich 2006"),
                   condition1=False, condition2=False, condition3=None, higher_is_better=True,
                   title="Average precision", formula="Σ_n(R_n−R_{n−1})P_n; K>2: macro one-vs-rest"),
        MetricSpec(name="brier", kind=MULTICLASS, needs=SCORES, function=score_calibration.brier, seeds=(),
                   sources=("Brier 1950", "scikit-learn brier_score_loss"),
                   condition1=False, condition2=False, condition3=None, higher_is_better=False,
                   title="Brier score", formula="mean (s−y)²; K>2: mean Σ_k(s_k−1[y=k])²"),
        MetricSpec(name="log_loss", kind=MULTICLASS, needs=SCORES, function=score_calibration.log_loss, seeds=(),
                   sources=("scikit-learn log_loss",),
                   condition1=False, condition2=True, condition3=None, higher_is_better=False,
                   title="Log loss", formula="−mean ln s_y, s clipped to [1e-15, 1−1e-15]"),
        MetricSpec(name="ece", kind=MULTICLASS, needs=SCORES, function=score_calibration.ece, seeds=(),
                   sources=("Guo et al. 2017", "Naeini et al. 2015"),
                   condition1=False, condition2=True, condition3=None, higher_is_better=False,
                   title="Expected calibration error", formula="Σ_b(n_b/n)·|acc_b−conf_b|, 15 equal-width top-label bins"),
    )
