"""Writes grafana/rules/streammon.rules.test.yml, the promtool unit tests of the generated rules (run from the
repository root: ``PYTHONPATH=$PWD python grafana/rules/make_rule_tests.py``). Each model's series are a line of
a table (hence the long lines and semicolons ruff is told to allow here)."""

import math
from pathlib import Path

import numpy as np

from streammon.export.estimate_rules import estimate_alerting_rules
from streammon.export.label_rules import label_alerting_rules
from streammon.export.rules import RuleSettings, _yaml, alerting_rules
from streammon.metrics.intervals import window_intervals

s = RuleSettings()
ann = {r["alert"]: r["annotations"] for r in alerting_rules(s) + label_alerting_rules(s) + estimate_alerting_rules(s)}
inputs = []
def series(model, c, name, values):
    return {"series": f'{name}{{model="{model}",class="{c}"}}', "values": values}
def cls(model, c, samples, correct):
    inputs.append(series(model, c, "streammon_class_samples_total", samples))
    inputs.append(series(model, c, "streammon_class_correct_total", correct))
def ref(model, priors):
    for c, p in priors.items():
        inputs.append({"series": f'streammon_reference_prior{{model="{model}",class="{c}"}}', "values": f"{p}+0x1500"})
cls("m", "a", "0+10x1500", "0+9x1500"); cls("m", "b", "0+10x1500", "0+9x1380 12423+3x119"); ref("m", {"a": 0.5, "b": 0.5})
cls("p", "a", "0+10x1360 13690+90x139", "0+9x1360 12321+81x139"); cls("p", "b", "0+10x1500", "0+9x1500"); ref("p", {"a": 0.5, "b": 0.5})
cls("i", "a", "0+10x1500", "0+9x1500"); cls("i", "b", "0+10x1500", "0+2x1500"); ref("i", {"a": 0.5, "b": 0.5})
# w: class b's recall 0.45 from 90 samples an hour — below 1/K, but not confidently: no incompetence alert
cls("w", "a", "0+10x1500", "0+9x1500"); cls("w", "b", "0+1.5x1500", "0+0.675x1500")
cls("e", "a", "0+10x1500", "0+9x1500"); cls("e", "b", "0+0.25x1500", "0+0.25x1380 345+0x119"); ref("e", {"a": 0.975609756097561, "b": 0.024390243902439025})
cls("n", "a", "0+10x1500", "0+9x1500"); cls("n", "b", "0+10x1500", "0+9x1500"); cls("n", "c", "0+0x1360 5+5x139", "0+0x1360 4+4x139"); ref("n", {"a": 0.5, "b": 0.5})
def baseline(model, c, instance, values):
    inputs.append({"series": f'streammon_baseline_recall{{model="{model}",class="{c}",instance="{instance}"}}', "values": values})
def replica_alert(model, instance, window, kind, subject, values):
    inputs.append({"series": f'streammon_alert{{model="{model}",instance="{instance}",window="{window}",kind="{kind}",subject="{subject}"}}', "values": values})
# d: a deployment 30 minutes old (1h and 1d windows hold the same samples); two replicas export baselines 0.88 and 0.92.
cls("d", "a", "_x1470 0+10x29", "_x1470 0+9x29"); cls("d", "b", "_x1470 0+10x29", "_x1470 0+5x29"); ref("d", {"a": 0.5, "b": 0.5})
for c in ("a", "b"):
    baseline("d", c, "r1", "_x1470 0.88+0x29"); baseline("d", c, "r2", "_x1470 0.92+0x29")
# c: the in-process CUSUM of replicas r1 (since 1480m) and r2 (since 1490m) flags class b; r1 flags a only at the last evaluation
# only (shorter than for:); r1 also reports a prior shift in three windows, which must not count.
replica_alert("c", "r1", "stream", "degradation", "b", "_x1480 1+0x19")
replica_alert("c", "r2", "stream", "degradation", "b", "_x1490 1+0x9")
replica_alert("c", "r1", "stream", "degradation", "a", "_x1500 1")
for window in ("cumulative", "sliding_2000", "timed_60s"):
    replica_alert("c", "r1", window, "prior_shift", "class_mix", "1+0x1500")
