"""Issue 15: counters mean what Darshan's mean, exact where Darshan is not
(tests/integration/fidelity_workload.c; the shared-record cases are in test_fidelity_mpi.py)."""

import shutil
import struct

import numpy as np
import pytest

import iochar
from iochar.flags import PARTIAL
from iochar.log import OP, LogError
from iochar.writer import encode_log
from tool import one, run_log, workload

W = workload("fidelity_workload")


def posix(tmp_path, mode):
    p, log = run_log([W, mode, str(tmp_path)], tmp_path)
    return p, log, log.records("POSIX")


def top(r, table, n=4):
    return ([r[f"POSIX_{table}{i}_{table}"] for i in range(1, n + 1)],
            [r[f"POSIX_{table}{i}_COUNT"] for i in range(1, n + 1)])


def test_zero_byte_accesses_and_forward_strides(tmp_path):
    _, _, df = posix(tmp_path, "zero")
    r = one(df, "/zero.dat")
    expect = dict(POSIX_WRITES=8, POSIX_BYTES_WRITTEN=700, POSIX_SIZE_WRITE_0_100=8,
                  POSIX_SEQ_WRITES=5, POSIX_CONSEC_WRITES=2, POSIX_MAX_BYTE_WRITTEN=1449,
                  POSIX_READS=3, POSIX_BYTES_READ=200, POSIX_SEQ_READS=2, POSIX_CONSEC_READS=1,
                  POSIX_ACCESS_APPROX=0, POSIX_STRIDE_APPROX=0)
    assert {k: r[k] for k in expect} == expect
    # the two 0-byte calls are ops and 0_100 entries, never an access size
    assert top(r, "ACCESS") == ([100, 0, 0, 0], [9, 0, 0, 0])
    # forward gaps only: writes 100 (x2), 1000; the read at 300 after 0..99: 200
    assert top(r, "STRIDE") == ([100, 200, 1000, 0], [2, 1, 1, 0])


def test_reopen_restarts_the_pattern(tmp_path):
    _, _, df = posix(tmp_path, "reopen")
    r = one(df, "/reopen.dat")
    # 3 + (offset 1 after the reopen: consecutive to "last byte" 0) + (200 > 100)
    assert (r["POSIX_OPENS"], r["POSIX_WRITES"]) == (2, 6)
    assert (r["POSIX_SEQ_WRITES"], r["POSIX_CONSEC_WRITES"]) == (5, 4)
    assert top(r, "STRIDE") == ([99, 0, 0, 0], [1, 0, 0, 0])  # 200 - 100 - 1


def test_o_append_from_two_descriptors(tmp_path):
    _, _, df = posix(tmp_path, "append2")
    r = one(df, "/append2.dat")
    # turns at 0, 100, ... 500, then the pwrite appended at 600; the read at 0
    expect = dict(POSIX_OPENS=3, POSIX_WRITES=7, POSIX_BYTES_WRITTEN=650,
                  POSIX_MAX_BYTE_WRITTEN=649, POSIX_SEQ_WRITES=6, POSIX_CONSEC_WRITES=6,
                  POSIX_READS=1, POSIX_MAX_BYTE_READ=9)
    assert {k: r[k] for k in expect} == expect
    assert top(r, "STRIDE")[1] == [0, 0, 0, 0]


def test_copy_file_range_sendfile_splice(tmp_path):
    _, _, df = posix(tmp_path, "xfer")
    src, dst = one(df, "/xsrc.dat"), one(df, "/xdst.dat")
    sizes = [10000, 3000, 4096, 2048]
    assert (src["POSIX_READS"], src["POSIX_BYTES_READ"]) == (4, sum(sizes))
    assert (dst["POSIX_WRITES"], dst["POSIX_BYTES_WRITTEN"]) == (4, sum(sizes))
    assert (src["POSIX_MAX_BYTE_READ"], dst["POSIX_MAX_BYTE_WRITTEN"]) == (9999, 32047)
    assert (src["POSIX_SEQ_READS"], dst["POSIX_SEQ_WRITES"]) == (1, 2)
    assert top(dst, "STRIDE") == ([10000, 15904, 0, 0], [1, 1, 0, 0])
    assert top(src, "ACCESS") == ([2048, 3000, 4096, 10000], [1, 1, 1, 1])
    assert src["POSIX_F_READ_TIME"] > 0 and dst["POSIX_F_WRITE_TIME"] > 0


