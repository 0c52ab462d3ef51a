"""The HTML report's figure layout, as a newcomer reads it: the RRT log axis shows plain powers of ten only, the
mode bar covers no title, and the small multiples have a legend; pinned in the figure JSON and checked in
headless Chromium (ticks drawn, bounding boxes, legend items)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("plotly")
pytest.importorskip("pyarrow")
pytest.importorskip("pandas")

import streammon
from streammon.logs.report_axes import MODEBAR_PX
from streammon.logs.report_page import html_page
from tests.replay_data import BASELINE, REFERENCE, log_frame

READY = "!!document.body && ('rendered' in document.body.dataset || 'failed' in document.body.dataset)"


@pytest.fixture(scope="module")
def result() -> Any:
    """A replay whose report has every figure kind (timestamps, a reference and a baseline)."""
    return streammon.replay(log_frame(), true="y", pred="p", time="ts", every="15m", reference=REFERENCE,
                            baseline=BASELINE)


def _figures(result: Any) -> list[dict[str, Any]]:
    """The FIGURES array inlined in the page, parsed back from the page text."""
    page = html_page(result)
    start = page.index("const {AXES, FIGURES} = ") + len("const {AXES, FIGURES} = ")
    data, _ = json.JSONDecoder().raw_decode(page[start:])
    return data["FIGURES"]  # type: ignore[no-any-return]


def test_rrt_axis_ticks_are_powers_of_ten_only(result: Any) -> None:
    """Each RRT figure's log axis has tick values 10**k covering every RRT value and the IR, labelled by the number
    itself (no 2/5 minor digits), with minor ticks off."""
    for figure in (f for f in _figures(result) if f["id"].endswith("-rrt")):
        axis = figure["layout"]["yaxis"]
        assert axis["type"] == "log" and axis["tickmode"] == "array"
        assert all(math.log10(v) == round(math.log10(v)) for v in axis["tickvals"])
        assert axis["ticktext"] == [f"{v:,}" if v >= 1 else f"{v:g}" for v in axis["tickvals"]]
        values = [v for v in figure["data"][0]["y"] if v is not None] + [result.reference.ir]
        low, high = axis["range"]
        assert 10 ** low <= min(values) and max(values) <= 10 ** high and high > low
        assert "dtick" not in axis and axis["minor"]["ticks"] == ""


def test_every_title_starts_below_the_mode_bar(result: Any) -> None:
    """Every figure's title is anchored (container coordinates) at least MODEBAR_PX below the figure's top, and
    above the plot area (its top margin)."""
    for figure in _figures(result):
        layout = figure["layout"]
        title = layout["title"]
        assert title["yref"] == "container" and title["yanchor"] == "top", figure["id"]
        top_px = (1 - title["y"]) * layout["height"]
        assert top_px >= MODEBAR_PX - 1e-9, figure["id"]
        assert top_px + title["font"]["size"] * 1.3 <= layout["margin"]["t"], figure["id"]


def test_small_multiples_have_one_legend_of_the_two_styles(result: Any) -> None:
    """The mix-distorted scores' small multiples show a legend: one item per line style (observed, at the
    reference mix), the other panels' traces grouped with them."""
    for figure in (f for f in _figures(result) if f["id"].endswith("-mixed")):
        assert figure["layout"]["showlegend"] is True
        shown = [t for t in figure["data"] if t.get("showlegend", True)]
        assert [t["name"] for t in shown] == ["as observed (solid)", "at the reference mix (dashed)"]
        assert {t["legendgroup"] for t in figure["data"]} == {"observed", "corrected"}
        dashed = {t["legendgroup"] for t in figure["data"] if t["line"].get("dash") == "dash"}
        assert dashed == {"corrected"}


DRAWN = """[...document.querySelectorAll('.js-plotly-plot')].map(d => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const bar = d.querySelector('.modebar'), title = d.querySelector('.gtitle');
  return {id: d.id, bar: bar ? box(bar) : null, title: title ? box(title) : null,
          ticks: [...d.querySelectorAll('.ytick text')].map(t => t.textContent),
          legend: [...d.querySelectorAll('.legend .traces .legendtext')].map(t => t.textContent)};
})"""


def test_in_chromium_no_title_is_covered_ticks_are_plain_and_the_legend_draws(browser: Any, result: Any,
                                                                               tmp_path: Path) -> None:
    """In Chromium, with the mode bar shown: its box meets no title's box; the RRT axis draws 1, 10, 100 (no
    minor digit); the small multiples draw the two legend items; a screenshot is kept."""
    page = tmp_path / "report.html"
    result.write_html(page)
    browser.open(page.resolve().as_uri(), READY)
    assert browser.evaluate("document.body.dataset.failed || ''") == ""
    browser.evaluate("document.head.appendChild(Object.assign(document.createElement('style'), "
                     "{textContent: '.modebar{opacity:1 !important}'})) && 1")
    drawn = browser.evaluate(DRAWN)
    assert len(drawn) == 6 * len(result.windows)
    for figure in drawn:
        (a0, a1, a2, a3), (b0, b1, b2, b3) = figure["bar"], figure["title"]
        assert a2 < b0 or b2 < a0 or a3 <= b1 or b3 <= a1, figure  # disjoint boxes
        if figure["id"].endswith("-rrt"):
            assert figure["ticks"] and set(figure["ticks"]) <= {"0.01", "0.1", "1", "10", "100", "1,000", "10,000"}, (
                figure["ticks"])
        if figure["id"].endswith("-mixed"):
            assert figure["legend"] == ["as observed (solid)", "at the reference mix (dashed)"]
    browser.screenshot(tmp_path / "report.png")
