"""An outside oracle for every catalog metric that had none, plus a law each one must obey.

The oracle is a library value where one exists (scikit-learn, imbalanced-learn, scipy), else the seed paper's
formula written here from the four cells TP, FN, FP, TN (or the K×K cells), never through a streammon helper.
Class 1 is the positive class unless a test says otherwise; ``cm`` rows are the true class.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from imblearn.metrics import make_index_balanced_accuracy, sensitivity_specificity_support
from scipy import stats
from sklearn import metrics as skm
from sklearn.preprocessing import label_binarize
from sklearn.utils.class_weight import compute_sample_weight

from streammon.metrics import compute
from tests.strategies import confusion_matrices

SEEDS = range(30)


def _labels(cm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (truth, prediction) pairs a confusion matrix counts."""
    true, pred = np.indices(cm.shape)
    return np.repeat(true.ravel(), cm.ravel()), np.repeat(pred.ravel(), cm.ravel())


def _random_cm(seed: int, k: int) -> np.ndarray:
    """A skewed K×K count matrix in which every class is present in truth and in the predictions."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 200, size=k)
    cm = np.array([rng.multinomial(n, rng.dirichlet(np.ones(k) * 0.5)) for n in sizes])
    return cm + np.eye(k, dtype=int)  # a correct prediction in every class


def _cells(cm: np.ndarray) -> tuple[float, float, float, float]:
    """(TP, FN, FP, TN) with class 1 positive."""
    return float(cm[1, 1]), float(cm[1, 0]), float(cm[0, 1]), float(cm[0, 0])


def _swap(cm: np.ndarray) -> np.ndarray:
    """Seed 000's p1: exchange TP with TN and FN with FP (the other class becomes the positive one)."""
    return np.asarray(cm)[::-1, ::-1].copy()


def _balanced_weights(truth: np.ndarray) -> np.ndarray:
    """Per-sample weights that give every true class the same total weight (scikit-learn's 'balanced')."""
    return np.asarray(compute_sample_weight("balanced", truth))


def _close(ours: float, theirs: float) -> bool:
    return math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-12)


# -- binary: informedness, dominance, optimized precision, AC-score, mPrecision, mAURPC, AURPC ------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_binary_metrics_equal_library_values(seed: int) -> None:
    """informedness, dominance, ac_score, aurpc, mprecision and maurpc equal values computed by scikit-learn,
    imbalanced-learn and scipy from the labels."""
    cm = _random_cm(seed, 2)
    truth, pred = _labels(cm)
    recall = skm.recall_score(truth, pred)
    specificity = skm.recall_score(truth, pred, pos_label=0)
    balanced = _balanced_weights(truth)
    sensitivity, spec, _ = sensitivity_specificity_support(truth, pred, average="binary")
    iba_of_accuracy = make_index_balanced_accuracy(alpha=1.0, squared=False)(skm.accuracy_score)
    expected = {
        "informedness": skm.balanced_accuracy_score(truth, pred, adjusted=True),
        "dominance": sensitivity - spec,
        "ac_score": stats.hmean([recall, specificity]),
        "aurpc": (recall + skm.precision_score(truth, pred)) / 2,
        "mprecision": skm.precision_score(truth, pred, sample_weight=balanced),
        "maurpc": (recall + skm.precision_score(truth, pred, sample_weight=balanced)) / 2,
    }
    for name, value in expected.items():
        assert _close(compute(name, cm), value), (name, compute(name, cm), value)
    # imbalanced-learn's own dominance, read back out of its IBA: (1 + 1·Dom)·accuracy
    assert _close(compute("dominance", cm), iba_of_accuracy(truth, pred) / skm.accuracy_score(truth, pred) - 1)


