"""What a state file's body may hold: every type and bound, checked before anything is built from it.

``Monitor.load`` runs ``check_body`` on the parsed body (``streammon.state.read``) before it
constructs a window or allocates an array, so a hostile file fails with ``StateError`` naming
the offending field. Every list has the length its declared parameters imply (a ``Timed``
window's ``buckets`` ids and slots, a ``Sliding`` window's ``size`` ring entries), so no
declared size can exceed the file's; count matrices are stored as their non-zero cells
(format 4) but held dense in memory, so what they take is bounded apart: at most
``MAX_MEMORY`` (8 GiB, ``streammon.state_schema.memory``), checked before any is allocated. Limits:

- labels: at most ``max_classes`` (2 … 46,340), distinct, ``[type, value]`` of bool, int,
  float (not NaN) or str; ``capacity`` the next power of two ≥ their number (at least 2);
- count matrices: ``{"cells", "counts"}``, cell ids ``row * side + column`` in [0, side²),
  strictly increasing, each with a count in [1, 2⁵³] (zeros are not stored);
- counts: ints in [0, 2⁵³]; the lifetime counts sum to ``ingested`` ≤ 2⁵³, a window's and a
  bucket's to at most that, so no later sum can overflow int64;
- times: finite within ±10¹² s (``counting.timing.MAX_TIME``); ``since_time`` may be NaN;
- settings: finite, in their ranges (e.g. ``confidence`` in (0, 1), ``arl`` > 1).

Consistency across fields that needs the built objects (a ring that recounts to its window's
counts, a cumulative window equal to the lifetime counts) is ``Tally.restore``'s.

>>> check_body({"labels": []})
Traceback (most recent call last):
...
streammon.state.StateError: state body: missing alert_since, capacity, ... unexpected none
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import numpy as np

from streammon.counting.counts import HARD_MAX_CLASSES
from streammon.counting.timing import MAX_TIME
from streammon.counting.windows import EMPTY_BUCKET
from streammon.findings.distortion import DEFAULT_METRIC_PARAMS
from streammon.findings.report import ALERT_KINDS, PRIOR_SHIFT
from streammon.metrics import names, spec
from streammon.state import StateError
from streammon.state_schema.detector import check_detector, check_watch
from streammon.state_schema.fields import MAX_COUNT, _fields, _int, _ints, _label, _list, _matrix, _real, _str
from streammon.state_schema.memory import MAX_MEMORY, check_memory
from streammon.state_schema.upgrades import UPGRADES
from streammon.tally import WINDOW_TYPES, capacity_for

MAX_SIZE = 2**31 - 1  # a Sliding window's size, a Timed window's buckets (the file must list them all anyway)

BODY = ("labels", "max_classes", "capacity", "windows", "lifetime", "reference", "positive", "warmup_left",
        "warm_counts", "ingested", "watch", "last_t", "clock_driven", "policy", "detector", "alert_since")
DESCRIBE = {"cumulative": ("kind", "name"), "sliding": ("kind", "name", "size"),
            "timed": ("kind", "name", "seconds", "buckets")}
STATE = {"cumulative": ("counts",), "sliding": ("counts", "ring", "head", "filled"),
         "timed": ("counts", "ids", "slots")}
POLICY = ("type1_tolerance", "collapse_recall", "shift_alpha", "confidence", "metric_params")
# The prior-shift fields of the policy: the ratio and clear levels are absent from files written before them, the JS
# gate ``shift_min_js`` present only in those (dropped on load: ``Policy.of_saved``).
POLICY_SINCE_RATIO = ("shift_min_ratio", "shift_clear_alpha", "shift_clear_ratio", "alert_hold")
POLICY_OPTIONAL = ("alert_confirm",)  # absent from files written before it (the default applies)
POLICY_BEFORE_RATIO = ("shift_min_js",)


def check_optional(body: dict[str, Any]) -> None:
    """The body's optional parts (absent from older files): the given baseline, whether the class set is closed."""
    check_prior_baseline(body.get("prior_baseline"))
    if type(body.get("closed", False)) is not bool:
        raise StateError(f"closed must be true or false, got {body['closed']!r:.60}")
    for part in ("alert_pending", "alert_clearing"):  # the alerts' confirmations and holds in progress
        if part in body:
            _alert_times(body[part], part, body.get("ingested"), reads=part == "alert_pending")
    if "alert_pools" in body:  # the held prior-shift alerts' evidence (streammon.findings.shift_hold)
        _alert_pools(body["alert_pools"], body.get("max_classes"))
    if "alert_looked_at" in body:  # the samples the latest read saw (a confirmation counts looks at new ones)
        ingested = body.get("ingested")
        _int(body["alert_looked_at"], "alert_looked_at", -1, ingested if type(ingested) is int else MAX_COUNT)


