"""The scores' "only the class mix changed?" test inside the monitor, on data and models its own tests do not use:
false alarms under a pure label shift and power against a recall drop, beside the hard-label test, in one run.

An outside check of issue 28's label-free side. Three cells, each with a model fitted once and, per trial, a
fresh validation set (3,000 at 20 % positives, ``streammon.Validation(..., bootstrap=0)``: the test does not use
the replicas) and a window of 2,000 predictions read through a ``Monitor(baseline=validation)`` (binary scores go
through the window's histogram):

- ``t8/LR``: Student-t (8 df) features, the positives' mean moved by (1, 0.8, 0.5, 0), a logistic model (ROC AUC
  about 0.8: the classes overlap);
- ``digits/RF``: scikit-learn's digits, 7-9 against the rest, pixels plus N(0, 0.5) noise, a random forest;
- ``t8/15-NN``: the first cell's data, a 15-nearest-neighbour model (scores k/15: many ties, exact 0 and 1).

Conditions: the window at 20 % positives (no shift), at 40 % (pure label shift), and at 20 % with the positives'
inputs moved towards the negatives' (t8: their mean shrunk; digits: each image blended with the mean negative
image) by the amount that lowers the model's recall by 0.2 (found once on 20,000 samples; the realised drop is
printed). Printed per cell and condition: the rate of p < 0.05 and p < 0.01 of the scores' test
(``estimate.p_value`` with ``method == "em"``) and of the hard-label test (the same monitor on the validation's
confusion counts alone).

Run: ``python examples/bench_mix_test_outside.py`` (100 trials per cell and condition: about 4 minutes on 2
shared cores) or ``--quick`` (20 trials, about a minute).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier

import streammon
from streammon import Monitor, Sliding

N = 2_000
VALIDATION = 3_000
SHIFT = np.array([1.0, 0.8, 0.5, 0.0])
Draw = Callable[[np.random.Generator, int, float, float], tuple[np.ndarray, np.ndarray]]


def t8(rng: np.random.Generator, n: int, share: float, drift: float) -> tuple[np.ndarray, np.ndarray]:
    y = (rng.random(n) < share).astype(int)
    return rng.standard_t(8, size=(n, 4)) + y[:, None] * SHIFT * (1.0 - drift), y


def digits() -> Draw:
    data = load_digits()
    x, y = data.data, (data.target >= 7).astype(int)
    by_class = [np.flatnonzero(y == c) for c in (0, 1)]
    negative_mean = x[y == 0].mean(axis=0)

    def draw(rng: np.random.Generator, n: int, share: float, drift: float) -> tuple[np.ndarray, np.ndarray]:
        yy = (rng.random(n) < share).astype(int)
        idx = np.where(yy == 1, rng.choice(by_class[1], n), rng.choice(by_class[0], n))
        xx = x[idx].copy()
        xx[yy == 1] = (1.0 - drift) * xx[yy == 1] + drift * negative_mean
        return xx + rng.normal(scale=0.5, size=xx.shape), yy

    return draw


def recall_drift(model: object, draw: Draw, rng: np.random.Generator, drop: float = 0.2) -> float:
    """The smallest drift on a grid of 0.025 that lowers the model's recall by ``drop`` (20,000 samples each)."""
    x, y = draw(rng, 20_000, 0.5, 0.0)
    base = np.mean(model.predict(x[y == 1]) == 1)  # type: ignore[attr-defined]
    for drift in np.arange(0.025, 1.0001, 0.025):
        x, y = draw(rng, 20_000, 0.5, float(drift))
        if base - np.mean(model.predict(x[y == 1]) == 1) >= drop:  # type: ignore[attr-defined]
            return float(drift)
    return 1.0


def p_values(model: object, draw: Draw, rng: np.random.Generator, share: float, drift: float
             ) -> tuple[float, float, float]:
    """One trial: (the scores' p-value, the hard-label p-value, the realised recall drop)."""
    xv, yv = draw(rng, VALIDATION, 0.2, 0.0)
    sv = model.predict_proba(xv)[:, 1]  # type: ignore[attr-defined]
    v = streammon.Validation(yv, (sv > 0.5).astype(int), sv, positive=1, bootstrap=0)
    xw, yw = draw(rng, N, share, drift)
    sw = model.predict_proba(xw)[:, 1]  # type: ignore[attr-defined]
    decided = (sw > 0.5).astype(int)
    out = []
    for baseline, score in ((v, sw), (v.confusion, None)):
        m = Monitor([Sliding(N)], baseline=baseline, classes=[0, 1], positive=1)
        m.predict_many(list(range(N)), decided, y_score=score)
        e = m.report().windows[f"sliding_{N}"].estimate
        assert e is not None and (score is None or e.method == "em")
        out.append(e.p_value)
    drop = float(np.mean(sv[yv == 1] > 0.5) - np.mean(decided[yw == 1]))
    return out[0], out[1], drop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 trials per cell and condition instead of 100")
    trials = 20 if parser.parse_args().quick else 100
    rng = np.random.default_rng(2026)
    d = digits()
    fit_t8 = t8(rng, 4_000, 0.2, 0.0)
    fit_digits = d(rng, 4_000, 0.2, 0.0)
    cells: list[tuple[str, object, Draw]] = [
        ("t8/LR", LogisticRegression(max_iter=2_000).fit(*fit_t8), t8),
        ("digits/RF", RandomForestClassifier(200, min_samples_leaf=2, random_state=0).fit(*fit_digits), d),
        ("t8/15-NN", KNeighborsClassifier(15).fit(*fit_t8), t8),
    ]
    print(f"{trials} trials per row; windows of {N}, fresh validation of {VALIDATION} per trial")
    print(f"{'cell':10s} {'condition':26s} {'scores p<.05':>12s} {'p<.01':>6s} {'hard p<.05':>11s} {'p<.01':>6s}"
          f" {'recall drop':>11s}")
    start = time.time()
    for name, model, draw in cells:
        drift = recall_drift(model, draw, rng)
        for condition, share, move in (("no shift (20 %)", 0.2, 0.0), ("label shift 20 -> 40 %", 0.4, 0.0),
                                       (f"recall drop (drift {drift:.3f})", 0.2, drift)):
            rows = np.array([p_values(model, draw, rng, share, move) for _ in range(trials)])
            print(f"{name:10s} {condition:26s} {np.mean(rows[:, 0] < 0.05):12.2f} {np.mean(rows[:, 0] < 0.01):6.2f}"
                  f" {np.mean(rows[:, 1] < 0.05):11.2f} {np.mean(rows[:, 1] < 0.01):6.2f} {np.mean(rows[:, 2]):11.3f}",
                  flush=True)
    print(f"({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
