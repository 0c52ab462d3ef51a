"""Score inputs (#28): what ``y_score`` a monitor takes, and that a refused score (or a batch refused for any
other reason) raises a clear error and leaves the monitor's saved state byte-identical."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import streammon
from streammon import Cumulative, Monitor, Sliding, Timed


def binary() -> Monitor:
    m = Monitor([Cumulative(), Sliding(4), Timed(60, buckets=6)], reference={"legit": 9, "fraud": 1})
    m.update_many(["legit", "fraud"], ["legit", "legit"], t=1.0, y_score=[0.2, 0.4])
    return m


def three() -> Monitor:
    m = Monitor([Cumulative(), Sliding(4)], classes=["a", "b", "c"])
    m.update_many(["a", "b"], ["a", "c"], y_score=[[0.8, 0.1, 0.1], [0.1, 0.3, 0.6]])
    return m


BINARY_BATCHES = [
    ([0.1, math.nan], ValueError, r"y_score\[1\] is nan: a score must be a probability in \[0, 1\]"),
    ([0.1, 1.5], ValueError, r"y_score\[1\] is 1.5"),
    ([-0.1, 0.5], ValueError, r"y_score\[0\] is -0.1"),
    ([0.1], ValueError, r"one score \(row\) per sample: 2 samples, got shape \(1,\)"),
    ([[0.2, 0.3, 0.5]] * 2, ValueError, r"must be 1-D .* or \(n, 2\) class probabilities, got shape \(2, 3\)"),
    ([[0.2, 0.7], [0.5, 0.5]], ValueError, r"y_score row 0 sums to 0.9"),
    (["a", "b"], TypeError, r"y_score must hold numbers"),
    ({"a": 1}, TypeError, r"y_score must be numbers"),
    ([[[0.5]]] * 2, ValueError, r"1-D or 2-D"),
    ([True, False], TypeError, r"got booleans \(decisions, not scores"),  # was read as 1.0 and 0.0
]


@pytest.mark.parametrize(("y_score", "error", "message"), BINARY_BATCHES)
def test_a_refused_binary_batch_changes_nothing(y_score: object, error: type[Exception], message: str) -> None:
    """NaN, out-of-range, mis-shaped, non-numeric scores or two-column rows not summing to 1 are refused, naming
    the value and what was expected, and the monitor's state file is byte-identical afterwards."""
    m = binary()
    before = m.dumps()
    with pytest.raises(error, match=message):
        m.update_many(["legit", "fraud"], ["legit", "fraud"], t=2.0, y_score=y_score)
    assert m.dumps() == before


@pytest.mark.parametrize(("y_score", "error", "message"), [
    (math.nan, ValueError, "is nan"), (1.01, ValueError, "is 1.01"), ("0.5", TypeError, "numbers"),
    ([0.3, 0.3], ValueError, "sums to 0.6"), (True, TypeError, "probability"), ([[0.5]], ValueError, "one row"),
])
def test_a_refused_single_score_changes_nothing(y_score: object, error: type[Exception], message: str) -> None:
    """``update`` refuses a bad score as ``update_many`` does, on the lock-free path too, and changes nothing."""
    m = binary()
    before = m.dumps()
    with pytest.raises(error, match=message):
        m.update("legit", "fraud", y_score=y_score)
    assert m.dumps() == before


def test_a_durable_monitor_refuses_a_bool_score_as_update_does(tmp_path: Path) -> None:
    """With a pending store ``update`` takes the batch path; a bool score is refused there too (it was counted as
    1.0), and the state is unchanged."""
    m = Monitor([Cumulative()], reference={"legit": 9, "fraud": 1}, pending=tmp_path / "pending.db")
    m.update("legit", "legit", y_score=0.2)
    before = m.dumps()
    with pytest.raises(TypeError, match="booleans"):
        m.update("legit", "fraud", y_score=True)
    with pytest.raises(TypeError, match="booleans"):
        m.predict_many(["k1"], ["fraud"], y_score=np.array([True]))
    assert m.dumps() == before


