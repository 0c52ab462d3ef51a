"""The ``streammon`` command.

- ``streammon demo`` — stream the embedded synthetic production stream in real time, serve
  ``/metrics`` on 127.0.0.1 (``--port``, default 9464) and print a compact live view;
  stops after ``--duration`` seconds or on Ctrl-C.
- ``streammon rules`` — print the PromQL recording and alerting rules (YAML); ``--profile demo``
  and the flags below set windows, thresholds and ``for:`` durations (``streammon rules -h``).
- ``streammon dashboard`` — print the Grafana dashboard (JSON).
- ``streammon serve CONFIG`` — run the server that worker processes and other languages send batches to
  (``streammon.serve``); SIGTERM stops it gracefully.
- ``streammon report STATE_FILE`` — load a state file written by ``Monitor.save`` (or a
  ``Checkpointer``) and print its report as read now: one line per window and the active
  alerts, or with ``--json`` the JSON of ``Report.to_dict()``.
- ``streammon replay PATH`` — replay a log through a monitor; ``--window``, and one flag per field of
  ``DetectorSettings`` and ``Policy`` (``--arl``, ``--no-detect``, ``--shift-alpha``, …) set the monitor.
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

import dataclasses
import os
import sys
from collections.abc import Sequence

from streammon import __version__
from streammon.commands.common import Parser, port_number, positive, share
from streammon.commands.demo import MAX_RATE, run_demo, write_demo_report
from streammon.commands.replay import add_replay_parser, run_replay
from streammon.commands.report import run_report
from streammon.commands.rules import RULE_FLAGS, add_rule_flags
from streammon.commands.serve import add_serve_parser, run_serve
from streammon.commands.warm import run_warm_up
from streammon.demo import LateLabels
from streammon.export.grafana import render_dashboard
from streammon.export.rules import PROFILES, render_rules
from streammon.export.server import DEFAULT_PORT

__all__ = ["RULE_FLAGS", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``streammon`` command."""
    try:
        return _run(argv)
    except BrokenPipeError:  # the reader went away (`streammon rules | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _run(argv: Sequence[str] | None) -> int:
    parser = Parser(prog="streammon", description="Monitor classifiers under class imbalance.")
    parser.add_argument("--version", action="version", version=f"streammon {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="stream the embedded synthetic production stream and serve /metrics")
    demo.add_argument("--port", type=port_number, default=DEFAULT_PORT,
                      help=f"metrics port (default {DEFAULT_PORT}; 0: any free port)")
    demo.add_argument("--addr", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    demo.add_argument("--duration", type=positive(), default=None,
                      help="stop after this many seconds (default: the four phases once; Ctrl-C stops earlier)")
    demo.add_argument("--rate", type=positive(MAX_RATE), default=2000.0,
                      help=f"labelled samples per second (default 2000, at most {MAX_RATE:g})")
    demo.add_argument("--phase-seconds", type=positive(), default=None,
                      help="seconds per phase (default: duration/4, or 15 without --duration)")
    demo.add_argument("--every", type=positive(), default=2.0, help="seconds between two views (default 2)")
    demo.add_argument("--html", metavar="PATH", help="write the HTML report of the four phases to PATH and exit, at "
                      "once (data time, not wall time: no server; --every is then the snapshot spacing)")
    demo.add_argument("--late-labels", action="store_true",
                      help="predict now under a key, label later (Monitor.predict/label): labels arrive after a "
                           "random delay, or never")
    demo.add_argument("--label-delay", type=positive(), default=2.0, metavar="SECONDS",
                      help="with --late-labels: mean label delay, lognormal (default 2)")
    demo.add_argument("--unlabelled-share", type=share, default=0.3, metavar="X",
                      help="with --late-labels: share of predictions whose label never comes (default 0.3)")
    rules = sub.add_parser("rules", help="print the PromQL recording and alerting rules (YAML)")
    add_rule_flags(rules)
    sub.add_parser("dashboard", help="print the Grafana dashboard (JSON)")
    sub.add_parser("warm-up", help="compile every loop a monitor can reach into numba's disk cache (an image's "
                                   "build step), so that no process compiles one while it serves",
                   description="Run small streams through every compiled path (decisions, scores, late labels, "
                               "timed buckets, every count width) so that numba's disk cache holds their machine "
                               "code; prints how long it took.")
    add_serve_parser(sub)
    report = sub.add_parser("report", help="print the report of a saved monitor (a state file)",
                            description="Load a state file written by Monitor.save or a Checkpointer and print its "
                                        "report as read now (timed windows of a clock-driven monitor move on to now).")
    report.add_argument("state_file", metavar="STATE_FILE", help="a state file written by Monitor.save")
    report.add_argument("--json", action="store_true",
                        help="print Report.to_dict() as JSON (NaN as null, inf as \"Infinity\")")
    replaying = add_replay_parser(sub)
    args = parser.parse_args(argv)
    if args.command in ("replay", "serve"):
        return run_replay(args, replaying) if args.command == "replay" else run_serve(args.config)
    if args.command == "demo" and args.html:
        return write_demo_report(args.html, duration=args.duration, rate=args.rate,
                                 phase_seconds=args.phase_seconds, every=args.every)
    if args.command == "demo":
        late = LateLabels(delay=args.label_delay, never=args.unlabelled_share) if args.late_labels else None
        return run_demo(port=args.port, addr=args.addr, duration=args.duration, rate=args.rate,
                        phase_seconds=args.phase_seconds, every=args.every, late=late)
    if args.command == "warm-up":
        return run_warm_up()
    if args.command in ("report", "dashboard"):
        return run_report(args.state_file, as_json=args.json) if args.command == "report" else _dashboard()
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
    return 1  # pragma: no cover - argparse knows every command


def _dashboard() -> int:
    sys.stdout.write(render_dashboard())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
