"""The collector's own exposition (per-model text kept between scrapes) and the server's answer from it are byte for
byte what prometheus_client writes — ``generate_latest`` for the text format, OpenMetrics ``generate_latest``,
``make_wsgi_app``'s content negotiation — and parse back with prometheus_client's own parsers."""

from __future__ import annotations

import gzip
import math
import urllib.request
from collections.abc import Mapping

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import choose_encoder
from prometheus_client.openmetrics.exposition import generate_latest as openmetrics_latest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families

from streammon import Cumulative, Monitor, Sliding
from streammon.export.families import FAMILIES, collector_families
from streammon.export.prometheus import MonitorCollector
from streammon.export.server import serve
from streammon.export.text import Lines, document
from tests.strategies import exposition_labels
from tests.test_label_export import late_monitor

PROMETHEUS_2 = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
                "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
PROMETHEUS_3 = ("application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,"
                "application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,"
                "text/plain;version=0.0.4;q=0.2,*/*;q=0.1")
ACCEPTS = [None, "text/plain", "text/plain;version=0.0.4", PROMETHEUS_2, PROMETHEUS_3,
           "application/openmetrics-text", "text/plain;version=1.0.0;escaping=underscores",
           "application/openmetrics-text;version=1.0.0;escaping=dots",  # these two: prometheus_client writes them
           "text/plain;version=1.0.0;escaping=values"]


def _registry(monitors: Mapping[str, Monitor], **options: bool) -> CollectorRegistry:
    """A fresh collector over the same monitors in its own registry: prometheus_client formats its families."""
    registry = CollectorRegistry()
    registry.register(MonitorCollector(monitors, **options))
    return registry


def _assert_as_prometheus_client_writes(collector: MonitorCollector, monitors: Mapping[str, Monitor],
                                        **options: bool) -> tuple[bytes, bytes]:
    text, openmetrics = collector.exposition(), collector.exposition(openmetrics=True)
    registry = _registry(monitors, **options)
    assert text == generate_latest(registry)
    assert openmetrics == openmetrics_latest(registry)
    return text, openmetrics


def _class_labels(families: object, family: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for f in families:  # type: ignore[attr-defined]
        if f.name == family:
            for s in f.samples:
                out.setdefault(s.labels["model"], set()).add(s.labels["class"])
    return out


@st.composite
def served_monitors(draw: st.DrawFn) -> dict[str, Monitor]:
    """1 to 3 monitors with hostile model, window and class names, plus an idle one (NaN everywhere)."""
    names = st.text(alphabet=st.sampled_from(['"', "\\", "\n", "m", "é", "\U0001f600", " "]), min_size=1, max_size=6)
    models = draw(st.lists(names, min_size=1, max_size=3, unique=True))
    monitors = {}
    for model in models:
        classes = draw(exposition_labels())
        windows = draw(st.lists(names, min_size=2, max_size=2, unique=True))
        monitor = Monitor([Cumulative(name=windows[0]), Sliding(draw(st.integers(1, 8)), name=windows[1])],
                          classes=classes)
        pairs = draw(st.lists(st.tuples(st.sampled_from(classes), st.sampled_from(classes)), max_size=20))
        if pairs:
            monitor.update_many([t for t, _ in pairs], [p for _, p in pairs])
        monitors[model] = monitor
    monitors[draw(names.filter(lambda n: n not in models))] = Monitor([Sliding(3)])
    return monitors


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(served_monitors(), st.booleans(), st.booleans(), st.data())
def test_exposition_is_what_prometheus_client_writes_and_parses_back(
        monitors: dict[str, Monitor], distortion_prone: bool, confusion: bool, data: st.DataObject) -> None:
    """Hostile model, window and class names, NaN (the idle model), the opt-in families; then new samples in some
    models only: each exposition is byte for byte prometheus_client's of a fresh collector, an unchanged model's
    text is not formatted again, and both formats parse back to the monitors' labels."""
    options = {"distortion_prone": distortion_prone, "confusion": confusion}
    collector = MonitorCollector(monitors, **options)
    text, openmetrics = _assert_as_prometheus_client_writes(collector, monitors, **options)
    expected = {model: {str(label) for label in m.labels} for model, m in monitors.items() if m.labels}
    assert _class_labels(text_string_to_metric_families(text.decode()), "streammon_class_samples") == expected
    assert _class_labels(parse_openmetrics(openmetrics.decode()), "streammon_class_samples") == expected

    changed = data.draw(st.lists(st.sampled_from(sorted(monitors)), unique=True), label="changed")
    kept = {model: collector._pieces[model][-1] for model in monitors}
    for model in changed:
        monitor = monitors[model]
        classes = list(monitor.labels) or [0, 1]
        monitor.update_many(classes, classes[::-1])
    _assert_as_prometheus_client_writes(collector, monitors, **options)
    for model in set(monitors) - set(changed):
        assert collector._pieces[model][-1] is kept[model]  # formatted once, reused


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(FAMILIES)),
       st.lists(st.tuples(st.text(max_size=8), st.floats() | st.integers(-(2**70), 2**70)), max_size=6))
