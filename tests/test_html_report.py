"""The HTML report, opened in headless Chromium as a person would: every figure drew, nothing came from the
network, the console stayed clean, and a screenshot is kept under the test's temporary directory."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("plotly")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("pandas")

import streammon  # noqa: E402
from streammon.cli import main  # noqa: E402
from streammon.logs.report_page import html_page  # noqa: E402
from tests.replay_data import BASELINE, REFERENCE, log_frame  # noqa: E402

READY = "!!document.body && ('rendered' in document.body.dataset || 'failed' in document.body.dataset)"
# Per figure: its id, the traces Plotly holds, and what it drew (points, line paths with data, heatmap images).
DRAWN = """[...document.querySelectorAll('.js-plotly-plot')].map(d => ({
  id: d.id, traces: d.data.length, names: d.data.map(t => t.name || ''),
  points: d.querySelectorAll('svg .scatterlayer .point').length,
  lines: [...d.querySelectorAll('svg .scatterlayer path.js-line')].filter(p => (p.getAttribute('d') || '').length > 10)
    .length,
  images: d.querySelectorAll('svg .hm image').length,
  notes: (d.layout.annotations || []).map(a => a.text)}))"""
FIGURES_PER_WINDOW = 6  # scores, recall, RRT, prior shift, mix-distorted scores, confusion matrix


def _open(browser: Any, page: Path, shot: Path) -> list[dict[str, Any]]:
    """Open the report, check it drew offline and cleanly, keep a screenshot; the figures as drawn."""
    url = page.resolve().as_uri()
    browser.open(url, READY)
    assert browser.evaluate("document.body.dataset.failed || ''") == ""
    fetched = [u for u in browser.requests if u != url and not u.startswith("data:")]
    assert fetched == [], f"the page fetched {fetched}: it must open offline"
    errors = [(kind, text) for kind, text in browser.console if kind in ("error", "exception", "assert")]
    assert errors == [], errors
    browser.screenshot(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
    drawn: list[dict[str, Any]] = browser.evaluate(DRAWN)
    assert int(browser.evaluate("document.body.dataset.rendered")) == len(drawn)
    for figure in drawn:
        if figure["id"].endswith("-confusion"):
            assert figure["images"] == 1, figure
        else:
            assert figure["points"] > 0 and figure["lines"] > 0, figure
    return drawn


def test_replay_report_draws_every_figure_offline(browser: Any, tmp_path: Path) -> None:
    """A replayed log's report: per window six figures drawn with data, the alerts in the header, degradation
    alerts as markers at their times, no request beyond the file, no console error; a screenshot is written."""
    result = streammon.replay(log_frame(), true="y", pred="p", time="ts", every="15m", reference=REFERENCE,
                              baseline=BASELINE)
    page = tmp_path / "report.html"
    result.write_html(page)
    drawn = _open(browser, page, tmp_path / "report.png")
    assert len(drawn) == FIGURES_PER_WINDOW * len(result.windows)
    header = browser.evaluate("document.querySelector('dl').innerText")
    assert "2023-11-14 22:13:20 UTC" in header and "30,000" in header and "legit, fraud" in header
    assert "legit 95.00%, fraud 5.00%" in header and "fraud 0.8" in header
    rows = browser.evaluate("[...document.querySelectorAll('tr[class^=alert-]')].map(r => r.innerText)")
    keys = {(a.kind, a.window, a.subject) for a in result.alerts}
    assert len(keys) <= len(rows) <= len(result.alerts) and rows[0].startswith("degradation") and "fraud" in rows[0]
    # the first window shown is where fraud's recall interval stayed furthest below its baseline (median)
    frame = result.timeline.to_pandas()
    drop = next(a for a in result.alerts if a.kind == "degradation")
    fraud = frame[(frame.metric == "class_recall") & (frame["class"] == "fraud")]
    during = fraud[fraud.samples >= drop.first_seen.samples]
    clearest = (result.baseline["fraud"] - during.groupby("window")["upper"].median()).idxmax()
    assert browser.evaluate("document.querySelector('h2[id^=window-]').innerText") == f"Window {clearest}"
    assert clearest != "cumulative"
    assert clearest in browser.evaluate("document.getElementById('w0-recall').layout.title.text")
    drop = next(a for a in result.alerts if a.kind == "degradation")
    for w in range(len(result.windows)):
        marker = browser.evaluate(f"document.getElementById('w{w}-recall').data.find(t => t.name.startsWith("
                                  "'degradation')).x")
        assert marker == [pytest.approx(drop.since_time * 1000)]
    facts = browser.evaluate("document.getElementById('facts').nextElementSibling.nextElementSibling.innerText")
    assert "Average class-specific accuracy" in facts and "Precision of a class" in facts


def test_demo_report_marks_the_four_phases(browser: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``streammon demo --html`` writes, at once, a report of the demo's four phases that draws in the browser,
    each phase marked on the time figures, the new class in the final confusion matrix."""
    page = tmp_path / "demo.html"
    assert main(["demo", "--html", str(page), "--rate", "1000", "--phase-seconds", "30"]) == 0
    assert "wrote" in capsys.readouterr().out
    drawn = _open(browser, page, tmp_path / "demo.png")
    assert len(drawn) == FIGURES_PER_WINDOW * 3
    scores = next(f for f in drawn if f["id"] == "w0-scores")
    assert scores["notes"] == ["steady", "mix_drift", "degradation", "new_class"]
    labels = browser.evaluate("document.getElementById('w0-confusion').layout.xaxis.ticktext")
    assert labels == ["legit", "fraud", "chargeback"]


