"""Darshan logs written from real workloads' logs (iochar-parser --to-darshan): PyDarshan,
iochar.open (the round trip) and darshan-parser 3.4.7 read our counters back, field
by field; PyDarshan's summary and Drishti run on them."""

import os
import re
import shutil
import subprocess
import sys

import pytest

darshan = pytest.importorskip("darshan")

import darshan_check as D  # noqa: E402
import iochar  # noqa: E402
from tool import BUILD_OPENMPI, logs_in, mpiexec, run, workload  # noqa: E402

N = 4
needs_parser = pytest.mark.skipif(not D.DARSHAN_PARSER.exists(),
                                   reason=f"needs darshan-parser 3.4.7 at {D.DARSHAN_PARSER} "
                                          "(IOCHAR_BENCH_DARSHAN)")


def export(tmp_path, cmd, **kw):
    """Run cmd under the tool, export its one log; returns (iochar log, darshan path)."""
    p = run(cmd, tmp_path, **kw)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    (src,) = logs_in(tmp_path)
    out = tmp_path / "job.darshan"
    q = subprocess.run([sys.executable, "-m", "iochar.cli.parser", str(src), "--to-darshan",
                        str(out)], capture_output=True)
    assert q.returncode == 0 and q.stderr == b"", q.stderr
    assert q.stdout.decode().strip() == str(out)
    assert (out.stat().st_mode & 0o777) == 0o600
    log = iochar.open(str(src))
    assert D.check_pydarshan(log, out) > 0
    assert D.check_roundtrip(log, out) > 0
    D.check_documented(log)
    if D.DARSHAN_PARSER.exists():
        assert D.check_parser(log, out) > 0
    return log, out


def darshan_row(path, module, suffix):
    """One record's counters and fcounters as PyDarshan reads them (a dict)."""
    rep = darshan.DarshanReport(str(path), read_all=True)
    df = rep.records[module].to_df()
    ids = [i for i, n in rep.name_records.items() if n.endswith(suffix)]
    assert len(ids) == 1, (suffix, ids)
    c, f = df["counters"], df["fcounters"]
    rows = c[c["id"] == ids[0]]
    assert len(rows) == 1
    return {**rows.iloc[0].to_dict(), **f[f["id"] == ids[0]].iloc[0].to_dict()}


def test_posix_dups_open_counts_and_unknowns(tmp_path):
    _, out = export(tmp_path, [workload("posix_workload"), "meta", str(tmp_path)])
    r = darshan_row(out, "POSIX", "/meta.dat")
    # Darshan's POSIX_OPENS counts dup()s too: 1 open + 3 dups
    assert (r["POSIX_OPENS"], r["POSIX_DUPS"], r["POSIX_STATS"], r["POSIX_WRITES"]) == (4, 3, 7, 4)
    assert (r["POSIX_BYTES_WRITTEN"], r["POSIX_MODE"]) == (8192 + 1100, 0o640)
    assert r["POSIX_FILENOS"] == -1 and r["POSIX_RENAMED_FROM"] == 0  # unknown, none
    assert r["rank"] == 0 and r["POSIX_F_META_TIME"] > 0


def test_posix_strided(tmp_path):
    _, out = export(tmp_path, [workload("posix_workload"), "strided", str(tmp_path)])
    r = darshan_row(out, "POSIX", "/strided.dat")
    assert (r["POSIX_STRIDE1_STRIDE"], r["POSIX_STRIDE1_COUNT"], r["POSIX_SEQ_WRITES"]) == \
        (2000, 9, 9)
    assert (r["POSIX_ACCESS1_ACCESS"], r["POSIX_ACCESS1_COUNT"], r["POSIX_MAX_BYTE_READ"]) == \
        (1000, 10, 16483)
    assert r["POSIX_FILE_ALIGNMENT"] == 4096 and r["POSIX_SIZE_WRITE_100_1K"] == 10


def test_stdio(tmp_path):
    _, out = export(tmp_path, [workload("stdio_workload"), str(tmp_path)])
    r = darshan_row(out, "STDIO", "/stdio.dat")
    assert (r["STDIO_OPENS"], r["STDIO_BYTES_WRITTEN"], r["STDIO_BYTES_READ"]) == (1, 10016, 1010)
    assert darshan_row(out, "STDIO", "<STDOUT>")["STDIO_BYTES_WRITTEN"] == 17


