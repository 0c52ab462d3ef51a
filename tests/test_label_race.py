"""Labels of a batch are checked before the monitor's lock is taken, and again under it if another thread added
classes meanwhile. A thread that registers the very labels of the batch between the two halves of that first
check (its labels not known yet, then their export names taken) made it raise "labels 'a' (str) and 'a' (str)
would both be exported as class='a'" — once in a CI run of ``test_journal_durability``'s four threads. The first
check failing is now told again under the lock, where the labels are known."""

from __future__ import annotations

from typing import Any

import pytest

from streammon import Cumulative, Monitor
from streammon.counting.classes import ClassIndex


def racing(monkeypatch: pytest.MonkeyPatch, monitor: Monitor, label: str) -> list[int]:
    """Make the first label check (outside the lock) find ``label`` not known, then — between its two halves, as
    another thread would — register it, before it looks at the export names; the checks made."""
    calls: list[int] = []
    original = ClassIndex.check_kinds

    def check_kinds(self: ClassIndex, *args: Any, **kwargs: Any) -> None:
        calls.append(1)
        if len(calls) == 1:
            monitor.update(label, label)  # another thread registers the label now
        original(self, *args, **kwargs)

    monkeypatch.setattr(ClassIndex, "check_kinds", check_kinds)
    return calls


def test_a_batch_racing_a_thread_that_registers_its_labels_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monitor = Monitor([Cumulative()], detector=None)
    monitor.update("b", "b")
    calls = racing(monkeypatch, monitor, "a")
    monitor.update_many(["a", "a", "b"], ["a", "b", "b"])
    assert len(calls) >= 2  # (checked again under the lock)
    assert monitor.counts()["cumulative"].to_dict() == {"a": {"a": 2, "b": 1}, "b": {"b": 2}}


def test_predictions_racing_a_thread_that_registers_their_labels_are_recorded(monkeypatch: pytest.MonkeyPatch,
                                                                            ) -> None:
    monitor = Monitor([Cumulative()], detector=None)
    monitor.update("b", "b")
    calls = racing(monkeypatch, monitor, "a")
    monitor.predict_many(["k1", "k2"], ["a", "b"])
    monitor.label_many(["k1", "k2"], ["a", "a"])
    assert len(calls) >= 2
    assert monitor.counts()["cumulative"].to_dict() == {"a": {"a": 2, "b": 1}, "b": {"b": 1}}
