"""Score metrics from a window's score tally against scikit-learn on the window's samples (run on demand).

For each bundled data set (scikit-learn's breast_cancer, digits, wine, iris; river's Phishing and
ImageSegments — no downloads) and classifier (logistic regression, Gaussian naive Bayes — over-confident —,
random forest, gradient boosting):

- the classifier is trained on a stratified half; the other half (the *pool*) gives (true class,
  probabilities) pairs; the training half's class mix is the *reference mix*;
- each of ``--windows`` random windows draws n = 1,000 samples from the pool with replacement, at a random
  class mix (0.8·Dirichlet(1) + 0.2·uniform, every class at least twice); binary data sets score the
  reference minority class (streammon's default positive class);
- **read**: ``roc_auc`` (K > 2: Hand & Till's one-vs-one, the default, and one-vs-rest), ``average_precision``
  and ``brier`` from the window's tally (``streammon.metrics.score_tally``, the default 2,048 logit bins)
  against scikit-learn's ``roc_auc_score``, ``average_precision_score``, ``brier_score_loss`` on the window's
  samples: max and mean |ours − sklearn| (target ≤ 0.002);
- **corrected**: the same at the reference mix (``priors=``) against scikit-learn with ``sample_weight =
  π_c / (n_c / n)`` (K > 2: one-vs-rest, as scikit-learn's one-vs-one takes no weights; the one-vs-one value
  is Condition-1 invariant and equals the read one) (target ≤ 0.005);
- **exact**: the same window read as the monitor reads it — a window of at most 2,048 scored samples
  (``EXACT_RANKING_LIMIT``) keeps its exact scores and reads ROC AUC and AP from them (``ScoreTally.parts``):
  ``x_roc_auc``, ``x_average_precision`` and the corrected ``x_c_average_precision`` (should be ~1e-16). The
  other columns read the bins (the 3-tuple tally), so the bins' error — what a window beyond the limit reads —
  stays measured on the same windows;
- **in bound**: the windows whose ROC AUC and AP errors are within ``roc_auc_bin_error`` and
  ``average_precision_bin_error`` (both bounds hold whatever the scores: every window should be in bound);
- **time**: all five metrics (``roc_auc``, ``average_precision``, ``brier``, ``log_loss``, ``ece``) from the
  tally against scikit-learn's four on the window's samples plus a NumPy ECE; and the one-off cost of
  building the tally from the window's arrays (the monitor keeps it up to date as samples arrive).

    nice -n 10 python examples/bench_score_metrics.py [--windows 100] [--quick]

The full run (100 windows per cell, 24 cells) takes 10 minutes on the shared 2-core development machine (20
under load), ``--quick`` (20 windows, no gradient boosting) about 1 minute; scikit-learn's one-vs-one ROC AUC
at K = 10 is most of it. Results: docs/benchmarks/index.md, "Score metrics from the tally".
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from river import datasets as rd
from sklearn import datasets as sd
from sklearn import metrics as skm
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from streammon.metrics import (
    average_precision,
    average_precision_bin_error,
    brier,
    ece,
    log_loss,
    roc_auc,
    roc_auc_bin_error,
    score_tally,
)
from streammon.metrics.score_bins import CLIP

WINDOW = 1_000


def _river(dataset: object) -> tuple[np.ndarray, np.ndarray]:
    rows = list(dataset)
    keys = sorted(rows[0][0])
    x = np.array([[float(row[0][key]) for key in keys] for row in rows])
    labels = sorted({row[1] for row in rows}, key=str)
    y = np.array([labels.index(row[1]) for row in rows])
    return x, y


def datasets() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The bundled data sets: features and class indices 0..K−1."""
    out = {name: loader(return_X_y=True) for name, loader in (
        ("breast_cancer", sd.load_breast_cancer), ("digits", sd.load_digits), ("wine", sd.load_wine),
        ("iris", sd.load_iris))}
    out["phishing"] = _river(rd.Phishing())
    out["image_segments"] = _river(rd.ImageSegments())
    return out


