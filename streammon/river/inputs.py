"""What a streammon river metric takes (``streammon.river.metrics``, ``MonitorMetric``): a sample weight as a
count (``as_count``), a model's "no prediction yet" skipped (``no_prediction``), and the decision of a prediction
given as a ``predict_proba_one`` dict (``decision``).
"""

from __future__ import annotations

import contextlib
import math
import numbers
import operator
from typing import Any

import numpy as np

MAX_WEIGHT = 2**53  # the largest count a float64 still holds exactly


def as_count(w: Any) -> int:
    """A sample weight as a count: a whole number in [0, 2**53] (a Python or numpy int or float).

    >>> as_count(np.int64(2)), as_count(3.0)
    (2, 3)
    >>> as_count(0.5)
    Traceback (most recent call last):
    ...
    ValueError: streammon metrics count samples: w must be a whole number in [0, 2**53], got 0.5
    """
    if isinstance(w, (bool, np.bool_)):  # a number to Python, but no count: the documented ValueError
        raise ValueError(f"streammon metrics count samples: w must be a whole number in [0, 2**53], got {w!r} "
                         "(a bool)")
    if not isinstance(w, numbers.Real):
        raise TypeError(f"streammon metrics count samples: w must be a number, got {w!r} ({type(w).__name__})")
    value: int | float = math.nan
    if isinstance(w, numbers.Integral):
        value = operator.index(w)
    else:
        with contextlib.suppress(OverflowError):  # a Fraction beyond float range stays NaN
            value = float(w)
    if not (0 <= value <= MAX_WEIGHT and (isinstance(value, int) or value.is_integer())):  # NaN fails too
        raise ValueError(f"streammon metrics count samples: w must be a whole number in [0, 2**53], got {w!r}")
    return int(value)


def no_prediction(y_pred: Any) -> bool:
    """Whether ``y_pred`` is a model's "no prediction yet" (``None``, or an empty ``predict_proba_one`` dict):
    river's ``predict_one`` returns ``None`` before any learning, and its progressive validation skips such a
    step; streammon's river metrics skip it too, in a hand-written loop as well (``update`` and ``revert`` do
    nothing). A missing *true* label still raises.

    >>> from streammon.river.metrics import TPR
    >>> metric = TPR(pos_val="spam")
    >>> metric.update("spam", None); metric.update("spam", "spam")
    >>> metric.get()
    1.0
    """
    return y_pred is None or (isinstance(y_pred, dict) and not y_pred)


def decision(y_pred: Any) -> Any:
    """The decision of a prediction: ``y_pred`` itself, or the arg-max of a ``predict_proba_one`` dict (the first
    largest, as river's ``predict_one``), so a metric fed probabilities counts what the model would decide.

    >>> decision({"ham": 0.3, "spam": 0.7}), decision("ham")
    ('spam', 'ham')
    """
    if isinstance(y_pred, dict):
        return max(y_pred, key=y_pred.__getitem__)
    return y_pred
