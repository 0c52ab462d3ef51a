"""``streammon rules`` windows and ``for:`` durations: Prometheus' duration grammar, positive windows."""

from __future__ import annotations

import pytest

from streammon.cli import main
from streammon.export.durations import milliseconds
from streammon.export.rules import RuleSettings


@pytest.mark.parametrize(("text", "ms"), [
    ("1h30m", 5_400_000), ("90s", 90_000), ("1d", 86_400_000), ("1w", 604_800_000), ("1y", 31_536_000_000),
    ("500ms", 500), ("1m1s1ms", 61_001), ("0s", 0), ("2y3w4d5h6m7s8ms", 2 * 31_536_000_000 + 3 * 604_800_000
                                                     + 4 * 86_400_000 + 5 * 3_600_000 + 6 * 60_000 + 7_000 + 8),
])
def test_durations_read_as_prometheus_reads_them(text: str, ms: int) -> None:
    """Each unit's length in milliseconds, recounted by hand, adds up to the duration read."""
    assert milliseconds(text) == ms


@pytest.mark.parametrize("text", ["1h1h", "30m1h", "1ms1s", "1H", "1h ", " 1h", "1.5h", "-1h", "1", "h", "",
                                  "1h\n", "１h", "99999999999y"])
def test_what_prometheus_refuses_is_refused(text: str) -> None:
    """Units out of order or twice, unknown units, signs, fractions, non-ASCII digits and overflow are refused."""
    with pytest.raises(ValueError, match="Prometheus"):
        milliseconds(text)


@pytest.mark.parametrize(("argv", "says"), [
    (["--window", "0s"], "--window: window must be a positive Prometheus duration"),
    (["--window", "0h0m"], "--window: window must be a positive Prometheus duration"),
    (["--baseline-window", "0d"], "--baseline-window: baseline must be a positive Prometheus duration"),
    (["--window", "1h1h"], "--window: window must be a Prometheus duration"),
    (["--window", "60m", "--baseline-window", "1h"], "window and baseline must differ, got '60m' and '1h'"),
    (["--cusum-for", "1m1m"], "--cusum-for: cusum_for must be a Prometheus duration"),
])
def test_rules_refuse_windows_no_range_can_carry(argv: list[str], says: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A window of 0 or a malformed duration ends in one line naming the flag, status 2, no rules printed."""
    with pytest.raises(SystemExit) as stop:
        main(["rules", *argv])
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == "" and says in err and err.count("\n") == 1, err


def test_a_for_duration_may_be_zero_and_windows_show_as_given(capsys: pytest.CaptureFixture[str]) -> None:
    """for: 0s is Prometheus' 'at once' and is kept; a 90m window appears as [90m] ranges."""
    assert main(["rules", "--cusum-for", "0s", "--window", "90m"]) == 0
    out = capsys.readouterr().out
    assert 'for: "0s"' in out and "[90m]" in out and "[0s]" not in out
    assert RuleSettings(window="90m").window == "90m"
