r"""The exposition written directly: the collector's families as Prometheus text (0.0.4) or OpenMetrics (1.0.0).

``prometheus_client.generate_latest`` formats every sample of every scrape again (about 5 µs a sample).
Here each model's samples are formatted once into text, one piece per family (``Lines``, a sink of
``streammon.export.families.write_model``); ``document`` joins the pieces of every model under each family's
``# HELP``/``# TYPE`` header. A model whose report exports what it did at the last scrape keeps its pieces, so a
scrape formats only the models that changed.

The output is byte for byte what prometheus_client writes for the same families (the tests compare with
``generate_latest`` and OpenMetrics ``generate_latest``): labels sorted by name; backslash, double quote and
newline escaped in label values; values as ``floatToGoString`` (``NaN``, ``+Inf``, ``-Inf``); a counter's header
named ``<name>_total`` in the text format and ``<name>`` in OpenMetrics, its samples ``<name>_total`` in both (no
``_created``); the histogram's ``_bucket`` samples only. The sample lines are the same in both formats: only the
headers differ, and OpenMetrics ends with ``# EOF``. Every metric and label name here is a legacy Prometheus
name, which no escaping scheme but ``dots`` and ``values`` changes (``streammon.export.server`` leaves those
to prometheus_client).

>>> from streammon.export.families import Family
>>> family = Family("demo_seen", "counter", ("model", "class"), "Seen.")
>>> lines = Lines([family])
>>> lines.add("demo_seen", ["m", 'say "hi"\n'], 3)
>>> print(document([family], [lines.pieces()], openmetrics=False).decode(), end="")
# HELP demo_seen_total Seen.
# TYPE demo_seen_total counter
demo_seen_total{class="say \"hi\"\n",model="m"} 3.0
>>> print(document([family], [lines.pieces()], openmetrics=True).decode(), end="")
# HELP demo_seen Seen.
# TYPE demo_seen counter
demo_seen_total{class="say \"hi\"\n",model="m"} 3.0
# EOF
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import cast

from prometheus_client.utils import floatToGoString

from streammon.export.families import Family

_go_float = cast(Callable[[float], str], floatToGoString)  # untyped upstream


class Lines:
    """A sink writing each sample as its exposition line, per family; ``pieces()`` joins each family's lines.

    >>> from streammon.export.families import Family
    >>> lines = Lines([Family("demo_latency", "histogram", ("model",), "Latency.")])
    >>> lines.add_buckets("demo_latency", ["m"], [("1.0", 2.0), ("+Inf", 3.0)])
    >>> print(lines.pieces()["demo_latency"], end="")
    demo_latency_bucket{le="1.0",model="m"} 2.0
    demo_latency_bucket{le="+Inf",model="m"} 3.0
    """

    def __init__(self, families: Iterable[Family]) -> None:
        # family name -> its line template, the positions of its labels in sorted order, its lines
        self._families: dict[str, tuple[str, tuple[int, ...], list[str]]] = {}
        for family in families:
            labels = (*family.labels, "le") if family.kind == "histogram" else family.labels
            self._families[family.name] = (*_template(family.sample_name, labels), [])
        self._escaped: dict[str, str] = {}  # label value -> escaped (a model repeats few distinct values)

    def add(self, family: str, labels: Sequence[str], value: float) -> None:
        """One sample line."""
        template, order, lines = self._families[family]
        escaped = self._escaped
        try:
            fields = [escaped[labels[i]] for i in order]
        except KeyError:
            for label in labels:
                if label not in escaped:
                    escaped[label] = escape(label)
            fields = [escaped[labels[i]] for i in order]
        number = float(value)
        # floatToGoString is repr below 10⁶ (no exponent yet; NaN fails the test): see go_float
        fields.append(repr(number) if -math.inf < number < 1e6 else _go_float(number))
        lines.append(template % tuple(fields))

    def add_buckets(self, family: str, labels: Sequence[str], buckets: Sequence[tuple[str, float]]) -> None:
        """One ``_bucket`` line per ``(le, count)``."""
        for le, count in buckets:
            self.add(family, [*labels, le], count)

    def add_series(self, family: str, rows: tuple[tuple[str, ...], ...], values: Sequence[float]) -> None:
        """One line per ``(row, value)``: each row's text up to the value formatted once and kept (``_prefixes``)."""
        template, order, lines = self._families[family]
        prefixes = _prefixes(template, order, rows)
        lines.append("".join([prefix + (repr(number) if -math.inf < number < 1e6 else _go_float(number)) + "\n"
                              for prefix, number in zip(prefixes, map(float, values), strict=True)]))

    def pieces(self) -> dict[str, str]:
        """Each family's lines, joined (``""`` for a family without samples)."""
        return {name: "".join(lines) for name, (_, _, lines) in self._families.items()}


