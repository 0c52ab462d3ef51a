"""The server's TOML configuration: ``[server]`` and one ``[models.NAME]`` table per model.

Every ``Monitor`` option has a key (``windows``, ``reference``, ``positive``, ``classes``, ``warmup``,
``max_classes``, ``baseline`` — or ``validation``, a scored validation set's CSV read as a ``streammon.Validation``
by ``streammon.serve.validation_file`` —, ``label_ttl``, ``max_pending``, ``max_pending_bytes``, ``closed``, the
tables ``detector`` and ``policy`` with the fields of ``DetectorSettings`` and ``Policy``), and ``segments`` (segment
keys such as ``["country"]``: a monitor per segment value, at most ``max_segments``, default 100); a key the
server does not know is an error naming it, so a typo never passes silently. Windows are written
``"cumulative"``, ``"sliding:N"``, ``"timed:DURATION"`` (``3600``, ``"3600s"``, ``"1h"``) or
``"timed:DURATION:BUCKETS"`` and reported as ``cumulative``, ``sliding_N``, ``timed_SECONDSs``. The ``detector``
and ``policy`` tables are read as ``streammon replay``'s flags are, by ``streammon.serve.settings``: every field
of ``DetectorSettings`` and ``Policy``, checked the same way (``false_alarm_interval`` may be ``"30d"``).

>>> config = parse(\'\'\'
... [server]
... listen = "127.0.0.1:9464"
... state_dir = "/tmp/streammon-doc"
... checkpoint_every = 60
...
... [models.fraud]
... windows = ["cumulative", "sliding:1000", "timed:3600"]
... reference = { legit = 99000, fraud = 1000 }
... \'\'\')
>>> config.host, config.port, [w.name for w in config.models["fraud"].windows()]
('127.0.0.1', 9464, ['cumulative', 'sliding_1000', 'timed_3600s'])
>>> parse('[server]\\nlisten = "127.0.0.1:9464"\\nstate_dir = "x"\\nchekpoint_every = 5\\n[models.a]')
Traceback (most recent call last):
...
streammon.serve.config.ConfigError: [server]: unknown key 'chekpoint_every' (known: body_timeout, ...)
"""

from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streammon.counting.validation import Validation
from streammon.counting.windows import Window
from streammon.detection.baseline import DetectorSettings
from streammon.findings.distortion import Policy
from streammon.monitor import Monitor
from streammon.pending import DEFAULT_LABEL_TTL, DEFAULT_MAX_PENDING, DEFAULT_MAX_PENDING_BYTES
from streammon.serve import settings
from streammon.serve.validation_file import read_validation

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MODEL_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")  # also a file name under state_dir and a URL segment
DEFAULT_MAX_BODY = 16 * 2**20  # ~500,000 rows of JSON; a batch decodes to ~23x its body in Python objects
DEFAULT_MAX_DECODING = 2  # batches decoded and counted at once (the others wait): bounds the decoding memory
DEFAULT_MAX_SEGMENTS = 100  # monitors of one segmented model: each holds every window of the model
SEGMENT_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")


class ConfigError(ValueError):
    """A configuration the server cannot run: the message names the table, the key and what was expected."""


@dataclass(frozen=True)
class ModelConfig:
    """One ``[models.NAME]`` table: the options of its ``Monitor``."""

    name: str
    window_specs: tuple[str, ...] = ("cumulative", "sliding:1000", "sliding:10000", "timed:3600")
    reference: dict[Any, Any] | None = None
    positive: Any = None
    classes: tuple[Any, ...] | None = None
    warmup: int = 1000
    max_classes: int = 256
    baseline: dict[Any, dict[Any, int]] | None = None
    label_ttl: float = DEFAULT_LABEL_TTL
    max_pending: int = DEFAULT_MAX_PENDING
    max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES
    detector: DetectorSettings = field(default_factory=DetectorSettings)
    policy: Policy = field(default_factory=Policy)
    segments: tuple[str, ...] = ()
    max_segments: int = DEFAULT_MAX_SEGMENTS
    closed: bool = False
    validation: Validation | None = None  # read from the model's validation = "FILE.csv", once

    def windows(self) -> list[Window]:
        """Fresh window objects of this model (each monitor needs its own)."""
        return [window_of(spec, f"[models.{self.name}] windows") for spec in self.window_specs]

    def options(self) -> dict[str, Any]:
        """The keyword arguments of ``Monitor`` (but ``pending``)."""
        return {"windows": self.windows(), "reference": self.reference, "positive": self.positive,
                "classes": self.classes, "warmup": self.warmup, "max_classes": self.max_classes,
                "baseline": self.baseline if self.validation is None else self.validation,
                "label_ttl": self.label_ttl, "max_pending": self.max_pending,
                "max_pending_bytes": self.max_pending_bytes,
                "detector": self.detector, "policy": self.policy, "closed": self.closed}