@pytest.mark.skipif(not shutil.which("cp"), reason="needs coreutils cp")
def test_cp_moves_bytes_through_copy_file_range(tmp_path):
    (tmp_path / "a.dat").write_bytes(b"x" * 100000)
    _, log = run_log(["cp", str(tmp_path / "a.dat"), str(tmp_path / "b.dat")], tmp_path)
    df = log.records("POSIX")
    assert one(df, "/a.dat")["POSIX_BYTES_READ"] == 100000
    assert one(df, "/b.dat")["POSIX_BYTES_WRITTEN"] == 100000


@pytest.mark.parametrize("mode,mmaps,flag", [("mmap", 1, 0), ("mmap-shared", 2, 64)])
def test_mmap_counted_and_shared_writes_flagged(tmp_path, mode, mmaps, flag):
    _, log, df = posix(tmp_path, mode)
    assert one(df, "/map.dat")["POSIX_MMAPS"] == mmaps
    assert log.job["partial"] & (PARTIAL["SHARED_MMAP"] | PARTIAL["IO_URING"]) == flag


def test_io_uring_flagged(tmp_path):
    p, log, df = posix(tmp_path, "uring")
    assert one(df, "/uring.dat")["POSIX_BYTES_WRITTEN"] == 10
    ok = b"io_uring_setup ok" in p.stdout  # a kernel may forbid io_uring
    assert log.job["partial"] & PARTIAL["IO_URING"] == (PARTIAL["IO_URING"] if ok else 0)


def test_report_caveats_for_unseen_io():
    from iochar.flags import reasons as _partial_reasons
    why = _partial_reasons({"partial": PARTIAL["IO_URING"] | PARTIAL["SHARED_MMAP"]})
    assert any("io_uring" in w for w in why) and any("mapping" in w for w in why)


# ---- TOPK sections (per-rank logs): the reader trusts nothing ----------------

SCHEMA = ([(f"POSIX_ACCESS{i}_ACCESS", OP["TOPK_VAL"]) for i in range(1, 5)]
          + [(f"POSIX_ACCESS{i}_COUNT", OP["TOPK_CNT"]) for i in range(1, 5)]
          + [("POSIX_ACCESS_APPROX", OP["MAX"]), ("POSIX_WRITES", OP["SUM"])])


def per_rank(rank, sizes, topk_payload=None):
    """A per-rank log whose one record wrote `sizes` {size: count} (16-slot table)."""
    order = sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0]))
    row = {"record_id": 7, "rank": rank, "path": "/f", "POSIX_WRITES": sum(sizes.values())}
    for i, (v, c) in enumerate(order[:4], 1):
        row[f"POSIX_ACCESS{i}_ACCESS"], row[f"POSIX_ACCESS{i}_COUNT"] = v, c
    tab = np.zeros((1, 1, 2, 16), np.int64)
    for i, (v, c) in enumerate(order):
        tab[0, 0, :, i] = v, c
    import pandas as pd
    spec = {"schema": SCHEMA, "records": pd.DataFrame([row]), "topk": (np.array([7]), tab)}
    extra = []
    if topk_payload is not None:
        spec.pop("topk")
        extra = [("TOPK", "POSIX", 1, topk_payload)]
    job = dict(nprocs=2, rank=rank, start_time=1e9, end_time=1e9 + 1, exe="x")
    return encode_log(job, {"POSIX": spec}, extra_sections=extra)


def test_per_rank_topk_merged_whole(tmp_path):
    # 9 is 5th on both ranks, 1st in the job
    a = {1: 10, 2: 10, 3: 10, 4: 10, 9: 6}
    b = {5: 10, 6: 10, 7: 10, 8: 10, 9: 6}
    for i, data in enumerate((per_rank(0, a), per_rank(1, b))):
        (tmp_path / f"r{i}.iochar").write_bytes(data)
    r = iochar.open(str(tmp_path)).records("POSIX").iloc[0]
    assert r["rank"] == -1
    assert [r[f"POSIX_ACCESS{i}_ACCESS"] for i in range(1, 5)] == [9, 1, 2, 3]
    assert [r[f"POSIX_ACCESS{i}_COUNT"] for i in range(1, 5)] == [12, 10, 10, 10]


