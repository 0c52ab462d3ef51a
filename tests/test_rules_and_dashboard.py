"""The checked-in PromQL rules and Grafana dashboard: generated, valid, and consistent with the exporter."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from streammon.cli import main
from streammon.export.estimate_families import FAMILIES as ESTIMATE_FAMILIES
from streammon.export.grafana import dashboard, metric_names, queries, render_dashboard
from streammon.export.prometheus import FAMILIES
from streammon.export.rules import render_rules

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "grafana" / "rules" / "streammon.rules.yml"
RULE_TESTS = ROOT / "grafana" / "rules" / "streammon.rules.test.yml"
DASHBOARD = ROOT / "grafana" / "dashboards" / "streammon.json"
SCHEMAS = Path(__file__).parent / "grafana_schema"  # vendored from grafana-foundation-sdk (Apache-2.0)
EXPORTED_NAMES = {f.sample_name for f in FAMILIES.values()} | set(ESTIMATE_FAMILIES)


def test_checked_in_rules_and_dashboard_are_the_generators_output(capsys: pytest.CaptureFixture[str]) -> None:
    """grafana/ holds exactly what `streammon rules` and `streammon dashboard` print."""
    assert RULES.read_text() == render_rules()
    assert DASHBOARD.read_text() == render_dashboard()
    main(["rules"])
    assert capsys.readouterr().out == render_rules()


@pytest.mark.prometheus
def test_promtool_checks_the_rules(promtool: str) -> None:
    """promtool check rules accepts the rule file."""
    result = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.prometheus
def test_promtool_rule_unit_tests_pass(promtool: str) -> None:
    """The promtool unit tests (degradation, pure prior shift, incompetence, low evidence, new class) pass."""
    result = subprocess.run([promtool, "test", "rules", RULE_TESTS.name], cwd=RULE_TESTS.parent,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0 and "SUCCESS" in result.stdout, result.stdout + result.stderr


def test_dashboard_uses_only_exported_metric_names() -> None:
    """Every metric name in a dashboard query is one the collector emits."""
    used = metric_names(dashboard())
    assert used, "the dashboard queries no metric"
    assert used <= EXPORTED_NAMES, used - EXPORTED_NAMES


def test_dashboard_has_datasource_model_and_window_variables_and_no_inputs() -> None:
    """A datasource variable (not __inputs), model and window variables, and every panel on ${datasource}."""
    board = json.loads(DASHBOARD.read_text())
    assert "__inputs" not in board
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    assert {"model", "window"} <= set(variables)
    for panel in board["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}"
        assert all(t["datasource"]["uid"] == "${datasource}" for t in panel["targets"])
    titles = " ".join(p["title"] for p in board["panels"])
    for topic in ("invariant", "recall", "RRT", "Prior shift", "Distortion flags", "Precision as read"):
        assert topic in titles


def _schema(name: str) -> dict[str, Any]:
    return dict(json.loads((SCHEMAS / f"{name}.jsonschema.json").read_text()))


def test_dashboard_validates_against_the_grafana_schemas() -> None:
    """The dashboard, each panel, its options, field config and Prometheus queries validate against the schemas."""
    root = _schema("dashboard")
    board = json.loads(DASHBOARD.read_text())
    jsonschema.validate({k: v for k, v in board.items() if k != "panels"} | {"panels": []}, root)
    query_schema = _schema("prometheus")
    for panel in board["panels"]:
        panel_schema = {"$ref": "#/definitions/Panel", "definitions": root["definitions"]}
        jsonschema.validate(panel, panel_schema)
        kind = _schema(panel["type"])
        definitions = kind["definitions"]
        jsonschema.validate(panel["options"], {"$ref": "#/definitions/Options", "definitions": definitions})
        field_source = {"$ref": "#/definitions/FieldConfigSource", "definitions": root["definitions"]}
        jsonschema.validate(panel["fieldConfig"], field_source)
        if "FieldConfig" in definitions:  # the panel type's own custom field options, where it has any
            custom = panel["fieldConfig"]["defaults"].get("custom", {})
            jsonschema.validate(custom, {"$ref": "#/definitions/FieldConfig", "definitions": definitions})
        for target in panel["targets"]:
            jsonschema.validate(target, query_schema)


def test_provisioning_files_point_at_the_dashboard_and_a_prometheus_datasource() -> None:
    """The provisioning YAML declares a file dashboard provider and a Prometheus datasource named as the variable."""
    dashboards = (ROOT / "grafana" / "provisioning" / "dashboards" / "streammon.yml").read_text()
    datasources = (ROOT / "grafana" / "provisioning" / "datasources" / "prometheus.yml").read_text()
    assert "type: file" in dashboards and "apiVersion: 1" in dashboards
    assert "type: prometheus" in datasources and "name: Prometheus" in datasources


def test_queries_cover_every_panel() -> None:
    """Each panel has at least one query, and queries() finds them all."""
    board = dashboard()
    assert len(list(queries(board))) >= len(board["panels"])