@dataclass(frozen=True)
class ServerConfig:
    """The ``[server]`` table and the models."""

    host: str
    port: int
    state_dir: Path
    models: dict[str, ModelConfig]
    checkpoint_every: float = 60.0
    token: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    client_cafile: str | None = None
    client_auth_required: bool = False
    max_connections: int = 64
    request_timeout: float = 5.0
    body_timeout: float = 30.0
    write_timeout: float = 10.0
    keep_alive: float = 30.0
    max_header_bytes: int = 8192
    max_body_bytes: int = DEFAULT_MAX_BODY
    max_decoding: int = DEFAULT_MAX_DECODING
    distortion_prone: bool = False


_SERVER_KEYS = {"listen", "state_dir", "checkpoint_every", "token", "token_file", "certfile", "keyfile",
                "client_cafile", "client_auth_required", "max_connections", "request_timeout", "body_timeout",
                "write_timeout", "keep_alive", "max_header_bytes", "max_body_bytes", "max_decoding", "distortion_prone"}
_MODEL_KEYS = {"windows", "reference", "positive", "classes", "warmup", "max_classes", "baseline", "label_ttl",
               "max_pending", "max_pending_bytes", "detector", "policy", "segments", "max_segments", "closed",
               "validation"}


def load(path: str | os.PathLike[str]) -> ServerConfig:
    """Read and check the TOML file at ``path``."""
    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the configuration {os.fspath(path)}: {exc}") from exc
    return parse(text, base=Path(path).resolve().parent)


