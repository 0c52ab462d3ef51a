"""Turn one window's integer counts into a frozen ``WindowReport`` (pure, no state).

>>> from streammon.findings.reference import Reference
>>> ref = Reference.of({"neg": 900, "pos": 100})
>>> w = evaluate_window("w", "sliding", np.array([[450, 50], [100, 400]]),
...                     ("neg", "pos"), ref, positive=1, policy=Policy())
>>> round(w.rrt, 2), round(w.scores["precision"], 3), round(w.corrected["precision"], 3)
(1.0, 0.889, 0.471)
>>> w.flagged("type1")  # doctest: +NORMALIZE_WHITESPACE
('npv', 'f1', 'optimized_precision', 'hmnc', 'aurpc', 'precision', 'aurpc_ova',
 'accuracy', 'mcc', 'kappa', 'macro_f1')
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from streammon.counting.counts import ConfusionCounts, IntMatrix
from streammon.findings.distortion import Policy, condition3_flags, type1_flags, type2_flags
from streammon.findings.frozen import FrozenMap
from streammon.findings.reference import Reference
from streammon.findings.report import WindowReport
from streammon.findings.shift import PriorShift, prior_shift
from streammon.metrics import Confusion, catalog, competitiveness, reweight, safe_divide
from streammon.metrics.intervals import index_intervals, wilson
from streammon.metrics.multiclass import class_precision
from streammon.metrics.window_math import evaluate_all


def window_rrt(true_counts: IntMatrix, labels: Sequence[Hashable], reference: Reference | None,
               positive: int | None) -> float:
    """RRT (seed 004, Definition 2) of a window.

    Binary: ``n(majority) / n(minority)`` with the reference's naming (or, before
    a reference exists, ``positive`` as the minority); it drops below 1 when the
    mix flips and is inf when the minority is absent. Otherwise ``max n_i / min
    n_j`` over the classes present. NaN for an empty window.
    """
    if true_counts.sum() == 0:
        return math.nan
    if len(labels) == 2:
        if reference is not None and set(labels) == set(reference.labels):
            minority = labels.index(reference.minority)
        elif positive is not None:
            minority = positive
        else:
            minority = None
        if minority is not None:
            low, high = float(true_counts[minority]), float(true_counts[1 - minority])
            return math.inf if low == 0 else high / low
    present = true_counts[true_counts > 0]
    return float(present.max() / present.min())


@functools.lru_cache(maxsize=16)
def scored_metrics(k: int, binary: bool) -> tuple[str, ...]:
    """The catalog metrics a window of ``k`` classes scores (binary and per-class ones need a positive class)."""
    return tuple(metric for metric, s in catalog().items()
                 if s.applies_to(max(k, 2)) and (s.kind == "multiclass" or (k == 2 and binary)))


def evaluate_window(
    name: str,
    kind: str,
    counts: IntMatrix,
    labels: Sequence[Hashable],
    reference: Reference | None,
    *,
    positive: int | None,
    policy: Policy,
) -> WindowReport:
    """Scores, prior correction, shift and flags of one window's K×K counts."""
    labels = tuple(labels)
    k = len(labels)
    c = Confusion.of(counts)
    n = int(counts.sum())
    true_counts = counts.sum(axis=1)
    present_mask = true_counts > 0
    # One class known so far: scored, as scikit-learn does, as K = 2 with the other class absent (averages over
    # the classes present; what needs a second class stays NaN).
    scored = Confusion.of(np.pad(counts, (0, 1))) if k == 1 else c
    wanted = scored_metrics(k, positive is not None)
    scores = evaluate_all(scored, wanted, positive=positive or 0, params=policy.params)

    priors = None if reference is None else reference.aligned(labels)
    reference_classes = 0 if priors is None else int((priors > 0).sum())
    same_classes = priors is not None and bool(np.array_equal(present_mask, priors > 0))
    corrected_c = Confusion.of(reweight(counts, priors)) if priors is not None and n > 0 else None
    # Condition-1 metrics are invariant by theorem (seed 004) when the same classes are present: copied, not
    # recomputed (probed in the tests); the others are read from the one reweighted matrix.
    kept = [m for m in scores if same_classes and catalog()[m].condition1]
    recomputed = [m for m in scores if m not in kept] if corrected_c is not None else []
    corrected = dict.fromkeys(scores, math.nan)
    corrected.update({m: scores[m] for m in kept})
    corrected.update(evaluate_all(corrected_c, recomputed, positive=positive or 0, params=policy.params)
                     if corrected_c is not None else {})
    distortion = {m: scores[m] - corrected[m] for m in scores}

    rrt = window_rrt(true_counts, labels, reference, positive)
    ir = math.nan if reference is None else reference.ir
    shift: PriorShift | None = None
    if priors is not None:
        shift = prior_shift(true_counts, priors, alpha=policy.shift_alpha, min_js=policy.shift_min_js)

    mix_differs = shift is not None and shift.p_value < policy.shift_alpha
    flags = type1_flags(
        scores, corrected, distortion, rrt=rrt, ir=ir, tolerance=policy.type1_tolerance, mix_differs=mix_differs
    )
    if n > 0 and priors is not None:
        flags += type2_flags(scores, present=int(present_mask.sum()), reference=reference_classes)
    flags += condition3_flags(scores, c, labels, policy)

    holder_scores = {}
    for metric, value in scores.items():
        p = catalog()[metric].hoelder_exponent(policy.params(metric))
        if p is not None:
            holder_scores[metric] = competitiveness(value, p=p, k=int(present_mask.sum()))

    predicted = counts.sum(axis=0)
    diagonal = np.diagonal(counts)
    return WindowReport(
        name=name,
        kind=kind,
        n=n,
        labels=labels,
        confusion=ConfusionCounts(labels, counts),
        counts=_frozen_class({lab: int(true_counts[i]) for i, lab in enumerate(labels)}),
        predicted=_frozen_class({lab: int(predicted[i]) for i, lab in enumerate(labels)}),
        priors=_frozen_class({lab: safe_divide(float(true_counts[i]), n) for i, lab in enumerate(labels)}),
        present=tuple(lab for i, lab in enumerate(labels) if present_mask[i]),
        absent=tuple(lab for i, lab in enumerate(labels) if not present_mask[i]),
        positive=None if positive is None else labels[positive],
        rrt=rrt,
        ir=ir,
        prior_shift=shift,
        recall=_frozen_class({lab: float(c.recalls[i]) for i, lab in enumerate(labels)}),
        precision=_frozen_class({lab: class_precision(c, i) for i, lab in enumerate(labels)}),
        corrected_precision=_frozen_class({
            lab: math.nan if corrected_c is None else class_precision(corrected_c, i) for i, lab in enumerate(labels)
        }),
        scores=_frozen_metric(scores),
        corrected=_frozen_metric(corrected),
        distortion=_frozen_metric(distortion),
        competitiveness=_frozen_metric(holder_scores),
        flags=tuple(flags),
        recall_interval=_frozen_class({
            lab: wilson(float(diagonal[i]), float(true_counts[i]), policy.confidence) for i, lab in enumerate(labels)
        }),
        intervals=_frozen_metric(index_intervals(diagonal, true_counts, policy.confidence)),
    )


def _frozen_class(values: Mapping[Hashable, Any]) -> FrozenMap[Hashable, Any]:
    return FrozenMap(values, noun="class")


def _frozen_metric(values: Mapping[str, Any]) -> FrozenMap[str, Any]:
    return FrozenMap(values, noun="metric")
