"""river's own metric tests, ported: every ``streammon.river`` metric against scikit-learn after every sample.

The cases are adapted from river 0.26.1 (BSD-3-Clause, © the river developers): ``tests/metrics/test_metrics.py``
(test_metric, test_rolling_metric, test_pickling, test_repr, test_compose,
test_metrics_collection_forwards_sample_weight, test_cohen_kappa_supports_sample_weight,
test_balanced_accuracy_ignores_unseen_predicted_classes), ``tests/metrics/test_confusion.py``
(test_confusion_and_other_metrics) and ``tests/utils/test_rolling.py`` (test_rolling_forwards_kwargs_to_class).

The oracle below never calls streammon: scikit-learn's per-class rates (and scipy's means) combined by the formulas
of METRICS.md. Where streammon differs from river on purpose, the test says so:

- weights are counts (METRICS.md, integer counts): river draws ``random.random()`` weights, here whole numbers;
  fractional, negative and non-finite weights are refused, and nothing changes;
- a real 0/0 is NaN where river and scikit-learn say 0 (``zero_division=0``; MCC of a constant stream);
- river starts checking at the second sample; here every prefix is checked, the first sample included;
- recall-based indices and macro F1 average over the classes seen as true (as scikit-learn's
  ``balanced_accuracy_score``; its ``f1_score(average="macro")`` would also count predicted-only classes as 0);
- the binary ``BalancedAccuracy`` is (TPR + TNR)/2, NaN while a class is missing; ``ACSA`` is river's
  ``BalancedAccuracy``.
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
import math
import pickle
import warnings
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from river import datasets, evaluate, linear_model, metrics, optim, preprocessing, tree, utils
from scipy import stats
from sklearn import metrics as skm

from streammon import Sliding
from streammon.metrics import catalog
from streammon.river import (
    ACSA,
    METRIC_CLASSES,
    Accuracy,
    BinaryCatalogMetric,
    CohenKappa,
    HolderMean,
    MacroF1,
    MonitorMetric,
    make,
)

Case = tuple[str, dict[str, Any]]
CASES: list[Case] = [(name, {"p": 0.5} if name == "holder" else {}) for name in catalog()]
CASES += [("holder", {"p": -1.0}), ("holder", {"p": 2.0}), ("iba", {"alpha": 0.1, "squared": True})]
IDS = [name + "".join(f"-{k}={v}" for k, v in params.items()) for name, params in CASES]


def _binary(name: str) -> bool:
    return issubclass(METRIC_CLASSES[name], BinaryCatalogMetric)


# -- the oracle: scikit-learn / scipy, never streammon -------------------------------------------------


def _sk(function: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


Labelled = tuple[tuple[Any, ...], ...]  # (true, predicted, weight[, label types]) per sample; a cache key


@functools.cache
def _binary_parts(stream: Labelled) -> dict[str, float]:
    """scikit-learn's rates of the positive class (True) and the negative class (False)."""
    t = np.array([a for a, _, _ in stream], dtype=bool)
    p = np.array([b for _, b, _ in stream], dtype=bool)
    w = np.array([c for _, _, c in stream], dtype=float)
    nan = math.nan
    (npv, precision), (tnr, tpr), (_, f1), _ = _sk(skm.precision_recall_fscore_support, t, p, labels=[False, True],
                                                   sample_weight=w, zero_division=nan)
    both = bool(w[t].sum() and w[~t].sum())
    # precision at balanced priors: every true class weighs the same (Bradley's mPrecision, seed 004)
    balanced = w / np.where(t, w[t].sum(), w[~t].sum()) if both else w
    tn, fp, fn, tp = skm.confusion_matrix(t, p, labels=[False, True], sample_weight=w).ravel()
    return {"tpr": tpr, "tnr": tnr, "precision": precision, "npv": npv, "f1": f1,
            "accuracy": skm.accuracy_score(t, p, sample_weight=w), "tp": tp, "fn": fn, "fp": fp, "tn": tn,
            "mprecision": _sk(skm.precision_score, t, p, sample_weight=balanced, zero_division=nan) if both else nan}


