"""Issue #27's headline benchmark: alert episodes of a 90-day fraud log replayed hourly.

The scenario (``episodes_scenario.Scenario``): a binary fraud model (classes ``legit``/``fraud``), 1,500 samples an
hour (Poisson), the fraud share flat at the training mix (1 %) for 14 days, rising linearly to 6 % by day 49, then
flat; recalls fraud 0.80 and legit 0.965 until fraud recall drops to 0.60 on day 69 for the last three weeks.
Reference = the training mix, baseline = validation counts at those recalls, windows cumulative, sliding_1000,
sliding_10000 and timed_3600s, snapshots every hour, detector and policy at their defaults. The log goes through
``streammon.replay`` as a user's file would (an Arrow table with time, true and predicted columns).

Why 1,500 an hour: a mid-size issuer's labelled traffic (3.2 M rows in 90 days); sliding_1000 then spans ~40
minutes, timed_3600s ~1,500 samples and sliding_10000 ~7 hours, so the three windows see different noise; and
the default detector (``arl`` = 10⁶ samples of a class) then expects a false legit alert about every 28 days.

Printed, one table per measure (alerts counted generically by kind, window and subject from each snapshot's
``report().alerts``; an episode is one on-period of consecutive hourly snapshots):

1. every alert's episodes over the 90 days, mean and max over seeds;
2. per window, the prior-shift alert — the target is **at most one episode** (the shift is one episode);
3. the real degradation (found: a ``fraud`` degradation alert turning on after day 69, its delay) and the false
   degradation alerts (any other: count, per month, duration) — the target of the detector's time budget;
4. Prometheus: the rules printed by ``streammon rules`` run by ``promtool test rules`` on the series they read,
   scraped from the real exporter every 15 minutes of the same replay; when ``StreammonPriorShift`` (and every
   other alert) fires, against the process's prior-shift episodes at the same snapshots.

Run: ``python examples/bench_alert_episodes.py`` (100 seeds, 3 of them through promtool scraped every 15 minutes:
2,488 s on the shared 2-core machine at a load of 9–13, of which 2,062 s the 100 replays — about 8 s a replay
idle); ``--quick`` (10 seeds, 1 through promtool scraped hourly: 129 s at a load of 5); ``--seeds N``,
``--promtool-seeds N`` (0: skip Prometheus), ``--scrape 15m|1h``.
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from streammon.export.prometheus import MonitorCollector
from streammon.findings.distortion import Policy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from episodes_promtool import Scrapes, firing, generated_rules, read_names, rule_parts
from episodes_scenario import (
    Degradation,
    Run,
    Scenario,
    degradation,
    episodes,
    monitor_for,
    replay,
    windows,
)

PRIOR_SHIFT = "prior_shift"
RULE = "StreammonPriorShift"


def _stats(values: Sequence[float]) -> str:
    """mean / max of counts."""
    return f"{statistics.fmean(values):.1f} / {max(values):g}" if values else "–"


def _median(values: Sequence[float]) -> str:
    finite = [v for v in values if not math.isnan(v)]
    return f"{statistics.median(finite):.1f}" if finite else "–"


def episode_table(runs: list[Run]) -> None:
    """Table 1: every alert's episodes and on-hours, mean / max over seeds."""
    counts = [{k: len(v) for k, v in episodes(run.active).items()} for run in runs]
    hours = [{k: sum(b - a for a, b in v) for k, v in episodes(run.active).items()} for run in runs]
    keys = {k for c in counts for k in c}
    print(f"\n## 1. Alert episodes over {runs[0].days[-1]:.0f} days, hourly snapshots ({len(runs)} seeds)\n")
    print("| kind | window | subject | episodes mean / max | seeds with ≤ 1 | hours on, mean |")
    print("|---|---|---|---|---|---|")
    for key in sorted(keys):
        n = [c.get(key, 0) for c in counts]
        on = [h.get(key, 0) for h in hours]
        print(f"| {key[0]} | {key[1]} | {key[2]} | {_stats(n)} | {sum(x <= 1 for x in n)}/{len(n)} "
              f"| {statistics.fmean(on):.0f} |")


