"""The ``streammon`` command.

- ``streammon demo`` — stream the embedded synthetic production stream in real time, serve
  ``/metrics`` on 127.0.0.1 (``--port``, default 9464) and print a compact live view;
  stops after ``--duration`` seconds or on Ctrl-C.
- ``streammon rules`` — print the PromQL recording and alerting rules (YAML); ``--profile demo``
  and the flags below set windows, thresholds and ``for:`` durations (``streammon rules -h``).
- ``streammon dashboard`` — print the Grafana dashboard (JSON).
- ``streammon report STATE_FILE`` — load a state file written by ``Monitor.save`` (or a
  ``Checkpointer``) and print its report as read now: one line per window and the active
  alerts, or with ``--json`` the JSON of ``Report.to_dict()``.
- ``streammon --version`` — print ``streammon X.Y.Z``.

A bad argument, an unreadable or corrupt state file, or a port that cannot be served
ends the command with one line on stderr and exit status 2 (no traceback).

>>> main(["demo", "--duration", "0.6", "--rate", "4000", "--port", "0", "--every", "0.5"])  # doctest: +ELLIPSIS
streammon demo: serving http://127.0.0.1:.../metrics ...
...
stopped after ... samples
0
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import json
import logging
import math
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import NoReturn

from streammon import __version__
from streammon.counting.windows import Cumulative, Sliding, Timed
from streammon.demo import PHASES, REFERENCE, VALIDATION, SyntheticStream
from streammon.export.grafana import render_dashboard
from streammon.export.rules import PROFILES, render_rules
from streammon.export.server import DEFAULT_PORT, serve
from streammon.findings.report import Report, WindowReport
from streammon.monitor import Monitor
from streammon.state import StateError

HEADLINE = ("acsa", "gmean", "min_recall", "precision", "f1", "accuracy", "mcc")
TICK_SECONDS = 0.1
MAX_RATE = 1_000_000.0  # labelled samples per second the demo will try to produce


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (with where to find help) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} -h')\n")


def _fail(command: str, message: str) -> int:
    """One line on stderr, status 2: what went wrong and what to do."""
    sys.stderr.write(f"streammon {command}: error: {message}\n")
    return 2


def _port(text: str) -> int:
    """A TCP port: 0 (any free one) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 (any free port) to 65535, got {port}")
    return port


def _positive(upper: float = math.inf) -> Callable[[str], float]:
    """A finite number > 0 (and <= ``upper``)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
        if not (math.isfinite(value) and 0 < value <= upper):
            limit = "" if math.isinf(upper) else f" and at most {upper:g}"
            raise argparse.ArgumentTypeError(f"expected a finite number > 0{limit}, got {text!r}")
        return value
    return parse


def format_window(w: WindowReport) -> str:
    """One compact line per window: mix, headline scores (``*`` = flagged), flag kinds."""
    flagged = set(w.flagged())
    scores = "  ".join(
        f"{name}={w.scores[name]:.3f}{'*' if name in flagged else ''}" for name in HEADLINE if name in w.scores
    )
    js = "n/a" if w.prior_shift is None else f"{w.prior_shift.js:.3f}"
    kinds = ",".join(sorted({f.kind for f in w.flags})) or "-"
    return f"  {w.name:<14} n={w.n:<7} RRT={w.rrt:6.2f} IR={w.ir:5.1f} JS={js}  {scores}  flags={kinds}"


def format_view(report: Report, elapsed: float, phase: str) -> str:
    """The live view: a header, one line per window, then what not to trust and why."""
    lines = [f"[{elapsed:6.1f}s] phase={phase:<12} samples={report.samples}"]
    lines += [format_window(w) for w in report.windows.values()]
    main = list(report.windows.values())[-1]
    worst_first = sorted(main.flags, key=lambda f: -abs(f.magnitude))
    for flag in worst_first[:3]:
        lines.append(f"    ! {flag.kind} {flag.metric}: {flag.reason}")
    if len(main.flags) > 3:
        lines.append(f"    ! … and {len(main.flags) - 3} more flags in {main.name}")
    for alert in report.alerts:
        if alert.window in (main.name, "stream"):
            lines.append(f"    ALERT {alert.kind} [{alert.window}] {alert.subject} since sample {alert.since_sample}")
    return "\n".join(lines)


class _Stop(Exception):
    """Raised by SIGTERM so that the demo stops like on Ctrl-C."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Stop


