"""Expected performance without labels (``Validation.expected``) against NannyML's CBPE, and the scores' "only the
mix changed?" test (``Validation.mix_test``) against the hard-label test, on the same windows.

**Expected performance.** Per cell, 10 validation sets × 10 windows of 1,000 predictions: under *pure label
shift* the windows are sampled class by class at a Dirichlet(1) mix; under *no shift* at the validation's mix.
streammon's estimate is the catalog metric on the expected confusion at the EM mix, from the BCTS map shrunk
towards the model's own probabilities (``Validation.shrunk_calibration``), and the expected
``roc_auc``/``average_precision``; CBPE (``nannyml.CBPE``, isotonic calibration on the same validation set as its
reference, ``chunk_size`` = the window) estimates the same metrics without any mix adjustment. The error is
``|estimate − realised|`` (the realised value computed by scikit-learn from the window's labels), averaged over the
100 windows; ``ratio`` = streammon / CBPE (target: ≤ 0.5 under label shift, ≤ 1 under no shift). NannyML is run
from the same process, so install it beside streammon (e.g. ``python -m venv --system-site-packages
/work/venv-nannyml && /work/venv-nannyml/bin/pip install nannyml``); without it this part is skipped.

Beside the ratio, to say where each error comes from: the signed mean error (bias) of each estimator; the **noise
floor** (synthetic cells): the error of an oracle that knows the true posteriors at the generating mix and says
the metric's expectation given the window's inputs (a mean over 200 labellings drawn from them) — its distance to
the realised value is the labels' own sampling noise, which no estimator can remove, so ``floor / CBPE`` is the
lowest ratio any estimator could reach on that cell; streammon's error with the mix known (``at the true mix``:
what the EM estimate costs), with the model's own probabilities instead of BCTS (what the calibration costs),
with the fitted BCTS map unshrunk (streammon before the shrinkage) and at the EM mix shrunk towards the
validation's by inverse-variance weighting (``_shrunk_mix``: tried, not kept).

**Beside** (``--part beside``): the two synthetic K = 2 cells again with windows of 10,000 under the same label
shift, and under a *large shift* (the reference minority's share uniform in [0.75, 0.95], the imbalance flipped)
with windows of 1,000 and 10,000 — where CBPE's bias should outgrow the labels' noise — and label shift and no
shift at windows of 10,000 read through validation sets of 20,000 (where the validation's own noise shrinks too).
Reported beside the main cells, never instead of them. Last, breast_cancer with windows of 100 samples drawn *without*
replacement within each class (``--part distinct``): no copies sharing one label.
The bundled data set's windows are 1,000 draws with replacement from the 285 held-out samples (each repeated
about 3.5 times, the copies sharing one label), so no floor is given there. ``bench_calibration.py`` compares the
calibrations themselves (BCTS, CBPE's isotonic regression, the model's own) on held-out data.

**The mix test.** Windows of 2,000 predictions at a Dirichlet(1) mix: the false-alarm rate at α = 0.05 of each
test (pure label shift), then the same windows after the most prevalent class's recall drops by 0.2 — its
samples' log-probability of their own class lowered by the constant that takes its recall down by exactly 0.2
(a drift of that class along the model's decision function: its scores slide towards and across the boundary,
the decisions follow). The hard-label test (``metrics.estimate_priors``) reads the decisions, the scores' test the
scores. 100 trials per cell.

``--quick``: 3 cells, 30 windows; ``--part main|beside|distinct|test`` runs one part. On the shared 2-core
machine the main table took 92 s, the beside table 284 s (61 s of it the distinct windows); the mix test
(unchanged, not re-run) took about 140 s of the earlier full run's 234 s.
(No intervals are read here, so the validation sets are made with ``bootstrap=0``.)
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from bench_em_priors import Population, _from_data, _gaussians
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    f1_score,
    precision_score,
    recall_score,
    roc_auc_score,
)
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

from streammon import Validation
from streammon.metrics import estimate_priors
from streammon.metrics.em_priors import estimate_mix, mix_posteriors
from streammon.metrics.expected_scores import (
    expected_average_precision,
    expected_confusion,
    expected_metrics,
    expected_roc_auc,
)

os.environ.setdefault("NML_DISABLE_USAGE_LOGGING", "1")  # NannyML would otherwise try to post usage statistics

BINARY = {"accuracy": "accuracy", "f1": "f1", "precision": "precision", "recall": "tpr", "roc_auc": "roc_auc",
          "average_precision": "average_precision"}  # CBPE's name → streammon's
MULTI = {"accuracy": "accuracy", "f1": "macro_f1", "roc_auc": "roc_auc"}


def _realised(name: str, y: np.ndarray, p: np.ndarray, k: int) -> float:
    pred = p.argmax(axis=1)
    if name == "accuracy":
        return float(accuracy_score(y, pred))
    if name == "f1":
        return float(f1_score(y, pred, average="binary" if k == 2 else "macro"))
    if name == "precision":
        return float(precision_score(y, pred, zero_division=np.nan))
    if name == "recall":
        return float(recall_score(y, pred))
    if name == "roc_auc":
        return float(roc_auc_score(y, p[:, 1]) if k == 2 else roc_auc_score(y, p, multi_class="ovr", labels=range(k)))
    return float(average_precision_score(y, p[:, 1]))


def _frame(p: np.ndarray, y: np.ndarray | None, k: int) -> object:
    import pandas as pd  # noqa: PLC0415 (only with nannyml)

    data = {"pred": p.argmax(axis=1)}
    if k == 2:
        data["proba"] = p[:, 1]
    else:
        data.update({f"p{c}": p[:, c] for c in range(k)})
    if y is not None:
        data["y"] = y
    return pd.DataFrame(data)


def _cbpe(val_y: np.ndarray, val_p: np.ndarray, windows: list[np.ndarray], k: int, n: int) -> dict[str, list[float]]:
    import nannyml as nml  # noqa: PLC0415 (optional: the benchmark's comparator)
    import pandas as pd  # noqa: PLC0415

    names = list(BINARY if k == 2 else MULTI)
    estimator = nml.CBPE(y_pred_proba="proba" if k == 2 else {c: f"p{c}" for c in range(k)}, y_pred="pred",
                         y_true="y", problem_type="classification_binary" if k == 2 else "classification_multiclass",
                         metrics=names, chunk_size=n)
    estimator.fit(_frame(val_p, val_y, k))
    analysis = pd.concat([_frame(p, None, k) for p in windows], ignore_index=True)
    result = estimator.estimate(analysis).filter(period="analysis").to_df()
    return {name: result[(name, "value")].tolist() for name in names}


def _oracle_expectation(posterior: np.ndarray, pred: np.ndarray, score: np.ndarray, k: int,
                        rng: np.random.Generator, *, draws: int = 200) -> dict[str, float]:
    """``E[realised | the window's inputs]``: each metric's mean over ``draws`` labellings drawn from the true
    posteriors — what a perfect estimator would say; its distance to the realised value is label noise alone."""
    n = posterior.shape[0]
    y = np.minimum((rng.random((draws, n, 1)) > np.cumsum(posterior, axis=1)[None]).sum(axis=2), k - 1)
    out = {"accuracy": (y == pred[None]).mean(axis=1)}
    f1, auc = [], []
    for c in range(1 if k == 2 else 0, k):
        is_c, said_c = y == c, pred == c
        tp, positives, predicted = (is_c & said_c[None]).sum(axis=1), is_c.sum(axis=1), said_c.sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            f1.append(np.where(predicted + positives > 0, 2 * tp / (predicted + positives), np.nan))
            ranks = np.argsort(np.argsort(score if k == 2 else score[:, c])) + 1.0  # continuous scores: no ties
            auc.append(((is_c * ranks[None]).sum(axis=1) - positives * (positives + 1) / 2)
                       / (positives * (n - positives)))
            if k == 2:
                out["precision"] = tp / predicted
                out["recall"] = tp / positives
                ordered = is_c[:, np.argsort(-score)]
                hits = np.cumsum(ordered, axis=1)
                out["average_precision"] = (ordered * hits / np.arange(1, n + 1)[None]).sum(axis=1) / positives
    out["f1"] = np.nanmean(np.array(f1), axis=0)
    out["roc_auc"] = np.nanmean(np.array(auc), axis=0)
    return {m: float(np.nanmean(v)) for m, v in out.items()}


def _own_probabilities(v: Validation, p: np.ndarray, pred: np.ndarray, mix: np.ndarray, k: int) -> dict[str, float]:
    """streammon's estimate with the model's probabilities as they are (no BCTS) moved to the same EM mix: the
    calibration's share of the error."""
    return _with_posteriors(v, p, p, pred, mix=mix, k=k)


def _with_posteriors(v: Validation, posteriors: np.ndarray, p: np.ndarray, pred: np.ndarray, *, mix: np.ndarray,
                     k: int) -> dict[str, float]:
    """The expected metrics from ``posteriors`` (calibrated at the validation mix) moved to ``mix``."""
    adjusted = mix_posteriors(posteriors, v.priors, mix)
    cm = expected_confusion(adjusted, np.eye(k)[pred])
    values = expected_metrics(cm, positive=1 if k == 2 else 0)
    ranking = p[:, 1] if k == 2 else p
    values["roc_auc"] = expected_roc_auc(ranking, adjusted, positive=1 if k == 2 else 0)
    values["average_precision"] = expected_average_precision(ranking, adjusted, positive=1 if k == 2 else 0)
    return values


def _shrunk_mix(v: Validation, window: np.ndarray) -> np.ndarray:
    """The EM mix shrunk towards the validation's by inverse-variance (empirical-Bayes) weighting — tried for the
    no-shift cells and not kept: per class, ``π_val + w·(π̂ − π_val)`` with ``w = (V₀ + τ²)/(V₀ + τ² + V₁)``, ``V₁``
    the EM estimate's variance for the generating mix (Fisher, ``target="mix"``, plus the validation's delta-method
    term), ``V₀ = π_val(1 − π_val)/n_val`` and ``τ² = max(0, (π̂ − π_val)² − V₀ − V₁)`` (the shift's own variance,
    Morris 1983)."""
    e = estimate_mix(v.calibration, v.priors, window, parameter_covariance=v.parameter_covariance, target="mix")
    d = e.priors - v.priors
    v0 = v.priors * (1 - v.priors) / v.counts.sum()
    v1 = np.diag(e.covariance)
    tau = np.maximum(0.0, d**2 - v0 - v1)
    mix = v.priors + (v0 + tau) / (v0 + tau + v1) * d
    return np.asarray(mix / mix.sum())


def _ours(values: object, name: str) -> float:
    if name in ("roc_auc", "average_precision"):
        return float(getattr(values, name)) if not isinstance(values, dict) else float(values[name])
    scores = values if isinstance(values, dict) else values.scores  # type: ignore[attr-defined]
    return float(scores[name])


COLUMNS = ("ours", "cbpe", "oracle", "true_mix", "own", "fitted", "mix_shrunk")


def ratio_interval(ours: np.ndarray, theirs: np.ndarray, blocks: int, seed: int = 0) -> tuple[float, float]:
    """A 90 % bootstrap interval of the MAE ratio, resampling whole validation sets (``blocks`` consecutive groups
    of windows): the windows of one validation share its calibration error, so they are not independent."""
    rng = np.random.default_rng(seed)
    a, b = np.abs(ours).reshape(blocks, -1), np.abs(theirs).reshape(blocks, -1)
    picks = rng.integers(0, blocks, (2000, blocks))
    ratios = np.nanmean(a[picks].reshape(2000, -1), axis=1) / np.nanmean(b[picks].reshape(2000, -1), axis=1)
    low, high = np.nanquantile(ratios, [0.05, 0.95])
    return float(low), float(high)


def _mix(rng: np.random.Generator, condition: str, val_y: np.ndarray, k: int) -> np.ndarray:
    """A window's generating mix: Dirichlet(1) (``shift``), the validation's (``none``), or, binary, the reference
    minority's share uniform in [0.75, 0.95] (``large``: the imbalance flipped, where CBPE's bias is largest)."""
    if condition == "shift":
        return rng.dirichlet(np.ones(k))
    if condition == "none":
        return np.bincount(val_y, minlength=k) / val_y.size
    share = rng.uniform(0.75, 0.95)
    return np.array([1.0 - share, share])


def expected_cell(pop: Population, condition: str, *, validations: int, windows: int, n: int, seed: int,
                  with_cbpe: bool) -> dict[str, dict[str, np.ndarray]]:
    """Per metric, the signed errors (estimate − realised) over ``validations × windows`` windows of one cell:
    streammon (``ours``), CBPE, the oracle (synthetic cells: the metric's expectation given the window's inputs
    under the true posteriors at the generating mix — the noise floor), streammon at the generating mix
    (``true_mix``: the mix estimate's share), with the model's own probabilities (``own``: BCTS's share), with the
    fitted BCTS map unshrunk (``fitted``: what ``expected`` read before the shrinkage) and at the EM mix shrunk
    towards the validation's (``mix_shrunk``, ``_shrunk_mix``). ``condition``: ``_mix``'s."""
    rng = np.random.default_rng(seed)
    k = pop.k
    table = BINARY if k == 2 else MULTI
    errors: dict[str, dict[str, list[float]]] = {m: {c: [] for c in COLUMNS} for m in table}
    for _ in range(validations):
        val_y, val_p = pop.validation(rng)
        v = Validation(val_y, val_p.argmax(axis=1), val_p[:, 1] if k == 2 else val_p, classes=list(range(k)),
                       positive=1 if k == 2 else None, bootstrap=0)
        drawn, truth = [], []
        for _ in range(windows):
            mix = _mix(rng, condition, val_y, k)
            counts = rng.multinomial(n, mix)
            if pop.oracle is not None:
                y, p, posterior = pop.oracle(rng, counts, mix)
            else:
                (y, p), posterior = pop.draw(rng, counts), None
            pred = p.argmax(axis=1)
            window = p[:, 1] if k == 2 else p
            drawn.append(p)
            truth.append({m: _realised(m, y, p, k) for m in table})
            e = v.expected(window, pred)
            at_mix = v.expected(window, pred, priors=mix)
            own = _own_probabilities(v, p, pred, e.priors, k)
            fitted = _with_posteriors(v, v.calibration.apply(window), p, pred, mix=e.priors, k=k)
            mix_shrunk = v.expected(window, pred, priors=_shrunk_mix(v, window))
            floor = (_oracle_expectation(posterior, pred, window, k, rng) if posterior is not None else None)
            for m, name in table.items():
                real = truth[-1][m]
                errors[m]["ours"].append(_ours(e, name) - real)
                errors[m]["true_mix"].append(_ours(at_mix, name) - real)
                errors[m]["own"].append(_ours(own, name) - real)
                errors[m]["fitted"].append(_ours(fitted, name) - real)
                errors[m]["mix_shrunk"].append(_ours(mix_shrunk, name) - real)
                errors[m]["oracle"].append(floor[m] - real if floor is not None else np.nan)
        if with_cbpe:
            estimates = _cbpe(val_y, val_p, drawn, k, n)
            for m in table:
                errors[m]["cbpe"].extend(est - t[m] for est, t in zip(estimates[m], truth, strict=True))
        else:
            for m in table:
                errors[m]["cbpe"].extend([np.nan] * windows)
    return {m: {c: np.array(v, dtype=float) for c, v in per.items()} for m, per in errors.items()}


def _degrade(p: np.ndarray, y: np.ndarray, c: int) -> np.ndarray | None:
    """Class c's samples' log-probability of c lowered by the constant that drops its recall by exactly 0.2."""
    mine = np.flatnonzero(y == c)
    logp = np.log(np.maximum(p[mine], 1e-300))
    margin = logp[:, c] - np.delete(logp, c, axis=1).max(axis=1)
    recall = float(np.mean(margin > 0))
    if recall < 0.25:
        return None
    shift = float(np.quantile(margin, 1.0 - (recall - 0.2)))
    moved = logp.copy()
    moved[:, c] -= shift
    out = p.copy()
    e = np.exp(moved - moved.max(axis=1, keepdims=True))
    out[mine] = e / e.sum(axis=1, keepdims=True)
    return out


def test_cell(pop: Population, trials: int, n: int, seed: int) -> dict[str, float]:
    """False alarms and power at α = 0.05 of the scores' mix test and the hard-label test on the same windows."""
    rng = np.random.default_rng(seed)
    k = pop.k
    alarms = {"scores": 0, "hard": 0}
    power = {"scores": 0, "hard": 0}
    done = powered = 0
    for _ in range(trials):
        val_y, val_p = pop.validation(rng)
        if np.bincount(val_y, minlength=k).min() == 0:
            continue
        val_pred = val_p.argmax(axis=1)
        v = Validation(val_y, val_pred, val_p[:, 1] if k == 2 else val_p, classes=list(range(k)),
                       positive=1 if k == 2 else None, bootstrap=0)
        confusion = np.zeros((k, k))
        np.add.at(confusion, (val_y, val_pred), 1)
        counts = rng.multinomial(n, rng.dirichlet(np.ones(k)))
        y, p = pop.draw(rng, counts)
        done += 1
        for name, probabilities in (("alarm", p), ("power", _degrade(p, y, int(np.argmax(counts))))):
            if probabilities is None:
                continue
            powered += name == "power"
            target = alarms if name == "alarm" else power
            window = probabilities[:, 1] if k == 2 else probabilities
            target["scores"] += v.mix_test(window).p_value < 0.05
            predicted = np.bincount(probabilities.argmax(axis=1), minlength=k)
            target["hard"] += estimate_priors(confusion, predicted).p_value < 0.05
    return {"alarm_scores": alarms["scores"] / done, "alarm_hard": alarms["hard"] / done,
            "power_scores": power["scores"] / max(powered, 1), "power_hard": power["hard"] / max(powered, 1),
            "trials": done, "powered": powered}


def _distinct(name: str, x: np.ndarray, y: np.ndarray, model: object) -> Population:
    """As ``bench_em_priors._from_data`` (the same split and model), but each window draws its samples *without*
    replacement within each class: no copies sharing one label (the expected AP assumes independent labels)."""
    pop = _from_data(name, x, y, model)  # fits the model on the training half
    _, xh, _, yh = train_test_split(x, y, test_size=0.5, stratify=y, random_state=0)
    by_class = [np.flatnonzero(yh == c) for c in range(pop.k)]
    proba = np.clip(model.predict_proba(xh), 0.0, 1.0)  # type: ignore[attr-defined]
    proba /= proba.sum(axis=1, keepdims=True)

    def draw(rng: np.random.Generator, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        idx = np.concatenate([rng.choice(by_class[c], size=int(n), replace=False) for c, n in enumerate(counts)])
        return yh[idx], proba[idx]

    return Population(name, pop.k, draw, pop.validation)


CONDITIONS = {"shift": "label shift", "none": "no shift", "large": "large shift"}


def _header() -> None:
    print("| cell | condition | window | metric | streammon | CBPE | ratio | 90 % (validations) | bias: streammon | "
          "CBPE | noise floor | floor / CBPE | streammon at the true mix | with the model's own probabilities | "
          "with BCTS unshrunk (before) | at the EM mix shrunk |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def _rows(pop: Population, condition: str, n: int, seed: int, *, validations: int, windows: int,
          with_cbpe: bool) -> None:
    row = expected_cell(pop, condition, validations=validations, windows=windows, n=n, seed=seed, with_cbpe=with_cbpe)
    for m, err in row.items():
        mae = {c: float(np.nanmean(np.abs(e))) if np.isfinite(e).any() else float("nan") for c, e in err.items()}
        bias = {c: float(np.nanmean(e)) if np.isfinite(e).any() else float("nan") for c, e in err.items()}
        low, high = ratio_interval(err["ours"], err["cbpe"], validations)
        print(f"| {pop.name} | {CONDITIONS[condition]} | {n:,} | {m} | {mae['ours']:.4f} | {mae['cbpe']:.4f} | "
              f"{mae['ours'] / mae['cbpe']:.2f} | {low:.2f}–{high:.2f} | {bias['ours']:+.4f} | {bias['cbpe']:+.4f} | "
              f"{mae['oracle']:.4f} | {mae['oracle'] / mae['cbpe']:.2f} | {mae['true_mix']:.4f} | "
              f"{mae['own']:.4f} | {mae['fitted']:.4f} | {mae['mix_shrunk']:.4f} |", flush=True)


def _beside(cells: list[Population], part: str, *, validations: int, windows: int, with_cbpe: bool) -> None:
    """The cells beside the main table (module docstring): larger windows and shifts, larger validation sets, and
    breast_cancer with distinct samples per window (``part`` "distinct": that one only)."""
    if part != "distinct":
        print("\n## Beside: larger windows and larger shifts, where CBPE's bias should outgrow the labels' noise "
              f"({validations * windows} windows per cell)\n")
        _header()
        for i, pop in enumerate(cells[:2]):
            for j, (condition, n) in enumerate((("shift", 10_000), ("large", 1000), ("large", 10_000))):
                _rows(pop, condition, n, 1000 + 10 * i + j, validations=validations, windows=windows,
                      with_cbpe=with_cbpe)
        big = [_gaussians("gauss K=2 (LR, val 20000)", 2, LogisticRegression(), 20_000),
               _gaussians("gauss K=2 (NB, val 20000)", 2, GaussianNB(), 20_000)]
        for i, pop in enumerate(big):  # a validation 10 times larger: its calibration's noise 1/√10 of the above
            _rows(pop, "shift", 10_000, 2000 + i, validations=validations, windows=windows, with_cbpe=with_cbpe)
            _rows(pop, "none", 10_000, 2100 + i, validations=validations, windows=windows, with_cbpe=with_cbpe)
    print("\n## Beside: breast_cancer with windows of 100 distinct samples (no copies sharing a label)\n")
    _header()
    pop = _distinct("breast_cancer (LR), distinct", *load_breast_cancer(return_X_y=True),
                    LogisticRegression(max_iter=5000))
    for shift in (True, False):
        _rows(pop, "shift" if shift else "none", 100, 3000 + shift, validations=validations, windows=windows,
              with_cbpe=with_cbpe)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three cells, 30 windows each")
    parser.add_argument("--part", choices=("all", "main", "beside", "distinct", "test"), default="all",
                        help="only the main table, the larger windows and shifts beside it, or the mix test")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    started = time.perf_counter()
    try:
        import nannyml  # noqa: F401, PLC0415 (only to know whether CBPE can run)

        with_cbpe = True
    except ImportError:
        with_cbpe = False
        print("nannyml is not installed here: CBPE columns are NaN (see the docstring to install it)\n")
    cells = [_gaussians("gauss K=2 (LR, val 2000)", 2, LogisticRegression(), 2000),
             _gaussians("gauss K=2 (NB, val 2000)", 2, GaussianNB(), 2000),
             _from_data("breast_cancer (LR)", *load_breast_cancer(return_X_y=True), LogisticRegression(max_iter=5000))]
    if not args.quick:
        cells.append(_gaussians("gauss K=3 (LR, val 2000)", 3, LogisticRegression(), 2000))
    validations, windows = (3, 10) if args.quick else (10, 10)
    if args.part in ("all", "main"):
        print("## Expected performance without labels: mean |estimate − realised| over "
              f"{validations * windows} windows of 1,000 per cell\n")
        _header()
        for i, pop in enumerate(cells):
            for shift in (True, False):
                _rows(pop, "shift" if shift else "none", 1000, 7 * i + shift, validations=validations, windows=windows,
                      with_cbpe=with_cbpe)
    if args.part in ("all", "beside", "distinct"):
        _beside(cells, args.part, validations=validations, windows=windows, with_cbpe=with_cbpe)
    if args.part not in ("all", "test"):
        print(f"\n{time.perf_counter() - started:.0f} s")
        return
    trials = 30 if args.quick else 100
    tests = list(cells[:3])
    if not args.quick:
        tests += [_gaussians("gauss K=4 (LR, val 2000)", 4, LogisticRegression(), 2000),
                  _gaussians("gauss K=2 (NB, val 500)", 2, GaussianNB(), 500),
                  _from_data("digits (LR)", *load_digits(return_X_y=True), LogisticRegression(max_iter=5000))]
    print(f"\n## \"Only the mix changed?\" at α = 0.05, windows of 2,000 predictions, {trials} trials per cell\n")
    print("| cell | false alarms: scores | hard-label | power (recall −0.2): scores | hard-label |")
    print("|---|---|---|---|---|")
    for i, pop in enumerate(tests):
        r = test_cell(pop, trials, 2000, 100 + i)
        print(f"| {pop.name} | {r['alarm_scores']:.3f} | {r['alarm_hard']:.3f} | {r['power_scores']:.2f} | "
              f"{r['power_hard']:.2f} |", flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
