"""Output files (timeline JSON/Parquet, HTML report, their CLI flags) are written through ``streammon.atomic``:
a temporary file of a random name created exclusively, so a symbolic link planted at a predictable name is never
followed, and a failed write leaves the target as it was and no temporary file behind."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("plotly")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("pandas")

import streammon  # noqa: E402
from streammon.atomic import write_atomically, write_file  # noqa: E402
from streammon.cli import main  # noqa: E402
from tests.replay_data import REFERENCE, log_frame  # noqa: E402

VICTIM = b"precious: must not be overwritten\n"


@pytest.fixture(scope="module")
def result() -> Any:
    """A small replay whose timeline and report are written below."""
    return streammon.replay(log_frame(n=2_000), true="y", pred="p", time="ts", every="1h", reference=REFERENCE)


def _plant(folder: Path, name: str) -> Path:
    """A victim file outside ``folder`` and a symbolic link to it at the old predictable ``.<name>.partial``."""
    victim = folder.parent / f"victim-of-{name}"
    victim.write_bytes(VICTIM)
    (folder / f".{name}.partial").symlink_to(victim)
    return victim


def _check_json(path: Path, result: Any) -> None:
    assert len(json.loads(path.read_text(encoding="utf-8"))) == len(result.timeline)


def _check_parquet(path: Path, result: Any) -> None:
    assert pq.read_table(path).num_rows == len(result.timeline)


def _check_html(path: Path, result: Any) -> None:
    assert path.read_text(encoding="utf-8").rstrip().endswith("</html>")


WRITERS: dict[str, tuple[Callable[[Any, Path], None], Callable[[Path, Any], None]]] = {
    "timeline.json": (lambda r, p: r.write_timeline(p), _check_json),
    "timeline.parquet": (lambda r, p: r.write_timeline(p), _check_parquet),
    "report.html": (lambda r, p: r.write_html(p), _check_html),
}


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_symlink_planted_at_the_old_temporary_name_is_not_followed(result: Any, tmp_path: Path,
                                                                     name: str) -> None:
    """A link at ``.<name>.partial`` to a victim leaves the victim's bytes as they were; the output is whole."""
    folder = tmp_path / "out"
    folder.mkdir()
    victim = _plant(folder, name)
    write, check = WRITERS[name]
    write(result, folder / name)
    assert victim.read_bytes() == VICTIM
    check(folder / name, result)
    assert sorted(p.name for p in folder.iterdir()) == sorted([name, f".{name}.partial"])


def test_replay_command_outputs_do_not_follow_planted_links(tmp_path: Path) -> None:
    """``streammon replay --json/--parquet/--html`` into a folder with links planted at every old temporary name
    writes its three files and leaves every victim untouched."""
    log = tmp_path / "log.parquet"
    pq.write_table(pa.Table.from_pandas(log_frame(n=2_000), preserve_index=False), log)
    folder = tmp_path / "out"
    folder.mkdir()
    victims = [_plant(folder, name) for name in ("t.json", "t.parquet", "r.html")]
    assert main(["replay", str(log), "--true", "y", "--pred", "p", "--time", "ts", "--every", "1h",
                 "--json", str(folder / "t.json"), "--parquet", str(folder / "t.parquet"),
                 "--html", str(folder / "r.html")]) == 0
    assert [v.read_bytes() for v in victims] == [VICTIM] * 3
    rows = json.loads((folder / "t.json").read_text(encoding="utf-8"))
    assert pq.read_table(folder / "t.parquet").num_rows == len(rows) > 0
    assert "plotly.js v" in (folder / "r.html").read_text(encoding="utf-8")


def test_temporary_files_are_random_exclusive_and_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While ``write_file`` writes, its temporary file is a new regular file of mode 0600 beside the target,
    of a name no earlier write used; the descriptor given is the one that lands."""
    seen: list[tuple[str, int, bool]] = []

    def spy(out: Any) -> None:
        [tmp] = [p for p in tmp_path.iterdir() if p.name.startswith(".t.bin.")]
        info = os.lstat(tmp)
        seen.append((tmp.name, info.st_mode & 0o777, os.path.samestat(info, os.fstat(out.fileno()))))
        out.write(b"x")

    for _ in range(3):
        write_file(tmp_path / "t.bin", spy)
    assert len({name for name, _, _ in seen}) == 3
    assert all(mode == 0o600 and same for _, mode, same in seen)
    assert (tmp_path / "t.bin").read_bytes() == b"x"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    """A writer that raises halfway (and a text that cannot be encoded) leaves the old bytes and an otherwise
    empty folder."""
    target = tmp_path / "out.parquet"
    target.write_bytes(b"old")

    def half(out: Any) -> None:
        out.write(b"new, half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_file(target, half)
    with pytest.raises(UnicodeEncodeError):
        write_atomically(target, "lone \ud800")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.parquet"]


def test_a_link_at_the_target_itself_is_followed_and_kept(tmp_path: Path) -> None:
    """As for state files: a link the user put at the output path keeps pointing at the replaced file."""
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomically(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


@pytest.mark.parametrize("name", ["n" * 250 + ".html", "é" * 122 + ".json", "🙂" * 60 + ".pq"])
def test_a_target_name_at_the_length_limit_is_written(tmp_path: Path, name: str) -> None:
    """A file name of up to 255 bytes (the usual limit) is written: its temporary file's name stays under it."""
    assert len(os.fsencode(name)) <= 255
    write_file(tmp_path / name, lambda out: out.write(b"ok"))
    assert [p.name for p in tmp_path.iterdir()] == [name] and (tmp_path / name).read_bytes() == b"ok"
