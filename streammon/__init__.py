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

from streammon.counts import ClassIndex, ConfusionCounts
from streammon.distortion import Policy
from streammon.monitor import Monitor, default_windows
from streammon.reference import Reference
from streammon.report import Flag, Report, WindowReport
from streammon.shift import PriorShift
from streammon.windows import Cumulative, Sliding, Timed, Window

__version__ = "0.1.0"

__all__ = [
    "ClassIndex",
    "ConfusionCounts",
    "Cumulative",
    "Flag",
    "Monitor",
    "Policy",
    "PriorShift",
    "Reference",
    "Report",
    "Sliding",
    "Timed",
    "Window",
    "WindowReport",
    "__version__",
    "default_windows",
]