def _binary_oracle(name: str, stream: Labelled, params: dict[str, Any]) -> float:
    """Binary metrics of the positive class by METRICS.md's formulas on scikit-learn's rates."""
    r = _binary_parts(stream)
    tpr, tnr, precision, mprecision = r["tpr"], r["tnr"], r["precision"], r["mprecision"]
    if name == "iba":
        alpha, squared = params.get("alpha", 0.05), params.get("squared", False)
        return (1 + alpha * (tpr - tnr)) * (tpr * tnr if squared else math.sqrt(tpr * tnr))
    if name == "hmnc":  # TP·TN·n/((TP+TN)·P·N); TP = TN = 0 is the harmonic mean's limit 0 (seed 003, eq. 10)
        tp, fn, fp, tn = r["tp"], r["fn"], r["fp"], r["tn"]
        sizes = (tp + fn) * (fp + tn)
        return math.nan if sizes == 0 else 0.0 if tp + tn == 0 else tp * tn * (tp + fn + fp + tn) / ((tp + tn) * sizes)
    values = {
        "tpr": tpr, "recall": tpr, "tnr": tnr, "precision": precision, "npv": r["npv"], "f1": r["f1"],
        "balanced_accuracy": (tpr + tnr) / 2, "informedness": tpr + tnr - 1, "dominance": tpr - tnr,
        "optimized_precision": r["accuracy"] - abs(tnr - tpr) / (tnr + tpr) if tnr + tpr else math.nan,
        "ac_score": stats.hmean([tpr, tnr]) if not math.isnan(tpr + tnr) else math.nan,
        "aurpc": (tpr + precision) / 2, "mprecision": mprecision, "maurpc": (tpr + mprecision) / 2,
    }
    return float(values[name])


def _arrays(stream: Labelled) -> tuple[list[Any], list[Any], np.ndarray, list[Any]]:
    """Truth, predictions, weights and the classes seen as true (``present``)."""
    y, q = [item[0] for item in stream], [item[1] for item in stream]
    return y, q, np.array([item[2] for item in stream], dtype=float), list(dict.fromkeys(y))


@functools.cache
def _multiclass_parts(stream: Labelled) -> dict[str, Any]:
    """scikit-learn's per-class recalls and precisions over the classes present, and the whole-stream scores."""
    y, q, w, present = _arrays(stream)
    precisions, recalls, f1s, _ = _sk(skm.precision_recall_fscore_support, y, q, labels=present,
                                      sample_weight=w, zero_division=np.nan)
    constant = len(set(y)) < 2 or len(set(q)) < 2
    return {
        "recalls": recalls, "precisions": precisions, "macro_f1": np.mean(f1s),
        "acsa": _sk(skm.balanced_accuracy_score, y, q, sample_weight=w),
        "accuracy": skm.accuracy_score(y, q, sample_weight=w),
        # streammon: NaN for a constant truth or prediction (a real 0/0); scikit-learn reports 0 there
        "mcc": math.nan if constant else skm.matthews_corrcoef(y, q, sample_weight=w),
        "kappa": _sk(skm.cohen_kappa_score, y, q, sample_weight=w),
    }


def _auc(truth: np.ndarray, score: np.ndarray, w: np.ndarray) -> float:
    """scikit-learn's AUROC of a crisp score: (1 + TPR − FPR)/2."""
    return float(skm.roc_auc_score(truth, score, sample_weight=w))


@functools.cache
def _aucs(stream: Labelled) -> tuple[float, float]:
    """AUROC one-vs-all (mean over classes present) and one-vs-one (mean over ordered pairs i, j of present)."""
    y, q, w, present = _arrays(stream)
    if len(present) < 2:
        return math.nan, math.nan
    ya, qa = np.array(y, dtype=object), np.array(q, dtype=object)
    ova = float(np.mean([_auc(ya == c, qa == c, w) for c in present]))
    ovo = []
    for i in present:
        for j in present:
            pair = (ya == i) | (ya == j)
            if i != j:
                ovo.append(_auc(ya[pair] == i, qa[pair] == i, w[pair]))
    return ova, float(np.mean(ovo))