CLASSIFIERS: dict[str, Callable[[], object]] = {
    "logistic": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
    "naive_bayes": GaussianNB,
    "random_forest": lambda: RandomForestClassifier(n_estimators=100, random_state=0),
    "gradient_boosting": lambda: GradientBoostingClassifier(n_estimators=60, random_state=0),
}


@dataclass
class Cell:
    """Differences and timings gathered over one (data set, classifier) cell's windows."""

    diffs: dict[str, list[float]]
    covered: int = 0  # windows whose ROC AUC and AP errors are within roc_auc_bin_error / average_precision_bin_error
    ours_s: float = 0.0
    sklearn_s: float = 0.0
    tally_s: float = 0.0

    def add(self, name: str, ours: float, theirs: float) -> None:
        self.diffs.setdefault(name, []).append(abs(ours - theirs))


def _numpy_ece(y: np.ndarray, probs: np.ndarray) -> float:
    """Guo et al.'s ECE on the samples (15 equal-width top-label bins), the reference for the timing."""
    top = probs.argmax(axis=1)
    conf = probs[np.arange(len(y)), top]
    b = np.minimum((conf * 15).astype(int), 14)
    gap = np.bincount(b, weights=(top == y) - conf, minlength=15)
    return float(np.abs(gap).sum() / len(y))


def run_cell(x: np.ndarray, y: np.ndarray, make: Callable[[], object], windows: int, seed: int) -> Cell:
    """Train on half, draw the windows from the other half, compare with scikit-learn."""
    k = int(y.max()) + 1
    x_tr, x_pool, y_tr, y_pool = train_test_split(x, y, test_size=0.5, stratify=y, random_state=seed)
    model = make()
    model.fit(x_tr, y_tr)
    proba = np.clip(model.predict_proba(x_pool), 0.0, 1.0)
    reference = np.bincount(y_tr, minlength=k) / len(y_tr)
    positive = int(np.argmin(reference)) if k == 2 else 1
    by_class = [np.flatnonzero(y_pool == c) for c in range(k)]
    rng = np.random.default_rng(seed)
    cell = Cell({})
    for _ in range(windows):
        mix = 0.8 * rng.dirichlet(np.ones(k)) + 0.2 / k
        counts = np.maximum(rng.multinomial(WINDOW - 2 * k, mix), 0) + 2
        rows = np.concatenate([rng.choice(by_class[c], counts[c]) for c in range(k)])
        yw, pw = y_pool[rows], proba[rows]
        scores = pw[:, positive] if k == 2 else pw
        weights = (reference / (counts / counts.sum()))[yw]
        start = time.perf_counter()
        t = score_tally(yw, scores, k, positive=positive)
        cell.tally_s += time.perf_counter() - start
        start = time.perf_counter()
        ours = {"roc_auc": roc_auc(t, positive=positive), "average_precision": average_precision(t, positive=positive),
                "brier": brier(t, positive=positive), "log_loss": log_loss(t, positive=positive), "ece": ece(t)}
        cell.ours_s += time.perf_counter() - start
        truth = (yw == positive).astype(int) if k == 2 else yw
        onehot = truth if k == 2 else np.eye(k)[yw]
        start = time.perf_counter()
        theirs = {"roc_auc": skm.roc_auc_score(truth, scores, multi_class="ovo") if k > 2
                  else skm.roc_auc_score(truth, scores),
                  "average_precision": skm.average_precision_score(onehot, scores),
                  "brier": skm.brier_score_loss(truth, scores, labels=list(range(k))),
                  "log_loss": skm.log_loss(truth, np.clip(scores, CLIP, 1 - CLIP), labels=list(range(k))),
                  "ece": _numpy_ece(yw, pw)}
        cell.sklearn_s += time.perf_counter() - start
        for name in ("roc_auc", "average_precision", "brier", "log_loss"):
            cell.add(name, ours[name], theirs[name])
        cell.covered += (abs(ours["roc_auc"] - theirs["roc_auc"]) <= roc_auc_bin_error(t, positive=positive) + 1e-12
                         and abs(ours["average_precision"] - theirs["average_precision"])
                         <= average_precision_bin_error(t, positive=positive) + 1e-12)
        multi = {"multi_class": "ovr"} if k > 2 else {}
        if k > 2:
            cell.add("roc_auc_ovr", roc_auc(t, multi_class="ovr"), skm.roc_auc_score(yw, pw, multi_class="ovr"))
        cell.add("c_roc_auc", roc_auc(t, positive=positive, priors=reference, **multi),
                 skm.roc_auc_score(truth, scores, sample_weight=weights, **({"multi_class": "ovr"} if k > 2 else {})))
        cell.add("c_average_precision", average_precision(t, positive=positive, priors=reference),
                 skm.average_precision_score(onehot, scores, sample_weight=weights))
        cell.add("c_brier", brier(t, positive=positive, priors=reference),
                 skm.brier_score_loss(truth, scores, sample_weight=weights, labels=list(range(k))))
        exact = (*t, (yw.astype(np.intp), scores[:, None] if k == 2 else scores))  # as a window of <= 2,048 reads
        cell.add("x_roc_auc", roc_auc(exact, positive=positive), theirs["roc_auc"])
        cell.add("x_average_precision", average_precision(exact, positive=positive), theirs["average_precision"])
        cell.add("x_c_average_precision", average_precision(exact, positive=positive, priors=reference),
                 skm.average_precision_score(onehot, scores, sample_weight=weights))
    return cell


