"""Every fenced code block of the docs (docs/**/*.md) and of README.md runs or is checked, so none can rot.

- ```python blocks: a block of ``>>>`` examples is a doctest, and a page's doctest blocks run in order in one
  namespace (as ``--doctest-glob`` runs the README's); any other block is executed in a fresh namespace in a
  temporary working folder.
- ```bash blocks: ``bash -n`` accepts them; every ``streammon ...`` command line is parsed by the real argparse
  parser (nothing runs); ``python examples/X.py`` names a file that exists; ``pip install '.[extra]'`` names
  extras that ``pyproject.toml`` declares.
- ```toml blocks are parsed, and a server configuration by ``streammon.serve.config.parse``; ```json and
  ```yaml blocks are parsed.
- ```text, ```promql and ```go blocks (and bare fences) are illustrations, not run.

A line ``<!-- skip: WHY -->`` right before a fence runs that block no further than its parse, saying why;
``<!-- fixture: NAME -->`` prepares the temporary folder first (``FIXTURES``: the files a block reads, such as a
quarter's log).
"""

from __future__ import annotations

import argparse
import doctest
import json
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
DIRECTIVE = re.compile(r"<!-- (skip|fixture): (.+?) -->\s*$")
ILLUSTRATIONS = {"", "text", "promql", "go"}
CHECKED = {"python", "bash", "toml", "json", "yaml"}


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and text, and the directive before it."""

    page: Path
    line: int
    lang: str
    code: str
    skip: str | None
    fixtures: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def doctest(self) -> bool:
        return self.code.lstrip().startswith(">>>")


def blocks_of(page: Path) -> list[Block]:
    """The fenced blocks of one Markdown page, with the directive comment on the line before each."""
    text = page.read_text("utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        directive = DIRECTIVE.search(before)
        skip = directive.group(2) if directive and directive.group(1) == "skip" else None
        fixtures = tuple(directive.group(2).split(", ")) if directive and directive.group(1) == "fixture" else ()
        found.append(Block(page, text.count("\n", 0, match.start()) + 1, match.group(1), match.group(2), skip,
                           fixtures))
    return found


BLOCKS = [block for page in PAGES for block in blocks_of(page)]


def of(lang: str, *, doctests: bool | None = None) -> list[Any]:
    """The blocks of one language as pytest parameters (skipped ones marked, with their reason)."""
    chosen = [b for b in BLOCKS if b.lang == lang and (doctests is None or b.doctest == doctests)]
    return [pytest.param(b, id=b.name) for b in chosen]


# --- fixtures a block may ask for ----------------------------------------------------------------------------


def quarter_log(folder: Path) -> None:
    """A quarter's log as Parquet (logs/2024-q3/), its validation counts, and predictions and labels apart."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(7)
    n = 20_000
    label = np.where(rng.random(n) < 0.02, "fraud", "legit")
    right = rng.random(n) < 0.9
    prediction = np.where(right, label, np.where(label == "fraud", "legit", "fraud"))
    start = np.datetime64("2024-07-01T00:00:00", "us")
    ts = start + np.sort(rng.integers(0, 90 * 86_400, n)).astype("timedelta64[s]")
    table = pa.table({"label": label, "prediction": prediction,
                      "ts": pa.array(ts, pa.timestamp("us", tz="UTC")), "id": np.arange(n)})
    (folder / "logs" / "2024-q3").mkdir(parents=True)
    pq.write_table(table, folder / "logs" / "2024-q3" / "part-0.parquet", row_group_size=5_000)
    (folder / "validation.json").write_text(
        json.dumps({"legit": {"legit": 9_000, "fraud": 1_000}, "fraud": {"legit": 20, "fraud": 180}}))
    pq.write_table(table.select(["id", "prediction", "ts"]), folder / "predictions.parquet")
    labelled = table.select(["id", "label", "ts"]).slice(0, n // 2).to_pandas()
    labelled.to_csv(folder / "labels.csv", index=False)


FIXTURES: dict[str, Callable[[Path], None]] = {"quarter-log": quarter_log}


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh temporary working folder (a block's files go there)."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path


def prepare(block: Block, folder: Path) -> None:
    for name in block.fixtures:
        assert name in FIXTURES, f"{block.name}: unknown fixture {name!r} (known: {sorted(FIXTURES)})"
        FIXTURES[name](folder)


# --- python ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("block", of("python", doctests=False))
def test_python_block_runs(block: Block, workdir: Path) -> None:
    """A plain ```python block runs without an error in a fresh namespace and a temporary folder; a block marked
    skip (it needs what no test machine has: a cluster, a bucket) is compiled only, so its syntax cannot rot."""
    code = compile(block.code, block.name, "exec")
    if block.skip:
        return
    prepare(block, workdir)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    exec(code, namespace)


DOCTEST_PAGES = sorted({b.page for b in BLOCKS if b.lang == "python" and b.doctest and b.page.name != "README.md"})


@pytest.mark.parametrize("page", DOCTEST_PAGES, ids=[str(p.relative_to(ROOT)) for p in DOCTEST_PAGES])
def test_doctest_blocks_pass(page: Path, workdir: Path) -> None:
    """A page's ``>>>`` blocks, run in order in one namespace, print what they show (README: --doctest-glob)."""
    blocks = [b for b in blocks_of(page) if b.lang == "python" and b.doctest and not b.skip]
    for block in blocks:
        prepare(block, workdir)
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    for block in blocks:
        test = parser.get_doctest(block.code, namespace, block.name, str(page), block.line)
        runner.run(test, clear_globs=False)
        namespace.update(test.globs)  # a DocTest runs on a copy: the next block sees what this one defined
    assert runner.failures == 0, f"{runner.failures} doctest example(s) of {page.name} failed (printed above)"


# --- bash -----------------------------------------------------------------------------------------------------


class Parsed(Exception):
    """Raised instead of running a command once argparse accepted its line."""


def commands(script: str) -> list[list[str]]:
    """The simple commands of a shell script (continuations joined, comments and redirections dropped, split at
    newlines and ; & | && ||)."""
    found: list[list[str]] = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        current: list[str] = []
        redirected = False
        for token in lexer:
            if redirected:
                redirected = False  # the file a redirection names
            elif set(token) <= set("<>"):
                redirected = True
            elif set(token) <= set(";&|()"):
                found.append(current)
                current = []
            else:
                current.append(token)
        found.append(current)
    return [c for c in found if c]


def check_streammon(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """argparse accepts the command line (``-h``/``--version`` exit 0); nothing is run."""
    from streammon.cli import main
    from streammon.commands.common import Parser

    original = Parser.parse_args

    def parse_only(self: argparse.ArgumentParser, args: Any = None, namespace: Any = None) -> Any:
        raise Parsed(original(self, args, namespace))

    with monkeypatch.context() as patch:
        patch.setattr(Parser, "parse_args", parse_only)
        try:
            main(argv)
        except Parsed:
            return
        except SystemExit as exit_:
            assert exit_.code == 0, f"streammon {shlex.join(argv)}: argparse refused it (status {exit_.code})"
            return
    pytest.fail(f"streammon {shlex.join(argv)}: not parsed")


def extras() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    return set(project["optional-dependencies"])


@pytest.mark.parametrize("block", of("bash"))
def test_bash_block_is_valid(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ```bash block is valid shell, its streammon command lines parse, its files and extras exist."""
    syntax = subprocess.run(["bash", "-n"], input=block.code, text=True, capture_output=True, check=False)
    assert syntax.returncode == 0, f"{block.name}: bash -n: {syntax.stderr}"
    for line in commands(block.code):
        command = list(line)
        while command and ("=" in command[0] or command[0] in ("nice", "sudo", "exec")):
            command = command[1:]  # VAR=value prefixes, nice
        if not command:
            continue
        if command[0] == "streammon":
            check_streammon(command[1:], monkeypatch)
        elif command[0] in ("python", "python3") and command[1:] and command[1].endswith(".py"):
            assert (ROOT / command[1]).is_file(), f"{block.name}: {command[1]} does not exist"
        elif command[:2] == ["pip", "install"]:
            for word in command[2:]:
                if "[" in word:
                    wanted = set(word[word.index("[") + 1 : word.rindex("]")].split(","))
                    assert wanted <= extras(), f"{block.name}: unknown extras {wanted - extras()}"


# --- toml, json, yaml -----------------------------------------------------------------------------------------

MINIMAL_SERVER = '[server]\nlisten = "127.0.0.1:9464"\nstate_dir = "state"\n'


@pytest.mark.parametrize("block", of("toml"))
def test_toml_block_parses(block: Block, tmp_path: Path) -> None:
    """A ```toml block is TOML; a server configuration (or a [models] table of one) passes the server's checks."""
    document = tomllib.loads(block.code)
    if "server" in document or "models" in document:
        from streammon.serve.config import parse

        text = block.code if "server" in document else MINIMAL_SERVER + block.code
        config = parse(text, base=tmp_path)
        assert config.models, f"{block.name}: no model"


@pytest.mark.parametrize("block", of("json"))
def test_json_block_parses(block: Block) -> None:
    """A ```json block is JSON."""
    json.loads(block.code)


@pytest.mark.parametrize("block", of("yaml"))
def test_yaml_block_parses(block: Block) -> None:
    """A ```yaml block is YAML."""
    yaml.safe_load(block.code)


# --- the pages themselves -------------------------------------------------------------------------------------


def test_every_block_is_run_or_checked() -> None:
    """No fence of a language this runner neither runs nor checks (a new kind must get its check first)."""
    unknown = [f"{b.name} ({b.lang})" for b in BLOCKS if b.lang not in CHECKED | ILLUSTRATIONS]
    assert not unknown
    assert sum(b.lang in CHECKED for b in BLOCKS) >= 40  # the runner really finds the docs' blocks


def test_skips_say_why() -> None:
    """A skipped block names why and what covers it instead (a test file or an example)."""
    for block in BLOCKS:
        if block.skip:
            assert re.search(r"(tests|examples)/\S+", block.skip), f"{block.name}: skip without a cover: {block.skip}"


def test_commands_split_like_a_shell() -> None:
    """The bash checker finds each simple command of a line as the shell would."""
    script = ("pip install -e . && streammon demo &  # comment\nstreammon replay a.csv --true y \\\n  --pred p | head"
              "\nstreammon rules > out.yml\npromtool check rules out.yml")
    assert commands(script) == [["pip", "install", "-e", "."], ["streammon", "demo"],
                                ["streammon", "replay", "a.csv", "--true", "y", "--pred", "p"], ["head"],
                                ["streammon", "rules"], ["promtool", "check", "rules", "out.yml"]]


def test_a_bad_streammon_line_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """The argparse check refuses a flag the real parser does not know."""
    with pytest.raises(AssertionError, match="argparse refused"):
        check_streammon(["replay", "log.csv", "--no-such-flag"], monkeypatch)
    check_streammon(["rules", "--profile", "demo"], monkeypatch)


def test_every_alert_has_a_runbook() -> None:
    """Each alert of grafana/rules/streammon.rules.yml has a runbook heading on the alerts page (the hook's check)."""
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import hooks
    finally:
        sys.path.remove(str(ROOT / "docs"))
    page = (ROOT / "docs" / "reference" / "alerts.md").read_text("utf-8")
    hooks.check_runbooks(page)
    with pytest.raises(ValueError, match="StreammonIncompetent"):
        hooks.check_runbooks(page.replace("### StreammonIncompetent\n", "### Incompetent\n"))


def test_readme_is_short() -> None:
    """The README stays at most 250 lines (the rest lives in docs/)."""
    assert len((ROOT / "README.md").read_text("utf-8").splitlines()) <= 250


def test_the_configuration_page_lists_every_key() -> None:
    """The server configuration page has a row for each key the parser knows, and no other."""
    from streammon.serve import config

    page = (ROOT / "docs" / "reference" / "server-config.md").read_text("utf-8")
    server, models = page.split("## `[models.NAME]`")
    listed = {key for part in (server,) for key in re.findall(r"^\| `(\w+)`(?: / `(\w+)`|, `(\w+)`)?", part, re.M)
              for key in key if key}
    listed_models = {m for m in re.findall(r"^\| `(\w+)` \|", models, re.MULTILINE)}
    assert listed == set(config._SERVER_KEYS)
    assert listed_models == set(config._MODEL_KEYS)


def test_docstring_examples_are_fenced_for_the_api_reference() -> None:
    """The griffe extension fences each run of ``>>>`` lines (with its output) and leaves the prose alone."""
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from griffe_doctests import fence_examples
    finally:
        sys.path.remove(str(ROOT / "docs"))
    text = "Prose.\n\n    >>> 1 + 1\n    2\n\nMore prose.\n>>> x = 1"
    assert fence_examples(text) == ("Prose.\n\n    ```pycon\n    >>> 1 + 1\n    2\n    ```\n\nMore prose.\n"
                                    "```pycon\n>>> x = 1\n```")


def test_the_readmes_links_lead_to_files() -> None:
    """Every relative link of the README names a file of the repository (mkdocs --strict checks the docs' own)."""
    readme = (ROOT / "README.md").read_text("utf-8")
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", readme) if "://" not in t and t[0] != "#"]
    assert len(targets) >= 20
    assert [t for t in targets if not (ROOT / t).is_file()] == []
