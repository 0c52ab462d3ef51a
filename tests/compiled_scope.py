"""What streammon's compiled loops read, found in their source: the check behind ``tests/test_compiled_scope.py``.

numba keeps a cached function's machine code while the function's own file is unchanged, and freezes into it the
globals the function reads (``streammon.metrics.jitting``). So a loop may read loops and constants of its own file,
and reach another file only through a factory's closure, which numba's cache key holds: a ``fingerprint`` of the
files whose loops it calls, or the values it freezes.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from pathlib import Path

import streammon

PACKAGE = Path(streammon.__file__).parent
COMPUTES_WITH = {"math", "np"}  # the modules whose functions a loop calls (numba's own implementations of them)
BUILTINS = set(dir(builtins))
COMPILE = "streammon.metrics.jitting.compiled"
FINGERPRINT = "streammon.metrics.jitting.fingerprint"


@dataclass
class Scope:
    """One module's compiled loops and its module-level names, each with where its value comes from."""

    name: str
    loops: dict[str, ast.FunctionDef] = field(default_factory=dict)
    factory: dict[str, ast.FunctionDef] = field(default_factory=dict)  # a loop built in a factory: the factory
    imported: dict[str, str] = field(default_factory=dict)  # a local name: the module, or module.name, it stands for
    assigned: dict[str, set[str]] = field(default_factory=dict)  # a module-level name: the names its value reads
    calls: dict[str, list[ast.Call]] = field(default_factory=dict)  # a factory: the calls that build its loop


