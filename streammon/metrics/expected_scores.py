"""Expected performance without labels: a window's expected confusion and scores from mix-adjusted posteriors (pure).

A calibrated posterior ``p'ᵢ`` (at the window's estimated mix: ``em_priors.mix_posteriors``) is the probability of
each true class for sample ``i``; the decision ``ŷᵢ`` is known. So the expected confusion matrix of the window is
``E[M] = Σᵢ p'ᵢ ⊗ onehot(ŷᵢ)`` (rows true, columns predicted), and every confusion metric has a plug-in expected
value ``f(E[M])`` (through the catalog, ``streammon.metrics.compute``). This is NannyML's confidence-based
performance estimation (CBPE: calibrated posteriors → expected confusion → metric), with the label-shift correction
CBPE lacks: CBPE uses the posteriors calibrated at the reference mix, which are biased when the mix moved; Saerens,
Latinne & Decaestecker (2002) move them to the window's mix first.

Score metrics read the expected class-conditional score distributions: sample ``i`` counts as a positive with
weight ``p'ᵢ₊`` and as a negative with weight ``1 − p'ᵢ₊``, so ``roc_auc`` is the weighted Mann–Whitney statistic
(ties count ½) — exactly ``sklearn.metrics.roc_auc_score`` on the samples duplicated as a positive and a negative
with those sample weights. ``average_precision`` is a ratio whose terms are products of labels, so that plug-in
(``weighted_average_precision``) is biased low: ``E[tpₛ·TP(≥ s)] = E[tpₛ]·E[TP(≥ s)] + Var(tpₛ)``, and the variance
term is largest at the top of the ranking where few samples share a threshold (0.035 too low on 60 samples,
0.003 on 1,000, against the mean over simulated labellings). ``expected_average_precision`` is the expectation
over labels drawn independently from the posteriors: its numerator exactly, its division by the number of
positives to second order (delta method), so its error is O(1/E[P]²) — within the Monte Carlo error of 20,000
simulated labellings in the tests. K > 2: macro one-vs-rest over the classes.

Inputs are per-sample arrays or a histogram: rows are samples or bin representatives, ``decided`` gives per row the
decision (a class index) or, for a histogram, the count of each decision in that bin ((m, K) counts).

>>> p = np.array([[0.9, 0.1], [0.4, 0.6], [0.2, 0.8]])   # adjusted posteriors
>>> expected_confusion(p, [0, 1, 1]).round(6).tolist()  # rows true, columns predicted
[[0.9, 0.6], [0.1, 1.4]]
>>> round(expected_roc_auc([0.1, 0.6, 0.8], p), 6)   # (0.6·0.9 + 0.8·1.3 + ½(0.09 + 0.24 + 0.16)) / (1.5·1.5)
0.811111
>>> round(expected_average_precision([0.1, 0.6, 0.8], [[0, 1], [1, 0], [0, 1]]), 6)   # labels known: plain AP
0.833333
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from streammon.metrics.confusion import FloatArray
from streammon.metrics.score_bins import bin_edges
from streammon.metrics.specs import REQUIRED, applicable, compute, spec

MIN_EXPECTED_POSITIVES = 1e-6  # expected positives below which expected_ap is NaN: its rounding error is ~2.2e-16/μ


def bin_representatives() -> FloatArray:
    """One score per bin of ``score_bins`` (``BINS``), to feed a window's histogram as rows with its counts as
    weights: each bin's midpoint in logit between its edges (``bin_edges``), the lower edge where the bin holds a
    single float (the last steps below 1), half the upper edge for bin 0 (which starts at 0). Within a bin every
    score then reads as its representative: EM, the expected confusion and the mix test move by at most the
    calibration's change across half a bin (an inner bin's logit step is about 0.015).

    >>> r = bin_representatives()
    >>> from streammon.metrics.score_bins import BINS, score_bins
    >>> bool(np.all(score_bins(r) == np.arange(BINS)))
    True
    """
    edges = bin_edges()
    low, high = edges[:-1], edges[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        mid = 0.5 * (np.log(low) - np.log1p(-low) + np.log(high) - np.log1p(-high))
        out: FloatArray = 1.0 / (1.0 + np.exp(-mid))
    out[0] = high[0] / 2
    inside = (out >= low) & (out < high)
    out[~inside] = low[~inside]  # a bin one float wide (or rounding at its edge): its lower edge
    out[-1] = low[-1]
    return out


def decision_counts(decided: Any, m: int, k: int) -> FloatArray:
    """``decided`` as an (m, K) array of decision counts per row: class indices (m,) become one-hot rows."""
    d = np.asarray(decided)
    if d.ndim == 1:
        if d.shape != (m,) or d.dtype.kind not in "iu" or (m and (d.min() < 0 or d.max() >= k)):
            raise ValueError(f"decided must be {m} class indices in [0, {k}) or ({m}, {k}) counts, got {decided!r}")
        out = np.zeros((m, k))
        out[np.arange(m), d.astype(np.intp)] = 1.0
        return out
    counts = np.asarray(d, dtype=np.float64)
    if counts.shape != (m, k) or not np.all(np.isfinite(counts)) or np.any(counts < 0):
        raise ValueError(f"decided must be {m} class indices or ({m}, {k}) non-negative counts, got shape {d.shape}")
    return counts


def expected_confusion(posteriors: Any, decided: Any) -> FloatArray:
    """``Σᵢ p'ᵢ ⊗ dᵢ``: the expected K×K confusion (rows true, columns predicted) of a window (module docstring).
    A class expected fewer than ``MIN_EXPECTED_POSITIVES`` times is absent (its row 0), as for ``expected_ap``:
    EM gives a class the window lacks a share of ~1e-17, not 0, and its recall would read 0 from that rounding
    (a window of certain predictions of one class read an expected ACSA of 1/3, every other class "missed").

    >>> expected_confusion([[1.0, 1e-17], [1.0, 1e-17]], [0, 0]).tolist()
    [[2.0, 0.0], [0.0, 0.0]]
    """
    p = np.asarray(posteriors, dtype=np.float64)
    if p.ndim != 2 or not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"posteriors must be an (m, K) array of probabilities, got shape {p.shape}")
    d = decision_counts(decided, p.shape[0], p.shape[1])
    out: FloatArray = p.T @ d
    out[out.sum(axis=1) < MIN_EXPECTED_POSITIVES] = 0.0
    return out


def expected_metrics(confusion: Any, *, positive: int = 1,
                     params: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, float]:
    """Every catalog metric that applies at this K, on the expected confusion (NaN where undefined); ``params``
    gives a metric's parameters by name (``{"holder": {"p": -1}}``); one with a required parameter not given
    (``holder``'s ``p``) is left out.

    >>> m = expected_metrics([[80.0, 20.0], [10.0, 90.0]])
    >>> round(m["tpr"], 6), round(m["precision"], 6)
    (0.9, 0.818182)
    """
    cm = np.asarray(confusion, dtype=np.float64)
    given = params or {}
    out = {}
    for name in applicable(cm.shape[0]):
        mine = dict(given.get(name, {}))
        if any(value is REQUIRED and key not in mine for key, value in spec(name).params.items()):
            continue
        out[name] = compute(name, cm, positive=positive, **mine)
    return out


def weighted_roc_auc(scores: Any, positive: Any, negative: Any) -> float:
    """``P(s⁺ > s⁻) + ½ P(s⁺ = s⁻)`` with positives and negatives weighted (NaN when either weighs nothing)."""
    wp, wn = _ranked(scores, positive, negative)
    total_p, total_n = wp.sum(), wn.sum()
    if total_p <= 0 or total_n <= 0:
        return math.nan
    below = np.cumsum(wn) - wn  # negative weight strictly below each distinct score
    return float((wp @ below + 0.5 * wp @ wn) / (total_p * total_n))


def weighted_average_precision(scores: Any, positive: Any, negative: Any) -> float:
    """scikit-learn's ``average_precision_score`` with weighted positives and negatives (NaN without positives)."""
    wp, wn = _ranked(scores, positive, negative)
    total_p = wp.sum()
    if total_p <= 0:
        return math.nan
    tp = np.cumsum(wp[::-1])  # thresholds from the highest distinct score down
    fp = np.cumsum(wn[::-1])
    predicted = tp + fp
    precision = np.divide(tp, predicted, out=np.zeros_like(tp), where=predicted > 0)
    recall_step = wp[::-1] / total_p
    return float(recall_step @ precision)


def _ranked(scores: Any, positive: Any, negative: Any) -> tuple[FloatArray, FloatArray]:
    """The positive and negative weight at each distinct score, the scores ascending."""
    at_p, at_n = _at_scores(*_flat(scores, positive, negative))
    return at_p, at_n


def _flat(scores: Any, *weights: Any) -> list[FloatArray]:
    """``scores`` and each of ``weights`` as flat float arrays, checked to be of one length, the scores finite."""
    arrays = [np.asarray(a, dtype=np.float64).ravel() for a in (scores, *weights)]
    if any(a.shape != arrays[0].shape for a in arrays) or not np.all(np.isfinite(arrays[0])):
        raise ValueError("scores and weights must be finite arrays of one length, got "
                         + ", ".join(str(a.shape) for a in arrays))
    return arrays


def _at_scores(scores: FloatArray, *weights: FloatArray) -> list[FloatArray]:
    """Each of ``weights`` summed at each distinct score of ``scores``, the scores ascending."""
    unique, inverse = np.unique(scores, return_inverse=True)
    return [np.bincount(inverse, weights=w, minlength=unique.size).astype(np.float64) for w in weights]


def expected_ap(scores: Any, weights: Any, share: Any) -> float:
    """``E[average_precision]`` when row ``i`` stands for ``weights[i]`` samples, each a positive independently with
    probability ``share[i]`` (module docstring): with ``eₛ``, ``vₛ``, ``μ3ₛ`` the mean, variance and third central
    moment of the positives at the distinct score ``s``, ``cₛ`` its samples, cumulated from the top (``E``, ``V``,
    ``N``) and ``X = Σₛ tpₛ·TP(≥ s)/N(≥ s)``, ``P = Σₛ tpₛ``:
    ``E[X] = Σₛ (eₛEₛ + vₛ)/Nₛ``, ``Cov(X, P) = Σₛ (eₛV₍ₛ₋₁₎ + μ3ₛ + 2eₛvₛ + E₍ₛ₋₁₎vₛ)/Nₛ`` (independent counts),
    and ``E[X/P] ≈ E[X]/μ − Cov(X, P)/μ² + E[X]·Var(P)/μ³``, ``μ = E[P]``. NaN when no positive is expected:
    μ below ``MIN_EXPECTED_POSITIVES`` — the last two terms are each ~1/μ and cancel, so rounding alone moves the
    result by ~2.2e-16/μ (a window of confident predictions of one class gave a class μ ≈ 1e-16: an AP of −0.25,
    or, at μ < 1e-103, a ZeroDivisionError that failed the whole report).
    Posteriors of 0 or 1 (known labels) give scikit-learn's ``average_precision_score`` exactly.

    >>> round(expected_ap([0.9, 0.5, 0.2], [1, 2, 1], [1.0, 0.0, 1.0]), 6)   # known labels: (1·1 + 1·2/4) / 2
    0.75
    """
    s, w, p = _flat(scores, weights, share)
    q = p * (1.0 - p)
    # per distinct score, from the highest down
    e, v, m3, c = (a[::-1] for a in _at_scores(s, w * p, w * q, w * q * (1.0 - 2.0 * p), w))
    mu = float(e.sum())
    if not mu >= MIN_EXPECTED_POSITIVES:
        return math.nan
    cum_e, cum_v, cum_n = np.cumsum(e), np.cumsum(v), np.cumsum(c)
    inverse_n = np.divide(1.0, cum_n, out=np.zeros_like(cum_n), where=cum_n > 0)
    x = float(np.sum((e * cum_e + v) * inverse_n))
    cov = float(np.sum((e * (cum_v - v) + m3 + 2.0 * e * v + (cum_e - e) * v) * inverse_n))
    return x / mu - cov / mu**2 + x * float(v.sum()) / mu**3


def expected_roc_auc(scores: Any, posteriors: Any, *, weights: Any = None, positive: int = 1) -> float:
    """Expected ``roc_auc``: binary (``scores`` (m,), the positive class's) or macro one-vs-rest (``scores`` (m, K)),
    each row weighted by ``posteriors`` (adjusted, (m, K)) times ``weights`` (histogram counts; default 1)."""
    return _one_vs_rest(_plug_in_roc_auc, scores, posteriors, weights, positive)


def expected_average_precision(scores: Any, posteriors: Any, *, weights: Any = None, positive: int = 1) -> float:
    """Expected ``average_precision`` (``expected_ap``: the mean over labellings drawn from the posteriors), as
    ``expected_roc_auc`` reads its inputs (binary or macro one-vs-rest).

    >>> p = np.array([[0.9, 0.1], [0.4, 0.6], [0.2, 0.8]])
    >>> round(expected_average_precision([0.1, 0.6, 0.8], p), 3)   # the 7 labellings with a positive: 0.925
    0.926
    >>> round(weighted_average_precision([0.1, 0.6, 0.8], p[:, 1], p[:, 0]), 3)   # the plug-in, biased low
    0.74
    """
    return _one_vs_rest(expected_ap, scores, posteriors, weights, positive)


def _plug_in_roc_auc(scores: Any, weights: Any, share: Any) -> float:
    """NaN when fewer than ``MIN_EXPECTED_POSITIVES`` positives or negatives are expected (an absent class)."""
    positive, negative = weights * share, weights * (1.0 - share)
    if not min(float(np.sum(positive)), float(np.sum(negative))) >= MIN_EXPECTED_POSITIVES:
        return math.nan
    return weighted_roc_auc(scores, positive, negative)


def _one_vs_rest(metric: Any, scores: Any, posteriors: Any, weights: Any, positive: int) -> float:
    p = np.asarray(posteriors, dtype=np.float64)
    s = np.asarray(scores, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != s.shape[0]:
        raise ValueError(f"posteriors must be ({s.shape[0]}, K), got shape {p.shape}")
    w = np.ones(p.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (p.shape[0],) or np.any(w < 0):
        raise ValueError(f"weights must be {p.shape[0]} non-negative numbers, got {weights!r}")
    if s.ndim == 1:
        return float(metric(s, w, p[:, positive]))
    values = [metric(s[:, c], w, p[:, c]) for c in range(p.shape[1])]
    finite = [v for v in values if not math.isnan(v)]
    return float(np.mean(finite)) if finite else math.nan
