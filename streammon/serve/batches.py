"""The JSON bodies of the server's batch paths, checked before anything is counted.

``samples``: ``{"y_true": [...], "y_pred": [...], "t": [...]}``; ``predictions``: ``{"keys": [...], "y_pred":
[...], "t": [...]}``; ``labels``: ``{"keys": [...], "y_true": [...], "t": [...]}``; and ``"segment": {...}`` for
a segmented model (``streammon.serve.hub``). ``t`` is optional: one number
of seconds for the batch, or one per row; labels are JSON strings, integers, whole floats or booleans; keys are
strings or integers. An empty batch is accepted (0). A body that is not such an object raises ``BadBatch`` naming
the field and what was expected; the monitor's own checks (label rules, times that never decrease) then judge the
rows (nothing is counted unless every row passes), and a refusal of theirs is located to its first bad row, with
what was expected, by ``locate``.

>>> parse(b'{"y_true": ["a", "b"], "y_pred": ["a", "a"]}', "samples")
{'y_true': ['a', 'b'], 'y_pred': ['a', 'a'], 't': None, 'segment': None}
>>> parse(b'{"keys": ["k1"]}', "predictions")
Traceback (most recent call last):
...
streammon.serve.batches.BadBatch: y_pred is missing: a predictions batch has keys, y_pred (and optionally t)
>>> locate({"keys": ["k1"], "y_pred": [None], "t": None}, "predictions", ValueError("label None is missing"))
'y_pred[0]: null is not a class label: expected a string, an integer, a whole float or a boolean'
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from streammon.counting.classes import check_label
from streammon.pending.keys import check_key

FIELDS = {"samples": ("y_true", "y_pred"), "predictions": ("keys", "y_pred"), "labels": ("keys", "y_true")}
_JSON_NAMES: dict[type, str] = {type(None): "null", bool: "a boolean", dict: "an object", list: "an array",
                                 str: "a string", int: "an integer", float: "a number"}


class BadBatch(ValueError):
    """A batch that cannot be counted; nothing of it was."""


def parse(body: bytes, kind: str) -> dict[str, Any]:
    """The checked fields of a batch body of ``kind`` (samples, predictions, labels); ``t`` None if absent."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadBatch(f"the body is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise BadBatch(f"the body must be a JSON object with {', '.join(FIELDS[kind])} and optionally t, "
                       f"got {_JSON_NAMES.get(type(document), 'a value')}")
    names = (*FIELDS[kind], "t", "segment", *(("y_score",) if kind != "labels" else ()))
    unknown = sorted(set(document) - set(names))
    if unknown:
        raise BadBatch(f"unknown field {unknown[0]!r:.60}: a {kind} batch has {', '.join(names)}")
    out: dict[str, Any] = {}
    for name in FIELDS[kind]:
        if name not in document:
            raise BadBatch(f"{name} is missing: a {kind} batch has {', '.join(FIELDS[kind])} (and optionally t)")
        column = document[name]
        if not isinstance(column, list):
            raise BadBatch(f"{name} must be an array, got {_JSON_NAMES.get(type(column), 'a value')}")
        out[name] = column
    first, second = FIELDS[kind]
    if len(out[first]) != len(out[second]):
        raise BadBatch(f"{first} and {second} must have the same length, got {len(out[first])} and "
                       f"{len(out[second])}")
    t = document.get("t")
    if isinstance(t, list):
        if len(t) != len(out[first]):
            raise BadBatch(f"t must have one time per row ({len(out[first])}), got {len(t)}")
    elif t is not None and (isinstance(t, bool) or not isinstance(t, (int, float))):
        raise BadBatch(f"t must be a number of seconds or an array of them, got {_JSON_NAMES.get(type(t), 'a value')}")
    out["t"] = t
    if "y_score" in document:
        out["y_score"] = _scores(document["y_score"], len(out[first]))
    segment = document.get("segment")
    if segment is not None and not isinstance(segment, dict):
        raise BadBatch(f"segment must be an object such as {{\"country\": \"DE\"}}, got {_name(segment)}")
    out["segment"] = segment
    _refuse_duplicates(body, document)
    return out  # the rows are judged by the monitor itself; a refusal is located by ``locate``


