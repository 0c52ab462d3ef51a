"""Early Type 1 warnings: each window's label-free class mix and what every metric should read at it (pure).

Under a pure prior shift the model keeps the baseline's class-conditional rates, so a
window whose mix is ``π̂`` should score what the baseline scores once reweighted to
``π̂`` (``metrics.reweight``). For every prediction-side window this module gives

- ``estimate``: ``π̂`` with intervals and the label-shift p-value (``metrics.estimate_priors``
  on the window's ``prediction_counts``) and the RRT of ``π̂``;
- ``expected``: every catalog metric evaluated on the baseline reweighted to ``π̂`` —
  "precision is expected to read 0.33 on today's traffic with the model unchanged";
- ``expected_distortion``: that value minus the metric on the baseline reweighted to the
  reference mix, the Type 1 distortion to expect (0 for Condition-1 metrics);

and the alert ``not_prior_shift`` when the p-value is below the policy's ``shift_alpha``
(default 0.01, the level of ``prior_shift``): no class mix explains the predicted counts, so
the model or its inputs changed. Under pure label shift the test's false-alarm rate is at
most its level (``metrics.label_shift``; 0.8–1 % measured at 5 %).

**Which baseline.** The monitor's ``baseline=`` (validation counts, rows true) when given;
otherwise the labelled lifetime confusion once every class has ``MIN_PER_CLASS`` (30)
labelled samples — it then moves with the labels (a class whose recall drops changes it),
so a validation baseline is the better choice. ``PriorBaselines`` prepares
``prior_baseline`` once per distinct baseline, not per report.

>>> import numpy as np
>>> from streammon.metrics import prior_baseline
>>> base = np.array([[90, 10], [20, 80]])           # FPR 0.1, TPR 0.8 (class 1 positive)
>>> ref = Reference.of({"neg": 9, "pos": 1})
>>> est, exp, dist = window_estimate(prior_baseline(base), base, np.array([550, 450]), ("neg", "pos"), ref,
...                                  positive=1, policy=Policy())
>>> round(est.priors["pos"], 6), round(est.rrt, 9), round(exp["precision"], 4), round(exp["recall"], 4)
(0.5, 1.0, 0.8889, 0.8)
>>> round(dist["precision"], 4)  # at the reference mix: 0.08 / (0.08 + 0.09) = 0.4706
0.4183
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.counts import ConfusionCounts, IntMatrix
from streammon.counting.validation import Validation
from streammon.findings.alerts import AlertKey, Condition
from streammon.findings.distortion import Policy
from streammon.findings.estimate import BASELINE, LIFETIME, MIN_PER_CLASS, LabelFreeEstimate
from streammon.findings.evaluate import window_rrt
from streammon.findings.frozen import FrozenMap
from streammon.findings.reference import Reference
from streammon.findings.report import NOT_PRIOR_SHIFT, WindowReport
from streammon.findings.score_estimate import ScoreEstimates
from streammon.metrics import Confusion, catalog, estimate_priors, prior_baseline, reweight
from streammon.metrics.label_shift import PriorBaseline

FloatArray = npt.NDArray[np.float64]


class PriorBaselines:
    """The baseline for label-free estimates, with ``prior_baseline`` computed once per distinct counts.

    ``given`` is the monitor's validation baseline (any form ``Monitor(baseline=...)`` takes, as
    ``ConfusionCounts``); ``validation`` the ``Validation`` it came from, if it did."""

    def __init__(self, given: ConfusionCounts | None, validation: Validation | None = None) -> None:
        self.given = given
        # a Validation baseline: EM with scores where a window has them (findings.score_estimate)
        self.scored = None if validation is None else ScoreEstimates(validation)
        self._key: tuple[int, bytes] | None = None
        self._prepared: PriorBaseline | None = None

    def choose(self, labels: Sequence[Hashable], lifetime: IntMatrix) -> tuple[IntMatrix, str] | None:
        """The K×K baseline counts in the order of ``labels`` and their source, or None when none is usable."""
        k = len(labels)
        if self.given is not None:
            out = np.zeros((k, k), dtype=np.int64)
            index = {label: i for i, label in enumerate(labels)}
            known = [(i, index[label]) for i, label in enumerate(self.given.labels) if label in index]
            for i, a in known:
                for j, b in known:
                    out[a, b] = self.given.matrix[i, j]
            return out, BASELINE
        counts = np.asarray(lifetime)[:k, :k]
        if k >= 2 and counts.sum(axis=1).min() >= MIN_PER_CLASS:
            return counts.astype(np.int64), LIFETIME
        return None

    def prepare(self, counts: IntMatrix) -> PriorBaseline:
        """``prior_baseline(counts)``, recomputed only when the counts changed."""
        key = (counts.shape[0], np.ascontiguousarray(counts, dtype=np.int64).tobytes())
        if key != self._key or self._prepared is None:
            self._key, self._prepared = key, prior_baseline(counts)
        return self._prepared


def expected_scores(counts: IntMatrix, priors: FloatArray, *, positive: int | None,
                    policy: Policy) -> dict[str, float]:
    """Every catalog metric that applies, on the baseline ``counts`` reweighted to ``priors`` (NaN if undefined)."""
    k = counts.shape[0]
    if counts.sum() == 0 or not np.all(np.isfinite(priors)):
        return {}
    c = Confusion.of(reweight(counts, priors))
    out = {}
    for metric, s in catalog().items():
        if not s.applies_to(max(k, 2)) or (s.kind != "multiclass" and (k != 2 or positive is None)):
            continue
        out[metric] = s.evaluate(c, positive=positive or 0, **policy.params(metric))
    return out


def as_confusion(baseline: Any, known: list[Any]) -> ConfusionCounts | None:
    """The monitor's ``baseline=`` (``ConfusionCounts``, a ``Validation``, ``{true: {pred: count}}`` or a K×K
    array in the order of ``known``) as ``ConfusionCounts``; None when no baseline was given."""
    if isinstance(baseline, Validation):  # its confusion counts; its scores serve the EM estimate
        return baseline.confusion
    if baseline is None or isinstance(baseline, ConfusionCounts):
        return baseline
    if isinstance(baseline, Mapping):
        counts = ConfusionCounts()
        for true, row in baseline.items():
            for pred, count in row.items():
                counts.add(true, pred, count=count)
        return counts
    return ConfusionCounts(known, baseline)


def window_estimate(prepared: PriorBaseline, counts: IntMatrix, predicted: npt.NDArray[Any],
                    labels: Sequence[Hashable], reference: Reference | None, *, positive: int | None,
                    policy: Policy, source: str = BASELINE
                    ) -> tuple[LabelFreeEstimate, dict[str, float], dict[str, float]]:
    """One window's ``(estimate, expected, expected_distortion)`` from its predicted counts."""
    e = estimate_priors(prepared, predicted, alpha=1 - policy.confidence)
    labels = tuple(labels)
    rrt = math.nan
    if np.all(np.isfinite(e.priors)):
        rrt = window_rrt(e.priors, labels, reference, positive)  # type: ignore[arg-type]  # rates, not counts
    estimate = LabelFreeEstimate(
        priors=_by_class(labels, e.priors), lower=_by_class(labels, e.lower), upper=_by_class(labels, e.upper),
        p_value=e.p_value, statistic=e.statistic, df=e.df, rrt=rrt, method=e.method, reason=e.reason,
        source=source)
    expected = expected_scores(counts, e.priors, positive=positive, policy=policy)
    at_reference = {}
    if reference is not None:
        at_reference = expected_scores(counts, reference.aligned(labels), positive=positive, policy=policy)
    distortion = {m: v - at_reference.get(m, math.nan) for m, v in expected.items()}
    return estimate, expected, distortion


