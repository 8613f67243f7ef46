"""POSIX counters from real workloads with exactly known I/O."""

import pytest

import iochar
from tool import logs_in, one, run, run_log, workload

W = workload("posix_workload")


def posix(tmp_path, mode, **kw):
    _, log = run_log([W, mode, str(tmp_path)], tmp_path, **kw)
    return log, log.records("POSIX")


def test_consecutive_writes_and_reads(tmp_path):
    log, df = posix(tmp_path, "consec")
    r = one(df, "/consec.dat")
    assert r["rank"] == 0
    assert log.job["nprocs"] == 1
    expect = dict(POSIX_OPENS=1, POSIX_WRITES=100, POSIX_READS=100, POSIX_SEEKS=1,
                  POSIX_BYTES_WRITTEN=409600, POSIX_BYTES_READ=409600,
                  POSIX_CONSEC_WRITES=99, POSIX_SEQ_WRITES=99, POSIX_CONSEC_READS=99,
                  POSIX_SEQ_READS=99, POSIX_SIZE_WRITE_1K_10K=100, POSIX_SIZE_READ_1K_10K=100,
                  POSIX_MAX_BYTE_WRITTEN=409599, POSIX_MAX_BYTE_READ=409599,
                  POSIX_RW_SWITCHES=1, POSIX_FILE_NOT_ALIGNED=0, POSIX_MEM_NOT_ALIGNED=0,
                  POSIX_MEM_ALIGNMENT=8, POSIX_ACCESS1_ACCESS=4096, POSIX_ACCESS1_COUNT=200,
                  # consecutive accesses have no stride (Darshan's definition; was 198)
                  POSIX_ACCESS2_COUNT=0, POSIX_STRIDE1_STRIDE=0, POSIX_STRIDE1_COUNT=0,
                  POSIX_ACCESS_APPROX=0, POSIX_STRIDE_APPROX=0,
                  POSIX_MODE=0o644, POSIX_FASTEST_RANK=0, POSIX_SLOWEST_RANK=0,
                  POSIX_FASTEST_RANK_BYTES=819200)
    assert {k: r[k] for k in expect} == expect
    assert r["POSIX_FILE_ALIGNMENT"] > 0
    assert 0 < r["POSIX_F_OPEN_START_TIMESTAMP"] <= r["POSIX_F_WRITE_START_TIMESTAMP"]
    assert r["POSIX_F_WRITE_END_TIMESTAMP"] <= r["POSIX_F_READ_START_TIMESTAMP"]
    assert r["POSIX_F_READ_END_TIMESTAMP"] <= r["POSIX_F_CLOSE_END_TIMESTAMP"]
    assert r["POSIX_F_WRITE_TIME"] > 0 and r["POSIX_F_READ_TIME"] > 0
    assert r["POSIX_F_MAX_WRITE_TIME"] <= r["POSIX_F_WRITE_TIME"]
    assert r["POSIX_F_VARIANCE_RANK_TIME"] == 0


def test_strided_unaligned(tmp_path):
    _, df = posix(tmp_path, "strided")
    r = one(df, "/strided.dat")
    assert r["POSIX_FILE_ALIGNMENT"] == 4096  # ext4/overlay/tmpfs block size here
    expect = dict(POSIX_WRITES=10, POSIX_BYTES_WRITTEN=10000, POSIX_SEQ_WRITES=9,
                  POSIX_CONSEC_WRITES=0, POSIX_STRIDE1_STRIDE=2000, POSIX_STRIDE1_COUNT=9,
                  # reads at 16384, 12288, ... 0: only the first is "sequential"
                  POSIX_READS=5, POSIX_SEQ_READS=1, POSIX_CONSEC_READS=0,
                  # backward gaps are not strides (Darshan's; was -4196 x 4)
                  POSIX_STRIDE2_STRIDE=0, POSIX_STRIDE2_COUNT=0,
                  POSIX_FILE_NOT_ALIGNED=9, POSIX_MEM_NOT_ALIGNED=10,
                  POSIX_SIZE_WRITE_100_1K=10, POSIX_SIZE_READ_0_100=5,
                  POSIX_MAX_BYTE_WRITTEN=27999, POSIX_MAX_BYTE_READ=16483,
                  POSIX_ACCESS1_ACCESS=1000, POSIX_ACCESS1_COUNT=10,
                  POSIX_ACCESS2_ACCESS=100, POSIX_ACCESS2_COUNT=5, POSIX_RW_SWITCHES=1,
                  POSIX_MODE=0o600)
    assert {k: r[k] for k in expect} == expect