def _multiclass_oracle(name: str, stream: Labelled, params: dict[str, Any]) -> float:
    """Multi-class metrics; recall-based ones over the classes seen as true."""
    y, q, w, present = _arrays(stream)
    if not present:
        return math.nan
    parts = _multiclass_parts(stream)
    recalls, precisions = parts["recalls"], parts["precisions"]
    size = len(present)
    if name in ("auroc_ova", "nauroc_ova", "auroc_ovo"):
        ova, ovo = _aucs(stream)
        lam = (size - 2) / (2 * size)
        return {"auroc_ova": ova, "auroc_ovo": ovo, "nauroc_ova": (ova - lam) / (1 - lam)}[name]
    if name == "maurpc_ova":  # precision at balanced priors: every true class weighs the same
        totals = {c: sum(wi for a, wi in zip(y, w, strict=True) if a == c) for c in present}
        balanced = w / np.array([totals[c] for c in y])
        mprecisions = _sk(skm.precision_score, y, q, labels=present, average=None, sample_weight=balanced,
                          zero_division=np.nan)
        return float(np.mean((mprecisions + recalls) / 2))
    means = {
        "gmean": functools.partial(_sk, stats.gmean, recalls), "hmean": functools.partial(_sk, stats.hmean, recalls),
        "min_recall": recalls.min, "max_recall": recalls.max,
        "holder": lambda: _sk(stats.pmean, recalls, params["p"]),
        "aurpc_ova": lambda: np.mean((precisions + recalls) / 2),
    }
    return float(means[name]() if name in means else parts[name])


def oracle(name: str, pairs: Sequence[tuple[Any, Any]], weights: Sequence[int] | None = None,
           pos_val: Any = True, **params: Any) -> float:
    """What the streammon.river metric ``name`` should read after ``pairs`` (with ``weights``)."""
    w = [1] * len(pairs) if weights is None else [int(x) for x in weights]
    if _binary(name):
        binary = tuple((a == pos_val, b == pos_val, c) for (a, b), c in zip(pairs, w, strict=True))
        return _binary_oracle(name, binary, params)
    # the label's type is part of the key: 1 and True hash alike
    typed = tuple((a, b, c, type(a).__name__, type(b).__name__) for (a, b), c in zip(pairs, w, strict=True))
    return _multiclass_oracle(name, typed, params)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _new(name: str, params: dict[str, Any], labels: str) -> Any:
    extra = {"pos_val": _pos_val(labels)} if _binary(name) else {}
    return make(name, **extra, **params)


def _pos_val(labels: str) -> Any:
    return "spam" if labels == "str" else True


NAMES = ["spam", "ham", "eggs"]


def _stream(seed: int, labels: str, binary: bool, n: int = 30) -> list[tuple[Any, Any]]:
    """river's generate_test_cases: uniform labels ([False, True] or [0, 1, 2]); or three skewed strings."""
    rng = np.random.default_rng(seed)
    if labels == "river":
        choices: list[Any] = [False, True] if binary else [0, 1, 2]
        return [(choices[a], choices[b]) for a, b in rng.integers(0, len(choices), (n, 2))]
    truth = rng.choice(3, size=n, p=[0.2, 0.7, 0.1])
    preds = np.where(rng.random(n) < 0.6, truth, rng.integers(0, 3, n))
    return [(NAMES[a], NAMES[b]) for a, b in zip(truth, preds, strict=True)]


def _weights(seed: int, n: int) -> list[int]:
    return np.random.default_rng(seed + 1000).integers(1, 4, n).tolist()


# -- the catalog is covered ---------------------------------------------------------------------------


def test_every_catalog_metric_has_a_river_class_and_an_oracle() -> None:
    """A catalog metric without a river class (or without an oracle here) fails this test."""
    assert set(METRIC_CLASSES) == set(catalog())
    for name, params in CASES:
        assert isinstance(oracle(name, [("spam", "ham"), ("ham", "ham")], pos_val="spam", **params), float)


