"""All five score metrics of one window's tally at once, as read and at a class mix (pure): what a report reads.

``roc_auc``, ``average_precision``, ``brier``, ``log_loss`` and ``ece`` are defined in ``score_ranking`` and
``score_calibration`` (one function per metric, each checking its tally: the public API). A report reads all
five of every window twice — as read and at the reference mix — and at K = 10 the per-metric functions walk the
K × K × 2,048 bins pair by pair (Hand & Till's M has 45 pairs, each two AUCs): ~13 ms a window. Here the same
formulas read the bins once, for every class pair together:

- ``A[i, j]``, the AUC of class i against class j on class i's score column, for all pairs from one cumulative
  sum of the bins (``Σ_b h[i, i, b]·(Σ_{b' < b} h[j, i, b'] + ½ h[j, i, b]) / (n_i n_j)``); Hand & Till's M is
  the mean of ``(A[i, j] + A[j, i])/2`` over the present pairs, and the one-vs-rest AUC of class c is
  ``Σ_{j ≠ c} w_j n_j A[c, j] / Σ_{j ≠ c} w_j n_j`` — the pooled negatives' AUC is the weighted mean of the
  pairwise ones, so the class weights ``w`` enter only there;
- the one-vs-rest average precisions of every class from one reversed cumulative sum;
- the Brier score, log loss and ECE from the exact sums, as ``score_calibration`` does.

The tally is the monitor's own (``streammon.counting.score_tally``), not checked again. The weights and what is
undefined (NaN) follow ``score_input.ScoreRead``; the tests compare every value with scikit-learn.

>>> from streammon.metrics.score_bins import tally
>>> t = tally(np.array([0, 0, 0, 1, 1]), np.array([0.1, 0.4, 0.8, 0.35, 0.9]), 2)
>>> read = score_metrics(*t, positive=1)
>>> read["roc_auc"], read["average_precision"]  # scikit-learn: 0.6666666666666667, 0.75
(0.6666666666666666, 0.75)
>>> p = np.array([[.6, .3, .1], [.2, .5, .3], [.1, .2, .7], [.5, .1, .4], [.3, .3, .4]])
>>> t3 = tally(np.array([0, 1, 2, 2, 1]), p, 3)
>>> score_metrics(*t3)["roc_auc"], round(score_metrics(*t3, multi_class="ovr")["roc_auc"], 12)
(0.9375, 0.944444444444)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from streammon.metrics.confusion import FloatArray
from streammon.metrics.jitting import compiled
from streammon.metrics.prior import normalise_priors

_SUM, _SUM_SQ, _SUM_LOG, _SUM_LOG1M = range(4)  # score_bins.SUMS
_COUNT, _CORRECT, _CONFIDENCE = range(3)  # score_bins.TOP
NAMES = ("roc_auc", "average_precision", "brier", "log_loss", "ece")


def class_weights(counts: FloatArray, priors: Any) -> FloatArray:
    """Each true class's sample weight: 1 as read (``priors`` None), else ``π_c·n/n_c`` (0 for a class the mix
    lacks, NaN for one the mix needs but the window lacks) — ``score_input.ScoreRead``'s rule."""
    if priors is None:
        return np.ones(len(counts))
    mix = normalise_priors(priors, len(counts))
    known = counts > 0
    out: FloatArray = np.where(known, mix * counts.sum() / np.where(known, counts, 1.0),
                               np.where(mix > 0, np.nan, 0.0))
    return out


def _mean(values: FloatArray) -> float:
    kept = values[~np.isnan(values)]
    return math.fsum(kept.tolist()) / len(kept) if len(kept) else math.nan


def _average_precisions(pos: FloatArray, neg: FloatArray) -> FloatArray:
    """Each row's AP (rows: classes; bins in ascending score order; ``pos``, ``neg`` weighted): thresholds from
    the top bin down, a bin's samples entering together; NaN for a row without positives."""
    p, q = pos[:, ::-1], neg[:, ::-1]
    tp, fp = np.cumsum(p, axis=1), np.cumsum(q, axis=1)
    seen = tp + fp
    precision = tp / np.where(seen > 0, seen, 1.0)
    total = p.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(total > 0, (p * precision).sum(axis=1) / np.where(total > 0, total, 1.0), np.nan)
    return out


def _binary(hist: Any, sums: Any, w: FloatArray, counts: FloatArray, positive: int) -> dict[str, float]:
    column = 0 if hist.shape[1] == 1 else positive
    pos, neg = hist[positive, column].astype(np.float64), hist[1 - positive, column].astype(np.float64)
    npos, nneg = float(pos.sum()), float(neg.sum())
    below = np.cumsum(neg) - 0.5 * neg
    auc = float(pos @ below) / (npos * nneg) if npos > 0 and nneg > 0 else math.nan  # weights cancel
    ap = float(_average_precisions((w[positive] * pos)[None], (w[1 - positive] * neg)[None])[0])
    total = float(w @ counts)
    s = sums[:, column]
    squared = s[:, _SUM_SQ].copy()
    squared[positive] += counts[positive] - 2.0 * s[positive, _SUM]
    logs = s[:, _SUM_LOG1M].copy()
    logs[positive] = s[positive, _SUM_LOG]
    return {"roc_auc": auc, "average_precision": ap, "brier": float(w @ squared) / total,
            "log_loss": -float(w @ logs) / total}


