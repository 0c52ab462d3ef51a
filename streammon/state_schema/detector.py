"""What a state file says of the degradation detector: its settings, each class's baseline, bank and open incident
(``streammon.detection.watch.DegradationWatch.state``), and how a file of version 2 says it."""

from __future__ import annotations

import math
import re
from typing import Any

from streammon.counting.timing import MAX_TIME
from streammon.detection.bank import MEMBERS
from streammon.detection.baseline import DEFAULT_INTERVAL, MAX_INTERVAL, MIN_INTERVAL
from streammon.detection.watch import ASSESS_SAMPLES
from streammon.state import StateError
from streammon.state_schema.fields import MAX_COUNT, _fields, _int, _list, _real

DETECTOR = ("arl", "recovery_arl", "baseline_samples", "refine_until", "enabled", "false_alarm_interval")
BUDGET = ("counts", "span", "last", "arl", "rate", "behind", "watched", "unchecked", "pending")
_CLASS_ID = re.compile(r"0|[1-9][0-9]{0,8}")


def check_detector(detector: Any) -> int:
    """Check the detector's settings; its ``baseline_samples``."""
    if isinstance(detector, dict) and "false_alarm_interval" not in detector:  # (files before the time budget)
        detector = {**detector, "false_alarm_interval": DEFAULT_INTERVAL}
    detector = _fields(detector, "detector", DETECTOR)
    if detector["arl"] is not None:  # (null: the time budget decides)
        _real(detector["arl"], "detector.arl", 1.0, 1e300, open_low=True)
    _real(detector["false_alarm_interval"], "detector.false_alarm_interval", MIN_INTERVAL, MAX_INTERVAL)
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


def check_watch(watch: Any, k: int, ingested: int, baseline_samples: int) -> None:
    keys = ("position", "classes_seen", "learning", "classes")
    watch = _fields(watch, "watch", (*keys, "budget") if isinstance(watch, dict) and "budget" in watch else keys)
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
    if "budget" in watch:
        _budget(watch["budget"], seen_classes, len(classes))


def _budget(budget: Any, k: int, watched: int) -> None:
    """The classes' measured rates and the run lengths derived from them (``streammon.detection.rates.Budget``)."""
    budget = _fields(budget, "watch.budget", BUDGET)
    for name in ("counts", "arl", "rate", "behind"):
        values = _list(budget[name], f"watch.budget.{name}", most=k)
        for i, value in enumerate(values):
            if not (name == "rate" and value is None):
                _real(value, f"watch.budget.{name}[{i}]", 0.0, 1e300)
    if len({len(budget[name]) for name in ("counts", "arl", "rate", "behind")}) != 1:
        raise StateError("watch.budget: counts, arl, rate and behind must have one entry per class each")
    _real(budget["span"], "watch.budget.span", 0.0, 1e300)
    if budget["last"] is not None:
        _real(budget["last"], "watch.budget.last", -MAX_TIME, MAX_TIME)
    _int(budget["watched"], "watch.budget.watched", 0, watched)
    for i, value in enumerate(_list(budget["pending"], "watch.budget.pending", k)):
        _int(value, f"watch.budget.pending[{i}]", 0, MAX_COUNT)
    samples, seconds = _list(budget["unchecked"], "watch.budget.unchecked", 2)
    _int(samples, "watch.budget.unchecked samples", 0, MAX_COUNT)
    _real(seconds, "watch.budget.unchecked seconds", 0.0, 1e300)


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

