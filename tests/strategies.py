"""Hypothesis strategies shared by the tests (one module, as STYLE.md asks)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


@st.composite
def confusion_matrices(draw: st.DrawFn, *, k_min: int = 2, k_max: int = 6, all_present: bool = True,
                       max_count: int = 60) -> np.ndarray:
    """A K×K integer confusion matrix; with ``all_present`` every class has a true sample."""
    k = draw(st.integers(k_min, k_max))
    m = draw(hnp.arrays(np.int64, (k, k), elements=st.integers(0, max_count)))
    if all_present:
        empty = m.sum(axis=1) == 0
        m[empty, np.flatnonzero(empty)] = 1  # one correct sample for any empty row
    return m


def row_scales(k: int) -> st.SearchStrategy[list[float]]:
    """Positive factors for rescaling the rows of a K×K matrix (Condition 1)."""
    return st.lists(st.floats(0.05, 20.0, allow_nan=False), min_size=k, max_size=k)


LABEL_POOLS = {
    "str": ["legit", "fraud", "spam", "ham", "review"],
    "int": [0, 1, 2, 3, 4],
    "bool": [False, True],
}


@st.composite
def label_streams(draw: st.DrawFn, *, max_size: int = 300) -> tuple[list[object], list[object]]:
    """Two equal-length label lists drawn from one pool (str, int or bool)."""
    pool = LABEL_POOLS[draw(st.sampled_from(sorted(LABEL_POOLS)))]
    k = draw(st.integers(1, len(pool)))
    size = draw(st.integers(0, max_size))
    labels = st.sampled_from(pool[:k])
    truth = draw(st.lists(labels, min_size=size, max_size=size))
    preds = draw(st.lists(labels, min_size=size, max_size=size))
    return truth, preds


def hostile_labels() -> st.SearchStrategy[object]:
    """Labels that stress the report, the exposition and the state file: huge ints, lone surrogates,
    NaN-likes of every numeric type, infinities, very long strings, bytes, tuples, None, scores."""
    from decimal import Decimal
    from fractions import Fraction

    nan_likes = st.sampled_from([float("nan"), np.float32("nan"), np.float64("nan"), Decimal("NaN"),
                                 Decimal("sNaN"), complex("nan"), complex(0, float("nan")), None])
    return st.one_of(
        nan_likes,
        st.sampled_from([float("inf"), -float("inf"), np.inf, Decimal("Infinity"), 10**5000, -(10**400),
                         2**63, -(2**63), Fraction(10**400), "\udc80", "\ud800x", "", "x" * 257,
                         "é" * 70_000, b"a", ("a", 1), (), frozenset({1}), 0.73, np.float64(0.5), 1 + 2j]),
        st.integers(min_value=2**63, max_value=2**70) | st.integers(min_value=-(2**70), max_value=-(2**63)),
        st.floats().filter(lambda x: not math.isfinite(x) or x != math.floor(x) or abs(x) >= 2**63),
        st.text(min_size=257, max_size=400),
        st.binary(min_size=1, max_size=4),
        st.tuples(st.integers(), st.text(max_size=2)),
    )


SHORT_KEYS: tuple[object, ...] = ("a", "b", "c", "d", "e", 1, 2, 3, "1")
# keys whose accounted sizes differ widely (streammon.pending.memory.key_bytes): short, long, non-ASCII, the longest
SIZED_KEYS: tuple[object, ...] = ("a", "b", 7, 2**62, "1", "k" * 300, "é" * 100, "\U0001f600" * 200, "z" * 512,
                                  "ü" * 512)


@st.composite
def label_events(draw: st.DrawFn, *, max_events: int = 60, pool: tuple[object, ...] = SHORT_KEYS
                 ) -> list[tuple[str, list[object], list[str], float]]:
    """Interleaved predict/label calls: ``(kind, keys, labels, time gap)``, kind ``predict``/``label``
    (one key) or ``predict_many``/``label_many`` (a few), or ``reload`` (save and load the monitor).
    Keys come from a small pool of str and int ids (``pool``), so repeats, duplicates and orphans are common."""
    keys = st.sampled_from(pool)
    classes = st.sampled_from(["x", "y", "z"])
    events = []
    for _ in range(draw(st.integers(0, max_events))):
        kind = draw(st.sampled_from(["predict", "label", "predict_many", "label_many", "reload"]))
        size = 1 if kind in ("predict", "label") else draw(st.integers(0, 4))
        events.append((kind, [draw(keys) for _ in range(size)], [draw(classes) for _ in range(size)],
                       draw(st.sampled_from([0.0, 0.5, 1.0, 3.0]))))
    return events


def exposition_labels() -> st.SearchStrategy[list[object]]:
    """2 to 4 class labels every stage accepts that stress the exposition: quotes, backslashes, newlines, braces
    and commas, unicode (astral too), NULs (trailing ones too, which numpy's fixed-width str arrays would
    drop), 256-character strings, the largest ints, bools — one kind a list."""
    tricky = st.text(alphabet=st.sampled_from(['"', "\\", "\n", "n", "a", "é", "☕", "\U0001f600", "\r",
                                               "{", "}", "=", ",", " ", "#", "\x00"]), min_size=1, max_size=12)
    long = st.text(min_size=1, max_size=256)
    strings = st.lists(tricky | long, min_size=2, max_size=4, unique=True)
    ints = st.lists(st.integers(-(2**63) + 1, 2**63 - 1), min_size=2, max_size=4, unique=True)
    return st.one_of(strings, ints, st.just([False, True]))


@st.composite
def mostly_zero_matrices(draw: st.DrawFn, *, side_max: int = 40) -> np.ndarray:
    """A square int64 count matrix, mostly zeros (a few cells up to 2⁵³), as a state file's windows hold."""
    side = draw(st.integers(1, side_max))
    m = np.zeros((side, side), np.int64)
    cells = draw(st.dictionaries(st.integers(0, side * side - 1), st.integers(1, 2**53), max_size=30))
    for cell, count in cells.items():
        m.flat[cell] = count
    return m