def test_size_bins_upper_bounds_inclusive(tmp_path):
    _, df = posix(tmp_path, "bins")
    r = one(df, "/bins.dat")
    bins = ["0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M"]
    assert [r[f"POSIX_SIZE_WRITE_{b}"] for b in bins] == [1, 2, 2, 2, 2, 1]
    assert r["POSIX_BYTES_WRITTEN"] == sum([100, 101, 1024, 1025, 10240, 10241, 102400,
                                            102401, 1048576, 1048577])
    assert r["POSIX_CONSEC_WRITES"] == 9


def test_top4_access_sizes(tmp_path):
    _, df = posix(tmp_path, "topk")
    r = one(df, "/topk.dat")
    assert [r[f"POSIX_ACCESS{i}_ACCESS"] for i in range(1, 5)] == [512, 256, 128, 64]
    assert [r[f"POSIX_ACCESS{i}_COUNT"] for i in range(1, 5)] == [10, 7, 5, 3]
    assert r["POSIX_WRITES"] == 26


def test_metadata_dups_vectors(tmp_path):
    _, df = posix(tmp_path, "meta")
    r = one(df, "/meta.dat")
    expect = dict(POSIX_OPENS=1, POSIX_DUPS=3, POSIX_STATS=7, POSIX_SEEKS=3,
                  POSIX_FSYNCS=1, POSIX_FDSYNCS=1, POSIX_MMAPS=1, POSIX_TRUNCATES=1,
                  POSIX_RENAME_SOURCES=1, POSIX_WRITES=4, POSIX_READS=1,
                  POSIX_BYTES_WRITTEN=8192 + 100 + 500 + 500, POSIX_BYTES_READ=500,
                  # dup'd fds share the offset: writes at 0, 100, 200, then pwritev at 8192
                  POSIX_CONSEC_WRITES=1, POSIX_SEQ_WRITES=2, POSIX_MAX_BYTE_WRITTEN=8691,
                  POSIX_MODE=0o640)
    assert {k: r[k] for k in expect} == expect
    r2 = one(df, "/meta2.dat")
    assert (r2["POSIX_RENAME_TARGETS"], r2["POSIX_UNLINKS"], r2["POSIX_OPENS"]) == (1, 1, 0)
    assert r["POSIX_F_META_TIME"] > 0


def test_descriptor_number_reused_while_a_dup_lives(tmp_path):
    _, df = posix(tmp_path, "fd-reuse")
    a, b = one(df, "/reuse_a.dat"), one(df, "/reuse_b.dat")
    # a's dup keeps a's description (offset 100) while b takes the number
    assert (a["POSIX_OPENS"], a["POSIX_DUPS"], a["POSIX_WRITES"]) == (2, 1, 3)
    assert (a["POSIX_BYTES_WRITTEN"], a["POSIX_MAX_BYTE_WRITTEN"]) == (250, 199)
    assert (a["POSIX_CONSEC_WRITES"], a["POSIX_SEQ_WRITES"]) == (1, 1)
    assert (b["POSIX_OPENS"], b["POSIX_WRITES"], b["POSIX_BYTES_WRITTEN"]) == (1, 2, 60)
    assert (b["POSIX_CONSEC_WRITES"], b["POSIX_MAX_BYTE_WRITTEN"]) == (1, 59)


def test_append_offsets(tmp_path):
    _, df = posix(tmp_path, "append")
    r = one(df, "/append.dat")
    # 1000 bytes, reopen O_APPEND, 3 x 10 at 1000, 1010, 1020: the reopen
    # restarts the pattern (Darshan's rule; was 3), so the first append is
    # sequential only and the next two consecutive
    assert (r["POSIX_OPENS"], r["POSIX_WRITES"], r["POSIX_CONSEC_WRITES"]) == (2, 4, 2)
    assert r["POSIX_SEQ_WRITES"] == 3
    assert r["POSIX_MAX_BYTE_WRITTEN"] == 1029


