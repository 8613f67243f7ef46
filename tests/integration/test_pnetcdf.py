"""PnetCDF under the tool (tests/integration/pnc_basic.c; Debian's PnetCDF is built with
Open MPI, so this runs from the Open MPI build): exact PNETCDF_FILE/VAR counters."""

import os
import shutil

import pytest

from iolib import bins, expect, frames, top4, totals
from tool import BUILD_OPENMPI, mpiexec, run, workload

N = 4
WORKLOAD = workload("pnc_basic", build=BUILD_OPENMPI)


@pytest.mark.skipif(shutil.which("mpiexec.openmpi") is None or not os.path.exists(WORKLOAD),
                    reason="needs Open MPI and libpnetcdf-dev (build-openmpi/tests/pnc_basic)")
def test_pnc_basic(tmp_path):
    p = run(mpiexec(N, "openmpi") + [WORKLOAD, "pnc.nc"], tmp_path)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert p.stdout.decode().strip() == "done"

    f = totals(frames(tmp_path, "PNETCDF_FILE"), "/pnc.nc")
    expect(f, PNETCDF_FILE_CREATES=N, PNETCDF_FILE_OPENS=2 * N, PNETCDF_FILE_REDEFS=N,
           PNETCDF_FILE_SYNCS=N, PNETCDF_FILE_INDEP_WAITS=N, PNETCDF_FILE_COLL_WAITS=2 * N,
           PNETCDF_FILE_FORMAT=5)
    assert f["PNETCDF_FILE_F_WAIT_TIME"] > 0 and f["PNETCDF_FILE_F_META_TIME"] > 0

    v = frames(tmp_path, "PNETCDF_VAR")
    r = totals(v, "/pnc.nc:rec")
    # varn: one call, three boxes of 10 + 20 + 5 ints = 140 B, written and read
    expect(r, PNETCDF_VAR_PUTS=4 * N, PNETCDF_VAR_GETS=2 * N, PNETCDF_VAR_NB_PUTS=2 * N,
           PNETCDF_VAR_INDEP_PUTS=N, PNETCDF_VAR_COLL_PUTS=N, PNETCDF_VAR_COLL_GETS=2 * N,
           PNETCDF_VAR_INDEP_GETS=0, PNETCDF_VAR_NB_GETS=0,
           PNETCDF_VAR_BYTES_WRITTEN=944 * N, PNETCDF_VAR_BYTES_READ=540 * N,
           PNETCDF_VAR_STRIDED_ACCESSES=N, PNETCDF_VAR_NDIMS=2, PNETCDF_VAR_IS_RECORD_VAR=1,
           PNETCDF_VAR_DATATYPE_SIZE=4)
    bins(r, "PNETCDF_VAR", "WRITE", {"0_100": N, "100_1K": 3 * N})
    bins(r, "PNETCDF_VAR", "READ", {"100_1K": 2 * N})
    top4(r, "PNETCDF_VAR", [(400, 3 * N), (140, 2 * N), (4, N)])

    x = totals(v, "/pnc.nc:fix")
    # flexible iput_varn of two single doubles: one nonblocking put of 16 B;
    # put_vard_all and get_vard_all of a 10-double subarray file type: 80 B each
    expect(x, PNETCDF_VAR_PUTS=3 * N, PNETCDF_VAR_COLL_PUTS=2 * N, PNETCDF_VAR_NB_PUTS=N,
           PNETCDF_VAR_GETS=3 * N,
           PNETCDF_VAR_NB_GETS=N, PNETCDF_VAR_COLL_GETS=2 * N, PNETCDF_VAR_BYTES_WRITTEN=896 * N,
           PNETCDF_VAR_BYTES_READ=960 * N, PNETCDF_VAR_STRIDED_ACCESSES=0,
           PNETCDF_VAR_NDIMS=1, PNETCDF_VAR_IS_RECORD_VAR=0, PNETCDF_VAR_DATATYPE_SIZE=8)
    top4(x, "PNETCDF_VAR", [(80, 3 * N), (800, 2 * N), (16, N)])

    a = totals(v, "/pnc.nc:aux")
    # put_varm_int_all 32 B, bput_vara_int 16 B; get_var_int_all of all N rows (32 B each),
    # independent get_var1_int 4 B and flexible get_varm 32 B, flexible iget_vars 16 B
    expect(a, PNETCDF_VAR_PUTS=2 * N, PNETCDF_VAR_COLL_PUTS=N, PNETCDF_VAR_NB_PUTS=N,
           PNETCDF_VAR_INDEP_PUTS=0, PNETCDF_VAR_GETS=4 * N, PNETCDF_VAR_COLL_GETS=N,
           PNETCDF_VAR_INDEP_GETS=2 * N, PNETCDF_VAR_NB_GETS=N,
           PNETCDF_VAR_BYTES_WRITTEN=48 * N, PNETCDF_VAR_BYTES_READ=(32 * N + 52) * N,
           PNETCDF_VAR_STRIDED_ACCESSES=N, PNETCDF_VAR_NDIMS=2, PNETCDF_VAR_IS_RECORD_VAR=0,
           PNETCDF_VAR_DATATYPE_SIZE=4)
