"""Command line: ``streammon demo`` runs the embedded synthetic stream.

>>> main(["demo", "--samples", "8000", "--phase-length", "2000", "--every", "4000"])  # doctest: +ELLIPSIS
streammon demo — ...
...
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from streammon.demo import REFERENCE, SyntheticStream
from streammon.monitor import Monitor
from streammon.report import WindowReport
from streammon.windows import Cumulative, Sliding

HEADLINE = ("acsa", "gmean", "min_recall", "precision", "f1", "accuracy", "mcc")


def format_window(w: WindowReport) -> str:
    """One compact line per window: mix, headline scores (``*`` = flagged), flags."""
    flagged = set(w.flagged())
    scores = "  ".join(
        f"{name}={w.scores[name]:.3f}{'*' if name in flagged else ''}" for name in HEADLINE if name in w.scores
    )
    shift = w.prior_shift
    js = f"{shift.js:.3f}" if shift is not None else "n/a"
    kinds = sorted({f.kind for f in w.flags})
    return (
        f"  {w.name:<14} n={w.n:<6} RRT={w.rrt:6.2f} IR={w.ir:5.1f} JS={js}  {scores}"
        f"  flags={','.join(kinds) or '-'}"
    )


def run_demo(samples: int, phase_length: int, every: int) -> None:
    """Feed the synthetic stream to a monitor and print a compact view every ``every`` samples."""
    stream = SyntheticStream(phase_length=phase_length)
    monitor = Monitor([Cumulative(), Sliding(2000)], reference=REFERENCE)
    print(f"streammon demo — {samples} samples, reference mix {REFERENCE}")
    for start in range(0, samples, every):
        stop = min(samples, start + every)
        truth, preds = stream.arrays(start, stop)
        monitor.update_many(truth, preds)
        report = monitor.report()
        print(f"after {stop} samples (phase: {stream.phase_at(stop - 1)})")
        for w in report.windows.values():
            print(format_window(w))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``streammon`` command."""
    parser = argparse.ArgumentParser(prog="streammon", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the embedded synthetic production stream")
    demo.add_argument("--samples", type=int, default=80_000, help="samples to stream (default 80000)")
    demo.add_argument("--phase-length", type=int, default=20_000, help="samples per phase (default 20000)")
    demo.add_argument("--every", type=int, default=10_000, help="print a view every N samples")
    args = parser.parse_args(argv)
    if args.command == "demo":
        run_demo(args.samples, args.phase_length, args.every)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