@pytest.mark.parametrize(("y_score", "message"), [
    ([[0.5, 0.5]] * 2, r"must be \(n, 3\) class probabilities in the order of Monitor.labels, got shape \(2, 2\)"),
    ([0.5, 0.5], r"\(n, 3\) class probabilities"),
    ([[0.5, 0.5, 0.1]] * 2, r"row 0 sums to 1.1"),
    ([[0.5, 0.5, 0.0], [1.2, -0.2, 0.0]], r"y_score\[1, 0\] is 1.2"),
])
def test_a_refused_k_class_batch_changes_nothing(y_score: object, message: str) -> None:
    """K > 2: the columns must be the K classes and each row a probability vector; else an error, nothing changed."""
    m = three()
    before = m.dumps()
    with pytest.raises(ValueError, match=message):
        m.update_many(["a", "c"], ["a", "b"], y_score=y_score)
    assert m.dumps() == before


def test_a_batch_refused_for_its_labels_or_times_starts_no_score_tally() -> None:
    """A first scored batch refused for a bad label or a time going back changes nothing: no tally is started and
    no class is registered."""
    m = Monitor([Sliding(5), Timed(60)], reference={"x": 3, "y": 1}, closed=True)
    m.update_many(["x"], ["y"], t=10.0)
    before = m.dumps()
    with pytest.raises(ValueError, match="z"):
        m.update_many(["x", "z"], ["x", "x"], t=11.0, y_score=[0.1, 0.2])
    with pytest.raises(ValueError, match="time"):
        m.update_many(["x", "y"], ["x", "x"], t=5.0, y_score=[0.1, 0.2])
    with pytest.raises(ValueError):
        m.update("x", "z", t=11.0, y_score=0.3)
    assert m.dumps() == before
    open_monitor = Monitor([Sliding(5)], reference={"x": 3, "y": 1})
    before = open_monitor.dumps()
    with pytest.raises(ValueError, match=r"is 2\.0"):
        open_monitor.update("x", "new", y_score=2.0)  # the new class would be registered: it is not
    assert open_monitor.dumps() == before and open_monitor.labels == ("x", "y")


def test_the_positive_class_must_be_known_for_a_binary_score() -> None:
    """Without ``positive=`` or a reference, the positive class is still being learned: a first binary score is
    refused with the fix named; once the warm-up has learned the reference, scores are taken."""
    m = Monitor([Cumulative()], warmup=4)
    m.update_many(["a", "b"], ["a", "b"])
    before = m.dumps()
    with pytest.raises(ValueError, match="pass positive= or reference="):
        m.update_many(["a", "b"], ["a", "b"], y_score=[0.1, 0.9])
    with pytest.raises(ValueError, match="pass positive= or reference="):
        m.update("a", "b", y_score=0.9)
    assert m.dumps() == before
    m.update_many(["a", "a", "b"], ["a", "a", "b"])  # the warm-up ends: b is the minority, the positive class
    m.update_many(["a", "b"], ["a", "b"], y_score=[0.1, 0.9])
    assert m.report().positive == "b" and m.report().windows["cumulative"].n_scored == 2
    named = Monitor([Cumulative()], positive="a")
    named.update_many(["a", "b"], ["a", "b"], y_score=[0.9, 0.2])
    tally = named.report().windows["cumulative"].score_tally
    assert tally is not None and tally.positive == named.labels.index("a")


def test_k_class_scores_need_the_classes_up_front() -> None:
    """(n, K) scores are refused when the classes were learned from the data (their order is not the columns')."""
    m = Monitor([Cumulative()])
    m.update_many(["a", "b", "c"], ["a", "b", "c"])
    before = m.dumps()
    with pytest.raises(ValueError, match="need the classes given up front"):
        m.update_many(["a"], ["a"], y_score=[[0.5, 0.25, 0.25]])
    assert m.dumps() == before


