"""Segments of a model in `streammon serve`: a monitor per segment value (counted apart, exported with a `segment`
label, reloaded after a restart), at most max_segments, and a closed class set taken from the configuration."""

from __future__ import annotations

import http.client
import json
from collections import Counter
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from streammon.serve.config import parse
from streammon.serve.run import Server


def config(state: Path, **model: str) -> str:
    extra = "".join(f"{key} = {value}\n" for key, value in model.items())
    return (f'[server]\nlisten = "127.0.0.1:0"\nstate_dir = "{state}"\ncheckpoint_every = 3600\n'
            f'[models.fraud]\nwindows = ["cumulative"]\nreference = {{ legit = 9, fraud = 1 }}\n{extra}')


def call(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(method, path, body=None if body is None else json.dumps(body))
    answer = connection.getresponse()
    data = answer.read()
    return answer.status, json.loads(data) if data.startswith((b"{", b"[")) else data.decode()


def samples(port: int, segment: dict[str, Any] | None, truth: list[str], preds: list[str]) -> tuple[int, Any]:
    body: dict[str, Any] = {"y_true": truth, "y_pred": preds}
    if segment is not None:
        body["segment"] = segment
    return call(port, "POST", "/v1/models/fraud/samples", body)


def confusion(port: int, segment: str) -> Counter[tuple[str, str]]:
    status, report = call(port, "GET", f"/v1/models/fraud/report?segment={segment}")
    assert status == 200, report
    window = report["windows"]["cumulative"]
    labels = [label["value"] for label in window["labels"]]
    return Counter({(labels[i], labels[j]): n for i, row in enumerate(window["confusion"]) for j, n in enumerate(row)
                    if n})


def test_each_segment_counts_apart_is_exported_and_reloaded(tmp_path: Path) -> None:
    """Batches of two countries count in two monitors, each equal to a recount of its own batches; /metrics has
    one series per segment with a segment label (and its values add up to the model's); a restart reloads both
    segments with their counts."""
    text = config(tmp_path / "state", segments='["country"]', max_segments="3")
    server = Server(parse(text))
    try:
        assert samples(server.port, {"country": "DE"}, ["legit", "fraud", "legit"], ["legit", "fraud", "fraud"]) == \
            (200, {"accepted": 3})
        assert samples(server.port, {"country": "FR"}, ["fraud"], ["legit"]) == (200, {"accepted": 1})
        assert samples(server.port, {"country": "DE"}, ["fraud"], ["fraud"]) == (200, {"accepted": 1})
        assert confusion(server.port, "country=DE") == Counter({("legit", "legit"): 1, ("fraud", "fraud"): 2,
                                                                 ("legit", "fraud"): 1})
        assert confusion(server.port, "country=FR") == Counter({("fraud", "legit"): 1})
        _, exposition = call(server.port, "GET", "/metrics")
        totals = {s.labels["segment"]: s.value for family in text_string_to_metric_families(exposition)
                  for s in family.samples if s.name == "streammon_samples_total"}
        assert totals == {"country=DE": 4.0, "country=FR": 1.0}
        assert call(server.port, "GET", "/v1/models")[1]["segments"] == {"fraud": ["country=DE", "country=FR"]}
    finally:
        server.stop(grace=2.0)
    again = Server(parse(text))
    try:
        assert confusion(again.port, "country=FR") == Counter({("fraud", "legit"): 1})
        assert sum(confusion(again.port, "country=DE").values()) == 4
    finally:
        again.stop(grace=2.0)


def test_a_segment_beyond_max_segments_or_malformed_is_refused_and_nothing_is_counted(tmp_path: Path) -> None:
    """With max_segments = 2, a third segment value is a 400 naming the cap (never merged into another segment);
    a batch without its segment, with another key, or with a ',' in a value is a 400; the two segments' counts
    stay as they were."""
    server = Server(parse(config(tmp_path / "state", segments='["country"]', max_segments="2")))
    try:
        for country in ("DE", "FR"):
            assert samples(server.port, {"country": country}, ["legit"], ["legit"])[0] == 200
        for segment, message in (({"country": "US"}, "max_segments=2"), (None, "segment is missing"),
                                 ({"region": "EU"}, "expected ['country']"), ({"country": "a,b"}, "without ','")):
            status, answer = samples(server.port, segment, ["fraud"], ["fraud"])
            assert status == 400 and message in answer["error"], answer
        assert sum(confusion(server.port, "country=DE").values()) == sum(confusion(server.port, "country=FR")
                                                                          .values()) == 1
        assert call(server.port, "GET", "/v1/models/fraud/report?segment=country=US")[0] == 404
    finally:
        server.stop(grace=2.0)


def test_a_closed_model_refuses_a_stray_label_with_a_400(tmp_path: Path) -> None:
    """closed = true in a model's table: a batch with a mistyped class is refused naming it, nothing counted."""
    server = Server(parse(config(tmp_path / "state", closed="true")))
    try:
        status, answer = samples(server.port, None, ["legit", "Fraud"], ["legit", "legit"])
        assert status == 400 and "y_true[1]" in answer["error"] and "'Fraud' is not one of the classes" in \
            answer["error"], answer
        assert call(server.port, "GET", "/v1/models/fraud/report")[1]["samples"] == 0
    finally:
        server.stop(grace=2.0)