@pytest.mark.parametrize("seed", SEEDS)
def test_binary_metrics_equal_the_seed_formulas_written_from_the_cells(seed: int) -> None:
    """optimized_precision (seed 000, eq. 1), mprecision and maurpc (seed 004, eqs. 8-9), aurpc (eq. 5),
    informedness, dominance and ac_score equal their papers' formulas written from TP, FN, FP, TN."""
    cm = _random_cm(seed, 2)
    tp, fn, fp, tn = _cells(cm)
    n1, n2 = tp + fn, fp + tn
    tp_rate, tn_rate = tp / n1, tn / n2
    accuracy = (tp + tn) / (tp + fn + fp + tn)
    m_precision = (tp / n1) / ((tp / n1) + (fp / n2))
    expected = {
        "optimized_precision": accuracy - abs(tn_rate - tp_rate) / (tn_rate + tp_rate),
        "mprecision": m_precision,
        "maurpc": (tp / n1 + m_precision) / 2,
        "aurpc": (tp / n1 + tp / (tp + fp)) / 2,
        "informedness": tp_rate + tn_rate - 1,
        "dominance": tp_rate - tn_rate,
        "ac_score": 2 * tp_rate * tn_rate / (tp_rate + tn_rate),
    }
    for name, value in expected.items():
        assert _close(compute(name, cm), value), (name, compute(name, cm), value)


def test_worked_example_of_the_golden_window() -> None:
    """By hand for TP=2, FN=2, FP=1, TN=5: TPR 1/2, TNR 5/6, accuracy 0.7, OP 0.7 − (1/3)/(4/3) = 0.45,
    mPrecision (1/2)/(1/2 + 1/6) = 0.75, mAURPC 0.625, AURPC (1/2 + 2/3)/2, AC 2·(5/12)/(4/3) = 0.625."""
    cm = np.array([[5, 1], [2, 2]])
    assert compute("optimized_precision", cm) == pytest.approx(0.45, abs=1e-15)
    assert compute("informedness", cm) == pytest.approx(1 / 3, abs=1e-15)
    assert compute("dominance", cm) == pytest.approx(-1 / 3, abs=1e-15)
    assert compute("mprecision", cm) == pytest.approx(0.75, abs=1e-15)
    assert compute("maurpc", cm) == pytest.approx(0.625, abs=1e-15)
    assert compute("aurpc", cm) == pytest.approx(7 / 12, abs=1e-15)
    assert compute("ac_score", cm) == pytest.approx(0.625, abs=1e-15)


@given(confusion_matrices(k_min=2, k_max=2))
def test_optimized_precision_is_blind_to_which_class_is_positive(cm: np.ndarray) -> None:
    """Seed 000, p1: OP is invariant under exchanging TP with TN and FN with FP (its balance term is |TNR − TPR|),
    never above accuracy, and equal to accuracy exactly when TPR = TNR."""
    op = compute("optimized_precision", cm)
    assert compute("optimized_precision", _swap(cm)) == pytest.approx(op, nan_ok=True, abs=1e-12)
    assert compute("optimized_precision", cm, positive=0) == pytest.approx(op, nan_ok=True, abs=1e-12)
    if not math.isnan(op):
        accuracy = compute("accuracy", cm)
        assert op <= accuracy + 1e-12
        balanced = math.isclose(compute("tpr", cm), compute("tnr", cm), abs_tol=1e-12)
        assert math.isclose(op, accuracy, abs_tol=1e-12) == balanced


@given(confusion_matrices(k_min=2, k_max=2))
def test_dominance_and_informedness_laws(cm: np.ndarray) -> None:
    """Dominance lies in [−1, 1] and flips sign when the classes swap roles (seed 000, p1); informedness is
    2·balanced accuracy − 1, in [−1, 1], and the same whichever class is positive."""
    dom = compute("dominance", cm)
    assert -1 <= dom <= 1
    assert compute("dominance", _swap(cm)) == pytest.approx(-dom, abs=1e-12)
    inf = compute("informedness", cm)
    assert -1 <= inf <= 1
    assert inf == pytest.approx(2 * compute("balanced_accuracy", cm) - 1, abs=1e-12)
    assert compute("informedness", _swap(cm)) == pytest.approx(inf, abs=1e-12)


