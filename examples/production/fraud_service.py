"""A fraud-scoring service under several worker processes, monitored by one ``streammon serve`` beside it.

Each worker sends its predictions (at request time) and the late labels (``/feedback``, which reaches any worker)
to the server through ``streammon.client.Client``: calls only append to a buffer, a background thread sends
batches. Run (docs/how-to/several-workers.md)::

    streammon serve examples/production/streammon.toml &
    gunicorn -w 4 -k uvicorn_worker.UvicornWorker examples.production.fraud_service:app --bind 127.0.0.1:8000
    # or: uvicorn examples.production.fraud_service:app --workers 4 --port 8000

``STREAMMON_URL`` (default http://127.0.0.1:9464) says where the server is; ``STREAMMON_FLUSH`` the seconds
between two sends (default 1).
"""

from __future__ import annotations

import math
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from pydantic import BaseModel

from streammon.client import Client

monitor = Client(os.environ.get("STREAMMON_URL", "http://127.0.0.1:9464"), "fraud",
                 flush_interval=float(os.environ.get("STREAMMON_FLUSH", "1")))


@asynccontextmanager
async def lifespan(_: FastAPI) -> AsyncIterator[None]:
    yield
    # Send what is buffered before the worker exits. The client also flushes at interpreter exit, but uvicorn ends
    # a worker by re-raising SIGTERM after its graceful shutdown, which skips atexit handlers: close it here.
    monitor.close()


app = FastAPI(title="fraud scoring", lifespan=lifespan)


class Transaction(BaseModel):
    id: str
    amount: float
    foreign: bool = False


class Feedback(BaseModel):
    id: str
    fraud: bool


def score(tx: Transaction) -> float:
    """A stand-in for the real model: large foreign transactions look like fraud."""
    return 1 / (1 + math.exp(-(tx.amount / 500 - 3 + 2 * tx.foreign)))


@app.post("/predict")
def predict(tx: Transaction) -> dict[str, object]:
    label = "fraud" if score(tx) >= 0.5 else "legit"
    monitor.predict(tx.id, label)  # no I/O here: appended to the client's buffer
    return {"id": tx.id, "label": label, "worker": os.getpid()}


@app.post("/feedback")
def feedback(fb: Feedback) -> dict[str, object]:
    monitor.label(fb.id, "fraud" if fb.fraud else "legit")  # any worker: the server joins it with its prediction
    return {"id": fb.id, "worker": os.getpid()}
