"""Turn windows' integer counts into frozen ``WindowReport`` s (pure, no state).

The windows of one monitor share their classes, reference, positive class and policy (a ``Setting``, derived
once and kept between reports by the caller); ``evaluate_windows`` computes every number of all of them
together, in one compiled pass over a (W, K, K) stack (``streammon.metrics.window_math.window_numbers``), and
each report shows its window's numbers through read-only mappings (``streammon.findings.window_table``).

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
import itertools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from streammon.counting.counts import ClassIndex, ConfusionCounts, IntMatrix
from streammon.findings.distortion import Policy, condition3_flags, type1_flags, type2_flags
from streammon.findings.reference import Reference
from streammon.findings.report import Flag, WindowReport
from streammon.findings.shift import PriorShift, prior_shifts_of
from streammon.findings.window_table import (
    COMPETITIVENESS,
    CORRECTED,
    CORRECTED_PRECISION,
    COUNTS,
    DISTORTION,
    INTERVALS,
    PRECISION,
    PREDICTED,
    PRIORS,
    RECALL,
    RECALL_INTERVAL,
    SCORES,
    Deferred,
    WindowTable,
)
from streammon.metrics import Confusion, catalog
from streammon.metrics.confusion import FloatArray
from streammon.metrics.mix_shift import mix_shifts
from streammon.metrics.tails import log_gammas
from streammon.metrics.window_math import Coded, code_metrics, window_numbers


def window_rrt(true_counts: IntMatrix, labels: Sequence[Hashable], reference: Reference | None,
               positive: int | None) -> float:
    """RRT (seed 004, Definition 2) of a window.

    Binary: ``n(majority) / n(minority)`` with the reference's naming (or, before
    a reference exists, ``positive`` as the minority); it drops below 1 when the
    mix flips and is inf when the minority is absent. Otherwise ``max n_i / min
    n_j`` over the classes present. NaN for an empty window.

    >>> window_rrt(np.array([90, 10]), ("neg", "pos"), None, 1), window_rrt(np.array([5, 0, 20]), "abc", None, None)
    (9.0, 4.0)
    """
    minority = _rrt_minority(tuple(labels), reference, positive)
    counts = np.asarray(true_counts, dtype=np.float64)[None]
    return float(mix_shifts(counts, np.zeros_like(counts), np.array([-1 if minority is None else minority])).rrt[0])


def _rrt_minority(labels: tuple[Hashable, ...], reference: Reference | None, positive: int | None) -> int | None:
    """The binary minority RRT divides by: the reference's, else the positive class; None for K != 2."""
    if len(labels) != 2:
        return None
    if reference is not None and set(labels) == set(reference.labels):
        return labels.index(reference.minority)
    return positive


@functools.lru_cache(maxsize=16)
def scored_metrics(k: int, binary: bool) -> tuple[str, ...]:
    """The catalog metrics a window of ``k`` classes scores (binary and per-class ones need a positive class)."""
    return tuple(metric for metric, s in catalog().items()
                 if s.applies_to(max(k, 2)) and (s.kind == "multiclass" or (k == 2 and binary)))


