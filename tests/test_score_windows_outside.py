"""Issue 28's score targets checked from outside on windows PAST the exact limit (more than 2,048 scored
samples: ROC AUC and average precision read from the 2,048 logit bins), through the public API only.

Each case is a stream of 6,000–20,000 labelled samples in batches of 250 (batch ``b`` at time ``b``), drawn at a
class mix unlike the reference, fed to a ``Monitor`` with a cumulative window, ``Sliding(5000)`` and
``Timed(20.0, buckets=4)`` (16–20 batches) by one public path — ``update_many``, ``update``, or
``predict_many``/``predict`` with each batch's labels three batches late in a shuffled order — with the times
given or read from a clock the test moves. Some streams leave every third batch unscored, some are saved with
``Monitor.dumps`` and restored with ``Monitor.loads`` half-way (with predictions still waiting for labels), some
give ``classes=`` and the reference in a permuted order (the score columns follow ``Monitor.labels``). Each
window is read twice and compared with scikit-learn on the scored samples it holds (recounted from the feeding
log): ``roc_auc_score`` (binary; K > 2 ``multi_class="ovo"``, or ``"ovr"`` where the policy asks for it),
``average_precision_score`` (K > 2: macro over one-hot columns), ``brier_score_loss`` and ``log_loss`` (scores
clipped to [1e-15, 1 − 1e-15] first: the clip metrics.md documents), as read and with sample weights
``π_c·n/n_c`` that move the window to the reference mix (``corrected``). A Hand & Till ``roc_auc`` at the mix is
compared with the unweighted one: each pair's AUC weights its two classes by constants, which cancel.

Targets (issue 28): ROC AUC, AP and Brier within 0.002 as read, 0.005 at the reference mix; Brier and log loss,
read from exact sums, within 1e-8 (metrics.md, "Exact or binned"). A (case, metric, mix) cell that misses its
target is marked ``xfail(strict=True)`` with the measured worst error; ``worst_errors`` gives every cell's
worst error (the table in the audit report was printed from it). About 50 s here.

Measured beyond the test's one stream a case (``measure(case, seed)`` for seeds 1–10): worst |error| ×1e-4
(seeds of 10 missing the target). Missing: iris × gradient boosting AP 33.7 as read (3); logit-normal spread 0.1
AP 20.4 (1); the 1 % class AP 26.6 as read (1) — the last two continuous, read as before (logit spread 0.1: ROC
AUC 13.9 at seed 8, before and after). The cells measured so before this change, all others: ROC AUC ≤ 6.6, AP
≤ 13.8 as read and ≤ 11.4 at the mix; Brier and log loss ≤ 1e-8. Before the bins were split over the values the
monitor's last 2,048 exact scores show in them (``streammon.metrics.bin_values``), distinct scores of different
classes in one logit bin — gradient boosting's near-discrete clusters (iris: class 0's and class 2's column-1
scores 0.0019149 and 0.0019148 share a bin), which a resampled pool repeats — missed far more: wine × gradient
boosting AP 220.9 as read (10), 51.4 at the mix (1); iris × gradient boosting ROC AUC 108.8 (10, both mixes), AP
189.1 as read (9); digits 0–4 × naive Bayes AP 28.4 as read (5); now 13.4 (0), 3.0 (0); 1.7 (0); 33.7 (3); 4.1
(0). The remaining misses: the continuous cells' random-order reading, and iris's few hundred distinct samples
read through the ring's class shares (a sample of 2,048: their noise).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from sklearn import datasets as sk_data
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import average_precision_score, brier_score_loss, log_loss, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from streammon import Cumulative, Monitor, Policy, Sliding, Timed

BATCH, DELAY, SLIDING = 250, 3, 5_000
METRICS = ("roc_auc", "average_precision", "brier", "log_loss")
TARGET = {"roc_auc": (2e-3, 5e-3), "average_precision": (2e-3, 5e-3), "brier": (1e-8, 1e-8),
          "log_loss": (1e-8, 1e-8)}
EPS = 1e-15  # streammon's log-loss clip (docs/reference/metrics.md)

Draw = Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray, np.ndarray]]  # y, (n, K) scores, ref counts


# -- the data --------------------------------------------------------------------------------------------------


def _river(name: str) -> tuple[np.ndarray, np.ndarray]:
    from river import datasets as river_data

    rows = list(getattr(river_data, name)())
    keys = sorted(rows[0][0])
    labels = sorted({str(y) for _, y in rows})
    return (np.array([[float(x[key]) for key in keys] for x, _ in rows]),
            np.array([labels.index(str(y)) for _, y in rows]))


def _sklearn(name: str, classes: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    x, y = getattr(sk_data, f"load_{name}")(return_X_y=True)
    keep = np.ones(len(y), bool) if classes is None else y < classes
    return x[keep], y[keep]


DATA: dict[str, Callable[[], tuple[np.ndarray, np.ndarray]]] = {
    "breast_cancer": lambda: _sklearn("breast_cancer"), "wine": lambda: _sklearn("wine"),
    "iris": lambda: _sklearn("iris"), "digits": lambda: _sklearn("digits"),
    "digits_0-4": lambda: _sklearn("digits", 5), "phishing": lambda: _river("Phishing"),
    "image_segments": lambda: _river("ImageSegments"), "bananas": lambda: _river("Bananas"),
}
MODELS: dict[str, Callable[[], Any]] = {
    "logistic": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)),
    "naive_bayes": GaussianNB,
    "random_forest": lambda: RandomForestClassifier(60, random_state=0),
    "gradient_boosting": lambda: GradientBoostingClassifier(n_estimators=40, random_state=0),
    "knn": lambda: KNeighborsClassifier(15),
    "tree": lambda: DecisionTreeClassifier(max_depth=6, random_state=0),
}


@functools.cache
def held_out(data: str, model: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The training half's class counts, and the other half's true classes and ``model``'s probabilities."""
    x, y = DATA[data]()
    xa, xb, ya, yb = train_test_split(x, y, test_size=0.5, stratify=y, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = MODELS[model]().fit(xa, ya).predict_proba(xb)
    return np.bincount(ya), yb, p


def resampled(data: str, model: str, n: int) -> Draw:
    """``n`` samples drawn with replacement from the held-out half at a random mix (every class ≥ 3 %)."""
    def draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ref, y, p = held_out(data, model)
        k = len(ref)
        counts = rng.multinomial(n, 0.6 * rng.dirichlet(np.full(k, 2.0)) + 0.4 / k)
        rows = rng.permutation(np.concatenate([rng.choice(np.flatnonzero(y == c), counts[c]) for c in range(k)]))
        return y[rows], p[rows], ref
    return draw


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def binary(n: int, score: Callable[[np.random.Generator, np.ndarray], np.ndarray], prevalence: float = 0.2,
           ref: tuple[int, int] = (700, 300)) -> Draw:
    """A binary stream (class 1 at ``prevalence``) with class 1's probability ``score(rng, y)``."""
    def draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        y = (rng.random(n) < prevalence).astype(np.intp)
        s = score(rng, y)
        return y, np.column_stack([1 - s, s]), np.array(ref)
    return draw


def logit_normal(spread: float, shift: float = 1.0, centre: float = -0.5) -> Callable[..., np.ndarray]:
    return lambda rng, y: _sigmoid(spread * (rng.normal(size=len(y)) + shift * y + centre))


def beta(negative: tuple[float, float], positive: tuple[float, float]) -> Callable[..., np.ndarray]:
    return lambda rng, y: np.where(y == 1, rng.beta(*positive, len(y)), rng.beta(*negative, len(y)))


def rounded(decimals: int) -> Callable[..., np.ndarray]:
    return lambda rng, y: np.round(_sigmoid(rng.normal(size=len(y)) + 1.5 * y - 1.0), decimals)


def saturated(rng: np.random.Generator, y: np.ndarray) -> np.ndarray:
    """30 % of the scores exactly 0 or 1 (the true class), the rest continuous."""
    return np.where(rng.random(len(y)) < 0.3, y * 1.0, _sigmoid(rng.normal(size=len(y)) + 1.5 * y - 1.0))


def softmax(n: int, k: int, spread: float, *, mix: np.ndarray | None = None, decimals: int | None = None,
            saturate: float = 0.0) -> Draw:
    """K classes at ``mix`` (default: a random one), probabilities a softmax of ``spread``·(N(0, 1) + one-hot):
    rounded to ``decimals`` (the last column 1 − the others), or a ``saturate`` share one-hot exactly."""
    def draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        at = 0.6 * rng.dirichlet(np.full(k, 2.0)) + 0.4 / k if mix is None else mix
        y = rng.choice(k, n, p=at)
        z = spread * (rng.normal(size=(n, k)) + 1.5 * np.eye(k)[y])
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        if decimals is not None:
            p[:, :-1] = np.round(p[:, :-1], decimals)
            p[:, -1] = np.clip(1 - p[:, :-1].sum(axis=1), 0, 1)
        if saturate:
            hot = rng.random(n) < saturate
            p[hot] = np.eye(k)[y[hot]]
        return y, p, np.arange(k) * 20 + 100
    return draw


# -- the cases ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One stream and how it is fed: ``path``; ``clock``: no times given, the test's clock read; ``unscored``:
    every third batch without scores; ``restart``: saved and loaded half-way; ``order``: the monitor's classes
    (``classes=`` and the reference) in this permutation of the stream's; ``ovr``: one-vs-rest ROC AUC
    (``Policy``); ``strings``: labels ``"c0"``, ``"c1"``, …; ``two_columns``: a binary score as ``predict_proba``'s
    two columns in the order of ``Monitor.labels``; ``reference=False``: only ``classes=`` given, the reference
    learned from the first 1,000 samples counted."""

    name: str
    draw: Draw
    path: str = "update_many"
    clock: bool = False
    unscored: bool = False
    restart: bool = False
    order: tuple[int, ...] | None = None
    ovr: bool = False
    strings: bool = False
    two_columns: bool = False
    reference: bool = True
    seed: int = 0


PATHS = ("update_many", "predict_many", "update_many", "predict")


def _real_cases() -> list[Case]:
    cases = []
    for i, data in enumerate(DATA):
        for j, model in enumerate(MODELS):
            at = i * len(MODELS) + j
            n = 6_000 if data in ("digits", "image_segments") and at % 5 != 1 else 8_000
            cases.append(Case(f"{data}-{model}", resampled(data, model, n), path=PATHS[at % 4],
                              clock=at % 3 == 0, unscored=at % 5 == 1, restart=at % 7 == 2,
                              ovr=data in ("iris", "image_segments") and j % 2 == 0, seed=at))
    return cases


CASES = [
    *_real_cases(),
    Case("logit_spread_0.3", binary(12_000, logit_normal(0.3)), restart=True),
    Case("logit_spread_1", binary(20_000, logit_normal(1.0)), path="update", clock=True),
    Case("logit_spread_3", binary(8_000, logit_normal(3.0)), path="predict_many", unscored=True),
    Case("logit_spread_0.1", binary(8_000, logit_normal(0.1)), path="predict_many", clock=True),
    Case("beta_55_45_vs_50_50", binary(12_000, beta((50, 50), (55, 45))), two_columns=True, order=(1, 0)),
    Case("beta_5_2_vs_2_5", binary(8_000, beta((2, 5), (5, 2))), path="predict", restart=True, strings=True),
    Case("one_percent_class", binary(20_000, logit_normal(1.0, 2.0, -6.0), prevalence=0.01, ref=(980, 20))),
    Case("rounded_2_decimals", binary(8_000, rounded(2)), unscored=True, clock=True),
    Case("rounded_3_decimals", binary(8_000, rounded(3)), path="predict_many", restart=True),
    Case("saturated_0_1", binary(8_000, saturated), order=(1, 0), strings=True),
    Case("k3_spread_1", softmax(8_000, 3, 1.0), order=(2, 0, 1), strings=True, path="predict_many"),
    Case("k3_rounded_2_decimals", softmax(8_000, 3, 1.0, decimals=2), clock=True),
    Case("k5_spread_0.5", softmax(8_000, 5, 0.5), restart=True, unscored=True),
    Case("k5_saturated_ovr", softmax(8_000, 5, 1.5, saturate=0.3), ovr=True, order=(4, 2, 0, 1, 3)),
    Case("k5_spread_2_update", softmax(6_000, 5, 2.0), path="update", clock=True),
    Case("k3_classes_only", softmax(8_000, 3, 0.7), order=(1, 2, 0), reference=False, path="predict_many"),
    Case("k5_classes_only_ovr", softmax(8_000, 5, 1.0), order=(3, 1, 4, 0, 2), reference=False, ovr=True,
         restart=True, strings=True),
    Case("k10_spread_1", softmax(6_000, 10, 1.0), path="predict_many", restart=True, order=tuple(range(9, -1, -1))),
    Case("k10_one_percent_class", softmax(6_000, 10, 1.0, mix=np.r_[0.01, np.full(9, 0.11)]), ovr=True),
]


# -- feeding and recounting --------------------------------------------------------------------------------------


class Clock:
    """The monitor's clock: the time the test sets."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _oracle(y: np.ndarray, p: np.ndarray, priors: np.ndarray, positive: int | None,
            ovr: bool) -> dict[tuple[str, str], float]:
    """scikit-learn's values of a window's scored samples (canonical classes and columns), as read and at
    ``priors``."""
    k = p.shape[1]
    counts = np.bincount(y, minlength=k)
    out: dict[tuple[str, str], float] = {}
    clipped = np.clip(p, EPS, 1 - EPS)
    for mix, w in (("read", np.ones(len(y))), ("at_mix", (priors * len(y) / np.maximum(counts, 1))[y])):
        if positive is not None:
            truth, s = (y == positive).astype(int), p[:, positive]
            out["roc_auc", mix] = roc_auc_score(truth, s, sample_weight=w)
            out["average_precision", mix] = average_precision_score(truth, s, sample_weight=w)
            out["brier", mix] = brier_score_loss(truth, s, sample_weight=w)
            out["log_loss", mix] = log_loss(truth, clipped[:, positive], sample_weight=w, labels=[0, 1])
            continue
        if ovr:
            out["roc_auc", mix] = roc_auc_score(y, p, multi_class="ovr", labels=range(k), sample_weight=w)
        elif mix == "read":  # Hand & Till: each pair's classes weighted by constants, which cancel at any mix
            out["roc_auc", mix] = out["roc_auc", "at_mix"] = roc_auc_score(y, p, multi_class="ovo", labels=range(k))
        out["average_precision", mix] = average_precision_score(np.eye(k)[y], p, sample_weight=w)
        out["brier", mix] = brier_score_loss(y, p, labels=list(range(k)), sample_weight=w)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the clipped rows no longer sum to 1 exactly
            out["log_loss", mix] = log_loss(y, clipped, labels=list(range(k)), sample_weight=w)
    return out


