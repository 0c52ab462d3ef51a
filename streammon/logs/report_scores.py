"""The HTML report's figures of a model's scores (drawn only when the replay was fed scores: ``--score``).

Per window: ROC AUC over time (as read, at the reference mix, and its 95 % interval as a band — Condition 1,
so the two lines should coincide unless the window lacks a class the reference needs), the calibration
metrics ECE and Brier score over time (as read and at the reference mix: both move with the class mix), and
the **reliability diagram** of the final snapshot: per top-label confidence bin (``score_bins.ECE_BINS`` = 15
equal-width bins of the largest probability), the bin's mean confidence against its accuracy (the share whose
arg-max class is the true one), with the bin's count, the diagonal of perfect calibration, and the window's
ECE in the title. The diagram reads ``WindowReport.score_tally.top`` of the final report, which the replay
keeps (``ReplayResult.report``); the time figures read the timeline rows ``metric=roc_auc``/``ece``/``brier``.

>>> top = np.zeros((2, 15, 3))
>>> top[0, 13] = [4, 3, 3.6]   # 4 negatives with confidence in [13/15, 14/15): 3 right, Σ confidence 3.6
>>> top[1, 13] = [1, 1, 0.9]
>>> reliability(top)
([13], [0.9], [0.8], [5])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.counting.score_tally import ScoreTally
from streammon.logs.report_figures import PALETTE, Figure, Panel, _bands, _layout, _line, _marks, plain
from streammon.metrics import score_calibration

OVER_TIME = ("roc_auc", "ece", "brier")  # the score metrics drawn over time (METRICS.md, "Scores")
_COUNT, _CORRECT, _CONFIDENCE = range(3)  # score_bins.TOP


def scored(tally: ScoreTally | None) -> bool:
    """Whether a window's final report holds any scored sample (the replay was fed scores)."""
    return tally is not None and tally.n_scored > 0


def reliability(top: npt.NDArray[np.float64]) -> tuple[list[int], list[float], list[float], list[int]]:
    """The reliability diagram of a ``top`` array (K, ECE_BINS, 3): per non-empty confidence bin (summed over the
    true classes), its index, mean confidence and accuracy (4 significant digits) and its count."""
    total = np.asarray(top, dtype=np.float64).sum(axis=0)
    bins = [int(b) for b in np.flatnonzero(total[:, _COUNT] > 0)]
    count = total[bins, _COUNT]
    return (bins, [float(f"{v:.4g}") for v in total[bins, _CONFIDENCE] / count],
            [float(f"{v:.4g}") for v in total[bins, _CORRECT] / count], [round(float(c)) for c in count])


def roc_auc_figure(fid: str, panel: Panel) -> Figure:
    """ROC AUC of the scores over time: as read (solid, its 95 % interval as a band) and at the reference mix
    (dashed)."""
    data: list[dict[str, Any]] = []
    name = "ROC AUC as read"
    data += _bands(name, panel, "roc_auc", None, color=PALETTE[0])
    data.append(_line(name, panel.values("roc_auc"), PALETTE[0], legendgroup=name))
    data.append(_line("ROC AUC at the reference mix", panel.values("roc_auc", None, "corrected"), PALETTE[2],
                      line={"color": PALETTE[2], "width": 2, "dash": "dash"}))
    shapes, notes = _marks(panel.marks)
    title = (f"ROC AUC of the scores (Condition 1: the class mix cannot move it) — window {panel.title}; "
             "band: 95 % interval")
    return {"id": fid, "xs": panel.xs, "data": data,
            "layout": _layout(title, panel.axis, "ROC AUC (1 = perfect ranking)", shapes=shapes, annotations=notes,
                              yaxis={"title": {"text": "ROC AUC (1 = perfect ranking)"}, "autorange": True})}


def calibration_figure(fid: str, panel: Panel) -> Figure:
    """ECE and Brier score over time, as read (solid) and at the reference mix (dashed): both are means over
    samples, so the class mix moves them."""
    data: list[dict[str, Any]] = []
    for metric, label, color in (("ece", "ECE", PALETTE[1]), ("brier", "Brier score", PALETTE[4])):
        if not panel.series.has(metric):
            continue
        data.append(_line(f"{label} as read", panel.values(metric), color))
        data.append(_line(f"{label} at the reference mix", panel.values(metric, None, "corrected"), color,
                          line={"color": color, "width": 2, "dash": "dash"}))
    shapes, notes = _marks(panel.marks)
    title = (f"Calibration of the scores — window {panel.title}: as read (solid) and at the reference mix "
             "(dashed); lower is better")
    return {"id": fid, "xs": panel.xs, "data": data,
            "layout": _layout(title, panel.axis, "error (0 = calibrated)", shapes=shapes, annotations=notes,
                              yaxis={"title": {"text": "error (0 = calibrated)"}, "rangemode": "tozero"})}


def reliability_figure(fid: str, window: str, tally: ScoreTally) -> Figure:
    """The final snapshot's reliability diagram: mean confidence against accuracy per confidence bin (marker text:
    the bin's count; bars: the share of samples per bin, right axis), the diagonal, the ECE in the title."""
    bins, confidence, accuracy, counts = reliability(tally.top)
    n = sum(counts)
    ece = score_calibration.ece((tally.hist, tally.sums, tally.top))  # the catalog's ECE, as read
    data = [
        {"type": "bar", "name": "share of samples in the bin (right axis)", "x": confidence,
         "y": [round(c / n, 4) for c in counts], "yaxis": "y2", "width": 1 / 15 * 0.8,
         "marker": {"color": "rgba(127, 127, 127, 0.25)"}, "hoverinfo": "skip"},
        {"type": "scatter", "mode": "lines", "name": "perfect calibration", "x": [0, 1], "y": [0, 1],
         "line": {"color": "#555", "width": 1, "dash": "dot"}, "hoverinfo": "skip"},
        {"type": "scatter", "mode": "lines+markers+text", "name": "accuracy per confidence bin", "x": confidence,
         "y": accuracy, "text": [f"{c:,}" for c in counts], "textposition": "top center",
         "customdata": [[f"{b / 15:.3f}–{(b + 1) / 15:.3f}", c] for b, c in zip(bins, counts, strict=True)],
         "hovertemplate": "confidence %{customdata[0]}: %{customdata[1]:,} samples, mean confidence %{x:.3f}, "
                          "accuracy %{y:.3f}<extra></extra>",
         "line": {"color": PALETTE[0], "width": 2}, "marker": {"size": 7, "color": PALETTE[0]}}]
    title = (f"Reliability diagram — window {plain(window)}, final snapshot ({n:,} scored samples); "
             f"ECE {ece:.4f}; numbers: samples per bin")
    layout = _layout(title, _UNIT, "accuracy in the bin",
                     xaxis={"title": {"text": "mean confidence (top-label probability) in the bin"},
                            "range": [0, 1.02]},
                     yaxis={"title": {"text": "accuracy in the bin"}, "range": [0, 1.08]},
                     yaxis2={"overlaying": "y", "side": "right", "range": [0, 1.08], "showgrid": False,
                             "title": {"text": "share of samples"}},
                     hovermode="closest", bargap=0, margin={"l": 70, "r": 80, "t": 60, "b": 50})
    return {"id": fid, "data": data, "layout": layout}


class _Unit:
    """An axis stand-in for ``_layout`` (the reliability diagram's x axis is set explicitly)."""

    kind = "samples"
    title = ""


_UNIT: Any = _Unit()