# Strings that have broken, or could break, an output: markup the HTML parser's script-data states or Plotly's
# pseudo-HTML would act on, entities, quotes and escapes, template syntax, bidi and line-separator controls, NUL,
# a lone surrogate, the length limit and one past it, astral characters (see streammon.counting.user_text).
HOSTILE_STRINGS = (
    "<!--<script>", "</script>", "</SCRIPT >x", '<a href="https://evil">x</a>', "<b></b>fraud",
    '<span style="color:red">fraud</span>', "<br>", "<sub>2</sub>", "&lt;", "&amp;lt;", "&#60;b&#62;", '"',
    "'", "\\", "\\n", "\n", "a\r\nb", "{}", "%s", "%{x}", "${x}", "{{ $labels.model }}", "$x^2$", "\u202eevil",
    "x\u2028y\u2029", "\x00", "a\x00", "\ufeff", "\ud800", "x\udc80", "", "y" * 256, "z" * 257, "🙂", "👩‍👩‍👧",
    "__proto__", "constructor", " ", "-->", "]]>",
)


def user_strings() -> st.SearchStrategy[str]:
    """A string as a class label, window or model name might be: one of ``HOSTILE_STRINGS``, text over an
    alphabet of markup and escapes (lone surrogates included), or any text up to just past the length limit."""
    pieces = st.sampled_from(["<", ">", "&", "/", "!", "-", '"', "'", "=", "\\", "\n", "\x00", "\u2028", "\u202e",
                              "a", "b", "script", "style", "\ud800", "\U0001f600"])
    markup = st.lists(pieces, max_size=12).map("".join)
    anything = st.text(alphabet=st.characters(exclude_categories=()), max_size=260)
    return st.one_of(st.sampled_from(HOSTILE_STRINGS), markup, anything)


def client_keys() -> st.SearchStrategy[object]:
    """Prediction keys good and bad: text up to past the 512-character limit (lone surrogates too), ints around
    the int64 bounds, bools, floats, NumPy scalars, bytes, None and the hostile labels."""
    bounds = st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, np.int64(7), np.uint64(2**64 - 1),
                              np.str_("k"), np.bool_(True), "\ud800", "", "x" * 512, "x" * 513, b"k", None, 1.0])
    return st.one_of(bounds, st.text(max_size=600), st.integers(), st.booleans(), st.floats(), hostile_labels())
