"""``streammon replay``: a log of predictions and labels through a monitor (see ``streammon.logs``)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from streammon.commands.common import fail
from streammon.commands.demo import format_view
from streammon.commands.paths import clash

if TYPE_CHECKING:
    from streammon.logs.spans import AlertSpan


def add_join_flags(replaying: argparse.ArgumentParser) -> None:
    """``--key``, ``--labels``, ``--label-time``: a labels log joined to the predictions (``streammon.logs.joined``);
    ``--score``: the score columns of a log of labelled predictions."""
    replaying.add_argument("--key", metavar="COL", help="with --labels: the key column joining predictions (PATH: "
                           "key, --pred, --time) and labels (key, --true, --label-time)")
    replaying.add_argument("--labels", metavar="PATH", help="a labels log (same formats) joined to the predictions "
                           "on --key through the delayed-labels machinery, in time order (ties: predictions first)")
    replaying.add_argument("--label-time", metavar="COL", help="the labels log's time column (default: --time)")
    replaying.add_argument("--score", metavar="COL", action="append", help="column of the model's score (a binary "
                           "model's positive-class probability); for K > 2 give it once per class, in the order of "
                           "the --reference classes (not with --labels)")


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
    problem = _clash(args)
    if problem is not None:  # before anything is read or written
        return fail("replay", problem)
    try:
        from streammon.logs import replay, replay_counts  # noqa: PLC0415 (pyarrow only when replaying)
        from streammon.logs.columns import show_time  # noqa: PLC0415

        options = {"every": args.every, "reference": mapping(args.reference), "baseline": mapping(args.baseline),
                   "positive": args.positive, "text_labels": True}
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
    span = ("" if result.first_time is None or result.last_time is None else
            f", data time {show_time(result.first_time)} to {show_time(result.last_time)}")
    print(f"replayed {result.samples} rows of {result.source}{span}; {len(result.snapshots)} snapshots "
          f"(every {result.every}); classes {list(result.classes)}")
    for line in format_view(result.report, 0.0, "replay").splitlines()[1:]:
        print(line)
    for a in result.alerts:
        print(f"  alert {a.kind} [{a.window}] {a.subject}: {_span(a, show_time)}")
    return 0


def _check_flags(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """The flags that go together are given together (else a usage error, status 2)."""
    if not args.counts and not (args.true and args.pred):
        parser.error("--true and --pred name the label columns (or give --counts for a bucket-count table)")
    if (args.key is None) != (args.labels is None) or (args.counts and args.labels):
        parser.error("--key and --labels go together (and not with --counts)")
    if args.label_time and not (args.labels and args.time):
        parser.error("--label-time needs --labels and --time")


def _clash(args: argparse.Namespace) -> str | None:
    """Why an output flag cannot be written (it is an input, in an input folder, or another output), or None."""
    return clash({"PATH": args.path, "--labels": args.labels, "--reference": args.reference,
                  "--baseline": args.baseline}, {"--json": args.json, "--parquet": args.parquet, "--html": args.html})


def _span(alert: AlertSpan, show_time: Callable[[float], str]) -> str:
    """When an alert of the replay turned on and when it cleared, as a person reads it."""
    since = f"since sample {alert.since_sample}"
    if not math.isnan(alert.since_time):
        since += f" at {show_time(alert.since_time)}"
    if alert.cleared is None:
        return f"{since}, still on"
    if alert.cleared.time is None:
        return f"{since}, cleared by the snapshot at sample {alert.cleared.samples}"
    return f"{since}, cleared by the snapshot at {show_time(alert.cleared.time)}"


