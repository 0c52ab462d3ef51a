"""The monitor's knobs on the command line: ``--window``, every ``DetectorSettings`` and every ``Policy`` field.

The flags are generated from the dataclasses' fields by ``streammon.serve.settings`` (which the server's
configuration reads its ``detector`` and ``policy`` tables with), so a field added to either is a flag here with
no edit: ``--arl 1e8``, ``--recovery-arl inf``, ``--baseline-samples 2000``, ``--no-detect``,
``--shift-alpha 0.001``, ``--metric-params '{"holder": {"p": 1}}'``. A bad value is a usage error (one line,
status 2) naming the flag, the value and what was expected, before any log is read or anything written.

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_monitor_flags(parser)
>>> options = monitor_options(parser.parse_args(["--window", "cumulative", "--window", "timed:1h", "--arl", "1e8",
...                                              "--no-detect", "--shift-alpha", "0.001"]), parser)
>>> [w.name for w in options["windows"]], options["detector"].arl, options["detector"].enabled
(['cumulative', 'timed_3600s'], 100000000.0, False)
>>> options["policy"].shift_alpha
0.001
"""

from __future__ import annotations

import argparse
from typing import Any

from streammon.serve import settings

DEST = "knob__{owner}__{name}"  # the namespace attribute of a knob (owner and field: no clash between the two)


def add_monitor_flags(parser: argparse.ArgumentParser) -> None:
    """``--window`` (repeatable) and one flag per field of ``DetectorSettings`` and ``Policy``, in groups."""
    windows = parser.add_argument_group("windows")
    windows.add_argument("--window", action="append", metavar="SPEC", dest="knob_windows",
                         help=f"a window to keep, repeatable: {settings.WINDOWS}; reported as cumulative, "
                              "sliding_N, timed_SECONDSs (default: cumulative, sliding:1000, sliding:10000, and "
                              "timed:1h with --time)")
    titles = {"DetectorSettings": "degradation detector (streammon.DetectorSettings)",
              "Policy": "policy: flags and prior shift (streammon.Policy)"}
    for owner in settings.OWNERS:
        group = parser.add_argument_group(titles.get(owner.__name__, owner.__name__))
        for knob in settings.knobs(owner):
            dest = DEST.format(owner=owner.__name__, name=knob.name)
            if knob.kind == "bool":
                group.add_argument(knob.flag, dest=dest, action=argparse.BooleanOptionalAction, default=None,
                                   help=knob.describe)
            else:
                group.add_argument(knob.flag, dest=dest, metavar=knob.help.metavar, default=None,
                                   type=_parsed(knob), help=knob.describe)


def monitor_options(args: argparse.Namespace, parser: argparse.ArgumentParser) -> dict[str, Any]:
    """``windows``, ``detector`` and ``policy`` from the flags given (None where none was): the ``Monitor``
    keywords. A value out of range ends in ``parser.error`` naming its flag (status 2)."""
    options: dict[str, Any] = {"windows": None}
    specs = getattr(args, "knob_windows", None)
    if specs:
        try:
            options["windows"] = [settings.window_of(spec, "argument --window") for spec in specs]
        except ValueError as exc:
            parser.error(str(exc))
        names = [w.name for w in options["windows"]]
        if len(set(names)) != len(names):
            parser.error(f"argument --window: the windows' names must be unique, got {names}")
    for owner in settings.OWNERS:
        key = "detector" if owner.__name__ == "DetectorSettings" else owner.__name__.lower()
        flags = {k.name: k.flag for k in settings.knobs(owner)}
        given = {name: value for name in flags
                 if (value := getattr(args, DEST.format(owner=owner.__name__, name=name), None)) is not None}
        options[key] = None
        if given:
            try:
                options[key] = settings.build(owner, given)
            except settings.SettingError as exc:
                where = f"argument {flags[exc.field]}" if exc.field in flags else owner.__name__
                parser.error(f"{where}: {exc.problem}")
    return options


def _parsed(knob: settings.Knob) -> Any:
    """argparse's ``type=`` for a knob: its value, or an ``ArgumentTypeError`` saying what was expected."""
    def parse(text: str) -> Any:
        try:
            return knob.from_text(text)
        except settings.SettingError as exc:
            raise argparse.ArgumentTypeError(exc.problem) from None
    parse.__name__ = knob.name  # argparse names the type in some messages
    return parse
