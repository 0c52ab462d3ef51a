"""Files written all or nothing: a temporary file of a random name, created exclusively, then renamed.

Every output file streammon writes (the journal is SQLite's) goes through ``write_file`` (binary: the
timeline's Parquet and JSON, through a file object) or ``write_atomically`` (text: the state file, the HTML report).
The temporary file is made by ``tempfile.mkstemp`` in the target's folder: a random name opened with
``O_CREAT | O_EXCL`` and mode 0600, so a symbolic link planted at a predictable name (``.<name>.partial``)
is never followed and the file it points to is never written. The data is written through that file
descriptor, fsynced, renamed over the target and the folder fsynced: a process killed mid-write leaves
the previous file intact, and a failure removes the temporary file.

A symbolic link at the target itself is followed (the user named that path): the file it points to is
replaced, atomically, through a temporary file beside it, and the link is kept.

>>> import pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> write_atomically(folder / "a.txt", "hello")
>>> write_file(folder / "b.bin", lambda out: out.write(b"\\x00\\x01"))
>>> (folder / "a.txt").read_text(), (folder / "b.bin").read_bytes(), sorted(p.name for p in folder.iterdir())
('hello', b'\\x00\\x01', ['a.txt', 'b.bin'])
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

PREFIX_CHARACTERS = 32  # of the target's name in its temporary file's name


def resolve(path: str | os.PathLike[str]) -> Path:
    """Where a write to ``path`` goes: ``path``, or the file a symbolic link there points to."""
    target = Path(path)
    if not target.is_symlink():
        return target
    resolved = Path(os.path.realpath(target))
    if resolved.is_symlink():  # realpath stops at a loop
        raise OSError(errno.ELOOP, "the path is a symbolic link loop", str(target))
    return resolved


def write_file(path: str | os.PathLike[str], write: Callable[[BinaryIO], object]) -> None:
    """Call ``write`` with a binary file object of a new temporary file beside ``path``, fsync, rename.

    ``write`` may close the file object it gets (pyarrow's writers may): the descriptor stays open
    until the data is synced. On any failure the temporary file is removed and ``path`` is untouched.
    """
    target = resolve(path)
    # at most 32 characters of the name (128 bytes), so that a target name near the 255-byte limit still fits
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:PREFIX_CHARACTERS]}.", suffix=".tmp", dir=target.parent)
    try:
        try:
            with os.fdopen(fd, "wb", closefd=False) as handle:
                write(handle)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    directory = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file, fsync and rename: all or nothing.

    A symbolic link at ``path`` is followed: the file it points to is replaced (atomically,
    through a temporary file beside it) and the link is kept.
    """
    data = text.encode("utf-8")
    write_file(path, lambda out: out.write(data))