def test_threads_exact_totals(tmp_path):
    _, df = posix(tmp_path, "threads")
    r = one(df, "/threads.dat")
    assert r["POSIX_WRITES"] == 8000
    assert r["POSIX_BYTES_WRITTEN"] == 8000 * 512
    assert r["POSIX_SIZE_WRITE_100_1K"] == 8000
    assert r["POSIX_ACCESS1_ACCESS"] == 512 and r["POSIX_ACCESS1_COUNT"] == 8000
    for t in range(8):
        rt = one(df, f"/thread{t}.dat")
        assert (rt["POSIX_WRITES"], rt["POSIX_BYTES_WRITTEN"], rt["POSIX_CONSEC_WRITES"]) == \
            (100, 6400, 99)


def test_seeks_under_threads_and_dups(tmp_path):
    _, df = posix(tmp_path, "seek-threads")
    r = one(df, "/seekshared.dat")
    # 4 threads x 500 successful seeks, each before a 64-byte transfer
    expect = dict(POSIX_OPENS=5, POSIX_SEEKS=2000, POSIX_WRITES=1000, POSIX_READS=1000,
                  POSIX_BYTES_WRITTEN=64000, POSIX_BYTES_READ=64000,
                  POSIX_MAX_BYTE_WRITTEN=63999, POSIX_MAX_BYTE_READ=63999,
                  POSIX_SIZE_WRITE_0_100=1000, POSIX_SIZE_READ_0_100=1000)
    assert {k: r[k] for k in expect} == expect
    assert r["POSIX_F_META_TIME"] > 0
    for t in range(4):
        rt = one(df, f"/seekthread{t}.dat")
        # seeks through the dup move the offset the writes use: backwards
        # writes (only the first, past byte 0, sequential), forwards reads;
        # the failed lseek is not a seek
        expect = dict(POSIX_OPENS=1, POSIX_DUPS=1, POSIX_SEEKS=200, POSIX_WRITES=100,
                      POSIX_READS=100, POSIX_CONSEC_WRITES=0, POSIX_SEQ_WRITES=1,
                      POSIX_CONSEC_READS=99, POSIX_SEQ_READS=99,
                      POSIX_MAX_BYTE_WRITTEN=6399, POSIX_MAX_BYTE_READ=6399,
                      POSIX_BYTES_WRITTEN=6400, POSIX_BYTES_READ=6400)
        assert {k: rt[k] for k in expect} == expect
        assert rt["POSIX_F_META_TIME"] > 0


def test_second_thread_starting_io_midway(tmp_path):
    # the tool's one-thread mode ends while the first thread is writing
    _, df = posix(tmp_path, "late-thread")
    r = one(df, "/late.dat")
    expect = dict(POSIX_OPENS=2, POSIX_SEEKS=4000, POSIX_WRITES=5000,
                  POSIX_BYTES_WRITTEN=320000, POSIX_MAX_BYTE_WRITTEN=319999,
                  POSIX_SIZE_WRITE_0_100=5000)
    assert {k: r[k] for k in expect} == expect
    assert r["POSIX_F_WRITE_TIME"] > 0 and r["POSIX_F_META_TIME"] > 0


def test_io_thread_changing(tmp_path):
    # three threads in turn, then the main thread: each owns the tool alone
    _, df = posix(tmp_path, "turns")
    r = one(df, "/turns.dat")
    expect = dict(POSIX_OPENS=4, POSIX_SEEKS=2000, POSIX_WRITES=1500, POSIX_READS=500,
                  POSIX_BYTES_WRITTEN=96000, POSIX_BYTES_READ=32000,
                  POSIX_MAX_BYTE_WRITTEN=95999, POSIX_MAX_BYTE_READ=31999,
                  POSIX_CONSEC_READS=499, POSIX_SEQ_READS=499)
    assert {k: r[k] for k in expect} == expect


LATE_N = 40000  # posix_workload.c


def writes(r):
    return {k: r[k] for k in ("POSIX_WRITES", "POSIX_BYTES_WRITTEN", "POSIX_MAX_BYTE_WRITTEN",
                              "POSIX_SIZE_WRITE_0_100")}


