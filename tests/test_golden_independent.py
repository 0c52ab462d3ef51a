"""The golden exposition's numbers, recomputed without streammon: scikit-learn, imbalanced-learn, scipy, statsmodels
and the seed papers' formulas by hand.

The golden file (tests/golden/exposition.txt) was written from the code; this pins what its numbers mean. Its
monitor: reference mix legit 90 / fraud 10 (fraud, the reference minority, is the positive class); ten labelled
samples, truth 6 legit then 4 fraud, predictions 5 legit, 3 fraud, 2 legit. Cumulative window: TP = 2, FN = 2,
FP = 1, TN = 5. The last four samples (sliding_4) are all fraud: TP = 2, FN = 2.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from imblearn.metrics import geometric_mean_score, make_index_balanced_accuracy, sensitivity_specificity_support
from prometheus_client.parser import text_string_to_metric_families
from scipy import special, stats
from scipy.spatial.distance import jensenshannon
from sklearn import metrics as skm
from statsmodels.stats.proportion import proportion_confint

GOLDEN = Path(__file__).parent / "golden" / "exposition.txt"
MODEL = "fraud-model"
TRUTH = np.array(["legit"] * 6 + ["fraud"] * 4)
PRED = np.array(["legit"] * 5 + ["fraud"] * 3 + ["legit"] * 2)
REFERENCE = {"legit": 0.9, "fraud": 0.1}
SIZES = Counter(TRUTH.tolist())  # n_y
# f_π = f(reweight(M, π)): every sample of class y weighs π_y · n / n_y (legit 0.9·10/6, fraud 0.1·10/4).
AT_REFERENCE = np.array([REFERENCE[y] * len(TRUTH) / SIZES[y] for y in TRUTH])


def _golden(family: str, window: str | None = None, **labels: str) -> float:
    """The one value of ``family`` with these labels in the golden file."""
    wanted = {"model": MODEL, **labels, **({"window": window} if window else {})}
    found = [s.value for f in text_string_to_metric_families(GOLDEN.read_text()) for s in f.samples
             if s.name == family and s.labels == wanted]
    assert len(found) == 1, (family, wanted, found)
    return float(found[0])


def _recall(cls: str, weights: np.ndarray | None = None) -> float:
    return float(skm.recall_score(TRUTH, PRED, pos_label=cls, sample_weight=weights))


def _precision(cls: str, weights: np.ndarray | None = None) -> float:
    return float(skm.precision_score(TRUTH, PRED, pos_label=cls, sample_weight=weights))


def _op(weights: np.ndarray | None) -> float:
    """Seed 000, eq. 1: accuracy − |TNR − TPR|/(TNR + TPR)."""
    tpr, tnr = _recall("fraud", weights), _recall("legit", weights)
    return float(skm.accuracy_score(TRUTH, PRED, sample_weight=weights)) - abs(tnr - tpr) / (tnr + tpr)


def _hmnc(weights: np.ndarray) -> float:
    """Seed 003, eq. 11, from the (weighted) cells: TP·TN·n/((TP+TN)·P·N)."""
    w = weights
    tp = w[(TRUTH == "fraud") & (PRED == "fraud")].sum()
    tn = w[(TRUTH == "legit") & (PRED == "legit")].sum()
    p, n = w[TRUTH == "fraud"].sum(), w[TRUTH == "legit"].sum()
    return float(tp * tn * (p + n) / ((tp + tn) * p * n))


def test_cumulative_condition1_scores() -> None:
    """streammon_score (cumulative) equals scikit-learn / imbalanced-learn / scipy on the ten labelled samples."""
    tpr, tnr = _recall("fraud"), _recall("legit")
    recalls = [tnr, tpr]
    sens, spec, _ = sensitivity_specificity_support(TRUTH, PRED, pos_label="fraud", average="binary")
    iba = make_index_balanced_accuracy(alpha=0.05, squared=False)(geometric_mean_score)
    balanced = np.array([len(TRUTH) / (2 * SIZES[y]) for y in TRUTH])
    m_precision = _precision("fraud", balanced)
    expected = {
        "tpr": tpr,
        "tnr": tnr,
        "recall": tpr,
        "balanced_accuracy": skm.balanced_accuracy_score(TRUTH, PRED),
        "informedness": skm.balanced_accuracy_score(TRUTH, PRED, adjusted=True),
        "dominance": sens - spec,
        "iba": iba(TRUTH, PRED, pos_label="fraud", average="binary"),
        "ac_score": stats.hmean(recalls),
        "mprecision": m_precision,
        "maurpc": (tpr + m_precision) / 2,
        "acsa": skm.balanced_accuracy_score(TRUTH, PRED),
        "gmean": geometric_mean_score(TRUTH, PRED, average="multiclass"),
        "hmean": stats.hmean(recalls),
        "min_recall": min(recalls),
        "max_recall": max(recalls),
        "holder": stats.pmean(recalls, 0.5),  # the report policy's default exponent
        "auroc_ovo": skm.roc_auc_score(TRUTH == "fraud", PRED == "fraud"),
        "maurpc_ova": (skm.precision_score(TRUTH, PRED, average="macro", sample_weight=balanced)
                       + skm.balanced_accuracy_score(TRUTH, PRED)) / 2,
    }
    for name, value in expected.items():
        assert _golden("streammon_score", "cumulative", metric=name) == pytest.approx(value, abs=1e-12), name
    assert _golden("streammon_score", "cumulative", metric="informedness") == pytest.approx(1 / 3, abs=1e-12)


def test_cumulative_scores_at_the_reference_mix_and_their_distortion() -> None:
    """streammon_corrected_score equals each score computed with sample weights that restore the reference mix,
    and streammon_distortion (type1) is the plain score minus that."""
    w = AT_REFERENCE
    corrected = {
        "npv": _precision("legit", w),
        "precision": _precision("fraud", w),
        "f1": skm.f1_score(TRUTH, PRED, pos_label="fraud", sample_weight=w),
        "optimized_precision": _op(w),
        "hmnc": _hmnc(w),
        "aurpc": (_recall("fraud", w) + _precision("fraud", w)) / 2,
        "auroc_ova": skm.roc_auc_score(TRUTH == "fraud", PRED == "fraud", sample_weight=w),
        "nauroc_ova": skm.roc_auc_score(TRUTH == "fraud", PRED == "fraud", sample_weight=w),  # λ_2 = 0
        "aurpc_ova": (skm.precision_score(TRUTH, PRED, average="macro", sample_weight=w)
                      + skm.recall_score(TRUTH, PRED, average="macro", sample_weight=w)) / 2,
        "accuracy": skm.accuracy_score(TRUTH, PRED, sample_weight=w),
        "mcc": skm.matthews_corrcoef(TRUTH, PRED, sample_weight=w),
        "kappa": skm.cohen_kappa_score(TRUTH, PRED, sample_weight=w),
        "macro_f1": skm.f1_score(TRUTH, PRED, average="macro", sample_weight=w),
    }
    plain = {
        "npv": _precision("legit"),
        "precision": _precision("fraud"),
        "f1": skm.f1_score(TRUTH, PRED, pos_label="fraud"),
        "optimized_precision": _op(None),
        "accuracy": skm.accuracy_score(TRUTH, PRED),
        "mcc": skm.matthews_corrcoef(TRUTH, PRED),
        "kappa": skm.cohen_kappa_score(TRUTH, PRED),
    }
    for name, value in corrected.items():
        assert _golden("streammon_corrected_score", "cumulative", metric=name) == pytest.approx(value, abs=1e-12), name
    for name, value in plain.items():
        distortion = _golden("streammon_distortion", "cumulative", metric=name, type="type1")
        assert distortion == pytest.approx(value - corrected[name], abs=1e-12), name
    # by hand: OP at the reference mix is 0.8 − 0.25, HMNC is 0.5·7.5·10/(8·1·9)
    assert _golden("streammon_corrected_score", "cumulative", metric="optimized_precision") == pytest.approx(0.55)
    assert _golden("streammon_corrected_score", "cumulative", metric="hmnc") == pytest.approx(37.5 / 72)


def test_mix_numbers() -> None:
    """Class priors, the reference IR (90/10), RRT (6 legit / 4 fraud) and the Jensen-Shannon divergence (bits)
    between window and reference mix equal their definitions (seed 004 Definitions 1-2; scipy)."""
    assert _golden("streammon_class_prior", "cumulative", **{"class": "legit"}) == 0.6
    assert _golden("streammon_imbalance_ratio") == 9.0
    assert _golden("streammon_rrt", "cumulative") == 1.5
    assert _golden("streammon_rrt", "sliding_4") == 0.0  # no reference-majority sample in the last four
    js = jensenshannon([0.6, 0.4], [0.9, 0.1], base=2) ** 2
    assert _golden("streammon_prior_shift", "cumulative") == pytest.approx(js, abs=1e-12)
    js_last_four = jensenshannon([0, 1], [0.9, 0.1], base=2) ** 2
    assert _golden("streammon_prior_shift", "sliding_4") == pytest.approx(js_last_four, abs=1e-12)


def test_interval_numbers() -> None:
    """Recall intervals are statsmodels' Wilson intervals; the minimum-recall interval is the minimum of the
    per-class Wilson bounds at the Bonferroni level 1 − 0.05/2."""
    for cls, (k, n) in {"legit": (5, 6), "fraud": (2, 4)}.items():
        low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert _golden("streammon_recall_interval", "cumulative", bound="low", **{"class": cls}) == pytest.approx(low)
        assert _golden("streammon_recall_interval", "cumulative", bound="high", **{"class": cls}) == pytest.approx(high)
    bounds = [proportion_confint(k, n, alpha=0.025, method="wilson") for k, n in ((5, 6), (2, 4))]
    low = _golden("streammon_score_interval", "cumulative", bound="low", metric="min_recall")
    high = _golden("streammon_score_interval", "cumulative", bound="high", metric="min_recall")
    assert (low, high) == pytest.approx((min(b[0] for b in bounds), min(b[1] for b in bounds)), abs=1e-12)


@pytest.mark.parametrize(("window", "correct", "totals"), [("cumulative", [5, 2], [6, 4]), ("sliding_4", [2], [4])])
def test_acsa_and_gmean_interval_numbers(window: str, correct: list[int], totals: list[int]) -> None:
    """ACSA: statsmodels' Wilson interval of the mean recall at the effective size n_eff = μ(1 − μ)/V − 1 of
    the Jeffreys posterior Beta(k + ½, n − k + ½) of the recalls; G-mean: exp(E ± z·√Var) cut at 1, E and Var the
    posterior moments of the mean log recall (scipy's digamma and trigamma)."""
    k, n = np.array(correct, float), np.array(totals, float)
    a, b, size = k + 0.5, n - k + 0.5, len(k)
    mu = float(np.mean(a / (a + b)))
    n_eff = mu * (1 - mu) / (float(np.sum(a * b / ((a + b) ** 2 * (a + b + 1)))) / size**2) - 1
    acsa = proportion_confint(float(np.mean(k / n)) * n_eff, n_eff, alpha=0.05, method="wilson")
    mean = float(np.mean(special.digamma(a) - special.digamma(a + b)))
    sd = math.sqrt(float(np.sum(special.polygamma(1, a) - special.polygamma(1, a + b)))) / size
    z = stats.norm.ppf(0.975)
    gmean = (math.exp(mean - z * sd), min(1.0, math.exp(mean + z * sd)))
    for metric, expected in (("acsa", acsa), ("gmean", gmean)):
        got = tuple(_golden("streammon_score_interval", window, bound=b, metric=metric) for b in ("low", "high"))
        assert got == pytest.approx(expected, abs=1e-9), metric


def test_sliding_window_with_one_class() -> None:
    """With only fraud in the last four samples, TPR is 2/4 and every index that needs the negative class is NaN."""
    assert _golden("streammon_score", "sliding_4", metric="tpr") == 0.5
    assert _golden("streammon_score", "sliding_4", metric="acsa") == 0.5  # over the one class present
    for name in ("tnr", "balanced_accuracy", "informedness", "dominance", "mprecision", "maurpc"):
        assert math.isnan(_golden("streammon_score", "sliding_4", metric=name)), name
