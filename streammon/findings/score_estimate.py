"""The label-free estimate with scores: a window's class mix by EM after BCTS, its expected performance and the
scores' "only the mix changed?" test, when the monitor's ``baseline=`` is a ``streammon.Validation``.

A window whose predictions came with scores has a prediction-side score tally
(``WindowReport.prediction_score_tally``: rows the predicted class). It is read as rows of scores with weights:

- binary: the histogram (one column, the bins of ``metrics.score_bins``) — one row per non-empty (predicted
  class, bin), the bin's representative score (``metrics.expected_scores.bin_representatives``) with the bin's
  count as weight;
- K > 2: the window's exact scored predictions (``ScoreTally.samples``: the prediction side keeps the monitor's
  last ``counting.exact_scores.PREDICTION_LIMIT`` = 10,000 exact, ``streammon.pending.scores``) — one row per
  prediction, its score vector (columns mapped from the monitor's class order to the validation's), weight 1.
  EM needs each prediction's joint score vector, which the per-column histograms do not determine: a window holding more
  scored predictions than that (or whose scored predictions are not the monitor's last ones: a timed window
  that took some out of time order, a state file written before the prediction side kept them) keeps the
  hard-label estimate, its ``reason`` saying why.

The rows are fed to

- ``Validation.estimate``: the class mix by EM on the BCTS-calibrated posteriors, with intervals
  (``LabelFreeEstimate.method == "em"``);
- ``Validation.mix_test``: the p-value of "only the class mix changed" from the scores — it *replaces* the
  hard-label test as the estimate's ``p_value`` (hence the evidence of ``not_prior_shift``, with the same on/off
  levels and hold); ``statistic`` and ``df`` are that test's;
- ``Validation.expected``: the expected confusion from the mix-adjusted posteriors and the decisions (the
  predicted class of each row; every catalog metric that applies on it — at K > 2 the multiclass ones, as the
  hard-label estimate gives), ``roc_auc`` and ``average_precision`` (at K > 2 macro one-vs-rest), at the
  estimated mix; ``expected_distortion`` is that minus the same at the reference mix.
  ``LabelFreeEstimate.expected_lower``/``expected_upper`` bound each expected value over the mix's interval: the
  values at the estimate and at each end of the intervals — binary, the two ends of the one free share; K > 2,
  each class's share at its lower and upper end with the other classes' shares rescaled to fill the rest as at
  the estimate (2K mixes; not the corners of the joint region, which a box of K intervals would overstate).
  They carry the mix's uncertainty (window and validation noise, as the mix's interval does), not the
  calibration's own error at a fixed mix.

Only the predictions that came with a score are read: in a window where some came without one, the estimate and
the expected values describe the scored ones (``prediction_counts`` counts them all).

**Cost.** ``Validation.estimate`` runs EM once per bootstrap replica of the validation (50 by default), so
``ScoreEstimates`` caches each window's result while what it reads is unchanged (keyed by a digest of the
histogram, or at K > 2 of the exact samples — the ring's last ``n``: ~0.2 ms to digest at K = 10): a report on
an unchanged window pays nothing; a window that took new predictions pays the estimate once per report
(``examples/bench_score_estimate_monitor.py``, ``examples/bench_score_estimate_k.py``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from streammon.counting.exact_scores import PREDICTION_LIMIT
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
        """Whether the window's prediction-side tally can feed EM: the validation's classes, scores, and — at
        K > 2 — each scored prediction's score vector (``ScoreTally.samples``)."""
        if tally is None or tally.n_scored == 0 or len(labels) != len(self.validation.labels) \
                or set(labels) != set(self.validation.labels):
            return False
        if len(labels) == 2:
            return tally.columns == 1 and tally.positive is not None
        return tally.columns == len(labels) and tally.samples is not None and len(tally.samples[0]) == tally.n_scored

    def unused(self, labels: Sequence[Hashable], tally: ScoreTally | None) -> str:
        """Why a window's scored predictions do not feed EM (``""`` when they do, or when it has none): said in
        the hard-label estimate's ``reason``, so that a user who gave a ``Validation`` sees why ``method`` is not
        ``"em"``."""
        if tally is None or tally.n_scored == 0 or self.usable(labels, tally):
            return ""
        if len(labels) != len(self.validation.labels) or set(labels) != set(self.validation.labels):
            return (f"the scores are not used: the monitor's classes {list(labels)!r:.120} are not the "
                    f"Validation's {list(self.validation.labels)!r:.120}")
        if tally.columns != len(labels) and len(labels) != 2:
            return f"the scores are not used: {tally.columns} score columns for {len(labels)} classes"
        n = tally.n_scored
        if n > PREDICTION_LIMIT:
            return (f"the scores are not used at K = {len(labels)}: EM needs each prediction's score vector, kept "
                    f"exact for the monitor's last {PREDICTION_LIMIT} scored predictions "
                    f"(streammon.counting.exact_scores.PREDICTION_LIMIT), and this window holds {n} (the hard-label "
                    "estimate instead)")
        return (f"the scores are not used at K = {len(labels)}: EM needs each prediction's score vector, kept exact "
                f"only while the window's {n} scored predictions are the monitor's last {n} (not so after "
                "predictions out of time order in a timed window, or a state file without the prediction side's "
                "exact scores, until those leave the window; the hard-label estimate instead)")

    def window(self, tally: ScoreTally, labels: Sequence[Hashable], reference: Reference | None, *,
               positive: int | None, policy: Policy) -> Result:
        """``(estimate, expected, expected_distortion)`` of one window (``usable`` must hold)."""
        labels = tuple(labels)
        ref = None if reference is None else tuple(reference.aligned(labels).tolist())
        key = (_content(tally), labels, tally.positive, positive, ref, policy.confidence, repr(policy))
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
        # the ends of the mix's interval: each class's share at its two ends, the other classes rescaled to fill
        # the rest as at the estimate (binary: one free share, the positive's or the first class's)
        ends = [self._expected(rows, mix[np.argsort(back)], order=order, positive=positive, policy=policy)
                for mix in _end_mixes(priors, lower, upper, positive)]
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
        """The window's scored predictions as rows: (m, K) scores in the validation's order, their weights,
        (m, K) decisions (counts). Binary: one row per non-empty (predicted class, bin) of the histogram, the
        bin's representative score, its count as weight. K > 2: one row per prediction, its exact score vector
        (``tally.samples``), weight 1."""
        k = len(order)
        if k > 2:
            predicted, given = tally.samples  # type: ignore[misc]  # usable says so
            scores = np.empty(given.shape)
            scores[:, order] = given  # monitor column j -> validation column order[j]
            decided = np.zeros(given.shape)
            decided[np.arange(len(predicted)), np.array(order)[predicted]] = 1.0
            return scores, np.ones(len(predicted)), decided
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
        out["roc_auc"] = x.roc_auc
        out["average_precision"] = x.average_precision
        column = order[positive or 0]
        if len(order) == 2 and column != self._validation_positive():
            adjusted = mix_posteriors(self.validation.shrunk_calibration.apply(scores), self.validation.priors,
                                      mix)
            out["average_precision"] = expected_average_precision(scores[:, column], adjusted, weights=weights,
                                                                  positive=column)
        return out

    def _validation_positive(self) -> int:
        return self.validation.labels.index(self.validation.positive)