# Late labels. L: two replicas; the timed window's predictions older than the typical latency are 500 + 300, of which
# 50 + 30 got labels (10 %) against a lifetime coverage of 60 %: the label pipeline broke. K: aged coverage 56 % (fine);
# S: only 60 aged predictions (too little evidence). Predictions per minute: L a 10, b 10 (mix 0.5/0.5 = implied);
# Q a 18, b 2 (mix 0.9/0.1 against implied 0.5/0.5: TV 0.4). L's latency histogram per minute: 2 below 1 s, 6 below
# 2 s, 10 in all (p50 = 1.75 s by linear interpolation).
def label_series(name, labels, values):
    inputs.append({"series": f"{name}{{{labels}}}", "values": values})
for model, instances, aged, labelled in (("L", ("r1", "r2"), (500, 300), (50, 30)), ("K", ("r1",), (500,), (280,)),
                                         ("S", ("r1",), (60,), (0,))):
    for instance, n, lab in zip(instances, aged, labelled, strict=True):
        where = f'model="{model}",instance="{instance}",window="timed_3600s"'
        label_series("streammon_aged_predictions", where, f"{n}+0x1500")
        label_series("streammon_aged_labelled_predictions", where, f"{lab}+0x1500")
        label_series("streammon_label_joined_total", f'model="{model}",instance="{instance}"', "0+12x1500")
        for c in ("a", "b"):
            label_series("streammon_predictions_total", f'model="{model}",instance="{instance}",class="{c}"', "0+10x1500")
for c, rate in (("a", 18), ("b", 2)):
    label_series("streammon_predictions_total", f'model="Q",instance="r1",class="{c}"', f"0+{rate}x1500")
for model in ("L", "Q"):
    for c in ("a", "b"):
        label_series("streammon_implied_prior", f'model="{model}",instance="r1",class="{c}"', "0.5+0x1500")
for le, rate in (("1.0", 2), ("2.0", 6), ("+Inf", 10)):
    label_series("streammon_label_latency_seconds_bucket", f'model="L",instance="r1",le="{le}"', f"0+{rate}x1500")
# Label-free estimate. E: replicas r1 and r2 report not_prior_shift on the cumulative window since 1440m (their
# shift_alpha 0.05; p-values 0.02 and 0.03, above the rule's 0.01); F: no replica alert, but r2's p-value on the timed
# window is 0.004 (r1's 0.5); G: p-values 0.3 and no alert (must not fire); H: p = 0.001 only since 1495m (shorter
# than for:). Before 1440m every p-value is 0.5.
def estimate_series(model, instance, window, p_values, alert_values=None):
    where = f'model="{model}",instance="{instance}",window="{window}"'
    label_series("streammon_label_shift_p_value", where, p_values)
    if alert_values is not None:
        replica_alert(model, instance, window, "not_prior_shift", "predictions", alert_values)
estimate_series("E", "r1", "cumulative", "0.5+0x1439 0.02+0x60", "0+0x1439 1+0x60")
estimate_series("E", "r2", "cumulative", "0.5+0x1439 0.03+0x60", "0+0x1439 1+0x60")
estimate_series("F", "r1", "timed_3600s", "0.5+0x1500")
estimate_series("F", "r2", "timed_3600s", "0.5+0x1439 0.004+0x60")
estimate_series("G", "r1", "cumulative", "0.3+0x1500", "0+0x1500")
estimate_series("G", "r2", "cumulative", "0.5+0x1500", "0+0x1500")
estimate_series("H", "r1", "cumulative", "0.5+0x1494 0.001+0x5")
def expand(template, labels, value):
    """What Prometheus's templating makes of the annotations used here."""
    out = template.replace("{{ $value | humanizePercentage }}", f"{value * 100:.4g}%")
    out = out.replace('{{ printf "%.3f" $value }}', f"{value:.3f}").replace("{{ $value }}", f"{value:g}")
    out = out.replace('{{ printf "%.2g" $value }}', f"{value:.2g}")
    out = out.replace('{{ printf "%.3g" $value }}', "+Inf" if value == math.inf else f"{value:.3g}")
    for key, item in labels.items():
        out = out.replace(f"{{{{ $labels.{key} }}}}", item)
    return out
