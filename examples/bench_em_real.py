"""EM after BCTS inside the monitor on real data sets: the 95 % intervals' coverage of the window's class shares.

Issue 28's target is coverage ≥ 0.93 of the label-free EM estimate (``Monitor(baseline=streammon.Validation(...))``,
``report().windows[w].estimate`` with ``method == "em"``). This bench measures it where the other benches do not:
on real data, with everything refitted per split and windows drawn without replacement.

Each cell is one (data set, classifier): scikit-learn's bundled breast_cancer, digits (K = 10) and wine, and river's
bundled Phishing, Bananas and ImageSegments (no download), with logistic regression (standardised inputs), Gaussian
naive Bayes, gradient boosting (scikit-learn's ``HistGradientBoostingClassifier``) and a random forest. Per split
(``--splits``, default 20) the data set is cut at random, stratified, into train (40 %), validation (30 %) and pool
(30 %); the classifier is fitted on train and ``streammon.Validation(y, ŷ, scores)`` is built on the validation
part (BCTS, 50 bootstrap replicas — the default). Per window (``--windows`` per split, default 10: 200 trials a
cell) a mix is drawn from a Dirichlet(1) and a window of ``n = min(1000, pool // 2)`` predictions is subsampled
class by class from the pool *without* replacement (a class's count capped at what the pool holds). A fresh
monitor (``Sliding(n)``, the Validation as baseline) takes the window's decisions and scores (``predict_many``) and
its report's estimate is read: binary windows from the score histogram's bin representatives, K > 2 from the exact
score vectors — what a user gets.

The target is the window's *realised* class shares (its hidden labels), as in the other benches. The interval is
per class (each class's share at 95 %, the docs of ``LabelFreeEstimate``), so coverage is pooled over (trial,
class); "joint" is the share of trials where every class's interval held (not what the interval claims; shown
for K > 2). On the same windows: MAE of the EM estimate, of QuaPy's ``EMQ`` with BCTS (when QuaPy and abstention
are installed: its calibrator fitted on the same validation part; the ratio is over the trials where abstention's
optimiser succeeded, which on wine fails on a few separable validation sets) and of the hard-label estimate
(``streammon.metrics.estimate_priors`` from the validation's confusion counts and the window's decisions).

    PYTHONPATH=$PWD nice -n 10 /work/venv-quapy/bin/python examples/bench_em_real.py [--quick] [--cells NAME ...]

``--quick``: 4 splits × 5 windows on three cells (~20 s). The full run (24 cells × 200 trials) took 9–12 minutes
on the shared, loaded 2-core machine (``OMP_NUM_THREADS=1`` keeps gradient boosting from oversubscribing it);
``--seed S`` draws other splits, ``--splits 100`` gives 1,000 trials a cell. Also reachable as
``bench_em_priors.py --part real``. Results: docs/benchmarks ("Inside the monitor, on real data").
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import streammon
from streammon import Monitor, Sliding
from streammon.metrics import estimate_priors

MODELS: dict[str, Callable[[], object]] = {
    "LR": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)),
    "NB": GaussianNB,
    "GB": lambda: HistGradientBoostingClassifier(max_iter=100, random_state=0),
    "RF": lambda: RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1),
}
CLIP = 1e-15  # streammon.metrics.score_bins.CLIP
QUICK = ("breast_cancer LR", "phishing NB", "wine LR")


def datasets() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The six bundled data sets as (x, y) with y the class index (river's labels sorted by their text)."""
    from river import datasets as rd  # noqa: PLC0415 (river only for its bundled data)

    out = {name: tuple(np.asarray(a) for a in loader(return_X_y=True))
           for name, loader in (("breast_cancer", load_breast_cancer), ("digits", load_digits), ("wine", load_wine))}
    for name, ds in (("phishing", rd.Phishing()), ("bananas", rd.Bananas()), ("image_segments", rd.ImageSegments())):
        rows = list(ds)
        keys = sorted(rows[0][0])
        labels = sorted({r[1] for r in rows}, key=str)
        out[name] = (np.array([[float(r[0][key]) for key in keys] for r in rows]),
                     np.array([labels.index(r[1]) for r in rows]))
    return out  # type: ignore[return-value]


