"""A monitor's settings from text (the command line) or TOML values (the server's configuration): one parsing.

The settings are generated from the fields of ``DetectorSettings`` and ``Policy`` (``dataclasses.fields``), so
a field added to either is a flag of ``streammon replay`` and a key of the server's ``detector``/``policy``
tables without further edits. Each field is a ``Knob``: its flag (``--arl``; a ``bool`` field is a pair,
``--detect/--no-detect`` for ``enabled``), its kind (read from the field's type: ``int``, ``float``,
``bool``, a mapping given as JSON, ``… | None``), and its help — taken from ``HELP``, the one place the
settings are explained (the CLI's ``--help`` and the configuration page print it), or, for a field ``HELP``
does not know yet, its owner, name and default.

A value is checked in two steps, both before anything runs: its syntax here (a number, an integer, a
duration such as ``30d``), then its range by the setting itself — ``DetectorSettings`` checks its fields, and
both are put through the checks a saved monitor's state passes on load (``streammon.state_schema``), so a
value a monitor could not be saved and loaded with is refused now, naming the field, not at the first report.

>>> [k.flag for k in knobs(DetectorSettings)][:3]
['--arl', '--recovery-arl', '--baseline-samples']
>>> knob(Policy, "shift_alpha").from_text("0.001")
0.001
>>> build(DetectorSettings, {"arl": 1e8}).arl
100000000.0
>>> build(Policy, {"confidence": 2.0})
Traceback (most recent call last):
...
streammon.serve.settings.SettingError: confidence: must be a number in (0.0, 0.9999999999999999], got 2.0
>>> window_of("timed:1h", "--window").name, window_of("sliding:1000", "--window").name
('timed_3600s', 'sliding_1000')
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from streammon.counting.windows import Cumulative, Sliding, Timed, Window
from streammon.detection.baseline import DetectorSettings
from streammon.findings.distortion import Policy
from streammon.monitor import Monitor
from streammon.state import StateError

T = TypeVar("T")
OWNERS: tuple[type, ...] = (DetectorSettings, Policy)
UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86_400.0, "w": 604_800.0}
WINDOWS = "'cumulative', 'sliding:N' (N samples), 'timed:DURATION' (3600, 3600s, 1h) or 'timed:DURATION:BUCKETS'"


@dataclass(frozen=True)
class Help:
    """How one field is explained: its text, the metavar of its flag, and the flag's name when it is not the
    field's (``enabled`` is ``--detect/--no-detect``); ``seconds``: text may be a duration (``30d``);
    ``infinite``: ``inf`` is a meaningful value."""

    text: str
    metavar: str = "X"
    flag: str | None = None
    seconds: bool = False
    infinite: bool = False


# The one place the settings are explained. A field of DetectorSettings or Policy missing here still gets its
# flag and key (with a help naming it and its default); an entry for a field a version lacks is not used.
HELP: dict[str, Help] = {
    "DetectorSettings.arl": Help("the expert knob: every class's average run length, in its own samples, between "
                                 "false degradation alerts while its recall holds", "N"),
    "DetectorSettings.false_alarm_interval": Help("expected time between false degradation alerts per model, at "
                                                  "the classes' observed rates (seconds or 30d, 1w)", "DURATION",
                                                  seconds=True),
    "DetectorSettings.recovery_arl": Help("average run length between false clears while a recall stays degraded "
                                          "(inf: an incident never clears by itself)", "N", infinite=True),
    "DetectorSettings.baseline_samples": Help("without a given baseline, each class's first N samples make its "
                                              "baseline", "N"),
    "DetectorSettings.refine_until": Help("a learned baseline is re-estimated each time the class's samples double, "
                                          "up to N", "N"),
    "DetectorSettings.enabled": Help("degradation detection on or off (--no-detect)", flag="detect"),
    "Policy.type1_tolerance": Help("distortion (in the metric's units) above which a mix-sensitive score is flagged "
                                   "(type 1)"),
    "Policy.collapse_recall": Help("a recall at most this is a collapsed class (Condition 3 flags)"),
    "Policy.shift_alpha": Help("significance level of the prior-shift test (the on level of the test-based alerts)",
                               "ALPHA"),
    "Policy.shift_min_ratio": Help("a prior shift needs the largest per-class prior ratio, window against reference, "
                                   "at least this", "RATIO"),
    "Policy.shift_clear_alpha": Help("a prior-shift alert that is on stays on while p < this (hysteresis: the off "
                                     "level)", "ALPHA"),
    "Policy.shift_clear_ratio": Help("... and while the prior ratio is at least this (the ratio's off level)", "RATIO"),
    "Policy.alert_hold": Help("an alert whose condition fails stays on for this many turnovers of its window (0: "
                              "no hold); a prior-shift alert also until the samples since then show the mix back",
                              "TURNOVERS"),
    "Policy.alert_confirm": Help("a window alert that is off is raised only once its condition has held across "
                                 "this many turnovers of its window and 1 + ceil(this) reads, unless its p-value is "
                                 "below shift_alpha ** (1 + this) (0: at once)", "TURNOVERS"),
    "Policy.shift_min_js": Help("smallest Jensen-Shannon divergence (bits) that counts as a prior shift"),
    "Policy.confidence": Help("level of the reports' intervals (and of the incompetence evidence and the prior-shift "
                              "alert's off test)", "LEVEL"),
    "Policy.metric_params": Help("parameters per metric, as JSON text or a JSON file: '{\"holder\": {\"p\": 0.5}}'",
                                 "JSON"),
}


class SettingError(ValueError):
    """A setting refused: ``field`` names it (None when the problem is not one field's), ``problem`` says what
    was expected and what was given."""

    def __init__(self, field: str | None, problem: str) -> None:
        super().__init__(problem if field is None else f"{field}: {problem}")
        self.field = field
        self.problem = problem


@dataclass(frozen=True)
class Knob:
    """One field of ``DetectorSettings`` or ``Policy`` as a flag and a key."""

    owner: type
    name: str
    kind: str  # "int", "float", "bool" or "json"
    optional: bool  # None is a value ("none" on the command line)
    default: Any
    help: Help

    @property
    def flag(self) -> str:
        """The command line's flag: ``--`` and the field's name (or ``Help.flag``) with ``-`` for ``_``."""
        return "--" + (self.help.flag or self.name).replace("_", "-")

    @property
    def describe(self) -> str:
        """The help line: the text and the default."""
        default = self.default
        if isinstance(default, Mapping):
            default = json.dumps({k: dict(v) if isinstance(v, Mapping) else v for k, v in default.items()})
        elif isinstance(default, float) and self.help.seconds:
            default = f"{default:g} s = {default / 86_400:g} d"
        elif isinstance(default, float):
            default = f"{default:g}"
        return f"{self.help.text} (default {default})"

    def from_text(self, text: str) -> Any:
        """The value of ``text`` as typed on a command line (``SettingError`` naming what was expected)."""
        given = text.strip()
        if self.optional and given.lower() == "none":
            return None
        if self.kind == "json":
            try:
                return self._checked_json(json.loads(_file_or_text(given)))
            except (ValueError, OSError) as exc:
                raise SettingError(self.name, f"expected JSON (text or a file), got {text!r}: {exc}") from None
        if self.kind == "bool":
            if given.lower() in ("true", "false"):
                return given.lower() == "true"
            raise SettingError(self.name, f"expected true or false, got {text!r}")
        if self.kind == "int":
            if re.fullmatch(r"[+]?\d[\d_]*", given):
                return int(given.replace("_", ""))
            raise SettingError(self.name, f"expected an integer, got {text!r}")
        value = number_of(given, units=self.help.seconds)
        if value is None:
            unit = " or a duration (90s, 15m, 1h, 30d, 1w)" if self.help.seconds else ""
            raise SettingError(self.name, f"expected a number{unit}, got {text!r}")
        return self.from_value(value)

    def from_value(self, value: Any) -> Any:
        """A TOML value checked for its type (``SettingError`` naming what was expected)."""
        if self.kind == "json":
            return self._checked_json(value)
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            raise SettingError(self.name, f"expected true or false, got {value!r:.60}")
        if self.help.seconds and isinstance(value, str):
            return self.from_text(value)
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if self.kind == "int":
            if number and isinstance(value, int):
                return value
            raise SettingError(self.name, f"expected an integer, got {value!r:.60}")
        if not number or math.isnan(value) or (math.isinf(value) and not self.help.infinite):
            what = "a finite number" + (" or inf" if self.help.infinite else "")
            raise SettingError(self.name, f"expected {what}, got {value!r:.60}")
        return float(value)

    def _checked_json(self, value: Any) -> Any:
        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
            raise SettingError(self.name, f"expected an object of objects such as {{\"holder\": {{\"p\": 0.5}}}}, "
                               f"got {value!r:.60}")
        return value


def knobs(owner: type) -> tuple[Knob, ...]:
    """The knobs of ``owner`` (``DetectorSettings`` or ``Policy``), one per dataclass field, in field order."""
    hints = typing.get_type_hints(owner)
    found = []
    for f in dataclasses.fields(owner):
        kind, optional = _kind(hints[f.name])
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
        text = HELP.get(f"{owner.__name__}.{f.name}") or Help(f"{owner.__name__}.{f.name}")
        found.append(Knob(owner, f.name, kind, optional, default, text))
    return tuple(found)


def knob(owner: type, name: str) -> Knob:
    """The knob of ``owner``'s field ``name``."""
    for k in knobs(owner):
        if k.name == name:
            return k
    raise KeyError(f"{owner.__name__} has no field {name!r}")


def build(owner: type[T], given: Mapping[str, Any]) -> T:
    """``owner(**given)`` with every value checked: its type (``Knob.from_value``), the class's own checks, and
    the checks a saved monitor's state passes on load. ``SettingError`` names the field."""
    known = {k.name: k for k in knobs(owner)}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise SettingError(unknown[0], f"unknown setting (known: {', '.join(known)})")
    values = {name: known[name].from_value(value) for name, value in given.items()}
    try:
        made = owner(**values)
    except (TypeError, ValueError) as exc:
        raise _named(str(exc), owner.__name__, set(known)) from None
    _as_saved(made)
    return made


def _named(message: str, owner: str, fields: set[str]) -> SettingError:
    """A settings class's error as a ``SettingError`` naming the field its message starts with (``arl must …``,
    ``DetectorSettings.arl must …``), the rest as the problem; else naming none."""
    found = re.match(rf"(?:{owner}\.)?(\w+)\S* (.*)", message, re.DOTALL)
    if found and found.group(1) in fields:
        return SettingError(found.group(1), found.group(2))
    field = next((f for f in fields if re.search(rf"\b{f}\b", message)), None)
    return SettingError(field, message)


def _as_saved(made: Any) -> None:
    """Refuse a setting a monitor could not be saved and loaded with (``streammon.state_schema`` checks each
    field's range: it is where a new field's range must be stated anyway)."""
    options = {"detector": made} if isinstance(made, DetectorSettings) else {"policy": made}
    try:
        Monitor.loads(Monitor([Cumulative()], **options).dumps())
    except (StateError, ValueError, TypeError) as exc:
        fields = {f.name for f in dataclasses.fields(made)}
        raise _named(str(exc), "policy" if "policy" in options else "detector", fields) from None


def window_of(spec: Any, where: str) -> Window:
    """A fresh window from its spec: ``cumulative``, ``sliding:N``, ``timed:DURATION`` or
    ``timed:DURATION:BUCKETS`` (a duration: seconds, or ``90s``, ``15m``, ``1h``, ``1d``, ``1w``). A ``ValueError``
    names ``where`` and the spec."""
    if not isinstance(spec, str):
        raise ValueError(f"{where}: {spec!r:.60} is not a window: expected {WINDOWS}")
    kind, *args = spec.strip().split(":")
    try:
        if kind == "cumulative" and not args:
            return Cumulative()
        if kind == "sliding" and len(args) == 1 and args[0].strip().replace("_", "").isdigit():
            return Sliding(int(args[0].replace("_", "")))
        if kind == "timed" and len(args) in (1, 2):
            seconds = number_of(args[0], units=True)
            if seconds is None:
                raise ValueError(f"expected a duration such as 3600, 3600s or 1h, got {args[0]!r}")
            buckets = int(args[1]) if len(args) == 2 else 60
            return Timed(int(seconds) if seconds.is_integer() else seconds, buckets=buckets)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: window {spec!r}: {exc}") from None
    raise ValueError(f"{where}: {spec!r:.60} is not a window: expected {WINDOWS}")


def _kind(hint: Any) -> tuple[str, bool]:
    """The knob kind of a field's type, and whether None is one of its values."""
    args = typing.get_args(hint)
    optional = type(None) in args
    if optional:
        rest = [a for a in args if a is not type(None)]
        hint = rest[0] if len(rest) == 1 else Any
    if hint is bool:
        return "bool", optional
    if hint is int:
        return "int", optional
    if hint is float or (typing.get_origin(hint) in (typing.Union, types.UnionType)
                         and set(typing.get_args(hint)) <= {int, float}):
        return "float", optional
    return "json", optional


def number_of(text: str, *, units: bool = False) -> float | None:
    """The number ``text`` writes (``1e6``, ``1_000``, ``inf``), or with ``units`` a duration in seconds (``90s``,
    ``15m``, ``1h``, ``30d``, ``1w``); None when it is neither.

    >>> number_of("1e6"), number_of("30d", units=True), number_of("30d"), number_of("x")
    (1000000.0, 2592000.0, None, None)
    """
    match = re.fullmatch(r"\s*([+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:e[-+]?\d+)?|inf)\s*(s|m|min|h|d|w)?\s*", text.lower())
    if match is None or (match.group(2) and not units):
        return None
    return float(match.group(1).replace("_", "")) * UNITS[match.group(2) or "s"]


def _file_or_text(text: str) -> str:
    """The text of the file ``text`` names, or ``text`` itself (JSON given inline)."""
    from pathlib import Path  # noqa: PLC0415 (only for a value that is not inline JSON)

    if not text.lstrip().startswith(("{", "[")) and Path(text).is_file():
        return Path(text).read_text(encoding="utf-8")
    return text
