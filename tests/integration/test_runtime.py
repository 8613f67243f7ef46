"""Runtime behaviour: invisibility, lifecycle, bounds, configuration."""

import os
import re
import subprocess

import iochar
from iochar import livedir
from iochar.flags import PARTIAL
from tool import LIB, logs_in, one, run, run_log, workload

W = workload("posix_workload")


def test_errno_and_output_identical(tmp_path):
    bare = tmp_path / "bare"
    tooled = tmp_path / "tool"
    bare.mkdir()
    tooled.mkdir()
    a = run([W, "errors", "."], bare, preload=False)
    b = run([W, "errors", "."], tooled)
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout
    assert a.stderr == b.stderr == b""
    assert b"open -1 2" in a.stdout  # ENOENT really happened
    assert len(logs_in(tooled)) == 1


def test_exit_status_preserved(tmp_path):
    p = run([W, "status-io", str(tmp_path)], tmp_path)
    assert p.returncode == 7
    assert len(logs_in(tmp_path)) == 1


def test_process_without_io_writes_no_log(tmp_path):
    p = run([W, "status", "."], tmp_path)
    assert p.returncode == 7
    assert logs_in(tmp_path) == []


def test_stdio_exact(tmp_path):
    p, log = run_log([workload("stdio_workload"), str(tmp_path)], tmp_path)
    assert p.stdout == b"got=1000 s=1 c=h\n"
    df = log.records("STDIO")
    r = one(df, "/stdio.dat")
    expect = dict(STDIO_OPENS=1, STDIO_WRITES=13, STDIO_BYTES_WRITTEN=10016, STDIO_READS=3,
                  STDIO_BYTES_READ=1010, STDIO_SEEKS=2, STDIO_FLUSHES=1,
                  STDIO_SIZE_WRITE_100_1K=10, STDIO_SIZE_WRITE_0_100=3,
                  STDIO_ACCESS1_ACCESS=1000, STDIO_ACCESS1_COUNT=11,
                  STDIO_CONSEC_WRITES=12, STDIO_MAX_BYTE_WRITTEN=10015,
                  STDIO_MAX_BYTE_READ=10009, STDIO_RW_SWITCHES=1)
    assert {k: r[k] for k in expect} == expect
    out = one(df, "<STDOUT>")
    assert (out["STDIO_WRITES"], out["STDIO_BYTES_WRITTEN"]) == (1, 17)
    err = one(df, "<STDERR>")
    assert (err["STDIO_WRITES"], err["STDIO_BYTES_WRITTEN"]) == (1, 10)
    # stdio's own descriptor I/O happens inside libc: no POSIX record for it
    assert not log.records("POSIX")["path"].str.endswith("/stdio.dat").any() \
        if "POSIX" in log.modules else True


def test_stdio_unlocked_calls(tmp_path):
    _, log = run_log([workload("stdio_unlocked"), str(tmp_path)], tmp_path)
    r = one(log.records("STDIO"), "/unlocked.dat")
    # 100 fwrite_unlocked of 40, fputs_unlocked 5, fputc_unlocked and putc_unlocked;
    # 50 fread_unlocked of 40, fgets_unlocked 5 at 4000, fgetc/getc_unlocked
    expect = dict(STDIO_WRITES=103, STDIO_BYTES_WRITTEN=4007, STDIO_CONSEC_WRITES=102,
                  STDIO_MAX_BYTE_WRITTEN=4006, STDIO_SIZE_WRITE_0_100=103,
                  STDIO_READS=53, STDIO_BYTES_READ=2007, STDIO_CONSEC_READS=51,
                  STDIO_MAX_BYTE_READ=4006, STDIO_SEEKS=2, STDIO_RW_SWITCHES=1)
    assert {k: r[k] for k in expect} == expect


def test_fork_child_has_own_log(tmp_path):
    p = run([W, "fork", str(tmp_path)], tmp_path)
    assert p.returncode == 0, p.stderr
    logs = logs_in(tmp_path)
    assert len(logs) == 2
    child = [lg for lg in logs if ".pid" in lg.name]
    parent = [lg for lg in logs if ".pid" not in lg.name]
    assert len(child) == 1 and len(parent) == 1
    pdf = iochar.open(str(parent[0])).records("POSIX")
    cdf = iochar.open(str(child[0])).records("POSIX")
    assert (one(pdf, "/parent.dat")["POSIX_WRITES"]) == 2
    assert not pdf["path"].str.endswith("/child.dat").any()
    assert one(cdf, "/child.dat")["POSIX_BYTES_WRITTEN"] == 60
    # the child inherited parent.dat open but did no I/O on it
    assert not cdf["path"].str.endswith("/parent.dat").any()


