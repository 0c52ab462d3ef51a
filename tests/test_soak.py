"""The exporter under sustained load keeps its memory flat, and its safety options work together."""

from __future__ import annotations

import ssl
import threading
import time
import urllib.error
import urllib.request
from base64 import b64encode
from pathlib import Path

import numpy as np
import pytest

from streammon import Cumulative, Monitor, Sliding, Timed
from streammon.export.server import serve


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc to read RSS")
def test_ten_million_samples_with_continuous_scrapes_keep_rss_flat() -> None:
    """10 M samples (with new timestamps, so timed buckets turn over) while a client scrapes /metrics
    continuously: RSS after 10 M is within 16 MiB of RSS after the first 2 M; bounded to ~60 s."""
    monitor = Monitor([Cumulative(), Sliding(10_000), Sliding(100_000), Timed(60, buckets=30)],
                      reference={c: 1 for c in range(10)})
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 10, 100_000)
    preds = np.where(rng.random(100_000) < 0.8, truth, rng.integers(0, 10, 100_000))
    stop, scrapes, errors = threading.Event(), [0], []
    with serve(monitor, port=0, model="soak") as server:
        def scraper() -> None:
            while not stop.is_set():
                try:
                    urllib.request.urlopen(server.url, timeout=10).read()
                    scrapes[0] += 1
                except OSError as exc:
                    errors.append(exc)

        thread = threading.Thread(target=scraper)
        thread.start()
        deadline = time.monotonic() + 60
        rss = {}
        try:
            singles = list(zip(truth[:5000].tolist(), preds[:5000].tolist(), strict=True))
            for chunk in range(100):
                monitor.update_many(truth[:95_000], preds[:95_000], t=float(chunk))
                for y, p in singles:  # the per-sample path too: 5 000 of every 100 000
                    monitor.update(y, p, t=chunk + 0.5)
                if chunk == 19:
                    rss["after 2M"] = _rss_bytes()
                assert time.monotonic() < deadline, "soak test ran out of time"
        finally:
            stop.set()
            thread.join()
        rss["after 10M"] = _rss_bytes()
    assert not errors and scrapes[0] > 10
    assert monitor.samples == 10_000_000
    assert rss["after 10M"] - rss["after 2M"] < 16 * 2**20, rss


def test_tls_and_basic_auth_together_over_https(tls_cert: tuple[Path, Path]) -> None:
    """HTTPS on loopback with basic auth: right credentials scrape, none or wrong get 401, plain HTTP fails."""
    cert, key = tls_cert
    context = ssl.create_default_context(cafile=str(cert))
    good = "Basic " + b64encode(b"prom:s3cret").decode()
    monitor = Monitor([Sliding(10)])
    with serve(monitor, port=0, certfile=str(cert), keyfile=str(key), basic_auth=("prom", "s3cret")) as server:
        assert server.url.startswith("https://127.0.0.1:")
        request = urllib.request.Request(server.url, headers={"Authorization": good})
        assert b"streammon_samples_total" in urllib.request.urlopen(request, context=context, timeout=5).read()
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(server.url, context=context, timeout=5)
        assert denied.value.code == 401
        with pytest.raises(OSError):
            urllib.request.urlopen(server.url.replace("https", "http"), timeout=5).read()
