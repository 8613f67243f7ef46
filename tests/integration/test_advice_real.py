"""Advice on real workloads: known bad and good I/O patterns run under the tool
(tests/integration/advice_posix.c, tests/integration/advice_mpi.c, h5py and netCDF4 scripts), then
`iochar-report LOG --json`; each test asserts exactly which rules fire (id, module,
severity) and the counter evidence the workload fixes. The good patterns (few large
aligned collective MPI-IO accesses; large aligned chunks through h5py) must fire
nothing at all. Workload sizes cross the thresholds of advice/config.py with margin.
"""

import contextlib
import io
import json
import os
import shutil
import sys

import pytest

from iochar.cli import report
from tool import BUILD_OPENMPI, LIB, logs_in, mpiexec, run, workload

KiB, MiB = 1 << 10, 1 << 20
N = 4  # MPI ranks (oversubscribed on small machines: keep collective calls few)
# Severity follows the share of the run a finding costs; these workloads are test-sized
# (milliseconds of I/O), so any severity: what is asserted is which rules fire and their
# evidence (the advice corpus sizes its workloads for severity).
EITHER = ("info", "warn", "high")


def report_json(logs, *options):
    """`iochar-report LOG... --json [options]`, in process; returns the parsed document."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert report.main([str(p) for p in logs] + ["--json", *options]) == 0
    return json.loads(out.getvalue())


def run_report(cmd, tmp_path, name_part="", **kw):
    """Run cmd under the tool; report on its log (the one whose name has name_part)."""
    p = run(cmd, tmp_path, **kw)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert b"iochar:" not in p.stderr, p.stderr.decode(errors="replace")
    logs = [lg for lg in logs_in(tmp_path) if name_part in lg.name]
    assert len(logs) == 1, logs_in(tmp_path)
    return report_json(logs)


def fired(rep):
    """{(id, module): advice} of a report; a rule fires at most once per module."""
    got = {}
    for a in rep["advice"]:
        key = (a["id"], a["module"])
        assert key not in got, f"{key} fired twice: {rep['advice']}"
        got[key] = a
    return got


def check(rep, want, evidence=None):
    """Exactly the rules in want fire ({(id, module): severity or severities}),
    and their evidence has the given exact values ({(id, module): {key: value}})."""
    got = fired(rep)
    msgs = [f"{a['severity']} {a['id']}: {a['message']}" for a in rep["advice"]]
    assert set(got) == set(want), msgs
    for key, sev in want.items():
        assert got[key]["severity"] in ((sev,) if isinstance(sev, str) else sev), msgs
    for key, ev in (evidence or {}).items():
        assert {k: got[key]["evidence"].get(k) for k in ev} == ev, got[key]


# ---------------------------------------------------------------- serial POSIX/STDIO

SERIAL = {
    # 2000 sequential aligned 4 KiB writes
    "small": ({("small-io", "POSIX"): EITHER},
              {("small-io", "POSIX"): {"POSIX_WRITES": 2000, "small_writes": 2000,
                                       "POSIX_SIZE_WRITE_1K_10K": 2000}}),
    # 2048 aligned 4 KiB writes at descending offsets: random (small too, folded under it)
    "random": ({("random-access", "POSIX"): EITHER},
               {("random-access", "POSIX"): {"POSIX_WRITES": 2048, "POSIX_SEQ_WRITES": 1,
                                             "random_writes": 2047}}),
    # 64-byte header, then 150 x 64 KiB records 64 bytes off every block boundary
    "misaligned": ({("misaligned", "POSIX"): EITHER},
                   {("misaligned", "POSIX"): {"POSIX_FILE_NOT_ALIGNED": 150, "accesses": 151,
                                              "POSIX_FILE_ALIGNMENT": 4096}}),
    # 20000 fprintf lines
    "stdio": ({("stdio-heavy", "STDIO"): EITHER},
              {("stdio-heavy", "STDIO"): {"STDIO_OPS": 20000, "POSIX_OPS": 0}}),
    # 100 tiny files created, then stat + open/close of each, 60 times
    "meta": ({("metadata-heavy", "POSIX"): EITHER},
             {("metadata-heavy", "POSIX"): {"POSIX_OPENS": 100 + 6000, "POSIX_STATS": 6000,
                                            "bytes": 100 * 100}}),
    # 16 MiB file read whole 6 times
    "reread": ({("redundant-reads", "POSIX"): EITHER},
               {("redundant-reads", "POSIX"): {"POSIX_BYTES_READ": 96 * MiB, "read_factor": 6.0,
                                               "POSIX_MAX_BYTE_READ": 16 * MiB - 1,
                                               "excess_bytes": 80 * MiB}}),
    # 120 x (64 KiB write, fsync)
    "fsync": ({("fsync-storm", "POSIX"): EITHER},
              {("fsync-storm", "POSIX"): {"POSIX_syncs": 120, "POSIX_WRITES": 120}}),
    # one 2400 KiB write, then read-modify-write of its 600 4 KiB records
    "rmw": ({("rw-switches", "POSIX"): EITHER},
            {("rw-switches", "POSIX"): {"POSIX_RW_SWITCHES": 1200, "excess_switches": 1199,
                                        "accesses": 1201}}),
    # 600 x (lseek SET, 64 KiB write, lseek CUR): the seeks' share of I/O time varies
    "seeks": ({("many-seeks", "POSIX"): EITHER},
              {("many-seeks", "POSIX"): {"POSIX_SEEKS": 1200, "accesses": 600}}),
}


@pytest.mark.parametrize("mode", list(SERIAL))
def test_serial_pattern(tmp_path, mode):
    want, evidence = SERIAL[mode]
    check(run_report([workload("advice_posix"), mode], tmp_path), want, evidence)


# ---------------------------------------------------------------- MPI

needs_mpich = pytest.mark.skipif(
    shutil.which("mpiexec.mpich") is None or not os.path.exists(workload("advice_mpi")),
    reason="needs MPICH and tests/advice_mpi")


def run_mpi(mode, tmp_path, flavor="mpich"):
    if flavor == "mpich":
        return run_report(mpiexec(N) + [workload("advice_mpi"), mode], tmp_path)
    return run_report(mpiexec(N, "openmpi") + [workload("advice_mpi", BUILD_OPENMPI), mode],
                      tmp_path, lib=LIB)


@pytest.mark.parametrize("flavor", [
    pytest.param("mpich", marks=needs_mpich),
    pytest.param("openmpi", marks=pytest.mark.skipif(
        shutil.which("mpiexec.openmpi") is None or
        not os.path.exists(workload("advice_mpi", BUILD_OPENMPI)),
        reason="needs Open MPI and build-openmpi/tests/advice_mpi"))])
def test_good_collective_pattern_fires_nothing(tmp_path, flavor):
    """4 ranks x 4 MPI_File_write_at_all + 4 read_at_all of 4 MiB, 4 MiB-aligned."""
    rep = run_mpi("good", tmp_path, flavor)
    assert rep["advice"] == [], [f"{a['severity']} {a['id']}: {a['message']}"
                                 for a in rep["advice"]]
    # and it is the pattern it claims to be
    m = rep["modules"]["MPIIO"]
    assert rep["job"]["nprocs"] == N
    assert (m["writes"], m["reads"]) == (4 * N, 4 * N)
    assert m["bytes_written"] == m["bytes_read"] == 4 * N * 4 * MiB
    assert m["top_sizes"] == [{"size": 4 * MiB, "count": 8 * N}]
    # (Open MPI's OMPIO also writes 40 bytes to a shared-memory file of its own)
    assert 0 <= rep["modules"]["POSIX"]["bytes_written"] - 4 * N * 4 * MiB <= 4 * KiB


@needs_mpich
def test_independent_small_shared_writes(tmp_path):
    """4 ranks x 300 MPI_File_write_at of 4 KiB interleaved in one shared file."""
    rep = run_mpi("indep", tmp_path)
    # one finding, the cause, judged at MPI-IO; the symptoms are folded under it
    check(rep, {("strided-shared", "MPIIO"): EITHER},
          {("strided-shared", "MPIIO"): {"POSIX_WRITES": 1200, "nranks": N,
                                         "POSIX_STRIDE1_STRIDE": 3 * 4 * KiB,
                                         "mean_access_bytes": 4 * KiB}})
    a = fired(rep)[("strided-shared", "MPIIO")]
    assert {f["id"] for f in a["folded"]} == {"no-collective", "small-io"}
    assert "MPI_File_write_at_all" in a["recommendation"]
    assert a["layers"]["MPIIO"]["writes"] == a["layers"]["POSIX"]["writes"] == 1200


@needs_mpich
def test_rank_imbalance_on_a_shared_file(tmp_path):
    """Rank 0 writes 80 MiB of a shared POSIX file, the other ranks 4 KiB each."""
    rep = run_mpi("imbalance", tmp_path)
    check(rep, {("rank-imbalance", "POSIX"): EITHER},
          {("rank-imbalance", "POSIX"): {"max_rank_bytes": 80 * MiB, "min_rank_bytes": 4 * KiB,
                                         "slowest_rank": 0, "ranks": N}})


@needs_mpich
def test_collective_buffering_disabled_for_small_writes(tmp_path):
    """romio_cb_write=disable, then 4 ranks x 30 write_at_all of 4 KiB, interleaved."""
    check(run_mpi("nocb", tmp_path), {("hints", "MPIIO"): EITHER},
          {("hints", "MPIIO"): {"MPIIO_HINT_ROMIO_CB_WRITE": 2, "MPIIO_WRITES": 120,
                                "small_writes": 120, "MPIIO_COLL_WRITES": 120}})


# ---------------------------------------------------------------- HDF5 / NetCDF (Python)

def run_python(script, tmp_path):
    """A Python script under the tool; the interpreter's log (it may spawn helpers)."""
    exe = os.path.basename(sys.executable)
    return run_report([sys.executable, "-c", script], tmp_path, name_part=exe)


