"""EM after BCTS (``streammon.Validation.estimate``) against QuaPy's EMQ with BCTS and the hard-label estimate.

Each cell is one (data set, classifier, window size): the classifier is trained once on half of the data; in every
trial a validation set is drawn (synthetic: fresh samples; bundled data sets: a bootstrap of the held-out half), a
target mix is drawn from a Dirichlet(1) and a window is sampled class by class at that mix. On the same trial:

- streammon: ``Validation(y, ŷ, scores).estimate(window scores)`` — BCTS by Newton, EM, intervals with the
  validation's noise from 50 bootstrap replicas (the default), from the delta method (``bootstrap=0``), and
  without it (the window's noise only); each also carries the calibration's misfit at the estimated mix
  (``Validation.misfit``), and the table shows the default interval without that term too (covariance − b bᵀ, the
  intervals before it), with the mean widths of both and the MAE of the estimate minus its misfit;
- QuaPy ``EMQ`` with ``calib="bcts"``: the same two steps as ``EMQ.aggregation_fit`` / ``aggregate`` do them —
  the abstention package's ``TempScaling(bias_positions="all")`` fitted on the validation posteriors, then
  ``EMQ.EM`` from the validation prevalence;
- the hard-label estimate ``streammon.metrics.estimate_priors`` (BBSE on decisions).

MAE is the mean absolute error of the K shares against the window's real class shares; coverage counts the share
of (trial, class) intervals at 95 % holding the real share. Run with QuaPy installed (the ``bench`` extra, plus
``abstention`` for its calibrators), e.g. in a venv: ``python -m venv --system-site-packages /work/venv-quapy &&
/work/venv-quapy/bin/pip install quapy abstention``; ``--quick`` runs 20 trials of three cells (~30 s); the full
run (100 trials × 8 cells, windows of 1,000; ``--sizes 200 1000`` for both sizes) took 821 s on the shared, loaded
2-core machine (each trial fits BCTS 52 times: the estimate, 50 bootstrap replicas, the delta-method comparison);
``--trials 200`` about 35 minutes at a load average of 13 (the digits cell alone 53 s at a lower load);
``--cells NAME …`` runs only the cells whose name holds one of the names.

``--part real`` runs ``examples/bench_em_real.py`` instead (its options follow): the monitor's EM estimate on real
data sets with everything refitted per split and windows drawn without replacement, 200 trials per cell.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

from streammon import Validation
from streammon.metrics import estimate_priors


@dataclass
class Population:
    """A trained classifier and a way to draw labelled, scored samples of each class."""

    name: str
    k: int
    draw: Callable[[np.random.Generator, np.ndarray], tuple[np.ndarray, np.ndarray]]  # counts → (y, proba)
    validation: Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray]]
    # synthetic cells only: counts → (y, proba, the true P(y | x) at the mix given), for a noise floor
    oracle: Callable[[np.random.Generator, np.ndarray, np.ndarray],
                     tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None


def _from_data(name: str, x: np.ndarray, y: np.ndarray, model: object) -> Population:
    xt, xh, yt, yh = train_test_split(x, y, test_size=0.5, stratify=y, random_state=0)
    model.fit(xt, yt)  # type: ignore[attr-defined]
    proba = np.clip(model.predict_proba(xh), 0.0, 1.0)  # type: ignore[attr-defined]
    proba /= proba.sum(axis=1, keepdims=True)
    k = int(y.max()) + 1
    by_class = [np.flatnonzero(yh == c) for c in range(k)]

    def draw(rng: np.random.Generator, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        idx = np.concatenate([rng.choice(by_class[c], size=int(n)) for c, n in enumerate(counts)])
        return yh[idx], proba[idx]

    def validation(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        idx = rng.integers(0, yh.size, yh.size)
        return yh[idx], proba[idx]

    return Population(name, k, draw, validation)


def _gaussians(name: str, k: int, model: object, n_validation: int) -> Population:
    rng = np.random.default_rng(k)
    centres = rng.normal(scale=1.2, size=(k, 5))
    prevalence = np.linspace(1.0, 3.0, k)
    prevalence /= prevalence.sum()
    yt = rng.choice(k, 4000, p=prevalence)
    model.fit(centres[yt] + rng.normal(size=(yt.size, 5)), yt)  # type: ignore[attr-defined]

    def draw(rng: np.random.Generator, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        y = np.repeat(np.arange(k), counts)
        return y, model.predict_proba(centres[y] + rng.normal(size=(y.size, 5)))  # type: ignore[attr-defined]

    def validation(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        return draw(rng, rng.multinomial(n_validation, prevalence))

    def oracle(rng: np.random.Generator, counts: np.ndarray,
               mix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As ``draw``, with each sample's true posterior at ``mix`` (unit-variance Gaussians around the centres)."""
        y = np.repeat(np.arange(k), counts)
        x = centres[y] + rng.normal(size=(y.size, 5))
        log = -0.5 * ((x[:, None, :] - centres[None]) ** 2).sum(axis=2) + np.log(np.maximum(mix, 1e-300))
        e = np.exp(log - log.max(axis=1, keepdims=True))
        return y, model.predict_proba(x), e / e.sum(axis=1, keepdims=True)  # type: ignore[attr-defined]

    return Population(name, k, draw, validation, oracle)


