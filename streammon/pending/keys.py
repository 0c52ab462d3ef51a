"""Prediction keys: a str (1 to ``MAX_KEY_LENGTH`` characters) or an int within int64.

Keys of both types may be mixed: ``1`` and ``"1"`` are different keys (as in a dict and in
SQLite). ``bool`` and ``float`` keys are refused (``True == 1`` and ``1.0 == 1`` would silently
merge keys), and so is anything else (a tuple, bytes, None).

>>> check_key("tx-1"), check_key(7)
('tx-1', 7)
>>> check_key(1.0)
Traceback (most recent call last):
...
TypeError: key 1.0 (float) is not a prediction key: expected a str or an int
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammon.counting.counts import show

MAX_KEY_LENGTH = 512
KEY_INT_BOUND = 2**63


def check_key(key: Any) -> str | int:
    """Validate one key and return it as a plain ``str`` or ``int``."""
    kind = type(key)
    if kind is str:
        if 0 < len(key) <= MAX_KEY_LENGTH:
            return str(key)
        raise ValueError(f"key {show(key)} has {len(key)} characters: a str key must have 1 to {MAX_KEY_LENGTH}")
    if kind is int or (isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_))):
        value = int(key)
        if -KEY_INT_BOUND <= value < KEY_INT_BOUND:
            return value
        raise ValueError(f"key {show(key)} is out of range: int keys must fit int64")
    if isinstance(key, str):  # a str subclass (np.str_, StrEnum): its plain str
        return check_key(str.__str__(key))
    raise TypeError(f"key {show(key)} ({type(key).__name__}) is not a prediction key: expected a str or an int")


def check_keys(keys: Any) -> list[str | int]:
    """Validate a batch of keys (a list, tuple or 1-D array): all or nothing.

    >>> check_keys(np.array([3, 4])), check_keys(["a", 2])
    ([3, 4], ['a', 2])
    """
    if isinstance(keys, (str, bytes, dict, set, frozenset)) or not hasattr(keys, "__len__"):
        raise TypeError(f"keys must be a list, tuple or 1-D array, got {type(keys).__name__}")
    if isinstance(keys, np.ndarray):
        if keys.ndim != 1:
            raise ValueError(f"keys must be 1-D, got shape {keys.shape}")
        if keys.dtype.kind in "iu":
            values: list[Any] = keys.tolist()
            if keys.dtype.kind == "u" and len(values) and max(values) >= KEY_INT_BOUND:
                raise ValueError("key out of range: int keys must fit int64")
            return values
        if keys.dtype.kind == "U":
            return [check_key(k) for k in keys.tolist()]
        keys = keys.tolist()
    elif hasattr(keys, "__array__") and not isinstance(keys, (list, tuple)):
        return check_keys(np.asarray(keys))
    return [check_key(k) for k in keys]
