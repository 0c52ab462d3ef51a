"""Is the reference's class set the log's? A class of the reference that the log's first rows never hold, beside
a label of those rows that the reference lacks and that looks like it, is a likely typo.

**The rule.** The labels (true and predicted) of the first ``CHECK_ROWS`` rows (the whole log if shorter) are
compared with the reference once, before the chunk completing them is counted (a log is read in chunks of up to
a million rows: before any row) and before the first snapshot (a joined log, fed in smaller pieces, may be
checked at its first snapshot, on the rows fed by then). A reference class absent from them is an error
only when one of those labels is not in the reference and matches it: equal ignoring case, or close as
``difflib.get_close_matches`` finds it (ratio >= ``CLOSE``). A reference class simply absent (a rare class not
yet seen) and a new label like no reference class (a class-set change the report then shows) pass.

>>> typos({"legit": 0.99, "Fraud": 0.01}, {"legit", "fraud"})
[('Fraud', 'fraud')]
>>> typos({"legit": 0.99, "fraud": 0.01}, {"legit"}), typos({"legit": 0.99, "fraud": 0.01}, {"legit", "spam"})
([], [])
"""

from __future__ import annotations

import difflib
from collections.abc import Hashable, Iterable

import numpy as np

from streammon.counting.coded import Coded
from streammon.logs.errors import ReferenceMismatch

CHECK_ROWS = 100_000  # rows whose labels are compared with the reference's classes
CLOSE = 0.8  # difflib ratio from which a log label "looks like" a reference class


def typos(reference: Iterable[Hashable], seen: set[Hashable]) -> list[tuple[Hashable, Hashable]]:
    """(reference class, log label) pairs: a text class of the reference not in ``seen`` and a text label of
    ``seen`` not in the reference that matches it (same ignoring case, or a close match)."""
    classes = list(reference)
    missing = [c for c in classes if c not in seen and isinstance(c, str)]
    extra = sorted(label for label in seen if label not in set(classes) and isinstance(label, str))
    pairs: list[tuple[Hashable, Hashable]] = []
    for absent in missing:
        same_case = [label for label in extra if label.casefold() == absent.casefold()]
        close = same_case or difflib.get_close_matches(absent, extra, n=1, cutoff=CLOSE)
        if close:
            pairs.append((absent, close[0]))
    return pairs


def distinct(labels: np.ndarray | Coded) -> set[Hashable]:
    """The distinct text labels of a chunk (a ``Coded`` column read through its codes; an int or bool array holds
    none, and is not read).

    >>> sorted(distinct(Coded(np.array([1, 1, 0]), np.array(["a", "b", "c"], dtype=object))))
    ['a', 'b']
    """
    if isinstance(labels, Coded):
        used = np.bincount(labels.codes, minlength=len(labels.categories)) > 0
        return set(labels.categories[: len(used)][used].tolist())
    values = np.asarray(labels)
    if values.dtype.kind not in "OUT":  # ints or bools: no text label, nothing a text class could be a typo of
        return set()
    return set(values.tolist())


def check(reference: Iterable[Hashable], seen: set[Hashable], rows: int) -> None:
    """Raise ``ReferenceMismatch`` naming each likely typo found in the first ``rows`` rows' labels ``seen``.

    >>> check(["legit", "Fraud"], {"legit", "fraud"}, 5_000)
    Traceback (most recent call last):
    ...
    streammon.logs.errors.ReferenceMismatch: the reference's class 'Fraud' is not in the first 5,000 rows of the \
log, which hold 'fraud', a class the reference lacks: a typo? (labels are case-sensitive: name the log's classes \
in the reference, e.g. --reference legit=...,fraud=...; a class the first rows simply lack, with no look-alike, \
is not refused)
    """
    pairs = typos(reference, seen)
    if not pairs:
        return
    said = "; ".join(f"the reference's class {absent!r} is not in the first {rows:,} rows of the log, which hold "
                     f"{label!r}, a class the reference lacks" for absent, label in pairs)
    fixed = {absent: label for absent, label in pairs}
    example = ",".join(f"{fixed.get(c, c)}=..." for c in reference if isinstance(c, str))
    case = "labels are case-sensitive: " if any(str(a).casefold() == str(b).casefold() for a, b in pairs) else ""
    raise ReferenceMismatch(f"{said}: a typo? ({case}name the log's classes in the reference, e.g. --reference "
                            f"{example}; a class the first rows simply lack, with no look-alike, is not refused)")
