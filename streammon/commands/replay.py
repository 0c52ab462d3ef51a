"""``streammon replay``: a log of predictions and labels through a monitor (see ``streammon.logs``)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from streammon.commands.common import fail
from streammon.commands.demo import format_view
from streammon.commands.knobs import add_monitor_flags, monitor_options
from streammon.commands.paths import clash

if TYPE_CHECKING:
    from streammon.logs.report_episodes import Episode
    from streammon.logs.result import ReplayResult

MAX_ALERT_LINES = 40  # alert episodes printed at most, the most severe first; the rest are counted


def add_replay_parser(sub: Any) -> argparse.ArgumentParser:
    """The ``replay`` subcommand's parser: the log, its columns, the outputs and the monitor's knobs."""
    replaying: argparse.ArgumentParser = sub.add_parser(
        "replay", help="replay a log of predictions and labels (Parquet, CSV, Arrow IPC)",
        description="Replay a log through a monitor: print the final report and the alerts, "
                               "write the timeline of snapshots (JSON or Parquet). Nothing is written if the log "
                               "is malformed.")
    replaying.add_argument("path", help="a Parquet file or folder, a CSV or an Arrow IPC file (or, with --counts, a "
                           "bucket-count table)")
    replaying.add_argument("--true", metavar="COL", help="column of the true labels")
    replaying.add_argument("--pred", metavar="COL", help="column of the predicted labels")
    replaying.add_argument("--time", metavar="COL", help="column of the times (timestamps, dates or seconds; rows in "
                           "time order); without it timed windows are left out")
    add_join_flags(replaying)
    replaying.add_argument("--counts", action="store_true", help="PATH is a bucket-count table (bucket_start, true, "
                           "pred, count), as made by DuckDB or Spark")
    replaying.add_argument("--every", metavar="N|DURATION", help="snapshot every N rows or every duration of data "
                           "time: 90s, 15m, 1h, 1d, 1w (default 1d, or 100000 rows without --time)")
    replaying.add_argument("--reference", metavar="MIX", help="the training class mix: LABEL=COUNT,... or JSON (text "
                           "or a file); default: learned from the first 1000 rows. Checked against the labels of the "
                           "first 100000 rows: a reference class they lack beside a log label the reference lacks "
                           "that looks like it (Fraud/fraud, a close spelling) stops the replay (status 2); a class "
                           "merely absent does not")
    replaying.add_argument("--baseline", metavar="JSON", help="validation confusion counts {true: {pred: count}} "
                           "(text or a file) for the degradation detector")
    replaying.add_argument("--validation", metavar="CSV", help="instead of --baseline: a scored validation set, "
                           "columns y_true, y_pred and y_score (binary: the probability of --positive) or "
                           "y_score:CLASS per class (as a server's validation file): with --score, the class mix is "
                           "estimated by EM and the performance expected without labels (the --html report draws "
                           "them; with --labels, before the labels join). Without --reference the score columns "
                           "follow its y_score:CLASS order")
    replaying.add_argument("--positive", metavar="LABEL", help="the binary positive class")
    replaying.add_argument("--json", metavar="PATH", help="write the timeline as JSON")
    replaying.add_argument("--parquet", metavar="PATH", help="write the timeline as Parquet")
    replaying.add_argument("--html", metavar="PATH", help="write the HTML report (one self-contained page; needs "
                           "the report extra: pip install 'streammon[report]')")
    replaying.add_argument("--save", metavar="PATH", help="save the monitor after the replay (Monitor.save: "
                           "'streammon report PATH' reads it, a server can start from it)")
    add_monitor_flags(replaying)
    return replaying


def add_join_flags(replaying: argparse.ArgumentParser) -> None:
    """``--key``, ``--labels``, ``--label-time``: a labels log joined to the predictions (``streammon.logs.joined``);
    ``--score``: the score columns of a log of labelled predictions, or of the predictions log joined to labels."""
    replaying.add_argument("--key", metavar="COL", help="with --labels: the key column joining predictions (PATH: "
                           "key, --pred, --time) and labels (key, --true, --label-time)")
    replaying.add_argument("--labels", metavar="PATH", help="a labels log (same formats) joined to the predictions "
                           "on --key through the delayed-labels machinery, in time order (ties: predictions first)")
    replaying.add_argument("--label-time", metavar="COL", help="the labels log's time column (default: --time)")
    replaying.add_argument("--score", metavar="COL", action="append", help="column of the model's score (a binary "
                           "model's positive-class probability); for K > 2 give it once per class, in the order of "
                           "the --reference classes (with --labels: columns of the predictions log PATH)")


def run_replay(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``streammon replay``: replay the log, write the timeline (only once the whole log replayed), print a summary."""
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

    _check_flags(args, parser)
    knobs = monitor_options(args, parser)  # a bad value is a usage error before anything is read
    problem = _clash(args)
    if problem is not None:  # before anything is read or written
        return fail("replay", problem)
    try:
        from streammon.logs import replay, replay_counts  # noqa: PLC0415 (pyarrow only when replaying)
        from streammon.logs.columns import show_time  # noqa: PLC0415

        baseline: Any = mapping(args.baseline)
        if args.validation:
            baseline = _validation_reader(Path(args.validation))
        options = {"every": args.every, "reference": mapping(args.reference), "baseline": baseline,
                   "positive": args.positive, "text_labels": True, **knobs}
        if args.counts:
            result = replay_counts(args.path, **options)
        else:
            joined = {"key": args.key, "labels": args.labels, "label_time": args.label_time} if args.labels else {}
            scored = {"score": args.score} if args.score else {}
            result = replay(args.path, true=args.true, pred=args.pred, time=args.time, **joined, **scored, **options)
        for path in (args.json, args.parquet):
            if path:
                result.write_timeline(path)
        if args.html:
            result.write_html(args.html)
        if args.save:
            result.monitor.save(args.save)
    except ImportError as exc:
        extra = "report" if exc.name and exc.name.startswith("plotly") else "replay"
        print(f"streammon replay: {exc}: install the {extra} extra (pip install 'streammon[{extra}]')",
              file=sys.stderr)
        return 1
    except (ValueError, TypeError, OSError) as exc:
        from streammon.logs.errors import ReferenceMismatch  # noqa: PLC0415 (loaded by the replay that raised)

        if isinstance(exc, ReferenceMismatch):  # the command line's reference, not the log: a usage error
            return fail("replay", str(exc))
        print(f"streammon replay: error: {exc}", file=sys.stderr)
        return 1
    _summary(result, show_time)
    return 0


