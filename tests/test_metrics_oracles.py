"""Every catalog metric that scikit-learn or imbalanced-learn also computes agrees with them."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from imblearn.metrics import geometric_mean_score, make_index_balanced_accuracy
from sklearn import metrics as skm

from streammon.metrics import compute

RNG_SEEDS = range(40)


def _labels(seed: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Random labels with every class present in the truth, and a skewed mix."""
    rng = np.random.default_rng(seed)
    priors = rng.dirichlet(np.ones(k) * 0.7)
    truth = np.concatenate([np.arange(k), rng.choice(k, size=n - k, p=priors)])
    correct = rng.random(n) < rng.uniform(0.3, 0.95)
    preds = np.where(correct, truth, rng.integers(0, k, n))
    return truth, preds


def _cm(truth: np.ndarray, preds: np.ndarray, k: int) -> np.ndarray:
    return skm.confusion_matrix(truth, preds, labels=list(range(k)))


def _close(ours: float, theirs: float) -> bool:
    return math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_binary_metrics_match_sklearn_and_imblearn(seed: int) -> None:
    """Binary catalog metrics equal scikit-learn / imbalanced-learn on random labels (positive = 1)."""
    truth, preds = _labels(seed, 2, 60 + seed * 7)
    cm = _cm(truth, preds, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = {
            "tpr": skm.recall_score(truth, preds),
            "tnr": skm.recall_score(truth, preds, pos_label=0),
            "precision": skm.precision_score(truth, preds, zero_division=np.nan),
            "npv": skm.precision_score(truth, preds, pos_label=0, zero_division=np.nan),
            "f1": skm.f1_score(truth, preds, zero_division=np.nan),
            "accuracy": skm.accuracy_score(truth, preds),
            "balanced_accuracy": skm.balanced_accuracy_score(truth, preds),
            "kappa": skm.cohen_kappa_score(truth, preds),
            "gmean": geometric_mean_score(truth, preds, average="binary"),
            "recall": skm.recall_score(truth, preds),
        }
        iba_default = make_index_balanced_accuracy(alpha=0.1, squared=True)(geometric_mean_score)
        iba_seed000 = make_index_balanced_accuracy(alpha=0.05, squared=False)(geometric_mean_score)
        iba_expected = iba_default(truth, preds, average="binary")
        iba_seed = iba_seed000(truth, preds, average="binary")
    if cm[:, 1].sum() and cm[1].sum() and cm[:, 0].sum():
        expected["mcc"] = skm.matthews_corrcoef(truth, preds)
    for name, value in expected.items():
        got = compute(name, cm)
        assert _close(got, value) or (math.isnan(got) and math.isnan(value)), (name, got, value)
    assert _close(compute("iba", cm, alpha=0.1, squared=True), iba_expected)
    assert _close(compute("iba", cm), iba_seed)


@pytest.mark.parametrize("seed", RNG_SEEDS)
@pytest.mark.parametrize("k", [3, 5, 8])
def test_multiclass_metrics_match_sklearn_and_imblearn(seed: int, k: int) -> None:
    """Multi-class catalog metrics equal scikit-learn / imbalanced-learn when every class is present."""
    truth, preds = _labels(seed * 31 + k, k, 80 + 13 * seed)
    cm = _cm(truth, preds, k)
    assert _close(compute("acsa", cm), skm.balanced_accuracy_score(truth, preds))
    assert _close(compute("accuracy", cm), skm.accuracy_score(truth, preds))
    assert _close(compute("kappa", cm), skm.cohen_kappa_score(truth, preds))
    assert _close(compute("mcc", cm), skm.matthews_corrcoef(truth, preds))
    assert _close(compute("macro_f1", cm), skm.f1_score(truth, preds, average="macro", labels=list(range(k))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gmean = geometric_mean_score(truth, preds, average="multiclass", correction=0.0)
        precisions = skm.precision_score(truth, preds, average=None, labels=list(range(k)), zero_division=np.nan)
    assert _close(compute("gmean", cm), gmean)
    recalls = skm.recall_score(truth, preds, average=None, labels=list(range(k)))
    for cls in range(k):
        assert _close(compute("recall", cm, positive=cls), recalls[cls])
        got = compute("precision", cm, positive=cls)
        assert _close(got, precisions[cls]) or (math.isnan(got) and math.isnan(precisions[cls]))
    assert _close(compute("min_recall", cm), recalls.min())
    assert _close(compute("max_recall", cm), recalls.max())
    assert _close(compute("hmean", cm), 0.0 if recalls.min() == 0 else k / np.sum(1 / recalls))


def test_undefined_values_are_nan_where_sklearn_would_report_zero() -> None:
    """0/0 is NaN (never a silent 0): no predicted positive, constant truth, empty matrix."""
    never_predicts_positive = [[50, 0], [5, 0]]
    assert math.isnan(compute("precision", never_predicts_positive))
    assert math.isnan(compute("mcc", never_predicts_positive))
    assert compute("f1", never_predicts_positive) == 0.0  # TP = 0 with positives present: a real 0
    no_positive = [[40, 3], [0, 0]]
    assert math.isnan(compute("tpr", no_positive))
    assert math.isnan(compute("balanced_accuracy", no_positive))
    assert math.isnan(compute("f1", [[10, 0], [0, 0]]))
    empty = [[0, 0], [0, 0]]
    for name in ("tpr", "tnr", "precision", "accuracy", "acsa", "gmean", "mcc", "kappa", "hmnc", "macro_f1"):
        assert math.isnan(compute(name, empty)), name


def test_absent_classes_are_left_out_of_recall_based_indices() -> None:
    """A class with no true sample is excluded from recall averages (C = classes present)."""
    cm = np.array([[8, 2, 0], [0, 0, 0], [1, 0, 9]])
    assert compute("acsa", cm) == pytest.approx((0.8 + 0.9) / 2)
    assert compute("gmean", cm) == pytest.approx(math.sqrt(0.8 * 0.9))
    assert math.isnan(compute("recall", cm, positive=1))
    # eq. 12 over the present classes 0 and 2: (1 + 0.8 - 1/10) and (1 + 0.9 - 0/10), over 2C = 4.
    # Lemma 2 (auroc_ovo = acsa at C = 2) does not hold here: 2 samples are predicted as the absent class.
    assert compute("auroc_ovo", cm) == pytest.approx((1.7 + 1.9) / 4)


def test_bad_names_parameters_and_matrices_raise_clear_errors() -> None:
    """Unknown names, wrong K, bad parameters and bad matrices raise errors that say what is valid."""
    with pytest.raises(ValueError, match=r"unknown metric 'f2'.*valid names: tpr"):
        compute("f2", [[1, 0], [0, 1]])
    with pytest.raises(ValueError, match=r"binary-only.*K=3.*valid for K=3: recall"):
        compute("mprecision", np.eye(3))
    with pytest.raises(TypeError, match="needs parameter"):
        compute("holder", np.eye(3))
    with pytest.raises(TypeError, match=r"unknown parameter.*takes: alpha, squared"):
        compute("iba", np.eye(2), beta=1)
    with pytest.raises(ValueError, match="square"):
        compute("acsa", [[1, 2, 3]])
    with pytest.raises(ValueError, match=">= 0"):
        compute("acsa", [[1, -2], [0, 1]])
    with pytest.raises(ValueError, match=r"class index in \[0, 2\)"):
        compute("tpr", np.eye(2), positive=2)
    with pytest.raises(ValueError, match="K must be >= 2"):
        compute("acsa", [[3]])