class Feed:
    """A monitor fed one case's stream batch by batch, with the log of when each sample was counted."""

    def __init__(self, case: Case, y: np.ndarray, p: np.ndarray, ref: np.ndarray) -> None:
        self.case, self.y, self.p = case, y, p
        k = p.shape[1]
        self.names: list[Any] = [f"c{c}" for c in range(k)] if case.strings else list(range(k))
        order = case.order or tuple(range(k))
        self.clock = Clock()
        policy = Policy(metric_params={"roc_auc": {"multi_class": "ovr"}}) if case.ovr else None
        self.monitor = Monitor([Cumulative(), Sliding(SLIDING), Timed(20.0, buckets=4)],
                               reference={self.names[c]: int(ref[c]) for c in order} if case.reference else None,
                               classes=[self.names[c] for c in order], policy=policy, detector=None,
                               clock=self.clock)
        assert self.monitor.labels == tuple(self.names[c] for c in order)
        self.columns = list(order)  # the score columns in the order of Monitor.labels
        positive = self.monitor.positive
        self.positive = None if positive is None else self.names.index(positive)
        self.counted = np.full(len(y), math.nan)  # when each sample was counted (its label's time)
        self.order: list[np.ndarray] = []  # the samples' indices in the order they were counted
        self.scored = np.ones(len(y), bool)
        self.waiting: list[np.ndarray] = []  # predicted batches waiting for their labels

    def scores(self, rows: np.ndarray) -> Any:
        if self.positive is None or self.case.two_columns:
            return self.p[np.ix_(rows, self.columns)]
        return self.p[rows, self.positive]

    def batch(self, b: int, rng: np.random.Generator) -> None:
        """Batch ``b`` at time ``b``; with a ``predict`` path, the labels of batch ``b − DELAY`` too."""
        self.clock.now = t = float(b)
        m, rows = self.monitor, np.arange(b * BATCH, (b + 1) * BATCH)
        scored = not (self.case.unscored and b % 3 == 2)
        self.scored[rows] = scored
        y = [self.names[c] for c in self.y[rows]]
        pred = [self.names[c] for c in self.p[rows].argmax(axis=1)]
        when = None if self.case.clock else t
        score = self.scores(rows) if scored else None
        kwargs = {} if score is None else {"y_score": score}
        if self.case.path == "update_many":
            m.update_many(y, pred, t=when, **kwargs)
            self._counted(rows, t)
        elif self.case.path == "update":
            for i in range(BATCH):
                one = {} if score is None else {"y_score": score[i].tolist() if np.ndim(score) > 1 else score[i]}
                m.update(y[i], pred[i], t=when, **one)
            self._counted(rows, t)
        elif self.case.path == "predict_many":
            m.predict_many(rows.tolist(), pred, t=when, **kwargs)
            self.waiting.append(rows)
        else:
            for i, key in enumerate(rows.tolist()):
                one = {} if score is None else {"y_score": score[i]}
                m.predict(key, pred[i], t=when, **one)
            self.waiting.append(rows)
        while len(self.waiting) > DELAY or (self.waiting and (b + 1) * BATCH == len(self.y)):
            self._label(rng.permutation(self.waiting.pop(0)), when, t)

    def _label(self, rows: np.ndarray, when: float | None, t: float) -> None:
        truth = [self.names[c] for c in self.y[rows]]
        if self.case.path == "predict_many":
            self.monitor.label_many(rows.tolist(), truth, t=when)
        else:
            for key, label in zip(rows.tolist(), truth, strict=True):
                self.monitor.label(key, label, t=when)
        self._counted(rows, t)

    def _counted(self, rows: np.ndarray, t: float) -> None:
        self.counted[rows] = t
        self.order.append(rows)

    def held(self, now: float) -> dict[str, np.ndarray]:
        """The samples each window holds at ``now``, recounted from the log."""
        counted = ~np.isnan(self.counted)
        last = np.zeros(len(self.y), bool)
        last[np.concatenate(self.order)[-SLIDING:]] = True
        with np.errstate(invalid="ignore"):
            timed = np.floor(self.counted / 5) > math.floor(now / 5) - 4
        return {"cumulative": counted, f"sliding_{SLIDING}": last, "timed_20s": timed & counted}


