"""The `streammon` command: --version, `streammon report`, and every bad argument or file as one line + status 2."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import streammon
from streammon import Cumulative, Monitor, Policy, Sliding
from streammon.cli import main

ROOT = Path(__file__).resolve().parents[1]
VERSION = re.findall(r'^version = "(.+)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.MULTILINE)[0]


def _command(*argv: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """The real command, run from the source tree (`python -m streammon`)."""
    return subprocess.run([sys.executable, "-m", "streammon", *argv], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, cwd=ROOT, check=False, timeout=120)


def _one_line_failure(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run main(argv); assert status 2, nothing on stdout, one line on stderr; return that line."""
    try:
        status = main(argv)
    except SystemExit as stop:
        status = stop.code  # type: ignore[assignment]
    out, err = capsys.readouterr()
    assert status == 2 and out == "", (status, out, err)
    assert err.endswith("\n") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.fixture
def state_file(tmp_path: Path) -> Path:
    """A saved monitor: 10 samples, 5 of each class, against a 9:1 reference (its alerts raised at once, without
    waiting for a window turnover to confirm them)."""
    monitor = Monitor([Cumulative(), Sliding(4)], reference={"legit": 9, "fraud": 1}, clock=lambda: 100.0,
                      policy=Policy(alert_confirm=0))
    monitor.update_many(["legit"] * 5 + ["fraud"] * 5, ["legit"] * 4 + ["fraud"] * 6)
    path = tmp_path / "monitor.json"
    monitor.save(path)
    return path


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port some other program is listening on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_version_is_the_one_in_pyproject() -> None:
    """`streammon --version` prints "streammon X.Y.Z" with pyproject's version, which is streammon.__version__."""
    assert streammon.__version__ == VERSION
    result = _command("--version")
    assert (result.returncode, result.stdout, result.stderr) == (0, f"streammon {VERSION}\n", "")


