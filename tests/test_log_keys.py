"""The joined predictions/labels logs: every error about the key column talks about keys."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from streammon.logs import ReplayError, replay

PREDS = {"id": ["a", "b"], "p": ["x", "y"]}
LABELS = {"id": ["a", "b"], "y": ["x", "y"]}


def _replay(preds: dict[str, list[object]], labels: dict[str, list[object]]) -> None:
    replay(pa.table(preds), true="y", pred="p", key="id", labels=pa.table(labels))


@pytest.mark.parametrize(("preds", "labels", "says"), [
    ({"id": [1.5, 2.5], "p": ["x", "y"]}, LABELS,
     "column 'id': type double cannot hold prediction keys: expected strings or integers"),
    (PREDS, {"id": [1.5, 2.5], "y": ["x", "y"]},
     "column 'id': type double cannot hold prediction keys: expected strings or integers"),
    ({"id": [True, False], "p": ["x", "y"]}, {"id": [True, False], "y": ["x", "y"]},
     "column 'id': type bool cannot hold prediction keys"),
    ({"id": ["a", None], "p": ["x", "y"]}, LABELS, "column 'id', row 1: null key (every row needs a prediction key)"),
    (PREDS, {"id": [None, "b"], "y": ["x", "y"]}, "column 'id', row 0: null key (every row needs a prediction key)"),
    (PREDS, {"id": [1, 2], "y": ["x", "y"]},
     "column 'id': the key column 'id' holds str keys in the predictions log but int keys in the labels log"),
    ({"idx": ["a", "b"], "p": ["x", "y"]}, LABELS, "no column 'id' (the key column)"),
])
def test_key_column_errors_name_keys(preds: dict[str, list[object]], labels: dict[str, list[object]],
                                     says: str) -> None:
    """A bad key column is refused naming the column and keys, never labels or scores."""
    with pytest.raises(ReplayError) as error:
        _replay(preds, labels)
    assert says in str(error.value), str(error.value)
    assert "label (" not in str(error.value) and "scores" not in str(error.value)


def test_key_types_differing_between_files_of_one_stream_are_refused(tmp_path: Path) -> None:
    """A folder of prediction files whose key column is str in one file and int in the next is refused by key."""
    folder = tmp_path / "preds"
    folder.mkdir()
    pq.write_table(pa.table({"id": ["a"], "p": ["x"]}), folder / "0.parquet")
    pq.write_table(pa.table({"id": [2], "p": ["x"]}), folder / "1.parquet")
    with pytest.raises(ReplayError, match="the key column 'id' holds keys of different types between files"):
        replay(folder, true="y", pred="p", key="id", labels=pa.table(LABELS))


def test_matching_int_keys_join() -> None:
    """Int keys on both sides join (the key checks refuse only real mismatches): two labelled, none pending."""
    result = replay(pa.table({"id": [1, 2], "p": ["x", "y"]}), true="y", pred="p", key="id",
                    labels=pa.table({"id": [2, 1], "y": ["y", "y"]}))
    stats = result.report.windows["cumulative"].label_stats
    assert (stats.predictions, stats.labelled, stats.pending, stats.orphans) == (2, 2, 0, 0)