@given(confusion_matrices(k_min=2, k_max=2))
def test_ac_score_is_the_most_conservative_mean(cm: np.ndarray) -> None:
    """Seed 002: AC-score ≤ G-mean ≤ balanced accuracy (equal iff TPR = TNR), symmetric in the two classes,
    and 0 as soon as one class rate is 0."""
    ac, g, ba = compute("ac_score", cm), compute("gmean", cm), compute("balanced_accuracy", cm)
    assert ac <= g + 1e-12 <= ba + 2e-12
    assert compute("ac_score", _swap(cm)) == pytest.approx(ac, abs=1e-12)
    if compute("tpr", cm) == 0 or compute("tnr", cm) == 0:
        assert ac == 0.0
    if math.isclose(compute("tpr", cm), compute("tnr", cm), abs_tol=1e-12):
        assert ac == pytest.approx(ba, abs=1e-12)


@given(confusion_matrices(k_min=2, k_max=2))
def test_m_versions_equal_the_plain_ones_on_a_balanced_test_set(cm: np.ndarray) -> None:
    """Seed 004: on a test set with as many positives as negatives mPrecision is Precision and mAURPC is AURPC;
    mPrecision lies in [0, 1]."""
    positives, negatives = cm[1].sum(), cm[0].sum()
    balanced = np.vstack([cm[0] * positives, cm[1] * negatives])  # both rows now hold P·N samples
    assert compute("mprecision", balanced) == pytest.approx(compute("precision", balanced), nan_ok=True)
    assert compute("maurpc", balanced) == pytest.approx(compute("aurpc", balanced), nan_ok=True)
    m = compute("mprecision", cm)
    assert math.isnan(m) or 0 <= m <= 1


def test_rates_that_cancel_give_nan_not_a_number() -> None:
    """OP with TPR + TNR = 0, mPrecision with TPR + FPR = 0: undefined, so NaN (the package's 0/0 policy)."""
    assert math.isnan(compute("optimized_precision", [[0, 5], [5, 0]]))
    assert math.isnan(compute("mprecision", [[5, 0], [5, 0]]))
    assert math.isnan(compute("maurpc", [[5, 0], [5, 0]]))
    assert compute("ac_score", [[0, 5], [5, 0]]) == 0.0  # the harmonic mean's limit with a zero rate


# -- multi-class: AUROC-OVA/OVO, nAUROC-OVA, AURPC-OVA, mAURPC-OVA, Hölder p = 0.5 ----------------------------


def _lambda(c: int) -> float:
    """Seed 004, Section 4: λ_C = (C − 2)/(2C), AUROC-OVA's floor when two classes hold n/2 points each."""
    return (c - 2) / (2 * c)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", [2, 3, 4, 6])
def test_multiclass_metrics_equal_library_values(seed: int, k: int) -> None:
    """auroc_ova, auroc_ovo, nauroc_ova, aurpc_ova, maurpc_ova and holder(p=0.5) equal scikit-learn's ROC AUC
    (one-vs-rest, one-vs-one on one-hot predictions), its macro precision and recall (plain and with balanced
    sample weights) and scipy's power mean."""
    cm = _random_cm(seed * 7 + k, k)
    truth, pred = _labels(cm)
    classes = list(range(k))
    onehot_pred = label_binarize(pred, classes=classes).astype(float)
    onehot_true = label_binarize(truth, classes=classes)
    if k == 2:  # label_binarize gives one column for two classes
        onehot_pred = np.column_stack([1 - onehot_pred[:, 0], onehot_pred[:, 0]])
        onehot_true = np.column_stack([1 - onehot_true[:, 0], onehot_true[:, 0]])
    auroc_ova = skm.roc_auc_score(onehot_true, onehot_pred, average="macro")
    macro_recall = skm.recall_score(truth, pred, average="macro")
    weights = _balanced_weights(truth)
    expected = {
        "auroc_ova": auroc_ova,
        "nauroc_ova": (auroc_ova - _lambda(k)) / (1 - _lambda(k)),
        "aurpc_ova": (skm.precision_score(truth, pred, average="macro") + macro_recall) / 2,
        "maurpc_ova": (skm.precision_score(truth, pred, average="macro", sample_weight=weights) + macro_recall) / 2,
        "holder": stats.pmean(skm.recall_score(truth, pred, average=None), 0.5),
    }
    if k > 2:  # scikit-learn's one-vs-one AUC (Hand & Till) is defined for three or more classes
        expected["auroc_ovo"] = skm.roc_auc_score(truth, onehot_pred, multi_class="ovo", labels=classes)
    for name, value in expected.items():
        got = compute(name, cm, **({"p": 0.5} if name == "holder" else {}))
        assert _close(got, value), (name, k, got, value)


