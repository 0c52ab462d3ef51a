"""State file size, save and load time by number of classes: format 4 (non-zero cells) beside format 3 (dense).

For K = 10, 100, 1,000 and 2,000: a monitor with the default windows (``Cumulative``, ``Sliding(1000)``,
``Sliding(10_000)``, ``Timed(3600)`` of 60 buckets) fed 1,000,000 samples of a Zipf-like class mix (p ∝ 1/(i+1)^1.1),
90 % right (the wrong ones predicted from the same mix), at times spread over an hour, so every bucket is live.
Format 3 is written as the previous writer did (the same body with every matrix ``.tolist()``-ed in full,
digested, dumped, written atomically) and read through ``Monitor.load`` (its upgrade checks every cell, then
converts). Format 3 is skipped above ``--dense-max`` classes (default 1,000: at K = 2,000 the issue measured
881 MB and 192 s, over the 256 MiB load limit).

    python examples/bench_state_size.py [--samples 1000000] [--dense-max 1000] [--classes 10 100 1000 2000]
"""

from __future__ import annotations

import argparse
import gc
import json
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from streammon import Monitor
from streammon.counting.sparse import dense
from streammon.state import FORMAT, MAX_BYTES, StateError, _digest, write_atomically

CHUNK = 100_000


def fed(k: int, n: int) -> Monitor:
    rng = np.random.default_rng(k)
    p = 1.0 / np.arange(1, k + 1) ** 1.1
    p /= p.sum()
    monitor = Monitor(classes=list(range(k)), max_classes=max(k, 256))
    times = np.sort(rng.uniform(0.0, 3600.0, n))
    for start in range(0, n, CHUNK):
        m = min(CHUNK, n - start)
        true = rng.choice(k, m, p=p)
        pred = np.where(rng.random(m) < 0.9, true, rng.choice(k, m, p=p))
        monitor.update_many(true, pred, t=times[start:start + m])
    return monitor


def as_dense(body: dict[str, Any]) -> dict[str, Any]:
    """The body as format 3 wrote it: every count matrix in full."""
    def window(state: dict[str, Any], side: int) -> None:
        state["counts"] = dense(state["counts"], side).tolist()
        if "slots" in state:
            state["slots"] = [None if m is None else dense(m, side).tolist() for m in state["slots"]]

    for item in body["windows"]:
        window(item["state"], body["capacity"])
    window(body["lifetime"], body["capacity"])
    side = body["pending"]["side"]
    if side is None:  # never predicted: format 4 saves no label-side windows, format 3 had no pending section
        body["pending"] = None
        return body
    for item in side["predictions"]:
        window(item, side["capacity"])
    for item in side["events"]:
        window(item, 16)
    return body


def timed(fn: Any) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def load(path: Path) -> str:
    try:
        return f"{Monitor.load(path).samples} samples"
    except StateError as exc:
        return f"StateError: {str(exc)[:60]}"


def save_dense(body: dict[str, Any], path: Path) -> int:
    """Write ``body`` as format 3 did: every matrix in full, digested, dumped, written atomically; its bytes."""
    body = as_dense(body)
    text = json.dumps({"format": FORMAT, "version": 3, "sha256": _digest(body), "body": body}, allow_nan=True)
    write_atomically(path, text)
    return len(text)


def measure(k: int, samples: int, dense_max: int, path: Path) -> None:
    """Print one row per format for ``k`` classes."""
    monitor = fed(k, samples)
    save_s, _ = timed(partial(monitor.save, path))
    size = path.stat().st_size
    load_s, outcome = timed(lambda: load(path))
    print(f"{k:>6} {'4':>7} {size / 1e6:9.3f} {save_s:7.2f} {load_s:7.2f}  {outcome}", flush=True)
    path.unlink()
    if k > dense_max:
        print(f"{k:>6} {'3':>7}  skipped (over --dense-max)", flush=True)
        return
    body = json.loads(monitor.dumps())["body"]  # the declared state, outside the timing (as save builds it)
    del monitor
    old_s, old_size = timed(partial(save_dense, body, path))
    del body
    old_load, outcome = timed(lambda: load(path))
    print(f"{k:>6} {'3':>7} {old_size / 1e6:9.3f} {old_s:7.2f} {old_load:7.2f}  {outcome}", flush=True)
    path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--dense-max", type=int, default=1000)
    parser.add_argument("--classes", type=int, nargs="+", default=[10, 100, 1000, 2000])
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    print(f"{args.samples:,} samples, default windows; load limit {MAX_BYTES / 2**20:.0f} MiB")
    print(f"{'K':>6} {'format':>7} {'file MB':>9} {'save s':>7} {'load s':>7}  loaded")
    for k in args.classes:
        measure(k, args.samples, args.dense_max, folder / f"k{k}.json")
        gc.collect()


if __name__ == "__main__":
    main()
