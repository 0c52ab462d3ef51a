"""Labels, class indices and count matrices against their written rules: what is refused, with which error and
which words; which code each new class gets; what the cached block ids are.

Written to kill mutants of ``streammon/counting/`` (``bash .ci/mutation counting``), next to
``tests/test_counting_mutants.py``. Every expected message is written out here from the rule it states.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from streammon.counting.counts import ClassIndex, ConfusionCounts, check_label
from streammon.counting.labels import as_label_array, map_labels
from streammon.counting.windows import Timed

SCORE_HINT = "looks like a score: threshold it first (e.g. y_pred = score >= 0.5) or pass the class labels"
NOT_A_LABEL = ("is not a class label: expected a str, int or bool (what the report, the Prometheus exposition and "
               "the state file can carry)")


def _raises(error: type[Exception], message: str) -> pytest.RaisesContext[Exception]:
    """The exact message (the whole of it), as a regular expression."""
    return pytest.raises(error, match=f"^{re.escape(message)}$")


# --- check_label and _check_text ----------------------------------------------------------------------------------

def test_check_label_keeps_each_kind_as_its_plain_python_type() -> None:
    """NumPy scalars become the Python value; bools stay bools; whole floats become ints; str subclasses plain str."""
    class Name(str):
        def __str__(self) -> str:
            return "not the value"

    cases = [(np.int64(3), 3, int), (np.bool_(True), True, bool), (np.float64(2.0), 2, int), (np.str_("x"), "x", str),
             (True, True, bool), (False, False, bool), (-0.0, 0, int), (Name("fraud"), "fraud", str),
             (2**63 - 1, 2**63 - 1, int), (-(2**63) + 1, -(2**63) + 1, int)]
    for given, expected, kind in cases:
        got = check_label(given)
        assert got == expected and type(got) is kind, given


def test_check_label_refusals_say_why_in_full() -> None:
    """Each refusal is its own error type and message (module docstring of streammon.counting.classes)."""
    with _raises(ValueError, "label 9223372036854775808 is out of range: int labels must be within ±2**63 (int64)"):
        check_label(2**63)
    with _raises(ValueError, "label -9223372036854775808 is out of range: int labels must be within ±2**63 (int64)"):
        check_label(-(2**63))
    with _raises(ValueError, "label <an int of 67 bits> is out of range: int labels must be within ±2**63 (int64)"):
        check_label(1e20)  # a whole float beyond int64 is the int it is, and that int is out of range
    with _raises(ValueError, f"label 0.73 is a float that is not a whole number: it {SCORE_HINT}"):
        check_label(0.73)
    with _raises(ValueError, "label inf is not a class: expected a finite whole number, a str or a bool"):
        check_label(float("inf"))
    with _raises(ValueError, "label None is missing (None, NaN, NA or NaT): drop missing labels before counting, "
                             "nothing was counted"):
        check_label(None)
    with _raises(TypeError, f"label [1] (list) {NOT_A_LABEL}"):
        check_label([1])
    with _raises(TypeError, f"label b'a' (bytes) {NOT_A_LABEL}; decode bytes to str first"):
        check_label(b"a")
    with _raises(TypeError, f"label (1+2j) (complex) {NOT_A_LABEL}"):
        check_label(1 + 2j)


def test_str_labels_have_1_to_256_characters_and_no_lone_surrogate() -> None:
    """Length and surrogates are checked; other non-printable characters (a newline, a tab) are valid labels."""
    assert check_label("x" * 256) == "x" * 256
    for fine in ("a\nb", "\t", "é\u200b"):  # not printable, but valid Unicode: exported escaped
        assert check_label(fine) == fine
    with _raises(ValueError, "label '' has 0 characters: a str label must have 1 to 256 "
                             "(streammon.counting.counts.MAX_LABEL_LENGTH)"):
        check_label("")
    with _raises(ValueError, f"label {'x' * 40!r}… (257 characters) has 257 characters: a str label must have 1 to "
                             "256 (streammon.counting.counts.MAX_LABEL_LENGTH)"):
        check_label("x" * 257)
    with _raises(ValueError, "label 'a\\ud800' holds a lone surrogate: it is not valid Unicode and cannot be "
                             "exported or saved as UTF-8"):
        check_label("a\ud800")


# --- ClassIndex ---------------------------------------------------------------------------------------------------

def test_max_classes_is_an_int_from_2_to_46340() -> None:
    """A bool or float cap is a TypeError; an int outside [2, 46 340] a ValueError; both bounds are accepted."""
    assert ClassIndex(max_classes=2).max_classes == 2
    assert ClassIndex(max_classes=46_340).max_classes == 46_340
    for bad in (True, 2.0):
        with _raises(TypeError, f"max_classes must be an int, got {bad!r}"):
            ClassIndex(max_classes=bad)  # type: ignore[arg-type]
    for bad in (1, 46_341):
        with _raises(ValueError, f"max_classes must be in [2, 46340], got {bad}"):
            ClassIndex(max_classes=bad)


def test_the_cap_counts_known_and_new_classes_and_the_message_shows_five() -> None:
    """Up to max_classes classes are accepted; one more raises, naming at most 5 new labels (then '…')."""
    index = ClassIndex(["a", "b"], max_classes=4)
    assert index.new_labels(["a", "c", "a", "d", "c"]) == ["c", "d"]
    with _raises(ValueError, "too many classes: 2 known and new label(s) 'c', 'd', 'e' would pass max_classes=4"):
        index.new_labels(["c", "d", "e"])
    wide = ClassIndex(max_classes=5)
    with _raises(ValueError, "too many classes: 0 known and new label(s) 'a', 'b', 'c', 'd', 'e', … would pass "
                             "max_classes=5"):
        wide.new_labels(list("abcdefgh"))
    five = ClassIndex(max_classes=4)
    with _raises(ValueError, "too many classes: 0 known and new label(s) 'a', 'b', 'c', 'd', 'e' would pass "
                             "max_classes=4"):
        five.new_labels(list("abcdefgh"))
    assert index.labels == ("a", "b") and wide.labels == () and five.labels == ()  # refused: nothing changed


def test_new_labels_read_any_iterable_once_and_check_its_kinds() -> None:
    """A generator is read once: its labels are both the new ones and the kinds checked against declared ones."""
    index = ClassIndex(["legit", "fraud"])
    index.declare()
    assert index.new_labels(label for label in ["legit", "chargeback", "chargeback"]) == ["chargeback"]
    assert index.new_labels(iter([np.int64(7), "x"])) == [7, "x"]  # str present: the batch shares a kind


def test_labels_sharing_no_kind_with_the_declared_ones_are_refused_showing_five_of_each() -> None:
    """The message lists the batch's first 5 distinct labels and kinds, and the first 5 classes and their kinds."""
    index = ClassIndex(["a", "b", "c", "d", "e", "f"])
    index.declare()
    with _raises(ValueError, "labels [0, 1, 2, 3, 4] (int) share no type with the declared classes "
                             "['a', 'b', 'c', 'd', 'e'] (str): convert the labels to the classes' type (e.g. map "
                             "0/1 to the class names), nothing was counted"):
        index.new_labels([0, 1, 0, 2, 3, 4, 5, 6])
    both = ClassIndex(["a", 1])
    both.declare()
    assert both.declared == frozenset({"int", "str"})
    with _raises(ValueError, "labels [(1+0j)] (complex) share no type with the declared classes ['a', 1] (int, str): "
                             "convert the labels to the classes' type (e.g. map 0/1 to the class names), nothing "
                             "was counted"):
        both.check_kinds({"complex"}, [1 + 0j])
    several = ClassIndex([0, 1])
    several.declare()
    with _raises(ValueError, "labels ['x'] (bytes, str) share no type with the declared classes [0, 1] (int): "
                             "convert the labels to the classes' type (e.g. map 0/1 to the class names), nothing "
                             "was counted"):
        several.check_kinds({"str", "bytes"}, ["x"])


