"""Reports as data: to_dict() against a hand recount, the JSON rules, pickling, asdict, KeyErrors that name keys."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pytest

from streammon import Cumulative, Monitor, Policy, Reference, Report, Sliding, Timed
from streammon.findings.assemble import CountsView, assemble_report, evaluate_view

# (true, pred) in stream order; counted by hand below.
SAMPLES = [("neg", "neg"), ("pos", "pos"), ("pos", "neg"), ("neg", "neg"), ("neg", "pos"), ("neg", "neg")]


def _small_report() -> Report:
    monitor = Monitor([Cumulative(), Sliding(2)], reference={"neg": 3, "pos": 1}, clock=lambda: 500.0)
    for y, p in SAMPLES:
        monitor.update(y, p)
    return monitor.report()


def _as_json(report: Report) -> Any:
    return json.loads(json.dumps(report.to_dict(), allow_nan=False))


def _report_of(labels: tuple[Hashable, ...], matrix: list[list[int]], reference: Reference | None = None) -> Report:
    """A report over the given classes straight from counts (no sample intake involved)."""
    counts = np.array(matrix, dtype=np.int64)
    view = CountsView(labels=labels, windows=(("w", "cumulative", counts),), lifetime=counts, reference=reference,
                      positive=None, samples=int(counts.sum()), warmup_remaining=0, degraded={}, baseline={},
                      now=None)
    windows, conditions = evaluate_view(view, Policy())
    return assemble_report(view, windows, conditions, {})


def test_to_dict_matches_a_hand_recount_of_a_small_stream() -> None:
    """Every count, class mix, per-class rate and headline score in the JSON equals the hand recount of 6 samples."""
    d = _as_json(_small_report())
    assert d["labels"] == [{"key": "neg", "value": "neg", "type": "str"}, {"key": "pos", "value": "pos", "type": "str"}]
    assert d["positive"] == "pos" and d["samples"] == 6 and d["warmup_remaining"] == 0
    assert d["reference"] == {"labels": d["labels"], "priors": {"neg": 0.75, "pos": 0.25}, "source": "given"}
    assert d["totals"] == [[3, 1], [1, 1]]
    assert list(d["windows"]) == ["cumulative", "sliding_2"]

    cum = d["windows"]["cumulative"]
    assert (cum["name"], cum["kind"], cum["n"]) == ("cumulative", "cumulative", 6)
    assert cum["confusion"] == [[3, 1], [1, 1]]
    assert cum["counts"] == {"neg": 4, "pos": 2} and cum["predicted"] == {"neg": 4, "pos": 2}
    assert cum["priors"] == pytest.approx({"neg": 4 / 6, "pos": 2 / 6})
    assert cum["recall"] == {"neg": 0.75, "pos": 0.5} and cum["precision"] == {"neg": 0.75, "pos": 0.5}
    assert cum["present"] == ["neg", "pos"] and cum["absent"] == [] and cum["positive"] == "pos"
    assert cum["rrt"] == 2.0 and cum["ir"] == 3.0  # 4 negatives per 2 positives; reference 3:1
    assert cum["scores"]["tpr"] == 0.5 and cum["scores"]["tnr"] == 0.75 and cum["scores"]["acsa"] == 0.625
    assert cum["distortion"]["acsa"] == 0.0  # a Condition-1 metric is not moved by the mix
    assert set(cum["prior_shift"]) == {"js", "tv", "chi2", "df", "p_value", "prior_ratio", "shifted"}
    assert cum["prior_shift"]["tv"] == pytest.approx(0.75 - 4 / 6)  # half of |4/6 − 3/4| + |2/6 − 1/4|
    low, high = cum["recall_interval"]["neg"]
    assert low < 0.75 < high and set(cum["intervals"]) == {"acsa", "gmean", "min_recall"}

    last2 = d["windows"]["sliding_2"]  # the last two samples: (neg, pos), (neg, neg)
    assert last2["confusion"] == [[1, 1], [0, 0]] and last2["n"] == 2
    assert last2["counts"] == {"neg": 2, "pos": 0} and last2["absent"] == ["pos"]
    assert last2["recall"] == {"neg": 0.5, "pos": None}  # undefined → null, never 0
    assert last2["precision"] == {"neg": 1.0, "pos": 0.0}
    assert last2["rrt"] == "Infinity"  # the minority is absent
    assert last2["scores"]["tpr"] is None and last2["recall_interval"]["pos"] == [None, None]


def test_json_of_an_empty_and_of_a_warming_up_monitor_has_no_nan() -> None:
    """Reports full of undefined values still pass json.dumps(allow_nan=False): every NaN is null."""
    empty = Monitor([Cumulative(), Timed(60)], clock=lambda: 0.0).report()
    d = _as_json(empty)
    assert d["reference"] is None and d["labels"] == [] and d["totals"] == []
    assert d["windows"]["timed_60s"]["rrt"] is None
    assert all(v is None for v in d["windows"]["cumulative"]["scores"].values())
    warming = Monitor([Cumulative()], warmup=50, clock=lambda: 0.0)
    warming.update_many([0, 1, 1], [0, 1, 0])
    w = _as_json(warming.report())["windows"]["cumulative"]
    assert w["ir"] is None and w["prior_shift"] is None and w["corrected"]["acsa"] is None
    assert w["recall"] == {"0": 1.0, "1": 0.5}


def test_labels_are_keyed_by_their_text_and_listed_with_their_types() -> None:
    """Keys are str(label); the labels list keeps each label's JSON value and Python type."""
    d = json.loads(json.dumps(_report_of((False, True), [[2, 0], [1, 1]]).to_dict(), allow_nan=False))
    assert d["labels"] == [{"key": "False", "value": False, "type": "bool"},
                           {"key": "True", "value": True, "type": "bool"}]
    assert d["windows"]["w"]["recall"] == {"False": 1.0, "True": 0.5}
    d = json.loads(json.dumps(_report_of((0, 7, "a"), [[1, 0, 0], [0, 2, 0], [0, 0, 3]]).to_dict()))
    assert [(e["key"], e["value"], e["type"]) for e in d["labels"]] == [("0", 0, "int"), ("7", 7, "int"),
                                                                      ("a", "a", "str")]
    assert d["windows"]["w"]["counts"] == {"0": 1, "7": 2, "a": 3}


