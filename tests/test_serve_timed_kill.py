"""A ``streammon serve`` whose model has a window sliding by time, fed a few-valued model's scores with their
sample times, checkpointed mid-stream and killed with ``kill -9``: after the restart (the checkpoint loaded, the
journal replayed) and once the buckets restored from the checkpoint have left the window, every count, score and
interval of the report equals that of a monitor fed the same batches in this process and never killed — the timed
window's buckets closed by their samples' cells, its marks made by the census's entries, both after a load. Every
process started here is stopped by PID in a finally."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import numpy as np

import streammon
from tests.serve_http import post, report
from tests.test_serve_process import Served
from tests.test_serve_restart import _differences

T0 = 1.8e9  # sample times ahead of the wall clock: a read at "now" expires no bucket, on the server as here


def _batches(n: int, seed: int = 0) -> list[tuple[list[str], list[float], list[float]]]:
    """Batches of 300 labelled samples of a binary model's scores at two decimals, each batch's times spanning
    30 s (three of the window's 10 s buckets) and following the last."""
    rng = np.random.default_rng(seed)
    out, t = [], T0
    for _ in range(n):
        s = np.round(rng.random(300), 2)
        y = np.where(rng.random(300) < s, "fraud", "legit")
        times = t + np.sort(rng.random(300)) * 30.0
        t = float(times[-1])
        out.append((y.tolist(), s.tolist(), times.tolist()))
    return out


def test_kill_9_with_a_timed_window_of_scores_reads_as_the_never_killed_monitor(tmp_path: Path) -> None:
    server = Served(tmp_path)
    server.config.write_text(
        f'[server]\nlisten = "127.0.0.1:{server.port}"\nstate_dir = "{tmp_path / "state"}"\n'
        'checkpoint_every = 1\n[models.fraud]\nwindows = ["cumulative", "timed:600"]\n'
        'reference = { legit = 80, fraud = 20 }\npositive = "fraud"\n')
    never_killed = streammon.Monitor([streammon.Cumulative(), streammon.Timed(600.0)],
                                     reference={"legit": 80, "fraud": 20}, positive="fraud")
    checkpoint = tmp_path / "state" / "fraud.state.json"
    batches = _batches(60)
    try:
        server.start()
        for i, (y, s, times) in enumerate(batches):
            batch = {"y_true": y, "y_pred": ["fraud" if v >= 0.5 else "legit" for v in s], "y_score": s, "t": times}
            assert post(server.port, "fraud", "samples", batch)[0] == 200
            never_killed.update_many(batch["y_true"], batch["y_pred"], times, y_score=s)
            if i == 19:  # a checkpoint of a timed window past the exact limit, then more batches in the journal only
                deadline = time.monotonic() + 10
                while not checkpoint.exists() and time.monotonic() < deadline:
                    time.sleep(0.1)
                time.sleep(1.5)
                assert checkpoint.exists(), server.log()
            if i == 29:
                assert server.kill() == -signal.SIGKILL
                server.start()
        after = report(server.port, "fraud")
        expected = json.loads(json.dumps(never_killed.report().to_dict()))
        timed = after["windows"]["timed_600s"]
        assert timed["n"] == expected["windows"]["timed_600s"]["n"] > 2_048  # past the exact limit
        assert after["windows"]["cumulative"]["n"] == 300 * len(batches)
        assert list(_differences(after, expected)) == []
    finally:
        server.stop()
        never_killed.close()