@pytest.mark.parametrize("c", [3, 4, 5, 8])
def test_nauroc_ova_is_zero_at_its_floor_and_one_when_perfect(c: int) -> None:
    """Seed 004: nAUROC-OVA reads 0 where AUROC-OVA sits at λ_C = (C−2)/(2C) (two classes of n/2 points, each
    predicted as the other, the rest vanishingly rare) and 1 for the perfect classifier, whatever C."""
    floor = np.zeros((c, c))
    floor[0, 1] = floor[1, 0] = 1e12
    floor[2:, 0] = 1  # the other classes are present, with one point each, all misclassified
    assert compute("auroc_ova", floor) == pytest.approx(_lambda(c), abs=1e-9)
    assert compute("nauroc_ova", floor) == pytest.approx(0.0, abs=1e-9)
    assert compute("nauroc_ova", np.eye(c) * 7) == 1.0


def test_nauroc_ova_worked_three_class_example() -> None:
    """By hand, seed 004 eq. 13 on [[8,2,0],[1,6,3],[0,0,10]]: r = (0.8, 0.6, 1), FP_i = k_i − m_ii = (1, 2, 3),
    n − n_i = 20, so ρ_a = (1.75 + 1.5 + 1.85)/6 = 0.85; λ_3 = 1/6; nAUROC-OVA = (0.85 − 1/6)/(5/6) = 0.82."""
    cm = [[8, 2, 0], [1, 6, 3], [0, 0, 10]]
    assert compute("auroc_ova", cm) == pytest.approx(0.85, abs=1e-15)
    assert compute("nauroc_ova", cm) == pytest.approx(0.82, abs=1e-15)


@given(confusion_matrices(k_min=2, k_max=6))
def test_m_aurpc_ova_equals_aurpc_ova_on_a_balanced_test_set(cm: np.ndarray) -> None:
    """Seed 004, Definition 7: with equal class sizes mAURPC-OVA is AURPC-OVA; both lie in [0, 1] (Condition 2)."""
    sizes = cm.sum(axis=1)
    balanced = cm * (np.prod(sizes) // sizes)[:, None]  # every row now holds Π n_j samples
    assert compute("maurpc_ova", balanced) == pytest.approx(compute("aurpc_ova", balanced), nan_ok=True)
    for name in ("maurpc_ova", "aurpc_ova", "nauroc_ova"):
        value = compute(name, cm)
        assert math.isnan(value) or -1e-12 <= value <= 1 + 1e-12, name


@given(confusion_matrices(k_min=2, k_max=6))
def test_holder_half_lies_between_the_geometric_and_arithmetic_means(cm: np.ndarray) -> None:
    """Power-mean inequality (seed 001): min ≤ H ≤ G ≤ M_0.5 ≤ A ≤ max, and M_p is the named mean at p = −1, 0, 1."""
    values = [compute(name, cm) for name in ("min_recall", "hmean", "gmean")]
    values += [compute("holder", cm, p=0.5), compute("acsa", cm), compute("max_recall", cm)]
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(values)), values
    for p, name in ((-1.0, "hmean"), (0.0, "gmean"), (1.0, "acsa"), (-math.inf, "min_recall"),
                    (math.inf, "max_recall")):
        assert compute("holder", cm, p=p) == pytest.approx(compute(name, cm), abs=1e-12)


def test_holder_half_worked_example() -> None:
    """By hand: recalls 0.25 and 1 give M_0.5 = ((0.5 + 1)/2)² = 0.5625 (and 0.25, 1 are its bounds)."""
    cm = [[1, 3], [0, 4]]
    assert compute("holder", cm, p=0.5) == pytest.approx(0.5625, abs=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compute("holder", cm, p=0.5) == stats.pmean([0.25, 1.0], 0.5)
