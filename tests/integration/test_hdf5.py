"""HDF5 under the tool: parallel HDF5 from C (tests/integration/h5_parallel.c) and h5py's
private libhdf5 (loaded RTLD_LOCAL), with exact H5F/H5D counters."""

import os
import shutil
import sys

import pytest

from iolib import bins, expect, frames, top4, totals
from tool import mpiexec, run, workload

N = 4


@pytest.mark.skipif(shutil.which("mpiexec.mpich") is None or
                    not os.path.exists(workload("h5_parallel")),
                    reason="needs MPICH and libhdf5-mpich (tests/h5_parallel)")
def test_h5_parallel(tmp_path):
    p = run(mpiexec(N) + [workload("h5_parallel"), "h5_parallel.h5"], tmp_path)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert p.stdout.decode().strip() == "done"
    assert b"iochar:" not in p.stderr

    f = totals(frames(tmp_path, "H5F"), "/h5_parallel.h5")
    expect(f, H5F_OPENS=2 * N, H5F_FLUSHES=N, H5F_USE_MPIIO=1, H5F_ALIGNMENT=65536,
           H5F_ALIGNMENT_THRESHOLD=1024, H5F_COLL_METADATA_OPS=1, H5F_COLL_METADATA_WRITE=1)
    assert f["H5F_F_META_TIME"] > 0 and f["H5F_F_CLOSE_END_TIMESTAMP"] > 0

    d = frames(tmp_path, "H5D")
    c = totals(d, "/h5_parallel.h5:/contig")
    expect(c, H5D_OPENS=2 * N, H5D_WRITES=N, H5D_READS=N, H5D_FLUSHES=0,
           H5D_BYTES_WRITTEN=8192 * N, H5D_BYTES_READ=8192 * N, H5D_RW_SWITCHES=N,
           H5D_REGULAR_HYPERSLAB_SELECTS=2 * N, H5D_IRREGULAR_HYPERSLAB_SELECTS=0,
           H5D_POINT_SELECTS=0, H5D_DATASPACE_NDIMS=1, H5D_DATASPACE_NPOINTS=1024 * N,
           H5D_DATATYPE_SIZE=8, H5D_LAYOUT=2, H5D_CHUNK_SIZE_D1=0, H5D_FILTERS=0,
           H5D_USE_MPIIO_COLLECTIVE=1)
    bins(c, "H5D", "WRITE", {"1K_10K": N})
    bins(c, "H5D", "READ", {"1K_10K": N})
    top4(c, "H5D", [(8192, 2 * N)])

    k = totals(d, "/h5_parallel.h5:/grp/chunked")
    expect(k, H5D_OPENS=2 * N, H5D_WRITES=4 * N, H5D_READS=N,
           H5D_BYTES_WRITTEN=(1024 + 1024 + 16 + 24) * N, H5D_BYTES_READ=8192 * N,
           H5D_RW_SWITCHES=N, H5D_REGULAR_HYPERSLAB_SELECTS=3 * N,
           H5D_IRREGULAR_HYPERSLAB_SELECTS=N, H5D_POINT_SELECTS=N, H5D_DATASPACE_NDIMS=2,
           H5D_DATASPACE_NPOINTS=2 * N * 256, H5D_DATATYPE_SIZE=4, H5D_LAYOUT=3,
           H5D_CHUNK_SIZE_D1=2, H5D_CHUNK_SIZE_D2=256, H5D_CHUNK_SIZE_D3=0, H5D_FILTERS=0,
           H5D_USE_MPIIO_COLLECTIVE=0)
    bins(k, "H5D", "WRITE", {"0_100": 2 * N, "100_1K": 2 * N})
    bins(k, "H5D", "READ", {"1K_10K": N})
    top4(k, "H5D", [(1024, 2 * N), (16, N), (24, N), (8192, N)])
    assert k["H5D_F_WRITE_TIME"] > 0 and k["H5D_F_READ_END_TIMESTAMP"] > 0

    # The HDF5 calls still produce POSIX records underneath.
    px = totals(frames(tmp_path, "POSIX"), "/h5_parallel.h5")
    assert px["POSIX_BYTES_WRITTEN"] > 0 and px["POSIX_BYTES_READ"] > 0


H5PY_SCRIPT = """
import h5py, numpy as np
with h5py.File("py.h5", "w") as f:
    d = f.create_dataset("data", shape=(100, 10), dtype="f8", chunks=(10, 10),
                         compression="gzip")
    d[0:10, :] = np.ones((10, 10))
    d[10:20, :] = np.ones((10, 10))
    d.flush()
    f.create_dataset("grp/plain", data=np.arange(50, dtype="i4"))
    raw = f.create_dataset("raw", shape=(4, 4), dtype="i4", chunks=(2, 4))
    raw.id.write_direct_chunk((0, 0), np.arange(8, dtype="i4").tobytes())
    raw.id.write_direct_chunk((2, 0), np.arange(8, dtype="i4").tobytes())
with h5py.File("py.h5", "r") as f:
    mask, chunk = f["raw"].id.read_direct_chunk((2, 0))
    assert len(chunk) == 32
    x = f["data"][0:5, :]
    y = f["grp/plain"][...]
    z = f["data"][[1, 3, 7], 0]
print("ok")
"""


