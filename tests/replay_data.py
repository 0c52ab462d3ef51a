"""Shared data and comparisons for the replay tests: a labelled log with a mix shift and a real degradation."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

REFERENCE = {"legit": 95, "fraud": 5}
BASELINE = {"legit": {"legit": 980, "fraud": 20}, "fraud": {"fraud": 90, "legit": 10}}
START = 1_700_000_000  # seconds: 2023-11-14 22:13:20 UTC


def log_frame(n: int = 30_000, hours: float = 6.0, seed: int = 0) -> Any:
    """A pandas log: steady, then the fraud share triples (mix only), then fraud recall drops to 0.5 (the model)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    micros = ((START + np.sort(rng.random(n)) * hours * 3600) * 1e6).astype(np.int64)
    seconds = micros / 1e6  # what a timestamp column reads as
    phase = np.minimum((np.arange(n) * 3) // n, 2)
    fraud = rng.random(n) < np.where(phase == 0, 0.05, 0.15)
    recall = np.where(fraud, np.where(phase == 2, 0.5, 0.9), 0.98)
    right = rng.random(n) < recall
    truth = np.where(fraud, "fraud", "legit")
    pred = np.where(right, truth, np.where(fraud, "legit", "fraud"))
    stamps = pd.to_datetime(micros, unit="us", utc=True)
    return pd.DataFrame({"ts": stamps, "seconds": seconds, "y": truth, "p": pred,
                         "yi": fraud.astype(np.int64), "pi": (pred == "fraud").astype(np.int64)})


def same_window(a: Any, b: Any) -> None:
    """Two WindowReports agree: counts, flags and every score (NaN equal to NaN)."""
    assert a.confusion.to_dict() == b.confusion.to_dict(), a.name
    assert sorted(map(repr, a.flags)) == sorted(map(repr, b.flags)), a.name
    for metric, value in a.scores.items():
        other = b.scores[metric]
        assert value == other or (math.isnan(value) and math.isnan(other)), (a.name, metric, value, other)


def same_report(a: Any, b: Any, windows: tuple[str, ...] | None = None, alerts: bool = True) -> None:
    """Two Reports agree on the given windows (all by default), the sample count and, if asked, the alerts."""
    assert a.samples == b.samples
    for name in windows or tuple(a.windows):
        same_window(a.windows[name], b.windows[name])
    if alerts:
        assert a.alerts == b.alerts