def check_body(body: Any) -> None:
    """Raise ``StateError`` naming the first field of ``body`` that a saved monitor cannot hold."""
    if isinstance(body, dict):
        # the label side is checked by streammon.pending.schema; prior_baseline is optional (older files)
        check_optional(body)
        body = {key: value for key, value in body.items()
                if key not in ("pending", "prior_baseline", "closed", "scores", "prediction_scores", "alert_pending",
                               "alert_clearing", "alert_pools", "alert_looked_at")}
        # scores: checked by Tally.restore; prediction_scores by Labelling._restore_prediction_scores
    body = _fields(body, "state body", BODY)
    max_classes = _int(body["max_classes"], "max_classes", 2, HARD_MAX_CLASSES)
    labels = [_label(x, f"labels[{i}]") for i, x in enumerate(_list(body["labels"], "labels", most=max_classes))]
    if len(set(labels)) != len(labels):
        raise StateError(f"labels holds a class twice (1, 1.0 and True are one class): {labels!r:.200}")
    k = len(labels)
    capacity = capacity_for(max(k, 2))
    if body["capacity"] != capacity or type(body["capacity"]) is not int:
        raise StateError(f"capacity must be {capacity} for {k} classes, got {body['capacity']!r:.60}")
    ingested = _int(body["ingested"], "ingested", 0, MAX_COUNT)
    last_t = None if body["last_t"] is None else _real(body["last_t"], "last_t", -MAX_TIME, MAX_TIME)
    if _matrix(_fields(body["lifetime"], "lifetime", ("counts",))["counts"], "lifetime.counts", capacity) != ingested:
        raise StateError(f"the lifetime counts do not sum to ingested = {ingested}")
    windows = _list(body["windows"], "windows")
    if not windows:
        raise StateError("windows must not be empty")
    names = [_window(item, f"windows[{i}]", capacity=capacity, max_classes=max_classes, ingested=ingested,
                     last_t=last_t)
             for i, item in enumerate(windows)]
    if len(set(names)) != len(names):
        raise StateError(f"window names must be unique, got {names!r:.200}")
    _reference(body["reference"], labels)
    if body["positive"] is not None and _label(body["positive"], "positive") not in labels:
        raise StateError(f"positive {body['positive']!r:.60} is not one of the labels")
    _int(body["warmup_left"], "warmup_left", 0, MAX_COUNT)
    if _ints(_list(body["warm_counts"], "warm_counts", capacity), "warm_counts", MAX_COUNT) > ingested:
        raise StateError("warm_counts hold more samples than ingested")
    if type(body["clock_driven"]) is not bool:
        raise StateError(f"clock_driven must be true or false, got {body['clock_driven']!r:.60}")
    _policy(body["policy"])
    check_watch(body["watch"], k, ingested, check_detector(body["detector"]))
    _alert_times(body["alert_since"], "alert_since", ingested)


def _alert_times(entries: Any, where: str, ingested: Any, *, reads: bool = False) -> None:
    """A list of ``[kind, window, subject, sample, time]`` entries: alerts with a sample and time each; with
    ``reads`` (pending confirmations) also the reads they held at, which older files lack."""
    most = ingested if type(ingested) is int else MAX_COUNT
    for i, entry in enumerate(_list(entries, where)):
        fields = _list(entry, f"{where}[{i}]")
        if len(fields) != 5 and not (reads and len(fields) == 6):
            raise StateError(f"{where}[{i}] must have {'5 or 6' if reads else 5} entries, got {len(fields)}")
        kind, window, subject, since, time = fields[:5]
        if len(fields) == 6:
            _int(fields[5], f"{where}[{i}] reads", 1, MAX_COUNT)
        if kind not in ALERT_KINDS:
            raise StateError(f"{where}[{i}] kind must be one of {ALERT_KINDS}, got {kind!r:.60}")
        _str(window, f"{where}[{i}] window")
        _str(subject, f"{where}[{i}] subject")
        _int(since, f"{where}[{i}] sample", 0, most)
        if time != -math.inf:  # a report before any sample time
            _real(time, f"{where}[{i}] time", -MAX_TIME, MAX_TIME, nan=True)