def test_labels_with_the_same_text_cannot_both_be_classes_so_keys_are_unique() -> None:
    """1 and "1" would collide as JSON keys (and as Prometheus label values): the second is refused up front."""
    monitor = Monitor([Cumulative()])
    monitor.update(1, 1)
    with pytest.raises(ValueError, match="would both be exported"):
        monitor.update("1", "1")
    assert json.loads(json.dumps(monitor.report().to_dict()))["windows"]["cumulative"]["counts"] == {"1": 1}


def test_alerts_flags_and_prior_shift_as_dicts() -> None:
    """Alerts, flags and prior shift give their fields by name, JSON-ready."""
    monitor = Monitor([Cumulative()], reference={"neg": 9, "pos": 1}, clock=lambda: 42.0)
    monitor.update_many(["neg"] * 50 + ["pos"] * 50, ["neg"] * 45 + ["pos"] * 5 + ["pos"] * 40 + ["neg"] * 10)
    report = monitor.report()
    (alert,) = report.alerting("prior_shift")
    assert alert.to_dict() == {"kind": "prior_shift", "window": "cumulative", "subject": "class_mix",
                               "since_sample": 100, "since_time": 42.0, "reason": alert.reason, "change_at": None,
                               "recall_after": None}  # (a degradation's incident only)
    flag = report.windows["cumulative"].flags[0]
    assert flag.to_dict() == {"metric": flag.metric, "kind": flag.kind, "magnitude": flag.magnitude,
                              "reason": flag.reason}
    shift = report.windows["cumulative"].prior_shift
    assert shift is not None and shift.to_dict()["tv"] == pytest.approx(0.4) and shift.to_dict()["shifted"] is True
    assert report.to_dict()["alerts"] == [a.to_dict() for a in report.alerts]


def test_reports_pickle_deepcopy_and_asdict() -> None:
    """A report survives pickle and deepcopy whole (KeyError hints included), and dataclasses.asdict converts it."""
    report = _small_report()
    for clone in (pickle.loads(pickle.dumps(report)), copy.deepcopy(report)):
        assert json.dumps(clone.to_dict(), allow_nan=False) == json.dumps(report.to_dict(), allow_nan=False)
        with pytest.raises(KeyError, match="the windows are 'cumulative', 'sliding_2'"):
            clone.windows["sliding"]
    plain = dataclasses.asdict(report)
    assert type(plain["windows"]["cumulative"]) is dict
    assert plain["windows"]["cumulative"]["recall"] == {"neg": 0.75, "pos": 0.5}
    assert plain["reference"] == {"priors": {"neg": 0.75, "pos": 0.25}, "source": "given"}
    assert type(plain["windows"]["sliding_2"]["prior_shift"]) is dict


