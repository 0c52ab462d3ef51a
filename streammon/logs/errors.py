"""The one error of reading a log: what is wrong, and where (file, column, row).

>>> str(ReplayError("null label", file="day1.parquet", column="pred", row=41))
"day1.parquet, column 'pred', row 41: null label"
"""

from __future__ import annotations


class ReplayError(ValueError):
    """A log that cannot be replayed; ``file``, ``column`` and ``row`` (0-based data row) say where."""

    def __init__(self, message: str, *, file: str | None = None, column: str | None = None,
                 row: int | None = None) -> None:
        where = [part for part in (file, None if column is None else f"column {column!r}",
                                   None if row is None else f"row {row}") if part]
        super().__init__(f"{', '.join(where)}: {message}" if where else message)
        self.reason = message
        self.file = file
        self.column = column
        self.row = row


class ReferenceMismatch(ReplayError):
    """The reference names a class the log's first rows never hold, beside a log label it lacks that looks like
    it (``Fraud`` and ``fraud``): a likely typo, refused before the replay goes on (the CLI exits 2)."""