def shift_table(runs: list[Run], scenario: Scenario) -> dict[str, list[int]]:
    """Table 2: per window, the prior-shift episodes that start once the mix moves (target: at most one), the
    false ones before it (against the documented rate: confirmation puts a false raise at about ``shift_alpha²``
    a read of fresh samples, at most twice that with the raises at once), when the first turned on, hours on
    before the mix moved and the share of hours on once the mix reached 6 %."""
    alpha2 = Policy().shift_alpha ** 2
    print(f"\n## 2. Prior shift per window: target ≤ 1 episode once the mix moves (from day {scenario.shift_start:g} "
          f"to {scenario.shift_end:g}, then it stays)\n")
    print("| window | episodes in all, mean / max | in the shift: seeds with 0 / 1 / more | false, before day "
          f"{scenario.shift_start:g}: count, per read (bound 2α² = {2 * alpha2:.0e}), Poisson p | first on in the "
          f"shift, day (median) | hours on before day {scenario.shift_start:g} (mean) | on after day "
          f"{scenario.shift_end:g} |")
    print("|---|---|---|---|---|---|---|")
    per_window: dict[str, list[int]] = {}
    for window in [w.name for w in windows()]:
        n, shift, false, first, before, after, reads = [], [], 0, [], [], [], 0
        for run in runs:
            spans = [s for (kind, w, _), v in episodes(run.active).items() if kind == PRIOR_SHIFT and w == window
                     for s in v]
            on = [any(k[0] == PRIOR_SHIFT and k[1] == window for k in a) for a in run.active]
            days = np.array(run.days)
            started = [run.days[a] for a, _ in spans]
            n.append(len(spans))
            shift.append(sum(day > scenario.shift_start for day in started))
            false += sum(day <= scenario.shift_start for day in started)
            reads += int(np.sum(days <= scenario.shift_start))
            first.append(min((day for day in started if day > scenario.shift_start), default=float("nan")))
            before.append(int(np.sum(np.array(on) & (days <= scenario.shift_start))))
            late = days > scenario.shift_end
            after.append(float(np.mean(np.array(on)[late])) if late.any() else float("nan"))
        per_window[window] = shift
        bound = 2 * alpha2 * reads  # the expected count at the bound; the p-value of seeing `false` or more
        p_value = 1.0 - sum(math.exp(-bound) * bound ** i / math.factorial(i) for i in range(false))
        print(f"| {window} | {_stats(n)} | {shift.count(0)} / {shift.count(1)} / {sum(x > 1 for x in shift)} "
              f"| {false}, {false / max(reads, 1):.1e}, {p_value:.2f} | {_median(first)} "
              f"| {statistics.fmean(before):.1f} | {100 * statistics.fmean(after):.1f} % |")
    return per_window


def degradation_table(found: list[Degradation], scenario: Scenario) -> None:
    """Table 3: the real drop found and its delay; the false degradation alerts (count, per month, length)."""
    delays = [d.delay_hours for d in found if not math.isnan(d.delay_hours)]
    false = [f for d in found for f in d.false]
    per_seed = [len(d.false) for d in found]
    months = scenario.days / 30.0
    print(f"\n## 3. Degradation: fraud recall {scenario.recall_fraud:g} → {scenario.recall_fraud_after:g} on day "
          f"{scenario.drop_at:g}; every other degradation alert is false\n")
    print("| measure | value |")
    print("|---|---|")
    already = sum(d.already_on for d in found)
    print(f"| real drop found (alerted after it) | {sum(d.found for d in found)}/{len(found)} seeds, of which "
          f"{already} through a false alert already on |")
    if delays:
        print(f"| delay of a new alert, hours: median / mean / max | {statistics.median(delays):.1f} / "
              f"{statistics.fmean(delays):.1f} / {max(delays):.1f} |")
    print(f"| false alerts per seed: mean / max | {_stats(per_seed)} ({sum(x > 0 for x in per_seed)}/{len(found)} "
          f"seeds with any) |")
    print(f"| false alerts per model per month (30 days) | {statistics.fmean(per_seed) / months:.2f} |")
    for cls in sorted({f[0] for f in false}):
        lengths = [f[2] for f in false if f[0] == cls]
        print(f"| false on {cls}: count (all seeds), length in hours mean / max | {len(lengths)}, "
              f"{statistics.fmean(lengths):.0f} / {max(lengths):.0f} |")