def test_scores_given_any_way_make_the_same_tally() -> None:
    """One sample at a time (lock-free and checked paths), a batch, and the two-column predict_proba form of a
    binary model all give the same tally; samples without a score count in the confusion matrix only."""
    rng = np.random.default_rng(7)
    true = rng.integers(2, size=300)
    s = rng.random(300)
    labels = np.array(["legit", "fraud"])
    batch = Monitor([Sliding(100)], reference={"legit": 9, "fraud": 1})
    batch.update_many(labels[true], labels[(s > 0.5).astype(int)], y_score=s)
    proba = Monitor([Sliding(100)], reference={"legit": 9, "fraud": 1})
    proba.update_many(labels[true], labels[(s > 0.5).astype(int)], y_score=np.column_stack([1 - s, s]))
    single = Monitor([Sliding(100)], reference={"legit": 9, "fraud": 1})
    for i in range(300):
        single.update(labels[true[i]], labels[int(s[i] > 0.5)], y_score=float(s[i]) if i % 2 else np.float64(s[i]))
    first, *others = [m.report().windows["sliding_100"].score_tally for m in (batch, proba, single)]
    for other in others:
        assert other is not None and first is not None
        np.testing.assert_array_equal(other.hist, first.hist)
        np.testing.assert_allclose(other.sums, first.sums, rtol=1e-9)
        np.testing.assert_array_equal(other.top, first.top)
    mixed = Monitor([Cumulative()], reference={"legit": 9, "fraud": 1})
    mixed.update_many(labels[true[:10]], labels[true[:10]], y_score=s[:10])
    mixed.update_many(labels[true[10:]], labels[true[10:]])
    w = mixed.report().windows["cumulative"]
    assert (w.n, w.n_scored) == (300, 10)


def test_k_class_rows_one_at_a_time_match_the_batch() -> None:
    """K-class rows given to ``update`` one at a time (lists and tuples of floats, the lock-free path) make the tally
    of the same rows given as one batch; a row that does not sum to 1 is still refused there, changing nothing."""
    rng = np.random.default_rng(9)
    labels = ["a", "b", "c", "d"]
    rows = rng.dirichlet(np.ones(4), size=500)
    true = rng.integers(4, size=500)
    batch, single = (Monitor([Sliding(300), Cumulative()], classes=labels) for _ in range(2))
    batch.update_many([labels[i] for i in true], [labels[i] for i in rows.argmax(1)], y_score=rows)
    for i in range(500):
        row = rows[i].tolist()
        single.update(labels[true[i]], labels[int(rows[i].argmax())], y_score=row if i % 2 else tuple(row))
    for name in ("sliding_300", "cumulative"):
        a, b = batch.report().windows[name].score_tally, single.report().windows[name].score_tally
        assert a is not None and b is not None
        np.testing.assert_array_equal(a.hist, b.hist)
        np.testing.assert_allclose(a.sums, b.sums, rtol=1e-9)
    before = single.dumps()
    with pytest.raises(ValueError, match=r"sums to 0\.9"):
        single.update("a", "b", y_score=[0.3, 0.3, 0.2, 0.1])
    assert single.dumps() == before


