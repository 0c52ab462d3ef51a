"""Saves a growing monitor to a path again and again until killed (for the kill-during-save test).

Usage: python saver.py PATH. Prints ``saved <samples>`` after each completed save.
"""

from __future__ import annotations

import sys

import numpy as np

from streammon import Cumulative, Monitor, Sliding, Timed


def main() -> None:
    path = sys.argv[1]
    monitor = Monitor([Cumulative(), Sliding(200_000), Timed(3600)], reference={"a": 1, "b": 1, "c": 1})
    rng = np.random.default_rng(0)
    while True:
        monitor.update_many(rng.choice(["a", "b", "c"], 50_000), rng.choice(["a", "b", "c"], 50_000))
        monitor.save(path)
        print(f"saved {monitor.samples}", flush=True)


if __name__ == "__main__":
    main()
