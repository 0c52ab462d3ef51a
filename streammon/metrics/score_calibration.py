"""Probability metrics of a model's scores from a window's score tally: Brier score, log loss and expected
calibration error (pure). All three are exact: they read the sums and the top-label bins kept beside the
score bins, not the bins themselves.

- ``brier`` (Brier 1950) — binary: ``mean (s − y)²`` with ``s`` the positive class's score and ``y = 1`` for a
  positive (scikit-learn's ``brier_score_loss``, range [0, 1]); K > 2: ``mean Σ_k (s_k − 1[y = k])²``, the
  multi-class form Brier defined (scikit-learn ≥ 1.7's ``brier_score_loss`` on an (n, K) array, range
  [0, 2]). At K = 2 the multi-class form would read twice the binary one; streammon follows scikit-learn.
- ``log_loss`` — ``−mean ln s_y`` with ``s_y`` the true class's score (binary: ``s`` for a positive, ``1 − s``
  for a negative), the scores clipped to ``[CLIP, 1 − CLIP]`` = [1e-15, 1 − 1e-15] (scikit-learn's clip before
  1.5; since then it clips at the float64 machine epsilon, 2.2e-16, so only scores within 1e-15 of 0 or 1 read
  differently: by at most ln(1e-15 / 2.2e-16) ≈ 1.5 per such sample, divided by n). The rows are not
  renormalised: a K > 2 score row should sum to 1.
- ``ece`` (Naeini et al. 2015; Guo et al. 2017) — ``Σ_b (n_b / n)·|acc_b − conf_b|`` over ``ECE_BINS`` = 15
  equal-width bins of the top-label confidence (the largest probability; binary: ``max(s, 1 − s)``), ``acc_b``
  the share of the bin's samples whose arg-max class is the true one (binary: the positive class when ``s > 0.5``,
  the other one at ``s ≤ 0.5``, so a tie at 0.5 is a negative decision in any class order; K > 2: the first
  largest in class order, as numpy's ``argmax``), ``conf_b`` their mean confidence. The
  bins are ``[b/15, (b+1)/15)``, the last closed (``score_bins.ece_bins``); Guo et al. close them on the right
  instead, which differs only for a confidence exactly on an edge.

Each reads at the class mix ``priors`` when given (``score_input``): a weighted mean, exactly scikit-learn's
value with per-class sample weights. None is Condition 1: each is a mean over samples, so the class mix moves
it. Undefined (an empty window, a class the mix needs but the window lacks) is NaN.

>>> from streammon.metrics.score_bins import tally
>>> t = tally(np.array([0, 0, 1, 1]), np.array([0.1, 0.6, 0.4, 0.9]), 2)
>>> round(brier(t), 12), round(log_loss(t), 12)  # sklearn: 0.185, 0.5108256237659907
(0.185, 0.510825623766)
>>> ece(t)  # confidences 0.9, 0.6, 0.6, 0.9; bin of 0.6: accuracy 0, bin of 0.9: accuracy 1
0.35
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from streammon.metrics.score_input import ScoreRead

_SUM, _SUM_SQ, _SUM_LOG, _SUM_LOG1M = range(4)  # score_bins.SUMS
_COUNT, _CORRECT, _CONFIDENCE = range(3)  # score_bins.TOP


def _weighted_mean(read: ScoreRead, per_class: Any) -> float:
    """Σ_c w_c · per_class[c] / Σ_c w_c · n_c: the mean over samples at the read's weights."""
    total = float(read.weights @ read.counts)
    return float(read.weights @ np.asarray(per_class, dtype=np.float64)) / total


def brier(tally: Any, *, positive: int = 1, priors: Any = None) -> float:
    """Brier score of a window's scores (module docstring): binary about class ``positive`` (range [0, 1]),
    K > 2 the multi-class sum over classes (range [0, 2]); at the class mix ``priors`` when given.

    >>> from streammon.metrics.score_bins import tally
    >>> probs = np.array([[.7, .2, .1], [.1, .8, .1], [.2, .2, .6], [.5, .4, .1]])
    >>> round(brier(tally(np.array([0, 1, 2, 1]), probs, 3)), 12)  # sklearn >= 1.7: 0.265
    0.265
    """
    read = ScoreRead.of(tally, priors)
    positive = read.positive(positive)
    if not read.defined:
        return math.nan
    s = read.sums
    if read.binary:
        c = read.column(positive)
        squared = s[:, c, _SUM_SQ].copy()  # Σ(s − 0)² for the negative class
        squared[positive] += read.counts[positive] - 2.0 * s[positive, c, _SUM]  # Σ(s − 1)² for the positive
        return _weighted_mean(read, squared)
    own = np.arange(read.k)
    per_class = s[:, :, _SUM_SQ].sum(axis=1) - 2.0 * s[own, own, _SUM] + read.counts
    return _weighted_mean(read, per_class)


def log_loss(tally: Any, *, positive: int = 1, priors: Any = None) -> float:
    """Log loss of a window's scores (module docstring; scores clipped to [1e-15, 1 − 1e-15]): binary about
    class ``positive``; at the class mix ``priors`` when given.

    >>> from streammon.metrics.score_bins import tally
    >>> round(log_loss(tally(np.array([0, 1]), np.array([0.0, 1.0]), 2)), 6)  # both certain and right
    0.0
    >>> round(log_loss(tally(np.array([1]), np.array([0.0]), 2)), 3)  # certain and wrong: −ln(1e-15)
    34.539
    """
    read = ScoreRead.of(tally, priors)
    positive = read.positive(positive)
    if not read.defined:
        return math.nan
    s = read.sums
    if read.binary:
        c = read.column(positive)
        logs = s[:, c, _SUM_LOG1M].copy()  # a negative's loss: −ln(1 − s)
        logs[positive] = s[positive, c, _SUM_LOG]
    else:
        own = np.arange(read.k)
        logs = s[own, own, _SUM_LOG]
    return -_weighted_mean(read, logs)


def ece(tally: Any, *, positive: int = 1, priors: Any = None) -> float:
    """Expected calibration error of a window's top-label confidences over 15 equal-width bins (module
    docstring), exact from the tally; at the class mix ``priors`` when given. The top label does not depend on
    ``positive`` (checked, taken for the score metrics' one signature).

    >>> from streammon.metrics.score_bins import tally
    >>> t = tally(np.array([0, 1, 2, 2]), np.array([[.6, .3, .1], [.2, .5, .3], [.1, .2, .7], [.5, .1, .4]]), 3)
    >>> round(ece(t), 12)  # bins: [0.467, 0.533) 1 of 2 right at 0.5 (gap 0), 0.6 right, 0.7 right → (0.4 + 0.3)/4
    0.175
    """
    read = ScoreRead.of(tally, priors)
    read.positive(positive)
    if not read.defined:
        return math.nan
    gap = np.einsum("k,kb->b", read.weights, read.top[:, :, _CORRECT] - read.top[:, :, _CONFIDENCE])
    return float(np.abs(gap).sum()) / float(read.weights @ read.counts)