def alert(name, labels, value):
    a = {key: expand(text, labels, value) for key, text in ann[name].items()}
    return {"exp_labels": labels, "exp_annotations": a}
def sample(expr, labels, value):
    return {"labels": f"{expr}{{{labels}}}", "value": value}
at = "1500m"
def least_upper(correct, totals):
    """The upper end of the process's interval of the minimum recall (streammon.metrics.intervals)."""
    return float(window_intervals(np.array([correct], float), np.array([totals], float))[1][0]["min_recall"][1])
def expr_test(expr, selector, samples, within=1e-12):
    """Each expected value within 1e-12 (Prometheus sums in no fixed order): abs(x - v) < bool 1e-12 is 1."""
    checks = " or ".join(f"abs({expr}{{{labels}}} - {value!r}) < bool {within}" for labels, value in samples)
    return {"expr": checks, "eval_time": at, "exp_samples": [{"labels": f"{{{labels}}}", "value": 1} for labels, _ in samples]}
# Hysteresis (a second test, 300 minutes): each alert turns on at its level and, once firing, stays on at a looser
# one read from its own ALERTS series over the window; each case is checked 70-80 minutes after the on-level ended,
# beyond keep_firing_for (1h), so only the hold keeps it on. Counters grow piecewise: (minutes, per minute).
held_inputs = []


def piecewise(segments):
    """promtool values of a counter growing at each segment's rate for its minutes, from 0 at minute 0."""
    out, value, first = [], 0.0, True
    for minutes, rate in segments:
        out.append(f"{value!r}+{rate!r}x{minutes}" if first else f"{value + rate!r}+{rate!r}x{minutes - 1}")
        value, first = value + rate * minutes, False
    return " ".join(out)


def held_class(model, c, segments):
    """segments: (minutes, samples per minute, recall); the class's exported baseline recall is 0.9."""
    samples = piecewise([(m, n) for m, n, _ in segments])
    correct = piecewise([(m, n * r) for m, n, r in segments])
    held_inputs.append(series(model, c, "streammon_class_samples_total", samples))
    held_inputs.append(series(model, c, "streammon_class_correct_total", correct))
    where = f'model="{model}",class="{c}",instance="r1"'
    held_inputs.append({"series": f"streammon_baseline_recall{{{where}}}", "values": "0.9+0x300"})


# gate: class b's recall drops to 0.6 at 120 min (2 a minute, 120 an hour: the on-level's 100 samples), its traffic
# to 1.5 a minute at 180 (90 an hour): the on-level ends at 220, the hold (50 samples) keeps it. level: recall 0.6,
# then 0.8 from 180 (above baseline - 0.15 = 0.75, below baseline - 0.075): the on-level ends at 225. never: 90 an
# hour at recall 0.6 from the start: the hold never starts an alert. inc: class b's recall 0.2 (below 1/K = 1/2) from
# 120 at 1 a minute, then 0.4 a minute (24 an hour: below the on-level's 30, above the hold's 15) from 180.
for model, b in (("gate", [(120, 2, 0.9), (60, 2, 0.6), (120, 1.5, 0.6)]),
                 ("level", [(120, 2, 0.9), (60, 2, 0.6), (120, 2, 0.8)]),
                 ("never", [(300, 1.5, 0.6)]),
                 ("inc", [(120, 1, 0.9), (60, 1, 0.2), (120, 0.4, 0.2)])):
    held_class(model, "a", [(300, 10, 0.9)])
    held_class(model, "b", b)
