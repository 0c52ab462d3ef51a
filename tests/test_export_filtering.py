"""The exporter's filtering, against the rules written out: which families, which metrics in which family,
which distortion types, and what a distortion sample reads.

Written to kill mutants of ``export/prometheus.py`` (``bash .ci/mutation export``).
"""

from __future__ import annotations

import gc
import math
import weakref
from dataclasses import replace
from types import SimpleNamespace

import pytest
from prometheus_client.utils import floatToGoString
from scipy.stats import beta

from streammon import Cumulative, Monitor, Sliding
from streammon.export import estimate_families
from streammon.export.label_families import latency_buckets
from streammon.export.prometheus import FAMILIES, MonitorCollector, build_families, exported_families
from streammon.findings.label_stats import LOWEST, PER_OCTAVE
from streammon.findings.report import Report
from streammon.metrics import catalog

OPT_IN = ("streammon_distortion_prone_score", "streammon_confusion")
# The label-free estimate's families (export/estimate_families.py) follow FAMILIES' in every scrape and describe().
ESTIMATES = tuple(estimate_families.FAMILIES)
Samples = dict[tuple[str, tuple[str, ...]], float]


def _labels(family: str) -> tuple[str, ...]:
    """A family's label names as its table lists them (a histogram's samples also carry ``le``)."""
    if family in ESTIMATES:
        return tuple(estimate_families.FAMILIES[family][0])
    row = FAMILIES[family]
    return (*row.labels, "le") if row.kind == "histogram" else row.labels


def _samples(reports: list[tuple[str, Report]], **options: bool) -> Samples:
    out: Samples = {}
    for family in build_families(reports, **options):
        for s in family.samples:
            key = (s.name, tuple(s.labels[name] for name in _labels(family.name)))
            assert key not in out, f"{key} exported twice"
            out[key] = s.value
    return out


def _three_class_report() -> Report:
    """A reference of three classes; both windows hold two of them (a Type-2 change)."""
    monitor = Monitor([Cumulative(), Sliding(3)], reference={"a": 5, "b": 3, "c": 2})
    monitor.update_many(["a", "b", "a", "b", "a", "a"], ["a", "a", "a", "b", "b", "a"])
    return monitor.report()


@pytest.mark.parametrize("distortion_prone", [False, True])
@pytest.mark.parametrize("confusion", [False, True])
def test_exported_families_are_all_but_the_opt_ins_not_asked_for(distortion_prone: bool, confusion: bool) -> None:
    """exported_families keeps FAMILIES' order and drops each opt-in family unless its option is on; describe()
    and build_families add the estimate families after them, whatever the options."""
    dropped = {name for name, on in zip(OPT_IN, (distortion_prone, confusion), strict=True) if not on}
    expected = [name for name in FAMILIES if name not in dropped]
    families = exported_families(distortion_prone=distortion_prone, confusion=confusion)
    assert [f.name for f in families] == expected
    collector = MonitorCollector(distortion_prone=distortion_prone, confusion=confusion)
    assert [m.name for m in collector.describe()] == [*expected, *ESTIMATES]
    built = build_families([], distortion_prone=distortion_prone, confusion=confusion)
    assert [m.name for m in built] == [*expected, *ESTIMATES]


def test_counter_families_end_in_total_histograms_in_bucket_and_gauges_in_neither() -> None:
    """A counter's samples are NAME_total, the histogram's NAME_bucket, a gauge's NAME; the kinds are the
    documented ones (export/prometheus.py and export/label_families.py list them)."""
    counters = {name for name, f in FAMILIES.items() if f.kind == "counter"}
    assert counters == {"streammon_class_samples", "streammon_class_correct", "streammon_class_predicted",
                        "streammon_samples", "streammon_confusion",
                        "streammon_predictions", "streammon_label_joined", "streammon_label_orphans",
                        "streammon_label_duplicates", "streammon_predictions_expired",
                        "streammon_predictions_evicted", "streammon_predictions_repeated"}
    histograms = {name for name, f in FAMILIES.items() if f.kind == "histogram"}
    assert histograms == {"streammon_label_latency_seconds"}
    assert all(f.kind == "gauge" for name, f in FAMILIES.items() if name not in counters | histograms)
    kinds = {"counter": ("_total", "CounterMetricFamily"), "histogram": ("_bucket", "HistogramMetricFamily"),
             "gauge": ("", "GaugeMetricFamily")}
    for name, f in FAMILIES.items():
        suffix, cls = kinds[f.kind]
        assert f.sample_name == name + suffix
        empty = f.empty()
        assert type(empty).__name__ == cls and empty.name == name
        assert empty.documentation == f.help and empty.samples == []