def prometheus_table(scenario: Scenario, seeds: Sequence[int], scrape: str, promtool: str) -> None:
    """Table 4: the generated rules through promtool on scrapes of the same replay, against the process."""
    rules = generated_rules()
    alerts, exprs = rule_parts(rules)
    names = read_names(exprs)
    interval = {"15m": 900.0, "1h": 3600.0}[scrape]
    print(f"\n## 4. Prometheus: `streammon rules` run by `promtool test rules`, series scraped every {scrape} from "
          f"the exporter (read by the rules: {', '.join(sorted(names))})\n")
    print("| seed | alert | labels | episodes | first firing, day | hours firing |")
    print("|---|---|---|---|---|---|")
    agreement: list[str] = []
    for seed in seeds:
        monitor = monitor_for(scenario)
        collector = MonitorCollector({"fraud-model": monitor})
        scrapes = Scrapes(names)
        run = replay(scenario, seed, every=scrape, monitor=monitor, on_report=scrapes.reader(collector))
        fired = firing(rules, scrapes, interval, alerts, promtool)
        for (name, labels), at in sorted(fired.items()):
            spans = episodes([frozenset({1}) if i in set(at) else frozenset() for i in range(len(run.days))])[1]
            shown = ", ".join(p for p in labels.split(", ") if not p.startswith(("alertname=", "severity=")))
            print(f"| {seed} | {name} | {shown} | {len(spans)} | {run.days[spans[0][0]]:.2f} "
                  f"| {len(at) * interval / 3600:.0f} |")
        rule_on = {i for (name, _), at in fired.items() if name == RULE for i in at}
        if not any(name == RULE for name, _ in fired):
            print(f"| {seed} | {RULE} | – | 0 | never | 0 |")
        for window in [w.name for w in windows()]:
            on = {i for i, a in enumerate(run.active) if any(k[0] == PRIOR_SHIFT and k[1] == window for k in a)}
            process = len([s for k, v in episodes(run.active).items() if k[0] == PRIOR_SHIFT and k[1] == window
                           for s in v])
            rule = len(episodes([frozenset({1}) if i in rule_on else frozenset() for i in range(len(run.days))])
                       .get(1, []))
            both = len(on & rule_on) / len(on | rule_on) if on | rule_on else 1.0
            same = rule == 1 and process == 1 and bool(on & rule_on)
            agreement.append(f"| {seed} | {window} | {process} | {rule} | {100 * both:.1f} % | "
                             f"{'yes' if same else 'no'} |")
    print(f"\nThe process's prior-shift alert against {RULE} at the same {scrape} snapshots (agreement: snapshots "
          "both on / snapshots either on; the rule's `for:` delays it by whole evaluations):\n")
    print("| seed | window | process episodes | rule episodes | agreement | one episode, the same |")
    print("|---|---|---|---|---|---|")
    print("\n".join(agreement))


def main(argv: Sequence[str] | None = None) -> int:
    """Replay the seeds and print the four tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=None, help="seeds replayed (default 100; --quick 10)")
    parser.add_argument("--promtool-seeds", type=int, default=None,
                        help="of those, seeds run through promtool (default 3; --quick 1; 0: skip)")
    parser.add_argument("--quick", action="store_true", help="10 seeds, 1 through promtool scraped hourly")
    parser.add_argument("--scrape", choices=("15m", "1h"), default=None,
                        help="scrape and rule evaluation spacing (default 15m; --quick 1h, where a [1h] range "
                             "holds two scrapes only because Prometheus 2's ranges include both ends)")
    args = parser.parse_args(argv)
    seeds = args.seeds if args.seeds is not None else (10 if args.quick else 100)
    prom = args.promtool_seeds if args.promtool_seeds is not None else (1 if args.quick else 3)
    if seeds < 1 or prom < 0:
        parser.error(f"--seeds must be >= 1 and --promtool-seeds >= 0, got {seeds} and {prom}")
    scenario = Scenario()
    started = time.perf_counter()
    print(f"# Alert episodes, {scenario.days:g}-day fraud log: {scenario.rate:g} samples/h, fraud share "
          f"{scenario.share_before:.0%} → {scenario.share_after:.0%} (days {scenario.shift_start:g}–"
          f"{scenario.shift_end:g}), fraud recall {scenario.recall_fraud:g} → {scenario.recall_fraud_after:g} on day "
          f"{scenario.drop_at:g}; {seeds} seeds")
    runs, found = [], []
    for seed in range(seeds):
        run = replay(scenario, seed)
        runs.append(run)
        found.append(degradation(run, scenario))
    replayed = time.perf_counter() - started
    episode_table(runs)
    shift_table(runs, scenario)
    degradation_table(found, scenario)
    if prom:
        promtool = shutil.which("promtool")
        if promtool is None:
            print("\n## 4. Prometheus: skipped, promtool not found (Debian's 'prometheus' package)")
        else:
            scrape = args.scrape or ("1h" if args.quick else "15m")
            prometheus_table(scenario, range(min(prom, seeds)), scrape, promtool)
    print(f"\nRun time: {replayed:.0f} s for {seeds} replays, {time.perf_counter() - started:.0f} s in all.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
