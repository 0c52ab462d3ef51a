"""Prior-shift alert episodes on scenarios other than issue #27's: other rates, mixes, ramps and windows.

``bench_alert_episodes.py`` replays the issue's 90-day fraud log; the defaults were measured there. This script
asks whether they hold elsewhere — the process's prior-shift episodes per window, replayed hourly through
``streammon.replay`` with the default policy (``episodes_scenario``), on:

- **slow, common class**: 300 samples an hour, a 5 % class rising to 15 % over days 14–49; windows of 200 and
  3,000 samples and the last hour (~300 samples);
- **busy, sudden**: 6,000 samples an hour, a 2 % class doubling to 4 % within three days (20–23); windows of 500
  and 20,000 samples and the last 30 minutes;
- **no shift**: the issue's rate and 1 % class, flat for 90 days; windows of 1,000 samples and the last hour —
  every episode here is false (2,160 hourly reads a seed).

Target as in the issue: at most one prior-shift episode per window in the shifted scenarios (the shift is one
episode); in the flat one, none beyond the documented rate (about α³ a read of fresh samples with the default
confirmation across two turnovers).

Run: ``python examples/bench_alert_episodes_more.py`` (100 seeds, two processes: ~25 min on the shared 2-core
machine); ``--seeds N``, ``--case I`` (only case I, by position; repeatable).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from multiprocessing import Pool
from pathlib import Path

import streammon

sys.path.insert(0, str(Path(__file__).resolve().parent))
from episodes_scenario import Scenario, episodes, replay

WindowSpec = tuple[str, float]  # ("sliding", samples) or ("timed", seconds): windows are made fresh per monitor
CASES: dict[str, tuple[Scenario, tuple[WindowSpec, ...]]] = {
    "slow, common class (5 % → 15 %, 300/h)": (
        Scenario(rate=300.0, share_before=0.05, share_after=0.15),
        (("sliding", 200), ("sliding", 3_000), ("timed", 3_600))),
    "busy, sudden (2 % → 4 % in 3 days, 6,000/h)": (
        Scenario(rate=6_000.0, share_before=0.02, share_after=0.04, shift_start=20.0, shift_end=23.0),
        (("sliding", 500), ("sliding", 20_000), ("timed", 1_800))),
    "no shift (1 %, 1,500/h)": (
        Scenario(share_after=0.01),
        (("sliding", 1_000), ("timed", 3_600))),
}


def _window(spec: WindowSpec) -> streammon.Window:
    kind, size = spec
    return streammon.Sliding(int(size)) if kind == "sliding" else streammon.Timed(size)


def replay_case(job: tuple[str, int]) -> tuple[str, int, dict[str, list[float]]]:
    """One seed of one case: each window's prior-shift episodes, as the day each began."""
    name, seed = job
    scenario, specs = CASES[name]
    monitor = streammon.Monitor([_window(s) for s in specs], reference=scenario.reference)
    run = replay(scenario, seed, monitor=monitor)
    starts: dict[str, list[float]] = {}
    for (kind, window, _), spans in episodes(run.active).items():
        if kind == "prior_shift":
            starts[window] = [run.days[a] for a, _ in spans]
    return name, seed, starts


def main(argv: Sequence[str] | None = None) -> int:
    """Replay every case's seeds (two processes) and print one table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100, help="seeds per case (default 100)")
    parser.add_argument("--case", choices=range(len(CASES)), type=int, action="append",
                        help="only these cases, by position (default: all)")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be >= 1, got {args.seeds}")
    chosen = [name for i, name in enumerate(CASES) if args.case is None or i in args.case]
    started = time.perf_counter()
    with Pool(2) as pool:
        results = pool.map(replay_case, [(name, seed) for name in chosen for seed in range(args.seeds)])
    print(f"# Prior-shift episodes on other scenarios ({args.seeds} seeds each, hourly reads, default policy)\n")
    print("| scenario | window | episodes mean / max | seeds with 0 / 1 / more | first on, day (median) |")
    print("|---|---|---|---|---|")
    more: list[str] = []
    for name in chosen:
        scenario, specs = CASES[name]
        for window in [_window(s).name for s in specs]:
            more += [f"- {name}, {window}, seed {seed}: episodes from days "
                     f"{', '.join(f'{d:.2f}' for d in starts[window])} (the mix moves on day {scenario.shift_start:g})"
                     for case, seed, starts in results if case == name and len(starts.get(window, [])) > 1]
            counts = [len(starts.get(window, [])) for case, _, starts in results if case == name]
            first = [starts[window][0] for case, _, starts in results if case == name and starts.get(window)]
            median = f"{statistics.median(first):.1f}" if first else "–"
            print(f"| {name} | {window} | {statistics.fmean(counts):.2f} / {max(counts)} | {counts.count(0)} / "
                  f"{counts.count(1)} / {sum(c > 1 for c in counts)} | {median} |")
    if more:
        print("\nWindows with more than one episode:\n")
        print("\n".join(more))
    print(f"\nRun time: {time.perf_counter() - started:.0f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