# -- test_metric: the value after every sample equals scikit-learn -----------------------------------------


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("labels", ["river", "str"])
@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_metric_equals_the_oracle_after_every_sample(name: str, params: dict[str, Any], labels: str,
                                                     weighted: bool) -> None:
    """river's test_metric, from the first sample on, with whole-number weights (river's are random floats)."""
    for seed in range(2):
        pairs = _stream(seed, labels, _binary(name))
        weights = _weights(seed, len(pairs)) if weighted else None
        metric = _new(name, params, labels)
        for i, (y, p) in enumerate(pairs, start=1):
            if weights is None:
                metric.update(y, p)
            else:
                metric.update(y, p, w=weights[i - 1])
            expected = oracle(name, pairs[:i], None if weights is None else weights[:i],
                              pos_val=_pos_val(labels), **params)
            assert _same(metric.get(), expected), (seed, i, metric.get(), expected)


def test_one_correct_prediction_reads_as_scikit_learn_says() -> None:
    """Issue 13: after ('ham', 'ham') accuracy, ACSA and the recall means are 1.0 — not NaN; ('a', 'b') gives 0."""
    assert _sk(skm.balanced_accuracy_score, ["ham"], ["ham"]) == 1.0 == skm.accuracy_score(["ham"], ["ham"])
    for name in ("accuracy", "acsa", "gmean", "hmean", "min_recall", "max_recall", "holder", "macro_f1",
                 "aurpc_ova", "maurpc_ova"):
        metric = make(name, **({"p": 0.5} if name == "holder" else {}))
        metric.update("ham", "ham")
        assert metric.get() == 1.0, name
    acsa = ACSA()
    acsa.update("a", "b")
    assert acsa.get() == 0.0 == _sk(skm.balanced_accuracy_score, ["a"], ["b"])
    # a real 0/0 stays NaN: one class has no MCC, kappa or one-vs-rest AUROC (scikit-learn: 0, NaN, an error)
    for name in ("mcc", "kappa", "auroc_ova", "auroc_ovo", "nauroc_ova"):
        metric = make(name)
        metric.update("ham", "ham")
        assert math.isnan(metric.get()), name


@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_first_sample_and_empty_metric(name: str, params: dict[str, Any]) -> None:
    """Each single first sample reads as the oracle; an empty metric is NaN (river's is 0)."""
    assert math.isnan(make(name, **params).get())
    for y, p in [("ham", "ham"), ("a", "b"), (True, True), (True, False), (False, True), (0, 0)]:
        metric = make(name, **params)
        metric.update(y, p)
        assert _same(metric.get(), oracle(name, [(y, p)], **params)), (y, p)


# -- test_rolling_metric: utils.Rolling equals the oracle on the tail -------------------------------------


@pytest.mark.parametrize("labels", ["river", "str"])
@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_rolling_metric_equals_the_oracle_on_the_tail(name: str, params: dict[str, Any], labels: str) -> None:
    """river's test_rolling_metric for n in (1, 2, 5, 10), weighted too, checked from the first sample."""
    pairs = _stream(7, labels, _binary(name))
    weights = _weights(7, len(pairs))
    extra = {"pos_val": _pos_val(labels)} if _binary(name) else {}
    for n in (1, 2, 5, 10):
        rolling = utils.Rolling(METRIC_CLASSES[name], window_size=n, **extra, **params)
        weighted = utils.Rolling(METRIC_CLASSES[name], window_size=n, **extra, **params)
        str(rolling)
        for i, (y, p) in enumerate(pairs, start=1):
            rolling.update(y, p)
            weighted.update(y, p, w=weights[i - 1])
            tail = pairs[max(0, i - n):i]
            assert _same(rolling.get(), oracle(name, tail, pos_val=_pos_val(labels), **params)), (n, i)
            expected = oracle(name, tail, weights[max(0, i - n):i], pos_val=_pos_val(labels), **params)
            assert _same(weighted.get(), expected), (n, i)