H5_TINY_CHUNKS = """
import h5py, numpy as np
# 4 KiB chunks (aligned to 4 KiB, so POSIX sees aligned writes), written a row at a time
with h5py.File("chunks.h5", "w", alignment_threshold=4096, alignment_interval=4096) as f:
    d = f.create_dataset("field", shape=(150, 512), dtype="f8", chunks=(1, 512))
    for i in range(150):
        d[i, :] = np.ones(512)
"""

H5_TINY_CHUNKS_ONE_WRITE = """
import h5py, numpy as np
# 1000 chunks of 800 bytes, written by one H5Dwrite: HDF5 writes each chunk on its own
with h5py.File("chunks.h5", "w") as f:
    d = f.create_dataset("field", shape=(1000, 100), dtype="f8", chunks=(1, 100))
    d[...] = np.ones((1000, 100))
"""

H5_GOOD = """
import h5py, numpy as np
# 4 MiB chunks aligned to 1 MiB, written 8 MiB at a time, read back whole once
with h5py.File("good.h5", "w", alignment_threshold=1 << 20, alignment_interval=1 << 20) as f:
    d = f.create_dataset("field", shape=(8, 512, 1024), dtype="f8", chunks=(1, 512, 1024))
    for i in range(4):
        d[2 * i:2 * i + 2] = np.ones((2, 512, 1024))
with h5py.File("good.h5", "r") as f:
    x = f["field"][...]
"""