def test_memory_bound_folds_exactly(tmp_path):
    p = run([W, "many", str(tmp_path)], tmp_path, env={"IOCHAR_MEMORY": "128k"})
    assert p.returncode == 0
    warn = [ln for ln in p.stderr.decode().splitlines() if ln.startswith("iochar:")]
    assert len(warn) == 1 and "memory bound" in warn[0]
    (lg,) = logs_in(tmp_path)
    log = iochar.open(str(lg))
    df = log.records("POSIX")
    assert df["POSIX_WRITES"].sum() == 500
    assert df["POSIX_OPENS"].sum() == 500
    assert df["POSIX_BYTES_WRITTEN"].sum() == 5000
    agg = one(df, "<AGGREGATE>")
    kept = len(df) - 1
    assert agg["POSIX_OPENS"] == 500 - kept
    assert log.job["partial"] & PARTIAL["FOLDED"]
    assert log.job["folded_files"] == 500 - kept
    assert 0 < kept < 500
    assert log.job["memory_bound"] == 128 * 1024
    from iochar.flags import reasons as _partial_reasons
    assert _partial_reasons(log.job)[0] == (
        f"{500 - kept} files past the memory bound (128 KiB, IOCHAR_MEMORY) were folded into "
        "<AGGREGATE> records (totals stay exact)")


def check_names(df):
    """Totals of posix_workload names: 300 files created, closed, stat'ed twice, then
    opened again and written 10 bytes each."""
    assert df["POSIX_OPENS"].sum() == 600 and df["POSIX_STATS"].sum() == 600
    assert df["POSIX_WRITES"].sum() == 300 and df["POSIX_BYTES_WRITTEN"].sum() == 3000


def test_metadata_only_names_keep_their_counts(tmp_path):
    """A name only created, closed and stat'ed is a metadata-only entry; its first
    write makes it a record that keeps everything counted before (issue 29)."""
    _, log = run_log([W, "names", str(tmp_path)], tmp_path)
    df = log.records("POSIX")
    check_names(df)
    names = df[df["path"].str.contains("/name")]
    assert len(names) == 300
    for _, r in names.iterrows():
        assert (r["POSIX_OPENS"], r["POSIX_STATS"], r["POSIX_WRITES"], r["POSIX_MODE"],
                r["POSIX_MEM_ALIGNMENT"]) == (2, 2, 1, 0o640, 8)
        assert r["POSIX_FILE_ALIGNMENT"] > 0 and r["POSIX_FILE_BLKSIZE"] > 0
        # the first open's start, before the write; the last close's end, after it
        assert 0 < r["POSIX_F_OPEN_START_TIMESTAMP"] < r["POSIX_F_CLOSE_START_TIMESTAMP"]
        assert r["POSIX_F_OPEN_START_TIMESTAMP"] < r["POSIX_F_WRITE_START_TIMESTAMP"] \
            < r["POSIX_F_CLOSE_END_TIMESTAMP"]
        assert r["POSIX_F_META_TIME"] > 0


def test_memory_bound_folds_entries_exactly(tmp_path):
    """Entries fit the bound, their records do not all: a name whose record cannot be
    made goes into the aggregate with its counts so far, and the totals stay exact."""
    p = run([W, "names", str(tmp_path)], tmp_path, env={"IOCHAR_MEMORY": "128k"})
    assert p.returncode == 0
    (lg,) = logs_in(tmp_path)
    log = iochar.open(str(lg))
    df = log.records("POSIX")
    check_names(df)
    agg = one(df, "<AGGREGATE>")
    kept = df[df["path"].str.contains("/name")]
    folded = 300 - len(kept)
    assert 0 < len(kept) < 300 and log.job["folded_files"] == folded
    assert (agg["POSIX_OPENS"], agg["POSIX_STATS"], agg["POSIX_WRITES"]) == (
        2 * folded, 2 * folded, folded)
    assert (kept["POSIX_OPENS"] == 2).all() and (kept["POSIX_WRITES"] == 1).all()
    assert agg["POSIX_MODE"] == 0o640 and agg["POSIX_F_META_TIME"] > 0


def test_disable(tmp_path):
    p = run([W, "consec", str(tmp_path)], tmp_path, env={"IOCHAR_DISABLE": "1"})
    assert p.returncode == 0
    assert logs_in(tmp_path) == []


def test_unwritable_logdir(tmp_path):
    p = run([W, "status-io", str(tmp_path)], tmp_path,
            env={"IOCHAR_LOGDIR": "/nonexistent/dir"})
    assert p.returncode == 7
    lines = p.stderr.decode().splitlines()
    # said once, at start (not again when the write fails at exit)
    assert lines == ["iochar: log directory /nonexistent/dir: No such file or directory; "
                     "the log will not be written"]


