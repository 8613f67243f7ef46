"""NetCDF under the tool: the system netCDF-C (tests/integration/nc_serial.c, classic and
netCDF-4 files with record variables) and the netCDF4 wheel's private
libnetcdf + libhdf5 (loaded RTLD_LOCAL) beside h5py's own libhdf5."""

import os
import sys

import pytest

from iolib import bins, expect, frames, top4, totals
from tool import run, workload


@pytest.mark.skipif(not os.path.exists(workload("nc_serial")),
                    reason="needs libnetcdf-dev (tests/nc_serial)")
def test_nc_serial(tmp_path):
    p = run([workload("nc_serial"), "classic.nc", "nc4.nc"], tmp_path)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert p.stdout.decode().strip() == "done" and b"iochar:" not in p.stderr

    files = frames(tmp_path, "NC_FILE")
    expect(totals(files, "/classic.nc"), NC_FILE_CREATES=1, NC_FILE_OPENS=1,
           NC_FILE_REDEFS=1, NC_FILE_SYNCS=1, NC_FILE_FORMAT=1)
    expect(totals(files, "/nc4.nc"), NC_FILE_CREATES=1, NC_FILE_OPENS=1,
           NC_FILE_REDEFS=0, NC_FILE_SYNCS=0, NC_FILE_FORMAT=4)

    v = frames(tmp_path, "NC_VAR")
    t = totals(v, "/classic.nc:temp")
    expect(t, NC_VAR_PUTS=4, NC_VAR_GETS=2, NC_VAR_BYTES_WRITTEN=3 * 800 + 8,
           NC_VAR_BYTES_READ=3200 + 800, NC_VAR_STRIDED_ACCESSES=1, NC_VAR_NDIMS=2,
           NC_VAR_IS_RECORD_VAR=1, NC_VAR_DATATYPE_SIZE=8, NC_VAR_CHUNK_SIZE_D1=0,
           NC_VAR_DEFLATE_LEVEL=0)
    bins(t, "NC_VAR", "WRITE", {"0_100": 1, "100_1K": 3})
    bins(t, "NC_VAR", "READ", {"100_1K": 1, "1K_10K": 1})
    top4(t, "NC_VAR", [(800, 4), (8, 1), (3200, 1)])
    assert t["NC_VAR_F_WRITE_TIME"] > 0 and t["NC_VAR_F_READ_END_TIMESTAMP"] > 0

    g = totals(v, "/classic.nc:grid")
    expect(g, NC_VAR_PUTS=1, NC_VAR_GETS=2, NC_VAR_BYTES_WRITTEN=400, NC_VAR_BYTES_READ=84,
           NC_VAR_NDIMS=1, NC_VAR_IS_RECORD_VAR=0, NC_VAR_DATATYPE_SIZE=4)
    top4(g, "NC_VAR", [(4, 1), (80, 1), (400, 1)])

    # varm (transposed in memory) and vars written; varm (NULL stride) and var1 read
    m = totals(v, "/classic.nc:m")
    expect(m, NC_VAR_PUTS=2, NC_VAR_GETS=2, NC_VAR_BYTES_WRITTEN=80 + 24,
           NC_VAR_BYTES_READ=40 + 4, NC_VAR_STRIDED_ACCESSES=1, NC_VAR_NDIMS=2,
           NC_VAR_IS_RECORD_VAR=0, NC_VAR_DATATYPE_SIZE=4)
    top4(m, "NC_VAR", [(4, 1), (24, 1), (40, 1), (80, 1)])

    pr = totals(v, "/nc4.nc:pr")
    expect(pr, NC_VAR_PUTS=2, NC_VAR_GETS=1, NC_VAR_BYTES_WRITTEN=1600, NC_VAR_BYTES_READ=1600,
           NC_VAR_NDIMS=3, NC_VAR_IS_RECORD_VAR=1, NC_VAR_DATATYPE_SIZE=4,
           NC_VAR_CHUNK_SIZE_D1=1, NC_VAR_CHUNK_SIZE_D2=10, NC_VAR_CHUNK_SIZE_D3=20,
           NC_VAR_DEFLATE_LEVEL=4, NC_VAR_STRIDED_ACCESSES=0)
    h = totals(v, "/nc4.nc:/g/h")  # a variable in group g
    expect(h, NC_VAR_PUTS=1, NC_VAR_GETS=0, NC_VAR_BYTES_WRITTEN=40, NC_VAR_NDIMS=1,
           NC_VAR_IS_RECORD_VAR=0, NC_VAR_DATATYPE_SIZE=4)

    # netCDF-4 is HDF5 underneath: its H5F/H5D records are there too.
    d = totals(frames(tmp_path, "H5D"), "/nc4.nc:/pr")
    expect(d, H5D_BYTES_WRITTEN=1600, H5D_BYTES_READ=1600, H5D_LAYOUT=3,
           H5D_CHUNK_SIZE_D1=1, H5D_CHUNK_SIZE_D2=10, H5D_CHUNK_SIZE_D3=20)
    assert d["H5D_FILTERS"] & 1  # deflate (shuffle adds "other")
    assert totals(frames(tmp_path, "H5F"), "/nc4.nc")["H5F_OPENS"] == 2


