"""Streams run after ``streammon.monitor.warming.warm_up`` in a process of their own: every compiled loop they call
must have been loaded by the warm-up (``tests/test_warm_up.py`` runs this and reads its last line).

    python tests/late_compiles.py [--wide]

``--wide``: the count widths a stream reaches only after 2³¹ samples (int64 histogram snapshots and census counts)
from the start. The streams differ from the warm-up's own: other class counts, windows, mixes, score rounding,
batch sizes and spans, per-sample predictions, a save and a load mid-stream.
"""

from __future__ import annotations

import sys
from typing import Any


def main() -> None:
    from streammon.monitor.warming import warm_up

    warm_up()
    import numba.core.dispatcher
    import numpy as np
    from numba import typeof

    late: list[str] = []
    original = numba.core.dispatcher.Dispatcher._compile_for_args  # type: ignore[attr-defined]

    def noted(self: Any, *args: Any, **kwargs: Any) -> Any:
        types = [str(typeof(a)) for a in args]  # type: ignore[no-untyped-call]
        late.append(f"{self.py_func.__module__}.{self.py_func.__name__}{types}")
        return original(self, *args, **kwargs)

    numba.core.dispatcher.Dispatcher._compile_for_args = noted  # type: ignore[attr-defined]
    if "--wide" in sys.argv:
        from streammon.counting import score_census
        from streammon.counting.windows import scored

        scored.count_type = lambda most: np.int64  # type: ignore[attr-defined]
        score_census.COUNT32 = 100
    from streammon import Monitor, Sliding, Timed, Validation
    from streammon.monitor import default_windows

    rng = np.random.default_rng(7)

    def scores(n: int, k: int, decimals: int | None) -> Any:
        p = rng.dirichlet(np.ones(k) * 0.5, size=n)
        if decimals is not None:
            p = np.round(p, decimals)
            p[:, -1] = np.clip(1 - p[:, :-1].sum(axis=1), 0, 1)
            p /= p.sum(axis=1, keepdims=True)
        return p

    for k in (2, 4, 10):
        for decimals in (None, 3, 1):
            labels = np.array([f"x{i}" for i in range(k)])
            m = Monitor([*default_windows(), Sliding(300), Timed(120, buckets=4)],
                        reference={label: i + 1 for i, label in enumerate(labels)},
                        positive=labels[-1] if k == 2 else None)
            t = 100.0
            for n, span in ((700, 10.0), (12_000, 900.0), (40_000, 50.0), (3_000, 4_000.0)):
                p = scores(n, k, decimals)
                true = labels[rng.choice(k, n, p=np.r_[0.7, np.full(k - 1, 0.3 / (k - 1))])]
                m.update_many(true, labels[p.argmax(axis=1)], t=np.sort(rng.uniform(t, t + span, n)),
                              y_score=p[:, -1] if k == 2 else p)
                t += span
                m.report()
            for i, row in enumerate(scores(200, k, decimals)):
                m.predict(f"p{i}", labels[row.argmax()], t=t, y_score=float(row[-1]) if k == 2 else row.tolist())
            m.label_many([f"p{i}" for i in range(0, 200, 2)], labels[rng.choice(k, 100)], t=t + 1.0)
            m.report()
            loaded = Monitor.loads(m.dumps())
            loaded.report()
            for i in range(50):
                loaded.update(labels[i % k], labels[0], t=t + 2.0 + i, y_score=(0.3 if k == 2 else [1.0 / k] * k))
            loaded.report()
    y = rng.choice(["a", "b", "c"], 900, p=[0.6, 0.3, 0.1])
    p = scores(900, 3, None)
    decided = np.array(["a", "b", "c"])[p.argmax(axis=1)]
    m = Monitor([Sliding(500)], baseline=Validation(y, decided, p, classes=["a", "b", "c"], bootstrap=2))
    m.predict_many([f"v{i}" for i in range(900)], decided[::-1], y_score=p[::-1])
    m.report()
    print(f"late compiles: {len(late)}", *late, sep="\n")


if __name__ == "__main__":
    main()