def _scores(y_score: Any, rows: int) -> list[Any]:
    """The ``y_score`` field: an array of one score (or one row of class probabilities) per row, whose values the
    monitor checks (``streammon.counting.score_input``)."""
    if not isinstance(y_score, list):
        raise BadBatch(f"y_score must be an array of one score (or one row of class probabilities) per row, got "
                       f"{_name(y_score)}")
    if len(y_score) != rows:
        raise BadBatch(f"y_score must have one score (or row) per row ({rows}), got {len(y_score)}")
    return y_score


def _refuse_duplicates(body: bytes, document: dict[str, Any]) -> None:
    """A field given twice is refused (a JSON parser keeps the last one silently). Each member of the object has
    one ``:`` outside strings, so a body without escapes (``\\``, which could spell a name) and with no more colons
    than distinct fields has none twice: two fast scans. Any other body (colons or escapes in its labels) is
    parsed again keeping every pair (Python's json: about as fast as orjson on label arrays)."""
    members = len(document) + (len(document["segment"]) if isinstance(document.get("segment"), dict) else 0)
    if b"\\" not in body and body.count(b":") <= members:
        return
    pairs: list[str] = []

    def keep(items: list[tuple[str, Any]]) -> dict[str, Any]:
        pairs[:] = [name for name, _ in items]  # the top-level object is the last one closed
        return {}

    try:
        json.loads(body, object_pairs_hook=keep)
    except (ValueError, RecursionError) as exc:  # orjson read it already; Python's json nests less deep
        raise BadBatch(f"the body is not JSON this server can read: {exc}") from None
    twice = sorted({name for name in pairs if pairs.count(name) > 1})
    if twice:
        raise BadBatch(f"field {twice[0]!r} is given twice: give each field once")


def _check_types(fields: dict[str, Any], kind: str) -> None:
    """JSON types of every row, first: cheap, and the message names the position."""
    for name in FIELDS[kind]:
        allowed = (str, int) if name == "keys" else (str, int, float, bool)
        if not all(type(value) in allowed for value in fields[name]):
            position, value = next((i, v) for i, v in enumerate(fields[name]) if type(v) not in allowed)
            expected = "a string or an integer" if name == "keys" else \
                "a string, an integer, a whole float or a boolean"
            what = "key" if name == "keys" else "class label"
            raise BadBatch(f"{name}[{position}]: {_name(value)} is not a {what}: expected {expected}")
    t = fields["t"]
    if isinstance(t, list) and not all(type(value) in (int, float) for value in t):
        position, value = next((i, v) for i, v in enumerate(t) if type(v) not in (int, float))
        raise BadBatch(f"t[{position}]: {_name(value)} is not a time: expected a number of seconds")


def _name(value: Any) -> str:
    return _JSON_NAMES.get(type(value), "a value")


def locate(fields: dict[str, Any], kind: str, error: Exception, classes: tuple[Any, ...] | None = None) -> str:
    """The monitor's refusal of a checked batch, with the first row it concerns when one can be found (``classes``:
    a closed monitor's classes, so that a row of another class is found too)."""
    try:
        _check_types(fields, kind)
    except BadBatch as exc:
        return str(exc)
    message = str(error)
    if message.startswith(("t[", "t ", "y_score", "a binary score", "a 1-D y_score", "(n, ")):
        return message
    for name in FIELDS[kind]:
        check = check_key if name == "keys" else check_label
        for position, value in enumerate(fields[name]):
            try:
                check(value)
            except (TypeError, ValueError) as exc:
                return f"{name}[{position}]: {exc}"
            if classes is not None and name != "keys" and value not in classes:
                return f"{name}[{position}]: {message}"
    return message
