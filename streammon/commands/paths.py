"""Output paths checked against the inputs before anything is read or written.

An output that is one of the inputs (the same file by device and inode: through a symlink, a hard
link or another relative path too), lies in an input folder (it would be read as a log by the next
replay of the folder) or is another output's file is refused with a message naming both.

>>> import pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "log.csv").write_text("y,p\\n1,1\\n")
>>> clash({"PATH": str(folder / "log.csv")}, {"--json": str(folder / "." / "log.csv")}) is not None
True
>>> clash({"PATH": str(folder / "log.csv")}, {"--json": str(folder / "timeline.json")}) is None
True
"""

from __future__ import annotations

import os
from pathlib import Path

Identity = tuple[int, int]


def _identity(path: Path) -> Identity | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _inputs(inputs: dict[str, str | None]) -> tuple[dict[Identity, tuple[str, str]], dict[Identity, tuple[str, str]]]:
    """Files and folders of the inputs, by identity: (flag, what the user gave)."""
    files: dict[Identity, tuple[str, str]] = {}
    folders: dict[Identity, tuple[str, str]] = {}
    for flag, given in inputs.items():
        if not given:
            continue
        path = Path(given)
        found = _identity(path)
        if found is None:
            continue
        if path.is_dir():
            folders[found] = (flag, given)
            for inner in path.rglob("*"):
                inner_id = _identity(inner)
                if inner_id is not None:
                    (folders if inner.is_dir() else files).setdefault(inner_id, (f"folder {flag}", given))
        else:
            files[found] = (flag, given)
    return files, folders


def clash(inputs: dict[str, str | None], outputs: dict[str, str | None]) -> str | None:
    """Why an output cannot be written (it is an input, is in an input folder, or is another output), or None.

    ``inputs`` and ``outputs`` map a flag (``PATH``, ``--labels``, ``--json``...) to the path given with it.
    """
    files, folders = _inputs(inputs)
    seen: dict[object, tuple[str, str]] = {}
    for flag, given in outputs.items():
        if not given:
            continue
        path = Path(given)
        found = _identity(path)
        if found is not None and found in files:
            source, text = files[found]
            inside = source.startswith("folder ")
            what = f"a file of the input {source}" if inside else f"the input {source}"
            return (f"{flag} {given!r} is {what} {text!r}" + ("" if inside or text == given else " (the same file)")
                    + ": writing it would replace the input; give another output path")
        if found is not None and found in folders:
            source, text = folders[found]
            return f"{flag} {given!r} is the input folder {source} {text!r}: give an output file outside it"
        parent = path.resolve().parent
        for folder in (parent, *parent.parents):
            folder_id = _identity(folder)
            if folder_id is not None and folder_id in folders:
                source, text = folders[folder_id]
                return (f"{flag} {given!r} is inside the input folder {source} {text!r}: the next replay of the "
                        "folder would read it as a log; give an output path outside it")
        key: object = found if found is not None else str(path.resolve())
        if key in seen:
            other, other_text = seen[key]
            return f"{flag} {given!r} and {other} {other_text!r} are the same file: give each output its own path"
        seen[key] = (flag, given)
    return None