def test_the_lock_free_check_of_a_score_row_accepts_only_what_the_checked_path_accepts() -> None:
    """``update``'s lock-free path takes a list or tuple of K numbers only when ``as_score_row`` would take it too:
    rows out of [0, 1] (by one ulp too), with NaN or inf anywhere, not summing to 1 (within the tolerance, at its
    edges too), or not numbers go to the checked path; the record it makes holds the values the checked path reads
    (lists, tuples, 1-D arrays of any dtype), and it takes nearly every valid row (else the record path would go
    unused)."""
    from streammon.counting.score_input import SUM_TOLERANCE, as_score_row
    from streammon.counting.score_records import ScoreRecords, packed_row

    rng = np.random.default_rng(21)
    odd: list[object] = [np.nan, np.inf, -np.inf, -1e-9, 1 + 1e-9, 0.0, 1.0, "0.5", None, 2e-4, 1 + 2**-52, -0.0,
                         -1e-300, 5e-324, 1.5, 2.0, 3, True, np.float32(0.25), np.float64(0.2), 10**400, [0.1]]
    taken = plain_taken = plain_rows = 0
    for _ in range(4_000):
        k = int(rng.integers(3, 6))
        row: list[object] = rng.dirichlet(np.ones(k)).tolist()
        plain = rng.random() < 0.3
        if not plain:
            for _ in range(int(rng.integers(0, 3))):
                at = int(rng.integers(1, k))
                row[at] = odd[int(rng.integers(len(odd)))]
                if type(row[at]) is float and math.isfinite(row[at]) and rng.random() < 0.5:  # the sum still 1
                    row[0] = 1.0 - sum(x for i, x in enumerate(row) if i and type(x) is float)
            if rng.random() < 0.3 and type(row[0]) is float:  # the sum at the tolerance's edges
                row[0] += float(rng.choice([-1, 1])) * SUM_TOLERANCE * float(rng.choice([0.999, 1.0, 1.001]))
        try:
            as_score_row(row, columns=k, positive=None)
            valid = True
        except (TypeError, ValueError):
            valid = False
        records = ScoreRecords(k)
        forms: list[object] = [row, tuple(row), np.array(row, dtype=object)]
        if plain:  # numpy rows as predict_proba gives them, and a 2-D one (the checked path's to refuse)
            forms += [np.array(row), np.array(row, dtype=np.float32), np.array([row])]
        for given in forms:
            record = packed_row(records.pack, 7, given)
            if record is not None:
                assert valid and np.ndim(given) == 1, row
                taken += 1
                cells, scores = records.unpack([record])
                checked = as_score_row(given, columns=k, positive=None)
                assert cells.tolist() == [7] and scores[0].tolist() == list(checked)
            if plain and np.ndim(given) == 1:
                plain_rows += 1
                plain_taken += record is not None
    assert taken > 0 and plain_taken / plain_rows > 0.99, (taken, plain_taken, plain_rows)


def test_the_lock_free_check_of_a_row_summing_just_above_1_takes_it_only_without_a_score_above_1() -> None:
    """A row summing to just above 1 (within the tolerance) is taken by ``update``'s lock-free check exactly when
    the checked path takes it: refused with one score in (1, 1 + tolerance] (whatever the other scores' bytes),
    taken when every score is at most 1 — whether or not some score's second byte is 0xF0, the byte the check
    looks for before it falls back to ``max``."""
    import struct

    from streammon.counting.score_input import SUM_TOLERANCE, as_score_row
    from streammon.counting.score_records import ScoreRecords

    rng = np.random.default_rng(8)
    f0 = 2.0**-16 * (1 + rng.random(50) / 16)  # second byte 0xF0 (exponent 0x3EF, mantissa's top nibble 0)
    assert all(struct.pack("<d", x)[6] == 0xF0 for x in f0)
    rows: list[list[float]] = []
    for i in range(400):
        k = int(rng.integers(3, 8))
        over = 1.0 + float(rng.choice([2.0**-52, 1e-9, 1e-6, SUM_TOLERANCE / 2, SUM_TOLERANCE * 0.999]))
        rest = rng.dirichlet(np.ones(k - 1)) * (1.0 + SUM_TOLERANCE - over) * rng.random()
        bad = [over, *rest.tolist()]
        if i % 2:
            bad[-1] = float(f0[i % 50]) if 1.0 + SUM_TOLERANCE - over > 1e-4 else bad[-1]
        rows.append([bad[j] for j in rng.permutation(k)])
        target = 1.0 + SUM_TOLERANCE * (0.1 + 0.8 * rng.random())
        if i % 2:  # one score's second byte 0xF0: max decides
            good = [float(f0[i % 50]), *(rng.dirichlet(np.ones(k - 1)) * (target - f0[i % 50])).tolist()]
        else:
            good = (rng.dirichlet(np.ones(k)) * target).tolist()
        rows.append([good[j] for j in rng.permutation(k)])
    taken = refused = 0
    for row in rows:
        k = len(row)
        check = ScoreRecords(k).lock_free
        try:
            as_score_row(row, columns=k, positive=None)
            valid = True
        except ValueError:
            valid = False
        record = check(3, row)
        if valid and sum(row) > 1.0:
            assert record is not None, row
            taken += 1
        if not valid:
            assert record is None, row
            refused += 1
    assert taken > 100 and refused > 100, (taken, refused)


