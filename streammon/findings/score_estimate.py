"""The label-free estimate with scores: a window's class mix by EM after BCTS, its expected performance and the
scores' "only the mix changed?" test, when the monitor's ``baseline=`` is a ``streammon.Validation``.

A binary window whose predictions came with scores has a prediction-side score tally
(``WindowReport.prediction_score_tally``: rows the predicted class, one column, the bins of
``metrics.score_bins``). Its histogram is read as rows — one per non-empty (predicted class, bin), the bin's
representative score (``metrics.expected_scores.bin_representatives``) with the bin's count as weight — and fed to

- ``Validation.estimate``: the class mix by EM on the BCTS-calibrated posteriors, with intervals
  (``LabelFreeEstimate.method == "em"``);
- ``Validation.mix_test``: the p-value of "only the class mix changed" from the scores — it *replaces* the
  hard-label test as the estimate's ``p_value`` (hence the evidence of ``not_prior_shift``, with the same on/off
  levels and hold); ``statistic`` and ``df`` are that test's;
- ``Validation.expected``: the expected confusion from the mix-adjusted posteriors and the decisions (every
  catalog metric on it), ``roc_auc`` and ``average_precision``, at the estimated mix; ``expected_distortion``
  is that minus the same at the reference mix. ``LabelFreeEstimate.expected_lower``/``expected_upper`` bound each
  expected value over the mix's interval (the values at its two ends and at the estimate): they carry the
  mix's uncertainty (window and validation noise, as the mix's interval does), not the calibration's own
  error at a fixed mix.

Only the predictions that came with a score are in the histogram: in a window where some came without one, the
estimate and the expected values describe the scored ones (``prediction_counts`` counts them all).

K > 2 falls back to the hard-label estimate: the prediction-side tally keeps one marginal histogram per score
column, and EM needs each sample's joint score vector, which the marginals do not determine.

**Cost.** ``Validation.estimate`` runs EM once per bootstrap replica of the validation (50 by default,
150–230 ms per window at K = 2), so ``ScoreEstimates`` caches each window's result while its histogram is
unchanged (keyed by the histogram's bytes): a report on an unchanged window pays nothing; a window that took
new predictions pays the estimate once per report.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from streammon.counting.score_tally import ScoreTally
from streammon.counting.validation import Validation
from streammon.findings.distortion import Policy
from streammon.findings.estimate import BASELINE, LabelFreeEstimate
from streammon.findings.evaluate import window_rrt
from streammon.findings.frozen import FrozenMap
from streammon.findings.reference import Reference
from streammon.metrics import Confusion, catalog
from streammon.metrics.em_priors import mix_posteriors
from streammon.metrics.expected_scores import bin_representatives, expected_average_precision

CACHED = 64  # windows' results kept (a monitor has a handful of windows; replicas of a server a few more)
Result = tuple[LabelFreeEstimate, dict[str, float], dict[str, float]]


class ScoreEstimates:
    """The EM estimates of a ``Validation`` baseline, cached per window while its histogram is unchanged."""

    def __init__(self, validation: Validation) -> None:
        self.validation = validation
        # reports may run on several threads (a scrape beside the app's own), and this layer takes no lock: only
        # single dict operations (atomic in CPython) touch the cache, which forgets its oldest entry first
        self._cache: dict[tuple[Any, ...], Result] = {}
        self._representatives = bin_representatives()

    def usable(self, labels: Sequence[Hashable], tally: ScoreTally | None) -> bool:
        """Whether the window's prediction-side tally can feed EM: binary, the validation's two classes, scores."""
        return (tally is not None and tally.columns == 1 and tally.positive is not None and len(labels) == 2
                and set(labels) == set(self.validation.labels) and tally.n_scored > 0)

    def unused(self, labels: Sequence[Hashable], tally: ScoreTally | None) -> str:
        """Why a window's scored predictions do not feed EM (``""`` when they do, or when it has none): said in
        the hard-label estimate's ``reason``, so that a user who gave a ``Validation`` sees why ``method`` is not
        ``"em"``."""
        if tally is None or tally.n_scored == 0 or self.usable(labels, tally):
            return ""
        if len(labels) != 2 or tally.columns != 1:
            return (f"the scores are not used at K = {len(labels)}: EM needs each prediction's score vector, and "
                    "the predictions' score histograms keep one column at a time (the hard-label estimate instead)")
        return (f"the scores are not used: the monitor's classes {list(labels)!r:.120} are not the Validation's "
                f"{list(self.validation.labels)!r:.120}")

    def window(self, tally: ScoreTally, labels: Sequence[Hashable], reference: Reference | None, *,
               positive: int | None, policy: Policy) -> Result:
        """``(estimate, expected, expected_distortion)`` of one window (``usable`` must hold)."""
        labels = tuple(labels)
        ref = None if reference is None else tuple(reference.aligned(labels).tolist())
        digest = hashlib.blake2b(np.ascontiguousarray(tally.hist).tobytes(), digest_size=16).digest()
        key = (digest, labels, tally.positive, positive, ref, policy.confidence, repr(policy))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        result = self._compute(tally, labels, reference, positive=positive, policy=policy)
        self._cache[key] = result
        while len(self._cache) > CACHED:
            try:
                self._cache.pop(next(iter(self._cache)), None)
            except (RuntimeError, StopIteration):  # another thread changed the cache meanwhile: it evicts too
                break
        return result

    def _compute(self, tally: ScoreTally, labels: tuple[Hashable, ...], reference: Reference | None, *,
                 positive: int | None, policy: Policy) -> Result:
        v = self.validation
        order = [v.labels.index(label) for label in labels]  # monitor index -> validation index
        rows = self._rows(tally, order)
        scores, weights, _ = rows
        e = v.estimate(scores, weights=weights, alpha=1 - policy.confidence)
        test = v.mix_test(scores, weights=weights)
        back = np.array(order)  # validation-ordered arrays read in the monitor's order
        priors, lower, upper = e.priors[back], e.lower[back], e.upper[back]
        expected = self._expected(rows, e.priors, order=order, positive=positive, policy=policy)
        # the ends of the mix's interval: binary, one free share (the positive's, or the first class's)
        p = positive or 0
        ends = []
        for share in (lower[p], upper[p]):
            mix = np.empty(2)
            mix[p], mix[1 - p] = share, 1.0 - share
            ends.append(self._expected(rows, mix[np.argsort(back)], order=order, positive=positive, policy=policy))
        low = {m: _nanmin(x, *(end.get(m, math.nan) for end in ends)) for m, x in expected.items()}
        high = {m: _nanmax(x, *(end.get(m, math.nan) for end in ends)) for m, x in expected.items()}
        at_reference: dict[str, float] = {}
        if reference is not None:
            mix = reference.aligned(labels)
            if mix.sum() > 0:
                at_reference = self._expected(rows, (mix / mix.sum())[np.argsort(back)], order=order,
                                              positive=positive, policy=policy)
        distortion = {m: x - at_reference.get(m, math.nan) for m, x in expected.items()}
        rrt = window_rrt(priors, labels, reference, positive) if np.all(np.isfinite(priors)) else math.nan
        by = _by_class(labels)
        estimate = LabelFreeEstimate(
            priors=by(priors), lower=by(lower), upper=by(upper), p_value=test.p_value, statistic=test.statistic,
            df=test.df, rrt=rrt, method=e.method, reason="; ".join(r for r in (e.reason, test.reason) if r),
            source=BASELINE, expected_lower=FrozenMap(low, noun="metric"),
            expected_upper=FrozenMap(high, noun="metric"),
            validation_scores=FrozenMap(_confusion_scores(v.counts[np.ix_(order, order)], positive, policy),
                                        noun="metric"))
        return estimate, expected, distortion

    def _rows(self, tally: ScoreTally, order: list[int]) -> tuple[Any, Any, Any]:
        """The histogram as rows: (m, 2) scores in the validation's order, their counts, (m, 2) decisions."""
        hist = tally.hist[:2, 0, :]
        rows, bins = np.nonzero(hist)
        s = self._representatives[bins]  # the probability of the monitor's positive class (tally.positive)
        scores = np.empty((len(s), 2))
        mine = order[int(tally.positive or 0)]
        scores[:, mine], scores[:, 1 - mine] = s, 1.0 - s
        weights = hist[rows, bins].astype(np.float64)
        decided = np.zeros((len(s), 2))
        decided[np.arange(len(s)), np.array(order)[rows]] = 1.0
        return scores, weights, decided

    def _expected(self, rows: tuple[Any, Any, Any], mix: Any, *, order: list[int], positive: int | None,
                  policy: Policy) -> dict[str, float]:
        """Every catalog metric, ``roc_auc`` and ``average_precision`` expected at ``mix`` (validation order);
        ``rows``: the window's ``(scores, weights, decided)``."""
        scores, weights, decided = rows
        x = self.validation.expected(scores, decided, weights=weights, priors=mix)
        out = _confusion_scores(x.confusion[np.ix_(order, order)], positive, policy)  # the monitor's order
        # read about the monitor's positive class (the validation's may be the other one; binary ROC AUC is the same
        # for either class, average precision is not)
        column = order[positive or 0]
        out["roc_auc"] = x.roc_auc
        out["average_precision"] = x.average_precision
        if column != self._validation_positive():
            adjusted = mix_posteriors(self.validation.shrunk_calibration.apply(scores), self.validation.priors,
                                      mix)
            out["average_precision"] = expected_average_precision(scores[:, column], adjusted, weights=weights,
                                                                  positive=column)
        return out

    def _validation_positive(self) -> int:
        return self.validation.labels.index(self.validation.positive)


def _confusion_scores(cm: Any, positive: int | None, policy: Policy) -> dict[str, float]:
    """Every binary catalog metric on ``cm`` (rows true, the monitor's order); empty when it counts nothing."""
    out: dict[str, float] = {}
    if cm.sum() > 0:
        c = Confusion.of(cm)
        for metric, s in catalog().items():
            if s.applies_to(2) and (s.kind == "multiclass" or positive is not None):
                out[metric] = s.evaluate(c, positive=positive or 0, **policy.params(metric))
    return out


def _by_class(labels: tuple[Hashable, ...]) -> Any:
    def by(values: Any) -> FrozenMap[Hashable, float]:
        return FrozenMap({label: float(v) for label, v in zip(labels, values, strict=True)}, noun="class")
    return by


def _nanmin(*values: float) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return min(kept) if kept else math.nan


def _nanmax(*values: float) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return max(kept) if kept else math.nan