def test_logfile_exact_path(tmp_path):
    target = tmp_path / "sub" / "job.iochar"
    target.parent.mkdir()
    p = run([W, "consec", str(tmp_path)], tmp_path, env={"IOCHAR_LOGFILE": str(target)})
    assert p.returncode == 0
    assert target.exists()
    assert [f for f in os.listdir(target.parent)] == ["job.iochar"]


def test_log_name_pattern(tmp_path):
    run([W, "consec", str(tmp_path)], tmp_path, env={"SLURM_JOB_ID": "4242"})
    (lg,) = logs_in(tmp_path)
    assert re.fullmatch(r".+_posix_workload_id4242_\d{8}-\d{6}_\d+\.iochar", lg.name)
    assert iochar.open(str(lg)).job["jobid"] == "4242"


def test_underscore_exit_still_logs(tmp_path):
    # _exit called by the program (not from a signal handler) writes the log as the
    # end of main does and removes the live file (tests/integration/test_children.py
    # has _exit from a handler, which only marks the live file)
    p = run([W, "exit", str(tmp_path)], tmp_path)
    assert p.returncode == 0 and p.stderr == b""
    assert livedir.files_for(tmp_path) == [] and list(tmp_path.glob(".*.live")) == []
    (lg,) = logs_in(tmp_path)
    log = iochar.open(str(lg))
    assert not log.job["partial"] & PARTIAL["RECOVERED"]
    r = one(log.records("POSIX"), "/quick.dat")
    assert r["POSIX_BYTES_WRITTEN"] == 7


def test_shell_launcher_writes_no_log(tmp_path):
    p = run(["bash", "-c", f"{W} consec {tmp_path}; true"], tmp_path)
    assert p.returncode == 0
    logs = logs_in(tmp_path)
    assert len(logs) == 1 and "posix_workload" in logs[0].name


def test_job_record(tmp_path):
    _, log = run_log([W, "consec", str(tmp_path)], tmp_path)
    j = log.job
    assert j["exe"].endswith("/posix_workload")
    assert j["cmdline"].endswith(f"consec {tmp_path}")
    assert j["uid"] == os.getuid()
    assert j["end_time"] >= j["start_time"] > 1.7e9
    assert j["version"] and j["hostname"]
    assert j["partial"] == 0
    assert "/" in set(log.mounts["mount_point"])


# The kernel's pseudo file systems (runtime/log_sections.c, mount_listed): a
# machine may mount any of them (tracefs, debugfs, bpf... come and go).
PSEUDO = {"proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "securityfs", "debugfs",
          "tracefs", "pstore", "bpf", "hugetlbfs", "fusectl", "configfs", "mqueue", "autofs",
          "binfmt_misc", "rpc_pipefs", "nsfs", "efivarfs", "selinuxfs", "nfsd"}


def test_mounts_leave_out_unused_pseudo_file_systems(tmp_path):
    """MOUNTS lists each mount point once (the visible, later mount) and no kernel
    pseudo file system no recorded file was on; reading /proc (included on request) keeps proc."""
    table = [ln.split()[1:3] for ln in open("/proc/self/mounts")]
    _, log = run_log([W, "consec", str(tmp_path)], tmp_path)
    got = list(zip(log.mounts["mount_point"], log.mounts["fs_type"]))
    visible = {point: fs for point, fs in table}  # later lines win
    want = [(p, f) for p, f in visible.items() if f not in PSEUDO]
    assert sorted(got) == sorted(want)
    assert len(got) == len(set(log.mounts["mount_point"]))
    d = tmp_path / "proc"
    d.mkdir()
    _, log = run_log(["python3", "-c", "open('/proc/self/status', 'rb').read()"], d,
                     env={"IOCHAR_INCLUDE": "/proc"})  # excluded by default, as Darshan
    assert one(log.records("POSIX"), "/status")["POSIX_OPENS"] == 1
    assert dict(zip(log.mounts["mount_point"], log.mounts["fs_type"]))["/proc"] == "proc"


def test_non_mpi_python_program_works(tmp_path):
    code = f"open({str(tmp_path / 'py.txt')!r}, 'w').write('x' * 123)"
    p = run(["python3", "-c", code], tmp_path)
    assert p.returncode == 0
    (lg,) = logs_in(tmp_path)
    r = one(iochar.open(str(lg)).records("POSIX"), "/py.txt")
    assert r["POSIX_BYTES_WRITTEN"] == 123


