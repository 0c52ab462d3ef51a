"""A monitor's saved state, written: ``save`` (the file atomically, then the journal's checkpoint), ``dumps``;
``close`` releases the durable pending store.

The state file's body holds the tally's counts, the write side's time, the policy and detector, the alert bookkeeping
kept between reads (``streammon.monitor.reading``), the pending store and the ``baseline=`` counts; it is bounded on
save as on load (``streammon.state_schema.check_memory``). ``Saving`` is the base of ``streammon.monitor.Monitor``,
whose ``load`` and ``loads`` build a monitor back from such a body (a load is a construction).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from streammon import state
from streammon.counting.counts import ConfusionCounts
from streammon.counting.sparse import sparse
from streammon.findings.distortion import Policy
from streammon.findings.expected import PriorBaselines
from streammon.monitor.reading import Reading
from streammon.pending import Journal, PendingRecords
from streammon.state_schema import check_memory
from streammon.tally import Tally


class Saving(Reading):
    """A monitor's state written to a file or text, and its durable pending store closed (see the module docstring)."""

    def __init__(self, tally: Tally, clock: Callable[[], float], records: PendingRecords, journal: Journal | None, *,
                 policy: Policy, prior_baselines: PriorBaselines) -> None:
        super().__init__(tally, clock, records, journal, policy=policy, prior_baselines=prior_baselines)
        self._save_lock = threading.Lock()

    def save(self, path: str | os.PathLike[str]) -> None:
        """Save the monitor's whole state to ``path`` atomically (see ``streammon.state``).

        With a durable pending store, the state file records the journal's last row and the
        journal then drops the rows it covers: a kill at any moment leaves a state file and a
        journal that ``Monitor.load(path, pending=...)`` joins without loss or double count.
        """
        with self._save_lock:  # saves are ordered: a later save's snapshot, file and truncation follow this one's
            text, mark = self._dumps()
            state.write_atomically(path, text)
            if self._journal is not None:
                self._journal.truncate(mark)

    def close(self) -> None:
        """Close the durable pending store (a no-op without one), so that another monitor may open it.

        Every acknowledged call is committed already: closing loses nothing, and a monitor that is
        never closed releases the store when it is garbage-collected or its process ends.
        ``Monitor`` is also a context manager that closes on exit.
        """
        with self._save_lock, self._lock:
            if self._journal is not None:
                self._journal.close()

    def dumps(self) -> str:
        """The monitor's whole state as state-file text (what ``save`` writes)."""
        return self._dumps()[0]

    def _dumps(self) -> tuple[str, int]:
        with self._lock:
            self._flush()
            mark = 0 if self._journal is None else self._journal.last_id
            body = {
                **self._tally.state(),
                "last_t": None if self._last_t == -math.inf else self._last_t,
                "clock_driven": self._clock_driven,
                "policy": self._policy.as_dict(),
                "detector": asdict(self._tally.watch.settings),
                "alert_since": [[*key, *value] for key, value in self._alert_since.items()],
                "alert_pending": [[*key, *value] for key, value in self._alert_pending.items()],
                "alert_clearing": [[*key, *value] for key, value in self._alert_clearing.items()],
                "alert_pools": [[*key, list(pool)] for key, pool in self._alert_pools.items()],
                "alert_looked_at": self._looked_at,
                "pending": self._pending_state(mark),
                "prior_baseline": _baseline_state(self._prior_baselines.given),
                "closed": self._tally.index.closed,
                "prediction_scores": self._prediction_scores_state(),
            }
        check_memory(body, saving=True)
        return state.dumps(body), mark


def _baseline_state(given: ConfusionCounts | None) -> dict[str, Any] | None:
    """The monitor's ``baseline=`` counts for its state file (checked on load by ``check_prior_baseline``)."""
    if given is None:
        return None
    return {"labels": [state.encode_label(x) for x in given.labels], "counts": sparse(given.matrix)}
