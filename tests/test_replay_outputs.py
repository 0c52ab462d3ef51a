"""``streammon replay``: an output that is one of the inputs is refused before anything is read or written."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from streammon.cli import main

LOG = "y,p\n" + "a,a\nb,a\n" * 50


def _log(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "log.csv"
    path.write_text(LOG)
    return path


def _same_path(tmp: Path) -> tuple[list[str], Path]:
    log = _log(tmp)
    return [str(log), "--json", str(log)], log


def _other_spelling(tmp: Path) -> tuple[list[str], Path]:
    log = _log(tmp / "d")
    return [str(log), "--parquet", str(tmp / "d" / ".." / "d" / "." / "log.csv")], log


def _symlink(tmp: Path) -> tuple[list[str], Path]:
    log = _log(tmp)
    (tmp / "link.json").symlink_to(log)
    return [str(log), "--json", str(tmp / "link.json")], log


def _hard_link(tmp: Path) -> tuple[list[str], Path]:
    log = _log(tmp)
    os.link(log, tmp / "hard.html")
    return [str(log), "--html", str(tmp / "hard.html")], log


def _relative(tmp: Path) -> tuple[list[str], Path]:
    log = _log(tmp)
    return [str(log), "--json", os.path.relpath(log)], log


def _file_of_folder(tmp: Path) -> tuple[list[str], Path]:
    log = _log(tmp / "logs")
    return [str(tmp / "logs"), "--json", str(log)], log


def _inside_folder(tmp: Path) -> tuple[list[str], Path]:
    log = _log(tmp / "logs")
    return [str(tmp / "logs"), "--parquet", str(tmp / "logs" / "sub" / "timeline.parquet")], log


def _labels_log(tmp: Path) -> tuple[list[str], Path]:
    preds = tmp / "preds.csv"
    preds.write_text("id,p\n1,a\n2,b\n")
    labels = tmp / "labels.csv"
    labels.write_text("id,y\n1,a\n2,a\n")
    return [str(preds), "--key", "id", "--labels", str(labels), "--json", str(labels)], labels


def _reference_file(tmp: Path) -> tuple[list[str], Path]:
    log = _log(tmp)
    mix = tmp / "mix.json"
    mix.write_text('{"a": 1, "b": 1}')
    return [str(log), "--reference", str(mix), "--html", str(mix)], mix


CASES: dict[str, Callable[[Path], tuple[list[str], Path]]] = {
    "same path": _same_path, "other spelling": _other_spelling, "symlink": _symlink, "hard link": _hard_link,
    "relative": _relative, "file of an input folder": _file_of_folder, "inside an input folder": _inside_folder,
    "labels log": _labels_log, "reference file": _reference_file,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_output_that_is_an_input_is_refused_and_the_input_is_left_as_it_was(
        case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Each way of naming an input as an output ends in one line naming both, status 2, the input byte-identical."""
    monkeypatch.chdir(tmp_path)
    args, spared = CASES[case](tmp_path)
    before = spared.read_bytes()
    files_before = sorted(p for p in tmp_path.rglob("*"))
    status = main(["replay", *args, "--true", "y", "--pred", "p"])
    out, err = capsys.readouterr()
    assert status == 2 and out == "", (status, out, err)
    output_flag = next(a for a in args if a in ("--json", "--parquet", "--html"))
    assert err.startswith(f"streammon replay: error: {output_flag} ") and err.count("\n") == 1, err
    assert "input" in err and repr(args[args.index(output_flag) + 1]) in err, err
    assert spared.read_bytes() == before
    assert sorted(p for p in tmp_path.rglob("*")) == files_before  # nothing written, not even a partial file


def test_two_outputs_on_one_file_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--json and --parquet naming one file (one of them through a symlink) is refused before the replay."""
    log = _log(tmp_path)
    (tmp_path / "alias.json").symlink_to(tmp_path / "out.json")
    (tmp_path / "out.json").write_text("old")
    status = main(["replay", str(log), "--true", "y", "--pred", "p", "--json", str(tmp_path / "out.json"),
                   "--parquet", str(tmp_path / "alias.json")])
    _, err = capsys.readouterr()
    assert status == 2 and "are the same file" in err, err
    assert (tmp_path / "out.json").read_text() == "old"


def test_outputs_beside_the_inputs_are_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The check refuses only real clashes: a timeline next to the log (same folder, not an input folder) is written."""
    log = _log(tmp_path)
    status = main(["replay", str(log), "--true", "y", "--pred", "p", "--json", str(tmp_path / "log.json")])
    capsys.readouterr()
    assert status == 0 and (tmp_path / "log.json").read_text().startswith("[{")
    assert log.read_text() == LOG
