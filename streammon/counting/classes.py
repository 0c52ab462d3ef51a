"""Class labels and the class index: which values can be classes, and their indices.

Labels are what every later stage can carry — the report, the Prometheus
exposition and the JSON state file: ``str`` (1 to ``MAX_LABEL_LENGTH`` characters,
no lone surrogates), ``int`` within ``±LABEL_INT_BOUND`` (int64)
and ``bool``. A float label that is a whole number (``1.0``, as pandas gives an integer
column with gaps) is the ``int``; any other float is refused (a score is not a class:
threshold it first). NumPy scalars are stored as the equivalent Python value. Labels
are compared like dict keys, so ``1``, ``1.0``, ``True`` and ``numpy.int64(1)`` are
the same class. Missing values (``None``, NaN, ``pandas.NA``, ``NaT``) are not classes.
Labels follow the rule for every user string, and window and model names too:
``streammon.counting.user_text``.

>>> check_label(1.0), check_label("fraud")
(1, 'fraud')
>>> ClassIndex(["legit", "fraud"]).ids["fraud"]
1
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from streammon.counting.user_text import MAX_TEXT_LENGTH, check_text

DEFAULT_MAX_CLASSES = 256
HARD_MAX_CLASSES = 46_340  # cell ids i*S+j must fit in int32


MAX_LABEL_LENGTH = MAX_TEXT_LENGTH  # characters of a str label: one class name, not a document
LABEL_INT_BOUND = 2**63  # int labels fit in int64: |label| < 2**63
SCORE_HINT = "looks like a score: threshold it first (e.g. y_pred = score >= 0.5) or pass the class labels"
_MISSING_TYPES = {"NAType", "NaTType", "NoneType"}  # pandas.NA, pandas.NaT (no pandas import)


def show(value: Any) -> str:
    """A short, always-computable repr of a value for an error message."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"<an int of {value.bit_length()} bits>"
    if isinstance(value, str) and len(value) > 40:
        return f"{value[:40]!r}… ({len(value)} characters)"
    try:
        text = repr(value)
    except Exception:  # a repr that fails must not hide the real error
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


def is_missing(value: Any) -> bool:
    """True for None, NaN of any numeric type, ``pandas.NA`` and ``NaT`` (no pandas import).

    >>> is_missing(None), is_missing(float("nan")), is_missing(complex("nan")), is_missing(0)
    (True, True, True, False)
    """
    if type(value).__name__ in _MISSING_TYPES:
        return True
    try:
        return bool(value != value)  # noqa: PLR0124 (NaN of any type, NaT)
    except Exception:  # pandas.NA's truth is ambiguous; a signalling Decimal NaN refuses to compare
        return type(value).__name__ == "Decimal" and value.is_nan()


def check_label(label: Any) -> Hashable:
    """Validate one class label and return its canonical form (see the module docstring).

    >>> check_label(np.int64(3)), check_label("fraud"), check_label(1.0)
    (3, 'fraud', 1)
    >>> check_label(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: label nan is missing (None, NaN, NA or NaT): drop missing labels before counting, nothing was counted
    >>> check_label(0.73)
    Traceback (most recent call last):
    ...
    ValueError: label 0.73 is a float that is not a whole number: it looks like a score: threshold it first ...
    >>> check_label([1])
    Traceback (most recent call last):
    ...
    TypeError: label [1] (list) is not a class label: expected a str, int or bool ...
    """
    if isinstance(label, np.generic):
        label = label.item()
    if isinstance(label, str):
        return check_text(label, "label")  # a str subclass (np.str_, StrEnum) is saved as its str
    if isinstance(label, bool):
        return bool(label)
    if isinstance(label, int):
        if not -LABEL_INT_BOUND < label < LABEL_INT_BOUND:
            raise ValueError(f"label {show(label)} is out of range: int labels must be within ±2**63 (int64)")
        return int(label)
    if isinstance(label, float) and math.isfinite(label):
        if label != math.floor(label):
            raise ValueError(f"label {label!r} is a float that is not a whole number: it {SCORE_HINT}")
        return check_label(int(label))
    if is_missing(label):
        raise ValueError(
            f"label {show(label)} is missing (None, NaN, NA or NaT): drop missing labels before counting, "
            "nothing was counted"
        )
    if isinstance(label, float):
        raise ValueError(f"label {label!r} is not a class: expected a finite whole number, a str or a bool")
    raise TypeError(
        f"label {show(label)} ({type(label).__name__}) is not a class label: expected a str, int or bool "
        "(what the report, the Prometheus exposition and the state file can carry)"
        + ("; decode bytes to str first" if isinstance(label, bytes) else "")
    )


