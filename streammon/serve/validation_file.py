"""A model's ``validation = "FILE.csv"`` in the server's configuration: a labelled, scored validation set read as a
``streammon.Validation`` (the baseline of the label-free estimate with scores, ``Monitor(baseline=...)``).

The CSV has a header with ``y_true``, ``y_pred`` and the scores: ``y_score`` (binary: the probability of the
model's configured ``positive`` class, else of the validation's minority class) or one ``y_score:CLASS`` column per
class (K > 2, rows summing to 1). Labels are text; with ``classes`` configured, a text that spells a configured
class (``str(class)``) reads as that class, so integer classes match. The set is read and its calibration fitted
once, when the configuration is read.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> rows = ["y_true,y_pred,y_score"] + [f"{t},{p},{s}" for t, p, s in
...         [(1, 1, 0.9), (0, 0, 0.2), (0, 1, 0.6), (1, 0, 0.4), (0, 0, 0.1), (1, 1, 0.8)] * 5]
>>> _ = (folder / "v.csv").write_text("\\n".join(rows))
>>> v = read_validation(folder / "v.csv", positive=1, classes=(0, 1), where="[models.m]")
>>> v.labels, v.positive, v.counts.tolist()
((0, 1), 1, [[10, 5], [5, 10]])
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from streammon.counting.validation import Validation

MAX_ROWS = 10_000_000  # a validation set larger than this is a mistake (the file is read into memory)


def read_validation(path: Path, *, positive: Any, classes: Sequence[Any] | None, where: str) -> Validation:
    """The ``Validation`` of the CSV at ``path`` (module docstring); a ``ValueError`` naming ``where``, the file and
    what is wrong otherwise."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            rows = [row for _, row in zip(range(MAX_ROWS + 1), reader, strict=False)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{where} validation: cannot read {path}: {exc}") from None
    if header is None or not {"y_true", "y_pred"} <= set(header):
        raise ValueError(f"{where} validation: {path} needs a header with y_true, y_pred and y_score "
                         f"(or y_score:CLASS per class), got {header}")
    if len(rows) > MAX_ROWS:
        raise ValueError(f"{where} validation: {path} has more than {MAX_ROWS:,} rows")
    spelled = {} if classes is None else {str(c): c for c in classes}
    column = {name: i for i, name in enumerate(header)}
    try:
        true = [spelled.get(row[column["y_true"]], row[column["y_true"]]) for row in rows]
        pred = [spelled.get(row[column["y_pred"]], row[column["y_pred"]]) for row in rows]
        if "y_score" in column:
            scores: Any = [float(row[column["y_score"]]) for row in rows]
        else:
            names = [name for name in header if name.startswith("y_score:")]
            if not names:
                raise ValueError("no y_score column (binary) nor y_score:CLASS columns (K > 2)")
            order = [spelled.get(name.removeprefix("y_score:"), name.removeprefix("y_score:")) for name in names]
            scores = [[float(row[column[name]]) for name in names] for row in rows]
            classes = order
        k = len(classes) if classes is not None else len(set(true) | set(pred))
        return Validation(true, pred, scores, classes=classes, positive=positive if k == 2 else None)
    except IndexError:
        raise ValueError(f"{where} validation: {path} has a row shorter than its header") from None
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where} validation: {path}: {exc}") from None
