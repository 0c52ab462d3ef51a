"""numba's disk cache serves no stale machine code when another file a loop reaches changes (the rule of
``streammon.metrics.jitting``), measured in fresh processes: the design kept, and the one it replaced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import streammon

DEPENDENCY = '''
from streammon.metrics.jitting import compiled

SCALE = {scale}


@compiled
def helper(x):
    return x * SCALE + {offset}
'''

REACHING = '''
import dependency
from dependency import SCALE, helper
from streammon.metrics.jitting import compiled, fingerprint


@compiled
def unkeyed(x):  # the design before: another file's loop and constant, read as globals
    return helper(x) + SCALE


def _keyed(reaches):
    @compiled
    def keyed(x):  # exact_ranking_loop.ranking_values: built in a factory closing over the file's fingerprint
        reaches
        return helper(x) + SCALE
    return keyed


def _valued(scale):
    @compiled
    def valued(x):  # detection.kernel._scan: a closure over the value it freezes
        return x * scale
    return valued


keyed = _keyed(fingerprint(dependency))
valued = _valued(SCALE)
'''

RUN = '''
import json, reaching
loops = {name: getattr(reaching, name) for name in ("unkeyed", "keyed", "valued")}
values = {name: float(loop(1.0)) for name, loop in loops.items()}
hits = {name: sum(loop.stats.cache_hits.values()) for name, loop in loops.items()}
print(json.dumps({"values": values, "hits": hits}))
'''


def _run(folder: Path) -> dict[str, dict[str, float]]:
    """One fresh process that imports ``reaching`` and calls its loops at 1.0 (numba's cache in ``folder``)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(folder / "cache"), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join([str(folder), str(Path(streammon.__file__).parents[1])])}
    env.pop("NUMBA_DISABLE_JIT", None)
    done = subprocess.run([sys.executable, "-c", RUN], cwd=folder, env=env, capture_output=True, text=True,
                          check=True, timeout=120)
    result: dict[str, dict[str, float]] = json.loads(done.stdout)
    return result


def _write(folder: Path, scale: float, offset: float) -> None:
    (folder / "dependency.py").write_text(textwrap.dedent(DEPENDENCY.format(scale=scale, offset=offset)),
                                          encoding="utf-8")


def _expected(scale: float, offset: float) -> dict[str, float]:
    """The loops' values at 1.0, by arithmetic: helper(1) = scale + offset."""
    return {"unkeyed": scale + offset + scale, "keyed": scale + offset + scale, "valued": scale}


def test_a_keyed_loop_follows_the_file_it_reaches_where_an_unkeyed_one_stays_stale(tmp_path: Path) -> None:
    """A cached loop that calls another file's loop and reads its constant is compiled anew after that file (only)
    changes when it is built in a factory closing over the file's ``fingerprint``, or over the value it freezes;
    the same loop reading them as globals keeps the old machine code and the old result (numba's stamp is the
    loop's own file). Unchanged files are served from the cache, both ways."""
    (tmp_path / "reaching.py").write_text(REACHING, encoding="utf-8")
    _write(tmp_path, 2.0, 1.0)
    first = _run(tmp_path)
    assert first["values"] == _expected(2.0, 1.0)
    again = _run(tmp_path)
    assert again["values"] == _expected(2.0, 1.0)
    assert again["hits"] == {"unkeyed": 1, "keyed": 1, "valued": 1}  # the cache is in use
    _write(tmp_path, 3.0, 10.0)  # the other file changes; reaching.py does not
    changed = _run(tmp_path)
    assert changed["values"]["keyed"] == _expected(3.0, 10.0)["keyed"]
    assert changed["values"]["valued"] == _expected(3.0, 10.0)["valued"]
    assert changed["hits"]["keyed"] == 0 and changed["hits"]["valued"] == 0  # compiled anew
    # the design replaced: numba serves the old machine code (helper and SCALE as they were)
    assert changed["values"]["unkeyed"] == _expected(2.0, 1.0)["unkeyed"] != _expected(3.0, 10.0)["unkeyed"]
    assert changed["hits"]["unkeyed"] == 1
    last = _run(tmp_path)
    assert last["values"]["keyed"] == _expected(3.0, 10.0)["keyed"] and last["hits"]["keyed"] == 1