@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_time_rolling_equals_the_oracle_on_the_period(name: str, params: dict[str, Any]) -> None:
    """utils.TimeRolling keeps the samples of the last period (river's revert at work, by time)."""
    pairs = _stream(8, "str", _binary(name))
    extra = {"pos_val": "spam"} if _binary(name) else {}
    rolling = utils.TimeRolling(METRIC_CLASSES[name], period=dt.timedelta(seconds=5), **extra, **params)
    start = dt.datetime(2024, 1, 1)
    for i, (y, p) in enumerate(pairs):
        rolling.update(y, p, t=start + dt.timedelta(seconds=i))
        tail = pairs[max(0, i - 4):i + 1]  # river keeps t > now − period: the last 5 seconds
        assert _same(rolling.get(), oracle(name, tail, pos_val="spam", **params)), i


def test_rolling_forwards_kwargs_to_class() -> None:
    """river's test_rolling_forwards_kwargs_to_class: Rolling(HolderMean, p=-1) is a harmonic mean of the tail."""
    rolling = utils.Rolling(HolderMean, window_size=3, p=-1.0)
    pairs = [("a", "a"), ("a", "b"), ("b", "b"), ("b", "b"), ("a", "b")]
    for i, (y, p) in enumerate(pairs, start=1):
        rolling.update(y, p)
        assert _same(rolling.get(), oracle("hmean", pairs[max(0, i - 3):i]))


# -- revert and weights ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_revert_with_weights_leaves_the_rest(name: str, params: dict[str, Any]) -> None:
    """Reverting some weighted samples reads as the oracle on the others; reverting all reads as empty (NaN)."""
    pairs = _stream(9, "str", _binary(name), n=24)
    weights = _weights(9, len(pairs))
    metric = _new(name, params, "str")
    for (y, p), w in zip(pairs, weights, strict=True):
        metric.update(y, p, w=w)
    gone = set(range(0, len(pairs), 3))
    for i in sorted(gone):
        metric.revert(*pairs[i], w=weights[i])
    kept = [i for i in range(len(pairs)) if i not in gone]
    expected = oracle(name, [pairs[i] for i in kept], [weights[i] for i in kept], pos_val="spam", **params)
    assert _same(metric.get(), expected)
    for i in kept:
        metric.revert(*pairs[i], w=np.int64(weights[i]))
    assert math.isnan(metric.get())  # river: 0.0 after update(w) and revert(w) cancel; undefined here
    before = pickle.dumps(metric)
    with pytest.raises(ValueError, match=r"not counted|cannot evict"):
        metric.revert("spam", "spam")
    assert pickle.dumps(metric) == before


NUMPY_AND_PYTHON_WHOLE = [2, 2.0, np.int64(2), np.int32(2), np.uint8(2), np.float64(2.0), np.float32(2.0), Fraction(2)]
BAD_WEIGHTS = [
    (0.5, ValueError), (np.float64(1.5), ValueError), (math.inf, ValueError), (-math.inf, ValueError),
    (math.nan, ValueError), (np.float64(np.inf), ValueError), (-1, ValueError), (np.int64(-1), ValueError),
    (2**53 + 1, ValueError), (10**400, ValueError), (1e300, ValueError), (Fraction(1, 3), ValueError),
    (Fraction(10**400), ValueError),
    ("1", TypeError), (None, TypeError), (True, ValueError), (np.bool_(True), ValueError), (1 + 0j, TypeError),
]


@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_weights_are_whole_numbers_of_any_numeric_type(name: str, params: dict[str, Any]) -> None:
    """w=2 as a Python or numpy int or float counts twice; a bad w raises naming it, and changes nothing."""
    pairs = _stream(10, "str", _binary(name), n=12)
    for w in NUMPY_AND_PYTHON_WHOLE:
        metric = _new(name, params, "str")
        for y, p in pairs:
            metric.update(y, p, w=w)
        assert _same(metric.get(), oracle(name, pairs, [2] * len(pairs), pos_val="spam", **params)), w
    zero = _new(name, params, "str")
    for y, p in pairs:
        zero.update(y, p)
        zero.update("eggs", "spam", w=0)  # counts nothing
    assert _same(zero.get(), oracle(name, pairs, pos_val="spam", **params))
    for w, error in BAD_WEIGHTS:
        before = pickle.dumps(zero)
        with pytest.raises(error, match="w must be"):
            zero.update("spam", "ham", w=w)
        with pytest.raises(error, match="w must be"):
            zero.revert(*pairs[0], w=w)
        assert pickle.dumps(zero) == before, w