def parse(text: str, *, base: Path | None = None) -> ServerConfig:
    """Check a configuration's TOML text (relative paths are taken from ``base``, default the working folder)."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"the configuration is not valid TOML: {exc}") from exc
    _known(document, {"server", "models"}, "the top level")
    server = _table(document.get("server"), "[server]")
    _known(server, _SERVER_KEYS, "[server]")
    host, port = _listen(server.get("listen"))
    if "state_dir" not in server:
        raise ConfigError("[server]: state_dir is missing (the folder of journals and checkpoints)")
    base = base or Path.cwd()
    state_dir = base / _text(server["state_dir"], "[server] state_dir")
    models = _table(document.get("models"), "[models]")
    if not models:
        raise ConfigError("[models]: no model configured: add a table [models.NAME]")
    options = _server_options(server, base)
    return ServerConfig(host=host, port=port, state_dir=state_dir,
                        models={name: _model(name, table, base) for name, table in models.items()}, **options)


def _server_options(server: dict[str, Any], base: Path) -> dict[str, Any]:
    """The optional keys of ``[server]``, checked."""
    options: dict[str, Any] = {}
    for key in ("checkpoint_every", "request_timeout", "body_timeout", "write_timeout", "keep_alive"):
        if key in server:
            options[key] = _seconds(server[key], f"[server] {key}", zero=key == "keep_alive")
    for key in ("max_connections", "max_header_bytes", "max_body_bytes", "max_decoding"):
        if key in server:
            options[key] = _integer(server[key], f"[server] {key}", 1, 2**40)
    for key in ("certfile", "keyfile", "client_cafile"):
        if key in server:
            options[key] = str(base / _text(server[key], f"[server] {key}"))
    for key in ("client_auth_required", "distortion_prone"):
        if key in server:
            options[key] = _flag(server[key], f"[server] {key}")
    options["token"] = _token(server, base)
    if "certfile" not in options and ("keyfile" in options or "client_cafile" in options):
        raise ConfigError("[server]: keyfile and client_cafile need certfile (TLS)")
    return options


def window_of(spec: Any, where: str) -> Window:
    """A window from its spec (``streammon.serve.settings.window_of``), a ``ConfigError`` when it is not one."""
    try:
        return settings.window_of(spec, where)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _model(name: str, table: Any, base: Path) -> ModelConfig:
    where = f"[models.{name}]"
    if not isinstance(name, str) or MODEL_NAME.fullmatch(name) is None:
        raise ConfigError(f"{where}: a model name is 1 to 64 letters, digits, '_', '.' or '-' (not first), "
                          f"got {name!r}")
    body = _table(table, where)
    _known(body, _MODEL_KEYS, where)
    options = {**_model_labels(body, where), **_model_settings(body, where)}
    if "validation" in body:
        if "baseline" in body:
            raise ConfigError(f"{where}: give baseline (confusion counts) or validation (a scored validation set's "
                              "CSV, which holds its counts), not both")
        try:
            options["validation"] = read_validation(base / _text(body["validation"], f"{where} validation"),
                                                    positive=options.get("positive"),
                                                    classes=options.get("classes"), where=where)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    config = ModelConfig(name=name, **options)
    try:  # every option checked now, by the monitor itself, not at the first batch
        Monitor(**config.options())
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from exc
    return config


def _model_labels(body: dict[str, Any], where: str) -> dict[str, Any]:
    """The windows and the class-related keys of a model table."""
    options: dict[str, Any] = {}
    if "windows" in body:
        specs = body["windows"]
        if not isinstance(specs, list) or not specs:
            raise ConfigError(f"{where} windows: expected a non-empty list such as [\"cumulative\", \"sliding:1000\"]")
        names = [window_of(spec, f"{where} windows").name for spec in specs]
        if len(set(names)) != len(names):
            raise ConfigError(f"{where} windows: names must be unique, got {names}")
        options["window_specs"] = tuple(specs)
    if "reference" in body:
        options["reference"] = dict(_table(body["reference"], f"{where} reference"))
    if "positive" in body:
        options["positive"] = body["positive"]
    if "classes" in body:
        if not isinstance(body["classes"], list):
            raise ConfigError(f"{where} classes: expected a list of class labels")
        options["classes"] = tuple(body["classes"])
    if "baseline" in body:
        baseline = _table(body["baseline"], f"{where} baseline")
        options["baseline"] = {k: dict(_table(v, f"{where} baseline.{k}")) for k, v in baseline.items()}
    return options


def _model_settings(body: dict[str, Any], where: str) -> dict[str, Any]:
    """The counts, times and the detector and policy tables of a model table."""
    options: dict[str, Any] = {}
    for key, low, high in (("warmup", 1, 2**31 - 1), ("max_classes", 2, 2**31 - 1), ("max_pending", 1, 2**31 - 1),
                           ("max_segments", 1, 2**31 - 1), ("max_pending_bytes", 1, 2**53)):
        if key in body:
            options[key] = _integer(body[key], f"{where} {key}", low, high)
    if "segments" in body:
        keys = body["segments"]
        if not isinstance(keys, list) or not all(isinstance(k, str) and SEGMENT_KEY.fullmatch(k) for k in keys) \
                or len(set(keys)) != len(keys):
            raise ConfigError(f"{where} segments: expected a list of distinct segment keys (letters, digits and '_', "
                              f"such as [\"country\"]), got {keys!r:.80}")
        options["segments"] = tuple(keys)
    if "label_ttl" in body:
        options["label_ttl"] = _seconds(body["label_ttl"], f"{where} label_ttl")
    if "closed" in body:
        options["closed"] = _flag(body["closed"], f"{where} closed")
    for key, cls in (("detector", DetectorSettings), ("policy", Policy)):
        if key in body:
            try:  # the command line's parsing and checks (streammon.serve.settings)
                options[key] = settings.build(cls, _table(body[key], f"{where} {key}"))
            except settings.SettingError as exc:
                if exc.problem.startswith("unknown setting"):
                    raise ConfigError(f"{where} {key}: unknown key {exc.field!r} "
                                      f"({exc.problem.removeprefix('unknown setting ')})") from None
                raise ConfigError(f"{where} {key} {exc}" if exc.field else f"{where} {key}: {exc}") from None
    return options


def _token(server: dict[str, Any], base: Path) -> str | None:
    if "token" in server and "token_file" in server:
        raise ConfigError("[server]: give token or token_file, not both")
    if "token_file" in server:
        path = base / _text(server["token_file"], "[server] token_file")
        try:
            token = path.read_text("utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"[server] token_file: cannot read {path}: {exc}") from exc
    elif "token" in server:
        token = _text(server["token"], "[server] token")
    else:
        return None
    if len(token) < 16 or not token.isascii() or not token.isprintable() or " " in token:
        raise ConfigError("[server] token: expected at least 16 printable ASCII characters without spaces")
    return token


def _listen(value: Any) -> tuple[str, int]:
    text = _text(value, "[server] listen")
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit() or not 0 <= int(port) <= 65535 or not host:
        raise ConfigError(f"[server] listen: expected HOST:PORT such as \"127.0.0.1:9464\" or \"[::1]:9464\", "
                          f"got {text!r}")
    return host.strip("[]") if host.startswith("[") else host, int(port)


def _known(table: dict[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})")


def _table(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a table, got {value!r:.60}")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: expected a non-empty string, got {value!r:.60}")
    return value


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: expected true or false, got {value!r:.60}")
    return value


def _integer(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{where}: expected an integer in [{low}, {high}], got {value!r:.60}")
    return value


def _seconds(value: Any, where: str, *, zero: bool = False) -> float:
    """Seconds > 0 (>= 0 with ``zero``), finite but for ``label_ttl`` (inf: never expire)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    finite = number and (math.isfinite(value) or (math.isinf(value) and where.endswith("label_ttl")))
    if not finite or not (value >= 0 if zero else value > 0):
        raise ConfigError(f"{where}: expected seconds {'>= 0' if zero else '> 0'}, got {value!r:.60}")
    return float(value)