def test_hdf5_tiny_chunks(tmp_path):
    pytest.importorskip("h5py")
    rep = run_python(H5_TINY_CHUNKS, tmp_path)
    check(rep, {("hdf5-chunking", "H5D"): EITHER},
          {("hdf5-chunking", "H5D"): {"chunk_bytes": 4096, "H5D_CHUNK_SIZE_D1": 1,
                                      "H5D_CHUNK_SIZE_D2": 512, "H5D_DATATYPE_SIZE": 8,
                                      "H5D_DATASPACE_NPOINTS": 150 * 512, "datasets": 1}})
    assert rep["modules"]["H5D"]["writes"] == 150


def test_hdf5_tiny_chunks_one_write(tmp_path):
    """1000 tiny chunks by one call: HDF5's chunk writes are small and misaligned, and
    that is the chunking's doing: one finding, the misalignment folded under it."""
    pytest.importorskip("h5py")
    rep = run_python(H5_TINY_CHUNKS_ONE_WRITE, tmp_path)
    check(rep, {("hdf5-chunking", "H5D"): EITHER},
          {("hdf5-chunking", "H5D"): {"chunk_bytes": 800, "H5D_DATASPACE_NPOINTS": 100000}})
    assert rep["modules"]["H5D"]["writes"] == 1
    a = fired(rep)[("hdf5-chunking", "H5D")]
    assert [f["id"] for f in a["folded"]] == ["misaligned"]
    assert a["layers"]["HDF5"]["writes"] == 1 and a["layers"]["POSIX"]["writes"] >= 1000
    assert "H5Pset_chunk(dcpl, 2, {1310, 100})" in a["recommendation"]


def test_hdf5_good_pattern_fires_nothing(tmp_path):
    """Large aligned chunks through h5py: nothing, although the interpreter's own
    reads (every module's .pyc read to EOF) end in ~190 misaligned EOF probes."""
    pytest.importorskip("h5py")
    rep = run_python(H5_GOOD, tmp_path)
    assert rep["advice"] == [], [f"{a['severity']} {a['id']}: {a['message']}"
                                 for a in rep["advice"]]
    h = rep["modules"]["H5D"]
    assert (h["writes"], h["reads"]) == (4, 1)
    assert h["bytes_written"] == h["bytes_read"] == 32 * MiB


NC_RECORD_VARS = """
import netCDF4, numpy as np
# classic format: 6 record variables, 20 records each, written one record per call
with netCDF4.Dataset("records.nc", "w", format="NETCDF3_CLASSIC") as ds:
    ds.createDimension("time", None)
    ds.createDimension("x", 100)
    vs = [ds.createVariable(n, "f4", ("time", "x")) for n in ("u", "v", "w", "t", "p", "q")]
    for t in range(20):
        for v in vs:
            v[t, :] = np.ones(100, "f4")
"""


def test_netcdf_classic_record_variables(tmp_path):
    pytest.importorskip("netCDF4")
    rep = run_python(NC_RECORD_VARS, tmp_path)
    # 47 KiB of data next to the interpreter's own imports: its share of the I/O time,
    # and so its severity, varies (the corpus has a workload where it dominates)
    check(rep, {("netcdf-record-vars", "NC_VAR"): EITHER},
          {("netcdf-record-vars", "NC_VAR"): {"record_vars": 6, "files": 1,
                                              "record_var_ops": 120}})
    # a serial classic file: nothing about parallel access
    assert "NC_COLLECTIVE" not in fired(rep)[("netcdf-record-vars", "NC_VAR")]["recommendation"]