def test_weights_follow_scikit_learn_sample_weight() -> None:
    """river's test_cohen_kappa_supports_sample_weight (whole weights): kappa equals scikit-learn's weighted one."""
    y_true = ["cat", "ant", "cat", "cat", "ant", "bird", "cat", "ant"]
    y_pred = ["ant", "ant", "cat", "cat", "ant", "cat", "cat", "bird"]
    weights = [1, 5, 1, 3, 1, 2, 4, 1]
    weighted, unweighted = CohenKappa(), CohenKappa()
    for yt, yp, w in zip(y_true, y_pred, weights, strict=True):
        weighted.update(yt, yp, w)
        unweighted.update(yt, yp)
    assert weighted.get() == pytest.approx(skm.cohen_kappa_score(y_true, y_pred, sample_weight=weights))
    assert weighted.get() != pytest.approx(unweighted.get())


def test_balanced_accuracy_ignores_unseen_predicted_classes() -> None:
    """river's test of the same name: a class only predicted has no recall and is left out of ACSA."""
    metric = ACSA()
    for yt, yp in zip([0, 0, 1, 1], [0, 2, 1, 1], strict=True):
        metric.update(yt, yp)
    assert metric.get() == pytest.approx(_sk(skm.balanced_accuracy_score, [0, 0, 1, 1], [0, 2, 1, 1])) == 0.75


# -- pickling, cloning, repr, works_with, composition ----------------------------------------------------


@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_pickle_deepcopy_and_clone(name: str, params: dict[str, Any]) -> None:
    """river's test_pickling, with the counts: copies read the same and continue alike; clone() starts empty."""
    pairs = _stream(11, "str", _binary(name))
    metric = _new(name, params, "str")
    for y, p in pairs[:20]:
        metric.update(y, p)
    for copied in (pickle.loads(pickle.dumps(metric)), copy.deepcopy(metric)):
        assert type(copied) is type(metric) and _same(copied.get(), metric.get())
        for y, p in pairs[20:]:
            copied.update(y, p)
        assert _same(copied.get(), oracle(name, pairs, pos_val="spam", **params))
    fresh = metric.clone()
    assert type(fresh) is type(metric) and fresh._get_params() == metric._get_params()
    assert math.isnan(fresh.get()) and _same(metric.get(), oracle(name, pairs[:20], pos_val="spam", **params))


@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_repr_after_every_sample(name: str, params: dict[str, Any]) -> None:
    """river's test_repr: 'Name: 12.34%' of the oracle's value, before and after every update."""
    metric = _new(name, params, "str")
    pairs = _stream(12, "str", _binary(name), n=10)
    assert repr(metric) == f"{type(metric).__name__}: nan%"
    for i, (y, p) in enumerate(pairs, start=1):
        metric.update(y, p)
        expected = oracle(name, pairs[:i], pos_val="spam", **params)
        assert repr(metric) == str(metric) == f"{type(metric).__name__}: {expected:.2%}"


@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_works_with_and_direction_as_river(name: str, params: dict[str, Any]) -> None:
    """works_with agrees with river's own metric of the same kind; bigger_is_better is the catalog's direction."""
    metric = make(name, **params)
    theirs = metrics.Precision() if _binary(name) else metrics.Accuracy()
    for model in (tree.HoeffdingTreeClassifier(), linear_model.LinearRegression(), linear_model.LogisticRegression()):
        assert metric.works_with(model) == theirs.works_with(model)
    assert metric.bigger_is_better is (name != "dominance")  # dominance = TPR − TNR has no better direction