def test_lock_free_updates_mixing_scored_and_unscored_samples_keep_each_score_with_its_sample() -> None:
    """``update`` without a time (the lock-free buffer) with K-class rows and binary floats, some samples without a
    score and some rows refused in between: every window's tally is the recount of the scored samples it holds,
    across buffer flushes (FLUSH_EVERY) and reads; a refused row raises and is not counted."""
    from streammon.counting.score_tally import ScoreTally
    from streammon.intake import FLUSH_EVERY

    rng = np.random.default_rng(5)
    for k in (2, 4):
        labels = [f"c{i}" for i in range(k)]
        m = Monitor([Cumulative(), Sliding(50)], reference={c: 10 * (i + 1) for i, c in enumerate(labels)})
        held: list[tuple[int, tuple[float, ...] | None]] = []
        for i in range(FLUSH_EVERY + 700):
            true, pred = int(rng.integers(k)), int(rng.integers(k))
            row = rng.dirichlet(np.ones(k))
            given: object = None if rng.random() < 0.3 else (float(row[1]) if k == 2 else row.tolist())
            if i % 97 == 5 and given is not None:  # a bad score: refused, nothing counted
                with pytest.raises(ValueError, match="probabilit"):
                    m.update(labels[true], labels[pred], y_score=[2.0, -1.0, 0.0, 0.0] if k == 4 else 1.5)
            m.update(labels[true], labels[pred], y_score=given)
            held.append((true, None if given is None else ((row[1],) if k == 2 else tuple(row))))
            if i % 1000 == 999:
                m.report()
        report = m.report()
        for name, kept in (("cumulative", held), ("sliding_50", held[-50:])):
            scored = [(t, r) for t, r in kept if r is not None]
            expected = ScoreTally.of(np.array([t for t, _ in scored]), np.array([r for _, r in scored]), k,
                                     positive=0 if k == 2 else None)
            got = report.windows[name].score_tally
            assert got is not None and report.windows[name].n == len(kept)
            np.testing.assert_array_equal(got.hist, expected.hist)
            np.testing.assert_allclose(got.sums, expected.sums, rtol=1e-9, atol=1e-9)
            np.testing.assert_array_equal(got.top[:, :, :2], expected.top[:, :, :2])  # counts: exact
            np.testing.assert_allclose(got.top, expected.top, rtol=1e-9)


def test_k_class_scores_of_the_wrong_width_name_the_classes_declared() -> None:
    """Classes given up front (reference=) but a row of another width: the error says how many columns are wanted,
    not that the classes should be given up front; nothing changes."""
    m = Monitor([Cumulative()], reference={"a": 1, "b": 1, "c": 1})
    before = m.dumps()
    with pytest.raises(ValueError, match=r"\(n, 2\) scores for a monitor of 3 classes: pass one column per class"):
        m.update_many(["a"], ["a"], y_score=[[0.5, 0.5]])
    assert m.dumps() == before