def _summary(result: ReplayResult, show_time: Callable[[float], str]) -> None:
    """Print what was replayed, the final windows and the alert episodes (the most severe first)."""
    span = ("" if result.first_time is None or result.last_time is None else
            f", data time {show_time(result.first_time)} to {show_time(result.last_time)}")
    print(f"replayed {result.samples} rows of {result.source}{span}; {len(result.snapshots)} snapshots "
          f"(every {result.every}); classes {list(result.classes)}")
    for line in format_view(result.report, 0.0, "replay").splitlines()[1:]:
        print(line)
    from streammon.logs.report_episodes import episodes  # noqa: PLC0415

    found = episodes(result.alerts, result.snapshots)  # a flapping alert is one line, the most severe first
    for e in found[:MAX_ALERT_LINES]:
        merged = f" ({e.toggles} on-periods)" if e.toggles > 1 else ""
        print(f"  alert {e.kind} [{e.window}] {e.subject}: {_span(e, show_time)}{merged}")
    if len(found) > MAX_ALERT_LINES:
        print(f"  ... and {len(found) - MAX_ALERT_LINES} more alert episodes (less severe or later)")


def _check_flags(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """The flags that go together are given together (else a usage error, status 2)."""
    if not args.counts and not (args.true and args.pred):
        parser.error("--true and --pred name the label columns (or give --counts for a bucket-count table)")
    if (args.key is None) != (args.labels is None) or (args.counts and args.labels):
        parser.error("--key and --labels go together (and not with --counts)")
    if args.label_time and not (args.labels and args.time):
        parser.error("--label-time needs --labels and --time")
    if args.validation and (args.baseline or args.counts):
        parser.error("--validation is the baseline of a log with scores: not with --baseline or --counts")
    if args.score and len(args.score) == 1 and not (args.reference or args.positive):
        parser.error("--score needs --reference or --positive: a binary score is the positive class's probability, "
                     "and without them the positive class would still be learned from the warm-up")
    if args.score and len(args.score) > 1 and not (args.reference or args.baseline or args.validation):
        parser.error(f"{len(args.score)} --score columns need --reference (or --baseline, or --validation): they are "
                     "the classes' probabilities in the order of its classes")
    timed = [spec for spec in args.knob_windows or () if spec.strip().startswith("timed")]
    if timed and not args.counts and not args.time:
        parser.error(f"argument --window: {timed[0]!r} is a timed window: it needs --time (the time column)")


def _validation_reader(path: Any) -> Callable[[tuple[Any, ...] | None, Any], Any]:
    """``--validation``: the file read as a ``streammon.Validation`` once the replay knows the log's label type
    (``streammon.logs.feed.replay_monitor`` calls this with the reference's classes and the positive class)."""
    from streammon.serve.validation_file import read_validation  # noqa: PLC0415

    def read(classes: tuple[Any, ...] | None, positive: Any) -> Any:
        return read_validation(path, positive=positive, classes=classes, where="--validation")

    return read


def _clash(args: argparse.Namespace) -> str | None:
    """Why an output flag cannot be written (it is an input, in an input folder, or another output), or None."""
    inputs = {"PATH": args.path, "--labels": args.labels, "--reference": args.reference, "--baseline": args.baseline,
              "--validation": args.validation}
    return clash(inputs, {"--json": args.json, "--parquet": args.parquet, "--html": args.html, "--save": args.save})


def _span(episode: Episode, show_time: Callable[[float], str]) -> str:
    """When an alert episode of the replay turned on and when it cleared, as a person reads it."""
    since = f"since sample {episode.start_sample}"
    if not math.isnan(episode.start_time):
        since += f" at {show_time(episode.start_time)}"
    if episode.end is None:
        return f"{since}, still on"
    if episode.end.time is None:
        return f"{since}, cleared by the snapshot at sample {episode.end.samples}"
    return f"{since}, cleared by the snapshot at {show_time(episode.end.time)}"
