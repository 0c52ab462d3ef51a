"""The Prometheus collector: the families, labels and values it exposes, and the HTTP server."""

from __future__ import annotations

import math
import subprocess
import urllib.error
import urllib.request
from base64 import b64encode
from pathlib import Path

import pytest
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from streammon import Cumulative, Monitor, Policy, Sliding
from streammon.export.prometheus import FAMILIES, MonitorCollector, exported_families
from streammon.export.server import serve
from streammon.metrics import catalog

GOLDEN = Path(__file__).parent / "golden" / "exposition.txt"


def _monitor() -> Monitor:
    # alert_confirm=1: the legit class lost from sliding_4 ((1 − 0.9)⁴ = α²) raises its alert at once, so the
    # golden file shows an alert line
    monitor = Monitor([Cumulative(), Sliding(4)], reference={"legit": 90, "fraud": 10}, policy=Policy(alert_confirm=1))
    monitor.update_many(["legit"] * 6 + ["fraud"] * 4, ["legit"] * 5 + ["fraud"] * 3 + ["legit"] * 2)
    return monitor


def _exposition(collector: MonitorCollector) -> str:
    registry = CollectorRegistry()
    registry.register(collector)
    return generate_latest(registry).decode()


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_exposition_matches_the_golden_file() -> None:
    """The exposition of a small fixed monitor is byte-for-byte the reviewed golden file."""
    assert _exposition(MonitorCollector({"fraud-model": _monitor()})) == GOLDEN.read_text()


def test_only_condition1_scores_are_exported_by_default() -> None:
    """streammon_score holds exactly the Condition-1 metrics; the others only appear when opted in, apart."""
    default = _samples(_exposition(MonitorCollector({"m": _monitor()})))
    scored = {dict(labels)["metric"] for (name, labels) in default if name == "streammon_score"}
    assert scored and all(catalog()[m].condition1 for m in scored)
    assert "precision" not in scored and "gmean" in scored
    assert not any(name == "streammon_distortion_prone_score" for name, _ in default)
    opted = _samples(_exposition(MonitorCollector({"m": _monitor()}, distortion_prone=True)))
    prone = {dict(labels)["metric"] for (name, labels) in opted if name == "streammon_distortion_prone_score"}
    assert prone and not any(catalog()[m].condition1 for m in prone) and "precision" in prone


def test_values_are_the_reports_values_and_counters_are_lifetime_totals() -> None:
    """Gauges carry the report's numbers; the per-class counters count every sample ever seen."""
    monitor = _monitor()
    w = monitor.report().windows["sliding_4"]
    samples = _samples(_exposition(MonitorCollector({"m": monitor}, confusion=True)))
    key = (("metric", "gmean"), ("model", "m"), ("window", "sliding_4"))
    assert samples[("streammon_score", key)] == pytest.approx(w.scores["gmean"])
    assert samples[("streammon_class_samples_total", (("class", "fraud"), ("model", "m")))] == 4
    assert samples[("streammon_class_correct_total", (("class", "fraud"), ("model", "m")))] == 2
    assert samples[("streammon_class_predicted_total", (("class", "legit"), ("model", "m")))] == 7
    assert samples[("streammon_samples_total", (("model", "m"),))] == 10
    confusion_key = (("model", "m"), ("pred_class", "legit"), ("true_class", "fraud"))
    assert samples[("streammon_confusion_total", confusion_key)] == 2
    flag = samples[("streammon_distortion_flag", (("metric", "precision"), ("model", "m"), ("type", "type1"),
                                                  ("window", "cumulative")))]
    assert flag == float("precision" in monitor.report().windows["cumulative"].flagged("type1"))


def test_undefined_values_are_nan_and_no_created_series() -> None:
    """An empty window exports NaN (never 0) and counters have no _created samples."""
    text = _exposition(MonitorCollector({"m": Monitor([Sliding(5)], reference={"a": 1, "b": 1})}))
    samples = _samples(text)
    assert math.isnan(samples[("streammon_score", (("metric", "acsa"), ("model", "m"), ("window", "sliding_5")))])
    assert math.isnan(samples[("streammon_rrt", (("model", "m"), ("window", "sliding_5")))])
    assert "_created" not in text


def test_describe_names_every_collected_family_and_nothing_registers_at_import() -> None:
    """describe() lists exactly what collect() yields; importing streammon leaves the global registry alone."""
    collector = MonitorCollector({"m": _monitor()}, distortion_prone=True, confusion=True)
    assert [m.name for m in collector.describe()] == [m.name for m in collector.collect()]
    assert {f.name for f in exported_families()} == set(FAMILIES) - {"streammon_distortion_prone_score",
                                                                       "streammon_confusion"}
    assert not any(name.startswith("streammon") for name in REGISTRY._names_to_collectors)


def test_one_collector_serves_many_models() -> None:
    """Monitors are told apart by the model label; duplicate or bad names are rejected."""
    collector = MonitorCollector({"a": _monitor()})
    collector.add("b", Monitor([Sliding(3)]))
    models = {dict(labels)["model"] for (_, labels) in _samples(_exposition(collector))}
    assert models == {"a", "b"}
    with pytest.raises(ValueError, match="already served"):
        collector.add("a", _monitor())
    with pytest.raises(TypeError, match=r"streammon\.Monitor"):
        collector.add("c", object())  # type: ignore[arg-type]
    collector.remove("a")
    assert collector.models == ("b",)