def test_a_table_of_scores_whose_column_names_are_not_the_classes_in_order_is_refused() -> None:
    """A DataFrame of scores is read by position: one naming the classes in another order (or naming something
    else) was taken, its columns read as the wrong classes' scores (ROC AUC 0.0 for a perfect ranking). It is now
    refused by ``update_many``, ``predict_many`` and ``Validation``, naming the order expected, and nothing
    changes; the classes in order, or pandas' default names 0..K-1, are read as before, the same as the array."""
    pd = pytest.importorskip("pandas")
    p = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]])
    y = ["a", "b", "c", "a"]
    swapped = pd.DataFrame(p[:, ::-1], columns=["c", "b", "a"])  # the same probabilities, named in another order
    named = pd.DataFrame(p, columns=["x", "y", "z"])
    for frame, shown in ((swapped, r"\['c', 'b', 'a'\]"), (named, r"\['x', 'y', 'z'\]")):
        m = three()
        before = m.dumps()
        with pytest.raises(ValueError, match=shown + r" are not the classes \['a', 'b', 'c'\] in that order"):
            m.update_many(y, y, y_score=frame)
        with pytest.raises(ValueError, match=r"y_score\[\['a', 'b', 'c'\]\]"):
            m.predict_many([1, 2, 3, 4], y, y_score=frame)
        assert m.dumps() == before
        with pytest.raises(ValueError, match=r"in that order"):
            streammon.Validation(y, y, frame, classes=["a", "b", "c"])
    by_name, by_position, by_array = (Monitor([Cumulative()], classes=["a", "b", "c"]) for _ in range(3))
    by_name.update_many(y, y, y_score=swapped[["a", "b", "c"]])
    by_position.update_many(y, y, y_score=pd.DataFrame(p))
    by_array.update_many(y, y, y_score=p)
    read = [{k: m.report().windows["cumulative"].scores[k] for k in ("roc_auc", "brier", "log_loss", "ece")}
            for m in (by_name, by_position, by_array)]
    assert read[0] == read[1] == read[2] and read[0]["roc_auc"] == 1.0  # each class ranked first by its column
    assert read[0]["brier"] == pytest.approx(np.mean(np.sum((p - np.eye(3)[[0, 1, 2, 0]]) ** 2, axis=1)), abs=1e-12)
    pa = pytest.importorskip("pyarrow")  # a Table's columns are its arrays: its names are column_names
    table = pa.table({name: swapped[name].to_numpy() for name in ("c", "b", "a")})
    m = three()
    with pytest.raises(ValueError, match=r"\['c', 'b', 'a'\] are not the classes"):
        m.update_many(y, y, y_score=table)
    m.update_many(y, y, y_score=table.select(["a", "b", "c"]))
    binary_monitor = binary()
    with pytest.raises(ValueError, match=r"\['fraud', 'legit'\] are not the classes \['legit', 'fraud'\]"):
        binary_monitor.update_many(["legit"], ["legit"], t=2.0,
                                   y_score=pd.DataFrame([[0.1, 0.9]], columns=["fraud", "legit"]))


def test_one_row_of_scores_whose_index_names_are_not_the_classes_in_order_is_refused() -> None:
    """A row of a named predict_proba frame (``df.iloc[i]``, a pandas Series) was read by position by ``update``
    and ``predict``: named in another order, its entries went to the wrong classes. It is refused now, naming the
    order expected, and nothing changes; the row reindexed to the classes, or pandas' default index, counts as
    the plain list does (a recount of the Brier score by hand)."""
    pd = pytest.importorskip("pandas")
    row = [0.1, 0.2, 0.7]  # true class c
    swapped = pd.Series(row[::-1], index=["c", "b", "a"])
    m = three()
    before = m.dumps()
    with pytest.raises(ValueError, match=r"index \['c', 'b', 'a'\] are not the classes \['a', 'b', 'c'\] in that "
                                         r"order.*y_score\[\['a', 'b', 'c'\]\]"):
        m.update("c", "c", y_score=swapped)
    with pytest.raises(ValueError, match=r"in that order"):
        m.predict("k", "c", y_score=swapped)
    assert m.dumps() == before
    by_name, by_position, by_list = three(), three(), three()
    by_name.update("c", "c", y_score=swapped[["a", "b", "c"]])
    by_position.update("c", "c", y_score=pd.Series(row))
    by_list.update("c", "c", y_score=row)
    briers = [m.report().windows["cumulative"].scores["brier"] for m in (by_name, by_position, by_list)]
    rows = np.array([[0.8, 0.1, 0.1], [0.1, 0.3, 0.6], row])
    truth = np.eye(3)[[0, 1, 2]]
    assert briers[0] == briers[1] == briers[2] == pytest.approx(np.mean(np.sum((rows - truth) ** 2, axis=1)))
    binary_monitor = binary()
    with pytest.raises(ValueError, match=r"index \['fraud', 'legit'\] are not the classes \['legit', 'fraud'\]"):
        binary_monitor.update("legit", "legit", y_score=pd.Series([0.1, 0.9], index=["fraud", "legit"]))


