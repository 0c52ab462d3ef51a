"""The HTML report of a replay fed scores (``--score``): ROC AUC and calibration over time, a reliability diagram
per window recounted from the samples; a replay without scores keeps the page it had."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("plotly")
pa = pytest.importorskip("pyarrow")
sklearn_metrics = pytest.importorskip("sklearn.metrics")

import streammon  # noqa: E402
from streammon.findings.report import Report  # noqa: E402
from streammon.logs.replayer import replay  # noqa: E402
from streammon.logs.report_page import html_page  # noqa: E402
from streammon.logs.report_scores import reliability  # noqa: E402
from streammon.metrics import score_calibration, score_ranking  # noqa: E402
from tests.test_html_report import _open  # noqa: E402

REFERENCE: dict[Any, int] = {0: 90, 1: 10}
ROWS, EVERY = 12_000, 1_500


def scored_log(n: int = ROWS, seed: int = 0) -> dict[str, np.ndarray]:
    """A binary log with an over-confident score: the positive share doubles half-way (the mix only)."""
    rng = np.random.default_rng(seed)
    share = np.where(np.arange(n) < n // 2, 0.1, 0.2)
    y = (rng.random(n) < share).astype(np.int64)
    score = 1.0 / (1.0 + np.exp(-(2.0 * rng.normal(0.0, 1.0, n) + 4.0 * y - 3.0)))
    return {"y": y, "p": (score > 0.5).astype(np.int64), "s": score}


class ScoredMonitor(streammon.Monitor):
    """A monitor whose reports carry the score metrics (``roc_auc``, ``ece``, ``brier``: as read, at the reference
    mix, ROC AUC's interval), computed by the pure functions from each window's tally — what the monitor's own
    reports carry once the score metrics reach them (#28); the page reads them by name from the timeline."""

    def report(self) -> Report:
        report = super().report()
        priors = np.array([REFERENCE[c] for c in self.labels], dtype=np.float64)
        windows = {}
        for name, w in report.windows.items():
            tally = w.score_tally
            if tally is None:
                windows[name] = w
                continue
            parts = (tally.hist, tally.sums, tally.top)
            read = {"roc_auc": score_ranking.roc_auc(parts), "ece": score_calibration.ece(parts),
                    "brier": score_calibration.brier(parts)}
            at = {"roc_auc": score_ranking.roc_auc(parts, priors=priors),
                  "ece": score_calibration.ece(parts, priors=priors),
                  "brier": score_calibration.brier(parts, priors=priors)}
            windows[name] = dataclasses.replace(
                w, scores={**w.scores, **read}, corrected={**w.corrected, **at},
                distortion={**w.distortion, **{m: read[m] - at[m] for m in read}},
                intervals={**w.intervals, "roc_auc": score_ranking.roc_auc_interval(parts)})
        return dataclasses.replace(report, windows=windows)


def _replay(scores: bool, monitor: streammon.Monitor | None = None) -> Any:
    log = scored_log()
    monitor = monitor or streammon.Monitor([streammon.Cumulative(), streammon.Sliding(1000)], reference=REFERENCE)
    return replay(pa.table(log), true="y", pred="p", every=EVERY, monitor=monitor, score="s" if scores else None)


def _recount(y: np.ndarray, s: np.ndarray) -> tuple[list[int], list[float], list[float], list[int], float]:
    """The reliability diagram of binary samples, counted directly: confidence max(s, 1 − s), the top class
    1 where s > ½, 15 equal-width confidence bins (the last closed)."""
    confidence = np.maximum(s, 1.0 - s)
    right = (s > 0.5).astype(np.int64) == y
    bins = np.minimum(np.floor(confidence * 15).astype(int), 14)
    kept, conf, acc, counts, gap = [], [], [], [], 0.0
    for b in range(15):
        inside = bins == b
        if inside.any():
            kept.append(b)
            conf.append(float(confidence[inside].mean()))
            acc.append(float(right[inside].mean()))
            counts.append(int(inside.sum()))
            gap += abs(float(right[inside].sum()) - float(confidence[inside].sum()))
    return kept, conf, acc, counts, gap / len(y)


def test_a_scored_replay_draws_roc_auc_calibration_and_a_reliability_diagram_per_window(browser: Any,
                                                                                        tmp_path: Path) -> None:
    """Per window: ROC AUC (with its band) and ECE/Brier over time, and the final reliability diagram drawn; the
    diagram's points, counts and ECE equal a direct recount of the window's samples, and the last ROC AUC point
    scikit-learn's on those samples."""
    monitor = ScoredMonitor([streammon.Cumulative(), streammon.Sliding(1000)], reference=REFERENCE)
    result = _replay(True, monitor)
    page = tmp_path / "scored.html"
    result.write_html(page)
    drawn = _open(browser, page, tmp_path / "scored.png")
    ids = {f["id"] for f in drawn}
    log = scored_log()
    for w in range(len(result.windows)):
        assert {f"w{w}-roc-auc", f"w{w}-calibration", f"w{w}-reliability"} <= ids
        diagram = browser.evaluate(f"(() => {{ const d = document.getElementById('w{w}-reliability'); return "
                                   "{title: d.layout.title.text, trace: d.data.find(t => t.name.startsWith("
                                   "'accuracy')), bars: d.data.find(t => t.type === 'bar')}; })()")
        name = re.search(r"window (\S+), final", diagram["title"]).group(1)  # type: ignore[union-attr]
        size = ROWS if name == "cumulative" else 1000
        y, s = log["y"][-size:], log["s"][-size:]
        _, conf, acc, counts, ece = _recount(y, s)
        assert diagram["trace"]["x"] == pytest.approx(conf, abs=5e-4)
        assert diagram["trace"]["y"] == pytest.approx(acc, abs=5e-4)
        assert diagram["trace"]["text"] == [f"{c:,}" for c in counts]
        assert diagram["bars"]["y"] == pytest.approx([c / size for c in counts], abs=1e-4)
        assert f"ECE {ece:.4f}" in diagram["title"] and f"({size:,} scored samples)" in diagram["title"]
        auc = browser.evaluate(f"document.getElementById('w{w}-roc-auc').data.find(t => t.name === 'ROC AUC as read')"
                               ".y.slice(-1)[0]")
        assert auc == pytest.approx(sklearn_metrics.roc_auc_score(y, s), abs=0.002)
        band = browser.evaluate(f"document.getElementById('w{w}-roc-auc').data.filter(t => t.fill === 'tonexty')"
                                ".length")
        assert band == 1
        names = browser.evaluate(f"document.getElementById('w{w}-calibration').data.map(t => t.name)")
        assert names == ["ECE as read", "ECE at the reference mix", "Brier score as read",
                         "Brier score at the reference mix"]
        brier = browser.evaluate(f"document.getElementById('w{w}-calibration').data[2].y.slice(-1)[0]")
        assert brier == pytest.approx(sklearn_metrics.brier_score_loss(y, s), rel=1e-3)
    facts = browser.evaluate("document.getElementById('facts').nextElementSibling.nextElementSibling.innerText")
    assert "ROC AUC of the scores" in facts and "Expected calibration error" in facts


def test_the_reliability_diagram_of_three_classes_recounts_the_top_label_bins() -> None:
    """K = 3: per confidence bin of the largest probability, the mean confidence, the share whose arg-max is the
    true class and the count, as counted directly from the samples (every non-empty bin, none other)."""
    rng = np.random.default_rng(3)
    n = 5_000
    y = rng.integers(0, 3, n)
    logits = rng.normal(0.0, 1.0, (n, 3)) + 2.5 * np.eye(3)[y]
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    monitor = streammon.Monitor([streammon.Cumulative()], reference={0: 1, 1: 1, 2: 1})
    monitor.update_many(y, proba.argmax(axis=1), y_score=proba)
    tally = monitor.report().windows["cumulative"].score_tally
    assert tally is not None
    bins, conf, acc, counts = reliability(tally.top)
    top = proba.max(axis=1)
    which = np.minimum((top * 15).astype(int), 14)
    expected = sorted(set(which.tolist()))
    assert bins == expected
    assert counts == [int((which == b).sum()) for b in expected]
    assert conf == pytest.approx([top[which == b].mean() for b in expected], rel=1e-3)
    right = proba.argmax(axis=1) == y
    assert acc == pytest.approx([right[which == b].mean() for b in expected], rel=1e-3)


def test_without_scores_the_page_has_no_score_section() -> None:
    """A replay without scores: no score figure, heading or fact row (the page as before); a replay with scores
    gets the score metrics over time and a reliability diagram per window."""
    plain = html_page(_replay(False))
    for text in ("Scores of the model", "-reliability", "-roc-auc", "-calibration", "ROC AUC of the scores",
                 "Expected calibration error"):
        assert text not in plain
    result = _replay(True)
    assert any(m == "roc_auc" for m in result.timeline.columns["metric"])  # the window reports carry them
    page = html_page(result)
    assert len(re.findall(r'<div class="figure" id="w\d+-reliability">', page)) == len(result.windows)
    assert "-roc-auc" in page and "-calibration" in page and "Expected calibration error" in page
    assert math.isfinite(float(re.search(r"ECE (\d\.\d+)", page).group(1)))  # type: ignore[union-attr]