MAPPINGS: list[tuple[str, Callable[[Report], Any], str, str]] = [
    ("windows", lambda r: r.windows, "sliding", "no window 'sliding' here; the windows are 'cumulative', 'sliding_2'"),
    ("scores", lambda r: r.windows["cumulative"].scores, "ascsa", "no metric 'ascsa' here; the metrics are 'tpr'"),
    ("corrected", lambda r: r.windows["cumulative"].corrected, "f", "no metric 'f' here; the metrics are 'tpr'"),
    ("distortion", lambda r: r.windows["cumulative"].distortion, "f", "no metric 'f' here; the metrics are"),
    ("intervals", lambda r: r.windows["cumulative"].intervals, "f1",
     "no metric 'f1' here; the metrics are 'acsa', 'gmean', 'min_recall'"),
    ("recall", lambda r: r.windows["cumulative"].recall, "Pos", "no class 'Pos' here; the classes are 'neg', 'pos'"),
    ("precision", lambda r: r.windows["sliding_2"].precision, 1, "no class 1 here; the classes are 'neg', 'pos'"),
    ("recall_interval", lambda r: r.windows["cumulative"].recall_interval, "x", "the classes are 'neg', 'pos'"),
    ("counts", lambda r: r.windows["cumulative"].counts, "x", "the classes are 'neg', 'pos'"),
    ("priors", lambda r: r.windows["cumulative"].priors, "x", "the classes are 'neg', 'pos'"),
    ("reference", lambda r: r.reference.priors, "x", "the classes are 'neg', 'pos'"),
    ("baseline", lambda r: r.baseline, "x", "no class 'x' here"),
]


@pytest.mark.parametrize(("field", "get", "missing", "message"), MAPPINGS, ids=[m[0] for m in MAPPINGS])
def test_a_missing_key_names_the_valid_ones(field: str, get: Callable[[Report], Any], missing: Hashable,
                                            message: str) -> None:
    """Every public mapping of a report answers a missing key with a KeyError that lists what exists."""
    mapping = get(_small_report())
    with pytest.raises(KeyError) as error:
        mapping[missing]
    assert message in str(error.value.args[0])
    assert mapping.get(missing) is None and missing not in mapping
    with pytest.raises(TypeError, match="read-only"):
        mapping[missing] = 0


def test_repr_is_short_and_says_what_the_report_holds() -> None:
    """repr(report) names the windows and classes in one short line instead of dumping every number."""
    monitor = Monitor(reference={f"class{i}": i + 1 for i in range(12)}, clock=lambda: 0.0)
    monitor.update_many([f"class{i % 12}" for i in range(600)], [f"class{i % 5}" for i in range(600)])
    report = monitor.report()
    text = repr(report)
    assert len(text) < 300 and "\n" not in text, text
    assert text.startswith("Report(samples=600, windows=['cumulative', 'sliding_1000', 'sliding_10000', 'timed_3600s']")
    assert "'class0'" in text and "4 more" in text  # 12 classes: the first 8 shown
    assert len(repr(report.windows["cumulative"])) < 300


def test_counts_by_window_name_a_mistyped_window_too() -> None:
    """Monitor.counts() answers a mistyped window name with the names that exist, like a report."""
    monitor = Monitor([Cumulative(), Sliding(2)])
    monitor.update_many(["a", "b", "b"], ["a", "a", "b"])
    counts = monitor.counts()
    assert counts["sliding_2"].to_dict() == {"b": {"a": 1, "b": 1}}
    with pytest.raises(KeyError, match="no window 'sliding' here; the windows are 'cumulative', 'sliding_2'"):
        counts["sliding"]


def test_label_stats_go_into_the_json_with_counts_a_recount_gives() -> None:
    """Predictions now, labels later: to_dict() carries prediction counts and label stats, JSON-safe."""
    monitor = Monitor([Cumulative()], reference={"neg": 9, "pos": 1}, clock=lambda: 100.0)
    for key, pred in enumerate(["neg", "neg", "pos", "neg", "pos"]):
        monitor.predict(key, pred, t=float(key))
    monitor.label(0, "neg", t=10.0)
    monitor.label(2, "neg", t=11.0)
    monitor.label(99, "pos", t=12.0)  # an orphan: no such prediction
    d = json.loads(json.dumps(monitor.report().to_dict(), allow_nan=False))
    window = d["windows"]["cumulative"]
    assert window["prediction_counts"] == {"neg": 3, "pos": 2}
    stats = window["label_stats"]
    assert (stats["predictions"], stats["labelled"], stats["pending"], stats["orphans"]) == (5, 2, 3, 1)
    assert stats["coverage"] == pytest.approx(2 / 5)
    assert window["confusion"] == [[1, 1], [0, 0]]
