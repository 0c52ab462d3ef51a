"""What do a model's scores cost the HTML report? The same K = 10 log replayed and written with and without
its class probabilities (``score=`` the 10 columns), side by side in one run (target of #28: ≤ 2×).

Replays ``--days`` of an hourly K = 10 log (``--rows-per-hour`` rows an hour; classes 0–9 with shares falling
geometrically from 27 % to 1.5 %; an over-confident softmax model), a snapshot every hour, the default timed
windows; prints per run the replay time, the time to write the page, the page size without plotly.js, and the
ratios with/without. With scores the page adds, per window, ROC AUC and ECE/Brier over time and a reliability
diagram.

The score metrics reach the timeline from the window reports (``roc_auc``, ``ece``, ``brier``, ...). Where the
monitor's reports do not carry them yet, the run says so and fills them in each report from the window's tally
with the pure functions (``streammon.metrics.score_ranking``/``score_calibration``), as the reports will.

    python examples/bench_report_scores.py [--days 365] [--rows-per-hour 50] [--quick]

``--quick`` (30 days) takes about 1.5 minutes here; the full year 23.5 minutes (2 shared cores).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from plotly.offline import get_plotlyjs

import streammon
from streammon.findings.report import Report
from streammon.logs.replayer import replay
from streammon.metrics import score_calibration, score_ranking

K = 10
START = 1_704_067_200  # 2024-01-01 00:00 UTC
SHARES = 0.7 ** np.arange(K) / (0.7 ** np.arange(K)).sum()
REFERENCE = {c: float(s) for c, s in enumerate(SHARES)}
FILLED = ("roc_auc", "average_precision", "brier", "log_loss", "ece")


def log(days: int, rows_per_hour: int, seed: int = 0) -> dict[str, np.ndarray]:
    """An hourly K = 10 log with the model's class probabilities in columns s0 … s9."""
    rng = np.random.default_rng(seed)
    n = days * 24 * rows_per_hour
    t = START + np.sort(rng.random(n)) * days * 86_400
    y = rng.choice(K, size=n, p=SHARES)
    logits = 2.0 * rng.normal(0.0, 1.0, (n, K)) + 4.0 * np.eye(K)[y]
    proba = np.exp(logits - logits.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    return {"t": t, "y": y, "p": proba.argmax(axis=1), **{f"s{c}": proba[:, c] for c in range(K)}}


class FilledMonitor(streammon.Monitor):
    """A monitor whose reports carry the score metrics computed from each window's tally (until they do)."""

    def report(self) -> Report:
        report = super().report()
        priors = np.array([REFERENCE[c] for c in self.labels])
        windows = {}
        for name, w in report.windows.items():
            if w.score_tally is None:
                windows[name] = w
                continue
            parts = (w.score_tally.hist, w.score_tally.sums, w.score_tally.top)
            functions = {"roc_auc": score_ranking.roc_auc, "average_precision": score_ranking.average_precision,
                         "brier": score_calibration.brier, "log_loss": score_calibration.log_loss,
                         "ece": score_calibration.ece}
            read = {m: f(parts) for m, f in functions.items()}
            at = {m: f(parts, priors=priors) for m, f in functions.items()}
            windows[name] = dataclasses.replace(w, scores={**w.scores, **read}, corrected={**w.corrected, **at},
                                                distortion={**w.distortion, **{m: read[m] - at[m] for m in read}})
        return dataclasses.replace(report, windows=windows)


def run(table: pa.Table, scores: bool, filled: bool) -> tuple[float, float, int, Any]:
    """Replay and write: (replay seconds, write seconds, page bytes without plotly.js, result)."""
    kind = FilledMonitor if scores and filled else streammon.Monitor
    monitor = kind(streammon.default_windows(), reference=REFERENCE, clock=lambda: 0.0)
    began = time.perf_counter()
    result = replay(table, true="y", pred="p", time="t", every="1h", monitor=monitor,
                    score=[f"s{c}" for c in range(K)] if scores else None)
    replayed = time.perf_counter() - began
    out = Path(tempfile.mkdtemp()) / "report.html"
    began = time.perf_counter()
    result.write_html(out)
    written = time.perf_counter() - began
    return replayed, written, os.path.getsize(out) - len(get_plotlyjs().encode()), result


def report_seconds(monitor: streammon.Monitor, table: pa.Table, scores: bool, repeats: int = 20) -> float:
    """The median time of one ``report()`` of the replayed monitor (every window), each after one more row (a
    monitor whose counts did not change returns its last report)."""
    times = []
    proba = np.column_stack([table[f"s{c}"].to_numpy()[-repeats:] for c in range(K)])
    y, p = (table[name].to_numpy()[-repeats:] for name in ("y", "p"))
    t = table["t"].to_numpy()[-1] + np.arange(1, repeats + 1) * 1e-3  # after the last row, within its hour
    for i in range(repeats):
        monitor.update_many(y[i:i + 1], p[i:i + 1], t=t[i:i + 1], **({"y_score": proba[i:i + 1]} if scores else {}))
        began = time.perf_counter()
        monitor.report()
        times.append(time.perf_counter() - began)
    return float(np.median(times))


def main() -> None:
    """Both runs, then the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--rows-per-hour", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="30 days")
    args = parser.parse_args()
    days = 30 if args.quick else args.days
    table = pa.table(log(days, args.rows_per_hour))
    probe = streammon.Monitor([streammon.Cumulative()], reference=REFERENCE)
    probe.update_many(table["y"].to_numpy()[:100], table["p"].to_numpy()[:100],
                      y_score=np.column_stack([table[f"s{c}"].to_numpy()[:100] for c in range(K)]))
    filled = "roc_auc" not in probe.report().windows["cumulative"].scores
    if filled:
        print("the monitor's reports carry no score metrics yet: filled in from each window's tally (FilledMonitor)")
    rows = {}
    for scores in (False, True):
        replayed, written, size, result = run(table, scores, filled)
        one = report_seconds(result.monitor, table, scores)
        rows[scores] = (replayed, written, size, one)
        print(f"{'with' if scores else 'without'} scores: {result.samples:,} rows, {len(result.snapshots):,} "
              f"snapshots, {len(result.windows)} windows, K = {K}; replay {replayed:.1f} s, page written in "
              f"{written:.2f} s, {size / 1e6:.2f} MB without plotly.js; one report() {one * 1e3:.1f} ms")
    (r0, w0, s0, o0), (r1, w1, s1, o1) = rows[False], rows[True]
    print(f"with / without scores: page size {s1 / s0:.2f}x, writing the page {w1 / w0:.2f}x (target <= 2x); "
          f"one report() {o1 / o0:.2f}x; the whole replay {r1 / r0:.2f}x")


if __name__ == "__main__":
    main()
