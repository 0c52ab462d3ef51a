"""The TOML configuration of ``streammon serve``: every bad key or value is a ConfigError naming the table, the
key and what was expected, before anything is opened; a good one gives the server what it says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from streammon.serve.config import ConfigError, parse

SERVER = '[server]\nlisten = "127.0.0.1:9464"\nstate_dir = "state"\n'
MODEL = '[models.m]\nwindows = ["cumulative"]\n'

BAD: list[tuple[str, str]] = [
    ("this is = not toml [", r"not valid TOML"),
    (SERVER + MODEL + "[extra]\n", r"the top level: unknown key 'extra'"),
    (SERVER + "chekpoint_every = 5\n" + MODEL, r"\[server\]: unknown key 'chekpoint_every'"),
    (SERVER + MODEL + "windos = []\n", r"\[models.m\]: unknown key 'windos'"),
    ('[server]\nlisten = "9464"\nstate_dir = "s"\n' + MODEL, r"\[server\] listen: expected HOST:PORT.*'9464'"),
    ('[server]\nlisten = "127.0.0.1:99999"\nstate_dir = "s"\n' + MODEL, r"\[server\] listen: .*'127.0.0.1:99999'"),
    ('[server]\nlisten = ":80"\nstate_dir = "s"\n' + MODEL, r"\[server\] listen: .*':80'"),
    ('[server]\nlisten = 9464\nstate_dir = "s"\n' + MODEL, r"\[server\] listen: expected a non-empty string"),
    ('[server]\nstate_dir = "s"\n' + MODEL, r"\[server\] listen"),
    ('[server]\nlisten = "127.0.0.1:9464"\n' + MODEL, r"\[server\]: state_dir is missing"),
    (SERVER + '[models.m]\nwindows = ["hourly"]\n', r"\[models.m\] windows: 'hourly' is not a window"),
    (SERVER + '[models.m]\nwindows = ["sliding:abc"]\n', r"\[models.m\] windows: 'sliding:abc' is not a window"),
    (SERVER + '[models.m]\nwindows = ["timed:0"]\n', r"\[models.m\] windows: window 'timed:0'"),
    (SERVER + '[models.m]\nwindows = ["timed:x"]\n', r"\[models.m\] windows: window 'timed:x'"),
    (SERVER + '[models.m]\nwindows = []\n', r"\[models.m\] windows: expected a non-empty list"),
    (SERVER + '[models.m]\nwindows = ["sliding:10", "sliding:10"]\n', r"\[models.m\] windows: names must be unique"),
    (SERVER + MODEL + "detector = { arll = 5 }\n", r"\[models.m\] detector: unknown key 'arll'"),
    (SERVER + MODEL + "detector = { arl = -5.0 }\n", r"\[models.m\] detector arl: .*> 1"),
    (SERVER + MODEL + "policy = { confidence = 2.0 }\n", r"\[models.m\] policy confidence: must be a number in \(0"),
    (SERVER + MODEL + 'policy = { confidence = "x" }\n', r"\[models.m\] policy confidence: expected a finite number"),
    (SERVER + MODEL + "policy = { type1_tolerance = -1.0 }\n", r"\[models.m\] policy type1_tolerance: "),
    (SERVER + MODEL + "policy = { shift_alpha = nan }\n", r"\[models.m\] policy shift_alpha: "),
    (SERVER + MODEL + "policy = { metric_params = 5 }\n", r"\[models.m\] policy metric_params: expected an object of"),
    (SERVER + MODEL + "warmup = 0\n", r"\[models.m\] warmup: expected an integer in \[1, "),
    (SERVER + MODEL + "max_classes = true\n", r"\[models.m\] max_classes: expected an integer"),
    (SERVER + MODEL + "label_ttl = -1\n", r"\[models.m\] label_ttl: expected seconds > 0"),
    (SERVER + MODEL + 'classes = "ab"\n', r"\[models.m\] classes: expected a list"),
    (SERVER + MODEL + "reference = { a = -1 }\n", r"\[models.m\]: .*"),
    (SERVER + '[models."a b"]\n', r"\[models.a b\]: a model name is 1 to 64"),
    (SERVER + '[models."' + "x" * 65 + '"]\n', r"a model name is 1 to 64"),
    (SERVER, r"\[models\]: no model configured"),
    (SERVER + 'token = "short"\n' + MODEL, r"\[server\] token: expected at least 16 printable ASCII"),
    (SERVER + 'token = "sixteen chars with spaces"\n' + MODEL, r"\[server\] token: .*without spaces"),
    (SERVER + 'token = "0123456789abcdef"\ntoken_file = "t"\n' + MODEL, r"give token or token_file, not both"),
    (SERVER + 'token_file = "no-such-token-file"\n' + MODEL, r"\[server\] token_file: cannot read"),
    (SERVER + "checkpoint_every = 0\n" + MODEL, r"\[server\] checkpoint_every: expected seconds > 0"),
    (SERVER + "checkpoint_every = nan\n" + MODEL, r"\[server\] checkpoint_every: expected seconds > 0"),
    (SERVER + "request_timeout = inf\n" + MODEL, r"\[server\] request_timeout: expected seconds > 0"),
    (SERVER + "keep_alive = -1\n" + MODEL, r"\[server\] keep_alive: expected seconds >= 0"),
    (SERVER + "max_body_bytes = 0\n" + MODEL, r"\[server\] max_body_bytes: expected an integer in \[1, "),
    (SERVER + 'max_connections = "64"\n' + MODEL, r"\[server\] max_connections: expected an integer"),
    (SERVER + 'distortion_prone = "yes"\n' + MODEL, r"\[server\] distortion_prone: expected true or false"),
    (SERVER + 'keyfile = "k.pem"\n' + MODEL, r"keyfile and client_cafile need certfile"),
]


@pytest.mark.parametrize(("text", "message"), BAD, ids=[f"{i}" for i in range(len(BAD))])
def test_bad_configurations_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    """Each bad configuration raises ConfigError whose message names the table and key (the pattern), and nothing
    is created under state_dir."""
    with pytest.raises(ConfigError) as raised:
        parse(text, base=tmp_path)
    assert re.search(message, str(raised.value)), str(raised.value)
    assert not (tmp_path / "state").exists()


def test_a_good_configuration_gives_what_it_says(tmp_path: Path) -> None:
    """Every key of a full configuration lands in the ServerConfig and ModelConfig, relative paths taken from the
    configuration's folder, a token read from token_file (whitespace stripped)."""
    (tmp_path / "token").write_text("  0123456789abcdefXYZ\n")
    config = parse(SERVER + 'token_file = "token"\ncheckpoint_every = 2.5\nkeep_alive = 0\nmax_body_bytes = 1000\n'
                   '[models.fraud]\nwindows = ["cumulative", "sliding:100", "timed:60:6"]\nwarmup = 10\n'
                   "label_ttl = inf\ndetector = { arl = 5000.0 }\n[models.b-2]\n", base=tmp_path)
    assert (config.host, config.port, config.state_dir) == ("127.0.0.1", 9464, tmp_path / "state")
    assert (config.token, config.checkpoint_every, config.keep_alive, config.max_body_bytes) == \
        ("0123456789abcdefXYZ", 2.5, 0.0, 1000)
    fraud = config.models["fraud"]
    assert [w.name for w in fraud.windows()] == ["cumulative", "sliding_100", "timed_60s"]
    assert (fraud.warmup, fraud.label_ttl, fraud.detector.arl) == (10, float("inf"), 5000.0)
    assert list(config.models) == ["fraud", "b-2"]
    ipv6 = parse(SERVER.replace("127.0.0.1:9464", "[::1]:0") + MODEL)
    assert (ipv6.host, ipv6.port) == ("::1", 0)