def test_two_labels_with_one_exported_name_are_refused_in_a_batch_or_against_a_class() -> None:
    """1 and '1' (or True and 'True') would share class="1" in the exposition: refused, naming both and their types."""
    with _raises(ValueError, "labels 1 (int) and '1' (str) would both be exported as class='1': use one type for "
                             "the labels"):
        ClassIndex().new_labels([1, "1"])
    with _raises(ValueError, "labels 'True' (str) and True (bool) would both be exported as class='True': use one "
                             "type for the labels"):
        ClassIndex().new_labels(["True", True])
    known = ClassIndex(["7"])
    with _raises(ValueError, "labels '7' (str) and 7 (int) would both be exported as class='7': use one type for "
                             "the labels"):
        known.new_labels([7])
    assert known.labels == ("7",)


# --- label arrays -------------------------------------------------------------------------------------------------

def test_uint64_labels_are_refused_from_exactly_2_to_the_63() -> None:
    """2**63 − 1 is the largest accepted label; 2**63 itself is out of range, named by its position."""
    assert as_label_array(np.array([0, 2**63 - 1], dtype=np.uint64), "y").tolist() == [0, 2**63 - 1]
    with _raises(ValueError, "y[1] = 9223372036854775808 is out of range: int labels must be within ±2**63 (int64)"):
        as_label_array(np.array([0, 2**63], dtype=np.uint64), "y")


