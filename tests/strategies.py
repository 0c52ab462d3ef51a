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
