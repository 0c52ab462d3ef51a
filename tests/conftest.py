"""Shared fixtures: the Prometheus binaries (skipped with a clear message where they are missing)."""

from __future__ import annotations

import shutil

import pytest

INSTALL_HINT = "install Debian's 'prometheus' package: apt-get update && apt-get install -y prometheus"


@pytest.fixture(scope="session")
def promtool() -> str:
    """Path to promtool, or skip."""
    path = shutil.which("promtool")
    if path is None:
        pytest.skip(f"promtool not found: {INSTALL_HINT}")
    return path


@pytest.fixture(scope="session")
def prometheus_binary() -> str:
    """Path to the prometheus server binary, or skip."""
    path = shutil.which("prometheus")
    if path is None:
        pytest.skip(f"prometheus not found: {INSTALL_HINT}")
    return path
