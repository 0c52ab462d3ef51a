"""Size limits of the log readers, checked before decoding: decompression bombs refused in bounded memory."""

from __future__ import annotations

import gzip
import itertools
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyarrow import ipc

from streammon.logs import ReplayError, replay
from streammon.logs.limits import MAX_CELL_BYTES, check_parquet, pages
from streammon.logs.page_walk import OK, walk

ROOT = Path(__file__).resolve().parents[1]
BOMB = 256 << 20  # one label cell of 256 MiB, compressed to a few hundred kB
PEAK_BOUND_MIB = 400
pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory read from /proc")


def _cell(size: int) -> pa.Array:
    """One str cell of ``size`` bytes of 'a' (a large_string array of one value)."""
    data = pa.py_buffer(np.full(size, ord("a"), np.uint8))
    return pa.Array.from_buffers(pa.large_string(), 1, [None, pa.py_buffer(np.array([0, size], np.int64)), data])


def _bomb_table(size: int) -> pa.Table:
    return pa.table({"y": pa.concat_arrays([pa.array(["a"], pa.large_string()), _cell(size)]),
                     "p": pa.array(["a", "b"], pa.large_string())})


def _read_in_child(path: Path) -> tuple[str, float]:
    """Read the log in a fresh child process: (what it said, its peak RSS in MiB, the high-water mark of its own
    memory: VmHWM, which starts again at exec, where ru_maxrss would keep this process's peak from the fork)."""
    code = ("from streammon.logs import ReplayError\nfrom streammon.logs.sources import open_log\n"
            f"try:\n    [c for c in open_log({str(path)!r}, true='y', pred='p').chunks()]\n    print('read')\n"
            "except ReplayError as e:\n    print(e)\n"
            "print(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    said, _, peak_kib = done.stdout.strip().rpartition("\n")
    return said, int(peak_kib) / 1024


@pytest.mark.parametrize("dictionary", [True, False])
@pytest.mark.parametrize("compression", ["zstd", "gzip"])
def test_a_parquet_bomb_is_refused_from_its_page_headers_in_bounded_memory(tmp_path: Path, dictionary: bool,
                                                                           compression: str) -> None:
    """A Parquet file whose one label cell inflates to 256 MiB is refused at open, the child staying small."""
    path = tmp_path / "bomb.parquet"
    pq.write_table(_bomb_table(BOMB), path, compression=compression, use_dictionary=dictionary)
    assert path.stat().st_size < BOMB // 100  # it is a bomb: compressed over 100 times
    said, peak = _read_in_child(path)
    assert said.startswith(f"{path}, column 'y': row group 0: a {'dictionary' if dictionary else 'data'} page"), said
    assert f"at most {MAX_CELL_BYTES} bytes" in said and "refused before it is decoded" in said, said
    assert peak < PEAK_BOUND_MIB, peak


CSV_BOMB = 4 * BOMB  # a 1 GiB line: see the test below
CSV_PEAK_BOUND_MIB = 640


def test_a_csv_gz_bomb_line_is_refused_at_the_block_limit_in_bounded_memory(tmp_path: Path) -> None:
    """A .csv.gz with a 1 GiB line is refused once the line outgrows a 16 MiB block, the child staying far below
    the line. Arrow's CSV reader decompresses blocks ahead of its parser: with pyarrow 26 the child's peak was
    310-450 MiB (about 105 of them the imports) whether the line was 256 MiB or 1 GiB, varying from run to run with
    the allocator's timing, so a 256 MiB line against a 400 MiB bound could not tell a bounded read from a whole
    one; a 1 GiB line read whole would take more than 1,100 MiB."""
    path = tmp_path / "bomb.csv.gz"
    with gzip.open(path, "wb", compresslevel=1) as out:
        out.write(b"y,p\na,a\n")
        block = b"a" * (16 << 20)
        for _ in range(CSV_BOMB // len(block)):
            out.write(block)
        out.write(b",b\n")
    said, peak = _read_in_child(path)
    assert said.startswith(f"{path}, row 1: the line after row 1 (or the header) is longer than 16 MiB"), said
    assert peak < CSV_PEAK_BOUND_MIB, peak


@pytest.mark.parametrize("compression", ["zstd", "lz4"])
def test_a_compressed_arrow_ipc_bomb_is_refused_from_its_buffer_sizes(tmp_path: Path, compression: str) -> None:
    """An Arrow IPC file whose one label cell decompresses to 256 MiB is refused at open, the child staying small."""
    path = tmp_path / "bomb.arrow"
    table = _bomb_table(BOMB)
    with ipc.new_file(path, table.schema, options=ipc.IpcWriteOptions(compression=compression)) as out:
        out.write_table(table)
    del table
    assert path.stat().st_size < BOMB // 100
    said, peak = _read_in_child(path)
    assert said.startswith(f"{path}, column 'y': record batch 0: a buffer of 2 values states"), said
    assert "refused before the batch is read" in said, said
    assert peak < PEAK_BOUND_MIB, peak


def test_legal_arrow_ipc_files_pass_the_limits_and_read_back(tmp_path: Path) -> None:
    """Cells at the limit, in file and stream format, compressed or not, dictionary-encoded or not, recount exactly
    (a 5,000-character column not read is left alone)."""
    rng = np.random.default_rng(1)
    n = 12_000
    longest = ["\U0001d518" * 256, "é" * 256, "b"]
    y, p = rng.choice(longest, n).tolist(), rng.choice(longest, n).tolist()
    recount = Counter(zip(y, p, strict=True))
    path = tmp_path / "log.arrow"
    for compression, dictionary, stream in itertools.product([None, "lz4", "zstd"], [False, True], [False, True]):
        table = pa.table({"y": y, "other": ["x" * 5000] * n, "p": p})
        if dictionary:
            table = table.set_column(0, "y", table["y"].dictionary_encode())
        writer = ipc.new_stream if stream else ipc.new_file
        with writer(path, table.schema, options=ipc.IpcWriteOptions(compression=compression)) as out:
            out.write_table(table, max_chunksize=5_000)
        result = replay(path, true="y", pred="p", every=5_000)
        assert result.report.windows["cumulative"].confusion.cells() == recount, (compression, dictionary, stream)


def test_legal_long_cells_pass_the_limits_and_read_back(tmp_path: Path) -> None:
    """Cells at the limits (256 four-byte characters) pass the page checks under every writer setting tried."""
    rng = np.random.default_rng(0)
    n = 20_000
    longest = ["\U0001d518" * 256, "é" * 256, "a" * 256, "b"]
    table = pa.table({"y": pa.array(rng.choice(longest, n)), "p": pa.array(rng.choice(longest, n))})
    recount = Counter(zip(table["y"].to_pylist(), table["p"].to_pylist(), strict=True))
    path = tmp_path / "legal.parquet"
    settings = itertools.product(["1.0", "2.0"], ["NONE", "snappy", "zstd", "gzip", "lz4", "brotli"], [True, False])
    for version, compression, dictionary in settings:
        pq.write_table(table, path, data_page_version=version, compression=compression, use_dictionary=dictionary,
                       row_group_size=7_000)
        result = replay(path, true="y", pred="p", every=5_000)
        assert result.report.windows["cumulative"].confusion.cells() == recount, (version, compression)


def test_page_headers_read_add_up_to_the_writer_s_column_chunk_totals(tmp_path: Path) -> None:
    """The page headers parsed add up, per column chunk, to the sizes and value counts Arrow's writer recorded, and
    the compiled walk ends exactly where the chunk does."""
    n = 30_000
    table = pa.table({"y": pa.array([f"class_{i % 7}" * (i % 40) or "z" for i in range(n)]),
                      "k": pa.array([f"key-{i}" for i in range(n)]),
                      "t": pa.array(np.arange(n) * 10**6, pa.timestamp("us")),
                      "b": pa.array(np.arange(n) % 3 == 0), "f": pa.array(np.linspace(0, 1, n))})
    path = tmp_path / "log.parquet"
    for version, statistics, index in itertools.product(["1.0", "2.0"], [True, False], [True, False]):
        pq.write_table(table, path, data_page_version=version, write_statistics=statistics, write_page_index=index,
                       row_group_size=12_000, data_page_size=1 << 14, compression="snappy")
        metadata = pq.read_metadata(path)
        data = np.memmap(path, dtype=np.uint8, mode="r")
        with open(path, "rb") as file:
            for group in range(metadata.num_row_groups):
                for column in range(metadata.num_columns):
                    chunk = metadata.row_group(group).column(column)
                    found = list(pages(file, chunk, str(path)))
                    assert sum(h + u for _, u, _, _, h in found) == chunk.total_uncompressed_size
                    assert sum(h + c for _, _, _, c, h in found) == chunk.total_compressed_size
                    assert sum(v for kind, _, v, _, _ in found if kind != 2) == chunk.num_values
                    start = min(o for o in (chunk.dictionary_page_offset, chunk.data_page_offset) if o)
                    status, *_, end = walk(data, start, start + chunk.total_compressed_size, MAX_CELL_BYTES, 0)
                    assert (status, end) == (OK, start + chunk.total_compressed_size)  # the compiled walk agrees


def test_a_truncated_page_header_is_a_replay_error(tmp_path: Path) -> None:
    """A file cut inside its pages (footer kept) is refused at open as a ReplayError, not a raw exception."""
    path = tmp_path / "log.parquet"
    pq.write_table(pa.table({"y": ["a", "b"] * 1000, "p": ["a", "b"] * 1000}), path)
    data = bytearray(path.read_bytes())
    data[4:40] = b"\xff" * 36  # the first page header, garbled
    path.write_bytes(bytes(data))
    with pytest.raises(ReplayError, match="page header"):
        replay(path, true="y", pred="p")


@pytest.mark.parametrize("fmt", ["csv", "parquet", "feather", "table", "pandas", "stream"])
def test_a_column_name_given_twice_is_refused_in_every_source(tmp_path: Path, fmt: str) -> None:
    """y,y,p is refused naming the column, in every source; before, CSV silently read the first y."""
    table = pa.Table.from_arrays([pa.array([1, 0]), pa.array([0, 1]), pa.array([1, 0])], names=["y", "y", "p"])
    source: object
    if fmt == "csv":
        source = tmp_path / "log.csv"
        source.write_text("y,y,p\n1,0,1\n0,1,0\n")
    elif fmt == "parquet":
        source = tmp_path / "log.parquet"
        pq.write_table(table, source)
    elif fmt == "feather":
        source = tmp_path / "log.feather"
        with ipc.new_file(source, table.schema) as out:
            out.write_table(table)
    elif fmt == "pandas":
        source = table.to_pandas()
    elif fmt == "stream":
        source = pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
    else:
        source = table
    with pytest.raises(ReplayError, match="column 'y': the column name 'y' appears 2 times"):
        replay(source, true="y", pred="p")


def test_names_given_twice_that_are_not_read_are_left_alone(tmp_path: Path) -> None:
    """A spreadsheet export's empty trailing columns (y,p,,) replay: only a name read must be unique."""
    path = tmp_path / "log.csv"
    path.write_text("y,p,,\n1,1,,\n0,1,,\n1,0,,\n")
    result = replay(path, true="y", pred="p")
    assert result.report.windows["cumulative"].confusion.cells() == {(1, 1): 1, (0, 1): 1, (1, 0): 1}


def test_garbled_page_bytes_give_a_replay_error_or_pass_never_a_crash(tmp_path: Path) -> None:
    """300 files with random bytes overwritten among the pages (footer intact) are checked without crashing: each
    passes or raises ReplayError, and the check never reads outside the file."""
    rng = np.random.default_rng(7)
    path = tmp_path / "log.parquet"
    pq.write_table(pa.table({"y": [f"c{i % 5}" for i in range(3000)], "t": np.arange(3000)}), path,
                   row_group_size=1000, data_page_size=512)
    metadata = pq.read_metadata(path)
    clean = path.read_bytes()
    body = len(clean) - 8 - int.from_bytes(clean[-8:-4], "little")  # the pages end where the footer starts
    outcomes = Counter()
    for _ in range(300):
        spoilt = bytearray(clean)
        for at in rng.integers(4, body, rng.integers(1, 6)):
            spoilt[at] = int(rng.integers(0, 256))
        path.write_bytes(bytes(spoilt))
        try:
            check_parquet(str(path), metadata, ["y", "t"])
            outcomes["passed"] += 1
        except ReplayError:
            outcomes["refused"] += 1
    assert outcomes["refused"] > 0 and sum(outcomes.values()) == 300, outcomes