def _alert_pools(entries: Any, max_classes: Any) -> None:
    """A list of ``[kind, window, subject, offsets]`` entries: a prior-shift alert's pool, one whole-number offset
    from the lifetime counts per class (``streammon.findings.shift_hold``)."""
    most = max_classes if type(max_classes) is int else HARD_MAX_CLASSES
    for i, entry in enumerate(_list(entries, "alert_pools")):
        kind, window, subject, pool = _list(entry, f"alert_pools[{i}]", 4)
        if kind != PRIOR_SHIFT:
            raise StateError(f"alert_pools[{i}] kind must be {PRIOR_SHIFT!r}, got {kind!r:.60}")
        _str(window, f"alert_pools[{i}] window")
        _str(subject, f"alert_pools[{i}] subject")
        for j, x in enumerate(_list(pool, f"alert_pools[{i}] pool", most=most)):
            _int(x, f"alert_pools[{i}] pool[{j}]", -MAX_COUNT, MAX_COUNT)


def _window(item: Any, where: str, *, capacity: int, max_classes: int, ingested: int, last_t: float | None) -> str:
    item = _fields(item, where, ("describe", "state"))
    describe = item["describe"]
    kind = describe.get("kind") if isinstance(describe, dict) else None
    if not isinstance(kind, str) or kind not in WINDOW_TYPES:
        raise StateError(f"{where}.describe.kind must be one of {sorted(WINDOW_TYPES)}, got {kind!r:.60}")
    describe = _fields(describe, f"{where}.describe", DESCRIBE[kind])
    name = _str(describe["name"], f"{where}.describe.name")
    if not name:
        raise StateError(f"{where}.describe.name must not be empty")
    state = _fields(item["state"], f"{where}.state", STATE[kind])
    if _matrix(state["counts"], f"{where}.state.counts", capacity) > ingested:
        raise StateError(f"{where} holds more samples than ingested = {ingested}")
    if kind == "sliding":
        size = _int(describe["size"], f"{where}.describe.size", 1, MAX_SIZE)
        ring = _list(state["ring"], f"{where}.state.ring", size)
        _ints(ring, f"{where}.state.ring", max_classes * max_classes - 1)
        cells = np.asarray(ring, dtype=np.int64)
        if cells.size and max(int((cells // max_classes).max()), int((cells % max_classes).max())) >= capacity:
            raise StateError(f"{where}.state.ring holds cell ids of classes beyond the {capacity} saved")
        filled = _int(state["filled"], f"{where}.state.filled", 0, size)
        head = _int(state["head"], f"{where}.state.head", 0, size - 1)
        if filled < size and head != filled:
            raise StateError(f"{where}.state: head {head} must equal filled {filled} until the ring is full")
    elif kind == "timed":
        seconds = _real(describe["seconds"], f"{where}.describe.seconds", 0.0, MAX_TIME, open_low=True)
        buckets = _int(describe["buckets"], f"{where}.describe.buckets", 1, MAX_SIZE)
        _timed(state, where, buckets=buckets, width=seconds / buckets, capacity=capacity, last_t=last_t)
    return name


def _timed(state: dict[str, Any], where: str, *, buckets: int, width: float, capacity: int,
           last_t: float | None) -> None:
    ids = _list(state["ids"], f"{where}.state.ids", buckets)
    slots = _list(state["slots"], f"{where}.state.slots", buckets)
    if not set(map(type, ids)) <= {int}:
        raise StateError(f"{where}.state.ids must hold ints")
    live = [(slot, bucket) for slot, bucket in enumerate(ids) if bucket != EMPTY_BUCKET]
    if live and not MAX_TIME / width < 2**62:
        raise StateError(f"{where}: buckets of {width!r} s are too narrow for bucket ids to fit int64")
    newest = math.floor(last_t / width) if last_t is not None and live else None
    total = 0
    for slot, bucket in enumerate(ids):
        if (bucket == EMPTY_BUCKET) != (slots[slot] is None):
            raise StateError(f"{where}.state: slot {slot} must hold a matrix exactly when it holds a bucket")
        if slots[slot] is not None:
            total += _matrix(slots[slot], f"{where}.state.slots[{slot}]", capacity)
    if live:
        last = max(bucket for _, bucket in live)
        if newest is None or last > newest:
            raise StateError(f"{where}.state holds bucket {last}, later than the last sample time {last_t!r}")
        for slot, bucket in live:
            if bucket % buckets != slot or last - bucket >= buckets:
                raise StateError(f"{where}.state: bucket {bucket} cannot be in slot {slot} (newest {last})")
    if total != _matrix(state["counts"], f"{where}.state.counts", capacity):
        raise StateError(f"saved counts of {where} do not match its buckets")


def check_prior_baseline(value: Any) -> list[Hashable] | None:
    """The labels of a saved ``baseline=`` (``{"labels", "counts"}``: the validation confusion counts the
    label-free estimate reads predictions through), or None when the monitor was given none."""
    if value is None:
        return None
    value = _fields(value, "prior_baseline", ("labels", "counts"))
    where = "prior_baseline.labels"
    labels = [_label(x, f"{where}[{i}]") for i, x in enumerate(_list(value["labels"], where, most=HARD_MAX_CLASSES))]
    if len(set(labels)) != len(labels):
        raise StateError(f"{where} holds a class twice: {labels!r:.200}")
    _matrix(value["counts"], "prior_baseline.counts", len(labels))
    return labels


def _reference(reference: Any, labels: list[Hashable]) -> None:
    if reference is None:
        return
    reference = _fields(reference, "reference", ("priors", "source"))
    if reference["source"] not in ("given", "warmup"):
        raise StateError(f"reference.source must be 'given' or 'warmup', got {reference['source']!r:.60}")
    priors = _list(reference["priors"], "reference.priors", most=len(labels))
    seen = []
    for i, entry in enumerate(priors):
        label, weight = _list(entry, f"reference.priors[{i}]", 2)
        seen.append(_label(label, f"reference.priors[{i}]"))
        _real(weight, f"reference.priors[{i}] weight", 0.0, 1.0)
    if len(set(seen)) != len(seen) or not set(seen) <= set(labels) or not priors:
        raise StateError("reference.priors must name distinct saved labels, at least one")


def _policy(policy: Any) -> None:
    keys = POLICY + (POLICY_SINCE_RATIO if isinstance(policy, dict) and "shift_min_js" not in policy
                     else POLICY_BEFORE_RATIO)
    keys += tuple(key for key in POLICY_OPTIONAL if isinstance(policy, dict) and key in policy)
    policy = _fields(policy, "policy", keys)
    _real(policy["type1_tolerance"], "policy.type1_tolerance", 0.0, 1e300)
    _real(policy["collapse_recall"], "policy.collapse_recall", 0.0, 1.0)
    _real(policy["shift_alpha"], "policy.shift_alpha", 0.0, 1.0, open_low=True)
    if "shift_min_js" in policy:
        _real(policy["shift_min_js"], "policy.shift_min_js", 0.0, 1.0)
    else:
        _real(policy["shift_clear_alpha"], "policy.shift_clear_alpha", policy["shift_alpha"], 1.0)
        _real(policy["shift_min_ratio"], "policy.shift_min_ratio", 1.0, 1e300)
        _real(policy["shift_clear_ratio"], "policy.shift_clear_ratio", 1.0, policy["shift_min_ratio"])
        _real(policy["alert_hold"], "policy.alert_hold", 0.0, 1e6)
    if "alert_confirm" in policy:
        _real(policy["alert_confirm"], "policy.alert_confirm", 0.0, 1e6)
    _real(policy["confidence"], "policy.confidence", 0.0, 1.0 - 1e-16, open_low=True)
    params = policy["metric_params"]
    if not isinstance(params, dict):
        raise StateError("policy.metric_params must be an object")
    for metric, values in params.items():
        if not isinstance(values, dict) or not all(  # strings: a choice such as roc_auc's multi_class="ovr"
            type(v) in (bool, str) or (type(v) in (int, float) and not math.isnan(v)) for v in values.values()
        ):
            raise StateError(f"policy.metric_params[{metric!r:.60}] must map names to numbers (not NaN), booleans "
                             "or strings")
    try:
        for metric in {*params, *names()}:  # every metric a report computes must find its parameters (or the
            spec(metric).resolve_params(params.get(metric, DEFAULT_METRIC_PARAMS.get(metric, {})))  # Policy's)
    except (ValueError, TypeError) as exc:
        raise StateError(f"policy.metric_params: {exc}") from None


__all__ = ["MAX_MEMORY", "UPGRADES", "check_body", "check_memory"]  # (for Monitor.load and save)
