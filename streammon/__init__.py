"""streammon: tell "the model got worse" from "only the class mix changed".

Incremental confusion counts in several windows, the imbalance-aware scores of
the seed papers, prior-shift tracking and Type 1 / Type 2 distortion flags.
Importing streammon registers nothing and starts nothing.

>>> import streammon
>>> m = streammon.Monitor([streammon.Sliding(100)], reference={0: 95, 1: 5})
>>> for y, p in [(0, 0), (0, 0), (1, 1), (1, 0)]:
...     m.update(y, p)
>>> m.report().windows["sliding_100"].scores["tpr"]
0.5
"""

from typing import Any

from streammon.counting.counts import ClassIndex, ConfusionCounts
from streammon.counting.windows import Cumulative, Sliding, Timed, Window
from streammon.detection.baseline import DetectorSettings
from streammon.findings.distortion import Policy
from streammon.findings.reference import Reference
from streammon.findings.report import Alert, Flag, Report, WindowReport
from streammon.findings.shift import PriorShift
from streammon.monitor import Monitor, default_windows
from streammon.state import Checkpointer, StateError

__version__ = "0.1.0"


def replay(source: Any, **options: Any) -> Any:
    """Replay a log of predictions and labels through a monitor: ``streammon.logs.replay``, imported on first use
    (it needs the ``replay`` extra: pyarrow, pandas).

    >>> import pyarrow as pa
    >>> log = pa.table({"y": ["a", "b", "b"], "p": ["a", "b", "a"]})
    >>> replay(log, true="y", pred="p").report.windows["cumulative"].recall["b"]
    0.5
    """
    from streammon.logs.replayer import replay as run  # noqa: PLC0415 (imports no extra until used)

    return run(source, **options)


__all__ = [
    "Alert",
    "Checkpointer",
    "ClassIndex",
    "ConfusionCounts",
    "Cumulative",
    "DetectorSettings",
    "Flag",
    "Monitor",
    "Policy",
    "PriorShift",
    "Reference",
    "Report",
    "Sliding",
    "StateError",
    "Timed",
    "Window",
    "WindowReport",
    "__version__",
    "default_windows",
    "replay",
]