def test_lines_write_values_and_label_values_as_prometheus_client(
        name: str, samples: list[tuple[str, float]]) -> None:
    """Every float (NaN, ±Inf, −0.0, subnormals, ≥ 10⁶ in Go's exponent form), ints beyond 2⁶³, any label value:
    the lines of each family kind are prometheus_client's for the same samples."""
    family = FAMILIES[name]
    lines = Lines([family])
    oracle = family.empty()
    for i, (label, value) in enumerate(samples):
        labels = [f"{label}{i}", *(label for _ in family.labels[1:])]
        if family.kind == "histogram":
            lines.add_buckets(name, labels, [("1.0", value), ("+Inf", value)])
            oracle.add_metric(labels, [("1.0", value), ("+Inf", value)], None)  # type: ignore[call-arg]
        else:
            lines.add(name, labels, value)
            oracle.add_metric(labels, float(value))  # type: ignore[call-arg]
    registry = CollectorRegistry()
    registry.register(_Fixed(oracle))
    assert document([family], [lines.pieces()], openmetrics=False) == generate_latest(registry)
    assert document([family], [lines.pieces()], openmetrics=True) == openmetrics_latest(registry)


class _Fixed:
    def __init__(self, family: object) -> None:
        self.family = family

    def collect(self) -> list[object]:
        return [self.family]


def _estimate_monitor() -> Monitor:
    """Predictions only, with a baseline: the label-free estimate families (tests/test_estimate_export.py)."""
    base = {"neg": {"neg": 900, "pos": 100}, "pos": {"neg": 40, "pos": 160}}
    monitor = Monitor([Sliding(1000)], reference={"neg": 900, "pos": 100}, baseline=base)
    monitor.predict_many(list(range(1000)), ["pos"] * 450 + ["neg"] * 550)
    return monitor


@pytest.mark.parametrize("options", [{}, {"distortion_prone": True, "confusion": True}])
def test_label_and_estimate_families_are_written_as_prometheus_client_writes(options: dict[str, bool]) -> None:
    """Late labels (the latency histogram, label counters) and a predictions-only monitor (the estimate)."""
    late, estimate = late_monitor(), _estimate_monitor()
    monitors = {"late": late, "estimate": estimate}
    collector = MonitorCollector(monitors, **options)
    text, _ = _assert_as_prometheus_client_writes(collector, monitors, **options)
    assert b'streammon_estimated_prior{bound="estimate",class="pos",model="estimate"' in text
    assert b'streammon_label_latency_seconds_bucket{le="+Inf",model="late"}' in text
    estimate.predict_many(list(range(1000, 1100)), ["pos"] * 100)
    late.label(8, "fraud", t=3650.0)
    _assert_as_prometheus_client_writes(collector, monitors, **options)


def test_changed_options_and_served_models_are_written_anew() -> None:
    """Turning an option on, adding and removing a model: no text kept from before leaks into the exposition."""
    monitors = {"a": late_monitor(), "b": _estimate_monitor()}
    collector = MonitorCollector(monitors)
    _assert_as_prometheus_client_writes(collector, monitors)
    collector.confusion = collector.distortion_prone = True
    _assert_as_prometheus_client_writes(collector, monitors, confusion=True, distortion_prone=True)
    collector.confusion = collector.distortion_prone = False
    collector.add("c", Monitor([Sliding(2)]))
    _assert_as_prometheus_client_writes(collector, {**monitors, "c": collector._monitors["c"]})
    collector.remove("a")
    _assert_as_prometheus_client_writes(collector, {"b": monitors["b"], "c": collector._monitors["c"]})


def _fetch(url: str, accept: str | None, compressed: bool) -> tuple[str, bytes, bool]:
    headers = {} if accept is None else {"Accept": accept}
    if compressed:
        headers["Accept-Encoding"] = "gzip"
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as answer:
        body = answer.read()
        gzipped = answer.headers.get("Content-Encoding") == "gzip"
        return answer.headers["Content-Type"], gzip.decompress(body) if gzipped else body, gzipped