def test_compose_and_collections_forward_weights() -> None:
    """river's test_compose and test_metrics_collection_forwards_sample_weight, with our metrics."""
    with pytest.raises(ValueError, match="not compatible"):
        _ = ACSA() + metrics.MAE()
    collection = ACSA() + MacroF1() + make("precision", pos_val="spam")
    pairs, weights = _stream(13, "str", False), _weights(13, 30)
    for (y, p), w in zip(pairs, weights, strict=True):
        collection.update(y, p, w)
    expected = [oracle(n, pairs, weights, pos_val="spam") for n in ("acsa", "macro_f1", "precision")]
    assert all(_same(m.get(), e) for m, e in zip(collection, expected, strict=True))
    for (y, p), w in zip(pairs, weights, strict=True):
        collection.revert(y, p, w)
    assert all(math.isnan(m.get()) for m in collection)  # river: 0.0; an empty metric is undefined here


def test_confusion_and_other_metrics_in_progressive_validation() -> None:
    """river's test_confusion_and_other_metrics: the same F1 and accuracy next to river's ConfusionMatrix."""
    model = preprocessing.StandardScaler() | linear_model.LogisticRegression(optimizer=optim.SGD(0.1))
    metric = metrics.ConfusionMatrix() + make("f1") + Accuracy()
    result = evaluate.progressive_val_score(datasets.Phishing(), model, metric)
    assert str(result).splitlines()[-2:] == ["F1: 87.85%", "Accuracy: 88.96%"]  # river's documented values


# -- MonitorMetric ----------------------------------------------------------------------------------------


def _monitor_metric(**options: Any) -> MonitorMetric:
    return MonitorMetric(windows=[Sliding(10)], reference={"spam": 1, "ham": 3, "eggs": 1}, metric="acsa", **options)


def test_monitor_metric_pickles_deep_copies_and_clones() -> None:
    """MonitorMetric travels through pickle and deepcopy (its lock is rebuilt) and continues exactly; clone is empty."""
    pairs = _stream(14, "str", False)
    metric = _monitor_metric()
    for y, p in pairs[:20]:
        metric.update(y, p)
    copies = [pickle.loads(pickle.dumps(metric)), copy.deepcopy(metric)]
    for y, p in pairs[20:]:
        for m in [metric, *copies]:
            m.update(y, p, w=np.int64(1))
    for copied in copies:
        assert copied.report().samples == metric.report().samples == 30
        assert copied.monitor.counts() == metric.monitor.counts()
    assert _same(metric.get(), oracle("acsa", pairs[-10:]))  # the Sliding(10) window
    fresh = metric.clone()
    assert fresh.report().samples == 0 and fresh.monitor is not metric.monitor
    assert [w.describe() for w in fresh.windows] == [w.describe() for w in metric.windows]
    assert (fresh.reference, fresh.metric, fresh.window) == (metric.reference, metric.metric, metric.window)


def test_monitor_metric_weights_and_bad_weights() -> None:
    """A numpy int weight counts that many samples; a bad weight raises and counts nothing."""
    metric = _monitor_metric()
    metric.update("spam", "spam", w=np.int64(3))
    metric.update("ham", "spam", w=np.float64(2.0))
    assert metric.report().samples == 5
    for w, error in BAD_WEIGHTS:
        with pytest.raises(error, match="w must be"):
            metric.update("spam", "ham", w=w)
    assert metric.report().samples == 5
    assert _same(metric.get(), oracle("acsa", [("spam", "spam")] * 3 + [("ham", "spam")] * 2))
    assert MonitorMetric(metric="dominance").bigger_is_better is False
    assert metric.works_with(tree.HoeffdingTreeClassifier()) and not metric.works_with(linear_model.LinearRegression())


def test_monitor_metric_refuses_labels_a_state_cannot_hold_so_it_always_pickles() -> None:
    """A tuple label is refused at update (nothing counted), so what was counted can always be pickled."""
    metric = MonitorMetric(windows=[Sliding(10)])
    metric.update("a", "a")
    with pytest.raises(TypeError):
        metric.update(("a", 1), ("a", 1))
    copy = pickle.loads(pickle.dumps(metric))
    assert copy.report().windows["sliding_10"].n == 1


def test_monitor_metric_one_correct_prediction_without_reference() -> None:
    """Without a reference, one correct prediction should read ACSA 1.0, as scikit-learn and ACSA() do."""
    metric = MonitorMetric(windows=[Sliding(10)])
    metric.update("ham", "ham")
    assert metric.get() == 1.0

