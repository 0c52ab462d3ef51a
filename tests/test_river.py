"""streammon's river metrics behave like river's own, but exactly: checked after every update and on every tail."""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import numpy as np
import pytest
from river import datasets, evaluate, linear_model, metrics, preprocessing, tree, utils
from sklearn import metrics as skm

from streammon import Sliding
from streammon.river import (
    ACSA,
    METRIC_CLASSES,
    BinaryCatalogMetric,
    GMean,
    MonitorMetric,
    Precision,
    make,
)
from tests.test_river_contract import oracle

LABELS = ["spam", "ham", "eggs"]
PARAMS = {"holder": {"p": -1.0}, "iba": {"alpha": 0.1, "squared": True}}


def _stream(seed: int, n: int = 60) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    truth = rng.choice(LABELS, size=n, p=[0.2, 0.7, 0.1])
    preds = np.where(rng.random(n) < 0.7, truth, rng.choice(LABELS, size=n))
    return list(zip(truth.tolist(), preds.tolist(), strict=True))


def _new(name: str) -> BinaryCatalogMetric | object:
    cls = METRIC_CLASSES[name]
    extra = {"pos_val": "spam"} if issubclass(cls, BinaryCatalogMetric) else {}
    return cls(**extra, **PARAMS.get(name, {}))


def _expected(name: str, pairs: list[tuple[str, str]]) -> float:
    """The independent oracle of test_river_contract (scikit-learn / scipy / a recount; never streammon)."""
    return oracle(name, pairs, pos_val="spam", **PARAMS.get(name, {}))


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("name", list(METRIC_CLASSES))
def test_value_after_every_update_equals_a_recount(name: str) -> None:
    """After each incremental update the metric equals the oracle on all data so far."""
    metric = _new(name)
    pairs = _stream(1)
    for i, (y, p) in enumerate(pairs, start=1):
        metric.update(y, p)  # type: ignore[attr-defined]
        assert _same(metric.get(), _expected(name, pairs[:i])), (name, i)  # type: ignore[attr-defined]


def test_values_equal_scikit_learn_along_the_stream() -> None:
    """Precision/Recall/F1 with pos_val='spam', ACSA, MCC and kappa equal scikit-learn after every update."""
    pairs = _stream(2, 80)
    ours = {"precision": make("precision", pos_val="spam"), "recall": make("recall", pos_val="spam"),
            "f1": make("f1", pos_val="spam"), "acsa": ACSA(), "mcc": make("mcc"), "kappa": make("kappa")}
    for i, (y, p) in enumerate(pairs, start=1):
        for metric in ours.values():
            metric.update(y, p)
        t, q = [a for a, _ in pairs[:i]], [b for _, b in pairs[:i]]
        tb, qb = [a == "spam" for a in t], [b == "spam" for b in q]  # pos_val: spam against the rest
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = {
                "precision": skm.precision_score(tb, qb, zero_division=np.nan),
                "recall": skm.recall_score(tb, qb, zero_division=np.nan),
                "f1": skm.f1_score(tb, qb, zero_division=np.nan),
                "acsa": skm.balanced_accuracy_score(t, q),
                "kappa": skm.cohen_kappa_score(t, q),
            }
            if len(set(t)) > 1 and len(set(q)) > 1:
                theirs["mcc"] = skm.matthews_corrcoef(t, q)
        for name, value in theirs.items():
            got = ours[name].get()
            assert _same(got, float(value)), (name, i, got, value)


@pytest.mark.parametrize("name", list(METRIC_CLASSES))
@pytest.mark.parametrize("window", [1, 2, 5, 10])
def test_rolling_window_equals_the_tail(name: str, window: int) -> None:
    """utils.Rolling(cls, window_size=w) equals the metric recomputed on the last w samples, at every step."""
    cls = METRIC_CLASSES[name]
    extra = {"pos_val": "spam"} if issubclass(cls, BinaryCatalogMetric) else {}
    rolling = utils.Rolling(cls, window_size=window, **extra, **PARAMS.get(name, {}))
    pairs = _stream(3, 40)
    for i, (y, p) in enumerate(pairs, start=1):
        rolling.update(y, p)
        assert _same(rolling.get(), _expected(name, pairs[max(0, i - window):i])), (name, window, i)


def test_pickle_deepcopy_and_clone_round_trip() -> None:
    """A metric survives pickle and deepcopy with its counts; clone() gives a fresh one with the same parameters."""
    metric = make("iba", pos_val="spam", alpha=0.2, squared=True)
    for y, p in _stream(4):
        metric.update(y, p)
    for copied in (pickle.loads(pickle.dumps(metric)), copy.deepcopy(metric)):
        assert copied.get() == metric.get()
    fresh = metric.clone()
    assert (fresh.pos_val, fresh.alpha, fresh.squared) == ("spam", 0.2, True)  # type: ignore[attr-defined]
    assert math.isnan(fresh.get())
    holder = make("holder", p=2.0)
    assert holder.clone().p == 2.0  # type: ignore[attr-defined]


