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

import orjson
from prometheus_client.utils import floatToGoString

from streammon.export.families import Family
from streammon.export.series import bucket_rows

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
        self._families: dict[str, tuple[str, tuple[int, ...], list[str]]] = {
            name: (template, order, []) for name, template, order in _templates(tuple(families))}
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
        self.add_series(family, bucket_rows(tuple(labels), tuple(le for le, _ in buckets)),
                        [count for _, count in buckets])

    def add_series(self, family: str, rows: tuple[tuple[str, ...], ...], values: Sequence[float]) -> None:
        """One line per ``(row, value)``: each row's text up to the value formatted once and kept (``_prefixes``);
        the values go into the joined lines in one ``%`` when all are plain (finite, below 10⁶: ``repr``)."""
        template, order, lines = self._families[family]
        prefixes, joined = _prefixes(template, order, rows)
        numbers = list(map(float, values))
        if len(numbers) != len(prefixes):
            raise ValueError(f"{family}: {len(numbers)} values for {len(prefixes)} series")
        if not numbers:
            return
        total = sum(numbers)  # NaN or ±inf when any value is
        if -math.inf < total < math.inf and max(numbers) < 1e6:
            lines.append(joined % tuple(plain_reprs(numbers)))
        else:
            go = go_float
            lines.append("".join([prefix + go(number) + "\n"
                                  for prefix, number in zip(prefixes, numbers, strict=True)]))

    def pieces(self) -> dict[str, str]:
        """Each family's lines, joined (``""`` for a family without samples)."""
        return {name: "".join(lines) for name, (_, _, lines) in self._families.items()}


# (id(rows), template) -> rows, the prefixes, the lines joined with a %s for each value
_PREFIXES: dict[tuple[int, str], tuple[tuple[tuple[str, ...], ...], tuple[str, ...], str]] = {}
_KEPT_PREFIXES = 65536  # series (a window has ~12): about the size of the exposition itself


def _prefixes(template: str, order: tuple[int, ...], rows: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], str]:
    """Each row's sample line up to its value (the template filled with the escaped labels, less ``%s\\n``), and
    all of them joined into one ``%`` template: what stays the same from scrape to scrape for the series of one
    window or model. Kept by the identity of ``rows`` (the builders pass the same tuple while the series stay:
    hashing it would cost more than the lines)."""
    key = (id(rows), template)
    kept = _PREFIXES.get(key)
    if kept is not None and kept[0] is rows:
        return kept[1], kept[2]
    head = template[:-3]  # the template ends with "%s\n"
    prefixes = tuple(head % tuple(escape(row[i]) for i in order) for row in rows)
    joined = "".join(prefix.replace("%", "%%") + "%s\n" for prefix in prefixes)
    if len(_PREFIXES) >= _KEPT_PREFIXES:
        _PREFIXES.clear()
    _PREFIXES[key] = (rows, prefixes, joined)  # (holding rows keeps its id from being reused)
    return prefixes, joined


def plain_reprs(numbers: list[float]) -> list[str]:
    """``repr`` of each of ``numbers`` (finite, below 10⁶), in bulk: orjson writes the same shortest round-trip
    digits as ``repr`` (tests/test_scrape_text.py checks it on random floats) without a Python call per number,
    but positionally where Python writes an exponent (below 10⁻⁴); those few get ``repr``.

    >>> plain_reprs([0.25, 3.0, 1e-05, 0.0001, -2.5e-300])
    ['0.25', '3.0', '1e-05', '0.0001', '-2.5e-300']
    """
    written = orjson.dumps(numbers).decode()[1:-1]
    texts = written.split(",")
    if "e" in written or "0.0000" in written:  # an exponent, or maybe a number below 1e-4 written positionally
        return [repr(x) if "e" in text or 0 < abs(x) < 1e-4 else text for x, text in zip(numbers, texts, strict=True)]
    return texts


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


@functools.lru_cache(maxsize=64)
def _templates(families: tuple[Family, ...]) -> tuple[tuple[str, str, tuple[int, ...]], ...]:
    """Each family's name, line template and label order (a histogram's lines also carry ``le``)."""
    out = []
    for family in families:
        labels = (*family.labels, "le") if family.kind == "histogram" else family.labels
        out.append((family.name, *_template(family.sample_name, labels)))
    return tuple(out)


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
