"""The one rule for user strings: what is accepted at input comes back exactly, and inert, from every output.

User strings are the ``str`` class labels, window names (``Window(name=...)``), model names
(``MonitorCollector``/``serve``) and the texts given to the HTML report (``title``, ``marks``).
``tests/test_user_strings.py`` runs hostile strings (``tests/strategies.py``) through every output below.
Each is checked once, where it enters, by ``check_text``: a ``str`` of 1 to ``MAX_TEXT_LENGTH`` (256)
characters that is valid Unicode (no lone surrogate, which no UTF-8 output can carry). Anything else
is refused there with a ``TypeError`` (not a str) or ``ValueError`` naming the thing (label, window
name, model name, ...) and the value; nothing has changed. Any other character is accepted —
markup, quotes, backslashes, newlines, NUL, bidi controls, U+2028/2029, emoji — and each output
escapes it at one place:

- Prometheus text and OpenMetrics: ``\\``, ``"`` and newline escaped in label values
  (``streammon.export.text.escape``; parsed back, the value is the input).
- JSON (``Report.to_dict``, the timeline, the state file): ``json`` escapes quotes, backslashes and
  control characters.
- Parquet: UTF-8 string columns.
- HTML report text: ``html.escape`` (``&``, ``<``, ``>``, quotes). HTML itself cannot carry NUL (its parser
  drops it) and reads CR/CRLF as LF: there the figures' data and the JSON outputs keep the exact string.
- Data inlined in the report's ``<script>``: JSON, ASCII only, with ``<``, ``>`` and ``&`` written as
  ``\\u003c``, ``\\u003e``, ``\\u0026`` (``streammon.logs.report_page.script_json``): no sequence can end
  or comment the script, and U+2028/2029 are ``\\u`` escapes too.
- Text drawn by Plotly (titles, legends, axis categories, hover text, annotations): ``&``, ``<``,
  ``>`` as entities (``streammon.logs.report_figures.plain``), so Plotly's pseudo-HTML (``<a>``,
  ``<b>``, ``<span style>``, ``<br>``, entities) shows the string as text.
- Terminal text (``streammon report``, the demo's view, alerts logged by the CLI): characters that are not
  printable (ESC, NUL, line breaks, bidi overrides) as Python escapes (``streammon.commands.common.printable``).
- File names: no output file is named after a user string; temporary files get random names
  (``streammon.atomic``).

>>> check_text("fraud <b>", "window name")
'fraud <b>'
>>> check_text("a\\ud800", "model name")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: model name 'a\\ud800' holds a lone surrogate: it is not valid Unicode and cannot be exported ...
>>> check_text(3, "window name")
Traceback (most recent call last):
...
TypeError: window name 3 (int) is not a str: expected a str of 1 to 256 characters
"""

from __future__ import annotations

import unicodedata
from typing import Any

MAX_TEXT_LENGTH = 256  # characters of a label or a name (counts.MAX_LABEL_LENGTH): a name, not a document


def _short(value: Any) -> str:
    if isinstance(value, str) and len(value) > 40:
        return f"{value[:40]!r}… ({len(value)} characters)"
    text = repr(value) if isinstance(value, (str, int, float, bool, type(None))) else f"<{type(value).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


def check_text(text: Any, what: str) -> str:
    """``text`` as a plain ``str`` if the rule above accepts it as a ``what`` (e.g. ``"window name"``), else raise.

    A ``str`` subclass comes back as its ``str`` value.

    >>> check_text("", "window name")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: window name '' has 0 characters: a str window name must have 1 to 256 ...
    """
    if not isinstance(text, str):
        raise TypeError(f"{what} {_short(text)} ({type(text).__name__}) is not a str: expected a str of 1 to "
                        f"{MAX_TEXT_LENGTH} characters")
    plain: str = text if type(text) is str else str.__str__(text)
    if not 0 < len(plain) <= MAX_TEXT_LENGTH:
        raise ValueError(f"{what} {_short(plain)} has {len(plain)} characters: a str {what} must have 1 to "
                         f"{MAX_TEXT_LENGTH} (streammon.counting.counts.MAX_LABEL_LENGTH)")
    if not plain.isprintable() and any(unicodedata.category(c) == "Cs" for c in plain):
        raise ValueError(f"{what} {_short(plain)} holds a lone surrogate: it is not valid Unicode and cannot be "
                         "exported or saved as UTF-8")
    return plain
