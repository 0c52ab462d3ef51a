"""Saving through a symbolic link keeps the link; checkpoint failures are logged and the last one is raised."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from streammon import Monitor, Sliding
from streammon.state import Checkpointer


def _monitor(n: int) -> Monitor:
    monitor = Monitor([Sliding(10)])
    monitor.update_many(["a"] * n, ["b"] * n)
    return monitor


def test_a_save_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path: Path) -> None:
    """state.json -> data/real.json: saving twice leaves the link a link, and the target holds the latest save."""
    (tmp_path / "data").mkdir()
    target, link = tmp_path / "data" / "real.json", tmp_path / "state.json"
    link.symlink_to(target)  # dangling until the first save
    _monitor(3).save(link)
    _monitor(5).save(link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert Monitor.load(target).samples == 5 == Monitor.load(link).samples
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["real.json"]  # no temporary left behind


def test_a_symlink_loop_is_refused_and_left_alone(tmp_path: Path) -> None:
    """a -> b -> a: the save raises OSError and both links stay as they were."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(OSError, match="loop"):
        _monitor(1).save(a)
    assert os.readlink(a) == str(b) and os.readlink(b) == str(a)


def test_checkpoint_failures_are_logged_and_the_last_one_is_raised(tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """Saving into a folder that does not exist: every failure is an ERROR record of logger streammon.state, and
    stop() raises the last save's error; once the folder exists saving works again and that is logged too."""
    path = tmp_path / "missing" / "m.json"
    checkpointer = Checkpointer(_monitor(2), path, every=3600)
    with caplog.at_level(logging.INFO, logger="streammon"):
        checkpointer._save()
        assert [(r.name, r.levelno) for r in caplog.records] == [("streammon.state", logging.ERROR)]
        assert str(path) in caplog.records[0].getMessage() and caplog.records[0].exc_info is not None
        with pytest.raises(FileNotFoundError):
            checkpointer.stop()
        assert len(caplog.records) == 2 and checkpointer.saves == 0
        path.parent.mkdir()
        checkpointer.stop()
    assert checkpointer.saves == 1 and checkpointer.last_error is None and Monitor.load(path).samples == 2
    assert caplog.records[-1].levelno == logging.INFO and "again" in caplog.records[-1].getMessage()


def test_a_failed_last_save_does_not_hide_the_blocks_own_exception(tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """Leaving a with block by an exception: that exception propagates, the failed last save is only logged;
    leaving it normally: the failed last save raises."""
    path = tmp_path / "missing" / "m.json"
    with pytest.raises(KeyError, match="the block's own"), Checkpointer(_monitor(1), path, every=3600):
        raise KeyError("the block's own")
    assert any(r.levelno == logging.ERROR for r in caplog.records)
    with pytest.raises(FileNotFoundError), Checkpointer(_monitor(1), path, every=3600):
        pass
