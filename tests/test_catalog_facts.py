"""The catalog's 31 rows state the facts of shared/design/METRICS.md and seed 004, restated here independently."""

from __future__ import annotations

import math

import numpy as np
import pytest

from streammon.metrics import catalog, compute, specs
from streammon.metrics.confusion import Confusion

B, PC, M = "binary", "per_class", "multiclass"
Y, N, U = True, False, None  # yes, no, not established / does not apply

# name: (kind, Condition 1, Condition 2, Condition 3, higher is better, seeds (first = the defining one)).
# Condition columns: METRICS.md's binary table (C1 only) and multi-class table (C1, C2, C3); seed 004 Figure 6.
FACTS: dict[str, tuple[str, bool | None, bool | None, bool | None, bool | None, tuple[str, ...]]] = {
    "tpr": (B, Y, U, U, Y, ("004", "000", "002", "003")),
    "tnr": (B, Y, U, U, Y, ("000", "002", "003")),
    "npv": (B, N, U, U, Y, ("002",)),
    "f1": (B, N, U, U, Y, ("002", "003")),
    "balanced_accuracy": (B, Y, U, U, Y, ("000", "002", "004")),
    "informedness": (B, Y, U, U, Y, ("002",)),
    "dominance": (B, Y, U, U, U, ("000",)),  # a signed balance, not a quality: neither direction is better
    "iba": (B, Y, U, U, Y, ("000",)),
    "optimized_precision": (B, N, U, U, Y, ("000",)),
    "ac_score": (B, Y, U, U, Y, ("002",)),
    "hmnc": (B, N, U, U, Y, ("003",)),
    "aurpc": (B, N, U, U, Y, ("004",)),
    "mprecision": (B, Y, U, U, Y, ("004",)),
    "maurpc": (B, Y, U, U, Y, ("004",)),
    "recall": (PC, Y, Y, U, Y, ("001", "004")),
    "precision": (PC, N, Y, U, Y, ("004", "001", "003")),
    "acsa": (M, Y, Y, Y, Y, ("001", "004")),
    "gmean": (M, Y, Y, N, Y, ("004", "000", "001", "003")),
    "hmean": (M, Y, Y, N, Y, ("001",)),
    "min_recall": (M, Y, Y, N, Y, ("001",)),
    "max_recall": (M, Y, Y, Y, Y, ("001",)),
    "holder": (M, Y, Y, U, Y, ("001",)),  # Condition 3 iff p > 0: decided per parameter
    "auroc_ovo": (M, Y, N, U, Y, ("004",)),
    "auroc_ova": (M, N, N, U, Y, ("004",)),
    "nauroc_ova": (M, N, Y, U, Y, ("004",)),
    "aurpc_ova": (M, N, Y, U, Y, ("004",)),
    "maurpc_ova": (M, Y, Y, Y, Y, ("004",)),
    "accuracy": (M, N, Y, Y, Y, ("001", "003")),
    "mcc": (M, N, U, U, Y, ("002", "003")),
    "kappa": (M, N, U, U, Y, ("003",)),
    "macro_f1": (M, N, U, U, Y, ("002",)),
}

# The Hölder exponent of each Hölder-family score (seed 001): a-mean 1, g-mean 0, h-mean −1, min −∞, max +∞.
HOLDER_P = {"acsa": 1.0, "gmean": 0.0, "hmean": -1.0, "min_recall": -math.inf, "max_recall": math.inf}

# Parameters and their defaults (METRICS.md: iba α = 0.05 with M = G-mean, seed 000; holder's p has none).
PARAMS = {"iba": {"alpha": 0.05, "squared": False}, "holder": {"p": specs.REQUIRED}}

# Floors that move with C (seed 004): Lemma 2 for AUROC-OVO, λ_C of Section 4 for AUROC-OVA.
FLOORS = {"auroc_ovo": lambda c: (c - 2) / (2 * (c - 1)), "auroc_ova": lambda c: (c - 2) / (2 * c)}


def _fresh_rows() -> dict[str, specs.MetricSpec]:
    """The rows built anew (the catalog itself is built once, at import; mutation testing needs a fresh build)."""
    return {row.name: row for row in specs._specs()}


def test_the_catalog_has_the_31_documented_metrics_in_order() -> None:
    """The catalog names exactly METRICS.md's 31 canonical metrics, in the table's order."""
    assert tuple(_fresh_rows()) == tuple(FACTS) == tuple(catalog())


@pytest.mark.parametrize("name", list(FACTS))
def test_each_row_states_the_documented_facts(name: str) -> None:
    """Kind, Conditions 1/2/3, direction and seeds of each row are METRICS.md's, field by named field."""
    row = _fresh_rows()[name]
    kind, c1, c2, c3, better, seeds = FACTS[name]
    assert row.kind == kind
    assert (row.condition1, row.condition2, row.condition3) == (c1, c2, c3)
    assert row.higher_is_better is better
    assert row.seeds == seeds and row.seed == seeds[0]
    assert row.binary_only is (kind == B)
    assert row.holder_p == HOLDER_P.get(name)
    assert dict(row.params) == PARAMS.get(name, {})


@pytest.mark.parametrize("name", list(FACTS))
def test_each_row_computes_the_metric_it_names_and_has_the_documented_floor(name: str) -> None:
    """A row's function is the catalog's metric of that name, and only AUROC-OVO/OVA carry a C-dependent floor."""
    row = _fresh_rows()[name]
    cm = np.array([[5, 1], [2, 2]])
    params = {"p": 0.5} if name == "holder" else {}
    got = row.evaluate(Confusion.of(cm), positive=1, **params)
    want = compute(name, cm, **params)
    assert got == want or (math.isnan(got) and math.isnan(want))
    floor = FLOORS.get(name)
    if floor is None:
        assert row.lower_bound is None
    else:
        assert row.lower_bound is not None
        assert [row.lower_bound(c) for c in range(2, 9)] == pytest.approx([floor(c) for c in range(2, 9)])


def test_rows_take_named_fields_only() -> None:
    """A catalog row cannot be written with positional facts: every field must be named."""
    with pytest.raises(TypeError):
        specs.MetricSpec("tpr", "True positive rate", "TP/(TP+FN)", B, True, None, None, True, ("004",), len)


def test_holder_exponent_and_condition3_follow_the_parameter() -> None:
    """holder's exponent is its parameter p and it keeps Condition 3 iff p > 0; other rows report their fixed facts."""
    holder = catalog()["holder"]
    assert holder.hoelder_exponent({"p": -2}) == -2.0
    assert holder.satisfies_condition3({"p": 0.5}) is True
    assert holder.satisfies_condition3({"p": 0.0}) is False
    assert catalog()["gmean"].hoelder_exponent() == 0.0
    assert catalog()["precision"].hoelder_exponent() is None
    assert catalog()["acsa"].satisfies_condition3() is True
    assert catalog()["gmean"].satisfies_condition3() is False
    assert catalog()["tpr"].satisfies_condition3() is None
