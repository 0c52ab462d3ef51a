"""A window report's mappings are built from the report's arrays when first read: they read, compare, copy and
pickle as the FrozenMaps they stand for, and the values the exporter reads from the arrays are the maps' values."""

from __future__ import annotations

import copy
import math
import pickle
import threading

import numpy as np
import pytest

from streammon import Cumulative, Monitor, Sliding
from streammon.findings.frozen import FrozenMap
from streammon.findings.window_table import Deferred

FIELDS = ("counts", "predicted", "priors", "recall", "precision", "corrected_precision", "scores", "corrected",
          "distortion", "competitiveness", "recall_interval", "intervals")


def _report() -> object:
    monitor = Monitor([Cumulative(), Sliding(30)], reference={"a": 6, "b": 3, "c": 1}, clock=lambda: 0.0)
    rng = np.random.default_rng(2)
    monitor.update_many(rng.choice(["a", "b", "c"], 200).tolist(), rng.choice(["a", "b", "c"], 200).tolist())
    return monitor.report()


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(map(_same, a, b))
    return a == b


@pytest.mark.parametrize("field", FIELDS)
def test_each_mapping_reads_as_its_frozen_map(field: str) -> None:
    """row() before the map is built, then values()/items()/get/in/len/iteration after: the same values, in key
    order; a pickle or deep copy is a plain FrozenMap equal to it; changes are refused."""
    window = _report().windows["sliding_30"]  # type: ignore[attr-defined]
    mapping = getattr(window, field)
    assert isinstance(mapping, Deferred)
    unbuilt_row = mapping.row()
    built = FrozenMap(mapping.items(), noun="x")
    assert all(map(_same, unbuilt_row, built.values())) and all(map(_same, mapping.row(), built.values()))
    assert list(mapping) == list(built) and len(mapping) == len(built)
    first = next(iter(built))
    assert first in mapping and _same(mapping.get(first), built[first]) and mapping.get("nope") is None
    for restored in (pickle.loads(pickle.dumps(mapping)), copy.deepcopy(mapping)):
        assert type(restored) is FrozenMap and list(restored) == list(built)
        assert all(map(_same, restored.values(), built.values()))
    with pytest.raises(TypeError, match="read-only"):
        mapping[first] = 0
    with pytest.raises(TypeError, match="read-only"):
        del mapping[first]
    with pytest.raises(KeyError, match="nope"):
        mapping["nope"]


def test_the_intervals_of_all_windows_are_computed_once_and_alike_from_any_thread() -> None:
    """The first read of any window's intervals computes those of every window of the report; threads reading at
    once all see the same values as a fresh report's."""
    report = _report()
    seen: list[dict[str, object]] = []

    def read() -> None:
        seen.append({name: dict(w.intervals) for name, w in report.windows.items()})  # type: ignore[attr-defined]

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    fresh = {name: dict(w.intervals) for name, w in _report().windows.items()}  # type: ignore[attr-defined]
    assert all(s == fresh for s in seen)