@contextlib.contextmanager
def _alert_log(*, to_stderr: bool) -> Iterator[None]:
    """While inside: alerts raised and cleared go to stderr with a time stamp (``to_stderr``), or nowhere."""
    log = logging.getLogger("streammon.alerts")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    level, disabled = log.level, log.disabled
    if to_stderr:
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    else:
        log.disabled = True
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        log.disabled = disabled


def run_demo(*, port: int, addr: str, duration: float | None, rate: float, phase_seconds: float | None,
             every: float) -> int:
    """Stream the synthetic phases in real time while serving ``/metrics``."""
    phase_seconds = phase_seconds or (duration / len(PHASES) if duration else 60.0)
    stream = SyntheticStream(phase_length=max(1, round(rate * phase_seconds)))
    monitor = Monitor([Cumulative(), Timed(60, buckets=12), Sliding(2000)], reference=REFERENCE, baseline=VALIDATION)
    try:
        server = serve(monitor, port=port, addr=addr, model="demo")
    except ValueError as error:
        return _fail("demo", f"{error}; pass another --addr")
    except OSError as error:
        return _fail("demo", _listen_failure(addr, port, error))
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    print(f"streammon demo: serving {server.url} (model='demo'); reference mix {REFERENCE}; "
          f"phases {' → '.join(PHASES)}, {phase_seconds:g}s each", flush=True)
    start = time.monotonic()
    try:
        with _alert_log(to_stderr=True):
            _stream(monitor, stream, start=start, duration=duration, rate=rate, every=every)
    except (KeyboardInterrupt, _Stop):
        pass
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous)
    print(f"stopped after {monitor.samples} samples", flush=True)
    return 0


def _stream(monitor: Monitor, stream: SyntheticStream, *, start: float, duration: float | None, rate: float,
            every: float) -> None:
    """Feed the monitor in real time and print a view every ``every`` seconds, until ``duration``."""
    last_view = start
    produced = 0
    while duration is None or time.monotonic() - start < duration:
        due = int((time.monotonic() - start) * rate)
        if due > produced:
            truth, preds = stream.arrays(produced, due)
            monitor.update_many(truth, preds)
            produced = due
        if time.monotonic() - last_view >= every:
            last_view = time.monotonic()
            print(format_view(monitor.report(), last_view - start, stream.phase_at(max(0, produced - 1))),
                  flush=True)
        time.sleep(TICK_SECONDS)


def _listen_failure(addr: str, port: int, error: OSError) -> str:
    """Why ``addr:port`` cannot be served, and what to do."""
    where = f"[{addr}]:{port}" if ":" in addr and not addr.startswith("[") else f"{addr}:{port}"
    if error.errno == errno.EADDRINUSE:
        return f"cannot serve on {where}: the port is already in use; pass a free one with --port (0: any free port)"
    if error.errno == errno.EACCES:
        return (f"cannot serve on {where}: permission denied (ports below 1024 need privileges); "
                "pass another --port (0: any free port)")
    if error.errno == errno.EADDRNOTAVAIL:
        return f"cannot serve on {where}: {addr} is not an address of this machine; pass another --addr"
    return f"cannot serve on {where}: {error.strerror or error}; check --addr and --port"


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
    return "\n".join(lines)


def run_report(path: str, *, as_json: bool) -> int:
    """Print the report of the monitor saved in ``path``."""
    try:
        monitor = Monitor.load(path)
    except FileNotFoundError:
        return _fail("report", f"no such file: {path!r}; pass a state file written by Monitor.save")
    except IsADirectoryError:
        return _fail("report", f"{path!r} is a directory; pass a state file written by Monitor.save")
    except PermissionError:
        return _fail("report", f"cannot read {path!r}: permission denied")
    except (StateError, ValueError) as error:
        return _fail("report", f"{path!r} is not a valid streammon state file: {error}")
    except OSError as error:
        return _fail("report", f"cannot read {path!r}: {error.strerror or error}")
    with _alert_log(to_stderr=False):  # the report lists the active alerts itself
        report = monitor.report()
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), allow_nan=False, indent=2) + "\n")
    else:
        sys.stdout.write(format_report(report) + "\n")
    return 0