def _pairs_loop(hist: Any, weights: Any, numer: Any, aps: Any, negatives: Any) -> None:  # noqa: PLR0912 (one loop)
    """For K-class bins ``hist`` (K true, K columns, B): ``numer[i, j] = Σ_b h[i,i,b]·(Σ_{b'<b} h[j,i,b'] +
    ½h[j,i,b])`` for i ≠ j and, for each row of class ``weights`` (W, K), each class's one-vs-rest average
    precision on its own column (NaN without positives). ``negatives`` (W, B) is scratch space. Only the bins
    a column holds samples in are visited (a window of 1,000 samples fills at most 1,000 of 2,048)."""
    k, _, bins = hist.shape
    live = np.empty(bins, np.int64)
    for i in range(k):
        n_live = 0
        for b in range(bins):
            for j in range(k):
                if hist[j, i, b]:
                    live[n_live] = b
                    n_live += 1
                    break
        for j in range(k):
            if j == i:
                continue
            run = 0.0
            total = 0.0
            for x in range(n_live):
                b = live[x]
                mine = hist[i, i, b]
                h = hist[j, i, b]
                if mine:
                    total += mine * (run + 0.5 * h)
                run += h
            numer[i, j] = total
        for v in range(weights.shape[0]):
            for x in range(n_live):
                negatives[v, x] = 0.0
            for j in range(k):
                if j == i or weights[v, j] == 0.0:
                    continue
                for x in range(n_live):
                    negatives[v, x] += weights[v, j] * hist[j, i, live[x]]
            tp = 0.0
            fp = 0.0
            acc = 0.0
            for x in range(n_live - 1, -1, -1):
                p = weights[v, i] * hist[i, i, live[x]]
                tp += p
                fp += negatives[v, x]
                if p > 0.0:
                    acc += p * tp / (tp + fp)
            aps[v, i] = acc / tp if tp > 0.0 else math.nan


@functools.cache
def _pairs() -> Any:
    """The compiled ``_pairs_loop`` (numba imported and the loop compiled, or loaded from its cache, on first use)."""
    return compiled(_pairs_loop, error_model="numpy")


def _multiclass(hist: Any, sums: Any, w: FloatArray, counts: FloatArray, *, a: FloatArray, ap: FloatArray,
                multi_class: str) -> dict[str, float]:
    k = hist.shape[0]
    own = np.arange(k)
    present = w * counts > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        if multi_class == "ovr":  # the pooled negatives' AUC: the weighted mean of the pairwise ones
            others = (w * counts)[None, :] * (1 - np.eye(k))
            weight = others.sum(axis=1)
            ovr = np.where(present & (weight > 0),
                           np.where(others > 0, a * others, 0.0).sum(axis=1) / np.where(weight > 0, weight, 1),
                           np.nan)
            auc = _mean(ovr)
        else:
            upper = np.triu(np.outer(present, present), 1)
            auc = _mean(((a + a.T) / 2)[upper])
    total = float(w @ counts)
    per_class = sums[:, :, _SUM_SQ].sum(axis=1) - 2.0 * sums[own, own, _SUM] + counts
    return {"roc_auc": auc, "average_precision": _mean(ap[present]), "brier": float(w @ per_class) / total,
            "log_loss": -float(w @ sums[own, own, _SUM_LOG]) / total}


def score_metrics(hist: Any, sums: Any, top: Any, *, positive: int = 1, priors: Any = None,
                  multi_class: str = "ovo") -> dict[str, float]:
    """``roc_auc``, ``average_precision``, ``brier``, ``log_loss`` and ``ece`` of one window's tally (K, C, BINS),
    (K, C, 4), (K, 15, 3), as read or at the class mix ``priors``: the values of ``metrics.compute_scores`` for
    each name (binary about ``positive``; ``roc_auc`` by ``multi_class`` at K > 2), all NaN when undefined (no
    scored sample; a class the mix needs but the window lacks), ``roc_auc`` NaN with one class."""
    return score_metrics_at(hist, sums, top, (priors,), positive=positive, multi_class=multi_class)[0]


def score_metrics_at(hist: Any, sums: Any, top: Any, mixes: Sequence[Any], *, positive: int = 1,
                     multi_class: str = "ovo") -> list[dict[str, float]]:
    """``score_metrics`` at each of ``mixes`` (None: as read), the bins read once for all of them."""
    counts = hist[:, 0, :].sum(axis=1).astype(np.float64)
    weights = [class_weights(counts, priors) for priors in mixes]
    defined = [bool(np.all(np.isfinite(w)) and w @ counts > 0) for w in weights]
    k = hist.shape[0]
    if k > 2 and any(defined):
        rows = np.array([w if ok else np.ones(k) for w, ok in zip(weights, defined, strict=True)])
        numer, aps = np.zeros((k, k)), np.full((len(rows), k), np.nan)
        _pairs()(np.ascontiguousarray(hist, dtype=np.int64), rows, numer, aps, np.zeros((len(rows), hist.shape[2])))
        with np.errstate(invalid="ignore", divide="ignore"):
            a = numer / np.outer(counts, counts)  # A[i, j]: class i above class j on score i (weights cancel)
    out = []
    for v, (w, ok) in enumerate(zip(weights, defined, strict=True)):
        if not ok:
            out.append(dict.fromkeys(NAMES, math.nan))
            continue
        values = (_binary(hist, sums, w, counts, positive) if k == 2
                  else _multiclass(hist, sums, w, counts, a=a, ap=aps[v], multi_class=multi_class))
        gap = np.einsum("k,kb->b", w, top[:, :, _CORRECT] - top[:, :, _CONFIDENCE])
        values["ece"] = float(np.abs(gap).sum()) / float(w @ counts)
        out.append({name: values[name] for name in NAMES})
    return out