def _errors(feed: Feed, now: float, worst: dict[tuple[str, str], float]) -> dict[str, Any]:
    """Each window of a report against scikit-learn; ``worst`` keeps the largest error per (metric, mix)."""
    report = feed.monitor.report()
    priors = np.array(list(reference_priors(feed)))
    values = {}
    for name, mask in feed.held(now).items():
        w = report.windows[name]
        chosen = mask & feed.scored
        assert (w.n, w.n_scored) == (mask.sum(), chosen.sum()), name
        assert w.n_scored > 2_048 and w.score_tally is not None and w.score_tally.samples is None, name
        want = _oracle(feed.y[chosen], feed.p[chosen], priors, feed.positive, feed.case.ovr)
        for (metric, mix), value in want.items():
            got = (w.scores if mix == "read" else w.corrected)[metric]
            values[name, metric, mix] = got
            worst[metric, mix] = max(worst[metric, mix], abs(got - value) if not math.isnan(got) else math.inf)
    return values


def reference_priors(feed: Feed) -> np.ndarray:
    """The reference mix in the stream's class order: the given counts', or the first 1,000 samples counted."""
    ref = feed.monitor.reference
    assert ref is not None
    priors = np.array([ref.priors[name] for name in feed.names])
    if not feed.case.reference:
        first = np.bincount(feed.y[np.concatenate(feed.order)[:1_000]], minlength=len(priors)) / 1_000
        assert priors == pytest.approx(first, abs=1e-12)
    return priors