# RuleSettings field -> (flag, type, help); every flag overrides the chosen profile.
RULE_FLAGS: dict[str, tuple[str, type, str]] = {
    "window": ("--window", str, "recall window of the cross-replica rules (default 1h; demo 1m)"),
    "baseline": ("--baseline-window", str,
                 "long window standing in for a class's baseline where no exporter reports one (default 1d)"),
    "recall_drop": ("--recall-drop", float, "StreammonClassRecallDegraded: drop below the baseline (default 0.15)"),
    "min_class_samples": ("--min-class-samples", int,
                          "StreammonClassRecallDegraded: labelled samples of the class in the window (default 100)"),
    "min_samples_per_class": ("--min-samples-per-class", int,
                              "StreammonIncompetent: samples of every present class in the window (default 30)"),
    "prior_shift_tv": ("--prior-shift-tv", float, "StreammonPriorShift: total variation threshold (default 0.1)"),
    "cusum_replicas": ("--cusum-replicas", int,
                       "StreammonClassDegraded: replicas whose in-process CUSUM flags the class (default 1)"),
    "cusum_for": ("--cusum-for", str, "for: of StreammonClassDegraded (default 1m; demo 3s)"),
    "degradation_for": ("--degradation-for", str, "for: of StreammonClassRecallDegraded (default 10m; demo 15s)"),
    "incompetent_for": ("--incompetent-for", str, "for: of StreammonIncompetent (default 10m; demo 15s)"),
    "class_set_for": ("--class-set-for", str, "for: of StreammonClassSetChanged (default 5m; demo 5s)"),
    "shift_for": ("--shift-for", str, "for: of StreammonPriorShift (default 15m; demo 15s)"),
    "runbook": ("--runbook", str, "page the runbook_url annotations point into, + '#<alert name>' (default README.md)"),
}


def _add_rule_flags(parser: argparse.ArgumentParser) -> None:
    """``--profile`` and one flag per ``RuleSettings`` field (durations are Prometheus durations: 90s, 1h, 1d)."""
    parser.add_argument("--profile", choices=sorted(PROFILES), default="default",
                        help="starting values: default (production) or demo (for `streammon demo`)")
    for field, (flag, kind, text) in RULE_FLAGS.items():
        metavar = {str: "DURATION", float: "X", int: "N"}[kind] if field != "runbook" else "URL"
        parser.add_argument(flag, dest=field, type=kind, default=None, metavar=metavar, help=text)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``streammon`` command."""
    try:
        return _run(argv)
    except BrokenPipeError:  # the reader went away (`streammon rules | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _run(argv: Sequence[str] | None) -> int:
    parser = _Parser(prog="streammon", description="Monitor classifiers under class imbalance.")
    parser.add_argument("--version", action="version", version=f"streammon {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="stream the embedded synthetic production stream and serve /metrics")
    demo.add_argument("--port", type=_port, default=DEFAULT_PORT,
                      help=f"metrics port (default {DEFAULT_PORT}; 0: any free port)")
    demo.add_argument("--addr", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    demo.add_argument("--duration", type=_positive(), default=None,
                      help="stop after this many seconds (default: Ctrl-C)")
    demo.add_argument("--rate", type=_positive(MAX_RATE), default=2000.0,
                      help=f"labelled samples per second (default 2000, at most {MAX_RATE:g})")
    demo.add_argument("--phase-seconds", type=_positive(), default=None,
                      help="seconds per phase (default: duration/4, or 60 without --duration)")
    demo.add_argument("--every", type=_positive(), default=2.0, help="seconds between two views (default 2)")
    rules = sub.add_parser("rules", help="print the PromQL recording and alerting rules (YAML)")
    _add_rule_flags(rules)
    sub.add_parser("dashboard", help="print the Grafana dashboard (JSON)")
    report = sub.add_parser("report", help="print the report of a saved monitor (a state file)",
                            description="Load a state file written by Monitor.save or a Checkpointer and print its "
                                        "report as read now (timed windows of a clock-driven monitor move on to now).")
    report.add_argument("state_file", metavar="STATE_FILE", help="a state file written by Monitor.save")
    report.add_argument("--json", action="store_true",
                        help="print Report.to_dict() as JSON (NaN as null, inf as \"Infinity\")")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return run_demo(port=args.port, addr=args.addr, duration=args.duration, rate=args.rate,
                        phase_seconds=args.phase_seconds, every=args.every)
    if args.command == "report":
        return run_report(args.state_file, as_json=args.json)
    if args.command == "rules":
        overrides = {field: getattr(args, field) for field in RULE_FLAGS if getattr(args, field) is not None}
        try:
            settings = dataclasses.replace(PROFILES[args.profile], **overrides)
        except ValueError as error:
            for field, (flag, _, _) in RULE_FLAGS.items():
                if str(error).startswith(f"{field} "):
                    rules.error(f"{flag}: {error}")
            rules.error(str(error))
        sys.stdout.write(render_rules(settings))
        return 0
    sys.stdout.write(render_dashboard())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
