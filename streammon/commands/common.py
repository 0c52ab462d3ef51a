"""What the subcommands share: one-line errors with exit status 2, argument types, the alert log."""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (with where to find help) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} -h')\n")

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        """As argparse's, but an unknown flag of a subcommand is reported by that subcommand, pointing to its own
        help (``streammon replay -h``, not ``streammon -h``)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            chosen = next((action.choices.get(str(getattr(parsed, action.dest, "")))
                           for action in self._actions if isinstance(action, argparse._SubParsersAction)), None)
            (chosen if isinstance(chosen, argparse.ArgumentParser) else self).error(
                f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def fail(command: str, message: str) -> int:
    """One line on stderr, status 2: what went wrong and what to do."""
    sys.stderr.write(f"streammon {command}: error: {message}\n")
    return 2


def port_number(text: str) -> int:
    """A TCP port: 0 (any free one) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 (any free port) to 65535, got {port}")
    return port


def share(text: str) -> float:
    """A number in [0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}")
    return value


def positive(upper: float = math.inf) -> Callable[[str], float]:
    """A finite number > 0 (and <= ``upper``)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
        if not (math.isfinite(value) and 0 < value <= upper):
            limit = "" if math.isinf(upper) else f" and at most {upper:g}"
            raise argparse.ArgumentTypeError(f"expected a finite number > 0{limit}, got {text!r}")
        return value
    return parse


def printable(text: str) -> str:
    """``text`` for a terminal: characters that are not printable (controls such as ESC, NUL and line breaks,
    bidi overrides, U+2028) as Python escapes, so that no label or name can move the cursor, recolour the
    terminal or forge a line (``streammon.counting.user_text``).

    >>> printable("fraud"), printable("a\\nALERT \\x1b[31m\\u202e")
    ('fraud', 'a\\\\nALERT \\\\x1b[31m\\\\u202e')
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


class _PrintableFormatter(logging.Formatter):
    """A log line whose message is ``printable``."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = printable(record.message)
        return super().formatMessage(record)


@contextlib.contextmanager
def alert_log(*, to_stderr: bool) -> Iterator[None]:
    """While inside: alerts raised and cleared go to stderr with a time stamp (``to_stderr``), or nowhere."""
    log = logging.getLogger("streammon.alerts")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_PrintableFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    level, disabled = log.level, log.disabled
    if to_stderr:
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    else:
        log.disabled = True
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        log.disabled = disabled