@dataclass(frozen=True, eq=False)
class Setting:
    """What the windows of a report share and what stays fixed from one report to the next — classes,
    reference, positive class, policy — with what is derived from them: the metrics scored (and coded for the
    compiled loop), the reference priors in class order, which metrics violate Condition 1, the Hölder exponents,
    RRT's minority; and, kept as it is first asked for, the ``Stacked`` arrays of W windows of this setting."""

    labels: tuple[Hashable, ...]
    reference: Reference | None
    positive: int | None
    policy: Policy
    wanted: tuple[str, ...]
    priors: FloatArray | None  # the reference's, in class order and normalised to sum 1 (0 for a class it lacks)
    violates: np.ndarray  # (metrics, 1): violates Condition 1
    exponents: Mapping[str, float]  # the Hölder exponent of each Hölder-mean score
    minority: int | None
    index: ClassIndex  # of ``labels``, copied into each window's ConfusionCounts
    coded: Coded  # the wanted metrics with their parameters, as the scoring loop takes them
    _stacks: dict[int, Stacked] = field(default_factory=dict, repr=False)  # Stacked.of W windows of this setting

    @functools.cached_property
    def keeps(self) -> np.ndarray:
        """(metrics,): satisfies Condition 1 (its value at the reference mix is its value as read)."""
        out: np.ndarray = ~self.violates.reshape(-1)
        return out

    @functools.cached_property
    def reference_classes(self) -> int:
        """The classes with a positive reference prior (0 without a reference)."""
        return 0 if self.priors is None else int((self.priors > 0).sum())

    @classmethod
    def of(cls, labels: Sequence[Hashable], reference: Reference | None, positive: int | None,
           policy: Policy) -> Setting:
        labels = tuple(labels)
        wanted = scored_metrics(len(labels), positive is not None)
        specs = [catalog()[m] for m in wanted]
        exponents = {s.name: p for s in specs if (p := s.hoelder_exponent(policy.params(s.name))) is not None}
        priors = None if reference is None else reference.aligned(labels)
        return cls(labels, reference, positive, policy, wanted, None if priors is None else priors / priors.sum(),
                   np.array([not s.condition1 for s in specs], dtype=bool).reshape(-1, 1), exponents,
                   _rrt_minority(labels, reference, positive), ClassIndex.of_known(labels),
                   code_metrics(wanted, policy.params))

    def stacks_with(self, other: Setting) -> bool:
        """Whether windows of both settings can be evaluated in one stack: the same number of classes, metrics,
        positive class and policy (the classes themselves and the reference may differ)."""
        return (len(self.labels) == len(other.labels) and self.wanted == other.wanted
                and self.positive == other.positive and self.policy == other.policy)

    def fits(self, labels: tuple[Hashable, ...], reference: Reference | None, positive: int | None,
             policy: Policy) -> bool:
        """Whether this setting is the one of these inputs (the reference and policy compared by identity)."""
        return (self.labels == labels and self.reference is reference and self.positive == positive
                and self.policy is policy)


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
    """Scores, prior correction, shift and flags of one window's K×K counts (``evaluate_windows`` of one)."""
    return evaluate_windows([(name, kind, counts)], Setting.of(labels, reference, positive, policy))[0]


def evaluate_windows(windows: Sequence[tuple[str, str, IntMatrix]],
                     settings: Setting | Sequence[Setting]) -> list[WindowReport]:
    """The ``WindowReport`` of each ``(name, kind, K×K counts)``, computed together: the windows are one (W, K, K)
    stack whose numbers come from one compiled call. ``settings``: one for all windows, or one per window —
    windows of several monitors stack when their settings do (``Setting.stacks_with``)."""
    each = [settings] * len(windows) if isinstance(settings, Setting) else list(settings)
    setting, policy = each[0], each[0].policy
    if len(each) != len(windows) or not all(s is setting or s.stacks_with(setting) for s in each):
        raise ValueError("evaluate_windows needs one setting per window, all of them stacking together")
    counts = np.stack([c for _, _, c in windows]).astype(np.int64, copy=False)
    true_counts, predicted = counts.sum(axis=2), counts.sum(axis=1)
    present = true_counts > 0
    stacked = Stacked.of(each)
    numbers = window_numbers(counts, setting.coded, positive=setting.positive or 0, priors=stacked.priors,
                             has_reference=stacked.with_reference, minority=stacked.minorities, keeps=setting.keeps,
                             log_gammas=log_gammas(len(setting.labels)))
    scores, corrected, distortion, recalls = numbers.scores, numbers.corrected, numbers.distortion, numbers.recalls
    size_list = true_counts.sum(axis=1).tolist()
    shifts: list[PriorShift | None] = [None] * len(windows)
    if stacked.any_reference:
        shifts = [shift if has else None for shift, has in zip(
            prior_shifts_of(numbers, true_counts, stacked.priors, alpha=policy.shift_alpha,
                            min_ratio=policy.shift_min_ratio),
            stacked.with_reference.tolist(), strict=True)]
    n_present = present.sum(axis=1).tolist()
    rrts = numbers.rrt.tolist()
    table = WindowTable(
        [s.labels for s in each], setting.wanted,
        {COUNTS: true_counts, PREDICTED: predicted, PRIORS: numbers.mixes, RECALL: recalls,
         PRECISION: numbers.precisions, CORRECTED_PRECISION: numbers.corrected_precisions},
        {SCORES: scores, CORRECTED: corrected, DISTORTION: distortion},
        correct=np.diagonal(counts, axis1=1, axis2=2).astype(np.float64), totals=true_counts.astype(np.float64),
        confidence=policy.confidence, exponents=setting.exponents)
    # a present class's recall collapsed (an absent class's recall is NaN: never <=)
    collapsed = np.asarray((recalls <= policy.collapse_recall).any(axis=1)).tolist()
    present_rows = present.tolist()
    # Type 1 candidates of every window at once: Condition-1 violators whose distortion is material (NaN is not)
    material = (setting.violates & (np.abs(distortion) > policy.type1_tolerance)).T.tolist()
    reports = []
    for w, ((name, kind, _), s) in enumerate(zip(windows, each, strict=True)):
        present_w = present_rows[w]
        flags = _flags(w, scores, corrected, distortion, s, material=material[w], rrt=rrts[w], shift=shifts[w],
                       n=size_list[w], n_present=n_present[w], collapsed=counts[w] if collapsed[w] else None)
        labels = s.labels
        reports.append(WindowReport(
            name=name,
            kind=kind,
            n=size_list[w],
            labels=labels,
            confusion=ConfusionCounts.of_known(s.index, counts[w].copy()),
            counts=Deferred(table, w, COUNTS),
            predicted=Deferred(table, w, PREDICTED),
            priors=Deferred(table, w, PRIORS),
            present=tuple(itertools.compress(labels, present_w)),
            absent=tuple(label for label, here in zip(labels, present_w, strict=True) if not here),
            positive=None if s.positive is None else labels[s.positive],
            rrt=rrts[w],
            ir=math.nan if s.reference is None else s.reference.ir,
            prior_shift=shifts[w],
            recall=Deferred(table, w, RECALL),
            precision=Deferred(table, w, PRECISION),
            corrected_precision=Deferred(table, w, CORRECTED_PRECISION),
            scores=Deferred(table, w, SCORES),
            corrected=Deferred(table, w, CORRECTED),
            distortion=Deferred(table, w, DISTORTION),
            competitiveness=Deferred(table, w, COMPETITIVENESS),
            flags=flags,
            recall_interval=Deferred(table, w, RECALL_INTERVAL),
            intervals=Deferred(table, w, INTERVALS),
        ))
    return reports


