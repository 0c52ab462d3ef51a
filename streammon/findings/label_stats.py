"""What is known before (and while) labels arrive: one window's ``LabelStats`` (pure, no state).

Inputs are a prediction-side window's counts (rows: predicted class; columns: pending,
labelled, expired, evicted — by prediction time) and a label-event window's 256 bucket counts
(joined labels by latency bucket, orphans, duplicates — by label time); see
``streammon.pending.sides``.

Two class mixes answer different questions (selection bias): ``predicted_mix`` is the
predicted-class mix of *every* prediction in the window — the production mix as the model sees
it, known at once; ``labelled_predicted_mix`` is the same mix over the predictions that got a
label. When labels come only for some cases (reviewed alerts, chargebacks) the two differ, and
every labelled score describes the labelled subset only. ``implied_mix`` is the predicted mix
the reference would give (``q = Σ_j π_j · P(ŷ | y = j)``, P from the labelled lifetime
confusion: under a pure prior shift P(ŷ | y) does not move), and ``mix_shift`` tests the
window's predicted counts against it (``streammon.findings.shift.prior_shift``).

>>> pred = np.array([[5, 3, 1, 1], [1, 9, 0, 0]])
>>> events = np.zeros(256, np.int64); events[[61, 131, 254]] = [1, 11, 2]
>>> s = label_stats(pred, events, ("legit", "fraud"), None)
>>> s.predictions, s.labelled, s.pending, s.expired, s.evicted, s.orphans, round(s.coverage, 2)
(20, 12, 6, 1, 1, 2, 0.6)
>>> s.latency["p50"] == bucket_upper(131), dict(s.never_labelled)
(True, {'legit': 2, 'fraud': 0})
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from streammon.findings.encode import by_label, floats, json_float
from streammon.findings.frozen import FrozenMap
from streammon.findings.shift import PriorShift, prior_shift
from streammon.metrics import safe_divide

LATENCY_BUCKETS = 254
ORPHAN_BUCKET = 254
DUPLICATE_BUCKET = 255
PER_OCTAVE = 6
LOWEST = -10
QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))
_EMPTY: Mapping[Hashable, float] = FrozenMap({})
_NO_COUNTS: Mapping[Hashable, int] = FrozenMap({})


def bucket_upper(bucket: int) -> float:
    """The upper edge (seconds) of latency bucket ``bucket`` (see ``streammon.pending.sides.latency_bucket``)."""
    return float(2.0 ** (min(bucket, LATENCY_BUCKETS - 2) / PER_OCTAVE + LOWEST))


@dataclass(frozen=True)
class LabelStats:
    """Predictions and their labels in one window.

    ``predictions`` counts every prediction made in the window (by prediction time), labelled or
    not; of them ``labelled`` got their label, ``pending`` still wait, ``expired`` outlived
    ``label_ttl`` and ``evicted`` were pushed out by ``max_pending`` newer ones (``expired`` and
    ``evicted`` per class: ``never_labelled``). ``coverage = labelled / predictions`` (NaN if no
    prediction). By label time: ``joined`` labels (their ``latency`` quantiles ``p50``/``p90``/
    ``p99`` in seconds, each the upper edge of its bucket — 6 buckets per doubling, so within
    12 %), ``orphans`` and ``duplicates``. ``repeated`` (predictions of a key already pending) is
    counted over the monitor's life, in the report's lifetime stats only.

    For exporters (exact counts, not in ``to_dict``): ``predicted_counts`` (predictions per
    predicted class), ``latency_counts`` (joined labels per latency bucket, 254 buckets, the
    upper edge of bucket ``b`` is ``bucket_upper(b)``), and for a timed window ``aged`` /
    ``aged_labelled``: its predictions older than the typical latency and how many of them got a
    label (what ``label_coverage_low`` reads; None where not judged).
    """

    predictions: int
    labelled: int
    coverage: float
    pending: int
    expired: int
    evicted: int
    orphans: int
    duplicates: int
    joined: int
    latency: Mapping[str, float]
    never_labelled: Mapping[Hashable, int]
    predicted_mix: Mapping[Hashable, float]
    labelled_predicted_mix: Mapping[Hashable, float]
    implied_mix: Mapping[Hashable, float] = field(default_factory=lambda: _EMPTY)
    mix_shift: PriorShift | None = None
    repeated: int = 0
    predicted_counts: Mapping[Hashable, int] = field(default_factory=lambda: _NO_COUNTS)
    latency_counts: tuple[int, ...] = ()
    aged: int | None = None
    aged_labelled: int | None = None

    def to_dict(self, keys: Mapping[Hashable, str]) -> dict[str, Any]:
        """JSON-ready data (the rules of ``streammon.findings.encode``; ``keys``: each class's key)."""
        counts = {name: getattr(self, name) for name in ("predictions", "labelled", "pending", "expired", "evicted",
                                                         "orphans", "duplicates", "joined", "repeated")}
        return {
            **counts,
            "coverage": json_float(self.coverage),
            "latency": floats(self.latency),
            "never_labelled": by_label(self.never_labelled, keys, int),
            "predicted_mix": by_label(self.predicted_mix, keys),
            "labelled_predicted_mix": by_label(self.labelled_predicted_mix, keys),
            "implied_mix": by_label(self.implied_mix, keys),
            "mix_shift": None if self.mix_shift is None else self.mix_shift.to_dict(),
        }


def latency_quantiles(hist: npt.NDArray[np.int64]) -> dict[str, float]:
    """Quantiles of the latency bucket counts ``hist`` (the upper edge of the bucket holding each; NaN if empty).

    >>> h = np.zeros(254, np.int64); h[[10, 20]] = [9, 1]
    >>> latency_quantiles(h) == {"p50": bucket_upper(10), "p90": bucket_upper(10), "p99": bucket_upper(20)}
    True
    """
    n = int(hist.sum())
    if n == 0:
        return {name: math.nan for name, _ in QUANTILES}
    cum = np.cumsum(hist)
    return {name: bucket_upper(int(np.searchsorted(cum, math.ceil(q * n)))) for name, q in QUANTILES}


def implied_mix(confusion: npt.NDArray[np.int64], priors: npt.ArrayLike) -> npt.NDArray[np.float64] | None:
    """``q = Σ_j π_j · P(ŷ | y = j)`` from a K×K confusion (rows: true) and reference priors; None when a class
    with prior mass has no labelled row (P(ŷ | y) unknown).

    >>> implied_mix(np.array([[8, 2], [1, 9]]), [0.5, 0.5]).tolist()
    [0.45, 0.55]
    """
    rows = confusion.sum(axis=1)
    pri = np.asarray(priors, dtype=np.float64)
    if np.any((pri > 0) & (rows == 0)):
        return None
    cond = confusion / np.maximum(rows, 1)[:, None]
    q: npt.NDArray[np.float64] = pri @ cond
    return q


def label_stats(pred: npt.NDArray[np.int64], events: npt.NDArray[np.int64], labels: Sequence[Hashable],
                implied: npt.NDArray[np.float64] | None, *, alpha: float = 0.01, min_ratio: float = 1.5,
                repeated: int = 0, aged: tuple[int, int] | None = None) -> LabelStats:
    """One window's ``LabelStats`` from its prediction counts (K × 4) and event counts (256); ``aged``: the
    (predictions, labelled) older than the typical latency, for a judged timed window."""
    k = len(labels)
    pred = pred[:k, :4]
    by_class = pred.sum(axis=1)
    status = pred.sum(axis=0)
    n = int(by_class.sum())
    labelled_by_class = pred[:, 1]
    never = pred[:, 2] + pred[:, 3]
    mix = by_class / n if n else np.full(k, math.nan)
    lab = int(labelled_by_class.sum())
    lab_mix = labelled_by_class / lab if lab else np.full(k, math.nan)
    shift = None
    implied_map: Mapping[Hashable, float] = _EMPTY
    if implied is not None:
        implied_map = FrozenMap({c: float(v) for c, v in zip(labels, implied, strict=True)})
        shift = prior_shift(by_class, implied, alpha=alpha, min_ratio=min_ratio) if n else None
    return LabelStats(
        predictions=n,
        labelled=lab,
        coverage=safe_divide(lab, n),
        pending=int(status[0]),
        expired=int(status[2]),
        evicted=int(status[3]),
        orphans=int(events[ORPHAN_BUCKET]),
        duplicates=int(events[DUPLICATE_BUCKET]),
        joined=int(events[:LATENCY_BUCKETS].sum()),
        latency=FrozenMap(latency_quantiles(events[:LATENCY_BUCKETS])),
        never_labelled=FrozenMap({c: int(v) for c, v in zip(labels, never, strict=True)}),
        predicted_mix=FrozenMap({c: float(v) for c, v in zip(labels, mix, strict=True)}),
        labelled_predicted_mix=FrozenMap({c: float(v) for c, v in zip(labels, lab_mix, strict=True)}),
        implied_mix=implied_map,
        mix_shift=shift,
        repeated=repeated,
        predicted_counts=FrozenMap({c: int(v) for c, v in zip(labels, by_class, strict=True)}),
        latency_counts=tuple(int(v) for v in events[:LATENCY_BUCKETS].tolist()),
        aged=None if aged is None else aged[0],
        aged_labelled=None if aged is None else aged[1],
    )
