"""What a state file's body may hold: every type and bound, checked before anything is built from it.

``Monitor.load`` runs ``check_body`` on the parsed body (``streammon.state.read``) before it
constructs a window or allocates an array, so a hostile file fails with ``StateError`` naming
the offending field, and everything built afterwards is as large as the file says in so many
entries: every list has the length its declared parameters imply (a ``Timed`` window's
``buckets`` ids and slots, a ``Sliding`` window's ``size`` ring entries, ``capacity``²
counts per matrix), so no declared size can exceed the file's. Limits:

- labels: at most ``max_classes`` (2 … 46,340), distinct, ``[type, value]`` of bool, int,
  float (not NaN) or str; ``capacity`` the next power of two ≥ their number (at least 2);
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
import re
from collections.abc import Hashable
from typing import Any

import numpy as np

from streammon.counting.counts import HARD_MAX_CLASSES
from streammon.counting.timing import MAX_TIME
from streammon.counting.windows import EMPTY_BUCKET
from streammon.detection.bank import MEMBERS
from streammon.detection.watch import ASSESS_SAMPLES
from streammon.findings.report import (
    CLASS_SET_CHANGE,
    DEGRADATION,
    INCOMPETENT,
    LABEL_COVERAGE_LOW,
    PREDICTED_MIX_SHIFT,
    PRIOR_SHIFT,
)
from streammon.metrics import names, spec
from streammon.state import StateError, decode_label
from streammon.tally import WINDOW_TYPES, capacity_for

MAX_COUNT = 2**53  # any count, and the number of samples: exact as a float, and sums of them fit int64
MAX_SIZE = 2**31 - 1  # a Sliding window's size, a Timed window's buckets (the file must list them all anyway)

BODY = ("labels", "max_classes", "capacity", "windows", "lifetime", "reference", "positive", "warmup_left",
        "warm_counts", "ingested", "watch", "last_t", "clock_driven", "policy", "detector", "alert_since")
DESCRIBE = {"cumulative": ("kind", "name"), "sliding": ("kind", "name", "size"),
            "timed": ("kind", "name", "seconds", "buckets")}
STATE = {"cumulative": ("counts",), "sliding": ("counts", "ring", "head", "filled"),
         "timed": ("counts", "ids", "slots")}
POLICY = ("type1_tolerance", "collapse_recall", "shift_alpha", "shift_min_js", "confidence", "metric_params")
DETECTOR = ("arl", "recovery_arl", "baseline_samples", "refine_until", "enabled")
ALERT_KINDS = (DEGRADATION, PRIOR_SHIFT, CLASS_SET_CHANGE, INCOMPETENT, LABEL_COVERAGE_LOW, PREDICTED_MIX_SHIFT)
_CLASS_ID = re.compile(r"0|[1-9][0-9]{0,8}")


def _fields(value: Any, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise StateError(f"{where} must be an object with {', '.join(keys)}, got {type(value).__name__}")
    if set(value) != set(keys):
        missing, extra = sorted(set(keys) - set(value)), sorted(map(str, set(value) - set(keys)))
        raise StateError(f"{where}: missing {', '.join(missing) or 'none'}; unexpected {', '.join(extra) or 'none'}")
    return value


def _int(value: Any, where: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise StateError(f"{where} must be an int in [{low}, {high}], got {value!r:.60}")
    return value


def _real(value: Any, where: str, low: float, high: float, *, nan: bool = False, open_low: bool = False) -> float:
    number = type(value) in (int, float) and (low < value if open_low else low <= value) and value <= high
    if not (number or (nan and type(value) is float and math.isnan(value))):
        shown = f"({low}" if open_low else f"[{low}"
        raise StateError(f"{where} must be a number in {shown}, {high}]{' or NaN' if nan else ''}, got {value!r:.60}")
    return float(value)


def _list(value: Any, where: str, length: int | None = None, most: int | None = None) -> list[Any]:
    if not isinstance(value, list):
        raise StateError(f"{where} must be a list, got {type(value).__name__}")
    if (length is not None and len(value) != length) or (most is not None and len(value) > most):
        wanted = f"{length} entries" if length is not None else f"at most {most} entries"
        raise StateError(f"{where} must have {wanted}, got {len(value)}")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise StateError(f"{where} must be a string, got {value!r:.60}")
    return value


def _ints(values: list[Any], where: str, high: int) -> int:
    """Check a flat list of ints in [0, high]; their exact sum."""
    if not set(map(type, values)) <= {int}:
        bad = next(v for v in values if type(v) is not int)
        raise StateError(f"{where} must hold ints, got {bad!r:.60}")
    if values and not (min(values) >= 0 and max(values) <= high):
        raise StateError(f"{where} must hold ints in [0, {high}], got {min(values)} … {max(values)}")
    return sum(values)


def _matrix(value: Any, where: str, side: int) -> int:
    """Check a side × side matrix of counts; its exact sum."""
    return sum(_ints(_list(row, f"{where}[{i}]", side), f"{where}[{i}]", MAX_COUNT)
               for i, row in enumerate(_list(value, where, side)))


def _label(value: Any, where: str) -> Hashable:
    try:
        label = decode_label(value)
    except StateError as exc:
        raise StateError(f"{where}: {exc}") from None
    if isinstance(label, float) and math.isnan(label):
        raise StateError(f"{where}: a NaN label is not a class")
    return label


def check_body(body: Any) -> None:
    """Raise ``StateError`` naming the first field of ``body`` that a saved monitor cannot hold."""
    if isinstance(body, dict):
        # the label side is checked by streammon.pending.schema; prior_baseline is optional (older files)
        check_prior_baseline(body.get("prior_baseline"))
        body = {key: value for key, value in body.items() if key not in ("pending", "prior_baseline")}
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
    _watch(body["watch"], k, ingested, _detector(body["detector"]))
    for i, entry in enumerate(_list(body["alert_since"], "alert_since")):
        kind, window, subject, since, time = _list(entry, f"alert_since[{i}]", 5)
        if kind not in ALERT_KINDS:
            raise StateError(f"alert_since[{i}] kind must be one of {ALERT_KINDS}, got {kind!r:.60}")
        _str(window, f"alert_since[{i}] window")
        _str(subject, f"alert_since[{i}] subject")
        _int(since, f"alert_since[{i}] sample", 0, ingested)
        if time != -math.inf:  # a report before any sample time
            _real(time, f"alert_since[{i}] time", -MAX_TIME, MAX_TIME, nan=True)


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
    policy = _fields(policy, "policy", POLICY)
    _real(policy["type1_tolerance"], "policy.type1_tolerance", 0.0, 1e300)
    _real(policy["collapse_recall"], "policy.collapse_recall", 0.0, 1.0)
    _real(policy["shift_alpha"], "policy.shift_alpha", 0.0, 1.0, open_low=True)
    _real(policy["shift_min_js"], "policy.shift_min_js", 0.0, 1.0)
    _real(policy["confidence"], "policy.confidence", 0.0, 1.0 - 1e-16, open_low=True)
    params = policy["metric_params"]
    if not isinstance(params, dict):
        raise StateError("policy.metric_params must be an object")
    for metric, values in params.items():
        if not isinstance(values, dict) or not all(
            type(v) is bool or (type(v) in (int, float) and not math.isnan(v)) for v in values.values()
        ):
            raise StateError(f"policy.metric_params[{metric!r:.60}] must map names to numbers (not NaN) or booleans")
    try:
        for metric in {*params, *names()}:  # every metric a report computes must find its parameters
            spec(metric).resolve_params(params.get(metric, {}))
    except (ValueError, TypeError) as exc:
        raise StateError(f"policy.metric_params: {exc}") from None


def _detector(detector: Any) -> int:
    """Check the detector's settings; its ``baseline_samples``."""
    detector = _fields(detector, "detector", DETECTOR)
    _real(detector["arl"], "detector.arl", 1.0, 1e300, open_low=True)
    _real(detector["recovery_arl"], "detector.recovery_arl", 1.0, math.inf, open_low=True)
    samples = _int(detector["baseline_samples"], "detector.baseline_samples", 1, MAX_COUNT)
    _int(detector["refine_until"], "detector.refine_until", 1, MAX_COUNT)
    if type(detector["enabled"]) is not bool:
        raise StateError(f"detector.enabled must be true or false, got {detector['enabled']!r:.60}")
    return samples