def test_a_binary_score_as_a_zero_dimensional_array_is_one_number() -> None:
    """``np.asarray(0.3)`` (a model's scalar output) is the number it holds, for ``update`` and ``predict``: the
    tally is the batch's of the same floats (it was refused as "a number or one row ..., got shape ()"), and a
    0-d array out of range is refused naming its value, changing nothing."""
    s = np.array([0.1, 0.7, 0.0, 1.0, 0.45])
    labels = ["legit", "fraud", "legit", "fraud", "legit"]
    batch = Monitor([Cumulative()], reference={"legit": 9, "fraud": 1})
    batch.update_many(labels, labels, y_score=s)
    single = Monitor([Cumulative()], reference={"legit": 9, "fraud": 1})
    for label, score in zip(labels, s, strict=True):
        single.update(label, label, y_score=np.asarray(score))
    first, other = (m.report().windows["cumulative"].score_tally for m in (batch, single))
    assert first is not None and other is not None
    np.testing.assert_array_equal(other.hist, first.hist)
    predicted = Monitor([Cumulative()], reference={"legit": 9, "fraud": 1})
    predicted.predict("k", "fraud", y_score=np.asarray(0.7))
    predicted.label("k", "fraud")
    tally = predicted.report().windows["cumulative"].score_tally
    assert tally is not None and int(tally.hist.sum()) == 1
    before = single.dumps()
    with pytest.raises(ValueError, match=r"y_score\[0\] is 1.5"):
        single.update("legit", "legit", y_score=np.asarray(1.5))
    assert single.dumps() == before


def test_default_column_names_that_are_also_the_int_classes_in_another_order_are_refused() -> None:
    """Int classes 0 and 1 declared as [1, 0]: a frame whose columns are 0 and 1 (predict_proba's classes_ order, or
    pandas' defaults) was read by position, class 1's score taken from class 0's column. It is refused now, as a
    whole frame and as one row, and nothing changes; the same frame for classes [0, 1], or for str classes, is read
    by position as before (the Brier score recounted by hand)."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([[0.7, 0.3]], columns=[0, 1])  # P(class 0) = 0.7
    m = Monitor([Cumulative()], classes=[1, 0], positive=1)
    before = m.dumps()
    with pytest.raises(ValueError, match=r"are the classes \[1, 0\] in another order.*y_score\[\[1, 0\]\].*to_numpy"):
        m.update_many([0], [0], y_score=frame)
    with pytest.raises(ValueError, match=r"index \[0, 1\] are the classes \[1, 0\] in another order"):
        m.update(0, 0, y_score=frame.iloc[0])
    assert m.dumps() == before
    m.update_many([0], [0], y_score=frame[[1, 0]])  # named: class 1's score is 0.3
    assert m.report().windows["cumulative"].scores["brier"] == pytest.approx(0.3**2)
    plain = Monitor([Cumulative()], classes=[0, 1], positive=1)
    plain.update_many([0], [0], y_score=frame)
    named = Monitor([Cumulative()], classes=["no", "yes"], positive="yes")
    named.update_many(["no"], ["no"], y_score=frame)
    for monitor in (plain, named):
        assert monitor.report().windows["cumulative"].scores["brier"] == pytest.approx(0.3**2)
