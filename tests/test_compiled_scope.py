"""The read path's compiled loops call only loops and read only constants of their own file (numba's disk cache)."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import streammon.metrics

COMPILED = Path(streammon.metrics.__file__).parent / "compiled.py"
COMPUTES_WITH = {"math", "np"}  # the modules whose functions a loop calls (numba's own implementations of them)


def _reached(source: str) -> tuple[dict[str, set[str]], set[str]]:
    """Each ``@jit`` loop of ``source``: the global names its body reads; and the names the module imports."""
    tree = ast.parse(source)
    loops = [n for n in tree.body if isinstance(n, ast.FunctionDef)
             and any(isinstance(d, ast.Name) and d.id == "jit" for d in n.decorator_list)]
    reached = {}
    for loop in loops:
        local = {a.arg for a in [*loop.args.posonlyargs, *loop.args.args, *loop.args.kwonlyargs]}
        names = [n for statement in loop.body for n in ast.walk(statement) if isinstance(n, ast.Name)]
        stored = {n.id for n in names if isinstance(n.ctx, ast.Store)}
        reached[loop.name] = {n.id for n in names if isinstance(n.ctx, ast.Load)} - local - stored - set(dir(builtins))
    imported = {alias.asname or alias.name for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)
                for alias in n.names}
    return reached, imported


def _from_other_files(source: str) -> dict[str, list[str]]:
    """The names each ``@jit`` loop of ``source`` reads that are not its file's loops or constants."""
    tree = ast.parse(source)
    assigned = {t.id for n in tree.body if isinstance(n, ast.Assign)
                for target in n.targets for t in ast.walk(target) if isinstance(t, ast.Name)}
    reached, imported = _reached(source)
    own = set(reached) | (assigned - imported) | COMPUTES_WITH
    return {loop: sorted(names - own) for loop, names in reached.items() if names - own}


def test_each_cached_loop_reaches_nothing_defined_in_another_file() -> None:
    """numba invalidates a cached function's machine code only when the function's own file changes, and it
    freezes the globals a function reads as constants: a loop of compiled.py that called a loop, or read a constant,
    of another file would keep stale machine code after that file changed. So every name a ``@jit`` loop reads is a
    ``@jit`` loop or a constant assigned in compiled.py itself, or math / np."""
    source = COMPILED.read_text(encoding="utf-8")
    reached, _ = _reached(source)
    assert _from_other_files(source) == {}
    # what the check sees: window_numbers reaches the other loops, score_matrix the module's constants
    assert {"score_matrix", "reweighted", "mix_shift", "chi2_tail", "RRT", "np"} <= reached["window_numbers"]
    assert {"TPR", "UNKNOWN", "_DIRECT_POWER", "_divide", "math"} <= reached["score_matrix"]


def test_the_check_finds_a_loop_or_a_constant_of_another_file() -> None:
    """compiled.py with its tail test moved to another file and imported back, and the metric codes likewise, is
    caught: window_numbers would call an imported loop, score_matrix read imported constants."""
    source = COMPILED.read_text(encoding="utf-8")
    start, end = source.index("@jit\ndef chi2_tail("), source.index("@jit\ndef chi2_tails(")
    moved = source[:start] + source[end:]
    imports = "import numpy as np\n"
    moved = moved.replace(imports, imports + "\nfrom streammon.metrics.tails import chi2_tail\n")
    codes = moved.index("(TPR, TNR,")
    moved = moved[:codes] + "from streammon.metrics.codes import TPR, TNR, UNKNOWN\n(_TPR, _TNR," + moved[codes + 10:]
    found = _from_other_files(moved)
    assert "chi2_tail" in found["window_numbers"] and "chi2_tail" in found["mix_shifts"]
    assert {"TPR", "TNR", "UNKNOWN"} <= set(found["score_matrix"])
