"""Every wrapped MPI-IO data form and request completion (tests/integration/mpi_forms.c),
under MPICH (with the MPI-4 large-count _c forms) and Open MPI, from one library
(-Dmpi=both): each form moves its own byte count, so a wrapper that records the
wrong kind, direction or count changes an exact total below."""

import os
import shutil

import pytest

import iochar
from tool import BUILD_OPENMPI, LIB, logs_in, mpiexec, one, run, workload

N = 4
# Form k moves k bytes: (kind, direction) -> the k of its forms (mpi_forms.c).
FORMS = {
    ("INDEP", "READ"): [1, 3, 5], ("INDEP", "WRITE"): [2, 4, 6],
    ("COLL", "READ"): [7, 9, 11], ("COLL", "WRITE"): [8, 10, 12],
    ("NB", "READ"): [13, 15, 17, 19, 21, 29, 29], ("NB", "WRITE"): [14, 16, 18, 20, 22, 30, 30],
    ("SPLIT", "READ"): [23, 25, 27], ("SPLIT", "WRITE"): [24, 26, 28],
}
# The large-count forms (MPI-4 headers: MPICH 4) repeat them 100 bytes on, but
# for the two extra nonblocking rounds.
LARGE = {k: [b + 100 for b in v if b < 29] for k, v in FORMS.items()}
FLAVORS = [("mpich", workload("mpi_forms"), True),
           ("openmpi", workload("mpi_forms", BUILD_OPENMPI), False)]


@pytest.mark.parametrize("flavor,exe,large", FLAVORS, ids=[f[0] for f in FLAVORS])
def test_every_form_counted_once_with_its_bytes(tmp_path, flavor, exe, large):
    if not (LIB.exists() and os.path.exists(exe) and shutil.which(f"mpiexec.{flavor}")):
        pytest.skip(f"needs {exe} and mpiexec.{flavor}")
    p = run(mpiexec(N, flavor) + [exe, str(tmp_path)], tmp_path, lib=LIB)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    (path,) = logs_in(tmp_path)
    mp = iochar.open(str(path)).records("MPIIO")
    assert len(mp) == N
    forms = {k: v + (LARGE[k] if large else []) for k, v in FORMS.items()}
    for r in range(N):
        f = one(mp, f"/forms.{r}.dat")
        assert f["rank"] == r
        for (kind, d), sizes in forms.items():
            assert f[f"MPIIO_{kind}_{d}S"] == len(sizes), (kind, d)
        for d, moved in (("READ", "BYTES_READ"), ("WRITE", "BYTES_WRITTEN")):
            sizes = [b for (_, dd), v in forms.items() if dd == d for b in v]
            assert f[f"MPIIO_{moved}"] == sum(sizes)
            assert f[f"MPIIO_SIZE_{d}_0_100"] == sum(b <= 100 for b in sizes)
            assert f[f"MPIIO_SIZE_{d}_100_1K"] == sum(b > 100 for b in sizes)
        assert (f["MPIIO_INDEP_OPENS"], f["MPIIO_SYNCS"], f["MPIIO_COLL_OPENS"]) == (1, 1, 0)
        # a nonblocking or split operation is timed to its completion or end
        assert f["MPIIO_F_WRITE_END_TIMESTAMP"] <= f["MPIIO_F_CLOSE_START_TIMESTAMP"]