def test_library_exports_only_wrappers():
    out = subprocess.run(["nm", "-D", "--defined-only", str(LIB)], capture_output=True,
                         text=True).stdout
    names = {ln.split()[-1] for ln in out.splitlines()}
    assert {"open", "write", "pwrite64", "fwrite", "fprintf"} <= names
    assert not any(n.startswith("iochar_record") for n in names)


def test_fortified_entry_points_counted(tmp_path):
    """-D_FORTIFY_SOURCE=2 builds call __read_chk, __fprintf_chk...: counted as
    the plain calls would be."""
    exe = workload("fortify_workload")
    syms = subprocess.run(["nm", "-D", exe], capture_output=True, text=True).stdout
    for name in ("__read_chk", "__pread_chk", "__fprintf_chk", "__printf_chk",
                 "__fgets_chk", "__fread_chk", "__vfprintf_chk"):
        assert name in syms, name  # the workload really goes through them
    p, log = run_log([exe, str(tmp_path), "100"], tmp_path)
    assert p.stdout == b"done 1\n"
    r = one(log.records("POSIX"), "/fort.dat")
    assert (r["POSIX_OPENS"], r["POSIX_READS"], r["POSIX_BYTES_READ"]) == (2, 2, 200)
    df = log.records("STDIO")
    t = one(df, "/fort.txt")
    assert (t["STDIO_WRITES"], t["STDIO_BYTES_WRITTEN"]) == (2, 13)
    assert (t["STDIO_READS"], t["STDIO_BYTES_READ"]) == (2, 13)
    out = one(df, "<STDOUT>")
    assert (out["STDIO_WRITES"], out["STDIO_BYTES_WRITTEN"]) == (1, 7)


def test_vfork_child_exit_does_not_take_parent_log(tmp_path):
    p = run([W, "vfork", str(tmp_path)], tmp_path)
    assert p.returncode == 0, p.stderr
    (lg,) = logs_in(tmp_path)
    df = iochar.open(str(lg)).records("POSIX")
    assert one(df, "/before.dat")["POSIX_BYTES_WRITTEN"] == 5
    assert one(df, "/after.dat")["POSIX_BYTES_WRITTEN"] == 6
    # the child's dup2 onto and close of its copy of kept.dat's descriptor do
    # not end the parent's tracking; the child's own I/O is not the parent's
    k = one(df, "/kept.dat")
    assert (k["POSIX_OPENS"], k["POSIX_WRITES"], k["POSIX_BYTES_WRITTEN"]) == (1, 2, 7)
    assert not df["path"].str.endswith("/child.dat").any()


def test_relative_and_unclean_paths_are_normalised(tmp_path):
    (tmp_path / "sub").mkdir()
    code = ("open('./sub/../a.dat', 'w').write('x'); open('sub//b.dat', 'w').write('yy');"
            f"open({str(tmp_path)!r} + '/./sub/./c.dat', 'w').write('zzz')")
    p = run(["python3", "-c", code], tmp_path)
    assert p.returncode == 0, p.stderr
    (lg,) = logs_in(tmp_path)
    df = iochar.open(str(lg)).records("POSIX")
    paths = set(df["path"])
    for name, size in (("a.dat", 1), ("sub/b.dat", 2), ("sub/c.dat", 3)):
        full = str(tmp_path / name)
        assert full in paths, (full, paths)
        assert one(df, "/" + name)["POSIX_BYTES_WRITTEN"] == size


def test_idle_fork_child_writes_no_log(tmp_path):
    p = run([W, "fork-idle", str(tmp_path)], tmp_path)
    assert p.returncode == 0, p.stderr
    (lg,) = logs_in(tmp_path)
    assert ".pid" not in lg.name


def test_job_script_utilities_write_no_log(tmp_path):
    script = f"d=$(dirname {W}); basename $d >/dev/null; readlink -f $d >/dev/null; uname >/dev/null; mkdir -p x"
    p = run(["bash", "-c", script], tmp_path)
    assert p.returncode == 0, p.stderr
    assert logs_in(tmp_path) == []


def test_freopen_stdout_onto_a_file(tmp_path):
    target = tmp_path / "out.txt"
    p, log = run_log([workload("stdio_freopen"), str(target)], tmp_path)
    assert p.stdout == b"before\n" and target.read_bytes() == b"into the file\n"
    df = log.records("STDIO")
    f = one(df, "/out.txt")
    assert (f["STDIO_OPENS"], f["STDIO_WRITES"], f["STDIO_BYTES_WRITTEN"]) == (1, 1, 14)
    out = one(df, "<STDOUT>")
    assert (out["STDIO_WRITES"], out["STDIO_BYTES_WRITTEN"]) == (1, 7)
