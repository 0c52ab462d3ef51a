"""Dictionary-encoded label columns (pandas categorical, Arrow dictionary) counted by their codes: the same counts,
classes in the same order and the same refusals as the same labels passed as plain lists."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streammon import Cumulative, Monitor, Sliding
from streammon.counting.coded import Coded, as_coded


def _monitor(**options: object) -> Monitor:
    return Monitor([Cumulative(), Sliding(7)], **options)  # type: ignore[arg-type]


def _state(m: Monitor) -> tuple[object, ...]:
    counts = m.counts()
    return m.labels, {name: c.to_dict() for name, c in counts.items()}


FORMS = {
    "categorical": pd.Categorical,
    "category series": lambda v: pd.Series(v, dtype="category"),
    "arrow dictionary": lambda v: pa.array(v).dictionary_encode(),
    "categorical, unused categories first": lambda v: pd.Categorical(v, categories=["zz", *sorted(set(v)), "yy"]),
}


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=40, deadline=None)
@given(pairs=st.lists(st.tuples(st.sampled_from("abcde"), st.sampled_from("abcdf")), min_size=1, max_size=60),
       declared=st.sampled_from([None, ["c"], ["e", "a"]]))
def test_coded_columns_count_like_plain_lists(form: str, pairs: list[tuple[str, str]],
                                               declared: list[str] | None) -> None:
    """Counts and class order (first seen: true then predicted, sample by sample) equal those of plain lists;
    categories no sample uses never become classes."""
    truth, preds = [t for t, _ in pairs], [p for _, p in pairs]
    plain, coded = _monitor(classes=declared), _monitor(classes=declared)
    plain.update_many(truth, preds)
    coded.update_many(FORMS[form](truth), FORMS[form](preds))
    assert _state(coded) == _state(plain)
    assert "zz" not in coded.labels and "yy" not in coded.labels


def test_a_missing_value_is_refused_and_changes_nothing() -> None:
    m = _monitor()
    m.update_many(["a", "b"], ["a", "a"])
    before = _state(m)
    for truth in (pd.Categorical(["a", None, "b"]), pa.array(["a", None, "b"]).dictionary_encode()):
        with pytest.raises(ValueError) as coded:
            m.update_many(truth, pd.Categorical(["a", "a", "b"]))
        assert "is missing (None, NaN, NA or NaT)" in str(coded.value)  # pandas reads None back as NaN
        assert _state(m) == before


def test_an_invalid_used_category_is_refused_as_the_plain_path_refuses_it() -> None:
    """A float category that is not a whole number: the same error as for the same labels in a list."""
    m = _monitor()
    m.update_many([1, 2], [1, 1])
    before = _state(m)
    with pytest.raises(ValueError) as plain:
        _monitor().update_many([1, 1, 2.5], [1, 1, 1])
    with pytest.raises(ValueError) as coded:
        m.update_many(pd.Categorical([1.0, 1.0, 2.5]), pd.Categorical([1.0, 1.0, 1.0]))
    assert str(coded.value) == str(plain.value)
    assert _state(m) == before


def test_the_class_cap_holds_on_the_coded_path() -> None:
    m = _monitor(max_classes=3)
    m.update_many(pd.Categorical(["a", "b"]), pd.Categorical(["a", "b"]))
    before = _state(m)
    with pytest.raises(ValueError, match="max_classes"):
        m.update_many(pd.Categorical(["c", "d"]), pd.Categorical(["c", "c"]))
    assert _state(m) == before


def test_lengths_must_agree() -> None:
    with pytest.raises(ValueError, match="same length, got 2 and 1"):
        _monitor().update_many(pd.Categorical(["a", "b"]), pd.Categorical(["a"]))


def test_what_is_not_coded_is_left_to_the_plain_path() -> None:
    assert as_coded(["a", "b"]) is None and as_coded(np.array([1, 2])) is None
    assert as_coded(pd.Series(["a", "b"])) is None  # an object Series: its .cat would raise
    assert as_coded(pd.Categorical(["a", None])) is None  # a missing value: the plain path names the sample
    coded = as_coded(pa.array(["x", "y", "x"]).dictionary_encode())
    assert isinstance(coded, Coded) and coded.tolist() == ["x", "y", "x"] and coded[1:].tolist() == ["y", "x"]


def test_a_code_past_the_categories_is_refused() -> None:
    bad = pa.DictionaryArray.from_arrays(pa.array([0, 3], pa.int32()), pa.array(["a", "b"]), safe=False)
    with pytest.raises(ValueError, match="points past the 2 categories"):
        as_coded(bad)


def test_the_dictionary_encoded_forms_are_recognised_as_codes_and_categories() -> None:
    """pandas Categorical, a category Series and an Arrow DictionaryArray come back as their own codes and
    categories (not materialised); anything with a missing value, or only half of the interface, does not."""
    for column in (pd.Categorical(["b", "a", "b"], categories=["a", "b", "z"]),
                   pd.Series(pd.Categorical(["b", "a", "b"], categories=["a", "b", "z"]))):
        coded = as_coded(column)
        assert isinstance(coded, Coded)
        assert coded.codes.tolist() == [1, 0, 1] and coded.categories.tolist() == ["a", "b", "z"]
    arrow = as_coded(pa.DictionaryArray.from_arrays(pa.array([2, 0, 2], pa.int32()), pa.array(["x", "y", "w"])))
    assert isinstance(arrow, Coded)
    assert arrow.codes.tolist() == [2, 0, 2] and arrow.categories.tolist() == ["x", "y", "w"]
    assert as_coded(pa.DictionaryArray.from_arrays(pa.array([0, None], pa.int32()), pa.array(["x"]))) is None
    assert as_coded(pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), pa.array(["x", None]))) is None

    class OnlyCodes:
        codes = np.array([0, 1])

    class OnlyCategories:
        categories = np.array(["a", "b"])

    assert as_coded(OnlyCodes()) is None and as_coded(OnlyCategories()) is None
    with pytest.raises(ValueError, match="a code 2 points past the 2 categories"):
        as_coded(pa.DictionaryArray.from_arrays(pa.array([0, 2], pa.int32()), pa.array(["a", "b"]), safe=False))
    assert as_coded(pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), pa.array(["a", "b"]))) is not None