def test_scores_split_by_condition1_and_distortion_types_by_conditions_1_and_2() -> None:
    """streammon_score: Condition-1 metrics; corrected/prone: the rest; type1 iff not C1, type2 iff C2 is False."""
    report = _three_class_report()
    for distortion_prone in (False, True):
        samples = _samples([("m", report)], distortion_prone=distortion_prone)
        for w in report.windows.values():
            for metric, value in w.scores.items():
                spec = catalog()[metric]
                key = ("m", w.name, metric)
                in_score = ("streammon_score", key) in samples
                in_corrected = ("streammon_corrected_score", key) in samples
                in_prone = ("streammon_distortion_prone_score", key) in samples
                assert (in_score, in_corrected, in_prone) == (
                    spec.condition1, not spec.condition1, distortion_prone and not spec.condition1)
                if in_corrected:
                    assert samples[("streammon_corrected_score", key)] == pytest.approx(w.corrected[metric],
                                                                                       nan_ok=True)
                if in_prone:
                    assert samples[("streammon_distortion_prone_score", key)] == pytest.approx(value, nan_ok=True)
                types = {kind for kind in ("type1", "type2")
                         if ("streammon_distortion", (*key, kind)) in samples}
                expected = {kind for kind, prone in (("type1", not spec.condition1),
                                                      ("type2", spec.condition2 is False)) if prone}
                assert types == expected, metric
                assert types == {kind for kind in ("type1", "type2")
                                 if ("streammon_distortion_flag", (*key, kind)) in samples}


def test_named_metrics_land_where_the_catalog_says() -> None:
    """gmean is a safe score; precision is distortion-prone type1; auroc_ovo type2 only; auroc_ova both."""
    samples = _samples([("m", _three_class_report())], distortion_prone=True)
    key = ("m", "cumulative")
    assert ("streammon_score", (*key, "gmean")) in samples
    assert ("streammon_distortion_prone_score", (*key, "precision")) not in samples  # precision is per class
    assert ("streammon_distortion_prone_score", (*key, "accuracy")) in samples
    kinds = {m: {k for k in ("type1", "type2") if ("streammon_distortion", (*key, m, k)) in samples}
             for m in ("gmean", "accuracy", "auroc_ovo", "auroc_ova")}
    assert kinds == {"gmean": set(), "accuracy": {"type1"}, "auroc_ovo": {"type2"}, "auroc_ova": {"type1", "type2"}}


def test_distortion_samples_read_the_flag_magnitude_zero_or_nan() -> None:
    """type1 reads the window's distortion; type2 the flag's magnitude, else 0 (NaN in an empty window); flag 1/0."""
    report = _three_class_report()
    samples = _samples([("m", report)])
    checked = 0
    for w in report.windows.values():
        flags = {(f.metric, f.kind): f for f in w.flags}
        for metric in w.scores:
            for kind in ("type1", "type2"):
                key = ("m", w.name, metric, kind)
                if ("streammon_distortion", key) not in samples:
                    continue
                flag = flags.get((metric, kind))
                value = samples[("streammon_distortion", key)]
                if kind == "type1":
                    expected = w.distortion[metric]
                elif flag is not None:
                    expected = flag.magnitude
                else:
                    expected = 0.0 if w.n else math.nan
                assert value == pytest.approx(expected, nan_ok=True), key
                assert samples[("streammon_distortion_flag", key)] == (1.0 if flag else 0.0)
                checked += 1
    assert checked
    # the Type-2 change (three reference classes, two present) is flagged in the two non-empty windows
    for name in ("cumulative", "sliding_3"):
        assert samples[("streammon_distortion_flag", ("m", name, "auroc_ovo", "type2"))] == 1.0
        assert samples[("streammon_distortion", ("m", name, "auroc_ovo", "type2"))] == pytest.approx(0.0 - 0.25)
    idle = _samples([("m", Monitor([Cumulative()], reference={"a": 5, "b": 3, "c": 2}).report())])
    assert math.isnan(idle[("streammon_distortion", ("m", "cumulative", "auroc_ovo", "type2"))])
    assert idle[("streammon_distortion_flag", ("m", "cumulative", "auroc_ovo", "type2"))] == 0.0


