"""The built package is typed: a user's `mypy --strict` checks code against streammon's own annotations (PEP 561)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

USER_CODE = '''\
from streammon import Monitor, Report, Sliding


def build() -> Monitor:
    return Monitor([Sliding(100)], reference={"legit": 99, "fraud": 1})


def headline(report: Report) -> float:
    return report.windows["sliding_100"].scores["acsa"]


monitor = build()
monitor.update_many(["legit", "fraud"], ["legit", "legit"])
report = monitor.report()
acsa: float = headline(report)
data: dict[str, object] = report.to_dict()
'''

WRONG_USE = USER_CODE + 'name: str = headline(report)\n'


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package as a user gets it: a wheel built from this tree, unpacked where site-packages would be."""
    work = tmp_path_factory.mktemp("typed")
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "streammon", source / "streammon", ignore=shutil.ignore_patterns("__pycache__"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(work / "dist"),
                            str(source)], capture_output=True, text=True, check=False, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (work / "dist").glob("streammon-*.whl")
    site = work / "site"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert "streammon/py.typed" in names
        (license_file,) = [n for n in names if ".dist-info/" in n and n.endswith("LICENSE")]
        assert archive.read(license_file).decode().startswith("MIT License\n\nCopyright (c) 2026 the streammon authors")
        archive.extractall(site)
    return site


def _mypy(site: Path | None, code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """mypy --strict on ``code`` in a folder of its own, with ``site`` on the path (None: the environment alone)."""
    user = tmp_path / "user"
    user.mkdir()
    (user / "app.py").write_text(code, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key not in ("MYPYPATH", "PYTHONPATH")}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
                           "app.py"], cwd=user, env=env, capture_output=True, text=True, check=False, timeout=600)


def test_user_code_passes_mypy_strict_against_the_installed_package(installed: Path, tmp_path: Path) -> None:
    """Code using Monitor and its Report type-checks under --strict: the wheel ships py.typed and the annotations."""
    result = _mypy(installed, USER_CODE, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found in 1 source file" in result.stdout


def test_mypy_sees_the_real_types_not_any(installed: Path, tmp_path: Path) -> None:
    """A float assigned to a str is caught: mypy read streammon's annotations instead of treating it as Any."""
    result = _mypy(installed, WRONG_USE, tmp_path)
    assert result.returncode == 1
    line = len(WRONG_USE.splitlines())
    assert (f'app.py:{line}: error: Incompatible types in assignment (expression has type "float", variable has type '
            '"str")') in result.stdout, result.stdout


def test_mypy_finds_the_package_after_the_readmes_editable_install(tmp_path: Path) -> None:
    """After `pip install -e .` (what the README's commands run), `mypy --strict` in a folder outside the project
    finds streammon and its types: the editable install is a path mypy follows (hatchling's .pth), not an import
    hook it cannot see (setuptools' install of this layout gave "Cannot find implementation or library stub")."""
    result = _mypy(None, WRONG_USE, tmp_path)
    assert "Cannot find implementation" not in result.stdout, result.stdout
    assert 'error: Incompatible types in assignment (expression has type "float"' in result.stdout, result.stdout
