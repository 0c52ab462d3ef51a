"""The read path's shared-work evaluator equals the per-metric path, and a cached window report equals a fresh one."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from streammon import Cumulative, Monitor, Sliding
from streammon.findings.assemble import WindowCache, evaluate_view
from streammon.findings.distortion import Policy
from streammon.metrics import Confusion, catalog, reweight
from streammon.metrics.window_math import evaluate_all
from tests.shift_oracle import exact_shift_p


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


def _matrices() -> list[np.ndarray]:
    rng = np.random.default_rng(17)
    out = []
    for k in range(2, 13):
        for _ in range(12):
            m = rng.integers(0, 20, (k, k)) * (rng.random((k, k)) < 0.7)
            if rng.random() < 0.5:
                m[rng.integers(k)] = 0  # an absent class
            if rng.random() < 0.5:
                m[:, rng.integers(k)] = 0  # a class never predicted
            out.append(m)
    out += [np.zeros((2, 2), int), np.array([[0, 0], [3, 0]]), np.array([[5, 0], [0, 0]])]
    return out


# the defaults but holder (imbalanced-learn's iba), then the Hölder limits and exponents past the overflow guard
PARAMETERS = [
    {"holder": {"p": 0.5}, "iba": {"alpha": 0.1, "squared": True}},
    {"holder": {"p": 0.0}},
    {"holder": {"p": -math.inf}},
    {"holder": {"p": math.inf}},
    {"holder": {"p": -500.0}},
    {"holder": {"p": 40.0}},
]


@pytest.mark.parametrize("params", PARAMETERS, ids=["p=0.5, iba squared", "p=0", "p=-inf", "p=inf", "p=-500", "p=40"])
@pytest.mark.parametrize("reweighted", [False, True])
def test_every_metric_equals_its_own_function(reweighted: bool, params: dict[str, dict[str, Any]]) -> None:
    """On random matrices (K = 2..12, with zero rows and columns), as read and reweighted to a prior with NaN
    rows, every catalog value of ``evaluate_all`` equals ``MetricSpec.evaluate`` on ``Confusion.of`` to 1e-12,
    with the metric parameters given (Hölder exponents at the limits and past the overflow guard; iba's
    defaults and imbalanced-learn's)."""
    checked = 0
    for counts in _matrices():
        k = counts.shape[0]
        matrix = reweight(counts, np.full(k, 1 / k)) if reweighted and counts.sum() else counts
        c = Confusion.of(matrix)
        for positive in range(min(k, 2) if k == 2 else 1):
            names = [n for n, s in catalog().items() if s.applies_to(k)]
            got = evaluate_all(c, names, positive=positive, params=lambda n: params.get(n, {}))
            for name in names:
                expected = catalog()[name].evaluate(Confusion.of(matrix), positive=positive, **params.get(name, {}))
                assert _same(got[name], expected), (name, counts.tolist(), got[name], expected)
                checked += 1
    assert checked > 2000


def test_a_cached_report_equals_a_fresh_one_and_changes_with_the_counts() -> None:
    """An unchanged window returns the very same frozen report; equal to one computed without a cache; new samples,
    a new reference or a new policy compute it again."""
    monitor = Monitor([Cumulative(), Sliding(50)], reference={"a": 5, "b": 3, "c": 2})
    rng = np.random.default_rng(3)
    monitor.update_many(rng.choice(["a", "b", "c"], 300).tolist(), rng.choice(["a", "b", "c"], 300).tolist())
    first, second = monitor.report(), monitor.report()
    view = monitor._tally.view(None)
    fresh, _ = evaluate_view(view, Policy())
    for name, w in first.windows.items():
        assert second.windows[name] is w
        assert w == fresh[name] or w.to_dict() == fresh[name].to_dict()
    cache = WindowCache()
    one, _ = evaluate_view(view, Policy(), cache)
    assert evaluate_view(view, Policy(), cache)[0]["cumulative"] is not one["cumulative"]  # another Policy object
    policy = Policy()
    one, _ = evaluate_view(view, policy, cache)
    assert evaluate_view(view, policy, cache)[0]["cumulative"] is one["cumulative"]
    monitor.update("a", "b")
    third = monitor.report()
    assert third.windows["cumulative"] is not first.windows["cumulative"]
    assert third.windows["cumulative"].n == first.windows["cumulative"].n + 1


def test_a_monitor_read_again_with_nothing_new_returns_the_same_report(caplog: pytest.LogCaptureFixture) -> None:
    """A report read with nothing new since the last one is that report; a new sample, a timed window's samples
    expiring or a learned reference make a new one, equal to what a fresh monitor fed the same
    samples reports; an alert is logged once, however often the unchanged report is read."""
    from streammon import Timed

    now = [0.0]
    monitor = Monitor([Cumulative(), Timed(60, buckets=6)], warmup=100, clock=lambda: now[0])
    twin = Monitor([Cumulative(), Timed(60, buckets=6)], warmup=100, clock=lambda: now[0])
    rng = np.random.default_rng(4)
    truth = rng.choice(["a", "b", "c"], 400, p=[0.7, 0.2, 0.1]).tolist()
    preds = [t if rng.random() < 0.9 else "a" for t in truth]
    twin.update_many(truth[:150], preds[:150])  # (at time 0, as the monitor's)
    monitor.update_many(truth[:90], preds[:90])
    first = monitor.report()
    assert monitor.report() is first
    monitor.update_many(truth[90:150], preds[90:150])  # the warm-up ends: a reference is learned
    second = monitor.report()
    assert second is not first and second.reference is not None and monitor.report() is second
    now[0] = 30.0
    assert monitor.report() is second  # time passed, nothing expired
    now[0] = 95.0
    third = monitor.report()  # the timed window's samples expired
    assert third is not second and third.windows["timed_60s"].n == 0 and monitor.report() is third
    assert _same_dict(twin.report().to_dict(), third.to_dict())
    with caplog.at_level("INFO", logger="streammon.alerts"):
        monitor.update_many(["c"] * 200, ["a"] * 200)  # class c is all wrong now; its mix moved too
        fourth = monitor.report()
        for _ in range(3):
            assert monitor.report() is fourth
    raised = [r for r in caplog.records if "alert raised" in r.getMessage()]
    assert raised and len(raised) == len({(r.alert.kind, r.alert.window, r.alert.subject) for r in raised})
    assert {a.kind for a in fourth.alerts} >= {"prior_shift"}


def _window_dicts(windows: list[Any]) -> list[dict[str, Any]]:
    return [w.to_dict() for w in windows]


def test_windows_stacked_together_equal_each_alone() -> None:
    """Windows of several settings evaluated as one stack (other classes, references or none, sizes, empty and
    collapsed windows) give each the report it gets alone, field by field (to_dict, intervals included)."""
    from streammon.findings.evaluate import Setting, evaluate_window, evaluate_windows
    from streammon.findings.reference import Reference

    rng = np.random.default_rng(11)
    policy = Policy()
    for k in (1, 2, 3, 7):
        windows, settings = [], []
        for i in range(9):
            labels = tuple(f"{'abc'[i % 3]}{j}" for j in range(k))
            counts = rng.integers(0, 30, (k, k)) * (rng.random((k, k)) < 0.8)
            if i % 4 == 1:
                counts[rng.integers(k)] = 0
            if i == 5:
                counts[:] = 0
            reference = None if i % 3 == 0 else Reference.of({lab: int(rng.integers(1, 9)) for lab in labels})
            windows.append((f"w{i}", "sliding", counts))
            settings.append(Setting.of(labels, reference, None if k != 2 else 1, policy))
        together = evaluate_windows(windows, settings)
        for (name, kind, counts), setting, w in zip(windows, settings, together, strict=True):
            alone = evaluate_window(name, kind, counts, setting.labels, setting.reference,
                                    positive=setting.positive, policy=policy)
            assert _same_dict(w.to_dict(), alone.to_dict()), (k, name)


def _same_dict(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return _same(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same_dict(a[x], b[x]) for x in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(_same_dict, a, b))
    return bool(a == b)


def test_reports_of_many_monitors_equal_their_own_reports() -> None:
    """``reports`` (what the exporter calls: every model's windows in one stack) gives each monitor the report it
    gives alone."""
    from streammon.monitor import reports

    def monitors() -> list[Monitor]:
        rng = np.random.default_rng(5)
        out = []
        for i in range(6):
            m = Monitor([Cumulative(), Sliding(40)], reference={"a": 5 + i, "b": 3, "c": 2} if i % 2 else None,
                        clock=lambda: 0.0)
            m.update_many(rng.choice(["a", "b", "c"], 200 + 30 * i).tolist(),
                          rng.choice(["a", "b", "c"], 200 + 30 * i).tolist())
            out.append(m)
        return out

    together = reports(monitors())
    alone = [m.report() for m in monitors()]
    for a, b in zip(together, alone, strict=True):
        assert _same_dict(a.to_dict(), b.to_dict())


def _random_windows(rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Six windows' counts (one empty, one without class 0), their priors (one lacking the last class) and which
    have a reference."""
    counts = rng.integers(0, 50, (6, k, k)) * (rng.random((6, k, k)) < 0.6)
    counts[0] = 0
    counts[2, 0] = 0
    priors = rng.dirichlet(np.ones(k), 6)
    priors[3, -1] = 0.0
    priors /= priors.sum(axis=1, keepdims=True)
    return counts.astype(np.int64), priors, np.arange(6) % 3 > 0


def _numbers(counts: np.ndarray, priors: np.ndarray, has_reference: np.ndarray, coded: Any) -> dict[str, Any]:
    from streammon.metrics.tails import log_gammas
    from streammon.metrics.window_math import window_numbers

    k = counts.shape[1]
    keeps = np.array([catalog()[n].condition1 for n in coded.names])
    minority = np.array([-1, 0, 1, -1, -1, 0]) if k == 2 else np.full(6, -1)
    numbers = window_numbers(counts, coded, positive=1, priors=priors, has_reference=has_reference,
                             minority=minority, keeps=keeps, log_gammas=log_gammas(k))
    return {name: getattr(numbers, name) for name in numbers.__dataclass_fields__}


def test_the_scoring_loop_knows_every_catalog_metric_and_scores_others_by_their_own_function() -> None:
    """Every catalog metric has a code in the compiled loop (none falls back to its own function on the read path);
    a metric without one — as one added to the catalog after the loop would be — is scored by ``MetricSpec.evaluate``
    matrix by matrix, as read, reweighted and prior-corrected, equal to what the loop gives it."""
    from dataclasses import replace

    from streammon.metrics import compiled
    from streammon.metrics.prior import reweight_stack
    from streammon.metrics.window_math import code_metrics, score_stack

    assert set(catalog()) == set(compiled.METRICS)
    rng = np.random.default_rng(8)
    for k in (2, 3, 6):
        counts, priors, has_reference = _random_windows(rng, k)
        names = [n for n, s in catalog().items() if s.applies_to(k) and (s.kind == "multiclass" or k == 2)]
        coded = code_metrics(names, lambda n: {"p": -0.5} if n == "holder" else {})
        uncoded = replace(coded, codes=np.full(len(names), compiled.UNKNOWN), unknown=True)
        stack = np.concatenate([counts.astype(np.float64), reweight_stack(counts.astype(np.float64), priors)])
        fast = score_stack(stack, coded, positive=0)  # the windows as read, then at their priors
        slow = score_stack(stack, uncoded, positive=0)
        np.testing.assert_allclose(fast.values, slow.values, rtol=1e-12, atol=1e-12)  # (NaN where NaN)
        # window 2 lacks class 0: its mean recall is read, and NaN at a mix that has class 0 (rates unknown there)
        acsa = fast.values[names.index("acsa")]
        assert not np.isnan(acsa[2]) and np.isnan(acsa[6 + 2])
        fast_numbers = _numbers(counts, priors, has_reference, coded)
        slow_numbers = _numbers(counts, priors, has_reference, uncoded)
        for name in ("scores", "corrected", "distortion"):
            np.testing.assert_allclose(fast_numbers[name], slow_numbers[name], rtol=1e-12, atol=1e-12)


_UNCOMPILED = """
import pickle, sys
import numpy as np
from tests.test_window_math import _numbers
from streammon.metrics.window_math import code_metrics
cases = pickle.loads(sys.stdin.buffer.read())
out = [_numbers(counts, priors, has, code_metrics(names, lambda n: {"p": 2.5} if n == "holder" else {}))
       for counts, priors, has, names in cases]
sys.stdout.buffer.write(pickle.dumps(out))
"""


def test_the_compiled_loops_equal_their_python_source_run_as_python() -> None:
    """Every number of random windows (as read, at the reference mix, prior-corrected; mix, RRT, prior-shift
    statistics and p-values) compiled by numba equals what the same loops give run as Python under
    ``NUMBA_DISABLE_JIT=1`` (NumPy's arithmetic; what coverage and mutation testing run), to 1e-12."""
    import os
    import pickle
    import subprocess
    import sys
    from pathlib import Path

    from streammon.metrics.window_math import code_metrics

    rng = np.random.default_rng(21)
    cases = []
    for k in (2, 3, 9):
        counts, priors, has_reference = _random_windows(rng, k)
        names = [n for n, s in catalog().items() if s.applies_to(k) and (s.kind == "multiclass" or k == 2)]
        cases.append((counts, priors, has_reference, names))
    compiled = [_numbers(c, p, h, code_metrics(n, lambda m: {"p": 2.5} if m == "holder" else {}))
                for c, p, h, n in cases]
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", _UNCOMPILED], input=pickle.dumps(cases), capture_output=True,
                          cwd=root, env={**os.environ, "NUMBA_DISABLE_JIT": "1"}, timeout=300, check=True)
    python = pickle.loads(done.stdout)  # our own child's answer
    assert len(python) == len(compiled) == 3
    for fast, slow in zip(compiled, python, strict=True):
        for name in fast:
            np.testing.assert_allclose(fast[name], slow[name], rtol=1e-12, atol=1e-14, err_msg=name)


def test_a_reports_prior_shift_rrt_and_corrected_values_equal_independent_recomputations() -> None:
    """What the compiled call gives a report's windows, recomputed independently per window: the prior-shift test
    equals scipy's chi-square goodness of fit and Jensen–Shannon distance; RRT a recount of the class sizes; each
    value at the reference mix the metric's own function on ``reweight`` of the counts (a Condition-1 metric's
    equal to its score when the same classes are present); the mix the class shares."""
    from scipy import stats
    from scipy.spatial import distance

    from streammon.findings.evaluate import Setting, evaluate_windows
    from streammon.findings.reference import Reference

    rng = np.random.default_rng(33)
    policy = Policy()
    checked = 0
    for k in (2, 3, 6):
        labels = tuple(f"c{i}" for i in range(k))
        weights = {label: int(rng.integers(1, 9)) for label in labels}
        reference = Reference.of(weights)
        setting = Setting.of(labels, reference, 1 if k == 2 else None, policy)
        windows = []
        for i in range(8):
            counts = rng.integers(0, 40, (k, k)) * (rng.random((k, k)) < 0.8)
            if i % 4 == 1:
                counts[rng.integers(k)] = 0  # a class absent: not the same classes as the reference
            windows.append((f"w{i}", "sliding", counts))
        q = np.array([weights[label] for label in labels], dtype=float)
        q /= q.sum()
        for (_, _, counts), w in zip(windows, evaluate_windows(windows, setting), strict=True):
            n_i = counts.sum(axis=1)
            n = n_i.sum()
            if n == 0:
                continue
            assert list(w.priors.values()) == pytest.approx((n_i / n).tolist(), abs=1e-15)
            s = w.prior_shift
            assert s is not None and s.df == k - 1
            assert s.js == pytest.approx(distance.jensenshannon(n_i / n, q, base=2) ** 2, abs=1e-12)
            expected = stats.chisquare(n_i, q * n)
            assert s.chi2 == pytest.approx(expected.statistic, rel=1e-12)
            assert s.p_value == pytest.approx(exact_shift_p(n_i, q), rel=1e-9, abs=1e-300)
            if k == 2:  # the reference's minority in the denominator
                low = labels.index(reference.minority)
                assert w.rrt == (math.inf if n_i[low] == 0 else n_i[1 - low] / n_i[low])
            else:
                assert w.rrt == n_i.max() / n_i[n_i > 0].min()
            same = bool(((n_i > 0) == (q > 0)).all())
            at_mix = reweight(counts, q)
            for name, value in w.corrected.items():
                metric = catalog()[name]
                if metric.condition1 and same:
                    assert _same(value, w.scores[name])
                else:
                    direct = metric.evaluate(Confusion.of(at_mix), positive=1, **policy.params(name))
                    assert _same(value, direct), (name, counts.tolist())
                checked += 1
    assert checked > 300


def test_loops_compile_in_memory_where_numba_cannot_write_its_cache(monkeypatch: pytest.MonkeyPatch,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    """Where numba has nowhere to write its cache (a read-only install, no writable home: ``njit(cache=True)``
    raises), a loop is compiled without the disk cache and still computes; the fallback is logged once."""
    import numba

    from streammon.metrics import jitting

    real = numba.njit
    asked: list[bool] = []

    def refusing(*args: Any, cache: bool = False, **options: Any) -> Any:
        if options.get("nogil"):  # streammon's calls (numba's own, while compiling, pass through)
            asked.append(cache)
        if cache:
            raise RuntimeError("cannot cache function 'twice': no locator available for file 'x.py'")
        return real(*args, cache=False, **options)

    def twice(x: float) -> float:
        return 2.0 * x

    monkeypatch.setattr(numba, "njit", refusing)
    monkeypatch.setattr(jitting, "_told", [])
    with caplog.at_level("WARNING", logger="streammon.compile"):
        first, second = jitting.compiled(twice), jitting.compiled(twice, error_model="numpy")
    assert first(21.0) == second(21.0) == 42.0
    assert asked == [True, False, True, False]
    assert len([r for r in caplog.records if "NUMBA_CACHE_DIR" in r.getMessage()]) == 1
