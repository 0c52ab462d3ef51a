"""``Validation``: a labelled, scored validation set — the baseline of the label-free estimates with scores.

A frozen value made once from ``(y_true, y_pred, y_score)``: it checks the inputs, fixes the class order, holds the
confusion counts (so it is accepted wherever a confusion baseline is: ``Monitor(baseline=...)``, the replay's
``baseline=``; ``confusion`` gives them as ``ConfusionCounts``), fits the BCTS calibration once
(``metrics.calibration``) with the covariance of its parameters, and bins the validation's scores for the mix test
(``metrics.score_shift_test``). It then answers, for a window's scores (per sample, or histogram representatives
with counts as ``weights``):

- ``estimate``: the window's class mix by EM after BCTS, with intervals (``MixEstimate``, ``method == "em"``).
  Their validation noise is the spread of EM's estimate over ``bootstrap`` (``BOOTSTRAP`` = 50) replicas of the
  validation set, each with its own BCTS fit: the delta method (``bootstrap=0``) is cheaper but covered only 84 %
  instead of 95 % on a naive Bayes model with 500 validation samples and ~1 % errors — with few errors in the
  validation set the likelihood of the calibration is far from quadratic; the bootstrap covered 97 % there
  (``examples/bench_em_priors.py`` measures it across data sets). The price: 50 BCTS fits when the validation is
  made and 50 EM runs (started at the estimate) per ``estimate`` call. Either way the intervals also carry the
  calibration's misfit at the estimated mix (``misfit``: EM on the validation itself moved to that mix, one more
  EM run), a bias that no amount of validation or window data removes: BCTS's K parameters cannot calibrate a
  real model within each class (on scikit-learn's small data sets the intervals covered 90–93 % without it).
  Where the scores separate the validation set (``Calibration.separable``: no error to learn the model's
  confidence from) they also carry ``metrics.unseen_errors`` — the errors a validation set of ``n_c`` samples a
  class without one cannot rule out — and separable bootstrap replicas are fitted to Platt's smoothed targets, so
  their spread shows the confidence the fit cannot measure (a naive Bayes model with 500 validation samples
  covered 0.90 without both, 0.95 with them; ``examples/bench_em_priors.py``);
- ``expected``: the expected confusion and every catalog metric, ``roc_auc`` and ``average_precision`` at that mix,
  from posteriors of the BCTS map shrunk towards the model's own probabilities by empirical Bayes
  (``shrunk_calibration``, ``calibration.shrink_to_identity``): BCTS's K parameters carry sampling noise that a
  calibrated model does not need (the mix estimate keeps the fitted map, which EM needs); where the scores
  separate the validation set, the map shrunk is Platt's smoothed fit (the separable one has no finite covariance);
- ``mix_test``: the p-value of "only the class mix changed" from the scores.

Scores: binary, the score of the ``positive`` class, shape (n,), or (n, 2) in the class order; K > 2, (n, K) in
the class order (``classes``), rows summing to 1 within ``validation_inputs.ROW_TOLERANCE``.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> y = rng.choice(["ok", "fraud"], 2000, p=[0.9, 0.1])
>>> s = 1 / (1 + np.exp(-(2.0 * (y == "fraud") - 1.0) * 2 - rng.normal(size=2000)))
>>> v = Validation(y, np.where(s > 0.5, "fraud", "ok"), s)
>>> v.labels, v.positive, v.confusion.labels
(('fraud', 'ok'), 'fraud', ('fraud', 'ok'))
>>> e = v.estimate(s)                     # the validation read as a window: its own mix
>>> e.method, bool(abs(e.priors[0] - float(np.mean(y == "fraud"))) < 1e-3)
('em', True)
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from streammon.counting.classes import check_label
from streammon.counting.counts import ConfusionCounts, IntMatrix
from streammon.counting.validation_inputs import (
    class_order,
    labels_of,
    positive_index,
    score_matrix,
)
from streammon.metrics.calibration import Calibration, calibration_covariance, fit_bcts, shrink_to_identity
from streammon.metrics.confusion import FloatArray
from streammon.metrics.em_priors import (
    MixEstimate,
    check_weights,
    em_priors,
    estimate_mix,
    intervals,
    misfit_bias,
    mix_posteriors,
)
from streammon.metrics.expected_scores import (
    decision_counts,
    expected_average_precision,
    expected_confusion,
    expected_metrics,
    expected_roc_auc,
)
from streammon.metrics.score_shift_test import (
    DEFAULT_BINS,
    Binning,
    MixTest,
    class_cell_counts,
    make_binning,
    mix_test,
)
from streammon.metrics.student_t import satterthwaite_df
from streammon.metrics.unseen_errors import unseen_error_covariance

BOOTSTRAP = 50  # replicas of the validation set for the intervals' validation noise (module docstring)


@dataclass(frozen=True)
class Expected:
    """Expected performance of a window without labels, at the mix ``priors`` (``Validation.expected``)."""

    priors: FloatArray
    confusion: FloatArray  # K × K expected counts, rows true, columns predicted, in the class order
    scores: Mapping[str, float]  # every catalog metric that applies, on ``confusion``
    roc_auc: float
    average_precision: float


class Validation:
    """A validation set ``(y_true, y_pred, y_score)`` with its calibration (module docstring)."""

    __slots__ = ("_binning", "_calibration", "_cells", "_classes", "_counts", "_covariance", "_labels", "_positive",
                 "_posteriors", "_priors", "_replicas", "_shrinkage", "_shrunk", "_size")
    _binning: Binning
    _calibration: Calibration
    _cells: FloatArray
    _classes: Any  # the validation's true class indices
    _counts: IntMatrix
    _covariance: FloatArray
    _labels: tuple[Hashable, ...]
    _positive: int | None
    _posteriors: FloatArray  # the validation's own calibrated posteriors (n, K), for the misfit term
    _priors: FloatArray
    _replicas: tuple[tuple[Calibration, FloatArray], ...]
    _shrinkage: float
    _shrunk: Calibration  # BCTS shrunk towards the model's own probabilities: the expected performance's map
    _size: int

    def __init__(self, y_true: Any, y_pred: Any, y_score: Any, *, classes: Sequence[Any] | None = None,
                 positive: Any = None, bins: int = DEFAULT_BINS, bootstrap: int = BOOTSTRAP, seed: int = 0) -> None:
        if isinstance(bins, bool) or not isinstance(bins, int) or bins < 2:  # checked before any work
            raise ValueError(f"bins must be an int >= 2, got {bins!r}")
        if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0:
            raise ValueError(f"bootstrap must be an int >= 0 (replicas of the validation set), got {bootstrap!r}")
        true = [check_label(v) for v in labels_of(y_true, "y_true")]
        pred = [check_label(v) for v in labels_of(y_pred, "y_pred")]
        n = len(true)
        if len(pred) != n:
            raise ValueError(f"y_true and y_pred must have one length, got {n} and {len(pred)}")
        labels = class_order(true, pred, classes)
        k = len(labels)
        index = {label: i for i, label in enumerate(labels)}
        y = np.array([index[v] for v in true], dtype=np.intp)
        present = np.bincount(y, minlength=k)
        if np.any(present == 0):
            missing = [labels[i] for i in np.flatnonzero(present == 0)]
            raise ValueError(f"every class needs validation samples with that true class; none for {missing}")
        chosen = positive_index(labels, present, positive)
        scores = score_matrix(y_score, n, k, labels, chosen)
        counts = np.zeros((k, k), dtype=np.int64)
        np.add.at(counts, (y, np.array([index[v] for v in pred], dtype=np.intp)), 1)
        counts.setflags(write=False)
        calibration = fit_bcts(scores, y, k)
        covariance = calibration_covariance(calibration, scores, y)
        covariance.setflags(write=False)
        # the expected performance keeps Platt's smoothed fit where the scores separate the validation set: its
        # shrinkage needs a finite fit's covariance (EM takes the separable fit: calibration's docstring)
        base = fit_bcts(scores, y, k, smooth=True) if calibration.separable else calibration
        shrunk, shrinkage, _ = shrink_to_identity(
            base, covariance if base is calibration else calibration_covariance(base, scores, y))
        priors = present / n
        priors.setflags(write=False)
        binning = make_binning(scores[:, 1] if k == 2 else scores, k, bins=bins)
        cells = class_cell_counts(binning.assign(scores[:, 1] if k == 2 else scores), y, k, binning.cells)
        cells.setflags(write=False)
        posteriors = calibration.apply(scores)
        posteriors.setflags(write=False)
        y.setflags(write=False)
        for name, value in (("_labels", labels), ("_positive", chosen), ("_counts", counts), ("_priors", priors),
                            ("_calibration", calibration), ("_covariance", covariance), ("_binning", binning),
                            ("_cells", cells), ("_size", n), ("_classes", y), ("_posteriors", posteriors),
                            ("_shrunk", shrunk), ("_shrinkage", shrinkage),
                            ("_replicas", _replicas(scores, y, k, bootstrap, seed, floor=calibration.floor))):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Validation is frozen: cannot set {name!r}")

    def __repr__(self) -> str:
        return f"Validation({self._size} samples, classes {list(self._labels)}, T = {self.calibration.temperature:.3g})"

    @property
    def labels(self) -> tuple[Hashable, ...]:
        """The class order of counts, priors and K > 2 score columns."""
        return self._labels

    @property
    def positive(self) -> Hashable | None:
        """The class a binary (n,) score is the probability of (None when K > 2)."""
        return None if self._positive is None else self._labels[self._positive]

    @property
    def counts(self) -> IntMatrix:
        """K × K validation confusion counts (rows true, columns predicted), read-only."""
        return self._counts

    @property
    def confusion(self) -> ConfusionCounts:
        """The counts as ``ConfusionCounts`` (a fresh copy): what a confusion baseline is."""
        return ConfusionCounts(list(self._labels), self._counts)

    @property
    def priors(self) -> FloatArray:
        """The validation's class mix (the source mix of EM)."""
        return self._priors

    @property
    def calibration(self) -> Calibration:
        """The fitted BCTS map."""
        return self._calibration

    @property
    def shrunk_calibration(self) -> Calibration:
        """BCTS shrunk towards the model's own probabilities by empirical Bayes (``calibration.shrink_to_identity``):
        the map of ``expected``'s posteriors. EM (``estimate``) keeps the fitted ``calibration``."""
        return self._shrunk

    @property
    def shrinkage(self) -> float:
        """The weight ``w`` of the fitted map in ``shrunk_calibration`` (0: the model's own probabilities)."""
        return self._shrinkage

    @property
    def parameter_covariance(self) -> FloatArray:
        """Sampling covariance of the calibration and the source mix (``calibration_covariance``)."""
        return self._covariance

    @property
    def binning(self) -> Binning:
        """The cells of the mix test, from the validation's scores."""
        return self._binning

    def posteriors(self, scores: Any) -> FloatArray:
        """Calibrated posteriors (n, K) at the validation mix of a window's scores (checked as ``y_score``)."""
        return self.calibration.apply(self._window(scores))

    def estimate(self, scores: Any, *, weights: Any = None, alpha: float = 0.05,
                 validation_noise: bool = True) -> MixEstimate:
        """The window's class mix by EM after BCTS. With ``validation_noise`` (the default) the intervals carry
        the validation's noise — by the delta method, or, when the validation was made with ``bootstrap=B``, as
        the spread of EM's estimate over the B refitted calibrations (B EM runs per call) — and the calibration's
        misfit at the estimated mix as the labelled validation shows it (``misfit_bias``: ``b bᵀ`` is added, so
        ``covariance`` is then a mean squared error); without it, the window's noise only. With replicas the
        interval's quantile is Student's t with Satterthwaite's degrees of freedom (``satterthwaite_df``: the
        replicas' variance has B − 1), about 2.01 instead of 1.96 when the validation's noise dominates.
        ``weights``: counts per row (histogram representatives)."""
        window = self._window(scores)
        if not validation_noise:
            return estimate_mix(self.calibration, self._priors, window, weights=weights, alpha=alpha)
        if not self._replicas:
            e = estimate_mix(self.calibration, self._priors, window, weights=weights,
                             parameter_covariance=self._covariance, alpha=alpha)
            noise, spread = e.covariance, np.zeros((len(self._labels),) * 2)
        else:
            e = estimate_mix(self.calibration, self._priors, window, weights=weights, alpha=alpha)
            if not np.all(np.isfinite(e.priors)):
                return e
            start = np.clip(e.priors, 1e-6, None) / np.clip(e.priors, 1e-6, None).sum()  # off the edges for EM
            spread = np.cov(np.array([em_priors(c.apply(window), src, weights=weights, start=start).priors
                                      for c, src in self._replicas]), rowvar=False)
            noise = e.covariance + spread
        if not np.all(np.isfinite(e.priors)):
            return e
        bias = self.misfit(e.priors)
        total = noise + np.outer(bias, bias)
        if self.calibration.separable:  # errors the validation set could not show (metrics.unseen_errors)
            total = total + unseen_error_covariance(e.priors, np.bincount(self._classes, minlength=len(self._labels)),
                                                    e.n)
        total.setflags(write=False)
        # the replicas' variance is itself estimated from B draws: Student's t with Satterthwaite's df, not z
        df = satterthwaite_df(np.diag(total) - np.diag(spread), np.diag(spread), len(self._replicas) or 1)
        lower, upper = intervals(e.priors, total, alpha, df, n=e.n)  # the window's shares: half a sample's floor
        return replace(e, lower=lower, upper=upper, covariance=total)

    def misfit(self, mix: Any) -> FloatArray:
        """The calibration's misfit at ``mix``: EM on this validation set moved to ``mix`` (each sample weighted
        ``mix_c / share_c`` of its class, so its true mix is ``mix``) reads ``mix + misfit``
        (``metrics.em_priors.misfit_bias``; zero at the validation's own mix)."""
        return misfit_bias(self._posteriors, self._classes, self._priors, mix)

    def expected(self, scores: Any, decided: Any, *, weights: Any = None, priors: Any = None) -> Expected:
        """Expected performance at the mix ``priors`` (default: ``estimate(scores)``'s): ``decided`` holds the
        decision of each row (class labels, or (m, K) counts of each decision per histogram row). The posteriors
        are ``shrunk_calibration``'s, moved to the mix: a model that is calibrated already then does not pay
        BCTS's sampling noise (``examples/bench_expected_perf.py``), a miscalibrated one keeps its fit. At K > 2
        ``roc_auc`` and ``average_precision`` are macro one-vs-rest (as NannyML's CBPE), not the catalog's default
        one-vs-one ``roc_auc``."""
        window = self._window(scores)
        rows, k = window.shape
        w = check_weights(weights, rows)
        d = np.asarray(decided)
        if d.ndim == 0 or len(d) != rows:  # checked before the weights could broadcast against a wrong length
            raise ValueError(f"decided must hold one decision per score row: {rows} rows, got "
                             f"{'a scalar' if not d.ndim else len(d)}")
        if d.ndim == 1:
            index = {label: i for i, label in enumerate(self._labels)}
            try:
                d = np.array([index[check_label(v)] for v in d], dtype=np.intp)
            except KeyError as error:
                raise ValueError(f"decided holds {error.args[0]!r}, not a class of {list(self._labels)}") from None
        d = decision_counts(d, rows, k)  # (rows, K): one-hot rows, or the given counts checked
        if priors is None:
            mix = self.estimate(window, weights=w, validation_noise=False).priors
        else:
            mix = np.asarray(priors, dtype=np.float64)
            if mix.shape != (k,) or not np.all(np.isfinite(mix)) or np.any(mix < 0) or abs(mix.sum() - 1) > 1e-6:
                raise ValueError(f"priors must be {k} non-negative shares summing to 1 (in the order "
                                 f"{list(self._labels)}), got {priors!r}")
        adjusted = mix_posteriors(self._shrunk.apply(window), self._priors, mix)
        cm = expected_confusion(adjusted, d * w[:, None])
        pos = self._positive or 0
        ranking = window[:, pos] if len(self._labels) == 2 else window
        return Expected(mix, cm, expected_metrics(cm, positive=pos),
                        expected_roc_auc(ranking, adjusted, weights=w, positive=pos),
                        expected_average_precision(ranking, adjusted, weights=w, positive=pos))

    def mix_test(self, scores: Any, *, weights: Any = None) -> MixTest:
        """The p-value of "only the class mix changed" from the window's scores (``weights``: sample counts)."""
        window = self._window(scores)
        w = check_weights(weights, window.shape[0])
        cells = self.binning.assign(window[:, 1] if len(self._labels) == 2 else window)
        return mix_test(self._cells, np.bincount(cells, weights=w, minlength=self.binning.cells))

    def _window(self, scores: Any) -> FloatArray:
        s = np.asarray(scores)
        return score_matrix(scores, s.shape[0] if s.ndim else -1, len(self._labels), self._labels, self._positive)


def _replicas(scores: FloatArray, y: Any, k: int, count: int, seed: int, *,
              floor: float) -> tuple[tuple[Calibration, FloatArray], ...]:
    """``count`` bootstrap replicas of the validation set: each one's BCTS fit and class mix (a replica missing a
    class is drawn again, up to ``count`` more times), with the validation's own probability floor."""
    rng = np.random.default_rng(seed)
    out: list[tuple[Calibration, FloatArray]] = []
    n = len(y)
    for _ in range(2 * count):
        if len(out) == count:
            break
        idx = rng.integers(0, n, n)
        present = np.bincount(y[idx], minlength=k)
        if present.min() == 0:
            continue
        fit = fit_bcts(scores[idx], y[idx], k, floor=floor)
        if fit.separable:  # its spread must show what the fit cannot: how confident the model really is
            fit = fit_bcts(scores[idx], y[idx], k, smooth=True, floor=floor)
        out.append((fit, present / n))
    return tuple(out)
