"""Where the exported samples go: ``Sink`` is what the family builders write to.

``streammon.export.families`` fills prometheus_client families through one (for ``collect()``),
``streammon.export.text`` writes exposition lines through another (for ``exposition()`` and ``serve``):
the same builder code feeds both, so both carry the same samples in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Sink(Protocol):
    """Label values are str (in the family's label order); values are anything ``float()`` takes. A family's
    samples arrive in exposition order."""

    def add(self, family: str, labels: Sequence[str], value: float) -> None:
        """One sample of a gauge or counter family (a counter's ``_total`` sample)."""

    def add_buckets(self, family: str, labels: Sequence[str], buckets: Sequence[tuple[str, float]]) -> None:
        """The cumulative ``(le, count)`` buckets of one histogram series (no ``_sum``, no ``_count``)."""

    def add_series(self, family: str, rows: tuple[tuple[str, ...], ...], values: Sequence[float]) -> None:
        """Samples of one gauge or counter family: ``add(family, row, value)`` for each pair, in order. ``rows``
        is the same tuple object from scrape to scrape while the series do not change (a sink may keep what it
        derives from it)."""
