"""The HTML report of a replay: one self-contained page (Plotly's JavaScript embedded once, no network).

``write_html(result, path)`` writes it atomically; ``html_page(result)`` returns the text. The page
holds a header (data range, samples, classes, reference, baseline, the alerts with their times
and reasons), then per window: the Condition-1 scores with intervals, per-class recall with
Wilson bands and degradation alerts, RRT against the reference IR, the prior-shift statistic,
the mix-sensitive scores against their prior-corrected values, and the final confusion matrix
(with scores: ROC AUC, calibration, a reliability diagram; with scores and a ``streammon.Validation``
baseline: the class mix and the performance expected without labels, ``report_estimate``);
then the catalog's Condition facts for the metrics shown. Needs ``plotly`` (``streammon[report]``)
only for its bundled ``plotly.min.js``. When every figure has drawn, ``<body>`` gets
``data-rendered`` = the number of figures (``data-failed`` if one could not draw).

User strings (class labels, window names, the title, mark texts, alert reasons) follow
``streammon.counting.user_text``: ``html.escape`` in the page's text, ``script_json`` for the data
inlined in the script, ``report_figures.plain`` for what Plotly draws.
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from streammon.atomic import write_atomically
from streammon.counting.user_text import check_text
from streammon.logs import report_estimate, report_scores
from streammon.logs import report_figures as figures
from streammon.logs.columns import utc_date
from streammon.logs.report_episodes import Episode, episodes, first_window, with_evidence
from streammon.logs.report_series import Axis, Replayed, axis_of, rounded, thin, window_series
from streammon.logs.spans import Snapshot
from streammon.metrics.specs import catalog

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",sans-serif;margin:0 auto;max-width:1180px;
padding:0 24px 48px;color:#222;line-height:1.45}
h1{font-size:1.6em;margin:24px 0 4px}h2{font-size:1.3em;margin:36px 0 6px;border-bottom:2px solid #ddd}
table{border-collapse:collapse;margin:8px 0;font-size:.92em}th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;
vertical-align:top}th{background:#f4f4f4}dl{display:grid;grid-template-columns:max-content auto;gap:2px 16px}
dt{font-weight:600}dd{margin:0}.figure{margin:12px 0;border:1px solid #eee}.note{color:#555;font-size:.92em}
.alert-degradation td:first-child{color:#b00;font-weight:600}
"""
READY = """
const CONFIG = {displaylogo: false, responsive: true};
for (const f of FIGURES) for (const t of f.data) if (f.xs !== undefined && t.x === undefined) t.x = AXES[f.xs];
Promise.all(FIGURES.map(f => Plotly.newPlot(f.id, f.data, f.layout, CONFIG)))
  .then(() => { document.body.dataset.rendered = String(FIGURES.length); })
  .catch(e => { document.body.dataset.failed = String(e); console.error(e); });
"""
MAX_ALERT_ROWS = 40  # episodes listed at most (the most severe first); the rest are counted
EPISODES = ("One row per episode: the on-periods of one alert (kind, window, subject) are merged while it comes "
            "back within its hold — off at one snapshot only, or back sooner than the window's span (N samples for "
            "sliding_N, the duration for timed windows). Most severe first (degradation, not_prior_shift, "
            "class_set_change, prior_shift, then incompetent, label_coverage_low, predicted_mix_shift), then by "
            "start. The window shown first is where the most severe alert is clearest: for a degradation, the "
            "window whose recall of the class stays furthest below its baseline with its whole interval (median over "
            "the episode); for "
            "a prior shift, the smallest p-value; ties go to the shortest window.")
CONDITIONS = ("Condition 1: the score depends only on how each class is classified (its recall row), not on how "
              "many samples of each class arrive — a change of class mix cannot move it. Condition 2: its bounds do "
              "not depend on the number of classes. Condition 3: it keeps information about the other classes when "
              "one class is almost entirely misclassified (Mullick et al., Table 1).")


def write_html(result: Replayed, path: str | os.PathLike[str], *, title: str | None = None,
               marks: Sequence[tuple[float, str]] = (), dates: bool | None = None) -> None:
    """Write the report to ``path`` through ``streammon.atomic`` (a random exclusive temporary file, renamed)."""
    write_atomically(path, html_page(result, title=title, marks=marks, dates=dates))