@pytest.mark.parametrize("own_registry", [False, True])
def test_server_answers_as_make_wsgi_app_for_every_accept_header(own_registry: bool) -> None:
    """Through HTTP, before and after new samples and unchanged: the body (gunzipped when gzip was accepted) and
    Content-Type are what prometheus_client's content negotiation gives for a registry holding the same monitors;
    ``name[]`` filters and ``/favicon.ico`` too. With ``registry=`` prometheus_client answers everything."""
    odd = ['say "hi"', "back\\slash", "two\nlines", "café ☕"]
    plain = Monitor([Cumulative(), Sliding(4)], classes=odd)
    plain.update_many(odd, odd[::-1])
    monitors = {"plain": plain, "late": late_monitor(), "estimate": _estimate_monitor()}
    registry = CollectorRegistry() if own_registry else None
    with serve(monitors, port=0, registry=registry) as server:
        for step in range(3):
            if step == 1:
                plain.update_many(odd, odd)
            oracle = _registry(monitors)
            for accept in ACCEPTS:
                encoder, content_type = choose_encoder(accept or "")
                for compressed in (False, True):
                    got_type, body, gzipped = _fetch(server.url, accept, compressed)
                    assert (got_type, gzipped) == (content_type, compressed)
                    assert body == encoder(oracle), (accept, compressed)
            _, body, _ = _fetch(server.url + "?name[]=streammon_samples_total", PROMETHEUS_2, False)
            assert body == choose_encoder(PROMETHEUS_2)[0](oracle.restricted_registry(["streammon_samples_total"]))
            assert b'streammon_samples_total{model="plain"} ' in body and b"streammon_score" not in body
            with urllib.request.urlopen(server.url.replace("/metrics", "/favicon.ico"), timeout=5) as icon:
                assert icon.read() == b""
        samples = {s.labels["class"]: s.value for f in text_string_to_metric_families(_fetch(server.url, None, True)[1]
                   .decode()) if f.name == "streammon_recall" for s in f.samples if s.labels["model"] == "plain"
                   and s.labels["window"] == "cumulative"}
    assert set(samples) == set(odd) and all(math.isclose(v, 0.5) for v in samples.values())


def test_family_table_has_no_name_an_escaping_scheme_changes() -> None:
    """The fast path serves escaping=underscores and allow-utf-8 as is: every name is a legacy Prometheus name."""
    legal = set("abcdefghijklmnopqrstuvwxyz_")
    families = collector_families(distortion_prone=True, confusion=True)
    assert all(set(f.name) <= legal and all(set(label) <= legal for label in f.labels) for f in families)


def test_the_kept_line_heads_are_dropped_and_made_again_right(monkeypatch: pytest.MonkeyPatch) -> None:
    """With room for only a few series' line heads (``text._KEPT_PREFIXES``), scrape after scrape of models with
    the same and with other classes is still what prometheus_client writes: the heads are formatted again."""
    from streammon.export import text

    monkeypatch.setattr(text, "_KEPT_PREFIXES", 3)
    monkeypatch.setattr(text, "_PREFIXES", {})
    monitors = {f"m{i}": Monitor([Cumulative(), Sliding(20)], reference={"a": 2, "b": 1, f"c{i}": 1})
                for i in range(3)}
    collector = MonitorCollector(monitors)
    for step in range(3):
        for i, monitor in enumerate(monitors.values()):
            monitor.update_many(["a", "b", f"c{i}"] * (step + 1), ["a", f"c{i}", "b"] * (step + 1))
        _assert_as_prometheus_client_writes(collector, monitors)
        assert len(text._PREFIXES) <= 3


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=False, allow_infinity=False, max_value=999_999.99),
                          st.floats(min_value=-1e-3, max_value=1e-3),
                          st.integers(-10**6 + 1, 10**6 - 1).map(float),
                          st.sampled_from([0.0, -0.0, 1e-4, -1e-4, 9.999999999999999e-05, 1e-05, 5e-324,
                                           2.2250738585072014e-308, 999_999.9999999999, 0.1, 1 / 3])),
                min_size=1, max_size=40))
def test_bulk_float_text_is_python_repr(numbers: list[float]) -> None:
    """The exposition writes a series' values in bulk (``plain_reprs``, through orjson); every value reads as
    Python's ``repr`` — prometheus_client's ``floatToGoString`` below 10⁶ — digit for digit, whatever its size:
    subnormals, the band below 10⁻⁴ where Python switches to an exponent, integers, negative zero."""
    from streammon.export.text import plain_reprs

    assert plain_reprs(numbers) == [repr(x) for x in numbers]
    rng = np.random.default_rng(len(numbers))
    many = (rng.standard_normal(5000) * 10.0 ** rng.integers(-12, 6, 5000)).clip(-999_999, 999_999).tolist()
    assert plain_reprs(many) == [repr(x) for x in many]