def _class_id(key: Any, where: str, k: int) -> int:
    if not (isinstance(key, str) and _CLASS_ID.fullmatch(key) and int(key) < k):
        raise StateError(f"{where}: {key!r:.60} is not the index of a saved class (0 … {k - 1})")
    return int(key)


def _watch(watch: Any, k: int, ingested: int, baseline_samples: int) -> None:
    watch = _fields(watch, "watch", ("position", "classes_seen", "learning", "classes"))
    if _int(watch["position"], "watch.position", 0, MAX_COUNT) != ingested:
        raise StateError(f"the detector's position {watch['position']} is not the sample count {ingested}")
    seen_classes = _int(watch["classes_seen"], "watch.classes_seen", 0, k)
    learning, classes = watch["learning"], watch["classes"]
    if not (isinstance(learning, dict) and isinstance(classes, dict)):
        raise StateError("watch.learning and watch.classes must be objects")
    for key, counts in learning.items():
        cls = _class_id(key, "watch.learning", seen_classes)
        correct, total = _list(counts, f"watch.learning[{cls}]", 2)
        most = min(ingested, baseline_samples - 1)  # a class that has all its baseline samples watches
        _int(correct, f"watch.learning[{cls}] correct", 0, _int(total, f"watch.learning[{cls}] total", 0, most))
        if key in classes:
            raise StateError(f"class {cls} cannot both learn its baseline and have one")
    for key, item in classes.items():
        _watched_class(item, f"watch.classes[{_class_id(key, 'watch.classes', seen_classes)}]", ingested)