@dataclass
class Cell:
    """What one cell collected over its trials."""

    covered: list[bool] = field(default_factory=list)  # per (trial, class)
    split_cover: list[float] = field(default_factory=list)  # per split: its windows' coverage
    joint: list[bool] = field(default_factory=list)  # per trial: every class covered
    width: list[float] = field(default_factory=list)  # per (trial, class): upper − lower
    z: list[float] = field(default_factory=list)  # per (trial, class): error / (half-width / 1.96)
    # "em_q": EM's error on the trials where QuaPy's calibrator could be fitted (its ratio is on the same trials)
    err: dict[str, list[float]] = field(default_factory=lambda: {"em": [], "em_q": [], "quapy": [], "hard": []})
    small: list[bool] = field(default_factory=list)  # per (trial, class): coverage of shares < 0.05 or > 0.95
    em: int = 0
    n: int = 0  # window size
    trials: int = 0
    quapy_failed: int = 0

    def add(self, real: np.ndarray, est: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        """One EM trial: the window's real shares, the estimate and its intervals."""
        self.em += 1
        hit = (lo <= real) & (real <= hi)
        self.covered.extend(hit.tolist())
        self.joint.append(bool(hit.all()))
        self.width.extend((hi - lo).tolist())
        self.z.extend(((est - real) / np.maximum((hi - lo) / 2, 1e-12) * 1.959964).tolist())
        self.small.extend(hit[(real < 0.05) | (real > 0.95)].tolist())
        self.err["em"].append(float(np.abs(est - real).mean()))


def _quapy(val_y: np.ndarray, val_p: np.ndarray, k: int) -> Callable[[np.ndarray], np.ndarray] | None:
    """QuaPy's EMQ with BCTS fitted on the validation part (as ``EMQ.aggregation_fit`` does), or None."""
    try:
        from quapy.method._helper import _get_abstention_calibrators  # noqa: PLC0415 (optional)
        from quapy.method.aggregative import EMQ  # noqa: PLC0415
    except ImportError:
        return None
    def clip(p: np.ndarray) -> np.ndarray:  # as streammon's log-probabilities do: a 0 would make EM's ratios NaN
        c = np.clip(p, CLIP, 1.0)
        return c / c.sum(axis=1, keepdims=True)

    try:
        calibrate = _get_abstention_calibrators()["bcts"](clip(val_p), np.eye(k)[val_y], posterior_supplied=True)
    except Exception:  # abstention's optimiser can fail on a degenerate validation; counted by the caller
        return None
    prev = np.bincount(val_y, minlength=k) / val_y.size
    return lambda p: np.asarray(EMQ.EM(prev, calibrate(clip(p)))[0])


def _proba(model: object, x: np.ndarray, k: int) -> np.ndarray:
    p = np.clip(model.predict_proba(x), 0.0, 1.0)  # type: ignore[attr-defined]
    return p / p.sum(axis=1, keepdims=True) if p.shape[1] == k else np.full((len(x), k), np.nan)


def run_cell(x: np.ndarray, y: np.ndarray, model_name: str, *, splits: int, windows: int, seed: int) -> Cell:
    """One (data set, classifier) cell: ``splits`` × ``windows`` trials through the monitor."""
    rng = np.random.default_rng(seed)
    k = int(y.max()) + 1
    names = [f"c{i}" for i in range(k)]
    cell = Cell()
    for split in range(splits):
        xt, xr, yt, yr = train_test_split(x, y, train_size=0.4, stratify=y, random_state=seed + split)
        xv, xp, yv, yp = train_test_split(xr, yr, train_size=0.5, stratify=yr, random_state=seed + split)
        model = MODELS[model_name]()
        model.fit(xt, yt)  # type: ignore[attr-defined]
        pv, pp = _proba(model, xv, k), _proba(model, xp, k)
        if not np.all(np.isfinite(pv)):
            continue
        score = (lambda p: p[:, 1]) if k == 2 else (lambda p: p)
        v = streammon.Validation(np.array(names)[yv], np.array(names)[pv.argmax(axis=1)], score(pv), classes=names,
                                 positive="c1" if k == 2 else None)
        quapy = _quapy(yv, pv, k)
        confusion = np.zeros((k, k))
        np.add.at(confusion, (yv, pv.argmax(axis=1)), 1)
        by_class = [np.flatnonzero(yp == c) for c in range(k)]
        n = cell.n = min(1000, yp.size // 2)
        start = len(cell.covered)
        for _ in range(windows):
            want = rng.multinomial(n, rng.dirichlet(np.ones(k)))
            idx = np.concatenate([rng.choice(by_class[c], size=min(int(want[c]), by_class[c].size), replace=False)
                                  for c in range(k)])
            rng.shuffle(idx)
            real = np.bincount(yp[idx], minlength=k) / idx.size
            p = pp[idx]
            m = Monitor([Sliding(idx.size)], baseline=v, classes=names, positive="c1" if k == 2 else None,
                        detector=None)
            m.predict_many([str(i) for i in range(idx.size)], [names[c] for c in p.argmax(axis=1)], y_score=score(p))
            e = m.report().windows[f"sliding_{idx.size}"].estimate
            cell.trials += 1
            if e is None or e.method != "em":
                continue
            cell.add(real, *(np.array([getattr(e, side)[c] for c in names]) for side in ("priors", "lower", "upper")))
            if quapy is None:
                cell.quapy_failed += 1
            else:
                cell.err["quapy"].append(float(np.abs(quapy(p) - real).mean()))
                cell.err["em_q"].append(cell.err["em"][-1])
            decided = np.bincount(p.argmax(axis=1), minlength=k)
            cell.err["hard"].append(float(np.abs(estimate_priors(confusion, decided).priors - real).mean()))
        if len(cell.covered) > start:
            cell.split_cover.append(float(np.mean(cell.covered[start:])))
    return cell


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--windows", type=int, default=10, help="windows per split")
    parser.add_argument("--quick", action="store_true", help="4 splits × 5 windows, three cells")
    parser.add_argument("--cells", nargs="+", default=None, help="only the cells whose name holds one of these")
    parser.add_argument("--seed", type=int, default=0, help="added to every cell's seed (another draw of splits)")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    splits, windows = (4, 5) if args.quick else (args.splits, args.windows)
    started = time.perf_counter()
    print("| cell | K | n | trials (EM) | coverage 95 % per class | ± SE | joint | shares < 0.05 or > 0.95 | "
          "mean width | RMS z | MAE EM | MAE QuaPy EMQ-BCTS | ratio | MAE hard-label | ratio | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    worst = 1.0
    for i, (name, (x, y)) in enumerate(datasets().items()):
        for model_name in args.models:
            label = f"{name} {model_name}"
            if (args.quick and label not in QUICK) or (args.cells and not any(c in label for c in args.cells)):
                continue
            t0 = time.perf_counter()
            seed = 100 * i + list(MODELS).index(model_name) + 1000 * args.seed
            c = run_cell(x, y, model_name, splits=splits, windows=windows, seed=seed)
            k = int(y.max()) + 1
            cover = float(np.mean(c.covered))
            worst = min(worst, cover)
            # the windows of a split share its model and validation: the standard error is over splits
            se = float(np.std(c.split_cover, ddof=1) / np.sqrt(len(c.split_cover)))
            mae = {key: float(np.mean(v)) if v else float("nan") for key, v in c.err.items()}
            small = f"{np.mean(c.small):.3f} ({len(c.small)})" if c.small else "–"
            print(f"| {label} | {k} | {c.n} | {c.trials} ({c.em}) | {cover:.3f} | {se:.3f} | {np.mean(c.joint):.3f} | "
                  f"{small} | {np.mean(c.width):.4f} | {np.sqrt(np.mean(np.square(c.z))):.2f} | {mae['em']:.4f} | "
                  f"{mae['quapy']:.4f} | {mae['em_q'] / mae['quapy']:.2f} | {mae['hard']:.4f} | "
                  f"{mae['em'] / mae['hard']:.2f} | {time.perf_counter() - t0:.0f} |", flush=True)
    print(f"\nlowest coverage {worst:.3f}; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
