"""The embedded synthetic production stream behind ``streammon demo``.

A fixed fraud classifier (recall 0.85 on fraud, 0.95 on legit) watched through
four phases:

1. ``steady`` — the training mix (5 % fraud);
2. ``mix_drift`` — fraud prevalence climbs to 30 %, the model unchanged: only
   the mix moved, so precision, F1, accuracy and MCC drift and are Type-1-flagged
   while recall-based scores hold still;
3. ``degradation`` — fraud recall falls to 0.50 at the drifted mix: the model got
   worse, and the class-conditional scores drop;
4. ``new_class`` — a third class, ``chargeback``, appears: the class set changed,
   and AUROC-OVO / AUROC-OVA are Type-2-flagged.

>>> stream = SyntheticStream(seed=1, phase_length=100)
>>> [stream.phase_at(i) for i in (0, 100, 200, 300)]
['steady', 'mix_drift', 'degradation', 'new_class']
>>> len(list(stream.samples(0, 50)))
50

The demo's degradation detector expects a false alarm on a class at most once a week of the demo's own
traffic, counted in samples (``DetectorSettings.arl``, samples of one class: the demo runs faster than its clock,
so the time budget ``false_alarm_interval`` would not measure its rates; 10⁶ would be every ~9 minutes at 2,000
samples a second):

>>> detector_for(2000.0).arl == 2000.0 * WEEK, detector_for(0.5).arl
(True, 1000000.0)

With late labels (``streammon demo --late-labels``), each sample is predicted at once under a
key and ``LateLabels`` gives its label after a lognormal delay, or never:

>>> late = LateLabels(delay=2.0, never=0.3)
>>> late.schedule(0, np.array(["legit"] * 1000), now=0.0)
>>> keys, truth = late.due(1e9)
>>> 600 < len(keys) < 800, late.due(1e9)[0].size
(True, 0)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from streammon.detection.baseline import DetectorSettings

PHASES = ("steady", "mix_drift", "degradation", "new_class")
REFERENCE = {"legit": 95_000, "fraud": 5_000}
# The classifier's validation confusion matrix: the baseline of the degradation detector.
VALIDATION = {"legit": {"legit": 18_050, "fraud": 950}, "fraud": {"fraud": 850, "legit": 150}}
WEEK = 7 * 86_400.0  # seconds
MIN_ARL = 1e6  # class samples


def detector_for(rate: float) -> DetectorSettings:
    """Degradation detection for a demo of ``rate`` samples a second: an in-control run length of a week of that
    traffic (at least the default 10⁶ class samples). A class that gets a share ``s`` of the traffic then raises a
    false alert once in ``1/s`` weeks on average — about one a week over all classes together — so the steady
    and mix-drift phases stay quiet."""
    return DetectorSettings(arl=max(MIN_ARL, rate * WEEK))


@dataclass
class SyntheticStream:
    """Deterministic labelled predictions for the demo (``seed`` fixes every draw)."""

    seed: int = 7
    phase_length: int = 20_000

    def phase_at(self, i: int) -> str:
        """The phase of sample ``i`` (the last phase lasts forever)."""
        return PHASES[min(i // self.phase_length, len(PHASES) - 1)]

    def _fraud_share(self, i: np.ndarray) -> np.ndarray:
        phase = np.minimum(i // self.phase_length, len(PHASES) - 1)
        progress = np.minimum(1.0, (i % self.phase_length) / (self.phase_length / 2))
        return np.where(phase == 0, 0.05, np.where(phase == 1, 0.05 + 0.25 * progress, 0.30))

    def samples(self, start: int, stop: int) -> Iterator[tuple[str, str]]:
        """``(y_true, y_pred)`` for samples ``start`` to ``stop``.

        Reproducible for the same ``(seed, start, stop)``; drawn with numpy in one go.
        """
        truth, preds = self.arrays(start, stop)
        yield from zip(truth.tolist(), preds.tolist(), strict=True)

    def arrays(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Samples ``start`` to ``stop`` as two label arrays."""
        i = np.arange(start, stop)
        rng = np.random.default_rng((self.seed, start, stop))
        u_class, u_pred = rng.random(len(i)), rng.random(len(i))
        phase = np.minimum(i // self.phase_length, len(PHASES) - 1)
        new_class = phase == 3
        fraud_share = np.where(new_class, 0.25, self._fraud_share(i))
        chargeback_share = np.where(new_class, 0.15, 0.0)
        other = np.where(u_class < fraud_share + chargeback_share, "chargeback", "legit")
        truth = np.where(u_class < fraud_share, "fraud", other)
        fraud_recall = np.where(phase >= 2, 0.50, 0.85)
        preds = np.where(u_pred < 0.95, "legit", "fraud")  # legit rows: 95 % right
        preds = np.where(truth == "fraud", np.where(u_pred < fraud_recall, "fraud", "legit"), preds)
        chargeback_pred = np.where(u_pred < 0.7, "chargeback", np.where(u_pred < 0.9, "fraud", "legit"))
        preds = np.where(truth == "chargeback", chargeback_pred, preds)
        return truth, preds


@dataclass
class LateLabels:
    """Labels that come ``delay`` seconds late on average (lognormal, sigma ``spread``) — or, for a share ``never``
    of the predictions, never (deterministic for the same ``seed`` and calls)."""

    delay: float = 2.0
    never: float = 0.3
    spread: float = 0.75
    seed: int = 11
    _due: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    _keys: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64), repr=False)
    _truth: np.ndarray = field(default_factory=lambda: np.empty(0, "<U10"), repr=False)

    def schedule(self, start: int, truth: np.ndarray, now: float) -> None:
        """Plan the labels of samples ``start`` on (keys ``start``, ``start + 1``, …), predicted at ``now``."""
        rng = np.random.default_rng((self.seed, start))
        n = len(truth)
        keep = rng.random(n) >= self.never
        delay = rng.lognormal(np.log(self.delay) - self.spread**2 / 2, self.spread, n)
        self._due = np.concatenate([self._due, now + delay[keep]])
        self._keys = np.concatenate([self._keys, np.arange(start, start + n, dtype=np.int64)[keep]])
        self._truth = np.concatenate([self._truth, np.asarray(truth)[keep]])

    def due(self, now: float) -> tuple[np.ndarray, np.ndarray]:
        """The keys and true labels whose time has come (each given once)."""
        ready = self._due <= now
        keys, truth = self._keys[ready], self._truth[ready]
        self._due, self._keys, self._truth = self._due[~ready], self._keys[~ready], self._truth[~ready]
        return keys, truth
