"""Average precision from binned scores: where the bins lose it, and what other layouts would give (on demand).

``examples/bench_score_metrics.py`` found ``average_precision`` above the 0.002 target in two of its 24 cells.
This script takes the same windows (the same data sets, classifiers, seed and draws: 1,000 samples from the
held-out half, with replacement, at a random class mix) and, per cell, gives the worst |AP − scikit-learn| of
the windows for:

- **tally**: streammon's ``average_precision`` of the window's tally (2,048 bins; a bin's samples tied);
- **where**: the share of that worst window's error held by the bins evenly spaced in logit (``mid``) rather
  than the tails, bin 0 or the last bins — and whether the window has raw scores of exactly 0 or 1;
- **random**: the bins read with the expected AP when each bin's positives and negatives come in random order
  (the precision at the expected ``i·Q/(P + 1)`` negatives ahead of a bin's i-th positive, a digamma sum), not
  tied, in every bin (streammon now does so only in the bins its exact scores show holding distinct scores);
- **x4**, **x8**: each bin split into 4 or 8 equal parts (8,192 or 16,384 bins), tied within a part;
- **centroid**: the bins plus each class's mean position within each bin, a class's samples ordered by it;
- **moments**: the bins plus each class's first two moments of the position within each bin (integer sums of
  the position on a 2¹⁶ grid: exact under add and evict); in a bin that holds the positive class and another,
  each class spreads as a normal of its mean and spread over 64 parts of the bin (a point mass when the
  spread is 0: duplicates and ties stay exact), tied within a part; **uniform**: the same with each class
  spread evenly over mean ± √3·sd (the same variance; no normal distribution function, so NumPy alone);
- the same for **tally** and **moments** at the reference mix (scikit-learn with ``sample_weight``).

It ends with what each layout keeps per window (int64 per cell) at K = 2 and K = 10. Only ``tally`` is what
streammon computes; the others are prototypes measured here (results: docs/benchmarks/index.md, "Average
precision and the bins").

    nice -n 10 python examples/bench_ap_bins.py [--windows 100] [--quick]

The full run (100 windows per cell, 24 cells) took 8 minutes on the shared 2-core development machine under
load; ``--quick`` (20 windows) 2.8 minutes (training the 24 classifiers and scikit-learn's one-vs-rest AP at
K = 10 are most of it).
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable, Iterator

import numpy as np
from bench_score_metrics import CLASSIFIERS, WINDOW, datasets
from scipy.special import digamma
from scipy.stats import norm
from sklearn import metrics as skm
from sklearn.model_selection import train_test_split

from streammon.metrics import average_precision, score_tally
from streammon.metrics.score_bins import BINS, TAIL_BINS, bin_edges, score_bins

EDGES = bin_edges()
GRID = 2**16  # the position within a bin, as an integer: sums of it (and its square) add and evict exactly
PARTS = 64  # the parts of a bin over which the moments model spreads a class


def windows(x: np.ndarray, y: np.ndarray, make: Callable[[], object], count: int,
            seed: int = 17) -> Iterator[tuple[int, int, np.ndarray, np.ndarray, np.ndarray]]:
    """bench_score_metrics' windows: (K, positive class, reference mix, true classes, probabilities)."""
    k = int(y.max()) + 1
    x_tr, x_pool, y_tr, y_pool = train_test_split(x, y, test_size=0.5, stratify=y, random_state=seed)
    model = make()
    model.fit(x_tr, y_tr)  # type: ignore[attr-defined]
    proba = np.clip(model.predict_proba(x_pool), 0.0, 1.0)  # type: ignore[attr-defined]
    reference = np.bincount(y_tr, minlength=k) / len(y_tr)
    positive = int(np.argmin(reference)) if k == 2 else 1
    by_class = [np.flatnonzero(y_pool == c) for c in range(k)]
    rng = np.random.default_rng(seed)
    for _ in range(count):
        mix = 0.8 * rng.dirichlet(np.ones(k)) + 0.2 / k
        counts = np.maximum(rng.multinomial(WINDOW - 2 * k, mix), 0) + 2
        rows = np.concatenate([rng.choice(by_class[c], counts[c]) for c in range(k)])
        yield k, positive, reference, y_pool[rows], proba[rows]