@pytest.mark.parametrize(("argv", "says"), [
    (["demo", "--port", "99999"], "argument --port: expected a port number from 0 (any free port) to 65535, got 99999"),
    (["demo", "--port", "-1"], "argument --port: expected a port number from 0 (any free port) to 65535, got -1"),
    (["demo", "--port", "http"], "argument --port: expected a port number from 0 to 65535, got 'http'"),
    (["demo", "--duration", "0"], "argument --duration: expected a finite number > 0, got '0'"),
    (["demo", "--duration", "nan"], "argument --duration: expected a finite number > 0, got 'nan'"),
    (["demo", "--duration", "10s"], "argument --duration: expected a number > 0, got '10s'"),
    (["demo", "--rate", "-5"], "argument --rate: expected a finite number > 0 and at most 1e+06, got '-5'"),
    (["demo", "--rate", "inf"], "argument --rate: expected a finite number > 0 and at most 1e+06, got 'inf'"),
    (["demo", "--rate", "1e12"], "argument --rate: expected a finite number > 0 and at most 1e+06, got '1e12'"),
    (["demo", "--unlabelled-share", "1"], "argument --unlabelled-share: expected a number in [0, 1), got '1'"),
    (["demo", "--unlabelled-share", "x"], "argument --unlabelled-share: expected a number in [0, 1), got 'x'"),
    (["demo", "--label-delay", "0"], "argument --label-delay: expected a finite number > 0, got '0'"),
    (["demo", "--every", "0"], "argument --every: expected a finite number > 0, got '0'"),
    (["demo", "--phase-seconds", "-3"], "argument --phase-seconds: expected a finite number > 0, got '-3'"),
    (["demo", "--addr", "::1::", "--duration", "1"], "addr='::1::': expected an IPv4 or IPv6 address"),
    (["rules", "--recall-drop", "lots"], "argument --recall-drop: invalid float value: 'lots'"),
    (["report"], "the following arguments are required: STATE_FILE"),
    (["frobnicate"], "argument command: invalid choice: 'frobnicate'"),
    ([], "the following arguments are required: command"),
])
def test_bad_arguments_end_in_one_line_and_status_2(argv: list[str], says: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A bad value of any subcommand is named in one line on stderr, exit status 2, before anything starts."""
    err = _one_line_failure(argv, capsys)
    command = " ".join(["streammon", *argv[:1]]) if argv and not argv[0].startswith("frob") else "streammon"
    assert err.startswith(f"{command}: error: {says}"), err


def test_a_port_in_use_says_to_pass_another(busy_port: int, capsys: pytest.CaptureFixture[str]) -> None:
    """`streammon demo` on a port already taken says so and how to pick a free one, in one line, status 2."""
    err = _one_line_failure(["demo", "--port", str(busy_port), "--duration", "5"], capsys)
    assert err == (f"streammon demo: error: cannot serve on 127.0.0.1:{busy_port}: the port is already in use; "
                   "pass a free one with --port (0: any free port)\n")


def test_report_prints_windows_and_alerts(state_file: Path) -> None:
    """`streammon report STATE_FILE` prints one line per window and the active alerts, and logs nothing."""
    result = _command("report", str(state_file))
    assert result.returncode == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0] == ("samples=10 classes=['legit', 'fraud'] positive='fraud' "
                        "reference: given 'legit': 0.9, 'fraud': 0.1")
    assert lines[1].startswith("  cumulative     n=10 ") and lines[2].startswith("  sliding_4      n=4 ")
    alerts = [line for line in lines if line.startswith("  ALERT ")]
    assert alerts[0].startswith("  ALERT prior_shift [cumulative] class_mix since sample 10: class mix moved from")
    assert len(alerts) == 3  # and in sliding_4: prior shift, and 'legit' gone from the class set


def test_report_json_is_strict_json_of_the_saved_counts(state_file: Path) -> None:
    """`streammon report --json` prints strict JSON (no NaN) whose counts are those of the saved stream."""
    result = _command("report", str(state_file), "--json")
    assert result.returncode == 0 and result.stderr == ""
    data = json.loads(result.stdout, parse_constant=lambda name: pytest.fail(f"non-JSON constant {name}"))
    assert data["samples"] == 10 and data["totals"] == [[4, 1], [0, 5]]
    assert data["windows"]["sliding_4"]["counts"] == {"legit": 0, "fraud": 4}
    assert data["windows"]["sliding_4"]["recall"]["legit"] is None and data["windows"]["sliding_4"]["rrt"] == 0.0


def _truncated(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")


def _tampered(path: Path) -> None:
    """One digit changed: the last one in the file, whatever the format puts there."""
    text = path.read_text(encoding="utf-8")
    at = max(i for i, ch in enumerate(text) if ch.isdigit())
    path.write_text(text[:at] + str((int(text[at]) + 1) % 10) + text[at + 1:], encoding="utf-8")


@pytest.mark.parametrize(("spoil", "says"), [
    (lambda p: p.unlink(), "no such file: '{path}'; pass a state file written by Monitor.save"),
    (lambda p: (p.unlink(), p.mkdir()), "'{path}' is a directory; pass a state file written by Monitor.save"),
    (lambda p: p.write_bytes(b"\xff\xfe\x00garbage"),
     "'{path}' is not a valid streammon state file: state file is not UTF-8 text"),
    (lambda p: p.write_text("hello", encoding="utf-8"), "'{path}' is not a valid streammon state file: "),
    (_truncated, "'{path}' is not a valid streammon state file: "),
    (_tampered, "'{path}' is not a valid streammon state file: "),
], ids=["missing", "directory", "binary", "not-json", "truncated", "tampered"])
def test_a_bad_state_file_ends_in_one_line_and_status_2(state_file: Path, spoil, says: str,  # type: ignore[no-untyped-def]
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A missing, unreadable, truncated, tampered or foreign state file is named in one line, status 2."""
    spoil(state_file)
    err = _one_line_failure(["report", str(state_file)], capsys)
    assert err.startswith("streammon report: error: " + says.format(path=state_file)), err


def test_a_reader_that_goes_away_ends_the_output_quietly() -> None:
    """`streammon dashboard | head -0`: the closed pipe ends the command without a traceback."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the command writes anything
    try:
        result = _command("dashboard", stdout=write_end)
    finally:
        os.close(write_end)
    assert result.returncode == 1 and result.stderr == "", result.stderr


def test_an_unknown_flag_of_a_subcommand_points_to_that_subcommands_help(capsys: pytest.CaptureFixture[str]) -> None:
    """`streammon replay log.csv --ture y` says 'see streammon replay -h' (the flags are there), exit status 2."""
    with pytest.raises(SystemExit) as stopped:
        main(["replay", "log.csv", "--ture", "y"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip() == ("streammon replay: error: unrecognized arguments: --ture y "
                                               "(see 'streammon replay -h')")
