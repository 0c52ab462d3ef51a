"""The monitor: per-sample confusion counts in several windows at once, and their reports.

Writes (``update``, ``update_many``) are the ``Intake``'s; the counts live in a ``Tally``;
a report copies them under the lock and computes outside it (``streammon.findings``), and the alerts are kept
between reports (``streammon.monitor.reading``: ``Reading``, and ``reports``); ``save`` and ``dumps`` write the state
(``streammon.monitor.saving``: ``Saving``, the base of ``Monitor``, on ``Reading``), ``load`` builds a monitor back.
A rejected sample or batch raises ``ValueError``/``TypeError`` and changes nothing.

>>> m = Monitor([Cumulative(), Sliding(4)], reference={"legit": 900, "fraud": 100})
>>> m.update_many(["legit"] * 6 + ["fraud"] * 2, ["legit"] * 5 + ["fraud"] * 3)
>>> r = m.report()
>>> r.positive, r.windows["cumulative"].n, r.windows["sliding_4"].n
('fraud', 8, 4)
>>> r.windows["cumulative"].scores["tpr"], round(r.windows["cumulative"].scores["tnr"], 3)
(1.0, 0.833)
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

from streammon import state
from streammon.counting.counts import DEFAULT_MAX_CLASSES, ClassIndex, ConfusionCounts
from streammon.counting.sparse import dense
from streammon.counting.validation import Validation
from streammon.counting.windows import Cumulative, Sliding, Timed, Window
from streammon.detection.baseline import DetectorSettings, baseline_counts
from streammon.detection.watch import DegradationWatch
from streammon.findings.distortion import Policy
from streammon.findings.expected import PriorBaselines, as_confusion
from streammon.findings.frozen import FrozenMap
from streammon.findings.reference import Reference
from streammon.monitor.reading import ALERT_LOG as ALERT_LOG  # re-exported: moved there
from streammon.monitor.reading import reports as reports  # re-exported: moved there (streammon.monitor.reports)
from streammon.monitor.saving import Saving
from streammon.pending import DEFAULT_LABEL_TTL, DEFAULT_MAX_PENDING, DEFAULT_MAX_PENDING_BYTES, Journal, PendingRecords
from streammon.pending.schema import check_pending
from streammon.state_schema import UPGRADES, check_body, check_memory
from streammon.tally import WINDOW_TYPES, Tally, column_order_refusal

DEFAULT_WARMUP = 1000


def default_windows() -> list[Window]:
    """cumulative, sliding_1000, sliding_10000 and timed_3600s."""
    return [Cumulative(), Sliding(1000), Sliding(10_000), Timed(3600)]


class Monitor(Saving):
    """Confusion counts of a live classifier in several windows, and their reports.

    Parameters
    ----------
    windows
        The windows to keep (default: ``default_windows()``). Names must be unique.
    reference
        The training class mix as counts or priors per label. It defines IR, the
        priors for prior correction, and for binary problems the positive class
        (the reference minority unless ``positive`` names one). Without it the
        reference is learned from the true labels of the first ``warmup`` samples
        (every known class included, zeros too); until then reference-based
        values are NaN and the binary positive class is the warm-up minority so far (a binary ``Validation``
        baseline's ``positive`` instead, which the learned reference does not change: see ``positive``).
    positive
        The label of the positive class for binary metrics. Without it and without a reference, a binary
        ``streammon.Validation`` baseline's ``positive`` (the class its (n,) scores are the probability of).
    classes
        Labels to register up front (in this order), so K is known before data. ``Monitor.labels``
        lists the reference's classes first, in the reference's order, then the others of ``classes``: with
        both given in different orders, a score's columns (K > 2, or a binary ``predict_proba``'s two) could be
        meant either way, so such scores are refused (``ValueError`` naming both orders); a binary model's one
        score (the positive class's) is taken.
        With a reference or ``classes``, a batch (or sample) whose labels share no type
        (str / int) with them is refused: ``0``/``1`` against ``"legit"``/``"fraud"`` is a mistake.
    closed
        ``True``: the classes are those of the reference, ``classes`` and ``positive``, and
        no other: a sample, prediction or label of another class (a mistyped ``"Fraud"``)
        is refused like any bad label (``ValueError`` naming it), nothing counted. By
        default the set is open: a stray label becomes a class of its own for good — every
        window that holds it has one more class (K = 3 for a binary model: the binary
        metrics leave its reports, G-mean and minimum recall read 0 while the stray class
        is never predicted right) until it leaves the window; only the cumulative window
        keeps it forever.
    warmup
        Samples used to learn the reference when none is given.
    max_classes
        Cap on distinct labels (default 256): a new label beyond it is rejected.
    baseline
        Each class's expected performance for degradation alerts: a validation
        confusion matrix as ``ConfusionCounts``, ``{true: {pred: count}}``, or a K×K
        array in the order of the classes known at construction (reference, then
        ``classes``), or a ``Validation`` (a labelled, scored validation set: its
        confusion counts, and the label-free estimates with scores). A class it
        does not cover learns its baseline from its first
        ``detector.baseline_samples`` labelled samples.
    detector
        ``DetectorSettings`` of the per-class degradation CUSUM.
    clock
        Time source for samples given without ``t`` (default ``time.time``).
    policy
        Tolerances and metric parameters (``Policy``).
    pending
        Where predictions wait for their labels (``predict``/``label``, see
        ``streammon.labelling``): None keeps them in memory (saved with ``save``); a path
        keeps a durable SQLite journal too (``streammon.pending.sqlite``): every call that
        returned survives ``kill -9``. Opening a journal that a ``save`` already checkpointed
        needs that state file: ``Monitor.load(state, pending=path)``.
    max_pending
        Predictions remembered at most (default 1,000,000): a prediction is evicted, counted
        as never labelled, once this many newer ones came. Memory per prediction at this
        bound, the key included (``streammon.pending.memory``): ~170–200 B with int keys,
        ~180–210 B with 12-character keys, ~200–235 B with UUIDs, ~680–735 B with
        512-character keys (so ~180–210 MB at the default with short keys).
    max_pending_bytes
        Bytes the remembered predictions may take (default 256 MiB), as accounted by
        ``streammon.pending.sizes``: 160 B a prediction plus its key (an int 32 B; an ASCII
        str 64 B + 1 B a character; any other str 80 B + 4 B a character), within ~15 % of
        the measured RSS above. While more is held the oldest are evicted, as by
        ``max_pending``: with the defaults, keys up to 44 ASCII characters hit the count first
        (UUIDs: 1,000,000), 512-character keys this bound (~364,000 kept).
    label_ttl
        Seconds a prediction waits for its label (default 90 days): then it expires,
        counted as never labelled, and a later label is an orphan.

    Notes
    -----
    Samples carry an optional time ``t`` (seconds); times must never decrease.
    Timed windows follow the sample times when given, else the clock — then a
    quiet period empties them too.
    """

    def __init__(
        self,
        windows: Iterable[Window] | None = None,
        *,
        reference: Mapping[Any, Any] | None = None,
        positive: Any = None,
        classes: Iterable[Any] | None = None,
        warmup: int = DEFAULT_WARMUP,
        max_classes: int = DEFAULT_MAX_CLASSES,
        baseline: Validation | ConfusionCounts | Mapping[Any, Mapping[Any, int]] | None = None,
        detector: DetectorSettings | None = None,
        clock: Callable[[], float] = time.time,
        policy: Policy | None = None,
        pending: str | os.PathLike[str] | None = None,
        max_pending: int = DEFAULT_MAX_PENDING,
        label_ttl: float = DEFAULT_LABEL_TTL,
        closed: bool = False,
        max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES,
    ) -> None:
        windows = _checked_windows(default_windows() if windows is None else windows)
        if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 1:
            raise ValueError(f"warmup must be an int >= 1, got {warmup!r}")
        if not callable(clock):
            raise TypeError(f"clock must be a callable returning seconds, got {clock!r}")
        index = ClassIndex(max_classes=max_classes)
        ref = None if reference is None else Reference.of(reference)
        if positive is None and ref is None and isinstance(baseline, Validation) and baseline.positive is not None:
            positive = baseline.positive  # the class the validation's scores are about: the monitor's scores too
        initial: list[Any] = list(ref.labels) if ref else []
        declared = list(classes or [])
        initial += declared
        if positive is not None:
            initial.append(positive)
        if positive is not None and ref is not None and positive not in ref.priors:
            raise ValueError(f"positive={positive!r} is not a class of the reference {list(ref.labels)}")
        given = baseline_counts(baseline, list(dict.fromkeys(initial)))
        initial += [label for label, _, _ in given]
        index.register(initial)
        if initial:
            index.declare()  # a batch must share a label type with the reference / classes
        if not isinstance(closed, bool):
            raise TypeError(f"closed must be True or False, got {closed!r}")
        if closed:
            index.close()  # raises without 2 classes up front
        watch = DegradationWatch(
            detector or DetectorSettings(),
            {index.ids[label]: (correct, total) for label, correct, total in given},
        )
        chosen = None if positive is None else index.labels[index.ids[positive]]
        records = PendingRecords(max_pending=max_pending, label_ttl=label_ttl, max_pending_bytes=max_pending_bytes)
        tally = Tally(windows, index, watch, reference=ref, positive=chosen, warmup=warmup)
        tally.column_order = column_order_refusal(declared, index.labels) if ref is not None else None
        super().__init__(tally, clock, records, None, policy=policy or Policy(),
                         prior_baselines=PriorBaselines(as_confusion(baseline, list(dict.fromkeys(initial))),
                                                        baseline if isinstance(baseline, Validation) else None))
        if pending is not None:
            journal = Journal(pending)
            if journal.truncated_to:
                journal.close()
                raise ValueError(f"the pending store {os.fspath(pending)} was checkpointed by a save: open it "
                                 "with Monitor.load(state_file, pending=...), which replays it after that state")
            self._replay(journal, 0)

    # -- properties ---------------------------------------------------------------------------

    @property
    def labels(self) -> tuple[Hashable, ...]:
        """The known classes in index order."""
        return self._tally.index.labels

    @property
    def positive(self) -> Hashable | None:
        """The binary positive class now (the given one or a binary ``Validation`` baseline's, else the reference
        minority, else the warm-up minority so far); None unless the monitor has exactly 2 classes. A binary
        ``y_score`` is this class's probability."""
        index = self._tally.positive_index()
        return None if index is None else self._tally.index.labels[index]

    @property
    def closed(self) -> bool:
        """Whether the class set is closed (``closed=True``): a label of another class is refused."""
        return self._tally.index.closed

    @property
    def window_names(self) -> tuple[str, ...]:
        """The windows' names, in order."""
        return tuple(w.name for w in self._tally.windows)

    @property
    def reference(self) -> Reference | None:
        """The reference mix (None while it is still being learned)."""
        return self._tally.reference

    def counts(self) -> dict[str, ConfusionCounts]:
        """The raw counts of every window now (no metrics computed: cheap), read-only like a report.

        >>> m = Monitor([Sliding(2)])
        >>> m.update_many(["a", "b", "b"], ["a", "a", "b"])
        >>> m.counts()["sliding_2"].to_dict()
        {'b': {'a': 1, 'b': 1}}
        """
        with self._lock:
            self._flush()
            view = self._tally.view(self._read_time())
        windows = {name: ConfusionCounts(view.labels, counts) for name, _, counts in view.windows}
        return FrozenMap(windows, noun="window")

    def __enter__(self) -> Monitor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, clock: Callable[[], float] = time.time,
             max_bytes: int = state.MAX_BYTES, pending: str | os.PathLike[str] | None = None,
             validation: Validation | None = None) -> Monitor:
        """A monitor restored from ``save``: same reports, and its windows continue exactly.

        Raises ``streammon.state.StateError`` (a ``ValueError``) for a truncated, tampered,
        foreign or oversized (``max_bytes``, default 256 MiB) file, or one whose parts are out
        of bounds or contradict each other — checked before anything is built from it
        (``streammon.state_schema``), so loading costs time and memory in proportion to the file,
        besides the monitor's dense count matrices (at most ``state_schema.MAX_MEMORY``, 8 GiB).
        With ``pending`` (the monitor's durable pending store), the journal's rows after the
        state file's mark are replayed: the one recovery path after a restart or a kill.
        ``validation``: the ``streammon.Validation`` the monitor was made with (``baseline=``) — the state file
        keeps only its confusion counts, so without it the label-free estimate falls back to the hard-label one;
        its counts must be the saved baseline's (a ``ValueError`` otherwise, before anything is built).
        """
        return cls._from_body(state.read(path, max_bytes=max_bytes, upgrades=UPGRADES), clock, pending, validation)

    @classmethod
    def loads(cls, data: str | bytes, *, clock: Callable[[], float] = time.time,
              max_bytes: int = state.MAX_BYTES, pending: str | os.PathLike[str] | None = None,
              validation: Validation | None = None) -> Monitor:
        """A monitor restored from ``dumps`` text (see ``load``)."""
        return cls._from_body(state.loads(data, max_bytes=max_bytes, upgrades=UPGRADES), clock, pending,
                              validation)

    @classmethod
    def _from_body(cls, body: dict[str, Any], clock: Callable[[], float],
                   pending: str | os.PathLike[str] | None = None, validation: Validation | None = None) -> Monitor:
        if validation is not None and not isinstance(validation, Validation):
            raise TypeError(f"validation must be a streammon.Validation, got {type(validation).__name__}")
        _check_saved_validation(body.get("prior_baseline"), validation)
        check_body(body)
        saved = check_pending(body.get("pending"), body["capacity"], len(body["windows"]), len(body["labels"]))
        check_memory(body)
        try:
            windows = []
            for item in body["windows"]:
                params = dict(item["describe"])
                windows.append(WINDOW_TYPES[params.pop("kind")](**params))
            labels = [state.decode_label(x) for x in body["labels"]]
            positive = None if body["positive"] is None else state.decode_label(body["positive"])
            monitor = cls(windows, classes=labels, positive=positive, max_classes=body["max_classes"],
                          warmup=max(1, body["warmup_left"]), clock=clock, policy=Policy.of_saved(body["policy"]),
                          detector=DetectorSettings(**body["detector"]), max_pending=saved["max_pending"],
                          label_ttl=saved["label_ttl"], closed=body.get("closed", False),
                          max_pending_bytes=saved["max_pending_bytes"])
            if monitor.labels != tuple(labels):
                raise state.StateError("saved classes do not rebuild the same class index")
            monitor._tally.restore(body)
            monitor._last_t = -math.inf if body["last_t"] is None else float(body["last_t"])
            monitor._clock_driven = bool(body["clock_driven"])
            monitor._alert_since, monitor._alert_clearing = (
                {(k, w, s): (int(n), float(t)) for k, w, s, n, t in body.get(part, ())}
                for part in ("alert_since", "alert_clearing"))  # the last: absent from older files
            # absent from older files; their entries lack the reads count (one read known: the first)
            monitor._alert_pending = {(k, w, s): (int(n), float(t), int(reads[0]) if reads else 1)
                                      for k, w, s, n, t, *reads in body.get("alert_pending", ())}
            monitor._alert_pools = {(k, w, s): tuple(int(x) for x in pool)  # absent from older files
                                    for k, w, s, pool in body.get("alert_pools", ())}
            monitor._looked_at = body.get("alert_looked_at", -1)  # absent from older files: the next read is a look
            monitor._restore_pending(saved)
            monitor._restore_prediction_scores(body.get("prediction_scores"))  # absent from older files
            given = body.get("prior_baseline")  # absent from files written before the estimate existed
            if given is not None:
                monitor._prior_baselines = PriorBaselines(
                    ConfusionCounts([state.decode_label(x) for x in given["labels"]],
                                    dense(given["counts"], len(given["labels"]))), validation)
        except state.StateError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as exc:
            raise state.StateError(f"state does not describe a valid monitor: {exc!r}") from exc
        if pending is not None:
            journal = Journal(pending)
            if journal.truncated_to > saved["mark"]:
                journal.close()
                raise state.StateError(f"the pending store {os.fspath(pending)} was checkpointed at row "
                                       f"{journal.truncated_to}, after this state file (row {saved['mark']}): load "
                                       "the newer state file")
            monitor._replay(journal, saved["mark"])
        return monitor

    @property
    def max_classes(self) -> int:
        """The cap on distinct labels."""
        return self._tally.index.max_classes

    def __repr__(self) -> str:
        return f"Monitor(windows={self.window_names!r}, classes={len(self._tally.index)}, samples={self.samples})"


