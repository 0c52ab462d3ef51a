"""The HTML report's figures of the label-free estimate with scores (drawn only for a window that EM estimated:
a replay of predictions with ``--score`` columns and a ``streammon.Validation`` baseline, any K).

Per window, over time: the **class mix** estimated from the predictions alone (the timeline rows
``estimated_prior``, with their interval as a band) against the labelled window's mix (``class_prior``,
dashed: it comes only as labels join); and the **performance expected without labels** (``expected_acsa``
— the mean recall, at K = 2 the balanced accuracy — and ``expected_roc_auc``, each with its bounds over the
mix's interval as a band) against the labelled window's values (dashed) and the validation set's own mean
recall (dotted: what ``StreammonExpectedPerformanceDrop`` compares the upper bound with). A window whose
estimate fell back to the decisions at some snapshots (K > 2 windows of more scored predictions than the
prediction side keeps exactly, ``counting.exact_scores``) has gaps in the expected lines there: the
hard-label estimate expects no Condition-1 score.

>>> from streammon.logs.report_series import WindowSeries
>>> series = WindowSeries(2)
>>> series._put(1, ("expected_acsa", None), (0.9, None, None, 0.88, 0.92))
>>> by_em(series)
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from streammon.findings.report import Report
from streammon.logs.report_figures import PALETTE, Figure, Panel, _bands, _layout, _line, _marks, plain
from streammon.logs.report_series import WindowSeries

HEADLINE = "acsa"  # mean recall: ACSA at K > 2, balanced accuracy at K = 2 (one name for both)
EXPECTED = (("acsa", "balanced accuracy (mean recall)", PALETTE[0]), ("roc_auc", "ROC AUC", PALETTE[4]))


def by_em(series: WindowSeries) -> bool:
    """Whether a window's timeline holds an estimate by EM at some snapshot: only EM's expected values carry bounds
    (the hard-label estimate expects no Condition-1 score)."""
    return bool(np.isfinite(series.get("upper", f"expected_{HEADLINE}")).any())


def validation_scores(report: Report) -> Mapping[str, float]:
    """The validation set's own confusion metrics, from any window of the final report that EM estimated (they
    are the same in every window); empty if none did."""
    for w in report.windows.values():
        if w.estimate is not None and w.estimate.validation_scores:
            return w.estimate.validation_scores
    return {}


def mix_figure(fid: str, panel: Panel, labels: Sequence[str]) -> Figure:
    """Each class's share estimated without labels (solid, its interval as a band) and as labelled (dashed)."""
    data: list[dict[str, Any]] = []
    for i, label in enumerate(labels):
        if not panel.series.has("estimated_prior", label):
            continue
        color = PALETTE[i % len(PALETTE)]
        name = f"{plain(label)} estimated without labels"
        data += _bands(name, panel, "estimated_prior", label, color=color)
        data.append(_line(name, panel.values("estimated_prior", label), color, legendgroup=name))
        if panel.series.has("class_prior", label):
            data.append(_line(f"{plain(label)} labelled", panel.values("class_prior", label), color,
                              line={"color": color, "width": 2, "dash": "dash"}))
    shapes, notes = _marks(panel.marks)
    title = (f"Class mix estimated from the scores alone (EM) against the labelled mix — window {panel.title}; "
             "bands: 95 % intervals, dashed: labelled")
    return {"id": fid, "xs": panel.xs, "data": data,
            "layout": _layout(title, panel.axis, "share of the window", shapes=shapes, annotations=notes,
                              yaxis={"title": {"text": "share of the window"}, "range": [0, 1.02]})}


def expected_figure(fid: str, panel: Panel, validation: Mapping[str, float]) -> Figure:
    """Mean recall and ROC AUC expected without labels (solid, bounds as a band), as labelled (dashed), and the
    validation set's mean recall (dotted line)."""
    data: list[dict[str, Any]] = []
    for metric, label, color in EXPECTED:
        if not panel.series.has(f"expected_{metric}"):
            continue
        name = f"{label} expected without labels"
        data += _bands(name, panel, f"expected_{metric}", None, color=color)
        data.append(_line(name, panel.values(f"expected_{metric}"), color, legendgroup=name))
        if panel.series.has(metric):
            data.append(_line(f"{label} labelled", panel.values(metric), color,
                              line={"color": color, "width": 2, "dash": "dash"}))
    shapes, notes = _marks(panel.marks)
    held = validation.get(HEADLINE, math.nan)
    if math.isfinite(held):
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": held, "y1": held,
                       "line": {"color": PALETTE[0], "width": 1, "dash": "dot"}})
        notes.append({"xref": "paper", "x": 1, "y": held, "text": f"validation {held:.3f}", "showarrow": False,
                      "xanchor": "right", "yanchor": "bottom", "font": {"color": PALETTE[0]}})
    title = (f"Performance expected from the scores alone (EM) — window {panel.title}; bands: bounds over the "
             "mix's interval, dashed: labelled, dotted: validation")
    return {"id": fid, "xs": panel.xs, "data": data,
            "layout": _layout(title, panel.axis, "score (1 = perfect)", shapes=shapes, annotations=notes,
                              yaxis={"title": {"text": "score (1 = perfect)"}, "autorange": True})}
