"""HEAT sections (docs/log-format.md) through the reader: rows in rank order, sections of
one module with different widths folded to the widest, one-process and per-rank logs
read from their SERIES, and a malformed section refused with one LogError."""

import struct

import numpy as np
import pytest

import iochar
from iochar.log import LogError
from iochar.writer import write_log
from logdata import make_job, posix_like_schema, random_records


def heat(width, rows, nbins=4):
    """A HEAT payload: rows of (rank, [read bins], [written bins])."""
    body = b"".join(struct.pack(f"<q{nbins}q{nbins}q", r, *rd, *wr) for r, rd, wr in rows)
    return struct.pack("<dII", width, nbins, 0) + body


def log_with(tmp_path, sections, nprocs=4, series=None, job=None):
    schema = posix_like_schema()
    path = tmp_path / "h.iochar"
    write_log(path, job or make_job(nprocs=nprocs),
              {"POSIX": {"schema": schema, "records": random_records(schema, 3, nprocs)}},
              extra_sections=sections, series=series)
    return iochar.open(str(path))


def test_rows_in_rank_order_and_widths_folded(tmp_path):
    log = log_with(tmp_path, [
        ("HEAT", "POSIX", 1, heat(2.0, [(3, [1, 2, 3, 4], [0, 0, 0, 8])])),
        ("HEAT", "POSIX", 2, heat(1.0, [(1, [5, 0, 0, 0], [0, 0, 0, 0]),
                                        (0, [0, 0, 0, 0], [0, 0, 0, 0])]))])
    h = log.heatmap("POSIX")
    assert h["width"] == 2.0
    assert h["ranks"].tolist() == [1, 3]  # rank 0 moved nothing: no row
    assert h["bytes_read"].tolist() == [[5, 0, 0, 0], [1, 2, 3, 4]]
    assert h["bytes_written"].tolist() == [[0, 0, 0, 0], [0, 0, 0, 8]]
    assert log.heatmap("MPIIO") is None


def test_one_process_log_reads_its_series(tmp_path):
    s = {"width": 0.5, "bytes_read": np.array([0, 7, 0]), "bytes_written": np.array([1, 0, 2]),
         "reads": np.array([0, 1, 0]), "writes": np.array([1, 0, 1])}
    log = log_with(tmp_path, [], nprocs=1, series={"POSIX": s})
    h = log.heatmap("POSIX")
    assert h["ranks"].tolist() == [0] and h["width"] == 0.5
    assert h["bytes_read"].tolist() == [[0, 7, 0]] and h["bytes_written"].tolist() == [[1, 0, 2]]


@pytest.mark.parametrize("payload,count,why", [
    (heat(1.0, [(9, [1, 0, 0, 0], [0] * 4)]), 1, "out of range"),
    (heat(1.0, [(0, [-1, 0, 0, 0], [0] * 4)]), 1, "negative"),
    (heat(float("nan"), [(0, [1, 0, 0, 0], [0] * 4)]), 1, "bin width"),
    (heat(1.0, [(0, [1, 0, 0, 0], [0] * 4)])[:-8], 1, "do not fill"),
    (heat(1.0, [(0, [1, 0, 0, 0], [0] * 4)]), 2, "do not fill"),
    (heat(1.0, [(0, [1, 0, 0, 0], [0] * 4)])[:12], 1, "inconsistent"),
    (struct.pack("<dII", 1.0, 0, 0) + struct.pack("<q", 0), 1, "do not fill"),
], ids=["rank", "negative", "width", "short", "count", "header", "no bins"])
def test_bad_heat_is_one_log_error(tmp_path, payload, count, why):
    with pytest.raises(LogError, match=why):
        log_with(tmp_path, [("HEAT", "POSIX", count, payload)])


def test_python_writer_round_trip(tmp_path):
    h = {"width": 0.25, "ranks": np.array([2, 0]),
         "bytes_read": np.array([[0, 3, 0], [9, 0, 1]]),
         "bytes_written": np.array([[5, 0, 0], [0, 0, 0]])}
    schema = posix_like_schema()
    path = tmp_path / "w.iochar"
    write_log(path, make_job(nprocs=4),
              {"POSIX": {"schema": schema, "records": random_records(schema, 2)}},
              heat={"POSIX": h})
    got = iochar.open(str(path)).heatmap("POSIX")
    assert got["width"] == 0.25 and got["ranks"].tolist() == [0, 2]
    assert got["bytes_read"].tolist() == [[9, 0, 1], [0, 3, 0]]
    assert got["bytes_written"].tolist() == [[0, 0, 0], [5, 0, 0]]
