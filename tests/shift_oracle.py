"""The exact prior-shift test recomputed from scipy.stats.binomtest: the oracle of the tests of the criterion."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def exact_shift_p(counts: np.ndarray, priors: np.ndarray) -> float:
    """min(1, m · min_c p_c), p_c = min(1, 2·min(binomtest 'less', 'greater')) over the classes with a prior,
    m = 1 with two such classes and their number otherwise; 0 when a class without a prior is present."""
    counts = np.asarray(counts, dtype=np.int64)
    q = np.asarray(priors, dtype=float) / np.sum(priors)
    n = int(counts.sum())
    if (counts[q == 0] > 0).any():
        return 0.0
    per_class = []
    for x, pi in zip(counts[q > 0].tolist(), q[q > 0].tolist(), strict=True):
        if pi >= 1.0:
            per_class.append(1.0)
            continue
        less = stats.binomtest(x, n, pi, alternative="less").pvalue
        greater = stats.binomtest(x, n, pi, alternative="greater").pvalue
        per_class.append(min(1.0, 2 * min(less, greater)))
    m = 1 if len(per_class) == 2 else len(per_class)
    return min(1.0, m * min(per_class))


def prior_ratio(counts: np.ndarray, priors: np.ndarray) -> float:
    """max over classes with a prior of max(share/prior, prior/share); inf for an absent one or an unseen class."""
    counts = np.asarray(counts, dtype=float)
    q = np.asarray(priors, dtype=float) / np.sum(priors)
    share = counts / counts.sum()
    if (counts[q == 0] > 0).any() or (share[q > 0] == 0).any():
        return math.inf
    return float(max(np.max(share[q > 0] / q[q > 0]), np.max(q[q > 0] / share[q > 0])))