def test_replay_command_writes_a_self_contained_page(tmp_path: Path) -> None:
    """``streammon replay --html`` writes one page that names no external resource and embeds plotly.js once;
    times without timestamps are read as seconds of data time."""
    frame = log_frame(n=6_000)
    path = tmp_path / "log.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    page = tmp_path / "out.html"
    assert main(["replay", str(path), "--true", "y", "--pred", "p", "--time", "ts", "--every", "1h",
                 "--reference", "legit=95,fraud=5", "--html", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert text.count("plotly.js v") == 1 and "<script src" not in text and "<link" not in text
    assert "cdn." not in text.split("</script>", 1)[1]
    seconds = streammon.replay(frame.assign(s=frame["seconds"] - frame["seconds"].iloc[0]), true="y", pred="p",
                               time="s", every="30m")
    assert '"type":"date"' not in html_page(seconds) and "time of the data (seconds)" in html_page(seconds)


def test_a_flapping_alert_is_one_row() -> None:
    """Every alert repeated 41 times (as a flapping alert would be): one row per (kind, window, subject), each
    saying it merged 41 on-periods, the degradation first."""
    import dataclasses
    import re

    result = streammon.replay(log_frame(n=6_000), true="y", pred="p", time="ts", every="1h", reference=REFERENCE,
                              baseline=BASELINE)
    many = dataclasses.replace(result, alerts=result.alerts * 41)
    text = html_page(many)
    keys = {(a.kind, a.window, a.subject) for a in result.alerts}
    assert f"Alerts: {len(keys)} episodes ({len(many.alerts):,} on-periods)" in text
    rows = re.findall(r'<tr class="alert-([a-z_]+)">(.*?)</tr>', text)
    assert len(rows) == len(keys) and all("<td>41</td>" in row for _, row in rows)
    assert rows[0][0] == "degradation"


def test_long_replays_are_thinned_but_flags_keep_full_resolution() -> None:
    """At most 2,000 snapshots are drawn per trace; a flag raised at a single snapshot still shades its span."""
    from streammon.logs.report_series import spans, thin

    keep = thin(8_760)
    assert len(keep) == 2_000 and keep[0] == 0 and keep[-1] == 8_759
    x = [float(i) for i in range(8_760)]
    mask = [i == 4_321 for i in range(8_760)]
    assert spans(x, mask) == [(4_320.0, 4_321.0)]
    many = spans(x, [i % 3 == 0 for i in range(8_760)])
    assert len(many) <= 200 and many[0][0] == 0.0 and math.isclose(many[-1][1], 8_757.0)
