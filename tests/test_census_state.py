"""The score census in a state file (``streammon.counting.score_census``), as an adversary edits it and seals it
again: a census that bins to the windows' histograms but moves counts between values of one bin — which would make
the cumulative window read a wrong ROC AUC — is refused where the monitor's last exact scores (the ring, which
the census counted) contradict it; and every census accepted is in the one form a save writes, so a loaded file
saves back to the same census, byte for byte."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from streammon import Cumulative, Monitor, Sliding
from streammon.counting.score_census import ValueCensus
from tests.census_streams import score_side, sealed, three_to_a_bin


def census_text(text: str) -> str:
    return json.dumps(score_side(json.loads(text)["body"])["census"])


def stream(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """A few-valued binary model: three values 1e-5 apart in one bin, each taken by both classes, and 0 and 1."""
    return three_to_a_bin(np.random.default_rng(seed), n)


def saved(n: int = 2_500) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """A monitor's document after ``n`` samples (past the ring's 2,048: its census is read), and the samples."""
    y, s = stream(n)
    m = Monitor([Cumulative(), Sliding(3_000)], reference={0: 0.7, 1: 0.3}, positive=1, detector=None)
    m.update_many(y.tolist(), [0] * n, y_score=s)
    return json.loads(m.dumps()), y, s


def test_counts_moved_between_values_of_one_bin_are_refused_where_the_ring_contradicts_them() -> None:
    """Swapping the class counts of 0.3 and 0.30001 keeps every bin's counts (the histogram check passes) and would
    read ROC AUC off scikit-learn's on the window's samples; the last 2,048 exact scores hold 0.3 more often among
    the negatives than the forged census does, so the file is refused."""
    document, y, s = saved()
    column = score_side(document["body"])["census"]["columns"][0]
    assert column["values"][1:3] == [0.3, 0.30001]
    column["counts"][1], column["counts"][2] = column["counts"][2], column["counts"][1]
    ring = np.asarray(score_side(document["body"])["exact"]["scores"], dtype=float).reshape(-1)
    true = np.asarray(score_side(document["body"])["exact"]["true"])
    assert np.sum((ring == 0.3) & (true == 0)) > column["counts"][1][0]  # the ring contradicts the forgery
    with pytest.raises(ValueError, match="census"):
        Monitor.loads(sealed(document))
    assert Monitor.loads(sealed(saved()[0])).report().windows["cumulative"].scores["roc_auc"] == \
        pytest.approx(roc_auc_score(y, s), abs=1e-12)


FORGERIES = {
    "values out of order": lambda c: (c["columns"][0]["values"].reverse(), c["columns"][0]["counts"].reverse()),
    "-0.0": lambda c: c["columns"][0]["values"].__setitem__(0, -0.0),
    "fractional counts": lambda c: c["columns"][0].update(
        counts=[[x + 0.25 for x in row] for row in c["columns"][0]["counts"]]),
    "counts as floats": lambda c: c["columns"][0].update(
        counts=[[float(x) for x in row] for row in c["columns"][0]["counts"]]),
    "values as strings": lambda c: c["columns"][0].update(values=[str(v) for v in c["columns"][0]["values"]]),
    "values nested": lambda c: c["columns"][0].update(values=[[v] for v in c["columns"][0]["values"]]),
    "a value counted zero times": lambda c: (c["columns"][0]["values"].insert(2, 0.300005),
                                             c["columns"][0]["counts"].insert(2, [0, 0])),
    "incomplete, with columns": lambda c: c.update(complete=False),
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_census_not_in_the_form_a_save_writes_is_refused(name: str) -> None:
    """A save writes each open column's values as floats in ascending order (-0.0 as 0.0, each value counted at
    least once) and their counts as ints, and an incomplete census without columns; a file in any other form —
    which would load and save back as another file — is refused, naming the census."""
    document, _, _ = saved()
    FORGERIES[name](score_side(document["body"])["census"])
    with pytest.raises(ValueError, match="census"):
        Monitor.loads(sealed(document))


@pytest.mark.parametrize("counts", [[[1.5, 0.5], [0, 1]], [[True, 1], [0, 1]], [[1, 1], [0, 1.0]], [["1", 1], [0, 1]]])
def test_a_refused_census_leaves_the_census_as_it_was(counts: list[list[Any]]) -> None:
    """``ValueCensus.restore`` of a census whose counts are not ints (a fraction, a bool, a float, a string)
    raises and changes nothing: the census counts on as before."""
    census = ValueCensus(columns=1)
    census.add(np.array([0, 1, 1]), np.array([[0.3], [0.3], [0.9]]))
    before = census.state()
    forged = copy.deepcopy(before)
    forged["columns"][0]["counts"] = counts
    with pytest.raises(ValueError, match="census"):
        census.restore(forged, 2)
    assert census.state() == before
    census.add(np.array([0]), np.array([[0.9]]))
    assert census.counted(0) == ([0.3, 0.9], [[1, 1], [1, 1]])


@pytest.mark.parametrize("columns", [1, 3])
def test_a_loaded_census_saves_back_byte_for_byte(columns: int) -> None:
    """dumps → loads → dumps writes the census part unchanged (binary, and K = 3 with a stray-free stream), after
    a column grew past ``FIRST_ROOM`` values and another closed."""
    rng = np.random.default_rng(columns)
    n = 6_000
    if columns == 1:
        y = rng.integers(0, 2, n)
        s = rng.integers(0, 300, n) / 300
        m = Monitor([Cumulative()], reference={0: 1, 1: 1}, positive=1, detector=None)
        m.update_many(y.tolist(), [0] * n, y_score=s)
    else:
        y = rng.integers(0, 3, n)
        c1 = rng.integers(0, 200, n) / 1_000  # 200 values
        c0 = (1 - c1) * rng.random(n)  # continuous: closes
        p = np.c_[c0, c1, 1 - c0 - c1]
        m = Monitor([Cumulative()], reference={0: 1, 1: 1, 2: 1}, detector=None)
        m.update_many(y.tolist(), p.argmax(axis=1).tolist(), y_score=p)
    text = m.dumps()
    census = score_side(json.loads(text)["body"])["census"]
    assert census["complete"] and any(c is not None and len(c["values"]) > 64 for c in census["columns"])
    assert census_text(Monitor.loads(text).dumps()) == census_text(text)


def test_counts_of_a_class_no_open_column_counted_are_refused() -> None:
    """A K = 3 monitor whose labels so far are classes 0 and 1 saves two counts a value; a third, zero in every
    column (which a save would drop), or another width in one column only, is refused."""
    rng = np.random.default_rng(9)
    n = 2_500
    y = rng.integers(0, 2, n)
    c1 = rng.integers(0, 50, n) / 1_000
    p = np.c_[1 - c1 - 0.5, c1, np.full(n, 0.5)]
    m = Monitor([Cumulative()], reference={0: 1, 1: 1, 2: 1}, detector=None)
    m.update_many(y.tolist(), p.argmax(axis=1).tolist(), y_score=p)
    document = json.loads(m.dumps())
    columns = score_side(document["body"])["census"]["columns"]
    assert all(len(row) == 2 for column in columns for row in column["counts"])
    for every in (True, False):
        forged = copy.deepcopy(document)
        for column in score_side(forged["body"])["census"]["columns"][: 3 if every else 1]:
            for row in column["counts"]:
                row.append(0)
        with pytest.raises(ValueError, match="census"):
            Monitor.loads(sealed(forged))


def test_a_null_census_or_one_where_none_is_kept_is_refused() -> None:
    """A save writes a census on the labelled score side only, never null: ``"census": null`` there, or a census on
    the prediction side (which keeps none), is refused rather than read as absent and saved back otherwise."""
    document, _, _ = saved()
    score_side(document["body"])["census"] = None
    with pytest.raises(ValueError, match="census"):
        Monitor.loads(sealed(document))
    m = Monitor([Cumulative()], classes=["a", "b", "c"])
    m.predict_many(["p1", "p2"], ["a", "c"], y_score=[[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]], t=1.0)
    document = json.loads(m.dumps())
    found: list[dict[str, Any]] = []
    stack: list[Any] = [document["body"]]
    while stack:  # the prediction side's score part: "exact" and no "census"
        item = stack.pop()
        if isinstance(item, dict):
            if "exact" in item and "windows" in item and "census" not in item:
                found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    assert found
    found[0]["census"] = {"total": 0, "complete": True, "columns": [None, None, None]}
    with pytest.raises(ValueError, match="census"):
        Monitor.loads(sealed(document))