def test_empty_arrays_map_to_empty_index_arrays() -> None:
    """An empty batch (or the empty partner of predict_many) maps to empty integer index arrays."""
    for empty in (np.array([], dtype=np.int64), np.array([], dtype=str), np.array([], dtype=object)):
        true, pred, new = map_labels(empty, empty, ClassIndex(["a"]))
        assert (true.shape, pred.shape, new) == ((0,), (0,), [])
        assert true.dtype == np.intp and pred.dtype == np.intp
    true, pred, new = map_labels(np.array(["b"]), np.array([], dtype=str), ClassIndex(["a"]))
    assert true.tolist() == [1] and pred.shape == (0,) and pred.dtype == np.intp and new == ["b"]


def test_a_batch_shares_a_kind_if_either_side_has_it() -> None:
    """Declared str classes: int truths with str predictions share str, so the new ints are accepted; ints on
    both sides are refused."""
    index = ClassIndex(["a", "b"])
    index.declare()
    true, pred, new = map_labels(np.array([5, 6]), np.array(["a", "b"]), index)
    assert new == [5, 6] and true.tolist() == [2, 3] and pred.tolist() == [0, 1]
    with pytest.raises(ValueError, match=r"^labels \[5, 6\] \(int\) share no type with the declared classes"):
        map_labels(np.array([5, 6]), np.array([6, 5]), index)


def _first_seen(index: ClassIndex, truth: list, pred: list) -> tuple[list[int], list[int], list]:
    """Indices by registering one sample at a time, true label then predicted (the documented order)."""
    ids = dict(index.ids)
    new: list = []
    for label in (x for pair in zip(truth, pred, strict=True) for x in pair):
        if label not in ids:
            ids[label] = len(ids)
            new.append(label)
    return [ids[t] for t in truth], [ids[p] for p in pred], new


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint16", "bool", "str", "object"])
def test_map_labels_gives_the_indices_of_one_by_one_registration(dtype: str) -> None:
    """For every array kind, with known and new labels mixed: indices and new labels as a loop registers them."""
    rng = np.random.default_rng(len(dtype))
    for registered in ([], [3, 0], [0, 1], [1, 0, 2], [-2, 5]):
        values = rng.integers(-3 if dtype in ("int64", "int8", "object") else 0, 6, (2, 40))
        known = registered
        if dtype == "bool":
            values %= 2
            known = [k for k in registered if k in (0, 1)]
        truth, pred = values[0].astype(dtype).tolist(), values[1].astype(dtype).tolist()
        if dtype == "object":
            truth = [str(x) if x % 3 == 0 else x for x in truth]  # mixed str and int: the per-element path
            pred = [str(x) if x % 3 == 0 else x for x in pred]
        known_labels = [str(k) for k in known] if dtype == "str" else known
        index = ClassIndex(known_labels)
        if dtype == "object" and any(str(k) in truth + pred for k in known):
            continue  # 3 and '3' would share an exported name
        arrays = (np.array(truth, dtype=object), np.array(pred, dtype=object)) if dtype == "object" else (
            np.array(truth, dtype=dtype), np.array(pred, dtype=dtype))
        expected = _first_seen(index, [check_label(x) for x in truth], [check_label(x) for x in pred])
        true_idx, pred_idx, new = map_labels(*arrays, index)
        assert (true_idx.tolist(), pred_idx.tolist(), new) == expected, (dtype, known)


# --- count matrices -----------------------------------------------------------------------------------------------

def test_count_matrices_take_whole_floats_and_refuse_the_rest_saying_why() -> None:
    """Whole, finite float counts are the int counts (int64, exact); fractions or inf are a TypeError; negative
    counts a ValueError."""
    counts = ConfusionCounts(["a", "b"], [[1.0, 2.0], [0.0, 3.0]])
    assert counts.matrix.dtype == np.int64 and counts.matrix.tolist() == [[1, 2], [0, 3]]
    assert ConfusionCounts(["a", "b"], np.array([[True, False], [False, True]])).matrix.tolist() == [[1, 0], [0, 1]]
    for bad in ([[1.5, 0.0], [0.0, 1.0]], [[np.inf, 0.0], [0.0, 1.0]], [[np.nan, 0.0], [0.0, 1.0]]):
        with _raises(TypeError, "counts must be integers, got dtype float64"):
            ConfusionCounts(["a", "b"], bad)
    with _raises(ValueError, "counts must be >= 0"):
        ConfusionCounts(["a", "b"], [[1, -1], [0, 0]])


def test_an_empty_count_matrix_is_int64_and_exact_past_float_precision() -> None:
    """A ConfusionCounts built without a matrix counts in int64: 2**53 + 1 stays exact."""
    counts = ConfusionCounts(["a", "b"])
    assert counts.matrix.dtype == np.int64
    counts.add("a", "b", count=2**53)
    counts.add("a", "b")
    assert int(counts.matrix[0, 1]) == 2**53 + 1 and counts.matrix.dtype == np.int64


def test_timed_windows_default_to_60_buckets() -> None:
    """Timed(seconds) keeps its last seconds in 60 buckets (the signature's default), exact to seconds / 60."""
    assert Timed(120).describe()["buckets"] == 60