def populations(quick: bool) -> list[Population]:
    """The cells' data: synthetic Gaussians (K = 2, 4) and scikit-learn's bundled data sets, LR and naive Bayes."""
    out = [_gaussians("gauss K=2 (LR, val 2000)", 2, LogisticRegression(), 2000),
           _gaussians("gauss K=2 (NB, val 500)", 2, GaussianNB(), 500)]
    if quick:
        return [*out, _from_data("breast_cancer (LR)", *load_breast_cancer(return_X_y=True),
                                 LogisticRegression(max_iter=5000))]
    out.append(_gaussians("gauss K=4 (LR, val 2000)", 4, LogisticRegression(), 2000))
    out.append(_gaussians("gauss K=4 (NB, val 500)", 4, GaussianNB(), 500))
    x, y = load_breast_cancer(return_X_y=True)
    out.append(_from_data("breast_cancer (LR)", x, y, LogisticRegression(max_iter=5000)))
    out.append(_from_data("breast_cancer (NB)", x, y, GaussianNB()))
    out.append(_from_data("wine (LR)", *load_wine(return_X_y=True), LogisticRegression(max_iter=5000)))
    out.append(_from_data("digits (LR)", *load_digits(return_X_y=True), LogisticRegression(max_iter=5000)))
    return out


def _quapy_emq_bcts(val_y: np.ndarray, val_p: np.ndarray, window_p: np.ndarray, k: int) -> np.ndarray:
    from quapy.method._helper import _get_abstention_calibrators  # noqa: PLC0415 (optional, the bench extra)
    from quapy.method.aggregative import EMQ  # noqa: PLC0415

    calibrate = _get_abstention_calibrators()["bcts"](val_p, np.eye(k)[val_y], posterior_supplied=True)
    train_prev = np.bincount(val_y, minlength=k) / val_y.size
    return np.asarray(EMQ.EM(train_prev, calibrate(window_p))[0])