def pair_expect(df, tag):
    # pwrite_pair: 2 x LATE_N writes of 8 on the shared file, LATE_N on each own
    n = LATE_N
    assert writes(one(df, f"/{tag}.dat")) == dict(
        POSIX_WRITES=2 * n, POSIX_BYTES_WRITTEN=16 * n, POSIX_MAX_BYTE_WRITTEN=16 * n - 1,
        POSIX_SIZE_WRITE_0_100=2 * n)
    assert one(df, f"/{tag}.dat")["POSIX_OPENS"] == 2
    for own in (f"/{tag}0.dat", f"/{tag}1.dat"):
        assert writes(one(df, own)) == dict(
            POSIX_WRITES=n, POSIX_BYTES_WRITTEN=8 * n, POSIX_MAX_BYTE_WRITTEN=8 * n - 1,
            POSIX_SIZE_WRITE_0_100=n)


def test_second_thread_writing_at_once_loses_no_count(tmp_path):
    # a thread alone in the tool skips the record lock; a second one starting
    # while the first writes must end that under it (exact totals on the
    # file both write at once)
    _, df = posix(tmp_path, "late-pwrites")
    pair_expect(df, "pair")


def test_under_a_seccomp_filter_that_kills_on_membarrier(tmp_path):
    # a launcher's allow list may kill on a call the application never makes:
    # the tool then keeps the one-thread rule (no membarrier, at start or when
    # the second thread enters), and the counts stay exact
    _, log = run_log([workload("seccomp_exec"), W, "late-pwrites", str(tmp_path)], tmp_path)
    pair_expect(log.records("POSIX"), "pair")


def test_second_thread_writing_through_stdio_at_once_loses_no_count(tmp_path):
    # the same through buffered streams: most calls are record steps alone
    _, log = run_log([W, "late-fwrites", str(tmp_path)], tmp_path)
    df = log.records("STDIO")
    n = 400000  # FPAIR_N

    def w(r):
        return {k: r[k] for k in ("STDIO_WRITES", "STDIO_BYTES_WRITTEN",
                                  "STDIO_MAX_BYTE_WRITTEN", "STDIO_SIZE_WRITE_0_100")}
    assert w(one(df, "/fpair.dat")) == dict(
        STDIO_WRITES=2 * n, STDIO_BYTES_WRITTEN=16 * n, STDIO_MAX_BYTE_WRITTEN=16 * n - 1,
        STDIO_SIZE_WRITE_0_100=2 * n)
    assert one(df, "/fpair.dat")["STDIO_OPENS"] == 2
    for own in ("/fpair0.dat", "/fpair1.dat"):
        assert w(one(df, own)) == dict(
            STDIO_WRITES=n, STDIO_BYTES_WRITTEN=8 * n, STDIO_MAX_BYTE_WRITTEN=8 * n - 1,
            STDIO_SIZE_WRITE_0_100=n)


def test_fork_from_a_thread_that_never_did_io(tmp_path):
    p = run([W, "fork-thread", str(tmp_path)], tmp_path)
    assert p.returncode == 0, p.stderr
    logs = logs_in(tmp_path)
    child = [lg for lg in logs if ".pid" in lg.name]
    parent = [lg for lg in logs if ".pid" not in lg.name]
    assert len(child) == 1 and len(parent) == 1
    pdf = iochar.open(str(parent[0])).records("POSIX")
    cdf = iochar.open(str(child[0])).records("POSIX")
    n = LATE_N
    # the parent's two threads on pmain.dat, the second after the fork
    assert writes(one(pdf, "/pmain.dat")) == dict(
        POSIX_WRITES=2 * n, POSIX_BYTES_WRITTEN=16 * n, POSIX_MAX_BYTE_WRITTEN=16 * n - 1,
        POSIX_SIZE_WRITE_0_100=2 * n)
    assert not pdf["path"].str.contains("/cpair").any()
    # the child: its forking thread, then a second child thread at once
    pair_expect(cdf, "cpair")
    assert not cdf["path"].str.endswith("/pmain.dat").any()