def _watched_class(item: Any, where: str, ingested: int) -> None:
    """One class with a baseline: its bank's statistics, the counts they are as of, its open incident."""
    saved = _fields(item, where, ("baseline", "source", "status", "thresholds", "statistic", "run", "seen", "start",
                                  "start_at", "recovery", "refining", "incident"))
    correct, total = _list(saved["baseline"], f"{where}.baseline", 2)
    _real(correct, f"{where}.baseline correct", 0.0, _real(total, f"{where}.baseline total", 0.0, MAX_COUNT,
                                                             open_low=True))
    if saved["source"] not in ("given", "learned"):
        raise StateError(f"{where}.source must be 'given' or 'learned', got {saved['source']!r:.60}")
    if saved["status"] not in ("watching", "degraded", "assessing", "unwatched"):
        raise StateError(f"{where}.status must be 'watching', 'degraded', 'assessing' or 'unwatched', "
                         f"got {saved['status']!r:.60}")
    if (saved["thresholds"] is None) != (saved["status"] == "unwatched"):
        raise StateError(f"{where}.thresholds must be null exactly when the class is unwatched")
    if saved["thresholds"] is not None:  # (null for a member not in use)
        for j, value in enumerate(_list(saved["thresholds"], f"{where}.thresholds", MEMBERS)):
            if value is not None:
                _real(value, f"{where}.thresholds[{j}]", 0.0, 1e300, open_low=True)
    seen = _int(saved["seen"], f"{where}.seen", 0, ingested)
    _int(saved["run"], f"{where}.run", 0, ingested - seen)
    _real(saved["recovery"], f"{where}.recovery", 0.0, 1e300)
    for j, value in enumerate(_list(saved["statistic"], f"{where}.statistic", MEMBERS)):
        _real(value, f"{where}.statistic[{j}]", 0.0, 1e300)
    for name, most in (("start", seen), ("start_at", ingested)):
        for j, value in enumerate(_list(saved[name], f"{where}.{name}", MEMBERS)):
            _int(value, f"{where}.{name}[{j}]", 0, most)
    if saved["refining"] is not None:
        if (saved["source"], saved["status"]) != ("learned", "watching"):
            raise StateError(f"{where}: only a watched class with a learned baseline refines it")
        right, counted = _list(saved["refining"], f"{where}.refining", 2)
        _int(right, f"{where}.refining right", 0, _int(counted, f"{where}.refining total", math.ceil(total), ingested))
    _incident(saved["incident"], saved["status"], where, seen, ingested)


def _incident(incident: Any, status: str, where: str, seen: int, ingested: int) -> None:
    """An open incident: when and where it began, the recall since, and its assessment after the alarm."""
    if (incident is None) != (status not in ("degraded", "assessing")):
        raise StateError(f"{where}: an incident is open exactly while the class is degraded or assessing")
    if incident is None:
        return
    since, since_time, change_at, recall, samples, right, counted = _list(incident, f"{where}.incident", 7)
    assessing = status == "assessing"
    done = _int(counted, f"{where}.incident assessed total", 0, ASSESS_SAMPLES - 1 if assessing else ASSESS_SAMPLES)
    if not assessing and done not in (0, ASSESS_SAMPLES):  # (0: a file of version 2, no assessment)
        raise StateError(f"{where}: a degraded class was assessed on {ASSESS_SAMPLES} samples, not {done}")
    _int(right, f"{where}.incident assessed right", 0, done)
    _int(samples, f"{where}.incident samples", 1, seen)
    _int(change_at, f"{where}.incident change point", 0, _int(since, f"{where}.incident since", 0, ingested))
    _real(since_time, f"{where}.incident time", -MAX_TIME, MAX_TIME, nan=True)
    _real(recall, f"{where}.incident recall", 0.0, 1.0)


def from_version_2(body: dict[str, Any]) -> dict[str, Any]:
    """A version-2 body as this version's: a class's one bank threshold becomes each member's (the same detector:
    a member not in use never leaves 0); an open incident had no assessment (its recovery test armed at the
    alarm). What the body says is checked afterwards, as for any file."""
    watch = body.get("watch")
    classes = watch.get("classes") if isinstance(watch, dict) else None
    for item in classes.values() if isinstance(classes, dict) else ():
        if isinstance(item, dict) and "threshold" in item and "thresholds" not in item:
            h = item.pop("threshold")
            item["thresholds"] = None if h is None else [h] * MEMBERS
        if isinstance(item, dict) and isinstance(item.get("incident"), list):
            item["incident"] = [*item["incident"], 0, 0]  # no assessment after the alarm: its recovery test was armed
    return body


UPGRADES = {2: from_version_2}  # older state files this streammon reads (streammon.state.loads)
