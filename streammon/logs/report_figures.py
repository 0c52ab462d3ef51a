"""The figures of the HTML report, as Plotly figure specifications (plain dicts: data, layout).

Each time figure leaves ``x`` out of its line traces: the page fills in the window's thinned axis
once (``"xs"`` is its index), so the times are written once per window, not once per trace. Values
are thinned to at most ``MAX_POINTS`` snapshots (``report_series.thin``); shaded spans and alert
markers are computed at full resolution.

Plotly draws text as a subset of HTML (``<a href>``, ``<b>``, ``<span style>``, ``<br>``, entities): every
user string (class labels, window names, alert subjects and reasons, mark texts) goes through ``plain``
before it reaches a figure, so it is drawn as the text it is (``streammon.counting.user_text``).

>>> plain('<a href="https://x">fraud</a> & co')
'&lt;a href="https://x"&gt;fraud&lt;/a&gt; &amp; co'
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammon.logs.report_axes import MODEBAR_PX, log_ticks, title_below_modebar
from streammon.logs.report_series import Axis, WindowSeries, rounded, spans
from streammon.logs.spans import AlertSpan
from streammon.metrics.specs import catalog

Figure = dict[str, Any]
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
INVARIANT = ("acsa", "gmean", "min_recall")  # the Condition-1 scores with intervals
NAMES = {"acsa": "balanced accuracy (ACSA, mean recall)", "gmean": "G-mean of recalls",
         "min_recall": "minimum class recall"}
SHADE = "rgba(214, 39, 40, 0.12)"
HEIGHT = 340


@dataclass(frozen=True)
class Panel:
    """What every time figure of one window reads: its name, series, the axis and the snapshots kept."""

    window: str
    series: WindowSeries
    axis: Axis
    keep: Sequence[int]
    marks: Sequence[tuple[float, str]] = ()  # labelled vertical lines, in axis units
    xs: int = 0  # the index of the window's axis in the page's AXES (never its name: names are data, not keys)

    @property
    def title(self) -> str:
        """The window's name as Plotly text."""
        return plain(self.window)

    def values(self, metric: str, label: str | None = None, column: str = "value") -> list[float | None]:
        """A column of a metric at the kept snapshots, rounded."""
        return rounded(self.series.get(column, metric, label), self.keep)


def plain(text: str) -> str:
    """``text`` as Plotly shows it literally: ``&``, ``<`` and ``>`` as entities (Plotly decodes them back)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _band(color: str) -> str:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r}, {g}, {b}, 0.18)"


def _layout(title: str, axis: Axis, y_title: str, **extra: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "title": title_below_modebar(title, HEIGHT + 40),
        "height": HEIGHT, "margin": {"l": 70, "r": 20, "t": 60, "b": 50},
        "xaxis": {"title": {"text": axis.title}, "type": "date" if axis.kind == "date" else "linear"},
        "yaxis": {"title": {"text": y_title}},
        "legend": {"orientation": "h", "y": -0.25}, "hovermode": "x unified",
        "plot_bgcolor": "white", "paper_bgcolor": "white",
    }
    layout.update(extra)
    layout["height"] += 40  # room for the legend under the axis
    layout["margin"]["b"] += 40
    return layout


def _line(name: str, y: list[float | None], color: str, **extra: Any) -> dict[str, Any]:
    return {"type": "scatter", "mode": "lines+markers", "name": name, "y": y, "line": {"color": color, "width": 2},
            "marker": {"size": 3, "color": color}, **extra}


def _bands(name: str, panel: Panel, metric: str, label: str | None, *, color: str) -> list[dict[str, Any]]:
    """An interval as a filled band: upper edge (invisible), then lower edge filled up to it."""
    upper = panel.values(metric, label, "upper")
    lower = panel.values(metric, label, "lower")
    if not any(v is not None for v in upper):
        return []
    edge = {"type": "scatter", "mode": "lines", "line": {"width": 0, "color": color}, "hoverinfo": "skip",
            "showlegend": False, "legendgroup": name}
    return [{**edge, "name": f"{name} upper", "y": upper},
            {**edge, "name": f"{name} 95 % interval", "y": lower, "fill": "tonexty", "fillcolor": _band(color)}]


def _shades(x: Sequence[float], mask: Sequence[bool], xref: str = "x", yref: str = "paper") -> list[dict[str, Any]]:
    return [{"type": "rect", "xref": xref, "yref": yref,
             "x0": a, "x1": b, "y0": 0, "y1": 1, "fillcolor": SHADE, "line": {"width": 0}, "layer": "below"}
            for a, b in spans(x, mask)]


def _marks(marks: Sequence[tuple[float, str]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Labelled vertical lines (e.g. the demo's phases): shapes and their annotations."""
    shapes = [{"type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0, "y1": 1,
               "line": {"color": "#555", "width": 1, "dash": "dot"}} for x, _ in marks]
    notes = [{"x": x, "y": 1, "xref": "x", "yref": "paper", "text": plain(text), "showarrow": False, "xanchor": "left",
              "yanchor": "top", "font": {"size": 11, "color": "#555"}} for x, text in marks]
    return shapes, notes


