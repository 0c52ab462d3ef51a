"""Why a generated alert's episodes end: each clause of the held alerts, evaluated by promtool beside the rules.

Issue #27's diagnosis for the Prometheus side of ``bench_alert_episodes.py``. One seed of the 90-day scenario is
replayed and scraped from the real exporter (``episodes_promtool.Scrapes``); ``promtool test rules`` then runs
the rules ``streammon rules`` prints plus one extra alert per clause (``for: 0``: true at an evaluation or not),
so each clause's truth is read at every evaluation as the alerts' are. For every episode of a held alert that
ends before the run does, the table says which clauses were false through the evaluations of its last
``keep_firing_for`` (the span where the whole condition was false): the evidence gate closing, the level (recall,
z, prior ratio) coming back, or both. The clauses are built from ``RuleSettings()`` — the generated defaults.

Run: ``python examples/episodes_clauses.py`` (seed 0, scraped every 15 minutes: ~2 minutes of replay and 4–10 of
promtool on the shared machine); ``--seed N``, ``--scrape 1h`` (hourly: a quarter of the evaluations),
``--rules FILE`` (another rule file, e.g. an older commit's ``grafana/rules/streammon.rules.yml``).

>>> [name for name, _ in clauses(RuleSettings())["StreammonClassRecallDegraded"]]
['recall below baseline - drop', 'samples >= min_class_samples', 'recall below baseline - clear drop', \
'samples >= hold_class_samples']
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

from streammon.export.prometheus import MonitorCollector
from streammon.export.rules import RuleSettings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from episodes_promtool import Scrapes, firing, generated_rules, parse_duration, read_names, rule_parts
from episodes_scenario import Scenario, episodes, monitor_for, replay

# The subject each alert is counted by in the scenario (the fraud class for the per-class alerts).
SUBJECT = {"StreammonClassRecallDegraded": 'class="fraud"', "StreammonIncompetent": "", "StreammonPriorShift": ""}


def clauses(s: RuleSettings) -> dict[str, list[tuple[str, str]]]:
    """Per held alert, (name, PromQL) of each clause of its on-level, then of its hold."""
    w = s.window
    recall, samples = f"streammon:class_recall:ratio_{w}", f"streammon:class_samples:increase_{w}"
    chance = f"(1 / streammon:classes_present:count_{w})"
    least = f"min by (model) ({samples} > 0)"
    return {
        "StreammonPriorShift": [
            ("ratio >= shift_min_ratio", f"streammon:prior_ratio:max_{w} >= {s.shift_min_ratio}"),
            ("z > threshold", f"streammon:prior_shift_z:max_{w} > on (model) streammon:prior_shift_z:threshold"),
            ("ratio >= shift_clear_ratio", f"streammon:prior_ratio:max_{w} >= {s.shift_clear_ratio}"),
            ("z > clear threshold",
             f"streammon:prior_shift_z:max_{w} > on (model) streammon:prior_shift_z:clear_threshold")],
        "StreammonClassRecallDegraded": [
            ("recall below baseline - drop",
             f"{recall} < on (model, class) (streammon:class_recall:baseline - {s.recall_drop})"),
            ("samples >= min_class_samples", f"{samples} >= {s.min_class_samples}"),
            ("recall below baseline - clear drop",
             f"{recall} < on (model, class) (streammon:class_recall:baseline - {s.recall_clear_drop})"),
            ("samples >= hold_class_samples", f"{samples} >= {s.hold_class_samples}")],
        "StreammonIncompetent": [
            ("min recall below 1/K", f"streammon:min_recall:ratio_{w} < on (model) {chance}"),
            ("its upper bound below 1/K", f"streammon:min_recall:upper_{w} < on (model) {chance}"),
            ("least samples >= min_samples_per_class", f"{least} >= {s.min_samples_per_class}"),
            ("least samples >= hold_samples_per_class", f"{least} >= {s.hold_samples_per_class}")],
    }


def with_clauses(rules: str, table: dict[str, list[tuple[str, str]]]) -> tuple[str, dict[str, tuple[str, str]]]:
    """The rule file plus a group of one alert per clause; and each clause alert's (held alert, clause name)."""
    doc = yaml.safe_load(rules)
    names, extra = {}, []
    for alert, parts in table.items():
        for i, (name, expr) in enumerate(parts):
            clause = f"Clause{alert.removeprefix('Streammon')}{i}"
            names[clause] = (alert, name)
            extra.append({"alert": clause, "expr": expr})
    doc["groups"].append({"name": "clauses", "rules": extra})
    return yaml.safe_dump(doc, sort_keys=False, width=10**6), names


def keep_firing(rules: str) -> dict[str, float]:
    """Each alert's ``keep_firing_for`` in seconds (0 if none)."""
    return {r["alert"]: parse_duration(r.get("keep_firing_for", "0s")) for g in yaml.safe_load(rules)["groups"]
            for r in g["rules"] if "alert" in r}


def main(argv: Sequence[str] | None = None) -> int:
    """Replay one seed, run the rules and their clauses through promtool, print why each episode ended."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scrape", choices=("15m", "1h"), default="15m")
    parser.add_argument("--rules", type=Path, default=None, help="a rule file (default: `streammon rules`)")
    args = parser.parse_args(argv)
    promtool = shutil.which("promtool")
    if promtool is None:
        parser.error("promtool not found (Debian's 'prometheus' package)")
    rules = args.rules.read_text() if args.rules else generated_rules()
    text, names = with_clauses(rules, clauses(RuleSettings()))
    alerts, exprs = rule_parts(text)
    scenario, interval = Scenario(), {"15m": 900.0, "1h": 3600.0}[args.scrape]
    monitor = monitor_for(scenario)
    scrapes = Scrapes(read_names(exprs))
    run = replay(scenario, args.seed, every=args.scrape, monitor=monitor,
                 on_report=scrapes.reader(MonitorCollector({"fraud-model": monitor})))
    fired = firing(text, scrapes, interval, alerts, promtool)
    n, hold = len(run.days), keep_firing(rules)

    def on(name: str, subject: str) -> set[int]:
        return {i for (a, labels), at in fired.items() if a == name and subject in labels for i in at}

    print(f"# Why episodes end: seed {args.seed}, evaluations every {args.scrape} ({n}), {scenario.days:g} days\n")
    print("| alert | episodes | first on, day | episodes ended | clause false through the last keep_firing_for: "
          "episodes |")
    print("|---|---|---|---|---|")
    for alert, subject in SUBJECT.items():
        at = on(alert, subject)
        spans = episodes([frozenset({1}) if i in at else frozenset() for i in range(n)]).get(1, [])
        ended = [(a, b) for a, b in spans if b < n]
        steps = max(1, round(hold.get(alert, 0.0) / interval))
        parts = {c: on(c, subject) for c, (held, _) in names.items() if held == alert}
        why = []
        for clause, truth in parts.items():
            count = sum(all(i not in truth for i in range(max(a, b - steps), b)) for a, b in ended)
            why.append(f"{names[clause][1]}: {count}")
        first = f"{run.days[spans[0][0]]:.2f}" if spans else "never"
        print(f"| {alert} | {len(spans)} | {first} | {len(ended)} | {'; '.join(why)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
