"""StreammonPriorShift decides as the process does: promtool runs the generated rules on counters made from known
per-class counts (split over two replicas), and the alert fires exactly where ``prior_shift`` says shifted."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from streammon.export.rules import RuleSettings, render_rules, rule_groups
from streammon.export.shift_rules import normal_quantile
from streammon.findings.shift import prior_shift

GROUPS = [g["name"] for g in rule_groups()["groups"]]
MINUTES = 150  # the counters grow for 150 minutes: the 1h window then holds 60 minutes of them, after for: 2h


def _scenarios() -> list[tuple[str, list[float], list[int]]]:
    """(model, reference priors, counts in one hour): the named cases, then random ones with every expected count
    of at least 10 (where the rule's normal approximation is documented to agree), away from the α boundary."""
    cases = [("shift6", [0.99, 0.01], [9_400, 600]),  # 1 % -> 6 %: must fire
             ("still", [0.99, 0.01], [9_900, 100]),  # at the reference: must not
             ("k10shift", [0.01] + [0.11] * 9, [600] + [1_044] * 9),
             ("k10still", [0.01] + [0.11] * 9, [98] + [1_100] * 9),
             ("mild", [0.9, 0.1], [8_800, 1_200])]  # significant but ratio 1.2 < 1.5: must not
    rng = np.random.default_rng(8)
    while len(cases) < 25:
        k = int(rng.choice([2, 3, 5]))
        priors = rng.dirichlet(np.ones(k) * 2)
        n = int(rng.integers(2_000, 30_000))
        if (n * priors).min() < 10:
            continue
        drawn = rng.multinomial(n, rng.dirichlet(priors * rng.choice([5, 20, 3_000])))
        p = prior_shift(drawn, priors).p_value
        if 0.001 < p < 0.1:  # too near α = 0.01 for an approximation to be held to the exact decision
            continue
        cases.append((f"r{len(cases)}", priors.round(6).tolist(), drawn.tolist()))
    return cases


def _value(ratio: float) -> str:
    """Go's ``printf "%.3g"`` of the alert's value."""
    return "+Inf" if math.isinf(ratio) else f"{ratio:.3g}"


def test_the_prometheus_rule_fires_exactly_where_the_process_says_shifted(tmp_path: Path, promtool: str) -> None:
    """On each scenario's counts (1 % -> 6 %, stationary, K = 10, a significant but immaterial shift, 20 random
    ones): StreammonPriorShift fires at 150 minutes iff the process's criterion says shifted, with the process's
    prior ratio as its value."""
    settings = RuleSettings()
    (tmp_path / "rules.yml").write_text(render_rules(settings))
    inputs, expected, fired = [], [], 0
    for model, priors, counts in _scenarios():
        for c, (prior, count) in enumerate(zip(priors, counts, strict=True)):
            for instance, share in (("r1", 0.3), ("r2", 0.7)):  # two replicas: the rule sums them
                per_minute = count * share / 60
                inputs.append({"series": f'streammon_class_samples_total{{model="{model}",class="c{c}",'
                                         f'instance="{instance}"}}', "values": f"0+{per_minute!r}x{MINUTES}"})
                inputs.append({"series": f'streammon_reference_prior{{model="{model}",class="c{c}",'
                                         f'instance="{instance}"}}', "values": f"{prior!r}+0x{MINUTES}"})
        shift = prior_shift(counts, priors, alpha=settings.shift_alpha, min_ratio=settings.shift_min_ratio)
        if model in ("shift6", "k10shift"):
            assert shift.shifted
        if model in ("still", "k10still", "mild"):
            assert not shift.shifted
        if shift.shifted:
            fired += 1
            description = (f"Over 1h summed over replicas, a class's share is {_value(shift.prior_ratio)} times "
                           "(or 1/that) its reference prior, at least 1.5, and beyond chance at level 0.01 "
                           "(Bonferroni over the classes). Informational: trust Condition-1-invariant scores, not "
                           "precision, F1, accuracy or MCC; no action unless a degradation alert fires too.")
            expected.append({"exp_labels": {"severity": "info", "model": model},
                             "exp_annotations": {"summary": f"Class mix of model {model} moved away from its "
                                                            "reference",
                                                 "description": description,
                                                 "runbook_url": "README.md#streammonpriorshift"}})
    assert 5 <= fired <= 20  # both decisions are exercised
    doc = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "group_eval_order": GROUPS,
           "tests": [{"interval": "1m", "input_series": inputs,
                      "alert_rule_test": [{"eval_time": f"{MINUTES}m", "alertname": "StreammonPriorShift",
                                           "exp_alerts": expected}]}]}
    (tmp_path / "test.yml").write_text(json.dumps(doc))  # JSON is YAML
    result = subprocess.run([promtool, "test", "rules", "test.yml"], cwd=tmp_path, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_keep_firing_for_is_set_and_promtool_accepts_it(tmp_path: Path, promtool: str) -> None:
    """The generated StreammonPriorShift carries its own keep_firing_for (6h: its hold) and for: two windows (2h,
    as the process confirms across two turnovers), which promtool check rules accepts."""
    rule = next(r for g in rule_groups()["groups"] for r in g["rules"] if r.get("alert") == "StreammonPriorShift")
    assert rule["keep_firing_for"] == "6h" and rule["for"] == "2h"
    (tmp_path / "rules.yml").write_text(render_rules())
    result = subprocess.run([promtool, "check", "rules", "rules.yml"], cwd=tmp_path, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("m", [1, 2, 3, 10, 100])
def test_the_rules_normal_quantile_is_scipys_within_its_documented_error(m: int) -> None:
    """The Bonferroni threshold Φ⁻¹(1 − α/(2m)) of the rule is scipy's norm.isf within 4.5e-4."""
    q = 0.01 / (2 * m)
    assert abs(normal_quantile(q) - stats.norm.isf(q)) < 4.5e-4


def test_bad_rule_settings_for_the_shift_are_refused() -> None:
    """A shift_alpha outside (0, 1), a ratio below 1 or a malformed keep_firing_for raise ValueError."""
    with pytest.raises(ValueError, match="shift_alpha must be a number in"):
        RuleSettings(shift_alpha=1.5)
    with pytest.raises(ValueError, match="shift_min_ratio must be a number >= 1"):
        RuleSettings(shift_min_ratio=0.5)
    with pytest.raises(ValueError, match="keep_firing_for must be a Prometheus duration"):
        RuleSettings(keep_firing_for="half an hour")


def test_the_rule_holds_a_firing_alert_at_the_clear_levels_as_the_process_does(tmp_path: Path,
                                                                                 promtool: str) -> None:
    """Hysteresis in PromQL (keep_firing_for 0 to see the levels alone): a model whose minority went 1 % -> 6 %
    (for 150 minutes, past for: 2h) and then settled at 1.4 % (ratio 1.4: below shift_min_ratio 1.5, above
    shift_clear_ratio 1.25, still beyond chance) keeps StreammonPriorShift firing through its own ALERTS series; a
    model at 1.4 % from the start never raises it. The process's criterion says the same: not shifted, but held
    when on."""
    settings = RuleSettings(keep_firing_for="0s", shift_keep_firing_for="0s")
    (tmp_path / "rules.yml").write_text(render_rules(settings))
    priors, moved, settled = [0.99, 0.01], [9_400, 600], [9_860, 140]
    shift = prior_shift(settled, priors)
    assert not shift.shifted and shift.prior_ratio == pytest.approx(1.4)
    assert shift.p_value < settings.shift_clear_alpha and shift.prior_ratio >= settings.shift_clear_ratio
    inputs = []
    for model, first in (("held", moved), ("fresh", settled)):
        for c, prior in enumerate(priors):
            a, b = first[c] / 60, settled[c] / 60
            inputs.append({"series": f'streammon_class_samples_total{{model="{model}",class="c{c}"}}',
                           "values": f"0+{a!r}x150 {150 * a + b!r}+{b!r}x149"})
            inputs.append({"series": f'streammon_reference_prior{{model="{model}",class="c{c}"}}',
                           "values": f"{prior!r}+0x300"})
    description = ("Over 1h summed over replicas, a class's share is 1.4 times (or 1/that) its reference prior, at "
                   "least 1.5, and beyond chance at level 0.01 (Bonferroni over the classes). Informational: trust "
                   "Condition-1-invariant scores, not precision, F1, accuracy or MCC; no action unless a degradation "
                   "alert fires too.")
    held = {"exp_labels": {"severity": "info", "model": "held"},
            "exp_annotations": {"summary": "Class mix of model held moved away from its reference",
                                "description": description, "runbook_url": "README.md#streammonpriorshift"}}
    doc = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "group_eval_order": GROUPS,
           "tests": [{"interval": "1m", "input_series": inputs,
                      "alert_rule_test": [{"eval_time": "290m", "alertname": "StreammonPriorShift",
                                           "exp_alerts": [held]}]}]}
    (tmp_path / "test.yml").write_text(json.dumps(doc))  # JSON is YAML
    result = subprocess.run([promtool, "test", "rules", "test.yml"], cwd=tmp_path, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
