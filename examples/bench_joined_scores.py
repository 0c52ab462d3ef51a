"""What the score columns cost a joined replay (predictions log + labels log on a key), side by side in one run.

Run with nice: ``nice python examples/bench_joined_scores.py [--rows 500000] [--quick]`` (``--quick``: 100,000
rows, about 6 s on one shared core; the full run about 20 s). It writes a predictions log (key, predicted
class, time, the model's class probabilities) and a labels log (80 % of the keys labelled after a delay) as
Parquet in a temporary folder, then prints, for K = 2 (one score column) and K = 3 (three columns):

- ``joined``: ``streammon.replay(..., key=, labels=)`` without scores, and ``joined + scores`` with ``score=``;
- ``plain``/``plain + scores``: the same labelled rows already joined, replayed as one log (for scale);
- ``range check``: the log layer's read of one score column (``columns.numbers``: nulls, NaN, [0, 1]) against
  Arrow's bare ``to_numpy`` of it, per million values.

Each figure is the median of ``--repeat`` rounds, the variants alternating within a round (the machine is shared).
Labels arrive in batches, one every 1,000 s of data time: the merge cuts the predictions at every label time, so
labels stamped over every second make one-row calls — measured that way (100,000 rows, delays of 0–500 s), the
joined replay ran at ~7 k predictions/s without scores and ~5 k with, whatever the score columns cost.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import streammon
from streammon import Cumulative, Sliding
from streammon.logs.columns import Where, numbers

LABEL_BATCH = 1_000.0  # seconds of data time (one prediction a second) between two label batches


def write_logs(folder: Path, rows: int, k: int, seed: int = 0) -> tuple[Path, Path, Path]:
    """The predictions log, the labels log and the same labelled rows joined (in label order, at label time)."""
    rng = np.random.default_rng(seed)
    true = rng.integers(0, k, rows)
    logits = rng.normal(size=(rows, k)) + 1.5 * np.eye(k)[true]
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    t = np.arange(rows, dtype=np.float64)
    keys = rng.permutation(rows).astype(np.int64)
    scores = {f"s{i}": proba[:, i] for i in range(k)}
    preds = folder / f"preds{k}.parquet"
    pq.write_table(pa.table({"id": keys, "p": proba.argmax(1), "t": t, **scores}), preds)
    labelled = np.flatnonzero(rng.random(rows) < 0.8)
    # labels land in batches (a labelling job every LABEL_BATCH seconds of data time): the merge cuts the
    # predictions at each label time, so labels spread over every second would make one-row calls (see the docstring)
    label_t = np.ceil((t[labelled] + rng.integers(0, 500, len(labelled))) / LABEL_BATCH) * LABEL_BATCH
    order = np.argsort(label_t, kind="stable")
    at = labelled[order]
    labels = folder / f"labels{k}.parquet"
    pq.write_table(pa.table({"id": keys[at], "y": true[at], "t": label_t[order]}), labels)
    joined = folder / f"joined{k}.parquet"
    pq.write_table(pa.table({"y": true[at], "p": proba.argmax(1)[at], "t": label_t[order],
                             **{name: column[at] for name, column in scores.items()}}), joined)
    return preds, labels, joined


def seconds(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def runs(preds: Path, labels: Path, joined: Path, score: str | list[str], reference: dict[int, int]
         ) -> dict[str, Callable[[], Any]]:
    """The four replays compared, each with new windows (a window serves one monitor)."""
    common: dict[str, Any] = {"true": "y", "pred": "p", "time": "t", "reference": reference, "every": 50_000}

    def windows() -> list[Any]:
        return [Cumulative(), Sliding(10_000)]

    return {
        "joined": lambda: streammon.replay(preds, key="id", labels=labels, windows=windows(), **common),
        "joined + scores": lambda: streammon.replay(preds, key="id", labels=labels, score=score, windows=windows(),
                                                    **common),
        "plain": lambda: streammon.replay(joined, windows=windows(), **common),
        "plain + scores": lambda: streammon.replay(joined, score=score, windows=windows(), **common),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="100,000 rows")
    args = parser.parse_args()
    rows = 100_000 if args.quick else args.rows
    with tempfile.TemporaryDirectory() as tmp:
        for k in (2, 3):
            preds, labels, joined = write_logs(Path(tmp), rows, k)
            reference = {i: 10 * (i + 1) for i in range(k)}
            score: str | list[str] = "s0" if k == 2 else [f"s{i}" for i in range(k)]

            variants = runs(preds, labels, joined, score, reference)
            times: dict[str, list[float]] = {name: [] for name in variants}
            for _ in range(args.repeat):
                for name, run in variants.items():
                    times[name].append(seconds(run))
            med = {name: statistics.median(v) for name, v in times.items()}
            print(f"K = {k}, {rows:,} predictions, median of {args.repeat}:")
            labelled = pq.read_metadata(labels).num_rows
            for name, value in med.items():  # rows read: both logs joined, the labelled rows plain
                read = rows + labelled if name.startswith("joined") else labelled
                print(f"  {name:<16} {value:7.3f} s  {read / value / 1e3:8.0f} k rows/s")
            print(f"  scores cost the joined replay x{med['joined + scores'] / med['joined']:.2f} "
                  f"(the plain replay x{med['plain + scores'] / med['plain']:.2f})")
    column = pa.array(np.random.default_rng(1).random(1_000_000))
    bare = statistics.median(seconds(lambda: column.to_numpy(zero_copy_only=False).astype(np.float64))
                             for _ in range(20))
    checked = statistics.median(seconds(lambda: numbers(column, Where("bench", "s", 0))) for _ in range(20))
    print(f"range check: {checked * 1e3:.2f} ms per million scores read and checked, {bare * 1e3:.2f} ms bare "
          f"to_numpy (+{(checked - bare) * 1e3:.2f} ms)")


if __name__ == "__main__":
    main()
