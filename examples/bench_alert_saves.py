"""What the server's alert-change saves cost: how many reads change a monitor's alert bookkeeping, and what a save
and a read take, side by side.

``streammon serve`` saves a model within a second of a read (a scrape, a report) that changed its alerts —
raised after confirmation, held, pooled, waiting for confirmation — as reads are not journalled
(``streammon.serve.hub.ALERT_SAVE_DELAY``). This replays a binary model read every 15 s of data time, with
predictions scored and half of them labelled at once: 200 reads at the reference mix (5 % fraud), 100 at 15 %,
300 back at 5 %; it counts the reads that changed the bookkeeping (each is one save more than the periodic
checkpoints, printed beside those of the same span), then times a save (journal and state file in a temporary
folder) and an uncached read of that monitor with ``--pending`` predictions waiting.

    python examples/bench_alert_saves.py [--pending 10000] [--seed 3]

About 30 s on a shared 2-core machine.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from streammon import Cumulative, Monitor, Sliding, Timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pending", type=int, default=10_000, help="predictions waiting when saves are timed")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    folder = Path(tempfile.mkdtemp())
    monitor = Monitor([Cumulative(), Sliding(1000), Sliding(10_000), Timed(3600)], reference={"legit": 95, "fraud": 5},
                      pending=folder / "journal.sqlite")
    t, changed = 0.0, 0
    print(f"{'phase':>16} {'reads':>6} {'changed the alerts':>19} {'alerts on after':>16}")
    for share, reads in ((0.05, 200), (0.15, 100), (0.05, 300)):
        before = monitor._alert_changes
        for _ in range(reads):
            y = np.where(rng.random(200) < share, "fraud", "legit")
            score = np.clip(np.where(y == "fraud", rng.beta(4, 2, 200), rng.beta(2, 5, 200)), 0.001, 0.999)
            keys = [f"{t}-{i}" for i in range(200)]
            monitor.predict_many(keys, np.where(score >= 0.5, "fraud", "legit"), y_score=score, t=t)
            monitor.label_many(keys[:100], y[:100], t=t)
            t += 15
            monitor.report()
        changed += monitor._alert_changes - before
        on = len(monitor.report().alerts)
        print(f"{f'{share:.0%} fraud':>16} {reads:>6} {monitor._alert_changes - before:>19} {on:>16}")
    print(f"{'all':>16} {600:>6} {changed:>19}   saves more, against {t / 60:.0f} periodic checkpoints (every 60 s) "
          f"over the same {t / 3600:.1f} h")
    keys = [f"waiting-{i}" for i in range(args.pending)]
    monitor.predict_many(keys, ["legit"] * args.pending, y_score=rng.random(args.pending), t=t)
    saves, reads_ = [], []
    for _ in range(9):
        started = time.perf_counter()
        monitor.save(folder / "state.json")
        saves.append(time.perf_counter() - started)
        monitor._last_report = None  # an uncached read, as after new batches
        started = time.perf_counter()
        monitor.report()
        reads_.append(time.perf_counter() - started)
    size = (folder / "state.json").stat().st_size
    print(f"\nwith {args.pending:,} predictions waiting: a save {statistics.median(saves) * 1e3:.0f} ms "
          f"(state file {size / 1e6:.2f} MB), an uncached read {statistics.median(reads_) * 1e3:.1f} ms "
          f"(medians of 9; save / read = {statistics.median(saves) / statistics.median(reads_):.1f})")
    monitor.close()


if __name__ == "__main__":
    main()
