"""False degradation alerts per model per month against the documented time budget (run on demand).

streammon's default is ``DetectorSettings(false_alarm_interval=30 days)``: one false degradation alert per model
per 30 days while every recall stays at its baseline (``streammon.detection.rates``). This script checks it on
stationary binary streams (minority 1 %, 3 % or 10 %, recalls constant; errors flip the label), with the default
settings throughout — baselines learned from each class's first samples and refined, as a user gets them:

1. **10 samples/s, end to end**: ``--seeds`` streams (default 100) of ``--days`` days of data time (default 60),
   5·10⁷ samples each, fed to a ``Monitor`` in batches of 2²² with per-sample times ``t = index / rate``. Every
   degradation incident the detector opened is a false alert (read from ``Monitor.tally.watch``: open and closed
   ones). Printed: alerts per model per month against the budget (1), their ratio, and its exact Poisson 95 %
   interval over all seeds.
2. **1,000 samples/s**: 5·10⁹ samples per stream of 60 days is beyond this machine for 100 seeds, so the same
   check is split in two faithful parts. (a) End to end, one stream per mix of ``--fast-hours`` hours at 1,000/s
   (the first sections of a 60-day stream): the run length each class is given, against ``30 days · λ_c · 2`` from
   the recounted rate; and the detector's throughput. (b) Each class's in-control run length at exactly the bank
   and thresholds the detector derived there, simulated (``streammon.detection.simulate.first_passages``: the same
   CUSUM recursion, a wrong sample at a time, right runs geometric; ``--paths`` paths per class, censored at
   ``CENSOR`` × the run length) at the class's true recall: alerts per month = Σ_c λ_c · 30 days / ARL_c,
   with the error of the simulated ARLs. The learned baseline's error is part of (b): the bank is the one the
   detector learned.
3. **Pure prior shift, 10/s**: the minority share moving 1 % → 6 % linearly over the stream while recalls stay
   (``--seeds`` streams of ``--days`` days): false alerts against the budget, by a two-sided Poisson test
   (p ≥ 0.05 is the target): a moving mix must add no false degradation alert beyond the calibrated rate.

4. **Diagnosis** (``sensitivity``): each class's run length at the thresholds derived for its final 32,000-sample
   baseline, exact against learned (part 4's docstring); ~10 minutes at 100 paths × 30 draws on a loaded machine.

    nice -n 10 python examples/bench_false_alarm_budget.py [--quick]

The full run takes about an hour on one core; ``--quick`` (20 seeds of 30 days, 20 paths, 5 draws) about 12 minutes.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np
from scipy import stats

from streammon import Cumulative, DetectorSettings, Monitor
from streammon.detection.bank import FINAL_Z, Bank, learned_recall
from streammon.detection.simulate import first_passages
from streammon.detection.thresholds import thresholds

DAY = 86_400.0
MONTH = 30 * DAY
BUDGET = DetectorSettings().false_alarm_interval  # seconds per false alert per model (the default)
MIXES = ((0.01, 0.80, 0.95), (0.03, 0.90, 0.99), (0.10, 0.70, 0.90))  # (minority share, its recall, majority's)
BATCH = 1 << 22
CENSOR = 20.0  # simulated runs end after CENSOR × the run length
DIRECT = 2e6  # class samples: longer run lengths are simulated at lowered thresholds (simulated_arl)


def stream(rng: np.random.Generator, n: int, share: float | np.ndarray, recalls: tuple[float, float]
           ) -> tuple[np.ndarray, np.ndarray]:
    """``n`` samples: true class 1 (minority) with probability ``share``; a wrong prediction flips the label."""
    true = (rng.random(n) < share).astype(np.int64)
    recall = np.where(true == 1, recalls[1], recalls[0])
    pred = true ^ (rng.random(n) >= recall)
    return true, pred


def alerts_of(monitor: Monitor) -> int:
    """Every degradation incident the detector opened (open and closed ones; all listed: few per stream)."""
    watch = monitor.tally.watch
    assert len(watch.closed) < watch.closed.maxlen
    return len(watch.closed) + len(watch.open)


def feed(monitor: Monitor, rng: np.random.Generator, *, rate: float, seconds: float,
         mix: tuple[float, float, float], shift_to: float | None = None) -> int:
    """Feed ``seconds`` of data at ``rate`` samples/s (the minority share moving linearly to ``shift_to`` if
    given); the samples fed."""
    n = int(rate * seconds)
    share, minority, majority = mix
    for start in range(0, n, BATCH):
        m = min(BATCH, n - start)
        index = np.arange(start, start + m)
        now = share if shift_to is None else share + (shift_to - share) * index / n
        true, pred = stream(rng, m, now, (majority, minority))
        monitor.update_many(true, pred, t=index / rate)
    return n


def poisson_interval(count: int) -> tuple[float, float]:
    """The exact (Garwood) 95 % interval of a Poisson mean from one count."""
    low = stats.chi2.ppf(0.025, 2 * count) / 2 if count else 0.0
    return low, stats.chi2.ppf(0.975, 2 * count + 2) / 2


@dataclass
class Tally:
    alerts: int = 0
    months: float = 0.0

    def line(self, name: str) -> str:
        low, high = poisson_interval(self.alerts)
        per = self.alerts / self.months
        expected = self.months * MONTH / BUDGET
        p = 2 * min(stats.poisson.cdf(self.alerts, expected), stats.poisson.sf(self.alerts - 1, expected))
        return (f"| {name} | {self.alerts} | {self.months:.1f} | {per:.3f} | {MONTH / BUDGET:.3f} | "
                f"{per * BUDGET / MONTH:.2f} [{low / expected:.2f}, {high / expected:.2f}] | {min(p, 1.0):.3f} |")


def exact_baseline(mix: tuple[float, float, float]) -> dict[int, dict[int, int]]:
    """Validation counts of 10⁹ samples a class at the stream's recalls (a baseline as good as exact)."""
    _, minority, majority = mix
    return {0: {0: round(majority * 1e9), 1: round((1 - majority) * 1e9)},
            1: {1: round(minority * 1e9), 0: round((1 - minority) * 1e9)}}


