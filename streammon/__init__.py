"""streammon: tell "the model got worse" from "only the class mix changed".

Incremental confusion counts in several windows, the imbalance-aware scores of
the seed papers, prior-shift tracking and Type 1 / Type 2 distortion flags.
Importing streammon registers nothing and starts nothing, and imports nothing heavy: its public names
are loaded on first use (``streammon.client``, for workers, needs only the standard library).

>>> import streammon
>>> m = streammon.Monitor([streammon.Sliding(100)], reference={0: 95, 1: 5})
>>> for y, p in [(0, 0), (0, 0), (1, 1), (1, 0)]:
...     m.update(y, p)
>>> m.report().windows["sliding_100"].scores["tpr"]
0.5
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

# The logging HOWTO's rule for libraries: a NullHandler, so that streammon's records (alerts raised and cleared,
# checkpoint failures) print nowhere until the application configures logging; the CLI configures its own.
logging.getLogger("streammon").addHandler(logging.NullHandler())

if TYPE_CHECKING:  # what the names below are, for type checkers; at run time they are imported on first use
    from streammon.counting.counts import ClassIndex, ConfusionCounts
    from streammon.counting.validation import Validation
    from streammon.counting.windows import Cumulative, Sliding, Timed, Window
    from streammon.detection.baseline import DetectorSettings
    from streammon.findings.distortion import Policy
    from streammon.findings.reference import Reference
    from streammon.findings.report import Alert, Flag, Report, WindowReport
    from streammon.findings.shift import PriorShift
    from streammon.logs.result import ReplayResult
    from streammon.monitor import Monitor, default_windows
    from streammon.monitor.warming import warm_up
    from streammon.state import Checkpointer, StateError

# PEP 562: each public name is imported from its module on first use, so that importing a light submodule
# (``streammon.client``: the standard library only) does not import numpy through this package.
_LAZY = {
    "ClassIndex": "streammon.counting.counts", "ConfusionCounts": "streammon.counting.counts",
    "Cumulative": "streammon.counting.windows", "Sliding": "streammon.counting.windows",
    "Timed": "streammon.counting.windows", "Window": "streammon.counting.windows",
    "DetectorSettings": "streammon.detection.baseline", "Policy": "streammon.findings.distortion",
    "Reference": "streammon.findings.reference", "Alert": "streammon.findings.report",
    "Flag": "streammon.findings.report", "Report": "streammon.findings.report",
    "WindowReport": "streammon.findings.report", "PriorShift": "streammon.findings.shift",
    "Monitor": "streammon.monitor", "default_windows": "streammon.monitor",
    "Checkpointer": "streammon.state", "StateError": "streammon.state",
    "Validation": "streammon.counting.validation", "warm_up": "streammon.monitor.warming",
}

__version__ = "0.1.0"


def replay(
    source: Any,
    *,
    true: str | None = None,
    pred: str,
    time: str | None = None,
    key: str | None = None,
    labels: Any = None,
    label_time: str | None = None,
    every: str | int | None = None,
    windows: Iterable[Window] | None = None,
    reference: Mapping[Any, Any] | None = None,
    baseline: Any = None,
    positive: Any = None,
    detector: DetectorSettings | None = None,
    policy: Policy | None = None,
    monitor: Monitor | None = None,
    on_snapshot: Callable[..., Any] | None = None,
    text_labels: bool = False,
    batch_rows: int = 1 << 20,
    score: str | Sequence[str] | None = None,
) -> ReplayResult:
    """Replay a log of predictions and labels through a monitor: ``streammon.logs.replay`` (its docstring says what
    each option does), imported on first use (it needs the ``replay`` extra: pyarrow, pandas).

    >>> import pyarrow as pa
    >>> log = pa.table({"y": ["a", "b", "b"], "p": ["a", "b", "a"]})
    >>> replay(log, true="y", pred="p").report.windows["cumulative"].recall["b"]
    0.5
    """
    from streammon.logs.replayer import replay as run  # noqa: PLC0415 (imports no extra until used)

    return run(source, true=true, pred=pred, time=time, key=key, labels=labels, label_time=label_time, every=every,
               windows=windows, reference=reference, baseline=baseline, positive=positive, detector=detector,
               policy=policy, monitor=monitor, on_snapshot=on_snapshot, text_labels=text_labels,
               batch_rows=batch_rows, score=score)


def __getattr__(name: str) -> Any:
    """A public name's object, imported from its module on first use (then kept in this module's globals)."""
    module = _LAZY.get(name)
    if module is None:  # also lets ``from streammon import state`` fall back to importing the submodule
        raise AttributeError(f"module 'streammon' has no attribute {name!r}")
    import importlib  # noqa: PLC0415 (only when a lazy name is first used)

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the lazy ones included (as before they became lazy)."""
    return sorted({*globals(), *_LAZY})


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
    "Validation",
    "Window",
    "WindowReport",
    "__version__",
    "default_windows",
    "replay",
    "warm_up",
]