def test_an_unflagged_type2_metric_in_a_non_empty_window_reads_zero() -> None:
    """With the reference's classes all present, the type2 distortion sample is exactly 0.0 and unflagged."""
    monitor = Monitor([Cumulative()], reference={"a": 1, "b": 1, "c": 1})
    monitor.update_many(["a", "b", "c", "a"], ["a", "b", "b", "a"])
    samples = _samples([("m", monitor.report())])
    assert samples[("streammon_distortion", ("m", "cumulative", "auroc_ovo", "type2"))] == 0.0
    assert samples[("streammon_distortion_flag", ("m", "cumulative", "auroc_ovo", "type2"))] == 0.0


def test_confusion_counter_is_every_pair_only_when_asked() -> None:
    """confusion=True exports all K² (true, pred) lifetime counts, zeros included; off, none at all."""
    report = _three_class_report()
    on = _samples([("m", report)], confusion=True)
    cells = {key[1][1:]: v for key, v in on.items() if key[0] == "streammon_confusion_total"}
    assert cells == {("a", "a"): 3, ("a", "b"): 1, ("a", "c"): 0, ("b", "a"): 1, ("b", "b"): 1, ("b", "c"): 0,
                     ("c", "a"): 0, ("c", "b"): 0, ("c", "c"): 0}
    off = _samples([("m", report)])
    assert not any(name == "streammon_confusion_total" for name, _ in off)
    assert {k: v for k, v in on.items() if k[0] != "streammon_confusion_total"} == pytest.approx(off, nan_ok=True)


def test_model_level_samples_and_alerts() -> None:
    """Per model: IR, reference priors, lifetime counters by class; one alert sample per active alert."""
    report = _three_class_report()
    samples = _samples([("m", report)])
    assert samples[("streammon_imbalance_ratio", ("m",))] == pytest.approx(2.5)
    assert {k[1][1]: v for k, v in samples.items() if k[0] == "streammon_reference_prior"} == pytest.approx(
        {"a": 0.5, "b": 0.3, "c": 0.2})
    assert samples[("streammon_samples_total", ("m",))] == 6
    assert {k[1][1]: v for k, v in samples.items() if k[0] == "streammon_class_samples_total"} == {
        "a": 4, "b": 2, "c": 0}
    assert {k[1][1]: v for k, v in samples.items() if k[0] == "streammon_class_correct_total"} == {
        "a": 3, "b": 1, "c": 0}
    assert {k[1][1]: v for k, v in samples.items() if k[0] == "streammon_class_predicted_total"} == {
        "a": 4, "b": 2, "c": 0}
    alerting = Monitor([Cumulative()], reference={"a": 1, "b": 1})
    alerting.update_many(["a", "b", "z"], ["a", "b", "z"])  # a class the reference lacks: class_set_change
    alerted = alerting.report()
    alerts = {k[1]: v for k, v in _samples([("m", alerted)]).items() if k[0] == "streammon_alert"}
    assert alerts == {("m", a.window, a.kind, a.subject): 1.0 for a in alerted.alerts} and alerts
    no_reference = Monitor([Cumulative()])
    no_reference.update_many(["a"], ["a"])
    bare = _samples([("n", no_reference.report())])
    assert math.isnan(bare[("streammon_imbalance_ratio", ("n",))])
    assert not any(k[0] == "streammon_reference_prior" for k in bare)
    assert math.isnan(bare[("streammon_prior_shift", ("n", "cumulative"))])