def run_cell(pop: Population, n: int, trials: int, seed: int) -> dict[str, float]:
    """One cell: MAE of the three estimates and the coverage of streammon's intervals over ``trials``."""
    rng = np.random.default_rng(seed)
    k = pop.k
    err: dict[str, list[float]] = {"ours": [], "quapy": [], "hard": [], "corrected": []}
    cover, cover_w, cover_d, cover_n, width, width_n, failed = [], [], [], [], [], [], 0
    z = 1.959963984540054
    for _ in range(trials):
        val_y, val_p = pop.validation(rng)
        if np.bincount(val_y, minlength=k).min() == 0:
            continue
        val_pred = val_p.argmax(axis=1)
        v = Validation(val_y, val_pred, val_p if k > 2 else val_p[:, 1], classes=list(range(k)), positive=1 if k == 2
                       else None)
        counts = rng.multinomial(n, rng.dirichlet(np.ones(k)))
        _, p = pop.draw(rng, counts)
        real = counts / n
        window = p if k > 2 else p[:, 1]
        e = v.estimate(window)
        e_w = v.estimate(window, validation_noise=False)
        e_d = Validation(val_y, val_pred, val_p if k > 2 else val_p[:, 1], classes=list(range(k)),
                         positive=1 if k == 2 else None, bootstrap=0).estimate(window)
        err["ours"].append(float(np.abs(e.priors - real).mean()))
        err["corrected"].append(float(np.abs(e.priors - v.misfit(e.priors) - real).mean()))
        try:
            err["quapy"].append(float(np.abs(_quapy_emq_bcts(val_y, val_p, p, k) - real).mean()))
        except Exception:  # abstention's optimiser can fail on a degenerate validation; counted
            failed += 1
        confusion = np.zeros((k, k))
        np.add.at(confusion, (val_y, val_pred), 1)
        err["hard"].append(float(np.abs(estimate_priors(confusion, np.bincount(p.argmax(axis=1), minlength=k)).priors
                                        - real).mean()))
        cover.extend((e.lower <= real) & (real <= e.upper))
        cover_w.extend((e_w.lower <= real) & (real <= e_w.upper))
        cover_d.extend((e_d.lower <= real) & (real <= e_d.upper))
        width.extend(e.upper - e.lower)
        # the same interval without the calibration's misfit term (covariance − b bᵀ): what it was before
        b = v.misfit(e.priors)
        half = z * np.sqrt(np.maximum(np.diag(e.covariance) - b**2, 0.0))
        cover_n.extend(np.abs(e.priors - real) <= half)
        width_n.extend(np.minimum(e.priors + half, 1) - np.maximum(e.priors - half, 0))
    out = {f"mae_{key}": float(np.mean(v)) if v else float("nan") for key, v in err.items()}
    out.update(cover=float(np.mean(cover)), cover_w=float(np.mean(cover_w)), cover_d=float(np.mean(cover_d)),
               width=float(np.mean(width)), cover_n=float(np.mean(cover_n)), width_n=float(np.mean(width_n)),
               failed=failed, trials=len(err["ours"]))
    return out


def main() -> None:
    if sys.argv[1:3] == ["--part", "real"]:
        from bench_em_real import main as real  # noqa: PLC0415 (a sibling script: examples/ is on sys.path)

        real(sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="20 trials, three cells")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000], help="window sizes (default 1000)")
    parser.add_argument("--cells", nargs="+", default=None, help="only the cells whose name holds one of these")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    trials = 20 if args.quick else args.trials
    sizes = args.sizes
    started = time.perf_counter()
    print("| cell | n | trials | MAE streammon | MAE QuaPy EMQ-BCTS | ratio | MAE hard-label | ratio | "
          "coverage 95 % (bootstrap) | delta method | window noise only | without misfit | mean width | "
          "without misfit | MAE minus misfit |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    totals: dict[str, list[float]] = {"ours": [], "quapy": [], "hard": [], "cover": []}
    for i, pop in enumerate(populations(args.quick)):
        if args.cells and not any(c in pop.name for c in args.cells):
            continue
        for n in sizes:
            r = run_cell(pop, n, trials, seed=1000 * i + n)
            for key in ("ours", "quapy", "hard"):
                totals[key].append(r[f"mae_{key}"])
            totals["cover"].append(r["cover"])
            note = f" ({int(r['failed'])} QuaPy fits failed)" if r["failed"] else ""
            print(f"| {pop.name}{note} | {n} | {int(r['trials'])} | {r['mae_ours']:.4f} | {r['mae_quapy']:.4f} | "
                  f"{r['mae_ours'] / r['mae_quapy']:.2f} | {r['mae_hard']:.4f} | {r['mae_ours'] / r['mae_hard']:.2f} | "
                  f"{r['cover']:.3f} | {r['cover_d']:.3f} | {r['cover_w']:.3f} | {r['cover_n']:.3f} | "
                  f"{r['width']:.4f} | {r['width_n']:.4f} | {r['mae_corrected']:.4f} |", flush=True)
    print(f"\nmean over cells: MAE streammon {np.mean(totals['ours']):.4f}, QuaPy {np.nanmean(totals['quapy']):.4f}, "
          f"hard-label {np.mean(totals['hard']):.4f}; coverage min {np.min(totals['cover']):.3f}, "
          f"mean {np.mean(totals['cover']):.3f}; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