def estimate_reports(windows: Mapping[str, WindowReport], view: Any, baselines: PriorBaselines,
                     policy: Policy, active: Collection[AlertKey] = ()) -> tuple[dict[str, WindowReport],
                                                                                  list[Condition]]:
    """Window reports with ``estimate``/``expected``/``expected_distortion`` for every window holding
    predictions, and the ``not_prior_shift`` conditions (``view``: the ``CountsView`` they came from): on at
    p < ``shift_alpha``, held while p < ``shift_clear_alpha`` (``active``: the alerts on now)."""
    labels = tuple(view.labels)
    chosen = baselines.choose(labels, view.lifetime)
    if chosen is None:
        return dict(windows), []
    counts, source = chosen
    prepared = baselines.prepare(counts)
    out: dict[str, WindowReport] = {}
    conditions: list[Condition] = []
    for name, w in windows.items():
        predicted = np.array([w.prediction_counts.get(label, 0) for label in labels], dtype=np.float64)
        if predicted.sum() == 0:
            out[name] = w
            continue
        scored = baselines.scored
        if scored is not None and scored.usable(labels, w.prediction_score_tally):
            assert w.prediction_score_tally is not None  # usable says so
            estimate, expected, distortion = scored.window(w.prediction_score_tally, labels, view.reference,
                                                           positive=view.positive, policy=policy)
            unscored = int(predicted.sum()) - w.prediction_score_tally.n_scored
            if unscored > 0:  # EM reads scores only: say that its mix and expected values are the scored ones'
                note = (f"EM read the {w.prediction_score_tally.n_scored} scored predictions of the window's "
                        f"{int(predicted.sum())}: its mix and expected values are theirs ({unscored} came without "
                        "a score)")
                estimate = replace(estimate, reason="; ".join(r for r in (estimate.reason, note) if r))
        else:
            estimate, expected, distortion = window_estimate(prepared, counts, predicted, labels, view.reference,
                                                             positive=view.positive, policy=policy, source=source)
            unused = "" if scored is None else scored.unused(labels, w.prediction_score_tally)
            if unused:
                estimate = replace(estimate, reason="; ".join(r for r in (estimate.reason, unused) if r))
        out[name] = replace(w, estimate=estimate, expected=FrozenMap(expected, noun="metric"),
                            expected_distortion=FrozenMap(distortion, noun="metric"))
        on = (NOT_PRIOR_SHIFT, name, "predictions") in active
        if not math.isnan(estimate.p_value) and estimate.p_value < (policy.shift_clear_alpha if on
                                                                     else policy.shift_alpha):
            what = ("the scores through the validation's class-conditional score distributions"
                    if estimate.method == "em" else f"the predicted counts through the {source} rates")
            conditions.append((NOT_PRIOR_SHIFT, name, "predictions",
                               f"no class mix explains {what} (p = {estimate.p_value:.2g}, {estimate.df} df): "
                               f"the model or its inputs changed, not just the class mix"))
    return out, conditions


def _by_class(labels: tuple[Hashable, ...], values: FloatArray) -> Mapping[Hashable, float]:
    return FrozenMap({label: float(v) for label, v in zip(labels, values, strict=True)}, noun="class")