@pytest.mark.skipif(shutil.which("mpiexec.mpich") is None, reason="needs MPICH")
def test_mpiio_shared_and_per_process_then_summary_and_drishti(tmp_path):
    log, out = export(tmp_path, mpiexec(N) + [workload("mpi_workload")])
    s = darshan_row(out, "MPI-IO", "/shared.dat")
    assert s["rank"] == -1  # reduced over the ranks, as Darshan's shared records
    assert (s["MPIIO_COLL_WRITES"], s["MPIIO_COLL_READS"], s["MPIIO_BYTES_WRITTEN"]) == \
        (2 * N, N, 8192 * N)
    assert s["MPIIO_SIZE_WRITE_AGG_1K_10K"] == 2 * N  # iochar's size bins are Darshan's
    for r in range(N):
        f = darshan_row(out, "MPI-IO", f"/fpp.{r}.dat")
        assert (f["rank"], f["MPIIO_INDEP_WRITES"], f["MPIIO_BYTES_WRITTEN"]) == \
            (r, 1, (r + 1) * 1000)

    # PyDarshan's own HTML summary shows our files and bytes
    html = tmp_path / "summary.html"
    p = subprocess.run([sys.executable, "-m", "darshan", "summary", str(out), "--output",
                        str(html)], capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html.read_text()))
    posix = log.records("POSIX")
    assert f"files accessed {len(posix)} " in text
    kib = posix["POSIX_BYTES_WRITTEN"].sum() / 1024
    assert f"bytes written {kib:.2f} KiB" in text
    assert "Runtime Library Version iochar" in text

    drishti = shutil.which("drishti")
    if drishti:
        p = subprocess.run([drishti, str(out)], capture_output=True, timeout=300)
        assert p.returncode == 0 and b"Traceback" not in p.stderr + p.stdout, p.stderr
        assert b"shared.dat" in p.stdout


@pytest.mark.skipif(shutil.which("mpiexec.mpich") is None or
                    not os.path.exists(workload("h5_parallel")),
                    reason="needs MPICH and libhdf5-mpich (tests/h5_parallel)")
def test_hdf5(tmp_path):
    log, out = export(tmp_path, mpiexec(N) + [workload("h5_parallel"), "h5_parallel.h5"])
    d = darshan_row(out, "H5D", "/h5_parallel.h5:/contig")
    assert (d["H5D_BYTES_WRITTEN"], d["H5D_DATASPACE_NDIMS"], d["H5D_USE_DEPRECATED"]) == \
        (8192 * N, 1, -1)
    # each dataset record names its file's record
    from darshan.backend import cffi_backend as be
    h = be.log_open(str(out))
    names = be.log_get_name_records(h)
    (fid,) = [i for i, n in names.items() if n.endswith("/h5_parallel.h5")]
    recs = iter(lambda: be.log_get_generic_record(h, "H5D", dtype="numpy"), None)
    assert {int(r["file_rec_id"]) for r in recs} == {fid}
    be.log_close(h)


PNC = workload("pnc_basic", build=BUILD_OPENMPI)


@pytest.mark.skipif(shutil.which("mpiexec.openmpi") is None or not os.path.exists(PNC),
                    reason="needs Open MPI and libpnetcdf-dev (build-openmpi/tests/pnc_basic)")
def test_pnetcdf(tmp_path):
    _, out = export(tmp_path, mpiexec(N, "openmpi") + [PNC, "pnc.nc"],
                    lib=BUILD_OPENMPI / "libiochar.so")
    v = darshan_row(out, "PNETCDF_VAR", "/pnc.nc:rec")
    # iochar's PUTS/GETS by kind are Darshan's WRITES/READS by kind
    assert (v["PNETCDF_VAR_INDEP_WRITES"], v["PNETCDF_VAR_COLL_WRITES"],
            v["PNETCDF_VAR_NB_WRITES"], v["PNETCDF_VAR_COLL_READS"]) == (N, N, 2 * N, 2 * N)
    assert v["PNETCDF_VAR_PUT_VARA"] == -1  # per-API counts: iochar has none
    f = darshan_row(out, "PNETCDF_FILE", "/pnc.nc")
    assert (f["PNETCDF_FILE_CREATES"], f["PNETCDF_FILE_COLL_WAITS"]) == (N, 2 * N)
    assert f["PNETCDF_FILE_BYTES_WRITTEN"] == -1


@needs_parser
def test_darshan_parser_reads_the_job_header(tmp_path):
    log, out = export(tmp_path, [workload("posix_workload"), "consec", str(tmp_path)])
    text = subprocess.run([str(D.DARSHAN_PARSER), str(out)], capture_output=True,
                          check=True).stdout.decode()
    assert "# darshan log version: 3.41" in text
    assert f"# nprocs: {log.job['nprocs']}" in text and f"# jobid: {log.job['jobid']}" in text
    assert f"# exe: {log.job['cmdline']}" in text
    assert "# metadata: lib_ver = iochar" in text