def label_kind(label: Any) -> str:
    """``'str'`` or ``'int'`` (bool and whole floats are ints, as classes), else the type name."""
    if isinstance(label, (str, np.str_)):
        return "str"
    if isinstance(label, (int, float, np.integer, np.floating)):
        return "int"
    return type(label).__name__  # (mutation testing: equivalent, labels of other types are refused before)


class ClassIndex:
    """Maps labels to row/column indices in first-seen order, up to ``max_classes``.

    >>> idx = ClassIndex(max_classes=3)
    >>> idx.register(["b", "a", "b"])
    >>> idx.labels, idx.get("a")
    (('b', 'a'), 1)
    >>> idx.register(["c", "d"])
    Traceback (most recent call last):
    ...
    ValueError: too many classes: 2 known and new label(s) 'c', 'd' would pass max_classes=3
    """

    __slots__ = ("_ids", "_labels", "_names", "closed", "declared", "max_classes")

    def __init__(self, labels: Iterable[Any] = (), *, max_classes: int = DEFAULT_MAX_CLASSES) -> None:
        if isinstance(max_classes, bool) or not isinstance(max_classes, int):
            raise TypeError(f"max_classes must be an int, got {max_classes!r}")
        if not 2 <= max_classes <= HARD_MAX_CLASSES:
            raise ValueError(f"max_classes must be in [2, {HARD_MAX_CLASSES}], got {max_classes}")
        self.max_classes = max_classes
        self.closed = False
        self._ids: dict[Hashable, int] = {}
        self._labels: list[Hashable] = []
        self._names: dict[str, Hashable] = {}  # exported name (str(label)) -> label
        self.declared: frozenset[str] = frozenset()  # label kinds the user declared (see ``declare``)
        self.register(labels)

    @classmethod
    def of_known(cls, labels: Sequence[Hashable]) -> ClassIndex:
        """An index of ``labels`` taken from another index (checked there, in its order): nothing is re-checked.

        >>> ClassIndex.of_known(ClassIndex(["b", "a"]).labels).ids
        {'b': 0, 'a': 1}
        """
        index = cls.__new__(cls)
        index.max_classes = HARD_MAX_CLASSES
        index._labels = list(labels)
        index._ids = {label: i for i, label in enumerate(index._labels)}
        index._names = {str(label): label for label in index._labels}
        index.declared, index.closed = frozenset(), False
        return index

    def copy(self) -> ClassIndex:
        """An independent index of the same labels (registering in one leaves the other as it is)."""
        index = type(self).__new__(type(self))
        index.max_classes, index.declared, index.closed = self.max_classes, self.declared, self.closed
        index._labels, index._ids, index._names = list(self._labels), dict(self._ids), dict(self._names)
        return index

    def __len__(self) -> int:
        return len(self._labels)

    @property
    def labels(self) -> tuple[Hashable, ...]:
        """The labels in index order."""
        return tuple(self._labels)

    @property
    def ids(self) -> Mapping[Hashable, int]:
        """The label → index mapping (live; do not mutate)."""
        return self._ids

    def get(self, label: Any) -> int | None:
        """The index of a known label, None for a new or invalid one."""
        try:
            return self._ids.get(label)
        except TypeError:
            return None

    def close(self) -> None:
        """Refuse every label not known now (a stray ``"Fraud"`` for ``"fraud"`` is then a bad label, not a class).

        >>> idx = ClassIndex(["legit", "fraud"]); idx.close()
        >>> idx.new_labels(["fraud", "Fraud"])
        Traceback (most recent call last):
        ...
        ValueError: label 'Fraud' is not one of the classes ['legit', 'fraud'] (the class set is closed): nothing ...
        """
        if len(self._labels) < 2:
            raise ValueError(f"a closed class set needs at least 2 classes known up front, got {list(self._labels)}")
        self.closed = True
        self.max_classes = len(self._labels)  # batch encoders ask the index as soon as a label is past the cap

    def declare(self) -> None:
        """Take the kinds (str / int) of the labels known now as the declared ones.

        From then on, new labels come only with a batch (or sample) that has at least
        one label of a declared kind: integer labels against string classes (or the
        reverse) are refused instead of silently making new classes.

        >>> idx = ClassIndex(["legit", "fraud"]); idx.declare()
        >>> idx.new_labels([0, 1])
        Traceback (most recent call last):
        ...
        ValueError: labels [0, 1] (int) share no type with the declared classes ['legit', 'fraud'] (str): ...
        """
        self.declared = frozenset(label_kind(label) for label in self._labels)

    def check_kinds(self, kinds: set[str], labels: Iterable[Any]) -> None:
        """Raise when a batch whose labels have ``kinds`` shares none with the declared kinds."""
        if self.declared and not kinds & self.declared:
            shown = list(itertools.islice(dict.fromkeys(labels), 5))
            raise ValueError(
                f"labels {shown!r} ({', '.join(sorted(kinds))}) share no type with the declared classes "
                f"{list(self._labels[:5])!r} ({', '.join(sorted(self.declared))}): convert the labels "
                "to the classes' type (e.g. map 0/1 to the class names), nothing was counted"
            )

    def new_labels(self, labels: Iterable[Any], *, kinds: set[str] | None = None) -> list[Hashable]:
        """Validate ``labels`` and return the unknown ones (canonical) in first-seen order.

        Raises if any label is invalid, if registering them would pass the cap, if
        one would be exported under the same name as another class (``1`` and
        ``"1"``), or if the labels (of ``kinds``, by default their own) share no kind
        with the declared classes; changes nothing either way.
        """
        # (Mutation testing: list(labels) for a list only copies it; get(None) checks a known label again, whose
        # canonical form is known; the value stored in `fresh` is never read: equivalent mutants.)
        fresh: dict[Hashable, None] = {}
        given = labels if isinstance(labels, (list, tuple)) else list(labels)
        for label in given:
            if self.get(label) is None:
                canonical = check_label(label)
                if canonical not in self._ids:
                    fresh[canonical] = None
                    if self.closed:
                        known = f"{list(self._labels[:10])!r}{' …' if len(self._labels) > 10 else ''}"
                        raise ValueError(f"label {show(canonical)} is not one of the classes {known} (the class set "
                                         "is closed): nothing was counted")
                    if len(self._labels) + len(fresh) > self.max_classes:  # stop early: no more work than the cap
                        shown = ", ".join(show(x) for x in itertools.islice(fresh, 5))
                        raise ValueError(
                            f"too many classes: {len(self._labels)} known and new label(s) {shown}"
                            f"{', …' if len(fresh) > 5 else ''} would pass max_classes={self.max_classes}"
                        )
        new = list(fresh)
        if new:
            self.check_kinds(kinds if kinds is not None else {label_kind(x) for x in given}, new)
            names: dict[str, Hashable] = {}
            for label in new:
                name = str(label)
                other = self._names.get(name, names.get(name))
                if other is not None:
                    raise ValueError(
                        f"labels {other!r} ({type(other).__name__}) and {label!r} ({type(label).__name__}) "
                        f"would both be exported as class={name!r}: use one type for the labels"
                    )
                names[name] = label
        return new

    def register(self, labels: Iterable[Any]) -> None:
        """Add the unknown labels (all or nothing); their kinds were checked by ``new_labels`` of their batch."""
        for label in self.new_labels(labels, kinds=set(self.declared)):
            self._ids[label] = len(self._labels)
            self._labels.append(label)
            self._names[str(label)] = label
