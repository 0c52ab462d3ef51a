"""Per-block counts for the degradation detectors: blocks of ``BLOCK`` samples aligned to the stream.

Counted over a batch's label codes in cache-sized chunks and permuted once into class
order. Up to ``SHARED_COUNT_MAX_CLASSES`` codes one ``bincount`` over (block, true,
pred) also gives the windows their counts.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from streammon.counting.batch import CHUNK, Batch, chunk_bounds, to_index_columns, to_index_square

IntArray = npt.NDArray[np.int64]
IntMatrix = npt.NDArray[np.int64]
BLOCK = 256  # CHUNK is a multiple of it
SHARED_COUNT_MAX_CLASSES = 16  # up to 16×16 cells a block, one bincount serves windows and detectors


def block_confusion(true: npt.NDArray[np.intp], pred: npt.NDArray[np.intp], position: int, k: int
                    ) -> tuple[IntMatrix, IntArray, IntArray]:
    """A batch's confusion counts (k × k), and per block (aligned to stream ``position``) and class its
    (right, total) counts (blocks × k): one ``bincount`` over (block, true, pred) serves the windows
    and the detectors. Counted in chunks of whole blocks through one reused key buffer that stays
    in cache; each chunk's per-block counts are reduced while they are still there.

    >>> delta, right, total = block_confusion(np.array([0, 1, 1]), np.array([0, 1, 0]), position=BLOCK - 1, k=2)
    >>> delta.tolist(), right.tolist(), total.tolist()
    ([[1, 0], [1, 1]], [[1, 0], [0, 1]], [[1, 0], [0, 2]])
    """
    n, cells = len(true), k * k
    offset = position % BLOCK
    n_blocks = (offset + n - 1) // BLOCK + 1
    delta = np.zeros((k, k), np.int64)
    right = np.empty((n_blocks, k), np.int64)
    total = np.empty((n_blocks, k), np.int64)
    key = np.empty(min(n, CHUNK), np.intp)
    first_block = 0
    for start, stop in chunk_bounds(n, offset):  # every chunk after the first starts a block
        m = stop - start
        chunk = key[:m]
        np.multiply(true[start:stop], k, out=chunk)
        chunk += pred[start:stop]
        chunk += block_ids(offset, m, scale=cells)
        blocks = (offset + m - 1) // BLOCK + 1
        counts = np.bincount(chunk, minlength=blocks * cells).reshape(blocks, k, k)
        delta += counts.sum(axis=0)
        # (Mutation testing: "BIJ->BI" names the same axes, an equivalent mutant.)
        np.einsum("bij->bi", counts, out=total[first_block:first_block + blocks])  # row sums, fast for small k
        right[first_block:first_block + blocks] = np.diagonal(counts, axis1=1, axis2=2)
        first_block += blocks
        offset = 0
    return delta, right, total


def block_class_counts(true: npt.NDArray[np.intp], pred: npt.NDArray[np.intp], position: int, k: int
                       ) -> tuple[IntArray, IntArray]:
    """Per block (aligned to stream ``position``) and class: (right, total) counts, each blocks × k.

    What the detectors read when the per-block confusion would be too large (k > 16): one
    ``bincount`` over (block, correct, class), in cache-sized chunks like ``block_confusion``.

    >>> right, total = block_class_counts(np.array([0, 1, 1]), np.array([0, 1, 0]), position=BLOCK - 1, k=2)
    >>> right.tolist(), total.tolist()
    ([[1, 0], [0, 1]], [[1, 0], [0, 2]])
    """
    n = len(true)
    offset = position % BLOCK
    counts = np.empty(((offset + n - 1) // BLOCK + 1, 2, k), np.int64)
    key = np.empty(min(n, CHUNK), np.intp)
    correct = np.empty(min(n, CHUNK), np.bool_)
    first_block = 0
    for start, stop in chunk_bounds(n, offset):  # every chunk after the first starts a block
        m = stop - start
        chunk, right = key[:m], correct[:m]
        np.equal(true[start:stop], pred[start:stop], out=right)
        np.multiply(right, k, out=chunk)
        chunk += true[start:stop]
        chunk += block_ids(offset, m, scale=2 * k)
        blocks = (offset + m - 1) // BLOCK + 1
        counts[first_block:first_block + blocks] = np.bincount(chunk, minlength=blocks * 2 * k).reshape(blocks, 2, k)
        first_block += blocks
        offset = 0
    right_counts = counts[:, 1, :]
    return right_counts.copy(), counts[:, 0, :] + right_counts


def block_counts(batch: Batch, position: int, k: int, capacity: int) -> tuple[IntArray, IntArray]:
    """Per block (aligned to stream ``position``) and class: (right, total), blocks × ``k`` in index order.

    Counted over the batch's codes and permuted once. Up to ``SHARED_COUNT_MAX_CLASSES``
    codes, the per-block confusion counts also give the batch's confusion counts, handed
    to the windows through ``batch.preset_delta`` (one ``bincount`` for both).
    """
    codes = batch.code_span(k)
    # (Mutation testing: `<` or preset_delta(None, ...) only leave the batch to recount the same delta itself:
    # equivalent mutants.)
    if codes <= SHARED_COUNT_MAX_CLASSES:
        delta, right, total = block_confusion(batch.true, batch.pred, position, codes)
        batch.preset_delta(capacity, to_index_square(delta, batch.lut, capacity))
    else:
        right, total = block_class_counts(batch.true, batch.pred, position, codes)
    return to_index_columns(right, batch.lut, k), to_index_columns(total, batch.lut, k)


_BLOCK_IDS: dict[int, IntArray] = {}


def block_ids(offset: int, n: int, scale: int = 1) -> IntArray:
    """``scale · ((offset + arange(n)) // BLOCK)`` as a read-only view of a cached array."""
    need = offset + n
    # (Mutation testing: mutants that only skip, shrink or stop growing the cache (no doubling, no BLOCK minimum, a
    # key or entry of None) recompute the same ids; np.arange's default dtype is int64 like the one given, and
    # writeable = None is False: equivalent.)
    cached = _BLOCK_IDS.get(scale)
    if cached is None or len(cached) < need:
        size = max(need, 2 * (0 if cached is None else len(cached)), BLOCK)
        cached = np.arange(size, dtype=np.int64) // BLOCK * scale
        cached.flags.writeable = False
        _BLOCK_IDS[scale] = cached
    return cached[offset:need]
