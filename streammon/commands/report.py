"""``streammon report STATE_FILE``: the report of a saved monitor, as text or JSON."""

from __future__ import annotations

import json
import sys

from streammon.commands.common import alert_log, fail, printable
from streammon.commands.demo import format_window
from streammon.findings.report import Report
from streammon.monitor import Monitor
from streammon.state import StateError


def format_report(report: Report) -> str:
    """A saved monitor at a glance: classes and reference, one line per window, flags, active alerts."""
    reference = "none yet"
    if report.reference is not None:
        priors = ", ".join(f"{label!r}: {p:.3g}" for label, p in report.reference.priors.items())
        reference = f"{report.reference.source} {priors}"
    lines = [f"samples={report.samples} classes={list(report.labels)!r} positive={report.positive!r} "
             f"reference: {reference}"]
    lines += [format_window(w) for w in report.windows.values()]
    for w in report.windows.values():
        lines += [f"    ! {w.name}: {flag.kind} {flag.metric}: {flag.reason}"
                  for flag in sorted(w.flags, key=lambda f: -abs(f.magnitude))[:3]]
    lines += [f"  ALERT {a.kind} [{a.window}] {a.subject} since sample {a.since_sample}: {a.reason}"
              for a in report.alerts]
    if not report.alerts:
        lines.append("  no active alerts")
    return "\n".join(printable(line) for line in lines)  # labels and names cannot forge lines or escapes


def run_report(path: str, *, as_json: bool) -> int:
    """Print the report of the monitor saved in ``path``."""
    try:
        monitor = Monitor.load(path)
    except FileNotFoundError:
        return fail("report", f"no such file: {path!r}; pass a state file written by Monitor.save")
    except IsADirectoryError:
        return fail("report", f"{path!r} is a directory; pass a state file written by Monitor.save")
    except PermissionError:
        return fail("report", f"cannot read {path!r}: permission denied")
    except (StateError, ValueError) as error:
        return fail("report", f"{path!r} is not a valid streammon state file: {error}")
    except OSError as error:
        return fail("report", f"cannot read {path!r}: {error.strerror or error}")
    with alert_log(to_stderr=False):  # the report lists the active alerts itself
        report = monitor.report()
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), allow_nan=False, indent=2) + "\n")
    else:
        sys.stdout.write(format_report(report) + "\n")
    return 0


# RuleSettings field -> (flag, type, help); every flag overrides the chosen profile.