def test_window_samples_per_class_and_intervals() -> None:
    """Per window: samples, RRT, JS, recall/prior/corrected precision and its distortion, both interval bounds."""
    report = _three_class_report()
    samples = _samples([("m", report)])
    w = report.windows["cumulative"]
    key = ("m", "cumulative")
    assert samples[("streammon_window_samples", key)] == 6
    assert samples[("streammon_rrt", key)] == pytest.approx(w.rrt, nan_ok=True)
    assert samples[("streammon_prior_shift", key)] == pytest.approx(w.prior_shift.js)  # type: ignore[union-attr]
    for label in w.labels:
        assert samples[("streammon_recall", (*key, label))] == pytest.approx(w.recall[label], nan_ok=True)
        assert samples[("streammon_class_prior", (*key, label))] == pytest.approx(w.priors[label], nan_ok=True)
        low, high = w.recall_interval[label]
        assert samples[("streammon_recall_interval", (*key, label, "low"))] == pytest.approx(low, nan_ok=True)
        assert samples[("streammon_recall_interval", (*key, label, "high"))] == pytest.approx(high, nan_ok=True)
        corrected = w.corrected_precision[label]
        assert samples[("streammon_corrected_class_precision", (*key, label))] == pytest.approx(corrected, nan_ok=True)
        assert samples[("streammon_class_precision_distortion", (*key, label))] == pytest.approx(
            w.precision[label] - corrected, nan_ok=True)
    for metric, (low, high) in w.intervals.items():
        assert samples[("streammon_score_interval", (*key, metric, "low"))] == pytest.approx(low, nan_ok=True)
        assert samples[("streammon_score_interval", (*key, metric, "high"))] == pytest.approx(high, nan_ok=True)


def test_collector_options_reach_collect_and_bad_models_are_refused() -> None:
    """The collector's options pick the families collect() yields; empty or non-str names and non-monitors raise."""
    monitor = Monitor([Cumulative()], reference={"a": 1, "b": 1})
    monitor.update_many(["a", "b"], ["a", "a"])
    for prone in (False, True):
        for confusion in (False, True):
            collector = MonitorCollector({"m": monitor}, distortion_prone=prone, confusion=confusion)
            assert (collector.distortion_prone, collector.confusion) == (prone, confusion)
            names = [m.name for m in collector.collect()]
            expected = [f.name for f in exported_families(distortion_prone=prone, confusion=confusion)]
            assert names == [*expected, *ESTIMATES]
    collector = MonitorCollector()
    assert collector.models == ()
    for bad, error in (("", ValueError), ("m\ud800", ValueError), ("m" * 257, ValueError), (3, TypeError),
                       (None, TypeError)):
        with pytest.raises(error, match=r"^model name "):
            collector.add(bad, monitor)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"monitor must be a streammon\.Monitor, got "):
        collector.add("m", None)  # type: ignore[arg-type]
    collector.add("m", monitor)
    with pytest.raises(ValueError, match=r"model 'm' is already served by this collector"):
        collector.add("m", monitor)
    with pytest.raises(KeyError):
        collector.remove("other")
    collector.remove("m")
    assert collector.models == () and next(iter(collector.collect())).samples == []


def test_baseline_recall_is_exported_per_class_that_has_one_and_defaults_leave_opt_ins_out() -> None:
    """streammon_baseline_recall carries report.baseline by class; build_families() alone skips both opt-ins."""
    monitor = Monitor([Cumulative()], reference={"a": 1, "b": 1},
                      baseline={"a": {"a": 900, "b": 100}, "b": {"b": 80, "a": 20}})
    report = monitor.report()
    samples = _samples([("m", report)])
    baseline = {k[1][1]: v for k, v in samples.items() if k[0] == "streammon_baseline_recall"}
    assert baseline == pytest.approx(dict(report.baseline)) and set(baseline) == {"a", "b"}
    # the Jeffreys posterior means of 900/1000 and 80/100 (scipy's Beta(right + ½, wrong + ½))
    assert baseline == pytest.approx({"a": beta(900.5, 100.5).mean(), "b": beta(80.5, 20.5).mean()}, abs=1e-12)
    assert [m.name for m in build_families([])] == [*(name for name in FAMILIES if name not in OPT_IN), *ESTIMATES]
    learning = Monitor([Cumulative()], reference={"a": 1, "b": 1})
    assert not any(k[0] == "streammon_baseline_recall" for k in _samples([("n", learning.report())]))


def _scrape(collector: MonitorCollector) -> Samples:
    """One scrape through collect(), keyed like _samples."""
    out: Samples = {}
    for family in collector.collect():
        for s in family.samples:
            out[(s.name, tuple(s.labels[name] for name in _labels(family.name)))] = s.value
    return out