def scores_figure(fid: str, panel: Panel) -> Figure:
    """The Condition-1 scores (unmoved by the class mix) with their 95 % intervals."""
    window, series, axis = panel.title, panel.series, panel.axis
    data: list[dict[str, Any]] = []
    for metric, color in zip(INVARIANT, PALETTE, strict=False):
        if series.has(metric):
            data += _bands(NAMES[metric], panel, metric, None, color=color)
            data.append(_line(NAMES[metric], panel.values(metric), color,
                              legendgroup=NAMES[metric]))
    shapes, notes = _marks(panel.marks)
    title = f"Scores the class mix cannot move (Condition 1) — window {window}; bands: 95 % intervals"
    return {"id": fid, "xs": panel.xs, "data": data,
            "layout": _layout(title, axis, "score (1 = perfect)", shapes=shapes, annotations=notes,
                              yaxis={"title": {"text": "score (1 = perfect)"}, "range": [0, 1.02]})}


def recall_figure(fid: str, panel: Panel, *, labels: Sequence[str], baseline: Mapping[Hashable, float],
                  alerts: Sequence[AlertSpan]) -> Figure:
    """Recall of each class with its Wilson interval, the baseline recall, and degradation alerts as markers."""
    window, series, axis = panel.title, panel.series, panel.axis
    data: list[dict[str, Any]] = []
    shapes, notes = _marks(panel.marks)
    base = {str(k): v for k, v in baseline.items()}
    for i, label in enumerate(labels):
        color = PALETTE[i % len(PALETTE)]
        if not series.has("class_recall", label):
            continue
        name = f"recall of {plain(label)}"
        data += _bands(name, panel, "class_recall", label, color=color)
        data.append(_line(name, panel.values("class_recall", label), color, legendgroup=name))
        if label in base and math.isfinite(base[label]):
            shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": base[label], "y1": base[label],
                           "line": {"color": color, "width": 1, "dash": "dash"}})
    recalls = {label: series.get("value", "class_recall", label) for label in labels}
    drops = [a for a in alerts if a.kind == "degradation"]
    if drops:
        where = {s: i for i, s in enumerate(axis.values)}
        xs, ys, texts = [], [], []
        for a in drops:
            i = where.get(axis.at(a.first_seen.time, a.first_seen.samples), 0)
            y = float(recalls[a.subject][i]) if a.subject in recalls else math.nan
            xs.append(axis.at(a.since_time, a.since_sample))
            ys.append(y if math.isfinite(y) else 0.0)
            texts.append(f"degradation alert: {plain(a.subject)}<br>{_wrap(a.reason)}")
        data.append({"type": "scatter", "mode": "markers", "name": "degradation alert (recall fell)", "x": xs,
                     "y": ys, "text": texts, "hoverinfo": "text",
                     "marker": {"symbol": "x", "size": 14, "color": "black", "line": {"width": 2}}})
    title = (f"Recall of each class — window {window}; bands: 95 % Wilson intervals, dashed: baseline recall, "
             "×: degradation alert")
    return {"id": fid, "xs": panel.xs, "data": data,
            "layout": _layout(title, axis, "recall (share of the class caught)", shapes=shapes, annotations=notes,
                              yaxis={"title": {"text": "recall (share of the class caught)"}, "range": [0, 1.02]})}


