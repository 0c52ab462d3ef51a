"""The catalog reproduces the seed papers: worked tables, lemmas, theorems and bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given

from streammon.metrics import catalog, competitiveness, compute, holder_bounds, holder_mean
from tests.strategies import confusion_matrices

# Seed 003, Tables 1-3: (P, N) -> rows of (TP, TN, HMNC, ACC, BACC, MCC, F1, G-mean, Kappa); majority positive.
SEED003_TABLES = {
    (1000, 10): [
        (500, 5, 0.5, 0.5, 0.5, 0, 0.66, 0.5, 0),
        (700, 5, 0.5, 0.7, 0.6, 0.04, 0.82, 0.59, 0.01),
        (700, 7, 0.7, 0.7, 0.7, 0.09, 0.82, 0.7, 0.03),
        (500, 7, 0.7, 0.5, 0.6, 0.04, 0.67, 0.59, 0.01),
    ],
    (1000, 100): [
        (500, 50, 0.5, 0.5, 0.5, 0, 0.65, 0.5, 0),
        (700, 50, 0.51, 0.68, 0.6, 0.12, 0.8, 0.59, 0.09),
        (700, 70, 0.7, 0.7, 0.7, 0.24, 0.81, 0.7, 0.18),
        (500, 70, 0.68, 0.52, 0.6, 0.12, 0.65, 0.59, 0.06),
    ],
    (1000, 250): [
        (500, 125, 0.5, 0.5, 0.5, 0, 0.62, 0.5, 0),
        (700, 125, 0.53, 0.66, 0.6, 0.17, 0.77, 0.59, 0.16),
        (700, 175, 0.7, 0.7, 0.7, 0.33, 0.79, 0.7, 0.3),
        (500, 175, 0.65, 0.54, 0.6, 0.16, 0.63, 0.59, 0.12),
    ],
}
SEED003_COLUMNS = ("hmnc", "accuracy", "balanced_accuracy", "mcc", "f1", "gmean", "kappa")


@pytest.mark.parametrize(("sizes", "rows"), list(SEED003_TABLES.items()))
def test_seed003_tables(sizes: tuple[int, int], rows: list[tuple[float, ...]]) -> None:
    """Seed 003's 84 worked values (two decimals) are reproduced to within their rounding."""
    positives, negatives = sizes
    for tp, tn, *values in rows:
        cm = [[tn, negatives - tn], [positives - tp, tp]]  # positive = index 1 = the majority here
        for name, value in zip(SEED003_COLUMNS, values, strict=True):
            assert abs(compute(name, cm) - value) <= 0.005 + 1e-9, (sizes, tp, tn, name)


def test_seed003_theorem_equal_rates_make_hmnc_acc_bacc_gmean_equal() -> None:
    """Seed 003's theorem: with TP/P = TN/N, HMNC, ACC, BACC and G-mean all equal that rate."""
    cm = [[70, 30], [300, 700]]  # TN/N = 70/100 = TP/P = 700/1000
    for name in ("hmnc", "accuracy", "balanced_accuracy", "gmean"):
        assert compute(name, cm) == pytest.approx(0.7)


@given(confusion_matrices(k_min=2, k_max=7))
def test_seed004_lemma2_auroc_ovo_is_linear_in_acsa(cm: np.ndarray) -> None:
    """Seed 004, Lemma 2: auroc_ovo = C/(2(C−1))·acsa + (C−2)/(2(C−1)) when every class is present."""
    c = cm.shape[0]
    expected = c / (2 * (c - 1)) * compute("acsa", cm) + (c - 2) / (2 * (c - 1))
    assert compute("auroc_ovo", cm) == pytest.approx(expected, abs=1e-12)


@given(confusion_matrices(k_min=2, k_max=2))
def test_seed004_two_class_reductions(cm: np.ndarray) -> None:
    """For K = 2: acsa, auroc_ova, auroc_ovo and nauroc_ova equal balanced accuracy; gmean is √(TPR·TNR)."""
    ba = compute("balanced_accuracy", cm)
    for name in ("acsa", "auroc_ova", "auroc_ovo", "nauroc_ova"):
        assert compute(name, cm) == pytest.approx(ba, abs=1e-12), name
    assert compute("gmean", cm) == pytest.approx(math.sqrt(compute("tpr", cm) * compute("tnr", cm)), abs=1e-12)


