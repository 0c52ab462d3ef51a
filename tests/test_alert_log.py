"""Alerts raised and cleared are logged on "streammon.alerts": once per change, outside the lock, no handlers added."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from scipy import stats

from streammon import Alert, Monitor, Sliding

ROOT = Path(__file__).resolve().parent.parent

AT_REFERENCE = (["neg"] * 90 + ["pos"] * 10, ["neg"] * 90 + ["pos"] * 10)
HALF_HALF = (["neg"] * 50 + ["pos"] * 50, ["neg"] * 50 + ["pos"] * 50)


def _monitor() -> Monitor:
    return Monitor([Sliding(100)], reference={"neg": 9, "pos": 1}, clock=lambda: 7.0,
                   baseline={"neg": {"neg": 95, "pos": 5}, "pos": {"pos": 90, "neg": 10}})


def _logged(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "streammon.alerts"]


def test_a_prior_shift_alert_is_logged_once_when_raised_and_once_when_cleared(
        caplog: pytest.LogCaptureFixture) -> None:
    """WARNING when the mix moves away, nothing while it stays away, INFO once it is back: when the samples since
    the window came back show its mix within 1.25× of the reference (two one-sided exact tests at 0.05, recounted
    here with scipy) and the window has turned over three times (Policy.alert_hold)."""
    caplog.set_level(logging.INFO, logger="streammon.alerts")
    monitor = _monitor()
    monitor.update_many(*AT_REFERENCE)
    monitor.report()
    assert _logged(caplog) == []
    monitor.update_many(*HALF_HALF)
    monitor.report()
    monitor.report()
    (raised,) = _logged(caplog)
    assert raised[0] == "WARNING"
    assert raised[1].startswith("alert raised: prior_shift in sliding_100 on class_mix since sample 200: class mix")
    caplog.clear()

    def back(reads: int) -> bool:  # the pool of `reads` windows at 10 %: both shares within 1.25× of 90/10
        n, pos = 100 * reads, 10 * reads
        return bool(stats.binom.cdf(pos, n, 0.125) < 0.05 and stats.binom.sf(pos - 1, n, 0.08) < 0.05
                    and stats.binom.cdf(n - pos, n, 1.0) <= 1 and stats.binom.sf(n - pos - 1, n, 0.72) < 0.05)

    reads = next(r for r in range(4, 100) if back(r))  # the fourth read at the earliest: three turnovers since
    assert reads > 4  # the test, not the hold, decides here
    for _ in range(reads - 1):
        monitor.update_many(*AT_REFERENCE)
        monitor.report()
        assert _logged(caplog) == []
    monitor.update_many(*AT_REFERENCE)
    monitor.report()
    assert _logged(caplog) == [
        ("INFO", f"alert cleared: prior_shift in sliding_100 on class_mix (raised at sample 200), at sample "
                 f"{200 + 100 * reads}")
    ]


def test_a_degradation_alert_is_logged_with_the_alert_attached(caplog: pytest.LogCaptureFixture) -> None:
    """A class whose recall collapses is logged as a WARNING whose record carries the Alert itself."""
    caplog.set_level(logging.INFO, logger="streammon.alerts")
    monitor = _monitor()
    for _ in range(3):
        monitor.update_many(["neg"] * 900 + ["pos"] * 100, ["neg"] * 1000)
        monitor.report()
    records = [r for r in caplog.records if "degradation" in r.getMessage()]
    assert len(records) == 1 and records[0].levelno == logging.WARNING
    alert = records[0].alert
    assert isinstance(alert, Alert) and (alert.kind, alert.window, alert.subject) == ("degradation", "stream", "pos")
    assert records[0].getMessage().startswith(f"alert raised: degradation in stream on pos since sample "
                                              f"{alert.since_sample}: recall of 'pos' fell below its baseline")


def test_alerts_are_logged_outside_the_monitor_lock() -> None:
    """A log handler runs while the monitor's lock is free, so a handler that reads the monitor cannot deadlock."""
    monitor = _monitor()
    lock_free: list[bool] = []

    class Probe(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            def probe() -> None:  # another thread: a non-blocking try, no timing involved
                got = monitor._lock.acquire(blocking=False)
                if got:
                    monitor._lock.release()
                lock_free.append(got)

            thread = threading.Thread(target=probe)
            thread.start()
            thread.join()

    logger = logging.getLogger("streammon.alerts")
    probe, level = Probe(), logger.level
    logger.addHandler(probe)
    logger.setLevel(logging.INFO)
    try:
        monitor.update_many(*HALF_HALF)
        monitor.report()
        for _ in range(10):  # back at the reference: the held alert clears (at the sixth read)
            monitor.update_many(*AT_REFERENCE)
            monitor.report()
    finally:
        logger.removeHandler(probe)
        logger.setLevel(level)
    assert lock_free == [True, True]  # one raised, one cleared


def test_the_library_configures_no_log_handlers() -> None:
    """The library adds no handler that writes anywhere: "streammon" has only a NullHandler (the logging HOWTO's
    rule for libraries), "streammon.alerts" none, and both propagate: the application decides."""
    monitor = _monitor()
    monitor.update_many(*HALF_HALF)
    monitor.report()
    assert [type(h) for h in logging.getLogger("streammon").handlers] == [logging.NullHandler]
    assert logging.getLogger("streammon.alerts").handlers == []
    assert logging.getLogger("streammon").propagate and logging.getLogger("streammon.alerts").propagate


def test_a_script_that_configures_no_logging_prints_no_alert_records() -> None:
    """The logging HOWTO's rule for libraries: streammon's logger has a NullHandler, so an alert raised in a script
    that configured nothing prints nothing on stderr (logging.lastResort used to print every one); once the
    application configures logging, the records reach its handlers."""
    code = ("import logging, sys\nfrom streammon import Monitor, Sliding\n"
            "if sys.argv[1] == 'configured':\n"
            "    logging.basicConfig()\n"
            "m = Monitor([Sliding(50)], reference={'a': 1, 'b': 1})\n"
            "m.update_many(['a'] * 40 + ['b'] * 40, ['b'] * 40 + ['b'] * 40)\n"
            "assert m.report().alerts\n")
    quiet = subprocess.run([sys.executable, "-c", code, "plain"], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert quiet.stderr == ""
    loud = subprocess.run([sys.executable, "-c", code, "configured"], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "streammon.alerts" in loud.stderr
