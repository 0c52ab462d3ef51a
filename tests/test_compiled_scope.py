"""Every compiled loop reads only loops and constants of its own file, or reaches another file through its cache key.

numba's disk cache: ``streammon.metrics.jitting`` (the rule), ``tests/compiled_scope.py`` (the check)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import numpy as np

from tests.compiled_scope import PACKAGE, compiled_modules, fingerprinted, foreign, keys, loop_reads, scope_of

LOOPS = {  # every module that compiles loops, and how: decorated, passed to ``compiled``, or built by a factory
    "streammon.detection.kernel", "streammon.detection.simulate", "streammon.logs.page_walk",
    "streammon.metrics.bin_sort", "streammon.metrics.bin_span", "streammon.metrics.bin_values",
    "streammon.metrics.binomial_loops", "streammon.metrics.bucket_cells", "streammon.metrics.compiled",
    "streammon.metrics.distinct_bins", "streammon.metrics.exact_ranking_loop",
    "streammon.metrics.score_kernel", "streammon.metrics.value_census", "streammon.metrics.window_score_loop",
}
VALUES = (bool, int, float, str, tuple, np.ndarray)  # what numba pickles into its cache key by content


def _source(module: str) -> str:
    return (PACKAGE.parent / Path(*module.split("."))).with_suffix(".py").read_text(encoding="utf-8")


def _unkeyed(module: str, source: str | None = None) -> dict[str, dict[str, set[str]]]:
    """The loops of ``module`` that reach another file's names without a factory keyed on that file."""
    scopes = compiled_modules()
    scope = scope_of(source, module) if source is not None else scopes[module]

    def required(of: str, loop: str, seen: frozenset[str]) -> set[str]:  # the files a loop's machine code holds
        there = scopes.get(of)
        if there is None or loop in seen or loop not in there.loops:
            return set()
        out = set()
        for home, names in foreign(there).get(loop, {}).items():
            out.add(home)
            for name in names:
                out |= required(home, name, seen | {loop})
        return out

    bad = {}
    for loop, reached in foreign(scope).items():
        needed = set(reached)
        for home, names in reached.items():
            for name in names:
                needed |= required(home, name, frozenset({loop}))
        covered: set[str] = set()
        if loop in scope.factory:
            per_call = [set().union(*(fingerprinted(scope, arg) or set() for arg in given.values()))
                        for given in keys(scope, loop)]
            covered = set.intersection(*per_call) if per_call else set()
        if needed - covered:
            bad[loop] = {home: reached.get(home, {"(through the loops it calls)"}) for home in needed - covered}
    return bad


def test_the_check_finds_every_module_with_compiled_loops() -> None:
    """The check finds every module of streammon that compiles loops, and their loops however they are made: a
    module-level ``@jit``, a function given to ``jitting.compiled``, a loop built in a factory."""
    scopes = compiled_modules()
    assert set(scopes) == LOOPS
    assert {"_scan"} == set(scopes["streammon.detection.kernel"].loops)
    assert {"_passages"} == set(scopes["streammon.detection.simulate"].loops)
    assert {"_walk"} == set(scopes["streammon.logs.page_walk"].loops)
    assert {"_bin", "_prepare", "_prepare_tally", "_accumulate"} <= set(scopes["streammon.metrics.score_kernel"].loops)
    assert {"_group", "_delong", "ranking_values"} <= set(scopes["streammon.metrics.exact_ranking_loop"].loops)
    assert "_macro" in scopes["streammon.metrics.window_score_loop"].loops
    compiled = scopes["streammon.metrics.compiled"]
    # what the check sees: window_numbers reaches the other loops, score_matrix the module's constants
    assert {"score_matrix", "reweighted", "mix_shift", "chi2_tail", "RRT", "np"} <= loop_reads(
        compiled.loops["window_numbers"])
    assert {"TPR", "UNKNOWN", "_DIRECT_POWER", "_divide", "math"} <= loop_reads(compiled.loops["score_matrix"])
    kernel = scopes["streammon.detection.kernel"]
    assert "members" in loop_reads(kernel.loops["_scan"]) and kernel.factory["_scan"].name == "_scanner"
    # and nothing compiles but through jitting (numba's own decorators would escape the check)
    escaping = ("njit", "numba.jit", "@jit(", "numba.vectorize")
    others = [p for p in PACKAGE.rglob("*.py") if p.name != "jitting.py"
              and any(word in p.read_text(encoding="utf-8") for word in escaping)]
    assert others == []


def test_each_cached_loop_reaches_another_file_only_through_its_cache_key() -> None:
    """numba invalidates a cached function's machine code only when the function's own file changes, and it
    freezes the globals a function reads: a loop that called a loop, or read a constant (or a constant of its
    file made from one), of another file would keep stale machine code after that file changed. So every loop
    reads only its own file's loops and constants and math / np, or is built in a factory that closes over a
    ``fingerprint`` of every file its machine code holds (the files of the loops it calls, and theirs)."""
    assert {module: found for module in LOOPS if (found := _unkeyed(module))} == {}


