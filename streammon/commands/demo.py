"""``streammon demo``: the embedded synthetic stream in real time, served on /metrics, with a live view."""

from __future__ import annotations

import errno
import signal
import time
from types import FrameType

import numpy as np

from streammon.commands.common import alert_log, fail, printable
from streammon.counting.windows import Cumulative, Sliding, Timed
from streammon.demo import PHASES, REFERENCE, VALIDATION, LateLabels, SyntheticStream, detector_for
from streammon.export.server import serve
from streammon.findings.report import Report, WindowReport
from streammon.monitor import Monitor

HEADLINE = ("acsa", "gmean", "min_recall", "precision", "f1", "accuracy", "mcc")
TICK_SECONDS = 0.1
DEFAULT_PHASE_SECONDS = 15.0  # without --duration: four phases of 15 s, then the demo stops
MAX_RATE = 1_000_000.0  # labelled samples per second the demo will try to produce


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
    stats = report.label_stats
    if stats is not None:
        p50, p90 = stats.latency["p50"], stats.latency["p90"]
        lines.append(f"  labels: predictions={stats.predictions} labelled={stats.labelled} "
                     f"coverage={stats.coverage:.1%} pending={stats.pending} latency p50={p50:.2f}s p90={p90:.2f}s")
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
    return "\n".join(printable(line) for line in lines)  # labels and names cannot forge lines or escapes


class _Stop(Exception):
    """Raised by SIGTERM so that the demo stops like on Ctrl-C."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def run_demo(*, port: int, addr: str, duration: float | None, rate: float, phase_seconds: float | None,
             every: float, late: LateLabels | None = None) -> int:
    """Stream the synthetic phases in real time while serving ``/metrics`` (with ``late``: every sample predicted
    under a key, its label given after ``late``'s delay, or never)."""
    phase_seconds = phase_seconds or (duration / len(PHASES) if duration else DEFAULT_PHASE_SECONDS)
    duration = duration or phase_seconds * len(PHASES)  # the demo ends by itself after its four phases
    stream = SyntheticStream(phase_length=max(1, round(rate * phase_seconds)))
    monitor = Monitor([Cumulative(), Timed(60, buckets=12), Sliding(2000)], reference=REFERENCE, baseline=VALIDATION,
                      detector=detector_for(rate))
    try:
        server = serve(monitor, port=port, addr=addr, model="demo")
    except ValueError as error:
        return fail("demo", f"{error}; pass another --addr")
    except OSError as error:
        return fail("demo", _listen_failure(addr, port, error))
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    print(f"streammon demo: serving {server.url} (model='demo'); reference mix {REFERENCE}; "
          f"phases {' → '.join(PHASES)}, {phase_seconds:g}s each", flush=True)
    start = time.monotonic()
    try:
        with alert_log(to_stderr=True):
            _stream(monitor, stream, start=start, duration=duration, rate=rate, every=every, late=late)
    except (KeyboardInterrupt, _Stop):
        pass
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous)
    print(f"stopped after {monitor.samples} samples", flush=True)
    return 0


def _stream(monitor: Monitor, stream: SyntheticStream, *, start: float, duration: float | None, rate: float,
            every: float, late: LateLabels | None) -> None:
    """Feed the monitor in real time and print a view every ``every`` seconds, until ``duration``."""
    last_view = start
    produced = 0
    while duration is None or time.monotonic() - start < duration:
        due = int((time.monotonic() - start) * rate)
        if due > produced:
            truth, preds = stream.arrays(produced, due)
            if late is None:
                monitor.update_many(truth, preds)
            else:
                monitor.predict_many(np.arange(produced, due), preds)
                late.schedule(produced, truth, time.monotonic())
            produced = due
        if late is not None:
            keys, truth = late.due(time.monotonic())
            if len(keys):
                monitor.label_many(keys, truth)
        if time.monotonic() - last_view >= every:
            last_view = time.monotonic()
            print(format_view(monitor.report(), last_view - start, stream.phase_at(max(0, produced - 1))),
                  flush=True)
        time.sleep(TICK_SECONDS)


def write_demo_report(path: str, *, duration: float | None, rate: float, phase_seconds: float | None,
                      every: float) -> int:
    """``streammon demo --html PATH``: the four phases replayed at once (sample i at data time i/rate seconds,
    a snapshot every ``every`` seconds of data time) into the HTML report, the phases marked; no server."""
    from streammon.logs.replayer import Every, Replayer  # noqa: PLC0415 (plotly only when writing a report)

    phase_seconds = phase_seconds or (duration / len(PHASES) if duration else DEFAULT_PHASE_SECONDS)
    phase_length = max(1, round(rate * phase_seconds))
    stream = SyntheticStream(phase_length=phase_length)
    monitor = Monitor([Cumulative(), Timed(60, buckets=12), Sliding(2000)], reference=REFERENCE, baseline=VALIDATION,
                      detector=detector_for(rate), clock=lambda: 0.0)
    replayer = Replayer(monitor, Every(None, every, f"{every:g}s"), timed=True)
    total, chunk = phase_length * len(PHASES), 100_000
    for start in range(0, total, chunk):
        truth, preds = stream.arrays(start, min(total, start + chunk))
        replayer.feed(truth, preds, np.arange(start, start + len(truth)) / rate, "demo", start)
    result = replayer.finish(f"streammon demo: synthetic fraud stream, {rate:g} samples/s, {phase_seconds:g} s a phase")
    marks = [(i * phase_length / rate, phase) for i, phase in enumerate(PHASES)]
    try:
        result.write_html(path, title="streammon demo — the four phases", marks=marks, dates=False)
    except ImportError as error:
        return fail("demo", f"{error}: install the report extra (pip install 'streammon[report]')")
    except OSError as error:
        return fail("demo", f"cannot write {path}: {error.strerror or error}")
    print(f"streammon demo: wrote {path} ({total:,} samples, {len(result.snapshots)} snapshots, "
          f"{len(result.alerts)} alerts)")
    return 0


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