def end_to_end(seeds: int, days: float, rate: float, *, shift: bool, given: bool = False,
               first: int = 0) -> dict[str, Tally]:
    tallies: dict[str, Tally] = {}
    for seed in range(first, first + seeds):
        mix = MIXES[seed % len(MIXES)]
        key = f"{mix[0]:.0%} → 6 %" if shift else f"minority {mix[0]:.0%}"
        if shift:
            mix = (0.01, mix[1], mix[2])
            key = "1 % → 6 %"
        monitor = Monitor([Cumulative()], classes=[0, 1], baseline=exact_baseline(mix) if given else None)
        feed(monitor, np.random.default_rng(seed), rate=rate, seconds=days * DAY, mix=mix,
             shift_to=0.06 if shift else None)
        tally = tallies.setdefault(key, Tally())
        tally.alerts += alerts_of(monitor)
        tally.months += days * DAY / MONTH
    total = Tally(sum(t.alerts for t in tallies.values()), sum(t.months for t in tallies.values()))
    return {**tallies, "all": total}


def simulated_arl(up: np.ndarray, down: np.ndarray, h: np.ndarray, *, q: float, arl: float, paths: int,
                  seed: int) -> tuple[float, float, float, int]:
    """(ARL at the thresholds ``h``, its relative standard error, the slope of ln ARL against the level, alarms):
    simulated directly where ``arl`` is at most ``DIRECT`` class samples; else at the thresholds lowered by
    ``Δ₁ > Δ₂`` (where the ARL is about ``DIRECT / 10`` and ``DIRECT``) and scaled by ``e^Δ₂`` — a CUSUM of
    log-likelihood ratios has ln ARL = level + const. in its tail, and the slope measured between the two lowered
    levels (1 expected) says how well that holds."""
    used = down > 0
    drop = max(math.log(arl / DIRECT), 0.0)
    levels = np.array([-drop - math.log(10.0), -drop]) if drop > 0 else np.array([0.0])
    runs = first_passages(up, down, q=q, levels=levels, paths=paths, seed=seed, limit=CENSOR * arl * math.exp(-drop),
                          offsets=np.where(used, -h, 0.0))
    estimates = []
    for column in range(len(levels)):
        alarms = int(np.isfinite(runs[:, column]).sum())
        limit = CENSOR * arl * math.exp(-drop)
        estimates.append((float(np.minimum(runs[:, column], limit).sum()) / max(alarms, 1), alarms))
    top, alarms = estimates[-1]
    slope = math.log(top / estimates[0][0]) / math.log(10.0) if drop > 0 else math.nan
    return top * math.exp(drop), 1 / math.sqrt(max(alarms, 1)), slope, alarms


