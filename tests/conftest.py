"""Shared fixtures: the Prometheus and Alertmanager binaries and a TLS certificate (missing: a skip
saying how to install it, under CI a failure)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# CI replays the same examples every run (a landing must not depend on luck); local runs explore anew.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

INSTALL_HINT = "install Debian's 'prometheus' package: apt-get update && apt-get install -y prometheus"
ALERTMANAGER_HINT = ("install Debian's 'prometheus-alertmanager' package: "
                     "apt-get update && apt-get install -y prometheus-alertmanager")


def missing(what: str, hint: str) -> None:
    """A real component the tests need is absent: a failure under CI (``CI`` set), else a skip saying how to get it."""
    message = f"{what} not found: {hint} (bash .ci/test installs it as root)"
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(f"{message}; under CI a missing component is a failure, not a skip")
    pytest.skip(message)


def _binary(name: str, hint: str = INSTALL_HINT) -> str:
    """The binary's path; where missing, skip — but fail under CI, where a skip would hide the gap."""
    path = shutil.which(name)
    if path is None:
        missing(name, hint)
    assert path is not None
    return path


@pytest.fixture(scope="session")
def promtool() -> str:
    """Path to promtool, or skip."""
    return _binary("promtool")


@pytest.fixture(scope="session")
def prometheus_binary() -> str:
    """Path to the prometheus server binary, or skip."""
    return _binary("prometheus")


@pytest.fixture(scope="session")
def alertmanager_binary() -> str:
    """Path to the Alertmanager server binary (Debian names it prometheus-alertmanager), or skip."""
    return _binary("prometheus-alertmanager" if shutil.which("prometheus-alertmanager") else "alertmanager",
                   ALERTMANAGER_HINT)


@pytest.fixture(scope="session")
def amtool() -> str:
    """Path to amtool, or skip."""
    return _binary("amtool", ALERTMANAGER_HINT)


@pytest.fixture(scope="session")
def tls_cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A throwaway self-signed certificate and key for 127.0.0.1 (made with openssl, or skip)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        missing("openssl", "apt-get install -y openssl (makes a throwaway certificate)")
    assert openssl is not None
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key


CHROMIUM_HINT = "install Debian's 'chromium' package: apt-get update && apt-get install -y chromium"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium for the module (stopped by PID at the end): the tests that open HTML reports."""
    binary = shutil.which("chromium")
    if binary is None:
        missing("chromium", CHROMIUM_HINT)
    try:
        import websocket  # noqa: F401
    except ImportError:
        missing("websocket-client", "pip install websocket-client (in the test extra)")
    from tests.browser import Browser

    chromium = Browser(str(binary), tmp_path_factory.mktemp("chromium"))
    try:
        yield chromium
    finally:
        chromium.close()