def test_h5py(tmp_path):
    pytest.importorskip("h5py")
    p = run([sys.executable, "-c", H5PY_SCRIPT], tmp_path)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert p.stdout.decode().strip() == "ok" and b"iochar:" not in p.stderr
    exe = os.path.basename(sys.executable)

    f = totals(frames(tmp_path, "H5F", exe), "/py.h5")
    expect(f, H5F_OPENS=2, H5F_FLUSHES=0, H5F_USE_MPIIO=0, H5F_ALIGNMENT=1,
           H5F_ALIGNMENT_THRESHOLD=1)
    assert f["H5F_F_CLOSE_END_TIMESTAMP"] > 0

    d = frames(tmp_path, "H5D", exe)
    # create_dataset + two f["data"] (h5py opens with H5Oopen, closes by H5Idec_ref)
    a = totals(d, "/py.h5:/data")
    expect(a, H5D_OPENS=3, H5D_WRITES=2, H5D_READS=2, H5D_FLUSHES=1,
           H5D_BYTES_WRITTEN=1600, H5D_BYTES_READ=400 + 24, H5D_RW_SWITCHES=1,
           H5D_DATASPACE_NDIMS=2, H5D_DATASPACE_NPOINTS=1000, H5D_DATATYPE_SIZE=8,
           H5D_LAYOUT=3, H5D_CHUNK_SIZE_D1=10, H5D_CHUNK_SIZE_D2=10, H5D_FILTERS=1)
    # h5py turns the fancy index [[1, 3, 7], 0] into a union of hyperslabs
    expect(a, H5D_REGULAR_HYPERSLAB_SELECTS=3, H5D_IRREGULAR_HYPERSLAB_SELECTS=1,
           H5D_POINT_SELECTS=0)
    bins(a, "H5D", "WRITE", {"100_1K": 2})
    bins(a, "H5D", "READ", {"0_100": 1, "100_1K": 1})
    assert a["H5D_F_CLOSE_END_TIMESTAMP"] > 0

    g = totals(d, "/py.h5:/grp/plain")
    expect(g, H5D_OPENS=2, H5D_WRITES=1, H5D_READS=1, H5D_BYTES_WRITTEN=200,
           H5D_BYTES_READ=200, H5D_REGULAR_HYPERSLAB_SELECTS=2, H5D_DATASPACE_NDIMS=1,
           H5D_DATASPACE_NPOINTS=50, H5D_DATATYPE_SIZE=4, H5D_LAYOUT=2, H5D_CHUNK_SIZE_D1=0,
           H5D_FILTERS=0)
    top4(g, "H5D", [(200, 2)])

    # direct chunk I/O: two 32 B chunks written, one read back, as stored
    c = totals(d, "/py.h5:/raw")
    expect(c, H5D_OPENS=2, H5D_WRITES=2, H5D_READS=1, H5D_BYTES_WRITTEN=64, H5D_BYTES_READ=32,
           H5D_REGULAR_HYPERSLAB_SELECTS=0, H5D_CHUNK_SIZE_D1=2, H5D_CHUNK_SIZE_D2=4)
    bins(c, "H5D", "WRITE", {"0_100": 2})


@pytest.mark.skipif(not os.path.exists(workload("h5_v16")),
                    reason="needs libhdf5-serial (tests/h5_v16)")
def test_h5_16_api_names(tmp_path):
    """H5Dcreate1/H5Dopen1/H5Dextend (IOR's HDF5 backend) count as their *2 forms."""
    p = run([workload("h5_v16"), str(tmp_path / "v16.h5")], tmp_path)
    assert p.returncode == 0 and p.stdout.decode().strip() == "done", p.stderr
    assert totals(frames(tmp_path, "H5F"), "/v16.h5")["H5F_OPENS"] == 1
    d = frames(tmp_path, "H5D")
    expect(totals(d, "/v16.h5:/a"), H5D_OPENS=2, H5D_WRITES=1, H5D_READS=1,
           H5D_BYTES_WRITTEN=8192, H5D_BYTES_READ=8192)
    # written after H5Dextend to 512 ints: the new extent counts
    expect(totals(d, "/v16.h5:/b"), H5D_OPENS=2, H5D_WRITES=1, H5D_READS=1,
           H5D_BYTES_WRITTEN=2048, H5D_BYTES_READ=2048, H5D_LAYOUT=3)