def _checked_windows(given: Iterable[Window]) -> list[Window]:
    """The windows of a monitor: at least one, each a ``Window``, their names unique."""
    windows = list(given)
    if not windows:
        raise ValueError("a monitor needs at least one window")
    for w in windows:
        if not isinstance(w, Window):
            raise TypeError(f"windows must be Window objects (Cumulative, Sliding, Timed), got {w!r}")
    names = [w.name for w in windows]
    if len(set(names)) != len(names):
        raise ValueError(f"window names must be unique, got {names}")
    return windows


def _check_saved_validation(given: Any, validation: Validation | None) -> None:
    """``load(validation=...)``: the Validation's counts must be the saved baseline's (a clear ``ValueError``)."""
    if validation is None:
        return
    if not isinstance(given, Mapping):
        raise ValueError("validation= given, but the saved monitor has no baseline to attach it to")
    try:
        saved = ConfusionCounts([state.decode_label(x) for x in given["labels"]],
                                dense(given["counts"], len(given["labels"])))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise state.StateError(f"state does not describe a valid monitor: {exc!r}") from exc
    labels, counts, theirs = saved.labels, saved.matrix, validation.counts
    if set(labels) != set(validation.labels) or any(
            counts[labels.index(a), labels.index(b)] != theirs[i, j]
            for i, a in enumerate(validation.labels) for j, b in enumerate(validation.labels)):
        raise ValueError(f"validation= holds other counts ({validation!r}) than the saved baseline: it is not the "
                         "validation set this monitor was made with")
