import math
from streammon.export.rules import RuleSettings, alerting_rules, _yaml
s = RuleSettings()
ann = {r["alert"]: r["annotations"] for r in alerting_rules(s)}
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
cls("p", "a", "0+10x1440 14490+90x59", "0+9x1440 13041+81x59"); cls("p", "b", "0+10x1500", "0+9x1500"); ref("p", {"a": 0.5, "b": 0.5})
cls("i", "a", "0+10x1500", "0+9x1500"); cls("i", "b", "0+10x1500", "0+2x1500"); ref("i", {"a": 0.5, "b": 0.5})
cls("e", "a", "0+10x1500", "0+9x1500"); cls("e", "b", "0+0.25x1500", "0+0.25x1380 345+0x119"); ref("e", {"a": 0.975609756097561, "b": 0.024390243902439025})
cls("n", "a", "0+10x1500", "0+9x1500"); cls("n", "b", "0+10x1500", "0+9x1500"); cls("n", "c", "0+0x1440 5+5x59", "0+0x1440 4+4x59"); ref("n", {"a": 0.5, "b": 0.5})
def alert(name, labels):
    a = dict(ann[name])
    a["summary"] = a["summary"].replace("{{ $labels.model }}", labels["model"]).replace("{{ $labels.class }}", labels.get("class", ""))
    return {"exp_labels": labels, "exp_annotations": a}
def sample(expr, labels, value):
    return {"labels": f"{expr}{{{labels}}}", "value": value}
at = "1500m"
def expr_test(expr, selector, samples):
    """Each expected value within 1e-12 (Prometheus sums in no fixed order): abs(x - v) < bool 1e-12 is 1."""
    checks = " or ".join(f"abs({expr}{{{labels}}} - {value!r}) < bool 1e-12" for labels, value in samples)
    return {"expr": checks, "eval_time": at, "exp_samples": [{"labels": f"{{{labels}}}", "value": 1} for labels, _ in samples]}
doc = {
  "rule_files": ["streammon.rules.yml"],
  "evaluation_interval": "1m",
  "tests": [{
    "interval": "1m",
    "input_series": inputs,
    "promql_expr_test": [
      expr_test("streammon:class_recall:ratio_1h", 'model="m"', [('model="m",class="a"', 0.9), ('model="m",class="b"', 0.3)]),
      expr_test("streammon:class_recall:ratio_1d", 'model="m",class="b"', [('model="m",class="b"', 0.85)]),
      expr_test("streammon:acsa:ratio_1h", 'model="m"', [('model="m"', (0.9 + 0.3) / 2)]),
      expr_test("streammon:gmean:ratio_1h", 'model="m"', [('model="m"', math.sqrt(0.9 * 0.3))]),
      expr_test("streammon:min_recall:ratio_1h", 'model="m"', [('model="m"', 0.3)]),
      expr_test("streammon:class_recall:ratio_1h", 'model="p"', [('model="p",class="a"', 0.9), ('model="p",class="b"', 0.9)]),
      expr_test("streammon:class_prior:ratio_1h", 'model="p"', [('model="p",class="a"', 0.9), ('model="p",class="b"', 0.1)]),
      expr_test("streammon:rrt:ratio_1h", 'model="p"', [('model="p"', 9)]),
      expr_test("streammon:prior_shift_tv:ratio_1h", 'model=~"p|n|m"', [('model="m"', 0), ('model="n"', 0.2), ('model="p"', 0.4)]),
      expr_test("streammon:classes_present:count_1h", 'model="n"', [('model="n"', 3)]),
    ],
    "alert_rule_test": [
      {"eval_time": at, "alertname": "StreammonClassRecallDegraded", "exp_alerts": [alert("StreammonClassRecallDegraded", {"severity": "warning", "model": "m", "class": "b"})]},
      {"eval_time": at, "alertname": "StreammonIncompetent", "exp_alerts": [alert("StreammonIncompetent", {"severity": "critical", "model": "i"}), alert("StreammonIncompetent", {"severity": "critical", "model": "m"})]},
      {"eval_time": at, "alertname": "StreammonClassSetChanged", "exp_alerts": [alert("StreammonClassSetChanged", {"severity": "info", "model": "n"})]},
      {"eval_time": at, "alertname": "StreammonPriorShift", "exp_alerts": [alert("StreammonPriorShift", {"severity": "info", "model": "n"}), alert("StreammonPriorShift", {"severity": "info", "model": "p"})]},
      {"eval_time": "1380m", "alertname": "StreammonClassRecallDegraded", "exp_alerts": []},
      {"eval_time": "1380m", "alertname": "StreammonPriorShift", "exp_alerts": []},
    ],
  }],
}
head = ("# promtool test rules: unit tests for streammon.rules.yml. Models: m, a real degradation of class b;\n"
        "# p, a pure prior shift (must not fire the degradation alert); i, incompetent (class b below 1/K);\n"
        "# e, a collapse with too little evidence (no alert); n, a class the reference lacks appears.\n")
open("grafana/rules/streammon.rules.test.yml", "w").write(head + "\n".join(_yaml(doc, 0)) + "\n")