@pytest.mark.parametrize("payload", [b"", struct.pack("<II", 16, 1),
                                     struct.pack("<II", 16, 2) + bytes(8 + 512),
                                     struct.pack("<II", 0, 1) + bytes(8)])
def test_bad_topk_section_is_a_clear_error(tmp_path, payload):
    """The rank with the bad section is left out, named with its error (issue 31)."""
    (tmp_path / "r0.iochar").write_bytes(per_rank(0, {1: 1}))
    (tmp_path / "r1.iochar").write_bytes(per_rank(1, {1: 1}, topk_payload=payload))
    with pytest.raises(LogError, match="TOPK"):
        iochar.open([str(tmp_path / "r0.iochar"), str(tmp_path / "r1.iochar")]).records("POSIX")
    log = iochar.open(str(tmp_path))
    assert log.job["unreadable_logs"].startswith(f"{tmp_path / 'r1.iochar'}: ")
    assert "TOPK" in log.job["unreadable_logs"] and log.job["missing_ranks"] == "1"
    assert log.records("POSIX")["rank"].tolist() == [0]


# ---- timestamps: origin explicit, conversion in the reader -----------------

def test_timestamp_origin_and_epoch_conversion(tmp_path):
    _, log, df = posix(tmp_path, "reopen")
    assert log.job["time_origin"] == "start_time"
    r = one(iochar.to_epoch(df, log.job), "/reopen.dat")
    t0, t1 = log.job["start_time"], log.job["end_time"]
    assert t0 < r["POSIX_F_OPEN_START_TIMESTAMP"] <= r["POSIX_F_WRITE_END_TIMESTAMP"] <= t1
    assert r["POSIX_F_READ_START_TIMESTAMP"] == 0  # never read: stays 0
    import pandas as pd
    rel = pd.DataFrame({"POSIX_F_OPEN_START_TIMESTAMP": [0.5, 0.0], "POSIX_OPENS": [1, 0]})
    # a Darshan log's job (through PyDarshan): integer seconds + nanoseconds
    darshan = iochar.to_epoch(rel, {"start_time": 1700000000, "start_time_nsec": 250000000})
    assert darshan["POSIX_F_OPEN_START_TIMESTAMP"].tolist() == [1700000000.75, 0.0]
    assert darshan["POSIX_OPENS"].tolist() == [1, 0]
    mine = iochar.to_epoch(rel, {"start_time": 1700000000.25, "time_origin": "start_time"})
    assert mine["POSIX_F_OPEN_START_TIMESTAMP"].tolist() == [1700000000.75, 0.0]
    with pytest.raises(LogError, match="time_origin"):
        iochar.to_epoch(rel, {"start_time": 1.0, "time_origin": "MPI_Init"})


# ---- file-system facts per file --------------------------------------------

def _mount_of(path):
    """The mount point holding path, found independently (os.path.ismount upwards)."""
    import os
    p = os.path.abspath(path)
    while not os.path.ismount(p):
        p = os.path.dirname(p)
    return p


def test_file_system_of_each_record(tmp_path):
    import os

    from iochar.log import file_systems
    _, log, df = posix(tmp_path, "reopen")
    r = one(file_systems(df, log.mounts), "/reopen.dat")
    path = str(tmp_path / "reopen.dat")
    assert r["mount_point"] == _mount_of(path)
    with open("/proc/self/mounts") as f:
        types = {ln.split()[1]: ln.split()[2] for ln in f}
    assert r["fs_type"] == types[r["mount_point"]]
    assert r["fs_block_size"] == os.statvfs(path).f_bsize == r["POSIX_FILE_ALIGNMENT"]
    assert r["POSIX_FILE_BLKSIZE"] == os.stat(path).st_blksize
    # not Lustre here: no layout
    assert (r["POSIX_LUSTRE_STRIPE_SIZE"], r["POSIX_LUSTRE_STRIPE_COUNT"]) == (0, 0)
    assert "LUSTRE" not in log.modules  # nor components (made at the end, Lustre only)
