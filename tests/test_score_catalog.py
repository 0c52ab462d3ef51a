"""The score metrics' catalog rows state facts that hold: Condition 1 by reweighting the classes (replicating
their samples), Condition 2 by the worst tallies at several K, and the table stays apart from the confusion one.
Bad input raises a clear error and nothing is computed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn import metrics as skm

from streammon.metrics import catalog, compute, compute_scores, names, score_tally, spec
from streammon.metrics.score_bins import tally

SCORE_NAMES = ("roc_auc", "average_precision", "brier", "log_loss", "ece")
# name: (Condition 1, Condition 2, Condition 3, higher is better) — METRICS.md "Scores" and score_specs.py.
FACTS = {
    "roc_auc": (True, True, True, True),
    "average_precision": (False, False, None, True),
    "brier": (False, False, None, False),
    "log_loss": (False, True, None, False),
    "ece": (False, True, None, False),
}


def _data(seed: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    z = rng.normal(size=(n, k))
    z[np.arange(n), y] += 1.0
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    return y, (p[:, 1] if k == 2 else p)


def _replicated(y: np.ndarray, s: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each sample of class c repeated times[c] times: the class-conditional score distributions are kept and
    only the class mix changes (METRICS.md, Condition 1)."""
    reps = times[y]
    return np.repeat(y, reps), np.repeat(s, reps, axis=0)


def test_the_score_table_is_apart_from_the_confusion_table() -> None:
    """catalog() keeps its 31 confusion metrics; catalog("scores") holds the five score metrics; spec finds both."""
    assert len(catalog()) == len(names()) == 31 and all(s.needs == "confusion" for s in catalog().values())
    assert tuple(catalog("scores")) == names("scores") == SCORE_NAMES
    assert not set(catalog()) & set(catalog("scores"))
    for name in SCORE_NAMES:
        row = spec(name)
        assert row.needs == "scores" and row.sources and row.seed == ""
        assert (row.condition1, row.condition2, row.condition3, row.higher_is_better) == FACTS[name]
    assert dict(spec("roc_auc").params) == {"multi_class": "ovo"}
    with pytest.raises(ValueError, match="needs must be one of"):
        catalog("probabilities")