def _confusion_scores(cm: Any, positive: int | None, policy: Policy) -> dict[str, float]:
    """Every catalog metric that applies to ``cm`` (rows true, the monitor's order; the binary ones need
    ``positive``); empty when it counts nothing."""
    out: dict[str, float] = {}
    k = cm.shape[0]
    if cm.sum() > 0:
        c = Confusion.of(cm)
        for metric, s in catalog().items():
            if s.applies_to(k) and (s.kind == "multiclass" or (k == 2 and positive is not None)):
                out[metric] = s.evaluate(c, positive=positive or 0, **policy.params(metric))
    return out


def _content(tally: ScoreTally) -> bytes:
    """What the window's estimate depends on, digested: the histogram (binary), or the exact samples (K > 2: the
    ring's last ``n``, at most ``PREDICTION_LIMIT`` × K scores — ~1 ms to digest at K = 10, far below one EM
    run, and right whichever ring or state file they came from)."""
    h = hashlib.blake2b(digest_size=16)
    if tally.columns > 1 and tally.samples is not None:
        h.update(np.ascontiguousarray(tally.samples[0]).tobytes())
        h.update(np.ascontiguousarray(tally.samples[1]).tobytes())
    else:
        h.update(np.ascontiguousarray(tally.hist).tobytes())
    return h.digest()


def _end_mixes(priors: Any, lower: Any, upper: Any, positive: int | None) -> list[Any]:
    """The mixes (the monitor's order) at the ends of the estimate's intervals: one class's share at its lower or
    upper end, the others' shares rescaled to sum to the rest (equal shares when the estimate gave them none).
    Binary: the two ends of one share (the positive's, or the first class's): the other's are the same mixes."""
    k = len(priors)
    if not (np.all(np.isfinite(priors)) and np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        return []
    out = []
    for c in ([positive or 0] if k == 2 else range(k)):
        rest = np.delete(np.arange(k), c)
        others = priors[rest]
        for share in (lower[c], upper[c]):
            mix = np.empty(k)
            mix[c] = share
            total = others.sum()
            mix[rest] = (1.0 - share) * (others / total if total > 0 else 1.0 / (k - 1))
            out.append(mix)
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
