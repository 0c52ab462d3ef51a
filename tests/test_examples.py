"""The examples run, and tell the story they claim to tell."""

from __future__ import annotations

import math
import runpy
import sys
from collections import Counter
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


def test_delayed_labels_example_reports_what_happened(capsys: pytest.CaptureFixture[str]) -> None:
    """The late-label example's coverage, counts, latency and joined confusion equal a recount of the labels it
    gave (latency quantiles within their 12 % buckets), about 30 % of labels never came, and it prints them."""
    example = runpy.run_path(str(EXAMPLES / "delayed_labels.py"))
    report, facts = example["run"](show=True)
    s = report.label_stats
    joined = facts["joined"]
    assert (s.predictions, s.labelled, s.joined, s.orphans, s.duplicates) == (1000, len(joined), len(joined), 0, 0)
    assert s.pending == 1000 - len(joined) and s.coverage == len(joined) / 1000
    assert 0.25 < 1 - (len(joined) + facts["late"]) / 1000 < 0.35  # the share that never comes
    latencies = sorted(lat for _, _, lat in joined)
    for name, q in (("p50", 0.5), ("p90", 0.9)):
        exact = latencies[math.ceil(q * len(latencies)) - 1]
        assert exact <= s.latency[name] <= exact * 2 ** (1 / 6)
    cumulative = report.windows["cumulative"]
    assert cumulative.confusion.to_dict() == {
        t: {p: n for (tt, p), n in Counter((y, p) for y, p, _ in joined).items() if tt == t}
        for t in {y for y, _, _ in joined}}
    assert s.predicted_mix[True] == sum(facts["predicted"]) / 1000
    out = capsys.readouterr().out
    assert "coverage" in out and "label latency" in out and "implied" in out
