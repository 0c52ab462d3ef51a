"""Four gunicorn workers send through ``streammon.client`` as fast as they can while ``streammon serve`` runs on the
same cores (issue 26's soak target): what the workers' clients say the server acknowledged against what the
server counted (nothing acknowledged lost, nothing counted twice), and the server's RSS over time (flat after the
first minute). Run by ``examples/bench_server.py --soak SECONDS``, or alone:

    python examples/soak_server.py [SECONDS]
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _get(port: int, path: str) -> dict:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", path)
    return dict(json.loads(connection.getresponse().read()))


def soak(seconds: float) -> list[str]:
    tmp, port = Path(tempfile.mkdtemp()), _port()
    (tmp / "serve.toml").write_text(
        f'[server]\nlisten = "127.0.0.1:{port}"\nstate_dir = "{tmp / "state"}"\ncheckpoint_every = 30\n'
        '[models.fraud]\nwindows = ["cumulative", "sliding:1000", "timed:3600"]\n'
        'reference = { legit = 95, fraud = 5 }\n')
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'examples'}", "STREAMMON_URL": f"http://127.0.0.1:{port}",
           "SOAK_SECONDS": str(seconds), "SOAK_DIR": str(tmp)}
    server = subprocess.Popen([sys.executable, "-m", "streammon", "serve", str(tmp / "serve.toml")], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers = None
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if _get(port, "/healthz").get("status") == "ok":
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        workers = subprocess.Popen([sys.executable, "-m", "gunicorn", "-w", "4", "soak_worker:app", "--bind",
                                    f"127.0.0.1:{_port()}", "--graceful-timeout", "120"], env=env,
                                   cwd=ROOT / "examples", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        start, samples = time.monotonic(), []
        while len(list(tmp.glob("worker-*.json"))) < 4 and time.monotonic() - start < seconds + 180:
            samples.append((time.monotonic() - start, _rss_mib(server.pid)))
            time.sleep(5)
        reports = [json.loads(p.read_text()) for p in tmp.glob("worker-*.json")]
        stats = _get(port, "/v1/models/fraud/report")["windows"]["cumulative"]["label_stats"]
    finally:
        for process in (workers, server):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(60)
                except subprocess.TimeoutExpired:
                    process.kill()
    sent = sum(r["sent"] for r in reports)
    counted = stats["predictions"] + stats["labelled"] + stats["orphans"] + stats["duplicates"]
    after_minute = [rss for t, rss in samples if t >= 60] or [rss for _, rss in samples[-2:]]
    return [
        f"| soak: 4 gunicorn workers, {seconds:.0f} s, server on the same 2 cores | |",
        "|---|---|",
        f"| rows the clients saw acknowledged | {sent:,} (dropped {sum(r['dropped'] for r in reports):,}, "
        f"refused {sum(r['rejected'] for r in reports)}) |",
        f"| rows the server counted (predictions + labels) | {counted:,} "
        f"({stats['predictions']:,} + {stats['labelled'] + stats['orphans'] + stats['duplicates']:,}) |",
        f"| equal (nothing lost, nothing twice) | {sent == counted} |",
        f"| server RSS after the first minute, min–max | {min(after_minute):.0f}–{max(after_minute):.0f} MiB "
        f"(samples every 5 s: {', '.join(f'{r:.0f}' for _, r in samples)}) |",
    ]


if __name__ == "__main__":
    print("\n".join(soak(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0)))
