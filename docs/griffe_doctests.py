"""A griffe extension for the API reference: the ``>>>`` examples of a docstring render as code.

streammon's docstrings hold doctests in their prose (pytest runs them with ``--doctest-modules``); Markdown would
read each ``>>>`` line as a nested quotation. This wraps every run of example lines (from a ``>>>`` line to the
next blank line) in a ``pycon`` fence before mkdocstrings renders the docstring.
"""

from __future__ import annotations

from typing import Any

import griffe


def fence_examples(text: str) -> str:
    """The docstring with each block of ``>>>`` examples and their output fenced as ``pycon``."""
    out: list[str] = []
    inside = False
    indent = ""
    for line in text.splitlines():
        stripped = line.lstrip()
        if not inside and stripped.startswith(">>>"):
            inside = True
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
        elif inside and not stripped:
            out.append(f"{indent}```")
            inside = False
        out.append(line)
    if inside:
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fence the doctest examples of every docstring griffe loads."""

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_examples(obj.docstring.value)
