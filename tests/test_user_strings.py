"""The one rule for user strings (``streammon.counting.user_text``): every hostile string, as a class label, a
window name and a model name, is either refused where it enters — with a clear error, nothing changed — or comes
back exactly from every output (the exposition parsed by prometheus_client, ``Report.to_dict`` JSON, the timeline
as JSON and Parquet, the HTML report read by an HTML parser and drawn in Chromium) and is inert there."""

from __future__ import annotations

import contextlib
import html
import json
import re
import tempfile
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

pytest.importorskip("plotly")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")

from prometheus_client.openmetrics.parser import (  # noqa: E402
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families as text_families  # noqa: E402

import streammon  # noqa: E402
from streammon import Cumulative, Monitor, Sliding  # noqa: E402
from streammon.export import MonitorCollector, serve  # noqa: E402
from streammon.logs.report_page import html_page  # noqa: E402
from streammon.logs.timeline import Timeline  # noqa: E402
from tests.strategies import HOSTILE_STRINGS, user_strings  # noqa: E402

READY = "!!document.body && ('rendered' in document.body.dataset || 'failed' in document.body.dataset)"
DATA_START = "<script>const {AXES, FIGURES} = "


def accepted(text: str) -> bool:
    """The rule restated independently: 1 to 256 code points, none of them a surrogate."""
    return 1 <= len(text) <= 256 and not any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def _other(text: str) -> str:
    return "other" if text != "other" else "else"


def _fed(text: str) -> Monitor:
    """A monitor whose window is named ``text`` and whose classes are ``text`` and another, recall 1/2 each."""
    other = _other(text)
    monitor = Monitor([Cumulative(name=text)])
    monitor.update_many([text, other, text, other], [text, text, other, other])
    return monitor


def _samples(families: Iterator[Any], family: str) -> list[Any]:
    return [s for f in families if f.name == family for s in f.samples]


class _Page(HTMLParser):
    """What an HTML parser reads from the report: the text outside scripts, script bodies, the <title>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[str] = []
        self.text: list[str] = []
        self.title = ""
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in = tag if tag in ("script", "title", "h1", "dd") else self._in
        if tag == "script":
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "script":
            self.scripts[-1] += data
        elif self._in == "title":
            self.title += data
        else:
            self.text.append(data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=user_strings())
def test_every_user_string_is_refused_at_input_or_comes_back_exactly_from_every_output(text: str) -> None:
    """A string the rule refuses is refused as label, window name, model name and report text with an error
    naming which; an accepted one comes back exactly from the exposition, to_dict JSON, timeline and HTML."""
    if not accepted(text):
        with pytest.raises(ValueError, match=r"^window name "):
            Cumulative(name=text)
        with pytest.raises(ValueError, match=r"^model name "):
            MonitorCollector({text: Monitor()})
        monitor = Monitor([Cumulative()])
        with pytest.raises(ValueError, match=r"^label "):
            monitor.update_many([text, "a"], ["a", text])
        assert monitor.samples == 0 and monitor.report().labels == ()
        return
    monitor = _fed(text)
    other = _other(text)
    collector = MonitorCollector({text: monitor})
    for parse, openmetrics in ((text_families, False), (openmetrics_families, True)):
        recall = _samples(parse(collector.exposition(openmetrics=openmetrics).decode("utf-8")), "streammon_recall")
        assert {(s.labels["model"], s.labels["window"], s.labels["class"], s.value) for s in recall} == {
            (text, text, text, 0.5), (text, text, other, 0.5)}
    encoded = json.loads(json.dumps(monitor.report().to_dict(), allow_nan=False))
    assert list(encoded["windows"]) == [text] and encoded["windows"][text]["name"] == text
    assert [entry["value"] for entry in encoded["labels"]] == [text, other]
    timeline = Timeline()
    timeline.add(1.0, monitor.report())
    with tempfile.TemporaryDirectory() as folder:
        timeline.write(Path(folder) / "t.json")
        timeline.write(Path(folder) / "t.parquet")
        rows = json.loads((Path(folder) / "t.json").read_text(encoding="utf-8"))
        table = pq.read_table(Path(folder) / "t.parquet").to_pydict()
    for windows, classes in (([r["window"] for r in rows], [r["class"] for r in rows]),
                             (table["window"], table["class"])):
        assert set(windows) == {text} and set(classes) == {None, text, other}
    _check_page(text, other)


def _check_page(text: str, other: str) -> None:
    """The report with ``text`` as class, window name, title and mark: the parser sees the two scripts whole,
    the data script holds no ``<`` and carries ``text`` as Plotly text, the page's text reads ``text``."""
    frame = pd.DataFrame({"y": [text, other, text, other], "p": [text, text, other, other]})
    result = streammon.replay(frame, true="y", pred="p", every=2, windows=[Cumulative(name=text)])
    page = html_page(result, title=text, marks=[(1.0, text)])
    parsed = _Page()
    parsed.feed(page)
    parsed.close()
    assert len(parsed.scripts) == 2 and parsed.title == text
    data = parsed.scripts[1]
    assert data.startswith(DATA_START[len("<script>"):]) and data.rstrip().endswith("});")
    inline = data[len(DATA_START) - len("<script>"):data.index(";\nconst CONFIG")]
    assert "<" not in inline and ">" not in inline and "&" not in inline and inline.isascii()
    figures = json.loads(inline)["FIGURES"]
    confusion = next(f for f in figures if f["id"] == "w0-confusion")
    assert [html.unescape(x) for x in confusion["layout"]["xaxis"]["ticktext"]] == [text, other]
    assert html.unescape(confusion["layout"]["title"]["text"]) == f"Final confusion matrix — window {text}"
    scores = next(f for f in figures if f["id"] == "w0-scores")
    assert [html.unescape(a["text"]) for a in scores["layout"]["annotations"]] == [text]
    assert all(re.search(r"<(?!br>|/?b>)", f["layout"]["title"]["text"]) is None for f in figures)
    assert text in parsed.text  # the <h1>


def _visible(text: str) -> str:
    """What Plotly draws for a line break inside a string: a space."""
    return re.sub(r"\r\n|\r|\n", " ", text)


def _html_text(text: str) -> str:
    """What HTML carries of a string in the page's text: line breaks normalised to LF, NUL dropped by the parser."""
    return re.sub(r"\r\n|\r", "\n", text).replace("\x00", "")


def test_a_page_of_hostile_labels_draws_every_figure_with_the_labels_as_text(browser: Any, tmp_path: Path) -> None:
    """Every accepted hostile string as a class, window names, title and mark in one page: every figure draws,
    no link or styled text comes from them, and the SVG text and the page text are the literal strings."""
    labels = [s for s in HOSTILE_STRINGS if accepted(s)]
    rows = [(t, p) for t in labels for p in (t, labels[(labels.index(t) + 1) % len(labels)])]
    frame = pd.DataFrame(rows * 3, columns=["y", "p"])
    windows = ["<!--<script>", '<a href="https://evil">w</a>', '<span style="color:red">w</span>']
    result = streammon.replay(frame, true="y", pred="p", every=len(rows),
                              windows=[Cumulative(name=windows[0]), Sliding(len(rows), name=windows[1]),
                                       Sliding(2 * len(rows), name=windows[2])])
    page = tmp_path / "hostile.html"
    result.write_html(page, title='<b>title</b><a href="https://evil">', marks=[(len(rows), "<i>mark</i>&amp;")])
    browser.open(page.resolve().as_uri(), READY)
    assert browser.evaluate("document.body.dataset.failed || ''") == ""
    figures = browser.evaluate("document.querySelectorAll('.js-plotly-plot').length")
    assert figures == 18 and int(browser.evaluate("document.body.dataset.rendered")) == figures
    errors = [(kind, text) for kind, text in browser.console if kind in ("error", "exception", "assert")]
    assert errors == [] and [u for u in browser.requests if u.startswith("http")] == []
    links = browser.evaluate("[...document.querySelectorAll('a')].map(a => a.getAttribute('href') || "
                             "a.getAttribute('xlink:href') || '')")
    assert links and all(link.startswith("#") for link in links), links
    styled = browser.evaluate("[...document.querySelectorAll('.js-plotly-plot svg tspan[style]')]"
                              ".map(t => t.getAttribute('style'))")
    assert not any("red" in s or "255, 0, 0" in s for s in styled), styled
    assert browser.evaluate("document.title") == '<b>title</b><a href="https://evil">'
    for w, name in enumerate(windows):
        ticks = browser.evaluate(f"[...document.querySelectorAll('#w{w}-confusion .xtick text')]"
                                 ".map(t => t.textContent)")
        assert sorted(ticks) == sorted(_visible(s) for s in labels), set(map(_visible, labels)) ^ set(ticks)
        legend = browser.evaluate(f"[...document.querySelectorAll('#w{w}-recall .legendtext')]"
                                  ".map(t => t.textContent)")
        assert sorted(legend) == sorted(f"recall of {_visible(s)}" for s in labels)
        bold = browser.evaluate(f"[...document.querySelectorAll('#w{w}-recall svg [style*=bold], "
                                f"#w{w}-confusion svg [style*=bold]')].length")
        assert bold == 0
        title = browser.evaluate(f"document.querySelector('#w{w}-confusion .gtitle').textContent")
        assert title == f"Final confusion matrix — window {name}"
        notes = browser.evaluate(f"[...document.querySelectorAll('#w{w}-scores .annotation-text')]"
                                 ".map(t => t.textContent)")
        assert notes == ["<i>mark</i>&amp;"]
        heading = browser.evaluate(f"document.getElementById('window-{w}').textContent")
        assert heading == _html_text(f"Window {name}")
    classes = browser.evaluate("[...document.querySelectorAll('dt')].find(d => d.textContent === 'Classes')"
                               ".nextElementSibling.textContent")
    assert classes == _html_text(", ".join(labels))


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        return str(answer.read().decode("utf-8"))


def test_hostile_model_and_window_names_are_served_beside_a_healthy_model() -> None:
    """Served over HTTP next to a healthy model, every accepted hostile string as model and window name
    is scraped back exactly; a refused one stops ``serve`` before anything listens."""
    names = [s for s in HOSTILE_STRINGS if accepted(s)]
    models = {"healthy": _fed("fraud"), **{name: _fed(name) for name in names}}
    with contextlib.ExitStack() as stack:
        server = serve(models, port=0)
        stack.callback(server.stop)
        recall = _samples(text_families(_scrape(server.port)), "streammon_recall")
    seen = {(s.labels["model"], s.labels["window"]) for s in recall if s.labels["class"] != "other"}
    assert seen == {("healthy", "fraud"), *((name, name) for name in names if name != "other")}
    for bad in [s for s in HOSTILE_STRINGS if not accepted(s)]:
        with pytest.raises(ValueError, match=r"^model name "):
            serve({"healthy": Monitor(), bad: Monitor()}, port=0)
        with pytest.raises(ValueError, match=r"^window name "):
            Sliding(5, name=bad)


def test_a_state_file_naming_a_window_against_the_rule_is_refused_on_load(tmp_path: Path) -> None:
    """A state file (checksum recomputed) whose window name holds a lone surrogate is a StateError at load."""
    from streammon import state

    monitor = Monitor([Cumulative(name="w")])
    monitor.update_many(["a", "b"], ["a", "a"])
    body = json.loads(monitor.dumps())["body"]
    text = json.dumps(body)
    assert text.count('"w"') == 1  # the window's name, nothing else
    path = tmp_path / "s.json"
    path.write_text(state.dumps(json.loads(text.replace('"w"', '"w\\ud800"'))), encoding="utf-8")
    with pytest.raises(state.StateError, match=r"window name 'w(\\)+ud800' holds a lone surrogate"):
        Monitor.load(path)


def test_an_undecodable_file_name_shows_in_the_report_and_writes(tmp_path: Path) -> None:
    """A log whose file name is not UTF-8 (a surrogate escape in ``source``) still gives a report that writes, the
    undecodable byte shown as its escape."""
    frame = pd.DataFrame({"y": ["a", "b"], "p": ["a", "a"]})
    result = streammon.replay(frame, true="y", pred="p", every=1)
    import dataclasses

    named = dataclasses.replace(result, source="log-\udcff.csv")
    named.write_html(tmp_path / "r.html")
    assert "log-\\udcff.csv" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_terminal_output_escapes_what_a_terminal_would_act_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                              ) -> None:
    """``streammon report`` of a monitor whose labels and window name hold ESC sequences, line breaks, NUL and a
    bidi override prints only printable characters, one line per item, the strings readable as escapes; an alert
    logged while the CLI shows alerts is escaped the same way."""
    import logging

    from streammon.cli import main
    from streammon.commands.common import alert_log

    hostile = ["\x1b[2J\x1b]0;owned\x07", "ok\nALERT forged", "\u202efraud", "nul\x00"]
    monitor = Monitor([Cumulative(name="w\x1b[31m\r")])
    monitor.update_many(hostile * 5, hostile[1:] + hostile[:1] + hostile * 4)
    monitor.save(tmp_path / "s.json")
    assert main(["report", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    lines = out.split("\n")
    assert all(line.isprintable() for line in lines)
    assert len(lines) == 4 and lines[2:] == ["  no active alerts", ""]  # header, the window, no alert, end
    assert "w\\x1b[31m\\r" in lines[1] and "'ok\\nALERT forged'" in lines[0]
    with alert_log(to_stderr=True):
        logging.getLogger("streammon.alerts").warning("alert raised: degradation in %s on %s", "w\x1b[31m",
                                                      "ok\nALERT forged")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.rstrip("\n").isprintable()
    assert err.rstrip("\n").endswith("alert raised: degradation in w\\x1b[31m on ok\\nALERT forged")
