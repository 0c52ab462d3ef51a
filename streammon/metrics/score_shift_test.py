"""The scores' "only the class mix changed?" test: is the window's score distribution a re-weighted mixture of the
validation's class-conditional ones? (pure)

Under a pure label shift the density of a window's scores is ``Σ_c π'_c f_c`` with ``f_c`` the validation's score
density of class ``c`` (the same fact EM uses, ``em_priors``). Binned into ``B`` cells, the window's cell shares
``q`` satisfy ``q = F·π'`` with ``F[b, c] = P(cell b | y = c)`` read from the validation. A model or input change
moves the scores of some class (a class whose scores slide towards the threshold, a new kind of input) and leaves
that family, as a mix change cannot.

This is the hard-label test of ``label_shift`` with cells of the score instead of decided classes (with one cell
per decided class it is that test): the statistic is the squared Mahalanobis distance of ``q̂`` to
``{F·π : π in the simplex}``,

``T = min_π (q̂ − F̂π)ᵀ Σ⁺ (q̂ − F̂π)``,  ``Σ = (diag q − qqᵀ)/n + Σ_c π_c² (diag f_c − f_c f_cᵀ)/n_c``,

the window's multinomial noise plus each validation column's (``n_c`` validation samples of class ``c``; rates
smoothed by half a pseudo-count per cell in the variances only, so an empty validation cell is not a rate known to
be 0) — the validation's finite size is part of the noise, not ignored. ``π`` is fitted in that metric (three
rounds of re-weighted simplex least squares, started at the Euclidean fit; ``simplex.py``). With ``π'`` inside the
simplex ``T`` is asymptotically χ² with ``B − K`` degrees of freedom (``B − 1`` free shares, ``K − 1`` fitted
weights); on a face of it, with the face's codimension (``simplex.face_codimension``, as in ``label_shift``).
``examples/bench_expected_perf.py`` measures its false alarms under pure label shift and its power against a
recall drop beside the hard-label test's.

**Cells** (``Binning``, from the validation's scores): binary, ``B`` quantiles of the validation's positive-class
scores (about equal validation counts per cell), each moved down onto the window histograms' grid (``grid_edges``:
a monitor reads a window's binary scores from its histogram, so a cell must hold whole bins); K > 2, the decided
class (arg-max) times ``q`` quantiles of the top score among the validation samples decided that class
(``B = K·q``). Few wide cells keep the χ² approximation good at small ``n_c``; ``DEFAULT_BINS`` = 10 was chosen
by the power/false-alarm table of the benchmark.

>>> rng = np.random.default_rng(0)
>>> y = rng.integers(0, 2, 4000)
>>> s = 1 / (1 + np.exp(-(2.0 * y - 1.0) - rng.normal(size=4000)))
>>> binning = make_binning(s, 2)
>>> validation = class_cell_counts(binning.assign(s), y, 2, binning.cells)
>>> yw = (rng.random(2000) < 0.7).astype(int)                     # pure label shift: 70 % positives
>>> sw = 1 / (1 + np.exp(-(2.0 * yw - 1.0) - rng.normal(size=2000)))
>>> mix_test(validation, np.bincount(binning.assign(sw), minlength=binning.cells)).p_value > 0.01
True
>>> sw[yw == 1] = 1 / (1 + np.exp(-rng.normal(size=int(yw.sum()))))  # the positives' scores collapse to 0.5
>>> mix_test(validation, np.bincount(binning.assign(sw), minlength=binning.cells)).p_value < 1e-6
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.metrics.confusion import FloatArray
from streammon.metrics.probabilities import as_probabilities
from streammon.metrics.score_bins import bin_edges
from streammon.metrics.simplex import face_codimension, simplex_least_squares
from streammon.metrics.tails import chi2_sf

DEFAULT_BINS = 10
PSEUDO = 0.5  # pseudo-count per cell in the variances (module docstring)
_ROUNDS = 3
METHOD = "binned score mixture (Mahalanobis to {F·π}, window and validation noise)"


@dataclass(frozen=True)
class Binning:
    """The test's cells, from the validation's scores: ``edges`` (K', q − 1) inner quantile edges — K' = 1 for a
    binary score, else one row per decided class (of that class's top score)."""

    edges: FloatArray
    k: int

    @property
    def cells(self) -> int:
        """``B``, the number of cells."""
        return int(self.edges.shape[0] * (self.edges.shape[1] + 1))

    def assign(self, scores: Any) -> npt.NDArray[np.intp]:
        """The cell of each row of scores (binary (m,) or (m, K) probabilities)."""
        q = self.edges.shape[1] + 1
        if self.k == 2 and np.ndim(scores) == 1:
            s = as_probabilities(scores, 2)[:, 1]
            return np.searchsorted(self.edges[0], s, side="right").astype(np.intp)
        p = as_probabilities(scores, self.k)
        decided = np.argmax(p, axis=1)
        top = p[np.arange(p.shape[0]), decided]
        within = np.array([np.searchsorted(self.edges[c], t, side="right") for c, t in zip(decided, top, strict=True)],
                          dtype=np.intp).reshape(-1)
        out: npt.NDArray[np.intp] = (decided * q + within).astype(np.intp)
        return out


@dataclass(frozen=True)
class MixTest:
    """The result of ``mix_test``: the p-value of "only the mix changed" and what it was computed from."""

    p_value: float  # small: no class mix explains the window's scores
    statistic: float
    df: int
    priors: FloatArray  # the mixture weights fitted in the noise's metric (a by-product, not the EM estimate)
    n: float
    method: str
    reason: str


def make_binning(scores: Any, k: int, *, bins: int = DEFAULT_BINS) -> Binning:
    """Cells from the validation's scores (module docstring): binary ``bins`` quantiles of the positive score;
    K > 2 ``max(2, round(bins / K))`` quantiles of the top score per decided class (one cell for a class the
    validation never decides)."""
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 2:
        raise ValueError(f"bins must be an int >= 2, got {bins!r}")
    if k == 2 and np.ndim(scores) == 1:
        s = as_probabilities(scores, 2)[:, 1]
        return Binning(_frozen(grid_edges(np.quantile(s, np.arange(1, bins) / bins))[None, :]), 2)
    p = as_probabilities(scores, k)
    q = max(2, round(bins / k))
    decided = np.argmax(p, axis=1)
    top = p[np.arange(p.shape[0]), decided]
    rows = [np.quantile(top[decided == c], np.arange(1, q) / q) if np.any(decided == c) else np.full(q - 1, 2.0)
            for c in range(k)]
    return Binning(_frozen(np.array(rows)), k)


def grid_edges(quantiles: Any) -> FloatArray:
    """Binary cell edges on the window histograms' grid (``score_bins.bin_edges``): each quantile moved down to
    the highest grid edge strictly below it (0 stays 0), duplicates dropped.

    A monitor reads a window's binary scores from its histogram, one representative per bin
    (``expected_scores.bin_representatives``), while the validation's cells count exact scores: an edge inside a
    bin put the bin's samples on one side and its representative possibly on the other. With many equal scores
    (a k-NN model's k/15, a tree's leaf values) a quantile edge falls exactly on such a value, and the window then
    left the mixture family under a pure label shift (p ~ 1e-24 instead of 0.1 on k-NN scores). On the grid,
    every bin lies in one cell, read either way round: strictly below, so that a value on a grid edge (0.5) also
    stays with its bin when the window's histogram is of the other class's score (``1 − s``). Duplicate edges
    (ties spanning a quantile) and an edge at 0 (no score lies below it) would leave a cell that is always empty
    and a degree of freedom too many: they are dropped.

    >>> from streammon.metrics.score_bins import bin_edges, score_bins
    >>> e = grid_edges([0.5, 0.5, 1 / 15, 0.0])
    >>> bins = lambda x: int(score_bins(np.array([x]))[0])
    >>> len(e), bool(e[0] < 1 / 15 and bins(e[0]) == bins(1 / 15))
    (2, True)
    >>> bool(e[1] < 0.5 and bins(e[1]) + 1 == bins(0.5))
    True
    """
    grid = bin_edges()
    at = np.searchsorted(grid, np.asarray(quantiles, dtype=np.float64), side="left") - 1
    edges = np.unique(grid[np.maximum(at, 0)])
    return np.asarray(edges[edges > 0.0], dtype=np.float64)


def class_cell_counts(cells: Any, y_true: Any, k: int, b: int, *, weights: Any = None) -> FloatArray:
    """The validation's K × B counts of (true class, cell): what ``mix_test`` reads ``F`` from."""
    c = np.asarray(cells, dtype=np.intp)
    y = np.asarray(y_true, dtype=np.intp)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    out: FloatArray = np.bincount(y * b + c, weights=w, minlength=k * b).reshape(k, b).astype(np.float64)
    return out


def mix_test(validation: Any, window: Any) -> MixTest:
    """Test "only the class mix changed" from ``validation`` (K × B counts of true class × cell) and ``window``
    (B counts of the window's scores per cell, real sample counts: ``n`` sets the window's noise)."""
    counts = np.asarray(validation, dtype=np.float64)
    x = np.asarray(window, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[0] < 2 or not np.all(np.isfinite(counts)) or np.any(counts < 0):
        raise ValueError(f"validation must be K × B non-negative counts, got shape {counts.shape}")
    k, b = counts.shape
    if x.shape != (b,) or not np.all(np.isfinite(x)) or np.any(x < 0):
        raise ValueError(f"window must be {b} non-negative counts, got {window!r}")
    n = float(x.sum())
    n_c = counts.sum(axis=1)
    nan = np.full(k, math.nan)
    if n == 0 or np.any(n_c == 0):
        why = "the window holds no scored predictions" if n == 0 else "a class has no validation samples"
        return MixTest(math.nan, math.nan, 0, _frozen(nan), n, METHOD, why)
    if b <= k:
        return MixTest(math.nan, math.nan, 0, _frozen(nan), n, METHOD,
                       f"{b} cells cannot test a mixture of {k} classes (more cells than classes are needed)")
    rates = (counts / n_c[:, None]).T  # F, B × K
    smoothed = ((counts + PSEUDO) / (n_c[:, None] + b * PSEUDO)).T
    column_noise = np.stack([(np.diag(f) - np.outer(f, f)) / n_c[j] for j, f in enumerate(smoothed.T)])
    share = x / n
    pi = simplex_least_squares(rates.T @ rates, rates.T @ share)[0]
    weight = np.eye(b)
    for _ in range(_ROUNDS):
        q = smoothed @ pi
        sigma = (np.diag(q) - np.outer(q, q)) / n + np.einsum("j,jab->ab", pi * pi, column_noise)
        weight = _plane_inverse(sigma)
        pi = simplex_least_squares(rates.T @ weight @ rates, rates.T @ weight @ share)[0]
    residual = share - rates @ pi
    statistic = max(float(residual @ weight @ residual), 0.0)
    df = face_codimension(rates, weight, share, pi)
    p_value = chi2_sf(statistic, df) if df > 0 else 1.0
    return MixTest(p_value, statistic, df, _frozen(pi), n, METHOD, "")


def _plane_inverse(sigma: FloatArray) -> FloatArray:
    """Σ⁺ on the plane Σx = 0 where residuals of shares live (Σ is singular along the ones vector), plus a
    multiple of the all-ones matrix, which changes no value on that plane and keeps the weight definite."""
    b = sigma.shape[0]
    basis = np.linalg.qr(np.eye(b) - 1.0 / b)[0][:, : b - 1]
    weight: FloatArray = basis @ np.linalg.solve(basis.T @ sigma @ basis, basis.T)
    weight += np.trace(weight) / b**2
    return weight


def _frozen(values: FloatArray) -> FloatArray:
    out = np.array(values, dtype=np.float64)
    out.setflags(write=False)
    return out