def _loads(nodes: list[ast.stmt] | list[ast.expr]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stores(nodes: list[ast.stmt]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def loop_reads(loop: ast.FunctionDef) -> set[str]:
    """The names ``loop``'s body and default values read and it does not bind: its file's globals, or its factory's
    names (closed over). (numba freezes a default too, and its key holds none.)"""
    params = {a.arg for a in [*loop.args.posonlyargs, *loop.args.args, *loop.args.kwonlyargs]}
    defaults = [d for d in [*loop.args.defaults, *loop.args.kw_defaults] if d is not None]
    return (_loads(loop.body) - params - _stores(loop.body) | _loads(defaults)) - BUILTINS


def closed(scope: Scope, loop: str) -> set[str]:
    """The names ``loop`` reads from its factory (none for a loop defined at module level)."""
    outer = scope.factory.get(loop)
    if outer is None:
        return set()
    return loop_reads(scope.loops[loop]) & ({a.arg for a in outer.args.args} | _stores(outer.body))


def scope_of(source: str, name: str) -> Scope:
    """The compiled loops of a module's ``source``: functions decorated by ``compiled`` or by a local wrapper of it
    (``def jit(function): return compiled(function, ...)``), passed to one (``jitting.compiled(_scan)``), or returned
    by a factory whose call is passed to one (``jitting.compiled(_scanner(MEMBERS))``)."""
    tree = ast.parse(source)
    scope = Scope(name)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            scope.imported |= {alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            scope.imported |= {alias.asname or alias.name: alias.name for alias in node.names}
    _find_loops(tree, scope)
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    for outer in functions:
        for inner in outer.body:
            if isinstance(inner, ast.FunctionDef) and inner.name in scope.loops:
                scope.factory[inner.name] = outer
                scope.calls[outer.name] = [c for c in ast.walk(tree) if isinstance(c, ast.Call)
                                           and isinstance(c.func, ast.Name) and c.func.id == outer.name]
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for t in ast.walk(target):
                    if isinstance(t, ast.Name):
                        scope.assigned.setdefault(t.id, set()).update(_loads([node.value]))
        elif isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name not in scope.loops:
            scope.assigned.setdefault(node.name, set())  # the file's own (a loop that calls one fails to compile)
    return scope


def _find_loops(tree: ast.Module, scope: Scope) -> None:
    """Put the compiled loops of ``tree`` into ``scope.loops`` (``scope_of``)."""
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    wrappers = {local for local, origin in scope.imported.items() if origin == COMPILE}

    def compiles(node: ast.expr) -> bool:
        if isinstance(node, ast.Attribute):
            return isinstance(node.value, ast.Name) and f"{scope.imported.get(node.value.id)}.{node.attr}" == COMPILE
        return isinstance(node, ast.Name) and node.id in wrappers

    def compile_calls(within: ast.AST) -> list[ast.Call]:
        return [c for c in ast.walk(within) if isinstance(c, ast.Call) and compiles(c.func) and c.args]

    grew = True
    while grew:  # a wrapper passes its one parameter to a compiling function
        grew = False
        for f in functions.values():
            params = [a.arg for a in f.args.args]
            if f.name not in wrappers and len(params) == 1 and any(
                    isinstance(c.args[0], ast.Name) and c.args[0].id == params[0] for c in compile_calls(f)):
                wrappers.add(f.name)
                grew = True
    for call in compile_calls(tree):
        first = call.args[0]
        if isinstance(first, ast.Name) and first.id in functions:
            scope.loops[first.id] = functions[first.id]
        elif isinstance(first, ast.Call) and isinstance(first.func, ast.Name) and first.func.id in functions:
            for r in ast.walk(functions[first.func.id]):
                if isinstance(r, ast.Return) and isinstance(r.value, ast.Name) and r.value.id in functions:
                    scope.loops[r.value.id] = functions[r.value.id]
    for f in functions.values():
        if f.name not in wrappers and any(compiles(d) for d in f.decorator_list):
            scope.loops[f.name] = f


def foreign(scope: Scope) -> dict[str, dict[str, set[str]]]:
    """Each loop of ``scope`` that reads a name of another file — directly, through a constant of its file computed
    from one, or through a loop of its file that does — with the names it reaches by their home module
    (``{loop: {module: names}}``). A loop's factory's names are not reads of its file's globals (``closed``)."""
    memo: dict[str, dict[str, set[str]]] = {}

    def of(name: str, seen: frozenset[str]) -> dict[str, set[str]]:
        if name in memo:
            return memo[name]
        out: dict[str, set[str]] = {}
        if name in COMPUTES_WITH or name in seen:
            return out
        if name in scope.imported:
            home, _, attr = scope.imported[name].rpartition(".")
            out[home or attr] = {attr}
        elif name in scope.loops or name in scope.assigned:
            reads = (loop_reads(scope.loops[name]) - closed(scope, name) if name in scope.loops
                     else scope.assigned[name])
            for read in reads:
                for module, names in of(read, seen | {name}).items():
                    out.setdefault(module, set()).update(names)
        memo[name] = out
        return out

    return {loop: reached for loop in scope.loops if (reached := of(loop, frozenset()))}


def keys(scope: Scope, loop: str) -> list[dict[str, ast.expr]]:
    """For a loop built in a factory, each call of the factory: what each name the loop closes over is given."""
    outer = scope.factory[loop]
    params = [a.arg for a in outer.args.args]
    names = closed(scope, loop)
    return [{p: arg for p, arg in zip(params, call.args, strict=False) if p in names} for call in
            scope.calls.get(outer.name, [])]


def fingerprinted(scope: Scope, arg: ast.expr) -> set[str] | None:
    """The modules a factory's argument ``fingerprint(a, b)`` covers (None: the argument is not a fingerprint)."""
    func = arg.func if isinstance(arg, ast.Call) else None
    name = (func.id if isinstance(func, ast.Name) else
            f"{func.value.id}.{func.attr}" if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            else "")
    head, _, tail = name.partition(".")
    if f"{scope.imported.get(head, '')}{'.' + tail if tail else ''}" != FINGERPRINT or not isinstance(arg, ast.Call):
        return None
    return {scope.imported.get(a.id, a.id) for a in arg.args if isinstance(a, ast.Name)}


def compiled_modules() -> dict[str, Scope]:
    """Every module of streammon with compiled loops (it names ``jitting``), by name."""
    scopes = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if "jitting" in source and path.name != "jitting.py":
            name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
            scope = scope_of(source, name)
            if scope.loops:
                scopes[name] = scope
    return scopes
