"""The alert-episode benchmark (examples/bench_alert_episodes.py) measures what it claims: episodes are runs of
snapshots, the log follows the scenario, the scraped series recount the log, and promtool's firing is read back
as Prometheus defines it."""

from __future__ import annotations

import doctest
import math
import random
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))
import episodes_clauses as clauses  # noqa: E402
import episodes_promtool as prom  # noqa: E402
import episodes_scenario as sc  # noqa: E402

from streammon.export.prometheus import MonitorCollector  # noqa: E402

# A scenario short enough for a test: the mix moves on day 1, fraud recall drops on day 3.
SHORT = sc.Scenario(days=5.0, rate=3000.0, shift_start=0.5, shift_end=1.5, share_after=0.06, drop_at=3.0)


def test_the_example_modules_doctests_pass() -> None:
    """The docstring examples of the helper modules run and hold (examples/ is outside the doctest paths)."""
    for module in (sc, prom, clauses):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_episodes_are_the_maximal_runs_of_consecutive_snapshots() -> None:
    """On random on/off histories, each key's episodes are its maximal runs of consecutive on-snapshots,
    recounted one index at a time."""
    rng = random.Random(5)
    for _ in range(200):
        history = [frozenset(k for k in "abc" if rng.random() < 0.4) for _ in range(rng.randrange(0, 30))]
        expected: dict[str, list[tuple[int, int]]] = {}
        for key in "abc":
            on = [i for i, now in enumerate(history) if key in now]
            runs: list[list[int]] = []
            for i in on:
                if runs and runs[-1][-1] == i - 1:
                    runs[-1].append(i)
                else:
                    runs.append([i])
            if runs:
                expected[key] = [(r[0], r[-1] + 1) for r in runs]
        assert sc.episodes(history) == expected


def test_the_log_follows_the_scenario() -> None:
    """Rows per hour, the fraud share in each phase and both recalls before and after the drop lie within 5
    standard errors of the scenario's values (binomial and Poisson laws)."""
    s = sc.Scenario()
    seconds, fraud, predicted = s.rows(3)
    day = seconds / sc.DAY
    assert np.all(np.diff(seconds) >= 0) and seconds[0] >= 0 and seconds[-1] < s.days * sc.DAY
    hours = s.days * 24
    assert abs(len(seconds) - s.rate * hours) < 5 * math.sqrt(s.rate * hours)

    def near(hits: np.ndarray, p: float) -> bool:
        return abs(hits.mean() - p) < 5 * math.sqrt(p * (1 - p) / hits.size)

    assert near(fraud[day < s.shift_start], s.share_before)
    assert near(fraud[day >= s.shift_end], s.share_after)
    ramp = (day >= s.shift_start) & (day < s.shift_end)
    assert near(fraud[ramp], (s.share_before + s.share_after) / 2)  # linear: its mean is the midpoint
    right = predicted == fraud
    assert near(right[~fraud], s.recall_legit)
    assert near(right[fraud & (day < s.drop_at)], s.recall_fraud)
    assert near(right[fraud & (day >= s.drop_at)], s.recall_fraud_after)


def test_degradation_splits_the_real_drop_from_false_alerts() -> None:
    """A legit alert and a fraud alert before the drop are false (with their lengths); a fraud alert turned on
    after the drop is the real one, its delay counted from its since_time."""
    s = sc.Scenario(drop_at=3.0)
    run = sc.Run()
    legit, fraud = ("degradation", "stream", "legit"), ("degradation", "stream", "fraud")
    plan = {0: {}, 1: {legit: 0.9}, 2: {legit: 0.9, fraud: 1.5}, 3: {}, 4: {fraud: 3.25}, 5: {fraud: 3.25}}
    for d, alerts in plan.items():
        run.days.append(float(d))
        run.active.append(frozenset(alerts))
        run.since.append(alerts)
    found = sc.degradation(run, s)
    assert found.found and not found.already_on and found.delay_hours == pytest.approx(6.0)
    assert found.false == (("legit", 0.9, 48.0), ("fraud", 1.5, 24.0))
    run.active[3] = frozenset({fraud})  # the false alert stays on across the drop
    run.since[3] = {fraud: 1.5}
    late = sc.degradation(run, s)
    assert late.found and late.already_on and math.isnan(late.delay_hours)


def test_scraped_counters_recount_the_log() -> None:
    """Every hourly scrape of the exporter's lifetime counters equals a recount of the log's rows before the
    snapshot's time, per class (labelled, correct, predicted) and in all."""
    names = {"streammon_class_samples_total", "streammon_class_correct_total", "streammon_class_predicted_total",
             "streammon_samples_total"}
    monitor = sc.monitor_for(SHORT)
    scrapes = prom.Scrapes(names)
    run = sc.replay(SHORT, 4, monitor=monitor, on_report=scrapes.reader(MonitorCollector({"m": monitor})))
    seconds, fraud, predicted = SHORT.rows(4)
    assert scrapes.count == len(run.days) == SHORT.days * 24
    for i, day in enumerate(run.days):
        before = seconds < day * sc.DAY
        for cls, truth, said in (("fraud", fraud, predicted), ("legit", ~fraud, ~predicted)):
            labels = (("class", cls), ("model", "m"))
            assert scrapes.values[("streammon_class_samples_total", labels)][i] == np.sum(before & truth)
            assert scrapes.values[("streammon_class_correct_total", labels)][i] == np.sum(before & truth & said)
            assert scrapes.values[("streammon_class_predicted_total", labels)][i] == np.sum(before & said)
        assert scrapes.values[("streammon_samples_total", (("model", "m"),))][i] == np.sum(before)


