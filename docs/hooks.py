"""MkDocs hooks: the reference pages generated from the code at build time, so that they cannot rot.

A page holds a marker ``<!-- generate: NAME -->`` on a line of its own; ``on_page_markdown`` replaces it with
the Markdown that ``GENERATORS[NAME]`` makes from the code itself:

- ``cli``: ``streammon -h`` and each subcommand's ``-h``, as the real argparse parser prints them;
- ``metrics``: the metric catalog (``streammon.metrics.catalog()``, i.e. ``streammon/metrics/specs.py``);
- ``score-metrics``: the score metrics' table (``catalog("scores")``, i.e. ``streammon/metrics/score_specs.py``);
- ``series``: every exported family (``streammon.export.families.FAMILIES``, with the label and estimate tables);
- ``alerts`` / ``recording``: the rules of ``grafana/rules/streammon.rules.yml``; every alert must have a runbook
  heading on the page (else the build fails);
- ``settings``: every field of ``DetectorSettings`` and ``Policy`` as a TOML key and a ``streammon replay`` flag
  (``streammon.serve.settings``);
- ``api-client``: ``::: streammon.client`` once that module exists (the worker client, in another branch).

An unknown marker fails the build.
"""

from __future__ import annotations

import contextlib
import html
import io
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- generate: ([a-z-]+) -->$", re.MULTILINE)
SUBCOMMANDS = ("demo", "rules", "dashboard", "serve", "report", "replay")
PAPERS = {
    "000": "García, Mollineda, Sánchez (ICPR 2010)",
    "001": "Ortigosa-Hernández, Inza, Lozano (2016)",
    "002": "Wu, Cannistraci (2025)",
    "003": "Burduk (2020)",
    "004": "Mullick, Datta, Dhekane, Das (Pattern Recognition 2020)",
}


def cli_help(args: list[str]) -> str:
    """What ``streammon ARGS -h`` prints, at a fixed width of 100 columns."""
    from streammon.cli import main

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main([*args, "-h"])
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous
    return out.getvalue().rstrip()


def cli() -> str:
    """The help of the command and of every subcommand."""
    parts = ["## `streammon`", "", "```text", cli_help([]), "```", ""]
    for name in SUBCOMMANDS:
        parts += [f"## `streammon {name}`", "", "```text", cli_help([name]), "```", ""]
    return "\n".join(parts)


def _fact(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "–"}[value]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    """Text as inline code inside a table cell (a pipe in a Markdown code span would end the cell)."""
    return "<code>" + html.escape(text).replace("|", "&#124;") + "</code>"


def metrics() -> str:
    """The catalog: a table of each metric's facts, then a section per metric with its formula and parameters."""
    from streammon.metrics import catalog

    kinds = {"binary": "2", "per_class": "any (one class)", "multiclass": "any"}
    direction = {True: "higher is better", False: "lower is better", None: "neither end is better"}
    rows = ["| metric | K | Cond. 1 | Cond. 2 | Cond. 3 | source |", "|---|---|---|---|---|---|"]
    sections = []
    for name, spec in catalog().items():
        sources = ", ".join(f"[{seed}](#seed-{seed})" for seed in spec.seeds)
        rows.append(f"| [`{name}`](#{name}) | {kinds[spec.kind]} | {_fact(spec.condition1)} | "
                    f"{_fact(spec.condition2)} | {_fact(spec.condition3)} | {sources} |")
        params = ", ".join(f"`{key}` (default `{value!r}`)" for key, value in spec.params.items())
        sections += [
            f"### `{name}` {{#{name}}}", "",
            f"**{spec.title}**: {_code(spec.formula)}. K = {kinds[spec.kind]}; {direction[spec.higher_is_better]}."
            + (f" Parameters: {params}." if params else ""), "",
            f"Condition 1: {_fact(spec.condition1)} · Condition 2: {_fact(spec.condition2)} · "
            f"Condition 3: {_fact(spec.condition3)} · source: {sources}.", "",
        ]
    return "\n".join([*rows, "", "## Formulas", "", *sections])


def score_metrics() -> str:
    """The score metrics' table (``needs="scores"``): facts, parameters and sources, then a section per metric."""
    from streammon.metrics import catalog

    direction = {True: "higher is better", False: "lower is better", None: "neither end is better"}
    rows = ["| metric | K | Cond. 1 | Cond. 2 | Cond. 3 | sources |", "|---|---|---|---|---|---|"]
    sections = []
    for name, spec in catalog("scores").items():
        c1 = _fact(spec.condition1) + (" (binary, `ovo`; `ovr`: no)" if "multi_class" in spec.params else "")
        rows.append(f"| [`{name}`](#{name}) | any | {c1} | {_fact(spec.condition2)} | {_fact(spec.condition3)} | "
                    f"{_cell(', '.join(spec.sources))} |")
        params = ", ".join(f"`{key}` (default `{value!r}`)" for key, value in spec.params.items())
        sections += [
            f"### `{name}` {{#{name}}}", "",
            f"**{spec.title}**: {_code(spec.formula)}. {direction[spec.higher_is_better].capitalize()}."
            + (f" Parameters: {params}." if params else ""), "",
        ]
    return "\n".join([*rows, "", *sections])


