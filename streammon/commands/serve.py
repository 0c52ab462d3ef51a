"""``streammon serve CONFIG``: run the server until SIGTERM or Ctrl-C, then stop gracefully and exit 0."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from typing import Any

from streammon.serve.config import ConfigError, load
from streammon.serve.run import Server


def add_serve_parser(sub: Any) -> None:
    """The ``serve`` subcommand's parser."""
    serving = sub.add_parser("serve", help="run the server every worker and language sends batches to",
                             description="Serve the models of a TOML configuration: POST batches to "
                             "/v1/models/{model}/samples|predictions|labels, scrape /metrics. SIGTERM or Ctrl-C "
                             "stops it gracefully (in-flight requests answered, every model saved).")
    serving.add_argument("config", metavar="CONFIG", help="the TOML configuration ([server] and [models.NAME])")


def run_serve(path: str) -> int:
    """Serve the configuration at ``path``; 2 (one line on stderr) when it cannot start."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    stopping = threading.Event()

    def stop(signum: int, _: Any) -> None:
        stopping.set()

    # installed first (a SIGTERM while the journals are replayed stops the server once it is up) and kept while
    # stopping (a second signal does not cut the last save)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)
    try:
        config = load(path)
        server = Server(config)
    except (ConfigError, ValueError, OSError) as exc:
        print(f"streammon serve: {exc}", file=sys.stderr)
        return 2
    print(f"streammon serve: {len(config.models)} model(s) ({', '.join(config.models)}) on {server.url}; "
          f"state in {config.state_dir}", flush=True)
    while not stopping.wait(1.0):
        pass
    print("streammon serve: stopping: answering requests in flight, saving", flush=True)
    try:
        server.stop()
    except Exception as exc:
        print(f"streammon serve: the last save failed: {exc}", file=sys.stderr)
        return 1
    print("streammon serve: stopped", flush=True)
    return 0
