"""Pure metric math: the catalog, binary and multi-class formulas, Hölder bounds,
prior correction, the label-free class-mix estimate. No state, no I/O.

>>> from streammon import metrics
>>> round(metrics.compute("acsa", [[8, 2], [1, 9]]), 12)
0.85
>>> metrics.holder_bounds(1, 2)
(0.5, 0.75)
"""

from streammon.metrics.confusion import Confusion, safe_divide
from streammon.metrics.holder import competitiveness, holder_bounds, holder_mean
from streammon.metrics.label_shift import PriorBaseline, PriorEstimate, estimate_priors, prior_baseline
from streammon.metrics.prior import normalise_priors, reweight
from streammon.metrics.specs import (
    MetricSpec,
    applicable,
    catalog,
    check_positive,
    compute,
    names,
    spec,
)

__all__ = [
    "Confusion",
    "MetricSpec",
    "PriorBaseline",
    "PriorEstimate",
    "applicable",
    "catalog",
    "check_positive",
    "competitiveness",
    "compute",
    "estimate_priors",
    "holder_bounds",
    "holder_mean",
    "names",
    "normalise_priors",
    "prior_baseline",
    "reweight",
    "safe_divide",
    "spec",
]
