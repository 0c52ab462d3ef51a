"""Counting over batches longer than one chunk: per-block and confusion counts equal a recount with np.add.at."""

from __future__ import annotations

import numpy as np
import pytest

from streammon.counting.batch import CHUNK, count_pairs
from streammon.counting.blocks import BLOCK, block_class_counts, block_confusion


def _recount(t: np.ndarray, p: np.ndarray, position: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    blocks = ((position % BLOCK) + np.arange(len(t))) // BLOCK
    total = np.zeros((blocks[-1] + 1, k), np.int64)
    right = np.zeros_like(total)
    np.add.at(total, (blocks, t), 1)
    np.add.at(right, (blocks, t), (t == p).astype(np.int64))
    delta = np.zeros((k, k), np.int64)
    np.add.at(delta, (t, p), 1)
    return delta, right, total


@pytest.mark.parametrize(("k", "position"), [(2, 0), (5, BLOCK - 1), (16, 1_234_567), (40, 77)])
def test_multi_chunk_batches_count_exactly(k: int, position: int) -> None:
    """Three chunks and a remainder, at any block offset: every count equals the recount."""
    rng = np.random.default_rng(k)
    n = 3 * CHUNK + 77
    t, p = rng.integers(0, k, n), rng.integers(0, k, n)
    delta, right, total = _recount(t, p, position, k)
    if k <= 16:
        got = block_confusion(t, p, position, k)
        assert all(np.array_equal(a, b) for a, b in zip(got, (delta, right, total), strict=True))
    got_right, got_total = block_class_counts(t, p, position, k)
    assert np.array_equal(got_right, right) and np.array_equal(got_total, total)
    assert np.array_equal(count_pairs(t, p, k), delta)