def fast_rate(hours: float, paths: int, models: int) -> list[str]:
    """Part 2 at 1,000 samples/s: derived run lengths end to end, then their in-control run lengths simulated, for
    ``models`` models (streams with their own learned baselines) per mix."""
    rows, rate, everything = [], 1000.0, []
    for i, mix in enumerate(MIXES):
        per_model, derived, slopes, speeds, p0_error = [], [], [], [], []
        for model in range(models):
            monitor = Monitor([Cumulative()], classes=[0, 1])
            start = time.perf_counter()
            rng = np.random.default_rng(1000 + 100 * i + model)
            n = feed(monitor, rng, rate=rate, seconds=hours * 3600, mix=mix)
            speeds.append(n / (time.perf_counter() - start))
            report = monitor.report()
            watch = monitor.tally.watch
            lifetime = report.totals.matrix.sum(axis=1)
            alerts = 0.0
            for cls, share, recall in ((0, 1 - mix[0], mix[2]), (1, mix[0], mix[1])):
                budget = report.detector[cls]
                derived.append(budget.arl / (BUDGET * lifetime[cls] / (hours * 3600) * 2))
                bank, h = watch.banks[cls], watch._arrays["h"][cls]  # (the thresholds the detector uses)
                arl, _, slope, _ = simulated_arl(np.array(bank.up), np.array(bank.down), h, q=1 - recall,
                                                 arl=budget.arl, paths=paths, seed=7 + 1000 * i + 2 * model + cls)
                slopes.append(slope)
                p0_error.append(bank.p0 - recall)
                alerts += share * rate * MONTH / arl  # this class's false alerts per month
            per_model.append(alerts)
        everything += per_model
        ratios = np.array(per_model) * BUDGET / MONTH
        rows.append(f"| {mix[0]:.0%} | {mix[2]} / {mix[1]} | {models} | {min(derived):.3f}–{max(derived):.3f} | "
                    f"{np.nanmin(slopes):.2f}–{np.nanmax(slopes):.2f} | {min(p0_error):+.4f}…{max(p0_error):+.4f} | "
                    f"{ratios.mean():.2f} ± {ratios.std(ddof=1) / math.sqrt(models):.2f} | "
                    f"{ratios.min():.2f}–{ratios.max():.2f} | {np.median(speeds) / 1e6:.0f} M/s |")
    ratios = np.array(everything) * BUDGET / MONTH
    rows.append(f"\nAll {len(ratios)} models: {ratios.mean():.2f} ± {ratios.std(ddof=1) / math.sqrt(len(ratios)):.2f} "
                f"false alerts per month against a budget of {MONTH / BUDGET:.2f} (± 1 s.e. over the models: the "
                "learned baselines' scatter and the simulation's); exact baselines: part 1b.")
    return rows