@pytest.mark.prometheus
def test_firing_reads_back_what_prometheus_fires(promtool: str) -> None:
    """A rule `x > 5` held `for: 30m` on a series scraped every 15 minutes fires exactly at the scrapes where it
    has held for three evaluations in a row (Prometheus' pending → firing), per series; absent points break it."""
    rules = 'groups:\n- name: g\n  rules:\n  - alert: Big\n    expr: x > 5\n    for: 30m\n'
    rng = random.Random(2)
    scrapes = prom.Scrapes({"x"})
    truth: dict[str, set[int]] = {}
    for series in ("a", "b"):
        values = {i: float(rng.choice([0, 9])) for i in range(200) if rng.random() < 0.95}
        scrapes.values[("x", (("s", series),))] = values
        high = {i for i, v in values.items() if v > 5}
        truth[series] = {i for i in high if {i - 1, i - 2} <= high}
    scrapes.count = 200
    fired = prom.firing(rules, scrapes, 900.0, ["Big"], promtool)
    assert fired == {("Big", f'alertname="Big", s="{s}"'): sorted(at) for s, at in truth.items() if at}


@pytest.mark.prometheus
def test_the_generated_cusum_rule_fires_where_the_process_alerted(promtool: str) -> None:
    """Through the generated rules, StreammonClassDegraded fires for a class exactly at the hourly scrapes where
    the process's degradation alert on it had been on for the rule's `for:` (whole evaluations), and nowhere
    else: the exporter → series → promtool → firing path loses and invents nothing."""
    rules = prom.generated_rules()
    alerts, exprs = prom.rule_parts(rules)
    monitor = sc.monitor_for(SHORT)
    scrapes = prom.Scrapes(prom.read_names(exprs))
    run = sc.replay(SHORT, 1, monitor=monitor, on_report=scrapes.reader(MonitorCollector({"m": monitor})))
    fired = prom.firing(rules, scrapes, 3600.0, alerts, promtool)
    import yaml

    hold = next(r["for"] for g in yaml.safe_load(rules)["groups"] for r in g["rules"]
                if r.get("alert") == "StreammonClassDegraded")
    steps = math.ceil(prom.parse_duration(hold) / 3600.0)
    assert any(("degradation", "stream", "fraud") in a for a in run.active)  # the drop was found
    for cls in ("fraud", "legit"):
        on = {i for i, a in enumerate(run.active) if ("degradation", "stream", cls) in a}
        expected = sorted(i for i in on if all(i - k in on for k in range(1, steps + 1)))
        got = [at for (name, labels), at in fired.items()
               if name == "StreammonClassDegraded" and f'class="{cls}"' in labels]
        assert got == ([expected] if expected else []), cls


def test_the_prior_shift_table_counts_each_windows_episodes(capsys: pytest.CaptureFixture[str]) -> None:
    """Table 2 counts, per window and seed, the prior-shift on-periods (other kinds and windows apart) — those
    starting once the mix moves, and the false ones before it (against 2α² a read, Poisson) — the hours on before
    the mix moved and the share on once it settled, as recounted by hand from two made-up runs."""
    import bench_alert_episodes as bench

    s = sc.Scenario(days=6.0, shift_start=2.0, shift_end=4.0)
    shift, other = ("prior_shift", "sliding_1000", "class_mix"), ("class_set_change", "sliding_1000", "-fraud")
    plans = [[{shift}, set(), {shift}, {shift, other}, set(), {shift}],  # 3 episodes; on at 2 snapshots up to day 2
             [set(), set(), set(), {shift}, {shift}, {shift}]]  # 1 episode; none up to day 2
    runs = []
    for plan in plans:
        run = sc.Run()
        for day, on in enumerate(plan):
            run.see(sc.START + day * sc.DAY, _Report(on))
        runs.append(run)
    counts = bench.shift_table(runs, s)
    # run 1 starts episodes on days 0, 2 (both up to the shift's start: false) and 5; run 2 on day 3
    assert counts["sliding_1000"] == [1, 1] and counts["cumulative"] == [0, 0]
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| sliding_1000 |"))
    p_two = 1 - math.exp(-2e-4 * 6) * (1 + 2e-4 * 6)  # 2 false or more in 6 reads at 2α² = 2e-4 a read
    assert row == f"| sliding_1000 | 2.0 / 3 | 0 / 2 / 0 | 2, 3.3e-01, {p_two:.2f} | 4.0 | 1.0 | 100.0 % |", row


class _Report:
    """Just what ``Run.see`` reads of a report: its alerts."""

    def __init__(self, on: set[tuple[str, str, str]]) -> None:
        from streammon.findings.report import Alert

        self.alerts = [Alert(kind, window, subject, 0, math.nan, "") for kind, window, subject in on]