@dataclass(frozen=True)
class Stacked:
    """What the settings of a stack of W windows give as arrays: whether each window has a reference, its priors
    in class order (W × K, normalised; uniform for a window without one, which is read only where there is one),
    RRT's minorities (−1: none)."""

    with_reference: np.ndarray
    any_reference: bool
    priors: FloatArray
    minorities: np.ndarray

    @classmethod
    def of(cls, settings: Sequence[Setting]) -> Stacked:
        """The stack of ``settings`` (one per window): kept by the setting when all windows share one."""
        first = settings[0]
        same = all(s is first for s in settings)
        if same and (kept := first._stacks.get(len(settings))) is not None:
            return kept
        k = len(first.labels)
        with_reference = np.array([s.priors is not None for s in settings], dtype=bool)
        rows = [s.priors if s.priors is not None else np.full(k, 1.0 / max(k, 1)) for s in settings]
        priors = np.array(rows, dtype=np.float64).reshape(len(settings), k)
        stacked = cls(with_reference, bool(with_reference.any()), priors,
                      np.array([-1 if s.minority is None else s.minority for s in settings], dtype=np.int64))
        for array in (stacked.with_reference, stacked.priors, stacked.minorities):
            array.setflags(write=False)  # shared by every report of the setting
        if same:
            first._stacks[len(settings)] = stacked
        return stacked


def _flags(w: int, scores: FloatArray, corrected: FloatArray, distortion: FloatArray, setting: Setting, *,
           material: list[bool], rrt: float, shift: PriorShift | None, n: int, n_present: int,
           collapsed: FloatArray | None) -> tuple[Flag, ...]:
    """The flags of window ``w``: Type 1 among the metrics whose distortion is ``material``, Type 2 with a
    reference and samples, Condition 3 when a present class's recall collapsed (``collapsed``: its counts)."""
    policy, wanted, reference = setting.policy, setting.wanted, setting.reference
    flags: list[Flag] = []
    if shift is not None and shift.p_value < policy.shift_alpha and any(material):
        pick = {wanted[i]: i for i, yes in enumerate(material) if yes}
        flags += type1_flags({m: float(scores[i, w]) for m, i in pick.items()},
                             {m: float(corrected[i, w]) for m, i in pick.items()},
                             {m: float(distortion[i, w]) for m, i in pick.items()},
                             rrt=rrt, ir=math.nan if reference is None else reference.ir,
                             tolerance=policy.type1_tolerance, mix_differs=True)
    if setting.priors is not None and n > 0:
        flags += type2_flags(wanted, present=n_present, reference=setting.reference_classes)
    if collapsed is not None:
        flags += condition3_flags(dict(zip(wanted, scores[:, w].tolist(), strict=True)), Confusion.of(collapsed),
                                  setting.labels, policy)
    return tuple(flags)