def rrt_figure(fid: str, panel: Panel, *, reference_ir: float) -> Figure:
    """The window's majority:minority ratio (RRT) on a log axis, against the reference imbalance ratio."""
    window, axis = panel.title, panel.axis
    shapes, notes = _marks(panel.marks)
    data = [_line("RRT: reference majority ÷ minority in the window", panel.values("rrt"),
                  PALETTE[0])]
    if math.isfinite(reference_ir):
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": reference_ir, "y1": reference_ir,
                       "line": {"color": PALETTE[1], "width": 2, "dash": "dash"}})
        notes.append({"xref": "paper", "x": 1, "y": math.log10(reference_ir),
                      "text": f"reference IR {reference_ir:.3g}", "showarrow": False, "xanchor": "right",
                      "yanchor": "bottom", "font": {"color": PALETTE[1]}})
    title = f"Class ratio now (RRT) against the training imbalance ratio (IR) — window {window}; log scale"
    ticks = log_ticks([*data[0]["y"], reference_ir])
    return {"id": fid, "xs": panel.xs, "data": data,
            "layout": _layout(title, axis, "majority : minority (log)", shapes=shapes, annotations=notes,
                              yaxis={"title": {"text": "majority : minority (log)"}, **ticks})}


def shift_figure(fid: str, panel: Panel) -> Figure:
    """How far the class mix moved from the reference (JS divergence, TV distance); shifted spans shaded."""
    window, series, axis = panel.title, panel.series, panel.axis
    shapes, notes = _marks(panel.marks)
    shapes += _shades(axis.values, series.flagged("prior_shift_js", "prior_shift"))
    data = [_line("Jensen–Shannon divergence (bits)", panel.values("prior_shift_js"),
                  PALETTE[4]),
            _line("total variation distance", panel.values("prior_shift_tv"), PALETTE[5])]
    title = f"Class-mix shift from the reference (prior shift) — window {window}; shaded: shift flagged"
    return {"id": fid, "xs": panel.xs, "data": data,
            "layout": _layout(title, axis, "distance (0 = same mix)", shapes=shapes, annotations=notes)}


