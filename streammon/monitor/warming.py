"""``warm_up``: load every compiled loop a monitor can reach, in every argument type it can reach, before it is needed.

streammon's loops are compiled by numba for each combination of argument types they meet, and cached on disk
(``streammon.metrics.jitting``). A type that a stream meets only late is compiled only then, inside the call that
meets it: on a machine whose cache does not hold it yet (a new container, a new release, a read-only install),
that call stalls for seconds. Measured on this project's 2-core machine with an empty cache, a K = 10 stream with
scores and sample times compiled 27 s of loops in its first batch and report and then, in later reports, 10 s more:
the read loop again for a placeholder array that was writable where the real one is read-only (3.8 s, now one
type), the few-valued model's census loops, and the read loop once more (5 s) when a class passed 32,767 samples
in a window and its histogram snapshot widened from int16 to int32 counts (and once more, past 2³¹, to int64).
A scrape that meets it times out; a server holding a model's lock meanwhile stalls every worker that sends to it.

``warm_up`` runs small streams through every path that compiles — decisions, scores (binary and K-class,
continuous and few-valued), per-sample and batch updates, predictions and late labels, sample times closing
buckets of a timed window, reports, a save and a load, the label-free estimate of a ``Validation`` baseline — and
a class past the int16 width; the count widths a stream reaches only after 2³¹ samples (int64 histograms and
census counts) are compiled from the types already met (``jitting.compile_widths``). Its streams are healthy (no
alert is raised, so none is logged) and nothing it builds is kept.

- ``streammon serve`` runs it in the background at start;
- a service embedding a ``Monitor`` can call ``streammon.warm_up()`` at start (in a thread of its own, if it
  serves meanwhile);
- ``streammon warm-up`` runs it once, e.g. in a container image's build step, so that its processes load the
  machine code from the image's cache (``NUMBA_CACHE_DIR`` where the package directory is read-only).

It takes ~2 s where numba's cache holds the loops, 50 s to compile them into an empty one (the machine above).
``tests/test_warm_up.py`` runs other streams after it, widths forced, and fails on any compile.
"""

from __future__ import annotations

import numpy as np

from streammon.counting.validation import Validation
from streammon.counting.windows import Cumulative, Sliding, Timed
from streammon.monitor import Monitor, default_windows

WIDE = 33_000  # samples of one class in one window: past int16's 32,767, so its histogram snapshot reads int32


def warm_up() -> None:
    """Load (or compile, into numba's cache) every compiled loop in every type a monitor's streams reach."""
    rng = np.random.default_rng(0)
    _decisions()
    for k in (2, 3):
        for decimals in (None, 2):
            _scored(rng, k, decimals)
    _label_free(rng)
    _wide(rng)
    _other_widths()


def _decisions() -> None:
    """Decisions only: the detector's scan and the confusion read path."""
    m = Monitor(reference={"a": 1, "b": 1})  # a model that raises no alert: nothing is logged
    m.update_many(["a", "b"] * 600, ["a", "b"] * 600, t=0.0)
    m.report()


def _scores(rng: np.random.Generator, n: int, k: int, decimals: int | None) -> np.ndarray:
    """n scores of a K-class model (binary: the positive class's), rounded to ``decimals`` if given."""
    proba = rng.dirichlet(np.ones(k), size=n)
    if decimals is not None:
        proba = np.round(proba, decimals)
        proba[:, -1] = np.clip(1.0 - proba[:, :-1].sum(axis=1), 0.0, 1.0)
        proba /= proba.sum(axis=1, keepdims=True)
    return proba[:, 1] if k == 2 else proba


def _decided(rng: np.random.Generator, labels: list[str], n: int) -> tuple[np.ndarray, np.ndarray]:
    """n true classes in the reference's mix (uniform) and a model's decisions, 90 % right: a stream that raises
    no alert (the warm-up must not page anyone: ``tests/test_warm_up.py``)."""
    true = rng.choice(labels, n)
    return true, np.where(rng.random(n) < 0.9, true, rng.choice(labels, n))


def _scored(rng: np.random.Generator, k: int, decimals: int | None) -> None:
    """A K-class model's scores through every window kind: batches whose sample times close timed buckets (one
    batch spanning several, one after a gap longer than the windows), per-sample updates, predictions labelled
    later and never, reports, a save and a load."""
    labels = [f"c{i}" for i in range(k)]
    m = Monitor([*default_windows(), Sliding(50), Timed(600, buckets=10)],
                reference={label: 1 for label in labels}, clock=lambda: 0.0)
    t = 0.0
    for n, span in ((1_500, 30.0), (3_000, 400.0), (800, 5.0), (5_000, 3_000.0), (700, 9_000.0)):
        m.update_many(*_decided(rng, labels, n), t=np.linspace(t, t + span, n), y_score=_scores(rng, n, k, decimals))
        t += span
        m.report()
    true, pred = _decided(rng, labels, 300)
    for a, b, score in zip(true.tolist(), pred.tolist(), _scores(rng, 300, k, decimals).tolist(), strict=True):
        m.update(a, b, y_score=score)
    keys = [f"key{i}" for i in range(400)]
    true, pred = _decided(rng, labels, 400)
    m.predict_many(keys, pred, t=t, y_score=_scores(rng, 400, k, decimals))
    m.label_many(keys[:300], true[:300], t=t + 1.0)
    m.report()
    loaded = Monitor.loads(m.dumps(), clock=lambda: 0.0)
    loaded.report()
    loaded.update_many(*_decided(rng, labels, 500), t=t + 2.0, y_score=_scores(rng, 500, k, decimals))
    loaded.report()
    score = _scores(rng, 1, k, decimals).tolist()[0]
    for i in range(50):  # one score, again and again
        loaded.update(labels[i % k], labels[i % k], t=t + 3.0, y_score=score)
    loaded.report()


def _label_free(rng: np.random.Generator) -> None:
    """The label-free estimate with scores: a ``Validation`` baseline and predictions that get no label."""
    y = rng.choice(["ok", "fraud"], 600, p=[0.8, 0.2])
    s = np.clip(0.5 * (y == "fraud") + rng.uniform(0.0, 0.5, 600), 0.0, 1.0)
    m = Monitor([Cumulative(), Sliding(200)], baseline=Validation(y, np.where(s > 0.5, "fraud", "ok"), s,
                                                                   bootstrap=2))
    m.predict_many([f"k{i}" for i in range(600)], np.where(s > 0.5, "fraud", "ok"), y_score=s[::-1].copy())
    m.report()


def _wide(rng: np.random.Generator) -> None:
    """A class past int16's width in a window (binary and K-class): the read loops at int32 counts."""
    for k in (2, 3):
        labels = [f"c{i}" for i in range(k)]
        m = Monitor([Cumulative()], reference={label: (WIDE if i == 0 else 1_000) for i, label in enumerate(labels)})
        true = np.array([labels[0]] * WIDE + labels[1:] * 1_000)
        m.update_many(true, true, y_score=_scores(rng, len(true), k, None))
        m.report()


def _other_widths() -> None:
    """The count widths no short stream reaches (int64 histograms and census counts, past 2³¹ samples), compiled
    from the signatures met so far."""
    from streammon.metrics import jitting  # noqa: PLC0415 - the loops are imported by the streams above

    jitting.compile_widths()