READ = ("roc_auc", "roc_auc_ovr", "average_precision", "brier", "log_loss")
CORRECTED = ("c_roc_auc", "c_average_precision", "c_brier")
EXACT = ("x_roc_auc", "x_average_precision", "x_c_average_precision")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--windows", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="20 windows per cell, no gradient boosting")
    args = parser.parse_args()
    windows = 20 if args.quick else args.windows
    classifiers = {n: c for n, c in CLASSIFIERS.items() if not (args.quick and n == "gradient_boosting")}
    warnings.filterwarnings("ignore")
    print(f"windows of {WINDOW} samples, {windows} per cell; |ours − sklearn| max/mean ×1e-4; time per window")
    head = "".join(f"{n[:12]:>14}" for n in READ + CORRECTED + EXACT)
    print(f"{'data set':15}{'K':>3} {'classifier':18}{head}{'ours ms':>9}{'sk ms':>8}{'ratio':>7}{'tally ms':>9}"
          f"{'in bound':>9}")
    worst: dict[str, float] = {}
    totals = [0.0, 0.0]
    for d, (x, y) in datasets().items():
        for c, make in classifiers.items():
            cell = run_cell(x, y, make, windows, seed=17)
            parts = []
            for name in READ + CORRECTED + EXACT:
                diffs = cell.diffs.get(name)
                if diffs is None:
                    parts.append(f"{'–':>14}")
                    continue
                worst[name] = max(worst.get(name, 0.0), *diffs)
                parts.append(f"{max(diffs) * 1e4:>8.2f}/{np.mean(diffs) * 1e4:<5.2f}")
            totals[0] += cell.ours_s
            totals[1] += cell.sklearn_s
            print(f"{d:15}{int(y.max()) + 1:>3} {c:18}{''.join(parts)}{cell.ours_s / windows * 1e3:>9.2f}"
                  f"{cell.sklearn_s / windows * 1e3:>8.2f}{cell.sklearn_s / cell.ours_s:>7.1f}"
                  f"{cell.tally_s / windows * 1e3:>9.2f}{cell.covered:>6}/{windows}", flush=True)
    print("\nworst |ours − sklearn| over all cells (target: read ≤ 0.002, corrected ≤ 0.005; x_: exact, ≤ 1e-9):")
    for name in READ + CORRECTED + EXACT:
        target = 0.005 if name.startswith("c_") else 1e-9 if name.startswith("x_") else 0.002
        verdict = "ok" if worst[name] <= target or name == "log_loss" else "OVER"
        print(f"  {name:22} {worst[name]:.6f}  {verdict}")
    print(f"time, all five metrics: ours {totals[0]:.2f} s, scikit-learn (+ NumPy ECE) {totals[1]:.2f} s "
          f"(×{totals[1] / totals[0]:.1f})")


if __name__ == "__main__":
    main()
