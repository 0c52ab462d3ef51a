"""A ``streammon serve`` process ``kill -9``ed with alerts in flight: a held prior-shift alert and its pool, a
confirmation waiting on another window. Reads are not journalled, so these live in the checkpoint only: the server
saves a monitor within seconds of a read that changed them, not at its next checkpoint (an hour apart here).
Every process started here is stopped by PID in a finally."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import streammon
from streammon import state
from tests.serve_http import post, report
from tests.test_serve_process import Served

WINDOWS = ["cumulative", "sliding:200", "sliding:600"]
# batches of 100 samples, fraud per batch: a 5 % mix, a short rise to 17 %, back to 5 % (found by a search over
# such plans: the rise raises the alert on sliding_200 at once, the fall starts its clearing, while sliding_600
# sees a smaller shift that waits for its confirmation)
PLAN = [5] * 20 + [17] * 2 + [5] * 2


def _bookkeeping(body: dict[str, Any]) -> dict[str, list[Any]]:
    """The alert bookkeeping of a state body, without the wall-clock times (the server's clock is not ours)."""
    def strip(rows: list[list[Any]]) -> list[list[Any]]:
        return sorted([*row[:3], *(x for x in row[3:] if not isinstance(x, float))] for row in rows)
    return {part: strip(body[part]) for part in ("alert_since", "alert_pending", "alert_clearing")} | {
        "alert_pools": sorted(body["alert_pools"])}


def _saved(path: Path) -> dict[str, list[Any]] | None:
    return _bookkeeping(state.read(path)) if path.exists() else None


def test_kill_9_keeps_a_held_alert_its_pool_and_a_waiting_confirmation(tmp_path: Path) -> None:
    """Reads between batches drive the server into a prior-shift alert held on sliding_200 (clearing begun, its
    pool kept) and a confirmation waiting on sliding_600 at its third read; within 10 s of the last read the
    state file holds that bookkeeping although checkpoints are an hour apart; after kill -9 and a restart the
    bookkeeping equals that of a monitor fed and read the same way in this process and never killed, and the
    alert is still on at the first read."""
    server = Served(tmp_path)
    server.config.write_text(
        f'[server]\nlisten = "127.0.0.1:{server.port}"\nstate_dir = "{tmp_path / "state"}"\n'
        f'checkpoint_every = 3600\n[models.fraud]\nwindows = {WINDOWS!r}\n'.replace("'", '"')
        + 'reference = { legit = 95, fraud = 5 }\n')
    never_killed = streammon.Monitor([streammon.Cumulative(), streammon.Sliding(200), streammon.Sliding(600)],
                                     reference={"legit": 95, "fraud": 5})
    checkpoint = tmp_path / "state" / "fraud.state.json"
    try:
        server.start()
        for fraud in PLAN:
            y = ["fraud"] * fraud + ["legit"] * (100 - fraud)
            assert post(server.port, "fraud", "samples", {"y_true": y, "y_pred": y})[0] == 200
            never_killed.update_many(y, y)
            never_killed.report()
            before = report(server.port, "fraud")
        expected = _bookkeeping(state.loads(never_killed.dumps()))
        assert expected["alert_pools"] and expected["alert_clearing"], "the plan no longer holds an alert: re-plan"
        assert [row[:3] for row in expected["alert_pending"]] == [["prior_shift", "sliding_600", "class_mix"]]
        assert expected["alert_pending"][0][-1] == 3  # reads counted
        assert [(a["kind"], a["window"]) for a in before["alerts"]] == [("prior_shift", "sliding_200")]
        deadline = time.monotonic() + 10
        while _saved(checkpoint) != expected and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _saved(checkpoint) == expected, server.log()

        assert server.kill() == -signal.SIGKILL
        server.start()  # loads the checkpoint, replays the journal; /healthz reads no report
        assert server.kill(signal.SIGTERM) == 0  # saves
        assert _saved(checkpoint) == expected
        server.start()
        after = report(server.port, "fraud")
        assert [(a["kind"], a["window"]) for a in after["alerts"]] == [("prior_shift", "sliding_200")]
        assert after["windows"]["cumulative"]["n"] == 100 * len(PLAN)
    finally:
        server.stop()
        never_killed.close()
