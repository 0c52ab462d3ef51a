"""What the census's tests share: a few-valued stream whose classes share one bin (the ring's split misreads it,
the census reads it exactly), and a state file's score side, edited and sealed again (a consistent-looking
forgery)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from streammon.state import _digest

THREE_TO_A_BIN = np.array([0.0, 0.30000, 0.30001, 0.30002, 1.0])  # three values 1e-5 apart in one bin, 0 and 1


def three_to_a_bin(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` i.i.d. binary samples (30 % positives) of ``THREE_TO_A_BIN``, each value taken by both classes in
    unequal shares (the positives higher): most (positive, negative) pairs share the bin of three values."""
    y = (rng.random(n) < 0.3).astype(int)
    s = np.where(y == 1, rng.choice(THREE_TO_A_BIN, n, p=[0.05, 0.1, 0.2, 0.35, 0.3]),
                 rng.choice(THREE_TO_A_BIN, n, p=[0.3, 0.3, 0.2, 0.15, 0.05]))
    return y, s


def score_side(body: dict[str, Any]) -> dict[str, Any]:
    """The labelled score side's part of a monitor's state (wherever it nests)."""
    stack: list[Any] = [body]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "census" in item and "exact" in item:
                return item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    raise AssertionError("no score side in the state")


def sealed(document: dict[str, Any]) -> str:
    """A state file's document, edited, with its checksum made again."""
    document["sha256"] = _digest(document["body"])
    return json.dumps(document)