def distortion_figure(fid: str, panel: Panel, *, metrics: Sequence[str]) -> Figure:
    """Each mix-sensitive score as observed and at the reference mix; shaded where flagged (type 1)."""
    window, series, axis = panel.title, panel.series, panel.axis
    columns, row_px, gap_px, top_px, bottom_px = 2, 170, 75, 116, 60
    rows = max(1, math.ceil(len(metrics) / columns))
    plot_px = rows * row_px + (rows - 1) * gap_px
    gap_x, width = 0.08, (1 - 0.08) / columns
    height = plot_px + top_px + bottom_px
    layout: dict[str, Any] = {
        "title": title_below_modebar(f"Scores the class mix distorts — window {window}: as observed (solid) and at "
                                     "the reference mix (dashed); shaded: distortion flagged", height),
        "height": height, "margin": {"l": 60, "r": 20, "t": top_px, "b": bottom_px},
        # one legend for all the small multiples: the two line styles, under the title (a click hides one style)
        "showlegend": True, "legend": {"orientation": "h", "x": 0.01, "xanchor": "left", "yref": "container",
                                       "y": 1 - (MODEBAR_PX + 24) / height, "yanchor": "top"},
        "hovermode": "x unified", "plot_bgcolor": "white", "paper_bgcolor": "white", "shapes": [], "annotations": []}
    data: list[dict[str, Any]] = []
    for n, metric in enumerate(metrics):
        row, col = divmod(n, columns)
        suffix = "" if n == 0 else str(n + 1)
        x0 = col * (width + gap_x)
        top = 1 - row * (row_px + gap_px) / plot_px
        layout[f"xaxis{suffix}"] = {"domain": [x0, x0 + width], "anchor": f"y{suffix}",
                                    "type": "date" if axis.kind == "date" else "linear"}
        layout[f"yaxis{suffix}"] = {"domain": [max(0.0, top - row_px / plot_px), top], "anchor": f"x{suffix}"}
        layout["annotations"].append({"text": f"<b>{plain(catalog()[metric].title)}</b> ({metric})", "showarrow": False,
                                      "xref": "paper", "yref": "paper", "x": x0, "y": top, "xanchor": "left",
                                      "yanchor": "bottom", "font": {"size": 12}})
        layout["shapes"] += _shades(axis.values, series.flagged(metric, "type1"), f"x{suffix}", f"y{suffix} domain")
        axes = {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}
        legend = {"showlegend": n == 0}
        data.append({**_line(f"{metric} observed", panel.values(metric), PALETTE[0]), **axes, **legend,
                     "legendgroup": "observed"})
        data.append({**_line(f"{metric} at the reference mix", panel.values(metric, None, "corrected"),
                             PALETTE[2]), **axes, **legend, "legendgroup": "corrected",
                     "line": {"color": PALETTE[2], "width": 2, "dash": "dash"}})
    if data:  # the legend names the styles, not the first panel's metric
        data[0]["name"], data[1]["name"] = "as observed (solid)", "at the reference mix (dashed)"
    return {"id": fid, "xs": panel.xs, "data": data, "layout": layout}


def confusion_figure(fid: str, window: str, labels: Sequence[str], counts: np.ndarray) -> Figure:
    """The final confusion matrix: colour = share of the true class (row), text = counts. ``window`` and ``labels``
    as given (raw): they are made Plotly text here.

    The axes are the class positions 0..K-1 with the labels as tick text, not category axes: plotly.js keeps
    categories in a plain object, where a class named ``__proto__`` or ``constructor`` is taken for a category
    already seen and the matrix loses rows.
    """
    window, names = plain(window), [plain(label) for label in labels]
    totals = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, totals, out=np.zeros(counts.shape), where=totals > 0)
    text = [[f"{int(c):,}<br>({s:.1%})" for c, s in zip(row, srow, strict=True)]
            for row, srow in zip(counts, shares, strict=True)]
    pairs = [[f"true {t}, predicted {p}" for p in names] for t in names]
    side = 200 + 70 * len(labels)
    at = list(range(len(labels)))
    ticks = {"tickmode": "array", "tickvals": at, "ticktext": names, "showgrid": False, "zeroline": False}
    return {"id": fid, "data": [{
        "type": "heatmap", "z": [[round(float(v), 4) for v in row] for row in shares], "x": at, "y": at,
        "text": text, "customdata": pairs, "texttemplate": "%{text}", "colorscale": "Blues", "zmin": 0, "zmax": 1,
        "colorbar": {"title": {"text": "share of<br>true class"}},
        "hovertemplate": "%{customdata}: %{text}<extra></extra>"}],
        "layout": {"title": title_below_modebar(f"Final confusion matrix — window {window}", side),
                   "height": side, "width": side + 160, "margin": {"l": 110, "r": 20, "t": 70, "b": 80},
                   "xaxis": {"title": {"text": "predicted class"}, **ticks},
                   "yaxis": {"title": {"text": "true class"}, "autorange": "reversed", **ticks}}}


def _wrap(text: str, width: int = 70) -> str:
    """``text`` as Plotly text, broken into lines of about ``width`` characters."""
    lines, line = [], ""
    for word in plain(text).split():
        if line and len(line) + len(word) > width:
            lines.append(line)
            line = ""
        line = f"{line} {word}".strip()
    return "<br>".join([*lines, line])
