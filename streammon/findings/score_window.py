"""The score metrics of a window's report: ``roc_auc``, ``average_precision``, ``brier``, ``log_loss`` and ``ece``
read from its score tally, in the same maps as the confusion metrics (``scores``, ``corrected``, ``distortion``,
``intervals``), with Type 1 flags by the same rule (``distortion.type1_flags``).

A window's confusion report is computed (and cached) from its counts alone; its score tally is attached after
(``Monitor._finish_report``), so the score metrics are computed here, where the tally is known, and kept by
``ScoreCache`` while the window report and the tally stay the same (a scrape of an idle model computes nothing).

The corrected value is the metric at the reference mix: each true class's samples weighted by ``π_c·n/n_c``
(``MetricSpec.evaluate_scores``). ``roc_auc`` keeps Condition 1 at K = 2 and with Hand & Till's one-vs-one
(``multi_class="ovo"``, the default) — its distortion is 0 and it is never Type-1-flagged —; one-vs-rest at
K > 2 does not (``MetricSpec.satisfies_condition1``). Intervals: DeLong's for a binary ROC AUC
(``metrics.roc_auc_interval``). ROC AUC, average precision and DeLong's interval are read from the window's exact
scores where its tally carries them (``ScoreTally.samples``: at most ``EXACT_RANKING_LIMIT`` scored samples),
else from its bins. Undefined is NaN: a window without scored samples, a ROC AUC of one class, a
corrected value without a reference; a tally whose classes do not fit its score columns reads NaN too: a class
learned after the first score is left out while the window holds no scored sample of it (and, at the reference
mix, while the reference gives it no weight), so only the windows holding a scored sample of it read NaN.

>>> import numpy as np
>>> from streammon.counting.score_tally import ScoreTally
>>> t = ScoreTally.of(np.array([0, 0, 0, 1, 1]), np.array([[0.1], [0.4], [0.8], [0.35], [0.9]]), 2, positive=1)
>>> numbers = score_numbers(t, priors=np.array([0.5, 0.5]), policy=Policy())
>>> numbers.scores["roc_auc"], numbers.scores["average_precision"]  # scikit-learn: 0.6666666666666667, 0.75
(0.6666666666666666, 0.75)
>>> numbers.distortion["roc_auc"], numbers.condition1["roc_auc"], numbers.condition1["brier"]
(0.0, True, False)
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from streammon.counting.score_tally import ScoreTally
from streammon.findings.distortion import Policy, type1_flags
from streammon.findings.frozen import FrozenMap
from streammon.findings.reference import Reference
from streammon.findings.report import WindowReport
from streammon.findings.window_table import Extended
from streammon.metrics import catalog
from streammon.metrics.confusion import FloatArray
from streammon.metrics.specs import SCORES
from streammon.metrics.window_scores import NAMES, delong_interval, score_values


@dataclass(frozen=True)
class ScoreNumbers:
    """One window's score metrics by name: as read, at the reference mix, their difference, the intervals that
    exist, and whether each keeps Condition 1 here (``roc_auc``'s depends on K and ``multi_class``)."""

    scores: Mapping[str, float]
    corrected: Mapping[str, float]
    distortion: Mapping[str, float]
    intervals: Mapping[str, tuple[float, float]]
    condition1: Mapping[str, bool]


def _fits(tally: ScoreTally, priors: FloatArray | None, k: int) -> bool:
    """Whether the tally's first ``k`` classes can be read: C = 1 (binary) or K columns, and reference priors over
    its K classes."""
    return tally.columns in {1 if k == 2 else k, k} and k >= 2 and (
        priors is None or len(priors) == k)


def _score_classes(tally: ScoreTally, priors: FloatArray | None) -> tuple[Any, Any, Any, FloatArray | None]:
    """The tally's arrays and the priors over the classes its scores describe: a class learned after the first
    score (rows beyond the score columns: 2 for a binary score, else C) is dropped while the window holds no
    scored sample of it, so one stray label of a new class does not blank the score metrics of every window for
    good; its scores would have no column, so a window holding a scored sample of it stays unreadable (NaN). At
    the reference mix the dropped classes must weigh nothing, else the corrected values are NaN (no priors)."""
    scored = 2 if tally.columns == 1 else tally.columns
    if tally.slab.shape[0] <= scored or tally.class_counts[scored:].any():
        return tally.slab, tally.sums, tally.top, priors
    if priors is not None:
        priors = priors[:scored] if len(priors) > scored and not priors[scored:].any() else None
    return tally.slab[:scored], tally.sums[:scored], tally.top[:scored], priors


def score_numbers(tally: ScoreTally, *, priors: FloatArray | None, policy: Policy) -> ScoreNumbers:
    """The score metrics of one window's ``tally`` (module docstring): as read, at the reference mix ``priors``
    (K float64, in class order, summing to 1: not checked again; None without a reference: corrected and
    distortion NaN), with ``policy``'s parameters
    and confidence. All five at both mixes, and DeLong's variance, in one compiled call
    (``metrics.window_scores.score_values``: the values of ``metrics.compute_scores``)."""
    hist, sums, top, priors = _score_classes(tally, priors)  # the histogram's bins from tally.offset on
    k = int(hist.shape[0])
    readable = _fits(tally, priors, k) and tally.n_scored > 0
    positive = 1 if tally.positive is None else tally.positive
    multi_class, condition1 = _settings(policy, k)
    scores = corrected = np.full(len(NAMES), math.nan)
    variance = math.nan
    if readable:  # the bins read once for both mixes
        values, variance = score_values(hist, sums, top, (None,) if priors is None else
                                        (None, priors), positive=positive, multi_class=multi_class,
                                        normalised=True, samples=tally.samples,
                                        span=None if tally.span is None else tally.span - tally.offset,
                                        distinct=None if tally.distinct is None else
                                        tally.distinct[:, tally.offset:tally.offset + hist.shape[2]],
                                        values=tally.values, offset=tally.offset)
        scores = values[0]
        if priors is not None:
            corrected = values[1]
    intervals: dict[str, tuple[float, float]] = {}
    if k == 2:
        intervals["roc_auc"] = delong_interval(float(scores[0]), variance, float(policy.confidence))
    read, at_mix = scores.tolist(), corrected.tolist()
    return ScoreNumbers(FrozenMap(dict(zip(NAMES, read, strict=True)), noun="metric"),
                        FrozenMap(dict(zip(NAMES, at_mix, strict=True)), noun="metric"),
                        FrozenMap({m: a - b for m, a, b in zip(NAMES, read, at_mix, strict=True)}, noun="metric"),
                        FrozenMap(intervals, noun="metric"), condition1)


_SETTINGS: list[tuple[Policy, int, str, FrozenMap[str, bool]]] = []  # the last policy's, per K: one entry a K


def _settings(policy: Policy, k: int) -> tuple[str, FrozenMap[str, bool]]:
    """``roc_auc``'s ``multi_class`` under ``policy`` and whether each score metric keeps Condition 1 at K = k:
    the same for every window of a report, so resolved once per policy and K (the policy is frozen)."""
    for known, rows, multi_class, condition1 in tuple(_SETTINGS):
        if known is policy and rows == k:
            return multi_class, condition1
    specs = catalog(SCORES)
    params = {name: specs[name].resolve_params(policy.params(name)) for name in specs}
    entry = (policy, k, str(params["roc_auc"]["multi_class"]),
             FrozenMap({name: s.satisfies_condition1(params[name], k) for name, s in specs.items()}, noun="metric"))
    _SETTINGS[:] = [*[e for e in _SETTINGS if e[0] is policy][-3:], entry]  # a few K of the current policy
    return entry[2], entry[3]


def with_scores(w: WindowReport, numbers: ScoreNumbers, policy: Policy, **more: Any) -> WindowReport:
    """``w`` with the score metrics ``numbers`` added to its maps and their Type 1 flags to its flags: raised, as
    for the confusion metrics, when the window's mix differs from the reference beyond chance (the prior-shift
    test rejects at ``shift_alpha``) and a metric that violates Condition 1 here moved by more than the
    tolerance. ``more``: other fields to set in the same copy (``score_tally``)."""
    shift = w.prior_shift
    flags = w.flags
    if shift is not None and shift.p_value < policy.shift_alpha:
        prone = [m for m, keeps in numbers.condition1.items() if not keeps]
        flags = (*flags, *type1_flags({m: numbers.scores[m] for m in prone},
                                      {m: numbers.corrected[m] for m in prone},
                                      {m: numbers.distortion[m] for m in prone},
                                      rrt=w.rrt, ir=w.ir, tolerance=policy.type1_tolerance, mix_differs=True,
                                      condition1=numbers.condition1))
    return replace(w, scores=Extended(w.scores, numbers.scores), corrected=Extended(w.corrected, numbers.corrected),
                   distortion=Extended(w.distortion, numbers.distortion),
                   intervals=Extended(w.intervals, numbers.intervals), flags=flags, condition1=numbers.condition1,
                   **more)


def _same(a: ScoreTally, b: ScoreTally) -> bool:
    """Whether two tallies hold the same numbers (compared, not hashed: cheaper than the metrics; the small sums
    first, which differ as soon as a sample came or went; the slabs where both hold the same bins)."""
    return a is b or (a.positive == b.positive and a.slab.shape[:2] == b.slab.shape[:2]
                      and (a.samples is None) == (b.samples is None)
                      and np.array_equal(a.sums, b.sums) and np.array_equal(a.top, b.top)
                      and (np.array_equal(a.slab, b.slab) if (a.offset, a.slab.shape) == (b.offset, b.slab.shape)
                           else np.array_equal(a.hist, b.hist)))


class ScoreCache:
    """Each window's last scored report, returned again while its confusion report (by identity: the window
    cache returns the same one while the counts stay, and a new one when the reference or policy changes) and
    its score tally (by value) are the same. Safe to share between threads: an entry is replaced whole."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[WindowReport, ScoreTally, Policy, WindowReport]] = {}

    def scored(self, w: WindowReport, tally: ScoreTally, priors: FloatArray | None, policy: Policy) -> WindowReport:
        """``w`` with its score metrics (``with_scores``) and ``tally`` as its ``score_tally``."""
        entry = self._entries.get(w.name)
        if entry is not None and entry[0] is w and entry[2] is policy and _same(entry[1], tally):
            return entry[3]
        out = with_scores(w, score_numbers(tally, priors=priors, policy=policy), policy, score_tally=tally)
        self._entries[w.name] = (w, tally, policy, out)
        return out


def attach_scores(windows: Mapping[str, WindowReport], tallies: Sequence[ScoreTally],
                  predicted: Sequence[ScoreTally | None] | None, *, labels: Sequence[Hashable],
                  reference: Reference | None, policy: Policy, cache: ScoreCache | None = None,
                  ) -> dict[str, WindowReport]:
    """Every window (in the order of ``tallies``) with its score tally, its score metrics (corrected at
    ``reference``'s mix over ``labels``) and the tally of its predictions' scores (``predicted``, rows by
    predicted class; None before a scored ``predict``)."""
    cache = cache or ScoreCache()
    aligned = None if reference is None else reference.aligned(labels)
    priors = None if aligned is None else aligned / aligned.sum()
    on_predictions = predicted or (None,) * len(tallies)
    out: dict[str, Any] = {}
    for (name, w), tally, by_prediction in zip(windows.items(), tallies, on_predictions, strict=True):
        scored = cache.scored(w, tally, priors, policy)
        out[name] = scored if by_prediction is None else replace(scored, prediction_score_tally=by_prediction)
    return out