def test_first_io_of_a_thread_in_a_signal_handler(tmp_path):
    _, df = posix(tmp_path, "signal-io")
    n = LATE_N + LATE_N // 100
    assert writes(one(df, "/sig.dat")) == dict(
        POSIX_WRITES=n, POSIX_BYTES_WRITTEN=8 * n, POSIX_MAX_BYTE_WRITTEN=8 * n - 1,
        POSIX_SIZE_WRITE_0_100=n)


def test_posix_aio_counted_when_collected(tmp_path):
    _, df = posix(tmp_path, "aio")
    r = one(df, "/aio.dat")
    # 4 aio_write of 4096 and a listed 100 B write; 2 listed reads of 4096; the
    # uncollected aio_read is not counted
    expect = dict(POSIX_WRITES=5, POSIX_BYTES_WRITTEN=4 * 4096 + 100, POSIX_READS=2,
                  POSIX_BYTES_READ=8192, POSIX_CONSEC_WRITES=4, POSIX_CONSEC_READS=1,
                  POSIX_SIZE_WRITE_1K_10K=4, POSIX_SIZE_WRITE_0_100=1,
                  POSIX_SIZE_READ_1K_10K=2, POSIX_RW_SWITCHES=2, POSIX_MAX_BYTE_WRITTEN=16483)
    assert {k: r[k] for k in expect} == expect
    assert r["POSIX_F_WRITE_TIME"] > 0 and r["POSIX_F_READ_TIME"] > 0


def test_same_relative_name_in_two_directories(tmp_path):
    _, df = posix(tmp_path, "cwd")
    for d, size, stats in (("d1", 1, 2), ("d2", 2, 3)):
        r = one(df, f"/{d}/same.dat")
        assert (r["POSIX_OPENS"], r["POSIX_BYTES_WRITTEN"], r["POSIX_STATS"]) == (1, size, stats)


def test_excluded_paths(tmp_path):
    _, df = posix(tmp_path, "excluded", env={"IOCHAR_EXCLUDE": str(tmp_path / "skip_")})
    paths = set(df["path"])
    assert str(tmp_path / "keep.dat") in paths
    assert not any(p.startswith(("/dev/", "/proc/")) for p in paths)
    assert not any("skip_me" in p for p in paths)


def test_include_overrides_default_exclusion(tmp_path):
    _, df = posix(tmp_path, "excluded", env={"IOCHAR_INCLUDE": "/dev/null"})
    r = one(df, "/dev/null")
    assert (r["POSIX_WRITES"], r["POSIX_BYTES_WRITTEN"]) == (1, 10)


@pytest.mark.parametrize("mode", ["consec", "meta"])
def test_log_is_owner_only(tmp_path, mode):
    posix(tmp_path, mode)
    (log,) = logs_in(tmp_path)
    assert log.stat().st_mode & 0o777 == 0o600


FILE_KINDS = r"""
import os, sys, time
d = sys.argv[1]
fifo = os.path.join(d, "pipe")
os.mkfifo(fifo)
if os.fork() == 0:  # the writer comes late: the reader's open waits for it
    time.sleep(0.2)
    fd = os.open(fifo, os.O_WRONLY)
    os.write(fd, b"x" * 10)
    os.close(fd)
    os._exit(0)
fd = os.open(fifo, os.O_RDONLY)
assert os.read(fd, 100) == b"x" * 10
os.close(fd)
os.wait()
sub = os.path.join(d, "sub")
os.mkdir(sub)
os.close(os.open(sub, os.O_RDONLY | os.O_DIRECTORY))
"""


def test_file_type_of_a_waiting_fifo_and_a_directory(tmp_path):
    """POSIX_FILE_TYPE: a FIFO whose open waited for its writer is 1 (st_mode's type,
    from the fstat a waiting open pays), an O_DIRECTORY open 4 (from the flag alone)."""
    import sys
    p = run([sys.executable, "-c", FILE_KINDS, str(tmp_path)], tmp_path)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    logs = logs_in(tmp_path)
    df = iochar.open(str(logs[0])).records("POSIX")
    pipe = df[df["path"].str.endswith("/pipe")]
    assert set(pipe["POSIX_FILE_TYPE"]) == {1}
    assert one(df, "/sub")["POSIX_FILE_TYPE"] == 4
