"""Every knob of the monitor on `streammon replay`'s command line and in the server's TOML: windows, every
DetectorSettings field and every Policy field — each reaches the monitor, a bad value is refused."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest

from streammon import Monitor
from streammon.cli import main
from streammon.commands.knobs import add_monitor_flags, monitor_options
from streammon.counting.windows import Cumulative
from streammon.detection.baseline import DetectorSettings
from streammon.findings.distortion import Policy
from streammon.serve.config import ConfigError, parse
from tests.replay_data import REFERENCE, log_frame

# Values that differ from the defaults, as typed on a command line, and the value the monitor must hold.
CHOSEN: dict[str, tuple[str, Any]] = {
    "arl": ("1e8", 1e8), "recovery_arl": ("inf", math.inf), "baseline_samples": ("2_000", 2000),
    "refine_until": ("64000", 64000), "false_alarm_interval": ("7d", 7 * 86_400.0),
    "type1_tolerance": ("0.05", 0.05), "collapse_recall": ("0.1", 0.1), "shift_alpha": ("0.001", 0.001),
    "shift_min_js": ("0.02", 0.02), "confidence": ("0.99", 0.99),
    "metric_params": ('{"holder": {"p": 1.0}, "iba": {"alpha": 0.1}}', {"holder": {"p": 1.0}, "iba": {"alpha": 0.1}}),
}
FIELDS = [(owner, f) for owner in (DetectorSettings, Policy) for f in dataclasses.fields(owner)]


def _flag(field: dataclasses.Field[Any]) -> str:
    """The flag the docs promise: the field's name with dashes (``enabled`` is ``--detect/--no-detect``)."""
    return "--detect" if field.name == "enabled" else "--" + field.name.replace("_", "-")


def _chosen(field: dataclasses.Field[Any]) -> tuple[list[str], Any]:
    """Arguments setting ``field`` to a non-default value, and that value; a field this test does not know yet
    (added since) gets 0.9 times its default, or twice an int's."""
    default = field.default if field.default is not dataclasses.MISSING else None
    if isinstance(default, bool):
        return ["--no-detect" if field.name == "enabled" else f"--no-{field.name.replace('_', '-')}"], not default
    if field.name in CHOSEN:
        text, value = CHOSEN[field.name]
        return [_flag(field), text], value
    if isinstance(default, int):
        return [_flag(field), str(2 * default)], 2 * default
    if not isinstance(default, float):
        pytest.skip(f"no generic value for the new field {field.name} (default {default!r})")
    return [_flag(field), repr(0.9 * default)], 0.9 * default


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_monitor_flags(parser)
    return parser


def _saved(monitor: Monitor) -> dict[str, Any]:
    """What a monitor holds, read back from its own state file (not from the objects the flags made)."""
    body: dict[str, Any] = json.loads(monitor.dumps())["body"]
    return body


@pytest.mark.parametrize(("owner", "field"), FIELDS, ids=[f"{o.__name__}.{f.name}" for o, f in FIELDS])
def test_each_field_is_a_flag_whose_value_reaches_the_monitor(owner: type, field: dataclasses.Field[Any]) -> None:
    """Each DetectorSettings/Policy field has a flag; the value typed reaches the monitor's saved state."""
    args, value = _chosen(field)
    parser = _parser()
    options = monitor_options(parser.parse_args(args), parser)
    monitor = Monitor([Cumulative()], detector=options["detector"], policy=options["policy"])
    held = _saved(monitor)["detector" if owner is DetectorSettings else "policy"][field.name]
    assert held == value if not isinstance(value, dict) else {k: dict(v) for k, v in held.items()} == value


def test_replay_help_lists_every_knob(capsys: pytest.CaptureFixture[str]) -> None:
    """`streammon replay -h` lists --window and a flag for every field of DetectorSettings and Policy."""
    with pytest.raises(SystemExit):
        main(["replay", "-h"])
    out = capsys.readouterr().out
    assert "--window SPEC" in out
    for _, field in FIELDS:
        assert _flag(field) in out, field.name
    assert "--no-detect" in out


@pytest.fixture(scope="module")
def log_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 6-hour CSV log of 6,000 rows: times in seconds, labels legit/fraud."""
    path = tmp_path_factory.mktemp("knobs") / "log.csv"
    log_frame(n=6_000)[["seconds", "y", "p"]].to_csv(path, index=False)
    return path


def test_replay_builds_its_monitor_from_the_flags(log_csv: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Windows, detector and policy given to `streammon replay` are those of the monitor it saves, and the windows
    are the timeline's; a timed window given as a duration is named in seconds."""
    state, timeline = tmp_path / "state.json", tmp_path / "timeline.json"
    ref = ",".join(f"{k}={v}" for k, v in REFERENCE.items())
    status = main(["replay", str(log_csv), "--true", "y", "--pred", "p", "--time", "seconds", "--reference", ref,
                   "--window", "cumulative", "--window", "sliding:500", "--window", "timed:30m",
                   "--arl", "5e7", "--baseline-samples", "300", "--shift-alpha", "0.002", "--confidence", "0.9",
                   "--json", str(timeline), "--save", str(state)])
    out = capsys.readouterr().out
    assert status == 0, out
    body = _saved(Monitor.load(state))
    assert [w["describe"]["name"] for w in body["windows"]] == ["cumulative", "sliding_500", "timed_1800s"]
    assert body["windows"][2]["describe"]["seconds"] == 1800.0
    assert (body["detector"]["arl"], body["detector"]["baseline_samples"]) == (5e7, 300)
    assert (body["policy"]["shift_alpha"], body["policy"]["confidence"]) == (0.002, 0.9)
    rows = json.loads(timeline.read_text())
    assert {r["window"] for r in rows} == {"cumulative", "sliding_500", "timed_1800s"}
    # the policy's confidence is the level of the reported intervals: a 90 % Wilson interval of the final recall
    last = max(r["samples"] for r in rows)
    recall = next(r for r in rows if r["samples"] == last and r["window"] == "cumulative"
                  and r["metric"] == "class_recall" and r["class"] == "fraud")
    counts = Monitor.load(state).counts()["cumulative"].to_dict()["fraud"]
    hits, total = counts.get("fraud", 0), sum(counts.values())
    wilson = binomtest(hits, total).proportion_ci(confidence_level=0.9, method="wilson")
    assert recall["lower"] == pytest.approx(wilson.low, rel=1e-6)
    assert recall["upper"] == pytest.approx(wilson.high, rel=1e-6)