NETCDF4_SCRIPT = """
import h5py, netCDF4, numpy as np
with netCDF4.Dataset("py.nc", "w", format="NETCDF4") as ds:
    ds.createDimension("time", None)
    ds.createDimension("x", 50)
    v = ds.createVariable("v", "f8", ("time", "x"), zlib=True, complevel=3,
                          chunksizes=(1, 50))
    v[0:2, :] = np.ones((2, 50))
    w = ds.createVariable("w", "i4", ("x",))
    w[:] = np.arange(50, dtype="i4")
with netCDF4.Dataset("py.nc") as ds:
    a = ds["v"][0, :]
    b = ds["w"][::2]
with netCDF4.Dataset("cl.nc", "w", format="NETCDF3_CLASSIC") as ds:
    ds.createDimension("x", 10)
    c = ds.createVariable("c", "f4", ("x",))
    c[:] = np.zeros(10, "f4")
# h5py's own libhdf5 in the same process: a second copy of HDF5
with h5py.File("h5.h5", "w") as f:
    f.create_dataset("d", data=np.arange(10, dtype="f8"))
print("ok")
"""


def test_netcdf4_python(tmp_path):
    pytest.importorskip("netCDF4")
    pytest.importorskip("h5py")
    p = run([sys.executable, "-c", NETCDF4_SCRIPT], tmp_path)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert p.stdout.decode().strip() == "ok" and b"iochar:" not in p.stderr
    exe = os.path.basename(sys.executable)

    files = frames(tmp_path, "NC_FILE", exe)
    expect(totals(files, "/py.nc"), NC_FILE_CREATES=1, NC_FILE_OPENS=1, NC_FILE_FORMAT=4)
    expect(totals(files, "/cl.nc"), NC_FILE_CREATES=1, NC_FILE_OPENS=0, NC_FILE_FORMAT=1)

    v = frames(tmp_path, "NC_VAR", exe)
    a = totals(v, "/py.nc:v")
    expect(a, NC_VAR_PUTS=1, NC_VAR_GETS=1, NC_VAR_BYTES_WRITTEN=800, NC_VAR_BYTES_READ=400,
           NC_VAR_NDIMS=2, NC_VAR_IS_RECORD_VAR=1, NC_VAR_DATATYPE_SIZE=8,
           NC_VAR_CHUNK_SIZE_D1=1, NC_VAR_CHUNK_SIZE_D2=50, NC_VAR_DEFLATE_LEVEL=3,
           NC_VAR_STRIDED_ACCESSES=0)
    w = totals(v, "/py.nc:w")
    expect(w, NC_VAR_PUTS=1, NC_VAR_GETS=1, NC_VAR_BYTES_WRITTEN=200, NC_VAR_BYTES_READ=100,
           NC_VAR_STRIDED_ACCESSES=1, NC_VAR_NDIMS=1, NC_VAR_IS_RECORD_VAR=0,
           NC_VAR_DATATYPE_SIZE=4, NC_VAR_DEFLATE_LEVEL=0)
    bins(w, "NC_VAR", "READ", {"0_100": 1})
    c = totals(v, "/cl.nc:c")
    expect(c, NC_VAR_PUTS=1, NC_VAR_GETS=0, NC_VAR_BYTES_WRITTEN=40, NC_VAR_DATATYPE_SIZE=4)

    # Two HDF5 copies in one process: netCDF4's (under libnetcdf) and h5py's.
    d = frames(tmp_path, "H5D", exe)
    expect(totals(d, "/py.nc:/v"), H5D_WRITES=1, H5D_READS=1, H5D_BYTES_WRITTEN=800,
           H5D_BYTES_READ=400, H5D_LAYOUT=3, H5D_CHUNK_SIZE_D2=50)
    expect(totals(d, "/h5.h5:/d"), H5D_OPENS=1, H5D_WRITES=1, H5D_BYTES_WRITTEN=80,
           H5D_DATASPACE_NPOINTS=10, H5D_DATATYPE_SIZE=8, H5D_LAYOUT=2)