def test_each_kind_refuses_the_other_input() -> None:
    """A score metric refuses a confusion matrix and a confusion metric a score tally, naming the right call."""
    t = score_tally(np.array([0, 1]), np.array([0.2, 0.8]), 2)
    with pytest.raises(ValueError, match=r"compute_scores\('roc_auc', tally\)"):
        compute("roc_auc", [[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="reads a confusion matrix, not scores"):
        compute_scores("acsa", t)
    with pytest.raises(TypeError, match="use evaluate_scores"):
        spec("brier").evaluate(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="use evaluate"):
        spec("acsa").evaluate_scores(t)
    assert spec("brier").evaluate_scores(t) == compute_scores("brier", t) == pytest.approx(0.04)


@pytest.mark.parametrize("k", [2, 3, 6])
def test_condition1_facts_hold_under_class_replication(k: int) -> None:
    """Replicating each class's samples (a pure class-mix change): binary ROC AUC and Hand & Till's one-vs-one
    do not move, as the catalog states, in ours and scikit-learn's; every row stated not invariant moves, and
    its value at the original mix (priors) is recovered from the replicated window."""
    y, s = _data(k, k, 400)
    times = np.array([1, 5, 2, 7, 1, 3][:k])
    y2, s2 = _replicated(y, s, times)
    before, after = tally(y, s, k), tally(y2, s2, k)
    mix = np.bincount(y, minlength=k) / len(y)
    for name in SCORE_NAMES:
        invariant = spec(name).satisfies_condition1(k=k)
        a, b = compute_scores(name, before), compute_scores(name, after)
        assert invariant is FACTS[name][0]
        if invariant:
            assert a == pytest.approx(b, abs=1e-12), name
        else:
            assert abs(a - b) > 1e-7, name
        assert compute_scores(name, after, priors=mix) == pytest.approx(a, abs=1e-9), name
    if k == 2:
        assert skm.roc_auc_score(y, s) == pytest.approx(skm.roc_auc_score(y2, s2), abs=1e-12)
    else:
        assert skm.roc_auc_score(y, s, multi_class="ovo") == pytest.approx(
            skm.roc_auc_score(y2, s2, multi_class="ovo"), abs=1e-12)
        ovr = spec("roc_auc").satisfies_condition1({"multi_class": "ovr"}, k=k)
        assert ovr is False
        assert abs(compute_scores("roc_auc", before, multi_class="ovr")
                   - compute_scores("roc_auc", after, multi_class="ovr")) > 1e-4


def test_roc_auc_at_any_mix_equals_the_read_value_binary_and_ovo() -> None:
    """Condition 1 by construction: priors= leaves binary ROC AUC and Hand & Till's M exactly as read."""
    rng = np.random.default_rng(1)
    for k in (2, 3, 10):
        y, s = _data(k + 20, k, 600)
        t = tally(y, s, k)
        for _ in range(5):
            assert compute_scores("roc_auc", t, priors=rng.dirichlet(np.ones(k))) == compute_scores("roc_auc", t)


def _worst(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every sample certain of a wrong class (class c's samples give class c+1 probability 1): the worst
    calibration."""
    y = np.repeat(np.arange(k), 5)
    p = np.eye(k)[(y + 1) % k]
    return y, (p[:, 1] if k == 2 else p)


def test_condition2_bounds_at_several_k() -> None:
    """The worst ranking reads 0 for ROC AUC; the worst calibration 1 for ECE and −ln(1e-15) for log loss at
    every K (Condition 2); the Brier score's worst is 1 at K = 2 and 2 at K > 2 (scikit-learn's binary form:
    not Condition 2)."""
    for k in (2, 3, 5, 10):
        t = tally(*_worst(k), k)
        y = np.repeat(np.arange(k), 5)
        backwards = (1 - np.eye(k)[y]) / (k - 1)  # each class's own score lowest on its own samples
        ranked = tally(y, backwards[:, 1] if k == 2 else backwards, k)
        assert compute_scores("roc_auc", ranked) == pytest.approx(0.0, abs=1e-12)
        assert compute_scores("roc_auc", ranked, multi_class="ovr") == pytest.approx(0.0, abs=1e-12)
        assert compute_scores("ece", t) == pytest.approx(1.0)
        assert compute_scores("log_loss", t) == pytest.approx(-math.log(1e-15), rel=1e-4)  # 1 − 1e-15 rounds
        assert compute_scores("brier", t) == pytest.approx(1.0 if k == 2 else 2.0)
        perfect = tally(np.arange(k), np.eye(k)[:, 1] if k == 2 else np.eye(k), k)
        assert compute_scores("roc_auc", perfect) == 1.0 and compute_scores("brier", perfect) == 0.0


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda t: compute_scores("roc_auc", t, multi_class="ova"), ValueError, "must be one of .'ovo', 'ovr'."),
    (lambda t: compute_scores("roc_auc", t, average="macro"), TypeError, "unknown parameter"),
    (lambda t: compute_scores("brier", t, priors=[0.5, -0.5]), ValueError, "priors must be finite"),
    (lambda t: compute_scores("brier", t, priors=[1.0, 0.0, 0.0]), ValueError, "one weight per class"),
    (lambda t: compute_scores("log_loss", t, positive=2), ValueError, r"positive must be a class index in \[0, 2\)"),
    (lambda t: compute_scores("ece", t, positive=True), TypeError, "positive must be an int"),
    (lambda t: compute_scores("ece", t[:2]), TypeError, "tuple .hist, sums, top."),
    (lambda t: compute_scores("ece", (t[0].astype(float), t[1], t[2])), ValueError, "integer counts"),
    (lambda t: compute_scores("ece", (t[0], t[1][:, :, :2], t[2])), ValueError, "needs sums"),
    (lambda t: compute_scores("ece", (-t[0], t[1], t[2])), ValueError, "non-negative"),
    (lambda t: compute_scores("ece", (t[0].tolist(), t[1], t[2])), TypeError, "hist must be a numpy array"),
])
def test_bad_tally_or_parameters_raise_a_clear_error(call, error, message) -> None:  # type: ignore[no-untyped-def]
    """Bad parameters and malformed tallies raise an error naming the value and what was expected."""
    t = tally(np.array([0, 1, 1]), np.array([0.2, 0.9, 0.4]), 2)
    snapshot = [part.copy() for part in t]
    with pytest.raises(error, match=message):
        call(t)
    assert all(np.array_equal(a, b) for a, b in zip(t, snapshot, strict=True))  # nothing changed


@pytest.mark.parametrize(("y", "s", "k", "message"), [
    ([0, 1], [0.2, np.nan], 2, "1 NaN or infinite"),
    ([0, 1], [0.2, 1.5], 2, r"in \[0, 1\], got values from 0.2 to 1.5"),
    ([0, 3], [[0.2, 0.8], [0.5, 0.5]], 2, r"class indices in \[0, 2\)"),
    ([0, 1], [0.2, 0.8, 0.1], 2, r"shape \(2, 2\) or \(2,\)"),
    ([0, 1, 2], [0.2, 0.8, 0.1], 3, r"shape \(3, 3\)"),
    ([0, 1], [0.2, 0.8], 1, "k must be an int number of classes >= 2"),
])
def test_score_tally_refuses_bad_input(y, s, k, message) -> None:  # type: ignore[no-untyped-def]
    """score_tally checks labels, the scores' range and shape, and K, naming what was expected."""
    with pytest.raises(ValueError, match=message):
        score_tally(np.array(y), np.array(s, dtype=float), k)
    with pytest.raises(TypeError, match="int class indices"):
        score_tally(np.array([0.0, 1.0]), np.array([0.2, 0.8]), 2)


def test_docs_generator_lists_every_score_metric() -> None:
    """The metric catalog page's generated score table has a row and a section for each score metric."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs"))
    try:
        import hooks
    finally:
        sys.path.pop(0)
    page = hooks.render("<!-- generate: score-metrics -->")
    for name in SCORE_NAMES:
        assert f"| [`{name}`](#{name}) |" in page and f"### `{name}` {{#{name}}}" in page


def test_a_policy_choosing_one_vs_rest_survives_save_and_load() -> None:
    """Policy.metric_params carries roc_auc's multi_class (a string): the monitor saves and loads it."""
    import json

    import streammon

    policy = streammon.Policy(metric_params={"holder": {"p": 0.5}, "roc_auc": {"multi_class": "ovr"}})
    monitor = streammon.Monitor([streammon.Cumulative()], reference={"n": 3, "p": 1}, policy=policy)
    monitor.update("n", "p")
    loaded = streammon.Monitor.loads(monitor.dumps())
    assert json.loads(loaded.dumps())["body"]["policy"]["metric_params"]["roc_auc"] == {"multi_class": "ovr"}
    assert spec("roc_auc").satisfies_condition1(policy.params("roc_auc"), k=3) is False


def test_a_state_file_naming_only_roc_auc_loads_with_holders_default() -> None:
    """A state file whose policy names roc_auc alone (as ``Policy`` now takes it) loads, holder at its default
    p = 0.5, and reads the same Hölder mean as a fresh monitor — the schema refused it ("'holder' needs p")."""
    import json

    import streammon
    from streammon import state

    monitor = streammon.Monitor([streammon.Cumulative()], reference={"n": 3, "p": 1, "q": 1})
    monitor.update_many(["n", "p", "q", "n"], ["n", "p", "n", "q"])
    body = json.loads(monitor.dumps())["body"]
    body["policy"]["metric_params"] = {"roc_auc": {"multi_class": "ovr"}}
    loaded = streammon.Monitor.loads(state.dumps(body))
    recalls = [0.5, 1.0, 0.0]  # n: one of two right, p: right, q: wrong
    assert loaded.report().windows["cumulative"].scores["holder"] == pytest.approx(
        (sum(r ** 0.5 for r in recalls) / 3) ** 2, abs=1e-12)
    assert loaded.report().windows["cumulative"].scores["holder"] == monitor.report().windows["cumulative"].scores[
        "holder"]


def test_condition3_one_class_lost_leaves_the_others_information() -> None:
    """Class 0 entirely misranked (its own score 0 on its samples) while the others are perfect: the macro ROC
    AUC stays far above its floor 0 — Hand & Till 0.75, as scikit-learn reads it."""
    y = np.repeat(np.arange(4), 10)
    p = np.where(y[:, None] == 0, [0.0, 1 / 3, 1 / 3, 1 / 3], 0.1 * np.eye(4)[0] + 0.9 * np.eye(4)[y])
    t = tally(y, p, 4)
    assert compute_scores("roc_auc", t) == pytest.approx(0.75) == skm.roc_auc_score(y, p, multi_class="ovo")
    assert compute_scores("roc_auc", t, multi_class="ovr") == pytest.approx(skm.roc_auc_score(y, p, multi_class="ovr"))
    assert compute_scores("roc_auc", t, multi_class="ovr") > 0.5