# brief: the 1 % class at 2.5 % for 30 minutes (120-150): its 1h window is over the on-level (ratio 1.5) for 50
# minutes, short of for: 2h (a confirmation on fresh samples); long: the same for 150 minutes fires (from ~270m).
for model, minutes in (("brief", 30), ("long", 150)):
    fraud = [(120, 1), (minutes, 2.5), (180 - minutes, 1)]
    for c, prior, segments in (("legit", 0.99, [(300, 99)]), ("fraud", 0.01, fraud)):
        held_inputs.append(series(model, c, "streammon_class_samples_total", piecewise(segments)))
        where = f'model="{model}",class="{c}"'
        held_inputs.append({"series": f"streammon_reference_prior{{{where}}}", "values": f"{prior}+0x300"})
# back: the 1 % class at 2.5 % for 120 minutes, then at 1 % again: firing from about 80 minutes, its clear levels
# fail from about 170; StreammonPriorShift keeps firing for shift_keep_firing_for (6h) after that, not 1h.
for c, prior, segments in (("legit", 0.99, [(300, 99)]), ("fraud", 0.01, [(120, 2.5), (180, 1)])):
    held_inputs.append(series("back", c, "streammon_class_samples_total", piecewise(segments)))
    where = f'model="back",class="{c}"'
    held_inputs.append({"series": f"streammon_reference_prior{{{where}}}", "values": f"{prior}+0x300"})
RECALL = "StreammonClassRecallDegraded"
# lab: 10 predictions and 6 labels a minute (lifetime coverage 0.6); of 200 aged predictions 120 labelled, then 20
# from 120 (0.1: below 0.5 x 0.6), then 80 aged with 8 labelled from 180 (below the on-level's 100 aged, above the
# hold's 50). labclear: 20 of 200 from 120, then 80 of 200 from 180 (0.4: above 0.5 x 0.6, below 0.75 x 0.6).
for model, aged, labelled in (("lab", "200+0x179 80+0x120", "120+0x119 20+0x59 8+0x120"),
                              ("labclear", "200+0x300", "120+0x119 20+0x59 80+0x120")):
    where = f'model="{model}",instance="r1"'
    held_inputs.append({"series": f'streammon_aged_predictions{{{where},window="timed_3600s"}}', "values": aged})
    held_inputs.append({"series": f'streammon_aged_labelled_predictions{{{where},window="timed_3600s"}}',
                        "values": labelled})
    held_inputs.append({"series": f"streammon_label_joined_total{{{where}}}", "values": "0+6x300"})
    held_inputs.append({"series": f"streammon_predictions_total{{{where}}}", "values": "0+10x300"})