@pytest.mark.prometheus
def test_promtool_check_metrics_is_clean(promtool: str) -> None:
    """promtool check metrics reports nothing on the exposition, with every optional family on."""
    text = _exposition(MonitorCollector({"m": _monitor()}, distortion_prone=True, confusion=True))
    result = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout.strip() == "" and result.stderr.strip() == "", result


def test_label_values_with_quotes_newlines_and_unicode_survive_a_real_scrape() -> None:
    """Class labels with quotes, backslashes, newlines and unicode are escaped in the exposition and parse back."""
    odd = ['say "hi"', "back\\slash", "two\nlines", "café ☕"]
    monitor = Monitor([Cumulative()], classes=odd)
    monitor.update_many(odd, odd[::-1])
    with serve(monitor, port=0, model="odd") as server:
        body = urllib.request.urlopen(server.url, timeout=5).read().decode()
    classes = {dict(labels).get("class") for (name, labels) in _samples(body) if name == "streammon_recall"}
    assert classes == set(odd)


def test_server_binds_loopback_and_enforces_basic_auth() -> None:
    """The server binds 127.0.0.1 by default; with basic auth, no or wrong credentials get 401."""
    with serve(_monitor(), port=0, basic_auth=("prom", "s3cret")) as server:
        assert server.addr == "127.0.0.1"
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(server.url, timeout=5)
        assert denied.value.code == 401
        wrong = urllib.request.Request(server.url, headers={"Authorization": "Basic " + b64encode(b"prom:x").decode()})
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(wrong, timeout=5)
        credentials = "Basic " + b64encode(b"prom:s3cret").decode()
        good = urllib.request.Request(server.url, headers={"Authorization": credentials})
        assert b"streammon_samples_total" in urllib.request.urlopen(good, timeout=5).read()


def test_tls_options_need_a_certificate() -> None:
    """Asking for TLS settings without certfile= is an error, not a silent plain-HTTP server."""
    with pytest.raises(ValueError, match="certfile"):
        serve(_monitor(), port=0, keyfile="key.pem")


def test_tls_serves_https_on_loopback(tls_cert: tuple[Path, Path]) -> None:
    """With certfile/keyfile the endpoint speaks HTTPS: a client trusting the certificate scrapes it,
    a plain-HTTP client cannot."""
    import ssl

    cert, key = tls_cert
    with serve(_monitor(), port=0, certfile=str(cert), keyfile=str(key)) as server:
        assert server.url.startswith("https://127.0.0.1:")
        context = ssl.create_default_context(cafile=str(cert))
        body = urllib.request.urlopen(server.url, context=context, timeout=5).read()
        assert b"streammon_samples_total" in body
        with pytest.raises(OSError):
            urllib.request.urlopen(server.url.replace("https://", "http://"), timeout=5).read()


@pytest.mark.parametrize("options", [{}, {"distortion_prone": True, "confusion": True}])
def test_cached_scrape_is_byte_identical_to_a_fresh_one(options: dict[str, bool]) -> None:
    """Samples reused from the last scrape (unchanged reports) give the exposition a fresh collector gives."""
    plain = Monitor([Cumulative(), Sliding(6)], reference={"a": 3, "b": 1})
    labelled = Monitor([Cumulative(), Sliding(4)], reference={"a": 1, "b": 1})
    monitors = {"plain": plain, "labelled": labelled, "idle": Monitor([Sliding(5)])}
    collector = MonitorCollector(monitors, **options)
    previous = None
    for step in range(6):
        if step % 2 == 0:  # odd steps scrape again without new samples
            plain.update_many(["a", "b", "a"] * (step + 1), ["a", "a", "b"] * (step + 1))
            labelled.predict(f"k{step}", "b", t=float(step))
            labelled.label(f"k{step}", "a" if step else "b", t=step + 2.0)
            labelled.update("b", "b")
        before = collector._samples.get("plain")
        text = _exposition(collector)
        assert text == _exposition(MonitorCollector(monitors, **options))
        if step % 2:
            assert text == previous
            assert before is not None and collector._samples["plain"][-1] is before[-1]  # reused, not rebuilt
        previous = text
    reused = collector._samples["idle"][-1]
    _exposition(collector)
    assert collector._samples["idle"][-1] is reused  # the idle model's samples were not rebuilt
    collector.remove("idle")
    assert "idle" not in _exposition(collector)


def test_exposition_equals_generate_latest_and_is_reused_while_unchanged() -> None:
    """``exposition()`` is ``generate_latest`` of the collector alone; unchanged, it returns the same bytes."""
    monitor = _monitor()
    collector = MonitorCollector({"m": monitor, "idle": _monitor()})
    first = collector.exposition()
    assert first.decode() == _exposition(MonitorCollector({"m": monitor, "idle": collector._monitors["idle"]}))
    assert collector.exposition() is first
    _exposition(collector)  # a registry scrape in between leaves the samples as they are
    assert collector.exposition() is first
    monitor.update("fraud", "fraud")
    second = collector.exposition()
    assert second != first and second.decode() == _exposition(MonitorCollector(collector._monitors))
    collector.remove("idle")
    assert collector.exposition().decode() == _exposition(MonitorCollector({"m": monitor}))
