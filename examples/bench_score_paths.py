"""Issue 28's public names through the roads scores take, against scikit-learn and an EM of our own (run on
demand): the check an outsider would run, reading only the docs (river's ``MonitorMetric(scores=True)``:
``tests/test_score_river.py``).

For each data set (scikit-learn's breast_cancer, wine, digits; river's Phishing and ImageSegments; synthetic
``make_classification`` sets at K = 2, 3, 5, 10 with imbalanced mixes — no downloads) and classifier (logistic
regression, Gaussian naive Bayes, an MLP, gradient boosting, an SVC with Platt's probabilities; a random forest, a
decision tree and 7 nearest neighbours, whose scores take few values with many ties), the classifier is trained
on a stratified half; 3,000 samples are drawn from the other half at a mix away from the training one (class i
weighted by i + 1), and fed, scores with decisions, through:

- ``update_many`` (batches of 500), ``update`` (one by one), ``predict_many`` + ``label_many`` (each batch's
  labels one batch late), ``predict`` + ``label``, ``streammon replay --score`` (a CSV, K columns at K > 2,
  ``--save`` then ``Monitor.load``) and ``streammon serve`` through ``streammon.client.Client`` (half
  ``update_many``, half ``predict`` with labels sent later; the report read over HTTP);
- into a cumulative window, sliding windows of 50, 1,000, 2,048 and 2,049 samples and timed ones of 40 s in 8
  buckets and 1,200 s in 60 (one sample a second): both sides of ``EXACT_RANKING_LIMIT``.

Printed per path and data set, for the windows read exactly (at most 2,048 scored samples: ``exact``) and for
those read from the bins (``bins``): the largest |streammon − scikit-learn| over those windows of ``brier``,
``log_loss``, ``ece`` (recounted: 15 bins of the top-label confidence, ties at 0.5 as documented) and
``roc_auc`` and ``average_precision`` (from the bins, of the continuous-score models only), each as read and at
the reference mix (scikit-learn with ``sample_weight = π_c / (n_c / n)``; K > 2 ROC AUC is Hand & Till's
one-vs-one, which takes no weights and is the same at every mix; a window missing a class averages over the
classes, or pairs, present, and its values at a mix weighting the missing class are NaN). ``log_loss`` is compared
with the documented clip at 1e-15. NaN on one side only counts as an infinite error.

Then ``streammon.Validation`` on a third split: ``estimate(window).method`` and |its mix − EM (Saerens et al.
2002) after BCTS (Alexandari et al. 2020) fitted here with scipy| on 10 windows per cell, and |``expected``'s
confusion − the same BCTS posteriors (shrunk by the Validation's ``shrinkage``) moved to the estimated mix by
Saerens' formula| / n.

    nice -n 10 python examples/bench_score_paths.py [--quick]

The full run takes about 15 minutes on the shared 2-core machine; ``--quick`` (four data sets, logistic regression,
naive Bayes, the forest and the tree, no ``update`` / ``predict`` one by one, no serve) about 1 minute. Results:
docs/benchmarks/index.md, "Every path, checked from outside".
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from typing import Any

import numpy as np
import pandas as pd
from river import datasets as rd
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax
from sklearn import datasets as sd
from sklearn import metrics as skm
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler, label_binarize
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

import streammon
import streammon.client
from streammon import Cumulative, Monitor, Sliding, Timed
from streammon.metrics.exact_ranking import EXACT_RANKING_LIMIT

warnings.filterwarnings("ignore")
NAMES = ("roc_auc", "average_precision", "brier", "log_loss", "ece")
RANKING = {"logistic", "nb", "mlp"}  # continuous scores: roc_auc and average_precision compared from the bins too
N = 3000
# (sliding size or timed (seconds, buckets)): windows on both sides of EXACT_RANKING_LIMIT (2,048 scored samples),
# a few samples to the whole stream; a window of at most 2,048 scored samples reads ROC AUC and AP exactly
SLIDINGS = (50, 1000, 2048, 2049)
TIMEDS = ((40.0, 8), (1200.0, 60))


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name in ("phishing", "image_segments"):
        rows = list(rd.Phishing() if name == "phishing" else rd.ImageSegments())
        keys = sorted(rows[0][0])
        x = np.array([[float(r[0][k]) for k in keys] for r in rows])
        return x, np.array([str(int(r[1])) if name == "phishing" else r[1] for r in rows])
    if name.startswith("synth"):
        k = int(name[5:])
        w = {2: [0.9, 0.1], 3: [0.7, 0.2, 0.1], 5: [0.5, 0.2, 0.15, 0.1, 0.05], 10: None}[k]
        x, y = sd.make_classification(8000, 12, n_informative=8, n_classes=k, weights=w, random_state=k)
        return x, y.astype(str)
    x, y = getattr(sd, f"load_{name}")(return_X_y=True)
    return x, y.astype(str)


def model(kind: str) -> Any:
    return {"logistic": LogisticRegression(max_iter=2000), "nb": GaussianNB(),
            "mlp": MLPClassifier((32,), max_iter=500, random_state=0),
            "forest": RandomForestClassifier(50, random_state=0),
            "boosting": GradientBoostingClassifier(n_estimators=50, random_state=0),
            "tree": DecisionTreeClassifier(max_depth=5, random_state=0), "knn": KNeighborsClassifier(7),
            "svc": SVC(probability=True, random_state=0)}[kind]


def stream(name: str, kind: str) -> tuple[list[str], dict[str, int], np.ndarray, np.ndarray, np.ndarray]:
    """Classes, training counts (the reference), and N drawn (true class, decision, probabilities)."""
    x, y = load(name)
    xa, xb, ya, yb = train_test_split(x, y, test_size=0.5, random_state=0, stratify=y)
    scale = StandardScaler().fit(xa)
    clf = model(kind).fit(scale.transform(xa), ya)
    classes = [str(c) for c in clf.classes_]
    weight = np.array([(classes.index(v) + 1.0) / np.sum(yb == v) for v in yb])
    pick = np.random.default_rng(0).choice(len(yb), N, p=weight / weight.sum())
    p = clf.predict_proba(scale.transform(xb[pick]))
    return classes, {c: int(np.sum(ya == c)) for c in classes}, yb[pick], np.array(classes)[p.argmax(1)], p


def ece(y: np.ndarray, p: np.ndarray, w: np.ndarray, positive: int | None) -> float:
    """Top-label ECE recounted (binary: the positive class is the top label only above 0.5, as documented)."""
    conf = p.max(axis=1)
    top = p.argmax(axis=1) if positive is None else np.where(p[:, positive] > 0.5, positive, 1 - positive)
    b = np.minimum((conf * 15).astype(int), 14)
    return float(sum(abs(np.sum(w[b == i] * ((top == y)[b == i] - conf[b == i]))) for i in range(15)) / w.sum())


def sklearn_values(labels: list[str], y: np.ndarray, p: np.ndarray, positive: str,
                   priors: dict[str, float] | None) -> dict[str, float]:
    """scikit-learn's values on a window's samples (at ``priors`` by sample weights). K > 2: ROC AUC is Hand &
    Till's mean over the pairs of classes present of the two one-vs-one AUCs, AP the macro mean over the classes
    present (the documented rule for a window missing a class; scikit-learn's ``multi_class="ovo"`` where all
    are present); at a mix giving weight to a class the window lacks, every value is undefined (NaN)."""
    k = len(labels)
    idx = np.array([labels.index(v) for v in y])
    counts = np.bincount(idx, minlength=k)
    if priors is not None and any(priors[labels[c]] > 0 and counts[c] == 0 for c in range(k)):
        return dict.fromkeys(NAMES, math.nan)
    w = np.ones(len(y)) if priors is None else np.array([priors[labels[c]] * len(y) / counts[c] for c in idx])
    true_p = np.clip(p[np.arange(len(y)), idx], 1e-15, 1 - 1e-15)
    if k == 2:  # the score is clipped, then 1 − it is the other class's (scikit-learn's order, at 1e-15)
        clipped = np.clip(p[:, labels.index(positive)], 1e-15, 1 - 1e-15)
        true_p = np.where(idx == labels.index(positive), clipped, 1.0 - clipped)
    out = {"log_loss": float(np.average(-np.log(true_p), weights=w))}
    if k == 2:
        pos = labels.index(positive)
        yb, s = (idx == pos).astype(int), p[:, pos]
        out |= {"roc_auc": skm.roc_auc_score(yb, s, sample_weight=w) if 0 < yb.sum() < len(yb) else math.nan,
                "average_precision": skm.average_precision_score(yb, s, sample_weight=w) if yb.sum() else math.nan,
                "brier": skm.brier_score_loss(yb, s, sample_weight=w), "ece": ece(idx, p, w, pos)}
    else:
        present = np.flatnonzero(counts)
        onehot = label_binarize(idx, classes=list(range(k)))
        if len(present) == k:
            auc = skm.roc_auc_score(idx, p, multi_class="ovo", labels=list(range(k)))
        else:
            pairs = [(skm.roc_auc_score(idx[both] == i, p[both, i]) + skm.roc_auc_score(idx[both] == j, p[both, j])) / 2
                     for a, i in enumerate(present) for j in present[a + 1:] if (both := np.isin(idx, (i, j))).any()]
            auc = float(np.mean(pairs)) if pairs else math.nan
        out |= {"roc_auc": auc,
                "average_precision": float(np.mean([skm.average_precision_score(onehot[:, c], p[:, c], sample_weight=w)
                                                    for c in present])),
                "brier": float(np.average(((p - onehot) ** 2).sum(axis=1), weights=w)),
                "ece": ece(idx, p, w, None)}
    return out


def held(times: np.ndarray) -> dict[str, np.ndarray]:
    """Which samples each window holds, by the time they were counted (a timed window: its newest buckets)."""
    out = {"cumulative": np.ones(len(times), bool)}
    for size in SLIDINGS:
        out[f"sliding_{size}"] = np.arange(len(times)) >= len(times) - size
    for seconds, buckets in TIMEDS:
        width = seconds / buckets
        out[f"timed_{seconds:g}s"] = np.floor(times / width) > math.floor(times[-1] / width) - buckets
    return out


def new_windows() -> list[Any]:
    return [Cumulative(), *(Sliding(size) for size in SLIDINGS), *(Timed(s, buckets=b) for s, b in TIMEDS)]


WINDOW_SPECS = ["cumulative", *(f"sliding:{size}" for size in SLIDINGS), *(f"timed:{s:g}:{b}" for s, b in TIMEDS)]


def compare(windows: dict[str, Any], cell: tuple[Any, ...], *, counted_at: np.ndarray,
            ranking: bool) -> dict[str, dict[str, float]]:
    """Largest |ours − scikit-learn| per metric (read, and '/c' at the reference mix), over the windows read
    exactly (at most EXACT_RANKING_LIMIT samples: every model's ROC AUC and AP) and over those read from the bins
    (ROC AUC and AP of the continuous-score models only). NaN where scikit-learn has a value, or the reverse, is
    an infinite error."""
    labels, ref, y, _, p, positive = cell
    priors = {c: ref[c] / sum(ref.values()) for c in labels}
    worst: dict[str, dict[str, float]] = {"exact": {}, "bins": {}}
    for name, mask in held(counted_at).items():
        w = windows[name]
        assert w["n"] == mask.sum(), (name, w["n"], int(mask.sum()))
        reading = "exact" if w["n"] <= EXACT_RANKING_LIMIT else "bins"
        for suffix, mix in (("", None), ("/c", priors)):
            want = sklearn_values(labels, y[mask], p[mask], positive, mix)
            got = w["scores" if not suffix else "corrected"]
            for metric in NAMES:
                if metric in ("roc_auc", "average_precision") and not ranking and reading == "bins":
                    continue
                value = math.nan if got[metric] is None else got[metric]
                gap = 0.0 if math.isnan(value) and math.isnan(want[metric]) else abs(value - want[metric])
                gap = math.inf if math.isnan(gap) else gap
                worst[reading][metric + suffix] = max(worst[reading].get(metric + suffix, 0.0), gap)
    return worst


def as_dicts(report: Any) -> dict[str, Any]:
    return {name: {"n": w.n, "scores": dict(w.scores), "corrected": dict(w.corrected)}
            for name, w in report.windows.items()}


def in_process(path: str, cell: tuple[Any, ...]) -> tuple[dict[str, Any], np.ndarray]:
    labels, ref, y, d, p, positive = cell
    score = p[:, labels.index(positive)] if len(labels) == 2 else p
    m = Monitor(new_windows(), reference=ref, detector=None)
    t = np.arange(N, dtype=float)
    at = t.copy()
    one = (lambda i: float(score[i])) if score.ndim == 1 else (lambda i: score[i].tolist())
    if path == "update_many":
        for a in range(0, N, 500):
            m.update_many(y[a:a + 500], d[a:a + 500], t=t[a:a + 500], y_score=score[a:a + 500])
    elif path == "update":
        for i in range(N):
            m.update(str(y[i]), str(d[i]), t=float(t[i]), y_score=one(i))
    elif path == "predict_many":
        keys = np.arange(N)
        for a in range(0, N + 500, 500):
            if a < N:
                m.predict_many(keys[a:a + 500].tolist(), d[a:a + 500], t=t[a:a + 500], y_score=score[a:a + 500])
            if a >= 500:  # the previous batch's labels, one batch late
                at[a - 500:a] = t[min(a + 499, N - 1)]
                m.label_many(keys[a - 500:a].tolist(), y[a - 500:a], t=at[a - 1])
    elif path == "predict":
        for i in range(N):
            m.predict(i, str(d[i]), t=float(t[i]), y_score=one(i))
            m.label(i, str(y[i]), t=float(t[i]))
    return as_dicts(m.report()), at


def replayed(cell: tuple[Any, ...]) -> tuple[dict[str, Any], np.ndarray]:
    labels, ref, y, d, p, positive = cell
    folder = tempfile.mkdtemp()
    table = pd.DataFrame({"y": y, "p": d, "t": np.arange(N, dtype=float)})
    if len(labels) == 2:
        table["s"] = p[:, labels.index(positive)]
        scores = ["--score", "s"]
    else:
        for i in range(len(labels)):
            table[f"s{i}"] = p[:, i]
        scores = [a for i in range(len(labels)) for a in ("--score", f"s{i}")]
    table.to_csv(f"{folder}/log.csv", index=False)
    subprocess.run([sys.executable, "-m", "streammon", "replay", f"{folder}/log.csv", "--true", "y", "--pred", "p",
                    "--time", "t", "--reference", ",".join(f"{c}={ref[c]}" for c in labels),
                    *(a for spec in WINDOW_SPECS for a in ("--window", spec)), "--no-detect", "--save",
                    f"{folder}/m.json", *scores], check=True, capture_output=True)
    m = Monitor.load(f"{folder}/m.json")
    assert [str(c) for c in m.labels] == labels
    return as_dicts(m.report()), np.arange(N, dtype=float)


def served(cells: list[tuple[str, str]], data: dict[tuple[str, str], Any],
           ) -> dict[tuple[str, str], tuple[dict[str, Any], np.ndarray]]:
    """One ``streammon serve`` with a model per cell; half the rows by ``update_many``, half by ``predict`` with
    the labels sent at the end; each model's report read over HTTP."""
    folder = tempfile.mkdtemp()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = f'[server]\nlisten = "127.0.0.1:{port}"\nstate_dir = "{folder}/state"\n'
    for i, cell in enumerate(cells):
        labels, ref = data[cell][0], data[cell][1]
        mix = ", ".join(f'"{c}" = {ref[c]}' for c in labels)
        config += (f'\n[models.m{i}]\nwindows = {json.dumps(WINDOW_SPECS)}\n'
                   f"reference = {{ {mix} }}\n")
    with open(f"{folder}/s.toml", "w") as f:
        f.write(config)
    server = subprocess.Popen([sys.executable, "-m", "streammon", "serve", f"{folder}/s.toml"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = {}
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        for i, cell in enumerate(cells):
            labels, ref, y, d, p, positive = data[cell]
            score = p[:, labels.index(positive)] if len(labels) == 2 else p
            client = streammon.client.Client(f"http://127.0.0.1:{port}", f"m{i}")
            t, half = np.arange(N, dtype=float), N // 2
            for a in range(0, half, 250):
                client.update_many(y[a:a + 250].tolist(), d[a:a + 250].tolist(), t=t[a:a + 250].tolist(),
                                   y_score=score[a:a + 250].tolist())
            for j in range(half, N):
                client.predict(f"k{j}", str(d[j]), t=float(t[j]), y_score=score[j].tolist())
            client.label_many([f"k{j}" for j in range(half, N)], y[half:].tolist(), t=float(t[-1]))
            assert client.flush(timeout=60)
            client.close(timeout=5)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models/m{i}/report", timeout=60) as r:
                windows = json.load(r)["windows"]
            at = np.concatenate([t[:half], np.full(N - half, t[-1])])
            out[cell] = ({w: {"n": v["n"], "scores": v["scores"], "corrected": v["corrected"]}
                          for w, v in windows.items()}, at)
    finally:
        server.terminate()  # the server checkpoints every model as it stops: 72 of them take more than 10 s here
        try:
            server.wait(180)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)
    return out


def bcts_em(pv: np.ndarray, yv: np.ndarray, windows: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """BCTS (softmax(a·log p + b), b₀ = 0) by scipy's BFGS on the validation NLL, then Saerens' EM per window."""
    k = pv.shape[1]
    logs, onehot = np.log(np.clip(pv, 1e-15, 1)), np.eye(k)[yv]

    def nll(theta: np.ndarray) -> float:
        return float(-np.sum(onehot * log_softmax(theta[0] * logs + np.r_[0.0, theta[1:]], axis=1)))

    theta = minimize(nll, np.r_[1.0, np.zeros(k - 1)], method="BFGS", options={"gtol": 1e-9}).x
    source = np.bincount(yv, minlength=k) / len(yv)
    mixes = []
    for pw in windows:
        post, mix = softmax(theta[0] * np.log(np.clip(pw, 1e-15, 1)) + np.r_[0.0, theta[1:]], axis=1), source
        for _ in range(10000):
            moved = post * mix / source
            new = (moved / moved.sum(axis=1, keepdims=True)).mean(axis=0)
            if np.abs(new - mix).max() < 1e-12:
                break
            mix = new
        mixes.append(mix)
    return theta, mixes


def validation_check(name: str, kind: str) -> str:
    x, y = load(name)
    xa, xr, ya, yr = train_test_split(x, y, test_size=0.6, random_state=0, stratify=y)
    xv, xp, yv, yp = train_test_split(xr, yr, test_size=0.5, random_state=0, stratify=yr)
    scale = StandardScaler().fit(xa)
    clf = model(kind).fit(scale.transform(xa), ya)
    classes = [str(c) for c in clf.classes_]
    pv, pp = clf.predict_proba(scale.transform(xv)), clf.predict_proba(scale.transform(xp))
    v = streammon.Validation(yv, np.array(classes)[pv.argmax(1)], pv, classes=classes)
    rng = np.random.default_rng(1)
    k, yvi, ypi = len(classes), np.array([classes.index(c) for c in yv]), np.array([classes.index(c) for c in yp])
    windows = []
    for _ in range(10):  # a random class mix per window: each sample weighted by its class's share / its count
        share = rng.dirichlet(np.ones(k))[ypi] / np.bincount(ypi)[ypi]
        windows.append(pp[rng.choice(len(pp), min(1000, len(pp) // 2), replace=False, p=share / share.sum())])
    theta, mine = bcts_em(pv, yvi, windows)
    shrunk = np.r_[1.0, np.zeros(k - 1)] + v.shrinkage * (theta - np.r_[1.0, np.zeros(k - 1)])
    methods, mix_gap, confusion_gap = set(), 0.0, 0.0
    for pw, own in zip(windows, mine, strict=True):
        e = v.estimate(pw)
        methods.add(e.method)
        mix_gap = max(mix_gap, float(np.abs(np.asarray(e.priors) - own).max()))
        decided = pw.argmax(axis=1)
        post = softmax(shrunk[0] * np.log(np.clip(pw, 1e-15, 1)) + np.r_[0.0, shrunk[1:]], axis=1)
        post = post * np.asarray(e.priors) / v.priors
        post /= post.sum(axis=1, keepdims=True)
        hand = np.stack([post[decided == j].sum(axis=0) for j in range(k)], axis=1)  # rows true, columns decided
        got = np.asarray(v.expected(pw, np.array(classes)[decided], priors=e.priors).confusion)
        confusion_gap = max(confusion_gap, float(np.abs(got - hand).max()) / len(pw))
    smooth = " (separable: Platt's targets, not our plain fit)" if v.calibration.smoothed else ""
    return (f"{name:15s} {kind:8s} method {','.join(sorted(methods)):3s}  |mix − own EM| {mix_gap:.1e}  "
            f"|expected confusion − own reweighting|/n {confusion_gap:.1e}{smooth}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="four data sets, the batch paths and replay only")
    quick = parser.parse_args().quick
    sets = (["breast_cancer", "synth3", "digits", "phishing"] if quick else
            ["breast_cancer", "phishing", "synth2", "wine", "synth3", "synth5", "image_segments", "digits", "synth10"])
    kinds = (["logistic", "nb", "forest", "tree"] if quick else
             ["logistic", "nb", "mlp", "forest", "boosting", "tree", "knn", "svc"])
    paths = ["update_many", "predict_many", "replay"] + ([] if quick else ["update", "predict", "serve"])
    cells = [(s, k) for s in sets for k in kinds]
    data = {}
    for cell in cells:
        labels, ref, y, d, p = stream(*cell)
        positive = min(labels, key=ref.__getitem__)
        if len(labels) == 2:  # the score given is the positive class's; the other class's probability is 1 − it
            i = labels.index(positive)
            p[:, 1 - i] = 1.0 - p[:, i]
        data[cell] = (labels, ref, y, d, p, positive)
    by_serve = served(cells, data) if "serve" in paths else {}
    columns = [m + s for m in NAMES for s in ("", "/c")]
    print(f"{'path':13s} {'data set':15s} {'model':8s} {'read':5s} " + " ".join(f"{c:>9s}" for c in columns))
    for path in paths:
        for cell in cells:
            if path == "serve":
                windows, at = by_serve[cell]
            elif path == "replay":
                windows, at = replayed(data[cell])
            else:
                windows, at = in_process(path, data[cell])
            worst = compare(windows, data[cell], counted_at=at, ranking=cell[1] in RANKING)
            for reading, gaps in worst.items():
                print(f"{path:13s} {cell[0]:15s} {cell[1]:8s} {reading:5s} " + " ".join(
                    f"{gaps[c]:9.1e}" if c in gaps else f"{'–':>9s}" for c in columns), flush=True)
    print("\nValidation (EM after BCTS) against our own BCTS + EM and Saerens reweighting, 10 windows per cell:")
    for cell in [("synth2", "nb"), ("phishing", "logistic"), ("synth3", "mlp"), ("digits", "logistic")][:2 if quick
                                                                                                       else 4]:
        print(validation_check(*cell), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
