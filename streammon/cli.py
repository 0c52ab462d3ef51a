"""The ``streammon`` command.

- ``streammon demo`` — stream the embedded synthetic production stream in real time, serve
  ``/metrics`` on 127.0.0.1 (``--port``, default 9464) and print a compact live view;
  stops after ``--duration`` seconds or on Ctrl-C.
- ``streammon rules`` — print the PromQL recording and alerting rules (YAML); ``--profile demo``
  and the flags below set windows, thresholds and ``for:`` durations (``streammon rules -h``).
- ``streammon dashboard`` — print the Grafana dashboard (JSON).

>>> main(["demo", "--duration", "0.6", "--rate", "4000", "--port", "0", "--every", "0.5"])  # doctest: +ELLIPSIS
streammon demo: serving http://127.0.0.1:.../metrics ...
...
stopped after ... samples
0
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
import time
from collections.abc import Sequence
from types import FrameType

from streammon.counting.windows import Cumulative, Sliding, Timed
from streammon.demo import PHASES, REFERENCE, VALIDATION, SyntheticStream
from streammon.export.grafana import render_dashboard
from streammon.export.rules import PROFILES, render_rules
from streammon.export.server import DEFAULT_PORT, serve
from streammon.findings.report import Report, WindowReport
from streammon.monitor import Monitor

HEADLINE = ("acsa", "gmean", "min_recall", "precision", "f1", "accuracy", "mcc")
TICK_SECONDS = 0.1


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


def run_demo(*, port: int, addr: str, duration: float | None, rate: float, phase_seconds: float | None,
             every: float) -> int:
    """Stream the synthetic phases in real time while serving ``/metrics``."""
    phase_seconds = phase_seconds or (duration / len(PHASES) if duration else 60.0)
    stream = SyntheticStream(phase_length=max(1, round(rate * phase_seconds)))
    monitor = Monitor([Cumulative(), Timed(60, buckets=12), Sliding(2000)], reference=REFERENCE, baseline=VALIDATION)
    server = serve(monitor, port=port, addr=addr, model="demo")
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    print(f"streammon demo: serving {server.url} (model='demo'); reference mix {REFERENCE}; "
          f"phases {' → '.join(PHASES)}, {phase_seconds:g}s each", flush=True)
    start = last_view = time.monotonic()
    produced = 0
    try:
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
    except (KeyboardInterrupt, _Stop):
        pass
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous)
    print(f"stopped after {produced} samples", flush=True)
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


def run_replay(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``streammon replay``: replay the log, write the timeline (only once the whole log replayed), print a summary."""
    import json  # noqa: PLC0415 (this command's own imports)
    from pathlib import Path  # noqa: PLC0415

    def mapping(text: str | None) -> dict[str, object] | None:
        if text is None:
            return None
        if Path(text).is_file():
            text = Path(text).read_text(encoding="utf-8")
        if text.lstrip().startswith("{"):
            value = json.loads(text)
            if not isinstance(value, dict):
                raise ValueError(f"expected a JSON object, got {text!r}")
            return value
        pairs = [item.rpartition("=") for item in text.split(",") if item.strip()]
        if not pairs or any(not sep for _, sep, _ in pairs):
            raise ValueError(f"expected LABEL=COUNT,LABEL=COUNT or JSON, got {text!r}")
        return {label.strip(): float(count) for label, _, count in pairs}

    if not args.counts and not (args.true and args.pred):
        parser.error("--true and --pred name the label columns (or give --counts for a bucket-count table)")
    try:
        from streammon.logs import replay, replay_counts  # noqa: PLC0415 (pyarrow only when replaying)

        options = {"every": args.every, "reference": mapping(args.reference), "baseline": mapping(args.baseline),
                   "positive": args.positive, "text_labels": True}
        if args.counts:
            result = replay_counts(args.path, **options)
        else:
            result = replay(args.path, true=args.true, pred=args.pred, time=args.time, **options)
        for path in (args.json, args.parquet):
            if path:
                result.write_timeline(path)
    except ImportError as exc:
        print(f"streammon replay: {exc}: install the replay extra (pip install 'streammon[replay]')", file=sys.stderr)
        return 1
    except (ValueError, TypeError, OSError) as exc:
        print(f"streammon replay: error: {exc}", file=sys.stderr)
        return 1
    span = "" if result.first_time is None else f", data time {result.first_time:g} to {result.last_time:g} s"
    print(f"replayed {result.samples} rows of {result.source}{span}; {len(result.snapshots)} snapshots "
          f"(every {result.every}); classes {list(result.classes)}")
    for line in format_view(result.report, 0.0, "replay").splitlines()[1:]:
        print(line)
    for a in result.alerts:
        until = "still on" if a.cleared is None else f"cleared by snapshot at {a.cleared.time}"
        print(f"  alert {a.kind} [{a.window}] {a.subject}: since sample {a.since_sample} (t={a.since_time:g}), {until}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``streammon`` command."""
    parser = argparse.ArgumentParser(prog="streammon", description="Monitor classifiers under class imbalance.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="stream the embedded synthetic production stream and serve /metrics")
    demo.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"metrics port (default {DEFAULT_PORT}; 0: any)")
    demo.add_argument("--addr", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    demo.add_argument("--duration", type=float, default=None, help="stop after this many seconds (default: Ctrl-C)")
    demo.add_argument("--rate", type=float, default=2000.0, help="labelled samples per second (default 2000)")
    demo.add_argument("--phase-seconds", type=float, default=None,
                      help="seconds per phase (default: duration/4, or 60 without --duration)")
    demo.add_argument("--every", type=float, default=2.0, help="seconds between two views (default 2)")
    rules = sub.add_parser("rules", help="print the PromQL recording and alerting rules (YAML)")
    _add_rule_flags(rules)
    sub.add_parser("dashboard", help="print the Grafana dashboard (JSON)")
    replaying = sub.add_parser("replay", help="replay a log of predictions and labels (Parquet, CSV, Arrow IPC)",
                               description="Replay a log through a monitor: print the final report and the alerts, "
                               "write the timeline of snapshots (JSON or Parquet). Nothing is written if the log "
                               "is malformed.")
    replaying.add_argument("path", help="a Parquet file or folder, a CSV or an Arrow IPC file (or, with --counts, a "
                           "bucket-count table)")
    replaying.add_argument("--true", metavar="COL", help="column of the true labels")
    replaying.add_argument("--pred", metavar="COL", help="column of the predicted labels")
    replaying.add_argument("--time", metavar="COL", help="column of the times (timestamps, dates or seconds; rows in "
                           "time order); without it timed windows are left out")
    replaying.add_argument("--counts", action="store_true", help="PATH is a bucket-count table (bucket_start, true, "
                           "pred, count), as made by DuckDB or Spark")
    replaying.add_argument("--every", metavar="N|DURATION", help="snapshot every N rows or every duration of data "
                           "time: 90s, 15m, 1h, 1d, 1w (default 1d, or 100000 rows without --time)")
    replaying.add_argument("--reference", metavar="MIX", help="the training class mix: LABEL=COUNT,... or JSON (text "
                           "or a file); default: learned from the first 1000 rows")
    replaying.add_argument("--baseline", metavar="JSON", help="validation confusion counts {true: {pred: count}} "
                           "(text or a file) for the degradation detector")
    replaying.add_argument("--positive", metavar="LABEL", help="the binary positive class")
    replaying.add_argument("--json", metavar="PATH", help="write the timeline as JSON")
    replaying.add_argument("--parquet", metavar="PATH", help="write the timeline as Parquet")
    args = parser.parse_args(argv)
    if args.command == "replay":
        return run_replay(args, replaying)
    if args.command == "demo":
        if args.rate <= 0 or (args.duration is not None and args.duration <= 0) or args.every <= 0:
            parser.error("--rate, --duration and --every must be > 0")
        return run_demo(port=args.port, addr=args.addr, duration=args.duration, rate=args.rate,
                        phase_seconds=args.phase_seconds, every=args.every)
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
