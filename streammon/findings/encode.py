"""The JSON rules of ``to_dict``: numbers, labels as keys, labels as values.

- **Numbers.** A finite float is itself; NaN (undefined, e.g. the recall of a
  class absent from the window) becomes ``None`` (JSON ``null``); +inf and -inf
  (e.g. RRT when the minority class is absent) become the strings
  ``"Infinity"`` and ``"-Infinity"``, which ``float()`` in Python and
  ``Number()`` in JavaScript read back. The result always passes
  ``json.dumps(..., allow_nan=False)``.
- **Labels as keys.** A class is keyed by ``str(label)``: unique, because streammon
  refuses two classes with the same text (``1`` and ``"1"``: they would be one
  Prometheus label value too; see ``streammon.counting.counts.check_label``).
- **Labels as values.** ``labels`` lists every class in index order as
  ``{"key": ..., "value": ..., "type": ...}``: ``value`` is the label itself
  when it is a ``str``, ``int``, ``bool`` or ``float`` (a float by the number
  rule above), else ``str(label)``; ``type`` is its Python type name, so that
  ``1``, ``1.5``, ``True`` and ``"1"`` can be told apart.

>>> label_keys([1, "fraud"])
{1: '1', 'fraud': 'fraud'}
>>> label_entries([True, 7], label_keys([True, 7]))
[{'key': 'True', 'value': True, 'type': 'bool'}, {'key': '7', 'value': 7, 'type': 'int'}]
>>> [json_float(x) for x in (0.25, float("nan"), float("inf"), -float("inf"))]
[0.25, None, 'Infinity', '-Infinity']
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from streammon.counting.counts import ConfusionCounts

JsonFloat = float | str | None


def json_float(x: float) -> JsonFloat:
    """A float as JSON-ready data: itself, ``None`` for NaN, ``"Infinity"``/``"-Infinity"``."""
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def label_keys(labels: Sequence[Hashable]) -> dict[Hashable, str]:
    """The JSON object key of each label: ``str(label)`` (distinct for the labels streammon accepts)."""
    keys = {label: str(label) for label in labels}
    if len(set(keys.values())) != len(keys):
        raise ValueError(f"labels {list(labels)!r} share a text: they cannot be JSON keys")
    return keys


def label_value(label: Hashable) -> Any:
    """A label as a JSON value (itself for str, int, bool, float; else its text)."""
    if isinstance(label, float):
        return json_float(label)
    if isinstance(label, (str, int)):  # bool is an int
        return label
    return str(label)


def label_entries(labels: Sequence[Hashable], keys: Mapping[Hashable, str]) -> list[dict[str, Any]]:
    """``labels`` as ``[{"key", "value", "type"}, ...]``."""
    return [{"key": keys[label], "value": label_value(label), "type": type(label).__name__} for label in labels]


def by_label(mapping: Mapping[Hashable, Any], keys: Mapping[Hashable, str],
             convert: Callable[[Any], Any] = json_float) -> dict[str, Any]:
    """A label-keyed mapping with JSON keys and converted values."""
    return {keys[label]: convert(value) for label, value in mapping.items()}


def floats(mapping: Mapping[str, float]) -> dict[str, JsonFloat]:
    """A name-keyed mapping of floats, JSON-ready."""
    return {name: json_float(value) for name, value in mapping.items()}


def pair(interval: Iterable[float]) -> list[JsonFloat]:
    """An interval ``(low, high)`` as ``[low, high]``."""
    return [json_float(x) for x in interval]


def matrix(counts: ConfusionCounts, labels: Sequence[Hashable]) -> list[list[int]]:
    """K×K counts as rows (true class) of columns (predicted class), both in the order of ``labels``."""
    cells = counts.cells()
    return [[cells.get((t, p), 0) for p in labels] for t in labels]
