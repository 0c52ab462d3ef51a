"""BCTS (``streammon.Validation``'s calibration) against NannyML CBPE's isotonic calibration, on held-out data.

Part of the diagnosis of ``bench_expected_perf.py``: CBPE calibrates with isotonic regression only when
``nannyml.calibration.needs_calibration`` says it helps (its calibration error lower in every one of 10
cross-validation splits), else it keeps the model's probabilities. Per cell, 20 validation sets; each row is the
mean over them of a calibration's error on held-out samples — Brier score, log loss, ECE (10 equal-width bins) and,
on the synthetic cells, the mean abs(p − p*) from the true posterior p* (20,000 fresh samples at the validation mix).
The bundled data set's validation sets are bootstraps of its held-out half, scored on their out-of-bag samples.
Columns: the model's own probabilities, BCTS, BCTS shrunk towards the model's own (``Validation.shrunk_calibration``,
what the expected performance reads), isotonic regression (NannyML's ``IsotonicCalibrator``), and what
CBPE uses (isotonic when ``needs_calibration``, else the model's own). Needs NannyML (see
``bench_expected_perf.py``); about 10 s.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable

import numpy as np
from bench_em_priors import _gaussians
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

from streammon import Validation

os.environ.setdefault("NML_DISABLE_USAGE_LOGGING", "1")

Split = tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray | None]]


def _ece(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    b = np.minimum((p * bins).astype(int), bins - 1)
    return float(sum(abs(p[b == i].mean() - y[b == i].mean()) * np.mean(b == i) for i in range(bins)
                     if np.any(b == i)))


def cell(name: str, split: Callable[[np.random.Generator], Split], reps: int = 20) -> None:
    """One cell's table: each calibration's held-out errors, averaged over ``reps`` validation sets."""
    from nannyml.calibration import IsotonicCalibrator, needs_calibration  # noqa: PLC0415 (the comparator)

    rng = np.random.default_rng(0)
    columns = ("own", "bcts", "shrunk", "isotonic", "cbpe")
    rows: dict[str, dict[str, list[float]]] = {c: {"brier": [], "log_loss": [], "ece": [], "mean abs(p − p*)": []}
                                               for c in columns}
    chosen = 0
    weights = []
    for _ in range(reps):
        (val_y, val_p), (test_y, test_p, truth) = split(rng)
        v = Validation(val_y, val_p.argmax(axis=1), val_p[:, 1], classes=[0, 1], positive=1, bootstrap=0)
        weights.append(v.shrinkage)
        isotonic = IsotonicCalibrator()
        isotonic.fit(val_p[:, 1], val_y)
        needed = bool(needs_calibration(val_y, val_p[:, 1], IsotonicCalibrator()))
        chosen += needed
        q = {"own": test_p[:, 1], "bcts": v.posteriors(test_p[:, 1])[:, 1],
             "shrunk": v.shrunk_calibration.apply(test_p[:, 1])[:, 1],
             "isotonic": np.asarray(isotonic.calibrate(test_p[:, 1]), dtype=float)}
        q["cbpe"] = q["isotonic"] if needed else q["own"]
        for c, p in q.items():
            clipped = np.clip(p, 1e-15, 1 - 1e-15)
            rows[c]["brier"].append(float(np.mean((p - test_y) ** 2)))
            rows[c]["log_loss"].append(float(-np.mean(test_y * np.log(clipped) + (1 - test_y) * np.log(1 - clipped))))
            rows[c]["ece"].append(_ece(p, test_y))
            rows[c]["mean abs(p − p*)"].append(float(np.mean(np.abs(p - truth))) if truth is not None else float("nan"))
    print(f"\n### {name} (CBPE calibrated in {chosen} of {reps}; BCTS's shrinkage weight mean "
          f"{np.mean(weights):.2f})\n")
    print("| error | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for measure in rows["own"]:
        print(f"| {measure} | " + " | ".join(f"{np.nanmean(rows[c][measure]):.4f}" for c in columns) + " |")


def main() -> None:
    warnings.filterwarnings("ignore")
    started = time.perf_counter()
    for label, model in (("logistic", LogisticRegression()), ("naive Bayes", GaussianNB())):
        pop = _gaussians(label, 2, model, 2000)

        def synthetic(rng: np.random.Generator, pop: object = pop) -> Split:
            val_y, val_p = pop.validation(rng)  # type: ignore[attr-defined]
            mix = np.bincount(val_y, minlength=2) / val_y.size
            y, p, truth = pop.oracle(rng, rng.multinomial(20_000, mix), mix)  # type: ignore[attr-defined]
            return (val_y, val_p), (y, p, truth[:, 1])

        cell(f"Gaussian K = 2, {label}, validation 2,000", synthetic)
    x, y = load_breast_cancer(return_X_y=True)
    for label, model in (("logistic", LogisticRegression(max_iter=5000)), ("naive Bayes", GaussianNB())):
        xt, xh, yt, yh = train_test_split(x, y, test_size=0.5, stratify=y, random_state=0)
        model.fit(xt, yt)
        proba = np.clip(model.predict_proba(xh), 0.0, 1.0)
        proba /= proba.sum(axis=1, keepdims=True)

        def bootstrap(rng: np.random.Generator, proba: np.ndarray = proba, yh: np.ndarray = yh) -> Split:
            idx = rng.integers(0, yh.size, yh.size)
            out = np.setdiff1d(np.arange(yh.size), idx)
            return (yh[idx], proba[idx]), (yh[out], proba[out], None)

        cell(f"breast_cancer, {label}, bootstrap validation of 285, out-of-bag samples", bootstrap)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