def script_json(value: Any) -> str:
    r"""``value`` as JSON that is safe inside an HTML ``<script>``: ASCII only, ``<``, ``>`` and ``&`` as ``\u``
    escapes (outside strings JSON has none of them), so no label can close the script, open a comment or
    change the HTML parser's script-data state; U+2028/2029 are escaped as every non-ASCII character is.

    >>> script_json({"class": "<!--<script></script>&\u2028"})
    '{"class":"\\u003c!--\\u003cscript\\u003e\\u003c/script\\u003e\\u0026\\u2028"}'
    """
    text = json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def html_page(result: Replayed, *, title: str | None = None, marks: Sequence[tuple[float, str]] = (),
              dates: bool | None = None) -> str:
    """The report as one HTML document. ``marks``: labelled vertical lines at data times (seconds; samples
    without times); ``dates``: read times as UTC timestamps (default: when they fall after 2000)."""
    from plotly.offline import get_plotlyjs

    if title is not None:
        check_text(title, "report title")
    marks = [(t, check_text(text, "mark text")) for t, text in marks]
    axis = axis_of(result, dates)
    keep = thin(len(axis.values))
    at = [(axis.at(t, int(t)), text) for t, text in marks]
    every = window_series(result)
    found = with_evidence(episodes(result.alerts, result.snapshots), result.snapshots, every,
                          {str(k): v for k, v in result.baseline.items()})
    sizes = {name: float(w.n) for name, w in result.report.windows.items()}
    first = first_window(found, result.windows, sizes, snapshots=result.snapshots, series=every,
                         baseline={str(k): v for k, v in result.baseline.items()})
    order = [first, *(name for name in result.windows if name != first)]
    labels = [str(label) for label in result.classes]
    ir = result.reference.ir if result.reference is not None else math.nan
    shown: dict[str, None] = dict.fromkeys(figures.INVARIANT)
    specs: list[dict[str, Any]] = []
    sections: list[str] = []
    validation = report_estimate.validation_scores(result.report)
    for w, name in enumerate(order):
        series = every[name]
        fid = f"w{w}"
        mixed = [m for m, s in catalog().items() if not s.condition1 and series.has(m)]
        shown.update(dict.fromkeys(["recall", *mixed]))
        panel = figures.Panel(name, series, axis, keep, at, xs=w)
        made = [figures.scores_figure(f"{fid}-scores", panel),
                figures.recall_figure(f"{fid}-recall", panel, labels=labels, baseline=result.baseline,
                                      alerts=result.alerts),
                figures.rrt_figure(f"{fid}-rrt", panel, reference_ir=ir),
                figures.shift_figure(f"{fid}-shift", panel)]
        if mixed:
            made.append(figures.distortion_figure(f"{fid}-mixed", panel, metrics=mixed))
        final = result.report.windows[name]
        cells = final.confusion.cells()
        counts = np.array([[cells.get((t, p), 0) for p in result.classes] for t in result.classes])
        made.append(figures.confusion_figure(f"{fid}-confusion", name, labels, counts))
        scored = _score_figures(fid, panel, final.score_tally) if report_scores.scored(final.score_tally) else []
        if scored:
            shown.update(dict.fromkeys(m for m in report_scores.OVER_TIME if m == "ece" or series.has(m)))
        estimated = ([report_estimate.mix_figure(f"{fid}-em-mix", panel, labels),
                      report_estimate.expected_figure(f"{fid}-em-expected", panel, validation)]
                     if report_estimate.by_em(series) else [])
        specs += made + scored + estimated
        divs = "".join(f'<div class="figure" id="{f["id"]}"></div>' for f in made)
        why = _first_note(found[0]) if w == 0 and found else ""
        sections.append(f'<h2 id="window-{w}">Window {html.escape(name)}</h2>'
                        f'<p class="note">{why}{_window_note(name, final.n)}</p>{divs}'
                        + (_score_section(w, final.score_tally, scored) if scored else "")
                        + (_estimate_section(w, estimated) if estimated else ""))
    axes = [rounded(axis.values, keep) if axis.kind != "date" else [round(axis.values[i]) for i in keep]
            for _ in result.windows]
    heading = title or f"streammon replay report — {_path_text(result.source)}"
    data = script_json({"AXES": axes, "FIGURES": specs})
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{html.escape(heading)}</title><style>{STYLE}</style>",
        f"<script>{get_plotlyjs()}</script></head><body>",
        f"<h1>{html.escape(heading)}</h1>", _summary(result, axis, len(keep)),
        _alerts(found, axis, result.snapshots[-1] if result.snapshots else None, len(result.alerts)),
        "<p>Windows (the first where the most severe alert is clearest): ",
        ", ".join(f'<a href="#window-{w}">{html.escape(n)}</a>' for w, n in enumerate(order)),
        ' · <a href="#facts">metric facts</a></p>',
        *sections, _facts(list(shown)),
        "<script>const {AXES, FIGURES} = ", data, ";", READY, "</script></body></html>\n"])