def test_a_scrape_after_a_change_the_totals_do_not_show_reads_it() -> None:
    """The collector reuses a model's samples only when nothing it exports changed: a prediction waiting for its
    label changes neither the confusion totals, their shape nor the baseline, yet the next scrape counts it."""
    monitor = Monitor([Cumulative()], reference={"a": 1, "b": 1})
    monitor.update_many(["a", "b"], ["a", "b"])
    collector = MonitorCollector({"m": monitor})
    first = _scrape(collector)
    assert first[("streammon_predictions_total", ("m", "a"))] == 0.0
    assert first[("streammon_predictions_pending", ("m",))] == 0.0
    monitor.predict("k1", "a")
    monitor.predict("k2", "a")
    second = _scrape(collector)
    assert second[("streammon_samples_total", ("m",))] == first[("streammon_samples_total", ("m",))] == 2
    assert second[("streammon_predictions_total", ("m", "a"))] == 2.0  # two predictions of "a", by hand
    assert second[("streammon_predictions_pending", ("m",))] == 2.0
    monitor.label("k1", "b")
    third = _scrape(collector)
    assert third[("streammon_label_joined_total", ("m",))] == 1.0
    assert third[("streammon_predictions_pending", ("m",))] == 1.0


def test_removing_a_model_frees_its_last_report() -> None:
    """After remove(), the collector holds nothing of the model: the report its last scrape read is freed with the
    monitor (which keeps its own last report, to return it again while nothing changes)."""
    monitor = Monitor([Cumulative()], reference={"a": 1, "b": 1})
    monitor.update_many(["a", "b"], ["a", "a"])
    collector = MonitorCollector({"m": monitor})
    gc.collect()
    before = {id(o) for o in gc.get_objects() if isinstance(o, Report)}
    _scrape(collector)
    gc.collect()
    held = [weakref.ref(o) for o in gc.get_objects() if isinstance(o, Report) and id(o) not in before]
    assert held  # the collector keeps the last report to tell whether the next one exports the same
    collector.remove("m")
    del monitor
    gc.collect()
    assert all(ref() is None for ref in held)


def test_latency_buckets_count_the_labels_below_each_power_of_two() -> None:
    """Edge le = 2**k counts the buckets whose upper edge 2 ** (b / PER_OCTAVE + LOWEST) is at most 2**k (the
    latencies below le); +Inf counts them all. Recounted bucket by bucket from counts that differ everywhere."""
    counts = tuple(range(1, 255))  # bucket b holds b + 1 labels: any off-by-one shows
    edges = latency_buckets(SimpleNamespace(latency_counts=counts))  # type: ignore[arg-type]
    assert [le for le, _ in edges] == [floatToGoString(2.0**k) for k in range(-4, 27)] + ["+Inf"]
    for (le, n), k in zip(edges, [*range(-4, 27), None], strict=True):
        expected = sum(c for b, c in enumerate(counts) if k is None or b / PER_OCTAVE + LOWEST <= k)
        assert n == expected, le
    assert latency_buckets(None) == [(floatToGoString(2.0**k), 0) for k in range(-4, 27)] + [("+Inf", 0)]


def test_estimate_samples_skip_windows_without_an_estimate_and_carry_three_bounds() -> None:
    """A window without an estimate adds nothing, and the windows after it still do; each class has its
    estimate, lower and upper bound, read from the window's estimate."""
    monitor = Monitor([Sliding(1000)], reference={"neg": 900, "pos": 100},
                      baseline={"neg": {"neg": 900, "pos": 100}, "pos": {"neg": 40, "pos": 160}})
    monitor.predict_many(list(range(1000)), ["pos"] * 450 + ["neg"] * 550)
    report = monitor.report()
    w = report.windows["sliding_1000"]
    assert w.estimate is not None
    windows = {"first": replace(w, name="first", estimate=None), "sliding_1000": w}
    samples = _samples([("m", replace(report, windows=windows))])
    prior = {k[1][2:]: v for k, v in samples.items() if k[0] == "streammon_estimated_prior"}
    assert not any(k[1][1] == "first" for k in samples if k[0].startswith(("streammon_estimated",
                                                                           "streammon_label_shift")))
    assert prior == pytest.approx({(label, bound): values[label] for label in w.estimate.priors
                                   for bound, values in (("estimate", w.estimate.priors),
                                                         ("lower", w.estimate.lower), ("upper", w.estimate.upper))})
    assert samples[("streammon_label_shift_p_value", ("m", "sliding_1000"))] == w.estimate.p_value
