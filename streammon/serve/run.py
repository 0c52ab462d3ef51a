"""Start a server from its configuration, and stop it gracefully.

``start`` binds the port first (a busy address fails at once, naming it), answers ``/healthz`` with 503 while
the monitors open (each model's checkpoint loaded and its journal replayed), then 200; the compiled loops of
the detector, the score tallies and the read path are loaded in the background from then on, in every type a
stream reaches (``streammon.monitor.warming``: about 2 s on a warm numba cache; once a process, ``WARMED`` set when
done), so a batch or scrape arriving later does not pay for them, and one arriving sooner waits for the same
loading. ``Server.stop`` — what ``SIGTERM`` and Ctrl-C call — stops accepting, answers the requests in flight,
saves every model and closes its journal.
"""

from __future__ import annotations

import logging
import ssl
import threading

from streammon.export.http_serving import BoundedServer, Limits, listen
from streammon.serve.api import Api
from streammon.serve.config import ServerConfig
from streammon.serve.hub import Hub

logger = logging.getLogger("streammon.serve")


class Server:
    """A running ``streammon serve``: ``url``, ``port``; ``stop()`` it."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        limits = Limits(max_connections=config.max_connections, request_timeout=config.request_timeout,
                        write_timeout=config.write_timeout, max_header_bytes=config.max_header_bytes,
                        max_body_bytes=config.max_body_bytes, body_timeout=config.body_timeout,
                        keep_alive=config.keep_alive)
        tls = None
        if config.certfile:
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            tls.minimum_version = ssl.TLSVersion.TLSv1_2
            tls.load_cert_chain(config.certfile, config.keyfile)
            if config.client_cafile:
                tls.load_verify_locations(cafile=config.client_cafile)
            tls.verify_mode = ssl.CERT_REQUIRED if config.client_auth_required else ssl.CERT_NONE
        try:
            listener = listen(config.host, config.port)
        except OSError as exc:
            raise OSError(exc.errno, f"cannot listen on {config.host}:{config.port} ([server] listen): "
                          f"{exc.strerror}") from None
        self.api = Api(None, token=config.token, distortion_prone=config.distortion_prone,
                       max_decoding=config.max_decoding)
        self._http = BoundedServer(self.api, listener, tls=tls, limits=limits, screen=self.api.screen)
        self.port = self._http.port
        host = f"[{config.host}]" if ":" in config.host else config.host
        self.url = f"{'https' if tls else 'http'}://{host}:{self.port}"
        try:
            self.hub = Hub(config, on_new=self.api.collect)
        except BaseException:
            self._http.stop()
            raise
        self.hub.start_checkpoints()
        self.api.attach(self.hub)
        threading.Thread(target=_warm_up, name="streammon-warm-up", daemon=True).start()

    def stop(self, grace: float = 10.0) -> None:
        """Stop accepting, answer what is in flight (up to ``grace`` seconds), save every model, close."""
        self._http.drain(grace)
        self.hub.close()


_warming = threading.Lock()  # held for good by the process's first warm-up: the loops are the process's, loaded once
WARMED = threading.Event()  # set once this process's warm-up ended (the first server's)


def _warm_up() -> None:
    """Load every compiled loop a model's stream reaches, in every type it reaches (numba's cache), off the request
    path (``streammon.monitor.warming``); once a process (a second server in it finds them loaded, or loading)."""
    from streammon.monitor.warming import warm_up  # noqa: PLC0415 - run in the background thread only

    if not _warming.acquire(blocking=False):
        return
    try:
        warm_up()
    except Exception:  # pragma: no cover - a failed warm-up only means the first batch pays for it
        logger.exception("warm-up failed")
    finally:
        WARMED.set()