def _score_figures(fid: str, panel: figures.Panel, tally: Any) -> list[dict[str, Any]]:
    """A scored window's figures: ROC AUC and calibration over time (where the timeline has them), then the
    final snapshot's reliability diagram."""
    made = []
    if panel.series.has("roc_auc"):
        made.append(report_scores.roc_auc_figure(f"{fid}-roc-auc", panel))
    if panel.series.has("ece") or panel.series.has("brier"):
        made.append(report_scores.calibration_figure(f"{fid}-calibration", panel))
    made.append(report_scores.reliability_figure(f"{fid}-reliability", panel.window, tally))
    return made


def _score_section(w: int, tally: Any, made: list[dict[str, Any]]) -> str:
    """The scores' sub-section of a window: a heading, what it shows, the figures."""
    divs = "".join(f'<div class="figure" id="{f["id"]}"></div>' for f in made)
    return (f'<h3 id="scores-{w}">Scores of the model</h3><p class="note">{tally.n_scored:,} scored samples in the '
            "final window. ROC AUC depends only on how each class's scores are distributed (Condition 1); ECE and "
            "the Brier score are means over samples, so the class mix moves them — compare them at the reference "
            "mix. The reliability diagram groups the final window's samples into 15 equal-width bins of the "
            "top-label probability: a calibrated model's points lie on the diagonal.</p>" + divs)


def _estimate_section(w: int, made: list[dict[str, Any]]) -> str:
    """The label-free estimate's sub-section of a window: a heading, what it shows, the figures."""
    divs = "".join(f'<div class="figure" id="{f["id"]}"></div>' for f in made)
    return (f'<h3 id="estimate-{w}">Without labels: the class mix and the performance expected from the scores'
            "</h3><p class=\"note\">Read from the predictions' scores alone, before any label: EM on the "
            "posteriors calibrated on the validation set estimates the class mix, and the posteriors adjusted to "
            "that mix give the performance to expect if only the mix changed. Labelled values (dashed) come as "
            "labels join; an expected value well below the validation's says the model or its inputs changed. "
            "Gaps: snapshots where the window held more scored predictions than EM keeps (the estimate then reads "
            "the decisions).</p>" + divs)


def _path_text(path: str) -> str:
    """A path as text UTF-8 can carry: undecodable bytes of a file name (surrogate escapes) as ``\\udcff``."""
    return path.encode("utf-8", "backslashreplace").decode("utf-8")


def _when(axis: Axis, t: float | None, samples: int) -> str:
    if axis.kind == "date" and t is not None and math.isfinite(t):
        return utc_date(t)
    if axis.kind == "seconds" and t is not None and math.isfinite(t):
        return f"t = {t:,.6g} s"
    return f"sample {samples:,}"