def series() -> str:
    """Every exported family: the name a sample carries, its kind, labels and help."""
    from streammon.export.estimate_families import FAMILIES as ESTIMATES
    from streammon.export.families import FAMILIES, Family

    families = dict(FAMILIES)
    for name, (labels, text) in ESTIMATES.items():
        families.setdefault(name, Family(name, "gauge", tuple(labels), text))
    rows = ["| series | kind | labels | meaning |", "|---|---|---|---|"]
    for family in families.values():
        labels = ", ".join(f"`{label}`" for label in family.labels) or "–"
        rows.append(f"| `{family.sample_name}` | {family.kind} | {labels} | {_cell(family.help)} |")
    return "\n".join(rows)


def _rules() -> list[dict[str, Any]]:
    import yaml

    text = (ROOT / "grafana" / "rules" / "streammon.rules.yml").read_text("utf-8")
    return [rule for group in yaml.safe_load(text)["groups"] for rule in group["rules"]]


def alerts() -> str:
    """Every alert of the checked-in rules: severity, for, expression and description."""
    parts = []
    for rule in _rules():
        if "alert" not in rule:
            continue
        notes = rule.get("annotations", {})
        parts += [
            f"### {rule['alert']} (rule)", "",
            f"Severity `{rule.get('labels', {}).get('severity', '–')}`, for `{rule.get('for', '0s')}`; "
            f"runbook: [{rule['alert']}](#{rule['alert'].lower()}).", "",
            "```promql", rule["expr"], "```", "",
            f"*{notes.get('summary', '')}* — {notes.get('description', '')}", "",
        ]
    return "\n".join(parts)


def recording() -> str:
    """Every recording rule of the checked-in rules."""
    rows = ["| record | expression |", "|---|---|"]
    rows += [f"| `{rule['record']}` | {_code(rule['expr'])} |" for rule in _rules() if "record" in rule]
    return "\n".join(rows)


def api_client() -> str:
    """The worker client's reference, once ``streammon/client`` exists (it is written in another branch)."""
    present = (ROOT / "streammon" / "client.py").exists() or (ROOT / "streammon" / "client").is_dir()
    if present:
        return "::: streammon.client"
    return "*`streammon.client` is not in this build yet: see [several workers](../how-to/several-workers.md).*"


def settings() -> str:
    """Every field of DetectorSettings and Policy: its TOML key, its ``streammon replay`` flag, its default and its
    help, from ``streammon.serve.settings`` (the one place both read)."""
    from streammon.serve.settings import OWNERS, knobs

    parts = []
    for owner in OWNERS:
        table = "detector" if owner.__name__ == "DetectorSettings" else "policy"
        parts += [f"**`{table}`** — `streammon.{owner.__name__}`", "", "| key | flag | kind | meaning (default) |",
                  "|---|---|---|---|"]
        for k in knobs(owner):
            flag = f"`{k.flag}` / `--no-{k.flag[2:]}`" if k.kind == "bool" else f"`{k.flag} {k.help.metavar}`"
            kind = "duration" if k.help.seconds else k.kind
            parts.append(f"| `{k.name}` | {flag} | {kind} | {_cell(k.describe)} |")
        parts.append("")
    return "\n".join(parts)


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli, "metrics": metrics, "score-metrics": score_metrics, "series": series, "alerts": alerts,
    "recording": recording, "api-client": api_client, "settings": settings,
}


def render(markdown: str) -> str:
    """The page with every marker replaced by what its generator makes."""
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"unknown generated section {name!r}: expected one of {sorted(GENERATORS)}")
        return GENERATORS[name]()

    return MARKER.sub(replace, markdown)


def check_runbooks(markdown: str) -> None:
    """Every alert of the rules has a runbook heading on the page that renders them."""
    missing = [rule["alert"] for rule in _rules()
               if "alert" in rule and not re.search(rf"^##+ {rule['alert']}$", markdown, re.MULTILINE)]
    if missing:
        raise ValueError(f"alerts without a runbook section in reference/alerts.md: {missing}")


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """MkDocs hook: fill the generated sections of a page."""
    if "<!-- generate: alerts -->" in markdown:
        check_runbooks(markdown)
    return render(markdown)