@given(confusion_matrices(k_min=2, k_max=2))
def test_seed004_definition5_maurpc_from_the_cells(cm: np.ndarray) -> None:
    """Seed 004, Definition 5 (eqs. 8-9), written from TP, FN, FP, TN: ζ̂ = (TP/n1)/((TP/n1) + (FP/n2)) and
    κ̂ = (TP/n1 + ζ̂)/2 with n1 = TP + FN, n2 = FP + TN; ζ̂ is undefined (NaN) when TP = FP = 0."""
    tp, fn, fp, tn = (float(x) for x in (cm[1, 1], cm[1, 0], cm[0, 1], cm[0, 0]))
    n1, n2 = tp + fn, fp + tn
    if tp == 0 and fp == 0:
        assert math.isnan(compute("mprecision", cm)) and math.isnan(compute("maurpc", cm))
        return
    m_precision = (tp / n1) / ((tp / n1) + (fp / n2))
    assert compute("mprecision", cm) == pytest.approx(m_precision, abs=1e-12)
    assert compute("maurpc", cm) == pytest.approx((tp / n1 + m_precision) / 2, abs=1e-12)


# Seed 004, Theorems 1-5 and Figure 6, restated independently of the catalog.
SEED004_FACTS = {
    # name: (Condition 1, Condition 2, Condition 3); None where the paper does not apply or decide it
    "gmean": (True, True, False),  # Thm 1.1, Thm 3.1, Thm 5
    "balanced_accuracy": (True, None, None),  # Thm 1.2 (ρ)
    "precision": (False, True, None),  # Thm 1.3 (ζ); Table 2 row 6 (Condition 2)
    "aurpc": (False, None, None),  # Thm 1.4 (κ)
    "mprecision": (True, None, None),  # Thm 2.1
    "maurpc": (True, None, None),  # Thm 2.2
    "acsa": (True, True, True),  # Thm 3.2, Thm 5
    "auroc_ovo": (True, False, None),  # Thm 3.3
    "auroc_ova": (False, False, None),  # Thm 3.4
    "aurpc_ova": (False, True, None),  # Thm 3.5
    "maurpc_ova": (True, True, True),  # Thm 4, Thm 5
    "nauroc_ova": (False, True, None),  # Section 4 normalisation; Section 5.4
    "recall": (True, True, None),  # Thm 1 / Table 2
}


@pytest.mark.parametrize(("name", "facts"), list(SEED004_FACTS.items()))
def test_catalog_conditions_agree_with_seed004(name: str, facts: tuple[bool | None, ...]) -> None:
    """The catalog's Condition 1/2/3 facts are those of seed 004's theorems and Figure 6."""
    spec = catalog()[name]
    assert (spec.condition1, spec.condition2, spec.condition3) == facts


def _one_class_collapsed(c: int, eps: float) -> np.ndarray:
    """Seed 004's set M_C(i): class 0 recalled at rate ε, the others at 1 − ε (100 000 samples a class)."""
    n = 100_000
    m = np.zeros((c, c))
    for i in range(c):
        rate = eps if i == 0 else 1 - eps
        m[i, i] = rate * n
        m[i, (i + 1) % c] = (1 - rate) * n
    return m


@pytest.mark.parametrize("c", [3, 4, 6])
def test_condition3_limits_match_theorem5(c: int) -> None:
    """Theorem 5: as ε → 0 acsa tends to (C−1)/C, maurpc_ova stays above 3(C−1)/(4C), gmean tends to 0."""
    m = _one_class_collapsed(c, 1e-100)  # gmean ~ ε^(1/C): ε must be tiny to approach the limit
    assert compute("acsa", m) == pytest.approx((c - 1) / c, abs=1e-6)
    assert compute("maurpc_ova", m) > 3 * (c - 1) / (4 * c)
    assert compute("gmean", m) < 1e-2


