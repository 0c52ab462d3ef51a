"""A state file loaded and saved again is the same bytes: every part a monitor writes — the detector's learned
baselines among them (counts until a save wrote them as the floats a load reads), the score tallies, the census,
the windows' rings and buckets — comes back in the form it was written. Before, the detector's baselines came back
as floats (2999 saved, 2999.0 saved again), so a loaded file checksummed differently although nothing changed."""

from __future__ import annotations

import numpy as np
import pytest

import streammon


@pytest.mark.parametrize("seed", range(4))
def test_dumps_loads_dumps_is_the_same_bytes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    monitor = streammon.Monitor([streammon.Cumulative(), streammon.Sliding(500), streammon.Timed(600.0)],
                                reference={0: 0.7, 1: 0.3}, positive=1, clock=lambda: 1e9)
    t = 1e9 - 5_000
    for i in range(20):
        n = int(rng.integers(1, 800))
        s = np.round(rng.random(n), 2)
        y = (rng.random(n) < s).astype(int)
        u = t + np.sort(rng.random(n)) * 100.0
        t = float(u[-1])
        monitor.update_many(y.tolist(), (s > 0.5).astype(int).tolist(), u, y_score=s)
        if i % 5 == 4:
            monitor.report()
    text = monitor.dumps()
    assert '"baseline"' in text  # the detector learned its baselines: the part that came back changed
    again = streammon.Monitor.loads(text, clock=lambda: 1e9).dumps()
    assert again == text