@functools.lru_cache(maxsize=4096)
def _prefixes(template: str, order: tuple[int, ...], rows: tuple[tuple[str, ...], ...]) -> tuple[str, ...]:
    """Each row's sample line up to its value (the template filled with the escaped labels, less ``%s\\n``): what
    stays the same from scrape to scrape for the series of one window or model."""
    head = template[:-3]  # the template ends with "%s\n"
    return tuple(head % tuple(escape(row[i]) for i in order) for row in rows)


def go_float(value: float) -> str:
    """``floatToGoString(value)``: Python's ``repr`` below 10⁶ (``NaN`` and infinities, and the exponent form Go
    writes from 10⁶ on, are prometheus_client's own).

    >>> go_float(0.25), go_float(-3), go_float(float("nan")), go_float(float("-inf")), go_float(1234567)
    ('0.25', '-3.0', 'NaN', '-Inf', '1.234567e+06')
    """
    number = float(value)
    if -math.inf < number < 1e6:  # floatToGoString is repr here: no exponent before 10⁶ (NaN fails the test)
        return repr(number)
    return _go_float(number)


def escape(value: str) -> str:
    r"""A label value as the exposition writes it: backslash, newline and double quote escaped.

    >>> print(escape('a\\b "c"\nd'))
    a\\b \"c\"\nd
    """
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _template(sample_name: str, labels: Sequence[str]) -> tuple[str, tuple[int, ...]]:
    """A ``%`` template of one family's sample line and the label positions in its (sorted) order."""
    order = tuple(sorted(range(len(labels)), key=lambda i: labels[i]))
    if not order:
        return f"{sample_name} %s\n", ()
    inner = ",".join(f'{labels[i]}="%s"' for i in order)
    return f"{sample_name}{{{inner}}} %s\n", order


def header(family: Family, *, openmetrics: bool) -> str:
    r"""The ``# HELP`` and ``# TYPE`` lines of a family.

    >>> from streammon.export.families import Family
    >>> print(header(Family("demo_seen", "counter", ("model",), 'Seen "here".'), openmetrics=False), end="")
    # HELP demo_seen_total Seen "here".
    # TYPE demo_seen_total counter
    >>> print(header(Family("demo_seen", "counter", ("model",), 'Seen "here".'), openmetrics=True), end="")
    # HELP demo_seen Seen \"here\".
    # TYPE demo_seen counter
    """
    if openmetrics:
        return f"# HELP {family.name} {escape(family.help)}\n# TYPE {family.name} {family.kind}\n"
    name = f"{family.name}_total" if family.kind == "counter" else family.name
    text = family.help.replace("\\", "\\\\").replace("\n", "\\n")
    return f"# HELP {name} {text}\n# TYPE {name} {family.kind}\n"


def document(families: Sequence[Family], per_model: Iterable[Mapping[str, str]], *, openmetrics: bool) -> bytes:
    """The exposition of ``families``: under each family's header, its piece of every model in turn."""
    models = list(per_model)
    parts = []
    for family in families:
        parts.append(header(family, openmetrics=openmetrics))
        parts.extend(pieces[family.name] for pieces in models)
    if openmetrics:
        parts.append("# EOF\n")
    return "".join(parts).encode("utf-8")
