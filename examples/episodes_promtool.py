"""The generated Prometheus rules run by ``promtool test rules`` on series scraped from a replay.

Helpers of ``bench_alert_episodes.py``. ``generated_rules`` runs the CLI (``streammon rules``); ``read_names``
finds which exporter series the rules' expressions read; ``Scrapes`` records those series from the real
exporter (``MonitorCollector``) at each snapshot of a replay — one scrape per snapshot; ``firing`` writes a
``promtool test rules`` file whose input series are the scrapes (``interval`` = the scrape spacing, and
``evaluation_interval`` the same, so every rule evaluation falls on a scrape: an instant selector looks back only
5 minutes), asks at every evaluation for no alert, and reads from promtool's failures which alerts fired when.
Nothing here names a rule's expression: a change of the rules is measured as generated.

>>> parse_duration("1w2d3h15m"), parse_duration("0s")
(789300.0, 0.0)
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

UNITS = {"y": 365 * 86_400.0, "w": 604_800.0, "d": 86_400.0, "h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
Series = tuple[str, tuple[tuple[str, str], ...]]  # sample name, sorted labels


def generated_rules(*flags: str) -> str:
    """The rule file ``streammon rules FLAGS`` prints (YAML)."""
    done = subprocess.run([sys.executable, "-m", "streammon", "rules", *flags], capture_output=True, text=True,
                          check=True)
    return done.stdout


def rule_parts(rules: str) -> tuple[list[str], list[str]]:
    """(the alert names, every rule's expression) of a rule file."""
    alerts, exprs = [], []
    for group in yaml.safe_load(rules)["groups"]:
        for rule in group["rules"]:
            exprs.append(rule["expr"])
            if "alert" in rule:
                alerts.append(rule["alert"])
    return alerts, exprs


def read_names(exprs: Iterable[str]) -> set[str]:
    """The exporter's series names the expressions read (``streammon_…``; recorded series have colons).

    >>> sorted(read_names(['sum by (c) (increase(streammon_class_samples_total[1h])) / streammon:x:y']))
    ['streammon_class_samples_total']
    """
    return {name for expr in exprs for name in re.findall(r"(?<![\w:])streammon_\w+", expr)}


class Scrapes:
    """The series named ``names`` as the exporter showed them at each scrape (missing: not exported then)."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.values: dict[Series, dict[int, float]] = {}
        self.count = 0

    def scrape(self, collector: Any) -> None:
        """Read one scrape from ``collector`` (anything with ``collect()``: a ``MonitorCollector``)."""
        for metric in collector.collect():
            for sample in metric.samples:
                if sample.name in self.names:
                    key = (sample.name, tuple(sorted(sample.labels.items())))
                    self.values.setdefault(key, {})[self.count] = float(sample.value)
        self.count += 1

    def reader(self, collector: Any) -> Callable[..., None]:
        """A snapshot callback that scrapes ``collector`` (what ``episodes_scenario.replay`` takes)."""
        return lambda *_: self.scrape(collector)

    def input_series(self) -> list[dict[str, str]]:
        """promtool's ``input_series``: one value per scrape, ``_`` where the series was absent."""
        out = []
        for (name, labels), values in sorted(self.values.items()):
            selector = name + "{" + ",".join(f"{k}={json.dumps(v)}" for k, v in labels) + "}"
            points = [_number(values[i]) if i in values else "_" for i in range(self.count)]
            out.append({"series": selector, "values": " ".join(points)})
        return out


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    return repr(value)


def parse_duration(text: str) -> float:
    """Seconds of a Prometheus duration as promtool prints it (``3d2h15m``)."""
    parts = re.findall(r"(\d+)(ms|y|w|d|h|m|s)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a Prometheus duration: {text!r}")
    return sum(int(n) * UNITS[u] for n, u in parts)


def firing(rules: str, scrapes: Scrapes, interval: float, alerts: Sequence[str],
           promtool: str = "promtool") -> dict[tuple[str, str], list[int]]:
    """For each (alert name, its labels as promtool prints them): the scrapes at which it was firing, evaluated
    by ``promtool test rules`` over the scraped series spaced ``interval`` seconds (scrape i at i·interval)."""
    step = f"{int(interval)}s"
    checks = [{"eval_time": f"{int(i * interval)}s", "alertname": name, "exp_alerts": []}
              for i in range(scrapes.count) for name in alerts]
    # promtool evaluates a file's groups in a random order at each step unless told: an alert evaluated before the
    # recording rule it reads finds that series one step (a scrape) old, beyond the 5-minute lookback — nothing, so
    # whether an alert fired depended on the run. In file order (the recording groups first), as Prometheus' own
    # evaluation every few seconds amounts to; the rules themselves are unchanged.
    order = [group["name"] for group in yaml.safe_load(rules)["groups"]]
    test = {"rule_files": ["rules.yml"], "evaluation_interval": step, "group_eval_order": order,
            "tests": [{"interval": step, "input_series": scrapes.input_series(), "alert_rule_test": checks}]}
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "rules.yml").write_text(rules)
        Path(folder, "test.yml").write_text(json.dumps(test))  # JSON is YAML
        done = subprocess.run([promtool, "test", "rules", "test.yml"], cwd=folder, capture_output=True, text=True,
                              check=False)  # exit 1 is how promtool says which alerts fired
    out = done.stdout + done.stderr
    fired = failures(out, interval)
    if done.returncode != (1 if fired else 0):  # any other failure is not an alert that fired
        raise RuntimeError(f"promtool test rules failed (exit {done.returncode}):\n{out[-2000:]}")
    return fired


def failures(out: str, interval: float) -> dict[tuple[str, str], list[int]]:
    """The alerts promtool got where none was expected: (alert name, labels) -> scrape indices.

    >>> text = '''  FAILED:
    ...     alertname: A, time: 1h15m,
    ...         got:[
    ...             0:
    ...               Labels:{alertname="A", class="x"}
    ...             ]
    ... '''
    >>> failures(text, 900.0)
    {('A', 'alertname="A", class="x"'): [5]}
    """
    fired: dict[tuple[str, str], list[int]] = {}
    name, index = "", -1
    for line in out.splitlines():
        head = re.match(r"\s*alertname: (\w+), time: (\w+),", line)
        if head:
            name, index = head.group(1), round(parse_duration(head.group(2)) / interval)
            continue
        labels = re.match(r"\s*Labels:\{(.*)\}\s*$", line)
        if labels and index >= 0:
            fired.setdefault((name, labels.group(1)), []).append(index)
    return fired