def test_what_a_factory_closes_over_is_held_by_content_in_the_cache_key() -> None:
    """numba's key pickles the closure's contents: a number, a string, a tuple or an array by value, but a compiled
    function by an id of its process (the cache never hit) and a function by reference (stale). So each name a
    factory-built loop closes over is given a ``fingerprint`` or a value; and no other loop calls a factory-built
    one (its caller's key would not hold the factory's)."""
    built = 0
    for module, scope in compiled_modules().items():
        loaded = importlib.import_module(module)
        for loop in scope.factory:
            built += 1
            assert keys(scope, loop) and all(keys(scope, loop)), (module, loop, "built without a key")
            for given in keys(scope, loop):
                for name, arg in given.items():
                    if fingerprinted(scope, arg) is None:
                        assert isinstance(arg, ast.Name), (module, loop, name, "neither a fingerprint nor a name")
                        value = getattr(loaded, arg.id)
                        assert isinstance(value, VALUES) and not callable(value), (module, loop, name, value)
            assert not [other for other in scope.loops if other != loop and loop in loop_reads(scope.loops[other])]
    assert built >= 2  # exact_ranking_loop.ranking_values (a fingerprint), kernel._scan (the bank's size)


def test_the_check_finds_a_loop_or_a_constant_of_another_file() -> None:
    """The breaches found before the rule covered every module are caught when written back: a loop calling
    another file's loop outside a keyed factory or in one keyed on another file, loops reading another file's
    constants directly, through a constant of their file computed from one, through a loop of their file that
    reads one, or as a default value."""
    ranking = _source("streammon.metrics.exact_ranking_loop")
    start = ranking.index("\ndef _reaching(")
    unkeyed = ranking[:start] + "\n\n@compiled\ndef _ranked(out: Any) -> None:\n" \
        "    _macro(out, out, out, out, out, True, out)\n"
    assert _unkeyed("streammon.metrics.exact_ranking_loop", unkeyed) == {
        "_ranked": {"streammon.metrics.window_score_loop": {"_macro"}}}
    wrong_key = ranking.replace("_reaching(fingerprint(window_score_loop))", "_reaching(fingerprint(jitting))")
    assert _unkeyed("streammon.metrics.exact_ranking_loop", wrong_key) == {
        "ranking_values": {"streammon.metrics.window_score_loop": {"_macro"}}}

    kernel = _source("streammon.metrics.score_kernel")
    frozen = kernel.replace("    span, inv_step, middle_bins, first_middle = layout\n",
                            "    span, inv_step, middle_bins, first_middle = LOGIT_SPAN, INV_STEP, MIDDLE_BINS, 1\n")
    frozen = frozen.replace("    ece_bins = top.shape[1]\n", "    ece_bins = ECE_BINS\n")
    found = _unkeyed("streammon.metrics.score_kernel", frozen)
    assert set(found) == {"_bin", "_prepare", "_prepare_tally", "_accumulate"}  # _prepare: through _bin
    assert found["_bin"] == {"streammon.metrics.score_bins": {"BINS", "LOGIT_SPAN", "TAIL_BINS"}}  # via MIDDLE_BINS
    assert found["_accumulate"] == {"streammon.metrics.score_bins": {"ECE_BINS"}}

    defaulted = kernel.replace("def _add_hist(true: Any, scores: Any, bins: Any, hist: Any, sign: int)",
                               "def _add_hist(true: Any, scores: Any, bins: Any, hist: Any, sign: int = ECE_BINS)")
    assert _unkeyed("streammon.metrics.score_kernel", defaulted) == {
        "_add_hist": {"streammon.metrics.score_bins": {"ECE_BINS"}}}  # numba freezes a default too

    scan = _source("streammon.detection.kernel")
    frozen = scan.replace("for j in range(members):", "for j in range(MEMBERS):")
    assert _unkeyed("streammon.detection.kernel", frozen) == {"_scan": {"streammon.detection.bank": {"MEMBERS"}}}

    compiled = _source("streammon.metrics.compiled")
    start, end = compiled.index("@jit\ndef chi2_tail("), compiled.index("@jit\ndef chi2_tails(")
    moved = compiled[:start] + compiled[end:]
    imports = "import numpy as np\n"
    moved = moved.replace(imports, imports + "\nfrom streammon.metrics.tails import chi2_tail\n")
    codes = moved.index("(TPR, TNR,")
    moved = moved[:codes] + "from streammon.metrics.codes import TPR, TNR, UNKNOWN\n(_TPR, _TNR," + moved[codes + 10:]
    found = _unkeyed("streammon.metrics.compiled", moved)
    assert found["window_numbers"]["streammon.metrics.tails"] == {"chi2_tail"}
    assert {"TPR", "TNR", "UNKNOWN"} <= found["score_matrix"]["streammon.metrics.codes"]