def test_no_detect_turns_degradation_alerts_off(log_csv: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The log's fraud recall drops to 0.5: a degradation alert by default, printed before the earlier prior shifts
    (alert episodes, most severe first); none with --no-detect."""
    base = ["replay", str(log_csv), "--true", "y", "--pred", "p", "--time", "seconds", "--reference",
            "legit=95,fraud=5", "--baseline", json.dumps({"legit": {"legit": 980, "fraud": 20},
                                                         "fraud": {"fraud": 90, "legit": 10}})]
    assert main(base) == 0
    alerts = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  alert ")]
    assert alerts[0].startswith("  alert degradation [stream] fraud: since sample")  # the most severe first
    assert any(line.startswith("  alert prior_shift") for line in alerts[1:])
    assert main([*base, "--no-detect"]) == 0
    assert "alert degradation" not in capsys.readouterr().out


BAD = [
    (["--arl", "lots"], "argument --arl: expected a number, got 'lots'"),
    (["--arl", "0.5"], "argument --arl: must be .*a finite number > 1"),
    (["--baseline-samples", "1.5"], "argument --baseline-samples: expected an integer, got '1.5'"),
    (["--shift-alpha", "5"], r"argument --shift-alpha: must be a number in .0(\.0)?, 1(\.0)?\], got 5.0"),
    (["--confidence", "nan"], "argument --confidence: expected a number, got 'nan'"),
    (["--arl", "1h"], "argument --arl: expected a number, got '1h'"),
    (["--metric-params", "{x"], "argument --metric-params: expected JSON"),
    (["--metric-params", '{"holder": {"p": "x"}}'],
     "argument --metric-params: metric .holder. parameter .p. takes a number or a boolean, got .x."),
    (["--metric-params", '{"holder": {"p": 0.5}, "nosuch": {}}'], "argument --metric-params: unknown metric 'nosuch'"),
    (["--window", "sliding:ten"], "argument --window: 'sliding:ten' is not a window: expected 'cumulative'"),
    (["--window", "timed:1y"], "argument --window: window 'timed:1y': expected a duration"),
    (["--window", "sliding:0"], "argument --window: window 'sliding:0': Sliding size must be an int >= 1"),
    (["--window", "sliding:10", "--window", "sliding:10"], "argument --window: the windows' names must be unique"),
]


@pytest.mark.parametrize(("extra", "says"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_a_bad_knob_is_one_line_status_2_and_nothing_written(
        extra: list[str], says: str, log_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad value: status 2, one line naming the flag, the value and what was expected; no output file."""
    outputs = [tmp_path / name for name in ("t.json", "r.html", "s.json")]
    argv = ["replay", str(log_csv), "--true", "y", "--pred", "p", "--time", "seconds", *extra,
            "--json", str(outputs[0]), "--html", str(outputs[1]), "--save", str(outputs[2])]
    with pytest.raises(SystemExit) as stop:
        main(argv)
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == "" and err.count("\n") == 1, (stop.value.code, out, err)
    assert re.search(says, err), err
    assert not any(p.exists() for p in outputs)


def test_a_timed_window_without_times_is_a_usage_error(log_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--window timed:... without --time names what is missing (status 2)."""
    with pytest.raises(SystemExit) as stop:
        main(["replay", str(log_csv), "--true", "y", "--pred", "p", "--window", "timed:1h"])
    assert stop.value.code == 2
    assert "'timed:1h' is a timed window: it needs --time" in capsys.readouterr().err


def test_the_server_config_reads_the_same_settings(tmp_path: Path) -> None:
    """The TOML detector/policy tables take every field the flags take, with the same checks; windows accept
    durations."""
    detector = {f.name: CHOSEN[f.name][1] for f in dataclasses.fields(DetectorSettings) if f.name in CHOSEN}
    policy = {f.name: CHOSEN[f.name][1] for f in dataclasses.fields(Policy) if f.name in CHOSEN}

    def toml(value: Any) -> str:
        if isinstance(value, dict):
            return "{ " + ", ".join(f"{k} = {toml(v)}" for k, v in value.items()) + " }"
        return "inf" if value == math.inf else repr(value)

    text = ('[server]\nlisten = "127.0.0.1:0"\nstate_dir = "s"\n[models.m]\nwindows = ["cumulative", "timed:2h"]\n'
            f"detector = {toml(detector)}\npolicy = {toml(policy)}\n")
    model = parse(text, base=tmp_path).models["m"]
    body = _saved(Monitor(**model.options()))
    assert [w.name for w in model.windows()] == ["cumulative", "timed_7200s"]
    assert {k: body["detector"][k] for k in detector} == detector
    assert {k: body["policy"][k] for k in policy if k != "metric_params"} == {
        k: v for k, v in policy.items() if k != "metric_params"}
    with pytest.raises(ConfigError, match=r"\[models.m\] policy shift_alpha: must be a number in .0(\.0)?, 1"):
        parse(text.replace("shift_alpha = 0.001", "shift_alpha = 5.0"), base=tmp_path)