def test_plus_composes_metrics_like_river() -> None:
    """GMean() + Precision(pos_val=...) is a river Metrics that updates both."""
    combined = GMean() + Precision(pos_val="spam")
    assert isinstance(combined, metrics.base.Metrics)
    for y, p in _stream(5):
        combined.update(y, p)
    assert [m.get() for m in combined] == [_expected("gmean", _stream(5)), _expected("precision", _stream(5))]


def test_pos_val_works_for_any_label_and_undefined_is_nan() -> None:
    """Precision(pos_val='spam') counts spam (river's own returns 0 here); an empty metric is NaN, not 0."""
    ours, theirs = Precision(pos_val="spam"), metrics.Precision(pos_val="spam")
    for y, p in [("spam", "spam"), ("ham", "spam"), ("spam", "ham")]:
        ours.update(y, p)
        theirs.update(y, p)
    assert ours.get() == 0.5 and theirs.get() == 0.0
    assert math.isnan(Precision().get()) and repr(GMean()) == "GMean: nan%"
    with pytest.raises(ValueError, match="was not counted"):
        Precision(pos_val="spam").revert("spam", "spam")
    with pytest.raises(ValueError, match="whole number"):
        GMean().update("a", "b", w=0.5)


def test_works_with_classifiers_only() -> None:
    """works_with accepts classifiers and rejects regressors, as river's classification metrics do."""
    assert GMean().works_with(tree.HoeffdingTreeClassifier())
    assert not GMean().works_with(linear_model.LinearRegression())


@pytest.mark.parametrize(("dataset", "limit"), [(datasets.Phishing, None), (datasets.ImageSegments, 1500)])
def test_progressive_validation_matches_rivers_balanced_accuracy(dataset: type, limit: int | None) -> None:
    """On datasets shipped in the river wheel, ACSA equals river's BalancedAccuracy at every checkpoint."""
    import itertools

    def run(metric: metrics.base.Metric) -> list[float]:
        model = preprocessing.StandardScaler() | tree.HoeffdingTreeClassifier()
        steps = evaluate.iter_progressive_val_score(itertools.islice(dataset(), limit), model, metric, step=100)
        return [step[metric.__class__.__name__] .get() for step in steps]

    ours, theirs = run(ACSA()), run(metrics.BalancedAccuracy())
    assert len(ours) > 5 and ours == pytest.approx(theirs, abs=1e-12)


def test_monitor_metric_brings_windows_flags_and_alerts_into_a_river_loop() -> None:
    """MonitorMetric runs a whole Monitor under progressive_val_score; clone() starts afresh; revert is refused."""
    import itertools

    metric = MonitorMetric(windows=[Sliding(300)], reference={True: 0.45, False: 0.55}, metric="gmean")
    model = preprocessing.StandardScaler() | linear_model.LogisticRegression()
    evaluate.progressive_val_score(itertools.islice(datasets.Phishing(), 800), model, metric)
    report = metric.report()
    assert report.samples == 800 and report.windows["sliding_300"].n == 300
    assert metric.get() == report.windows["sliding_300"].scores["gmean"]
    assert metric.clone().report().samples == 0
    with pytest.raises(NotImplementedError, match="Sliding"):
        metric.revert(True, True)


def test_a_model_that_predicts_nothing_yet_is_skipped_as_progressive_validation_does() -> None:
    """A hand-written loop over a fresh HoeffdingTree (predict_one is None before learning) and GaussianNB:
    streammon's river metrics skip the None steps, and equal what river's progressive_val_score gives for the
    same model and metric (which skips them)."""
    from river import datasets, evaluate, naive_bayes, tree

    import streammon.river as sm_river

    for make_model in (tree.HoeffdingTreeClassifier, naive_bayes.GaussianNB):
        model, metric, monitored = make_model(), sm_river.BalancedAccuracy(pos_val=True), sm_river.MonitorMetric()
        nothing = 0
        for x, y in datasets.Phishing().take(300):
            y_pred = model.predict_one(x)
            nothing += y_pred is None
            metric.update(y, y_pred)
            monitored.update(y, y_pred)
            model.learn_one(x, y)
        expected = evaluate.progressive_val_score(datasets.Phishing().take(300), make_model(),
                                                  sm_river.BalancedAccuracy(pos_val=True))
        assert metric.get() == expected.get()
        assert nothing >= 1 and monitored.monitor.samples == 300 - nothing