def sensitivity(paths: int, draws: int) -> list[str]:
    """Part 4, the diagnosis: each class's in-control run length at 10/s, at the thresholds the budget derives for
    its final baseline (32,000 samples, ``refine_until``), simulated at the true recall — the exact baseline's
    bank (does the threshold table give the run length asked?) against ``draws`` learned ones (binomial counts,
    tuned ``FINAL_Z`` standard errors low as the detector does: how much does the baseline's noise add?)."""
    rows, rng, n = [], np.random.default_rng(5), 32_000
    for mix in MIXES:
        for cls, share, p in ((0, 1 - mix[0], mix[2]), (1, mix[0], mix[1])):
            arl = BUDGET * 10.0 * share * 2
            bank = Bank.of(p, n)
            exact, error, slope, _ = simulated_arl(np.array(bank.up), np.array(bank.down), thresholds(bank, arl=arl),
                                                   q=1 - p, arl=arl, paths=paths, seed=1)
            factors = []
            for d in range(draws):
                learned = Bank.of(learned_recall(rng.binomial(n, p), n, FINAL_Z), n)
                run, _, _, _ = simulated_arl(np.array(learned.up), np.array(learned.down),
                                             thresholds(learned, arl=arl), q=1 - p, arl=arl, paths=paths, seed=2 + d)
                factors.append(arl / run)
            f = np.array(factors)
            rows.append(f"| {mix[0]:.0%} | {cls} | {p} | {arl:.3g} | {bank.first} | {arl / exact:.2f} ± {error:.2f} "
                        f"| {slope:.2f} | {f.mean():.2f} ± {f.std(ddof=1) / math.sqrt(draws):.2f} | "
                        f"{np.median(f):.2f} | {f.max():.1f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 seeds of 30 days, 20 paths")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--days", type=float, default=None)
    parser.add_argument("--paths", type=int, default=None)
    parser.add_argument("--fast-hours", type=float, default=0.5, help="part 2: hours of data per model")
    parser.add_argument("--models", type=int, default=None, help="part 2: models per mix (default 10; --quick 3)")
    parser.add_argument("--first-seed", type=int, default=0, help="part 1 from this seed (to split a run)")
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: slow, given, fast, shift, "
                        "sensitivity")
    parser.add_argument("--draws", type=int, default=None, help="part 4: learned baselines per class (default 30)")
    args = parser.parse_args()
    seeds = args.seeds or (20 if args.quick else 100)
    days = args.days or (30.0 if args.quick else 60.0)
    paths = args.paths or (20 if args.quick else 100)
    skip = set(filter(None, args.skip.split(",")))
    header = ("| streams | false alerts | months | per month | budget | ratio [95 % interval] | Poisson p |\n"
              "|---|---|---|---|---|---|---|")
    print(f"Budget: {BUDGET / DAY:g} days per false degradation alert per model (DetectorSettings' default).\n")
    if "slow" not in skip:
        start = time.perf_counter()
        print(f"### 1. Stationary, 10 samples/s, {seeds} seeds × {days:g} days, end to end\n")
        print(header)
        for name, tally in end_to_end(seeds, days, 10.0, shift=False, first=args.first_seed).items():
            print(tally.line(name))
        print(f"\n({time.perf_counter() - start:.0f} s)\n")
    if "given" not in skip:
        start = time.perf_counter()
        print("### 1b. The same streams with exact baselines given (validation counts of 10⁹ samples a class)\n")
        print(header)
        for name, tally in end_to_end(seeds, days, 10.0, shift=False, given=True).items():
            print(tally.line(name))
        print(f"\n({time.perf_counter() - start:.0f} s)\n")
    if "fast" not in skip:
        start = time.perf_counter()
        print(f"### 2. Stationary, 1,000 samples/s: {args.fast_hours:g} h end to end per model, then each class's run "
              f"length simulated at its derived thresholds ({paths} paths)\n")
        print("| minority | recalls (major / minor) | models | arl ÷ 30 d·λ·2 | ln-ARL slopes | tuned p0 − recall "
              "| alerts/month ÷ budget (mean ± s.e.) | range | detector speed |")
        print("|---|---|---|---|---|---|---|---|---|")
        print("\n".join(fast_rate(args.fast_hours, paths, args.models or (3 if args.quick else 10))))
        print(f"\n({time.perf_counter() - start:.0f} s)\n")
    if "shift" not in skip:
        start = time.perf_counter()
        print(f"### 3. Pure prior shift, minority 1 % → 6 % linearly, recalls fixed, 10 samples/s, {seeds} seeds × "
              f"{days:g} days\n")
        print(header)
        for name, tally in end_to_end(seeds, days, 10.0, shift=True).items():
            if name == "all":
                print(tally.line(name))
        print(f"\n({time.perf_counter() - start:.0f} s)\n")
    if "sensitivity" not in skip:
        start = time.perf_counter()
        print(f"### 4. Diagnosis: each class's false-alert rate ÷ its share at 10/s, final baselines (32,000 samples), "
              f"{paths} paths\n")
        print("| minority | class | recall | arl | first | exact: arl ÷ ARL | ln-ARL slope | learned: mean arl ÷ ARL "
              "| median | max |\n|---|---|---|---|---|---|---|---|---|---|")
        print("\n".join(sensitivity(paths, args.draws or (5 if args.quick else 30))))
        print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