def _position(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each score's bin and its position within the bin (linear in probability, [0, 1))."""
    b = score_bins(s)
    lo, hi = EDGES[b], EDGES[np.minimum(b + 1, BINS)]
    wide = hi > lo
    return b, np.where(wide, (s - lo) / np.where(wide, hi - lo, 1.0), 0.0)


def _tied(pos: np.ndarray, neg: np.ndarray) -> float:
    """scikit-learn's step AP of weighted cells in ascending score order, a cell's samples tied."""
    p, q = pos[::-1], neg[::-1]
    tp, fp = np.cumsum(p), np.cumsum(q)
    return float(p @ (tp / np.where(tp + fp > 0, tp + fp, 1.0))) / float(p.sum())


def _random_order(pos: np.ndarray, neg: np.ndarray) -> float:
    """AP with each bin's samples in random order: the i-th of a bin's P positives has T + i positives and
    F + i·(1 + Q/(P + 1)) samples ahead (T, F above the bin); Σ_i (T + i)/(D + g·i) is a digamma difference."""
    p, q = pos[::-1], neg[::-1]
    tp, fp = np.cumsum(p), np.cumsum(q)
    kept = p > 0
    p, q, t, f = p[kept], q[kept], (tp - p)[kept], (fp - q)[kept]
    g = 1.0 + q / (p + 1.0)
    d = t + f
    total = p / g + (t - d / g) / g * (digamma(d / g + p + 1.0) - digamma(d / g + 1.0))
    return float(total.sum()) / float(p.sum())


def _split(true: np.ndarray, s: np.ndarray, k: int, parts: int) -> np.ndarray:
    """(k, BINS·parts) counts with each bin split into ``parts`` equal parts."""
    b, u = _position(s)
    cell = b * parts + np.minimum((u * parts).astype(np.int64), parts - 1)
    return np.bincount(true * BINS * parts + cell, minlength=k * BINS * parts).reshape(k, -1).astype(np.float64)


def _moments(true: np.ndarray, s: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, Σq, Σq²) per (true class, bin), q the position on the integer grid."""
    b, u = _position(s)
    q = np.minimum((u * GRID).astype(np.int64), GRID - 1)
    cell = true * BINS + b
    n = np.bincount(cell, minlength=k * BINS).reshape(k, BINS)
    s1 = np.bincount(cell, weights=q.astype(np.float64), minlength=k * BINS).reshape(k, BINS)
    s2 = np.bincount(cell, weights=q.astype(np.float64) ** 2, minlength=k * BINS).reshape(k, BINS)
    return n, s1, s2


def _centroid_ap(n: np.ndarray, s1: np.ndarray, c: int, w: np.ndarray) -> float:
    """AP with each class's samples of a bin at their mean position (ties where the means tie)."""
    mean = np.where(n > 0, s1 / np.maximum(n, 1), -1.0)
    weighted = n * w[:, None]
    pos = weighted[c]
    others = [j for j in range(len(n)) if j != c]
    ahead = sum(np.where(mean[j] >= mean[c], weighted[j], 0.0) for j in others)
    neg = sum(weighted[j] for j in others)
    above_t = np.cumsum(pos[::-1])[::-1] - pos
    above_f = np.cumsum(neg[::-1])[::-1] - neg
    precision = (above_t + pos) / np.maximum(above_t + above_f + pos + ahead, 1e-300)
    return float(pos @ np.where(pos > 0, precision, 0.0)) / float(pos.sum())


def _moments_ap(n: np.ndarray, s1: np.ndarray, s2: np.ndarray, c: int, w: np.ndarray, *,
                uniform: bool = False) -> float:
    """AP with the bins that hold class c and another class refined by the moments model (module docstring);
    ``uniform``: each class spread evenly over mean ± √3·sd (the same mean and variance, NumPy alone)."""
    k = len(n)
    fine = np.zeros((k, BINS, PARTS))
    fine[:, :, 0] = n
    mixed = np.flatnonzero((n[c] > 0) & (n.sum(axis=0) - n[c] > 0))
    if len(mixed):
        m, a1, a2 = n[:, mixed], s1[:, mixed], s2[:, mixed]
        mean = np.where(m > 0, a1 / np.maximum(m, 1), 0.0) / GRID
        spread = np.sqrt(np.maximum(np.where(m > 0, a2 / np.maximum(m, 1), 0.0) / GRID**2 - mean**2, 0.0))
        point = spread < 2.0 / GRID
        z = (np.arange(PARTS + 1) / PARTS - mean[..., None]) / np.where(point, 1.0, spread)[..., None]
        cdf = np.clip((z + np.sqrt(3.0)) / (2.0 * np.sqrt(3.0)), 0.0, 1.0) if uniform else norm.cdf(z)
        cdf[..., 0], cdf[..., -1] = 0.0, 1.0  # the spread cut to the bin
        mass = np.diff(cdf, axis=-1)
        at = np.minimum((mean * PARTS).astype(np.int64), PARTS - 1)
        mass = np.where(point[..., None], np.arange(PARTS) == at[..., None], mass)
        fine[:, mixed, :] = m[..., None] * mass
    fine *= w[:, None, None]
    return _tied(fine[c].ravel(), (fine.sum(axis=0) - fine[c]).ravel())


def _share_mid(true_c: np.ndarray, s: np.ndarray) -> tuple[float, float]:
    """(tied − exact) AP of one column split into the middle bins' part and the rest (tails, bin 0, last)."""
    order = np.argsort(-s, kind="mergesort")
    ss, yy = s[order], true_c[order].astype(np.float64)
    ends = np.r_[np.flatnonzero(np.diff(ss) != 0), len(ss) - 1]
    tp = np.cumsum(yy)[ends]
    exact = (tp / (ends + 1.0))[np.searchsorted(ends, np.arange(len(ss)))]  # scikit-learn's precision, ties grouped
    b = score_bins(ss)
    exact_bin = np.bincount(b, weights=yy * exact, minlength=BINS)
    pos, neg = np.bincount(b, weights=yy, minlength=BINS), np.bincount(b, weights=1 - yy, minlength=BINS)
    p, q = pos[::-1], neg[::-1]
    t, f = np.cumsum(p), np.cumsum(q)
    err = (p * t / np.where(t + f > 0, t + f, 1.0))[::-1] - exact_bin
    mid = (np.arange(BINS) > TAIL_BINS) & (np.arange(BINS) < BINS - TAIL_BINS)
    return float(err[mid].sum()) / yy.sum(), float(err[~mid].sum()) / yy.sum()


NAMES = ("tally", "random", "x4", "x8", "centroid", "moments", "uniform", "tally@pi", "moments@pi")


def run_cell(x: np.ndarray, y: np.ndarray, make: Callable[[], object], count: int) -> tuple[dict[str, list[float]],
                                                                                           tuple[float, float, int]]:
    """The |AP − scikit-learn| of every layout over the cell's windows, and where the tally's worst error lies."""
    diffs: dict[str, list[float]] = {name: [] for name in NAMES}
    worst = (-1.0, (0.0, 0.0, 0))
    for k, positive, reference, yw, pw in windows(x, y, make, count):
        columns = [positive] if k == 2 else list(range(k))
        scores = pw[:, positive] if k == 2 else pw
        onehot = (yw == positive).astype(int) if k == 2 else np.eye(k)[yw]
        counts = np.bincount(yw, minlength=k)
        weights = reference / (counts / counts.sum())
        exact = skm.average_precision_score(onehot, scores)
        exact_pi = skm.average_precision_score(onehot, scores, sample_weight=weights[yw])
        t = score_tally(yw, scores, k, positive=positive)
        ours = average_precision(t, positive=positive)
        values: dict[str, list[float]] = {name: [] for name in (*NAMES[1:7], "moments@pi")}
        mid = rest = 0.0
        for c in columns:
            yc = (yw == c).astype(np.int64)
            hist = np.bincount(yc * BINS + score_bins(pw[:, c]), minlength=2 * BINS).reshape(2, BINS)
            values["random"].append(_random_order(hist[1].astype(np.float64), hist[0].astype(np.float64)))
            for parts in (4, 8):
                fine = _split(yc, pw[:, c], 2, parts)
                values[f"x{parts}"].append(_tied(fine[1], fine[0]))
            n, s1, s2 = _moments(yw, pw[:, c], k)
            values["centroid"].append(_centroid_ap(n, s1, c, np.ones(k)))
            values["moments"].append(_moments_ap(n, s1, s2, c, np.ones(k)))
            values["uniform"].append(_moments_ap(n, s1, s2, c, np.ones(k), uniform=True))
            values["moments@pi"].append(_moments_ap(n, s1, s2, c, weights))
            a, b = _share_mid(yc, pw[:, c])
            mid, rest = mid + a / len(columns), rest + b / len(columns)
        diffs["tally"].append(abs(ours - exact))
        diffs["tally@pi"].append(abs(average_precision(t, positive=positive, priors=reference) - exact_pi))
        for name, parts in values.items():
            diffs[name].append(abs(float(np.mean(parts)) - (exact_pi if name.endswith("@pi") else exact)))
        if diffs["tally"][-1] > worst[0]:
            worst = (diffs["tally"][-1], (mid, rest, int(np.sum((scores == 0.0) | (scores == 1.0)))))
    return diffs, worst[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--windows", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="20 windows per cell")
    args = parser.parse_args()
    count = 20 if args.quick else args.windows
    warnings.filterwarnings("ignore")
    print(f"windows of {WINDOW} samples, {count} per cell; worst |AP − sklearn| ×1e-4 (target 20 as read, 50 at π)")
    print(f"{'data set':15}{'K':>3} {'classifier':18}" + "".join(f"{n:>11}" for n in NAMES)
          + f"{'worst: mid':>12}{'other':>8}{'0 or 1':>8}")
    worst: dict[str, float] = {}
    for d, (x, y) in datasets().items():
        for c, make in CLASSIFIERS.items():
            diffs, (mid, rest, extremes) = run_cell(x, y, make, count)
            for name, values in diffs.items():
                worst[name] = max(worst.get(name, 0.0), *values)
            print(f"{d:15}{int(y.max()) + 1:>3} {c:18}" + "".join(f"{max(diffs[n]) * 1e4:>11.2f}" for n in NAMES)
                  + f"{mid * 1e4:>+12.2f}{rest * 1e4:>+8.2f}{extremes:>8}", flush=True)
    print("\nworst over all cells ×1e-4:", "  ".join(f"{n} {v * 1e4:.2f}" for n, v in worst.items()))
    print("kept per window, int64 cells (K, C, bins): K = 2 (C = 1) / K = 10 (C = 10):")
    for name, arrays, bins in (("tally", 1, BINS), ("x4", 1, 4 * BINS), ("x8", 1, 8 * BINS), ("centroid", 2, BINS),
                               ("moments", 3, BINS), ("uniform", 3, BINS)):
        print(f"  {name:9} {arrays * 2 * bins * 8 / 1024:>8.0f} KiB / {arrays * 100 * bins * 8 / 1024 ** 2:>6.2f} MiB")


if __name__ == "__main__":
    main()
