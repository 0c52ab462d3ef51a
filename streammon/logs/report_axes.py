"""Where the report's figures put their titles and what their log axes show: layout rules every figure shares.

Plotly's mode bar (its toolbar: download, zoom, pan, ...) fills the top ~30 px of a figure from the right, and
a long or narrow figure's title ran under it; ``title_below_modebar`` anchors each title below it. Plotly's own
log-axis ticks add minor digits ("5, 2, 100, 5, 2, 10") a reader takes for values; ``log_ticks`` gives plain
powers of ten only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

MODEBAR_PX = 34  # Plotly's mode bar (toolbar) fills the figure's top ~30 px, from the right: titles start below it
TITLE_FONT = 15


def title_below_modebar(text: str, height: int) -> dict[str, Any]:
    """A figure title whose top sits ``MODEBAR_PX`` below the figure's top, so the mode bar never covers it.

    >>> t = title_below_modebar("Final confusion matrix", 340)
    >>> round((1 - t["y"]) * 340), t["yref"], t["yanchor"]
    (34, 'container', 'top')
    """
    return {"text": text, "x": 0.01, "xanchor": "left", "y": 1 - MODEBAR_PX / height, "yref": "container",
            "yanchor": "top", "font": {"size": TITLE_FONT}}


def log_ticks(values: Sequence[float | None]) -> dict[str, Any]:
    """A log axis with plain ticks at whole powers of ten only (1, 10, 100, 1,000, ...), its range whole decades
    around the finite positive ``values``; Plotly's own log ticks add minor digits ("2", "5") a reader takes
    for values.

    >>> axis = log_ticks([4.2, 19.0, 31.0])
    >>> axis["tickvals"], axis["ticktext"], axis["range"]
    ([1, 10, 100], ['1', '10', '100'], [0, 2])
    >>> log_ticks([0.5, 2_000.0])["ticktext"]
    ['0.1', '1', '10', '100', '1,000', '10,000']
    """
    finite = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    low = math.floor(math.log10(min(finite))) if finite else 0
    high = max(math.ceil(math.log10(max(finite))) if finite else 1, low + 1)
    vals = [10 ** k for k in range(low, high + 1)]
    text = [f"{v:,}" if k >= 0 else f"{v:g}" for k, v in zip(range(low, high + 1), vals, strict=True)]
    return {"type": "log", "tickmode": "array", "tickvals": vals, "ticktext": text, "range": [low, high],
            "minor": {"showgrid": False, "ticks": ""}}