doc = {
  "rule_files": ["streammon.rules.yml"],
  "evaluation_interval": "1m",
  "group_eval_order": ["streammon.recording", "streammon.alerts", "streammon.labels.recording", "streammon.labels.alerts",
                       "streammon.estimate.recording", "streammon.estimate.alerts"],  # alerts read this evaluation's recorded values
  "tests": [{
    "interval": "1m",
    "input_series": inputs,
    "promql_expr_test": [
      expr_test("streammon:class_recall:ratio_1h", 'model="m"', [('model="m",class="a"', 0.9), ('model="m",class="b"', 0.3)]),
      expr_test("streammon:class_recall:ratio_1d", 'model="m",class="b"', [('model="m",class="b"', 0.85)]),
      expr_test("streammon:acsa:ratio_1h", 'model="m"', [('model="m"', (0.9 + 0.3) / 2)]),
      expr_test("streammon:gmean:ratio_1h", 'model="m"', [('model="m"', math.sqrt(0.9 * 0.3))]),
      expr_test("streammon:min_recall:ratio_1h", 'model="m"', [('model="m"', 0.3)]),
      # the process's interval of the minimum recall (Wilson, Bonferroni over the classes): the rule's quantile is
      # Abramowitz-Stegun's (error < 4.5e-4 in z)
      expr_test("streammon:min_recall:upper_1h", 'model=~"m|i|w"',
                [(f'model="{m}"', least_upper(correct, totals)) for m, correct, totals in
                 (("m", [540, 180], [600, 600]), ("i", [540, 120], [600, 600]), ("w", [540, 40.5], [600, 90]))],
                within=1e-3),
      expr_test("streammon:class_recall:ratio_1h", 'model="p"', [('model="p",class="a"', 0.9), ('model="p",class="b"', 0.9)]),
      expr_test("streammon:class_prior:ratio_1h", 'model="p"', [('model="p",class="a"', 0.9), ('model="p",class="b"', 0.1)]),
      expr_test("streammon:rrt:ratio_1h", 'model="p"', [('model="p"', 9)]),
      expr_test("streammon:prior_shift_tv:ratio_1h", 'model=~"p|n|m"', [('model="m"', 0), ('model="n"', 0.2), ('model="p"', 0.4)]),
      expr_test("streammon:prior_ratio:max_1h", 'model=~"p|m"', [('model="m"', 1), ('model="p"', 5)]),
      expr_test("streammon:classes_present:count_1h", 'model="n"', [('model="n"', 3)]),
      expr_test("streammon:class_recall:ratio_1d", 'model="d",class="b"', [('model="d",class="b"', 0.5)]),
      expr_test("streammon:class_recall:baseline", 'model=~"d|m"', [('model="d",class="a"', 0.9), ('model="d",class="b"', 0.9), ('model="m",class="a"', 0.9), ('model="m",class="b"', 0.85)]),
      expr_test("streammon:class_degraded:replicas", 'model="c"', [('model="c",class="a"', 1), ('model="c",class="b"', 2)]),
      expr_test("streammon:label_coverage:ratio", 'model=~"L|K"', [('model="K"', 0.6), ('model="L"', 0.6)]),
      expr_test("streammon:aged_label_coverage:ratio", 'model=~"L|K|S"', [('model="K",window="timed_3600s"', 0.56), ('model="L",window="timed_3600s"', 0.1), ('model="S",window="timed_3600s"', 0)]),
      expr_test("streammon:predicted_mix:ratio_1h", 'model="Q"', [('model="Q",class="a"', 0.9), ('model="Q",class="b"', 0.1)]),
      expr_test("streammon:predicted_mix_tv:ratio_1h", 'model=~"L|Q"', [('model="L"', 0), ('model="Q"', 0.4)]),
      expr_test("streammon:label_latency_seconds:p50_1h", 'model="L"', [('model="L"', 1.75)]),
      expr_test("streammon:label_shift_p_value:min", 'model=~"E|F|G"', [('model="E",window="cumulative"', 0.02), ('model="F",window="timed_3600s"', 0.004), ('model="G",window="cumulative"', 0.3)]),
      expr_test("streammon:not_prior_shift:replicas", 'model=~"E|G|c"', [('model="E",window="cumulative"', 2)]),
    ],
    "alert_rule_test": [
      {"eval_time": at, "alertname": "StreammonClassDegraded", "exp_alerts": [alert("StreammonClassDegraded", {"severity": "warning", "model": "c", "class": "b"}, 2)]},
      {"eval_time": at, "alertname": "StreammonClassRecallDegraded", "exp_alerts": [alert("StreammonClassRecallDegraded", {"severity": "warning", "model": "d", "class": "b"}, 0.5), alert("StreammonClassRecallDegraded", {"severity": "warning", "model": "m", "class": "b"}, 0.3)]},
      {"eval_time": at, "alertname": "StreammonIncompetent", "exp_alerts": [alert("StreammonIncompetent", {"severity": "critical", "model": "i"}, 0.2), alert("StreammonIncompetent", {"severity": "critical", "model": "m"}, 0.3)]},
      {"eval_time": at, "alertname": "StreammonClassSetChanged", "exp_alerts": [alert("StreammonClassSetChanged", {"severity": "info", "model": "n"}, 0)]},
      {"eval_time": at, "alertname": "StreammonPriorShift", "exp_alerts": [alert("StreammonPriorShift", {"severity": "info", "model": "n"}, math.inf), alert("StreammonPriorShift", {"severity": "info", "model": "p"}, 5)]},
      {"eval_time": "1380m", "alertname": "StreammonClassDegraded", "exp_alerts": []},
      {"eval_time": "1380m", "alertname": "StreammonClassRecallDegraded", "exp_alerts": []},
      {"eval_time": "1380m", "alertname": "StreammonPriorShift", "exp_alerts": []},
      {"eval_time": at, "alertname": "StreammonLabelCoverageLow", "exp_alerts": [alert("StreammonLabelCoverageLow", {"severity": "warning", "model": "L", "window": "timed_3600s"}, 0.1)]},
      {"eval_time": at, "alertname": "StreammonPredictedMixShift", "exp_alerts": [alert("StreammonPredictedMixShift", {"severity": "info", "model": "Q"}, 0.4)]},
      {"eval_time": "20m", "alertname": "StreammonLabelCoverageLow", "exp_alerts": []},
      {"eval_time": at, "alertname": "StreammonNotPriorShift", "exp_alerts": [alert("StreammonNotPriorShift", {"severity": "warning", "model": "E", "window": "cumulative"}, 0.02), alert("StreammonNotPriorShift", {"severity": "warning", "model": "F", "window": "timed_3600s"}, 0.004)]},
      {"eval_time": "1380m", "alertname": "StreammonNotPriorShift", "exp_alerts": []},
    ],
  }, {
    "interval": "1m",
    "input_series": held_inputs,
    "promql_expr_test": [
      {"expr": 'ALERTS{alertname="StreammonPriorShift"}', "eval_time": time,
       "exp_samples": [{"labels": f'ALERTS{{alertname="StreammonPriorShift", alertstate="firing", model="{m}", '
                                  'severity="info"}', "value": 1} for m in models]}
      for time, models in (("290m", ("back", "long")), ("299m", ("back", "long")))
    ],
    "alert_rule_test": [
      {"eval_time": "170m", "alertname": RECALL,
       "exp_alerts": [alert(RECALL, {"severity": "warning", "model": m, "class": "b"}, 0.65) for m in ("gate", "level")]},
      {"eval_time": "300m", "alertname": RECALL,
       "exp_alerts": [alert(RECALL, {"severity": "warning", "model": "gate", "class": "b"}, 0.6),
                      alert(RECALL, {"severity": "warning", "model": "level", "class": "b"}, 0.8)]},
      {"eval_time": "300m", "alertname": "StreammonLabelCoverageLow",
       "exp_alerts": [alert("StreammonLabelCoverageLow", {"severity": "warning", "model": m, "window": "timed_3600s"},
                            value) for m, value in (("lab", 0.1), ("labclear", 0.4))]},
      {"eval_time": "300m", "alertname": "StreammonIncompetent",
       "exp_alerts": [alert("StreammonIncompetent", {"severity": "critical", "model": "inc"}, 0.2)]},
    ],
  }],
}
head = ("# promtool test rules: unit tests for streammon.rules.yml. Models: m, a real degradation of class b;\n"
        "# p, a pure prior shift (must not fire the degradation alert); i, incompetent (class b below 1/K); w, below 1/K\n"
        "# but not confidently (90 samples: no alert);\n"
        "# e, a collapse with too little evidence (no alert); n, a class the reference lacks appears;\n"
        "# d, a 30-minute-old deployment degraded against the baseline its replicas export; c, the replicas' own CUSUM;\n"
        "# late labels: L, labels stopped arriving; K, fine; S, too few aged predictions; Q, the predicted mix moved;\n"
        "# label-free estimate: E, replicas report not_prior_shift; F, a p-value below the rule's level; G, H, no alert.\n"
        "# Hysteresis (second test): gate, level, inc held at looser levels; never, brief must not fire; long does;\n"
        "# back, a prior shift that ended, keeps firing for shift_keep_firing_for; lab, labclear: label coverage held.\n")
Path("grafana/rules/streammon.rules.test.yml").write_text(head + "\n".join(_yaml(doc, 0)) + "\n")
