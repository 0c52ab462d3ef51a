"""``LabelFreeEstimate``: a window's class mix read from its predictions alone, as a report holds it.

The numbers come from ``streammon.metrics.estimate_priors`` (the window's predicted
counts read through the baseline's class-conditional rates; ``method`` is that estimator's) or, when the
baseline is a ``streammon.Validation`` and the window's predictions came with binary scores, from EM after BCTS
on the window's score histogram (``method == "em"``: ``streammon.findings.score_estimate``); ``source`` says which
baseline: ``"baseline"`` (the monitor's ``baseline=`` validation counts) or
``"lifetime"`` (the labelled lifetime confusion, once every class has
``MIN_PER_CLASS`` labelled samples, when no baseline was given). ``rrt`` is the
RRT the estimated mix implies (as ``WindowReport.rrt`` reads it from true counts).

>>> e = LabelFreeEstimate(priors={"a": 0.25, "b": 0.75}, lower={"a": 0.2, "b": 0.7}, upper={"a": 0.3, "b": 0.8},
...                       p_value=1.0, statistic=0.0, df=0, rrt=3.0, method="m", reason="", source="baseline")
>>> e.to_dict({"a": "a", "b": "b"})["priors"]
{'a': 0.25, 'b': 0.75}
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from streammon.findings.encode import by_label, floats, json_float

MIN_PER_CLASS = 30
BASELINE = "baseline"
LIFETIME = "lifetime"


@dataclass(frozen=True)
class LabelFreeEstimate:
    """Estimated priors with their ``confidence`` intervals, the p-value of "only the class mix changed"
    (small: no mix explains the predictions), the test's statistic and degrees of freedom, the RRT of the
    estimated mix, the method, why the estimate is uncertain (``reason``) and its baseline's ``source``.
    ``expected_lower``/``expected_upper``: bounds of each expected metric over the mix's interval, given by the
    estimate with scores (``method == "em"``, ``findings.score_estimate``), and ``validation_scores`` the
    confusion metrics of the validation set itself (what the rules compare the expected values with); all three
    are empty for the hard-label estimate."""

    priors: Mapping[Hashable, float]
    lower: Mapping[Hashable, float]
    upper: Mapping[Hashable, float]
    p_value: float
    statistic: float
    df: int
    rrt: float
    method: str
    reason: str
    source: str
    expected_lower: Mapping[str, float] = field(default_factory=dict)
    expected_upper: Mapping[str, float] = field(default_factory=dict)
    validation_scores: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self, keys: Mapping[Hashable, str]) -> dict[str, Any]:
        """JSON-ready: per-class values keyed by ``keys``, numbers by the rules of ``encode``."""
        return {"priors": by_label(self.priors, keys), "lower": by_label(self.lower, keys),
                "upper": by_label(self.upper, keys), "p_value": json_float(self.p_value),
                "statistic": json_float(self.statistic), "df": self.df, "rrt": json_float(self.rrt),
                "method": self.method, "reason": self.reason, "source": self.source,
                "expected_lower": floats(self.expected_lower), "expected_upper": floats(self.expected_upper),
                "validation_scores": floats(self.validation_scores)}
