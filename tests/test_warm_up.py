"""``warm_up`` loads every compiled loop that later streams call, in every type they call it with
(``streammon.monitor.warming``): after it, no stream of ``tests/late_compiles.py`` compiles anything — neither as
it comes, nor with the count widths a stream reaches only after 2³¹ samples (``--wide``). Each runs in a process
of its own (a test process has compiled whatever earlier tests called)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import numba
import pytest

from streammon.cli import main

HERE = Path(__file__).parent


def _without_disabled_jit() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name != "NUMBA_DISABLE_JIT"}


@pytest.mark.parametrize("flags", [[], ["--wide"]], ids=["as-it-comes", "wide-counts"])
def test_no_loop_compiles_after_the_warm_up(flags: list[str]) -> None:
    done = subprocess.run([sys.executable, str(HERE / "late_compiles.py"), *flags], capture_output=True, text=True,
                          timeout=900, env=_without_disabled_jit(), check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[0] == "late compiles: 0", done.stdout[-3000:]


def test_one_read_loop_per_count_width() -> None:
    """The read loop's inputs are passed read-only and C-contiguous whatever made them, so it is compiled once per
    histogram count width (int16, int32, int64), not once per placeholder: twelve signatures before, each a
    compile of seconds on an empty cache."""
    script = ("from streammon.monitor.warming import warm_up\n"
              "warm_up()\n"
              "from streammon.metrics.window_score_loop import window_loop\n"
              "print(sorted(str(s[0].dtype) for s in window_loop.signatures))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=900,
                          env=_without_disabled_jit(), check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "['int16', 'int32', 'int64']"


def test_the_command_says_what_it_loaded(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warm-up"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("streammon warm-up: every compiled loop loaded in "), out
    if not numba.config.DISABLE_JIT:  # type: ignore[attr-defined]  # (.ci/mutation: the loops run as Python)
        from streammon.metrics.window_score_loop import window_loop

        assert {str(s[0].dtype) for s in window_loop.signatures} >= {"int16", "int32", "int64"}


def test_the_warm_up_raises_no_alert(caplog: pytest.LogCaptureFixture) -> None:
    """``streammon serve`` runs it beside the models it serves: its streams are healthy, so the alert log (what an
    operator reads and ships) gets nothing from it."""
    from streammon.monitor.warming import warm_up

    with caplog.at_level(logging.DEBUG, logger="streammon.alerts"):
        warm_up()
    assert [r.getMessage() for r in caplog.records if r.name == "streammon.alerts"] == []


def test_a_process_warms_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``streammon serve``'s background warm-up runs once a process: a second server in it (the tests' in-process
    servers) finds the loops loaded, or loading, and starts no second one beside its requests."""
    from streammon.monitor import warming
    from streammon.serve import run

    calls: list[int] = []
    monkeypatch.setattr(warming, "warm_up", lambda: calls.append(1))
    monkeypatch.setattr(run, "_warming", threading.Lock())
    monkeypatch.setattr(run, "WARMED", threading.Event())
    run._warm_up()
    run._warm_up()
    assert calls == [1] and run.WARMED.is_set()
