"""The examples run, and tell the story they claim to tell."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_river_shuttle_example_flags_the_mix_not_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    """Under the induced prior shift: a prior_shift alert, mix-sensitive scores Type-1-flagged, class-conditional
    scores unflagged, and no degradation alert."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        example = runpy.run_path(str(EXAMPLES / "river_shuttle_prior_shift.py"))
    finally:
        sys.path.remove(str(EXAMPLES))
    report = example["run"](limit=30_000, show=False)
    w = report.windows["sliding_2000"]
    kinds = {a.kind for a in report.alerts}
    assert "prior_shift" in kinds and "degradation" not in kinds
    assert {"precision", "f1"} <= set(w.flagged("type1"))
    assert not {"acsa", "gmean", "balanced_accuracy", "mprecision"} & set(w.flagged())
    assert w.rrt < w.ir / 3  # the mix really moved: far fewer normal samples per anomaly than in training