@functools.cache
def worst_errors(name: str) -> dict[tuple[str, str], float]:
    """``measure`` of the case named, at its seed, once a test session."""
    case = next(c for c in CASES if c.name == name)
    return measure(case, case.seed)


def measure(case: Case, seed: int) -> dict[tuple[str, str], float]:
    """The worst |streammon − scikit-learn| per (metric, mix) over the case's reads: after 60 % of the stream,
    at its end, and (``restart``) just before the save and just after the load, which must read the same."""
    rng = np.random.default_rng(seed)
    y, p, ref = case.draw(rng)
    feed = Feed(case, y, p, ref)
    worst = dict.fromkeys(((m, mix) for m in METRICS for mix in ("read", "at_mix")), 0.0)
    batches = len(y) // BATCH
    for b in range(batches):
        feed.batch(b, rng)
        if case.restart and b == batches // 2:
            before = _errors(feed, b, worst)
            feed.monitor = Monitor.loads(feed.monitor.dumps(), clock=feed.clock)
            after = _errors(feed, b, worst)
            assert after == pytest.approx(before, abs=0, nan_ok=True)
        if b in (batches * 3 // 5, batches - 1):
            _errors(feed, b, worst)
    return worst


# -- the tests ---------------------------------------------------------------------------------------------------

# (case, metric, mix) cells measured past their target: worst |error| over the case's reads
MISSED: dict[tuple[str, str, str], float] = {}  # none at the cases' own seeds (the module docstring: other seeds)


def _cells() -> list[Any]:
    cells = []
    for case in CASES:
        for metric in METRICS:
            for mix in ("read", "at_mix"):
                measured = MISSED.get((case.name, metric, mix))
                marks = () if measured is None else pytest.mark.xfail(
                    strict=True, reason=f"measured {measured:.4f} > target {TARGET[metric][mix == 'at_mix']}")
                cells.append(pytest.param(case.name, metric, mix, id=f"{case.name}-{metric}-{mix}", marks=marks))
    return cells


@pytest.mark.parametrize(("case", "metric", "mix"), _cells())
def test_a_window_past_the_exact_limit_reads_scikit_learns_value(case: str, metric: str, mix: str) -> None:
    """Every read window of the case (cumulative, sliding 5,000, timed; more than 2,048 scored samples each) is
    within the issue's target of scikit-learn on the scored samples it holds, as read or at the reference mix."""
    assert worst_errors(case)[metric, mix] <= TARGET[metric][mix == "at_mix"]


def test_log_loss_past_the_limit_is_scikit_learns_below_its_own_clip() -> None:
    """A random forest's exact 0 for the true class reads ``−ln 1e-15`` (streammon's clip), where scikit-learn
    ≥ 1.5 reads ``−ln ε`` (float64's 2.2e-16): streammon's log loss of a window past the limit is scikit-learn's
    on the scores clipped first, and below scikit-learn's own by ``ln(1e-15/ε)/n`` per such sample."""
    ref, y, p = held_out("breast_cancer", "random_forest")
    rows = np.random.default_rng(3).choice(len(y), 6_000)
    y, p = y[rows], p[rows]
    m = Monitor([Cumulative()], reference={0: int(ref[0]), 1: int(ref[1])}, detector=None)
    assert m.positive == 0
    m.update_many(y.tolist(), p.argmax(axis=1).tolist(), y_score=p[:, 0])
    got = m.report().windows["cumulative"].scores["log_loss"]
    zeros = int(np.sum(p[np.arange(len(y)), y] == 0))
    assert zeros > 0
    assert got == pytest.approx(log_loss(y == 0, np.clip(p[:, 0], EPS, 1 - EPS)), abs=1e-12)
    gap = zeros * math.log(EPS / np.finfo(float).eps) / len(y)
    assert log_loss(y == 0, p[:, 0]) - got == pytest.approx(gap, rel=1e-9)


def test_with_a_reference_and_classes_in_another_order_scores_by_column_are_refused() -> None:
    """``classes=[2, 0, 1]`` beside a reference listing 0, 1, 2: ``Monitor.labels`` is the reference's order, and
    K = 3 scores could be meant in either order — given in ``classes=``'s order they would read another value
    (0.30 against scikit-learn's 0.91 here: rows that sum to 1 cannot show the mistake), so scores with a column
    per class (K = 3, and a binary ``predict_proba``'s two) are refused, naming both orders, nothing counted; a
    binary model's one score is taken. With the orders agreeing, K = 3 scores read scikit-learn's Hand & Till ROC
    AUC past the limit."""
    y, p, _ = softmax(5_000, 3, 1.0)(np.random.default_rng(0))
    m = Monitor([Cumulative()], classes=[2, 0, 1], reference={0: 1, 1: 1, 2: 1}, detector=None)
    assert m.labels == (0, 1, 2)
    with pytest.raises(ValueError, match=r"classes=\[2, 0, 1\] lists the classes in another order than "
                                         r"Monitor.labels \[0, 1, 2\]"):
        m.update_many(y.tolist(), p.argmax(axis=1).tolist(), y_score=p)
    with pytest.raises(ValueError, match="another order"):
        m.update(0, 0, y_score=[0.5, 0.3, 0.2])
    assert m.samples == 0
    ok = Monitor([Cumulative()], classes=[0, 1, 2], reference={0: 1, 1: 1, 2: 1}, detector=None)
    ok.update_many(y.tolist(), p.argmax(axis=1).tolist(), y_score=p)
    want = roc_auc_score(y, p, multi_class="ovo")
    assert ok.report().windows["cumulative"].scores["roc_auc"] == pytest.approx(want, abs=2e-3)
    binary = Monitor([Cumulative()], classes=[1, 0], reference={0: 0.8, 1: 0.2}, detector=None)
    with pytest.raises(ValueError, match="another order"):
        binary.update_many([0, 1], [0, 1], y_score=np.array([[0.9, 0.1], [0.2, 0.8]]))
    binary.update_many([0, 1], [0, 1], y_score=[0.1, 0.8])
    assert binary.report().windows["cumulative"].score_tally is not None