@pytest.mark.parametrize("name", [n for n, s in catalog().items() if s.kind == "multiclass"])
def test_condition3_facts_hold_numerically(name: str) -> None:
    """Every multi-class metric the catalog says keeps (loses) Condition 3 stays above (falls to) its floor."""
    spec = catalog()[name]
    for p in ([-1.0, 0.0, 0.5, 2.0] if name == "holder" else [None]):
        params = {} if p is None else {"p": p}
        keeps = spec.satisfies_condition3(params)
        if keeps is None:
            continue
        for c in (3, 5):
            value = compute(name, _one_class_collapsed(c, 1e-100), **params)
            if keeps:
                assert value > 0.3, (name, p, c, value)
            else:
                assert value < 1e-3, (name, p, c, value)


@pytest.mark.parametrize("name", ["auroc_ovo", "auroc_ova"])
def test_condition2_violators_have_floors_that_rise_with_c(name: str) -> None:
    """Theorem 3: the lower bounds of AUROC-OVO and AUROC-OVA depend on C; the catalog's floors are reached."""
    floor = catalog()[name].lower_bound
    assert floor is not None
    floors = [floor(c) for c in range(2, 8)]
    assert floors == sorted(floors) and floors[0] == 0 and floors[-1] > 0.3
    for c in range(2, 7):
        # the worst classifier: every class predicted as its neighbour; the two-class majority split of λ_C
        worst = np.roll(np.eye(c), 1, axis=1) * 100
        if name == "auroc_ovo":
            assert compute(name, worst) == pytest.approx(floor(c))
        else:
            two_majors = np.zeros((c, c))
            two_majors[0, 1] = two_majors[1, 0] = 1e12
            for i in range(2, c):
                two_majors[i, 0] = 1  # minorities vanishingly small, predicted as class 0
            assert compute(name, two_majors) == pytest.approx(floor(c), abs=1e-6)


@pytest.mark.parametrize("name", ["acsa", "gmean", "hmean", "min_recall", "max_recall", "aurpc_ova", "maurpc_ova",
                                  "accuracy"])
def test_condition2_keepers_span_zero_to_one_for_every_c(name: str) -> None:
    """Metrics that keep Condition 2 read 0 on the all-wrong classifier and 1 on the perfect one, for C = 2..7."""
    for c in range(2, 8):
        assert compute(name, np.roll(np.eye(c), 1, axis=1) * 10) == pytest.approx(0.0)
        assert compute(name, np.eye(c) * 10) == pytest.approx(1.0)


def test_seed001_bounds_and_examples() -> None:
    """Seed 001: S_sup = M_p(1/K, 1, …, 1); K = 2 p = 1 gives 0.75, p → 0 gives (1/K)^(1/K), p = −∞ gives 1/K."""
    assert holder_bounds(1, 2) == (0.5, 0.75)
    for k in (2, 3, 5, 10):
        low, sup = holder_bounds(0, k)
        assert low == 1 / k and sup == pytest.approx((1 / k) ** (1 / k))
        assert holder_bounds(-math.inf, k) == (1 / k, 1 / k)
        assert holder_bounds(math.inf, k)[1] == 1.0
        for p in (-3.0, -1.0, 0.0, 0.5, 1.0, 2.0):
            # the uniformly random classifier scores 1/K under every Hölder mean
            assert holder_mean([1 / k] * k, p) == pytest.approx(1 / k)
            low, sup = holder_bounds(p, k)
            assert low <= sup


def test_seed001_competitiveness_regions() -> None:
    """Below 1/K some class is worse than random; above S_sup every class beats random; between, undecided."""
    recalls_one_bad = [0.2, 0.95, 0.95]  # one class below 1/3
    for p in (-1.0, 0.0, 1.0):
        score = holder_mean(recalls_one_bad, p)
        assert competitiveness(score, p=p, k=3) in ("incompetent", "undecided")
    assert competitiveness(holder_mean([0.9, 0.8, 0.7], 0), p=0, k=3) == "competitive"
    assert competitiveness(holder_mean([0.1, 0.2, 0.3], 1), p=1, k=3) == "incompetent"
    assert competitiveness(holder_mean([0.2, 0.9, 0.9], -math.inf), p=-math.inf, k=3) == "incompetent"