def _summary(result: Replayed, axis: Axis, drawn: int) -> str:
    ref = result.reference
    if ref is None:
        reference = "none (no reference mix: no prior correction, no shift statistic)"
    else:
        mix = ", ".join(f"{html.escape(str(k))} {v:.2%}" for k, v in ref.priors.items())
        origin = "given" if ref.source == "given" else "learned from the warm-up"
        reference = f"{mix} — imbalance ratio {ref.ir:.3g} ({origin})"
    baseline = ", ".join(f"{html.escape(str(k))} {v:.3f}" for k, v in result.baseline.items()) or "none"
    span = ("no time column" if result.first_time is None else
            f"{_when(axis, result.first_time, 0)} to {_when(axis, result.last_time, result.samples)}")
    thinned = "" if drawn == len(result.snapshots) else f" (figures draw {drawn:,} of them, evenly spaced)"
    rows = [("Data", html.escape(_path_text(result.source))), ("Data range", span), ("Samples", f"{result.samples:,}"),
            ("Snapshots", f"{len(result.snapshots):,}, every {html.escape(str(result.every))}{thinned}"),
            ("Classes", ", ".join(html.escape(str(c)) for c in result.classes)),
            ("Reference mix (training)", reference),
            ("Baseline recall (in control, per class)", baseline),
            ("Windows", ", ".join(html.escape(w) for w in result.windows))]
    return "<dl>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def _alerts(found: list[Episode], axis: Axis, last: Snapshot | None, periods: int) -> str:
    """The alert episodes, most severe first (``report_episodes``): at most ``MAX_ALERT_ROWS`` rows."""
    if not found or last is None:
        return "<h2>Alerts</h2><p>No alert was raised during the replay.</p>"
    rows = "".join(
        f'<tr class="alert-{html.escape(e.kind)}"><td>{html.escape(e.kind)}</td><td>{html.escape(e.window)}</td>'
        f"<td>{html.escape(e.subject)}</td><td>{_when(axis, e.start_time, e.start_sample)} "
        f"(sample {e.start_sample:,})</td><td>"
        + ("ongoing" if e.end is None else _when(axis, e.end.time, e.end.samples))
        + f"</td><td>{_duration(*e.duration(last))}{' so far' if e.ongoing else ''}</td><td>{e.toggles:,}</td>"
        f"<td>{html.escape(e.evidence_text) or '—'}</td><td>{html.escape(e.reason)}</td></tr>"
        for e in found[:MAX_ALERT_ROWS])
    more = (f"<p class=\"note\">… and {len(found) - MAX_ALERT_ROWS:,} more episodes, less severe or later.</p>"
            if len(found) > MAX_ALERT_ROWS else "")
    return (f"<h2>Alerts: {len(found):,} episodes ({periods:,} on-periods)</h2><p class=\"note\">{EPISODES}</p>"
            "<table><tr><th>kind</th><th>window</th><th>subject</th><th>started</th><th>ended (cleared by)</th>"
            "<th>duration</th><th>on-periods merged</th><th>evidence</th><th>latest reason</th></tr>"
            f"{rows}</table>{more}")


def _duration(amount: float, unit: str) -> str:
    """A duration as a person reads it: ``3 d 4 h``, ``25 min``, or samples."""
    if unit != "s":
        return f"{amount:,.0f} samples"
    parts, left = [], round(amount)
    for name, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if left >= size:
            parts.append(f"{left // size} {name}")
            left %= size
    return " ".join(parts[:2]) if parts else f"{left} s"


def _first_note(top: Episode) -> str:
    """Why this window is shown first."""
    return (f"<b>Shown first: the {html.escape(top.kind)} alert on {html.escape(top.subject)} is clearest here</b> "
            "(the rule is under Alerts). ")


def _window_note(name: str, n: int) -> str:
    return (f"{n:,} labelled samples in the final window. Each point is the window as it stood at one snapshot; "
            "hover for values.")


def _facts(metrics: list[str]) -> str:
    def fact(value: bool | None) -> str:
        return {True: "yes", False: "<b>no</b>", None: "—"}[value]

    rows = "".join(
        f"<tr><td>{m}</td><td>{html.escape(s.title)}</td><td>{html.escape(s.formula)}</td><td>{fact(s.condition1)}"
        f"</td><td>{fact(s.condition2)}</td><td>{fact(s.condition3)}</td><td>{', '.join(s.seeds)}</td></tr>"
        for m in metrics if (s := catalog().get(m) or catalog("scores").get(m)) is not None)
    return (f'<h2 id="facts">Metric facts (from the catalog)</h2><p class="note">{CONDITIONS} “—”: not established '
            "or not applicable.</p><table><tr><th>metric</th><th>name</th><th>formula</th><th>Condition 1 "
            "(mix-invariant)</th><th>Condition 2</th><th>Condition 3</th><th>seed papers</th></tr>"
            f"{rows}</table>")
