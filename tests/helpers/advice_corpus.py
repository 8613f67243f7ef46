"""The advice corpus: small workloads with one planted I/O problem each, and good
ones, with the findings the report must give for each.

Each entry: how to run it (an MPI C program of tests/ with 4 ranks, or a Python
script using h5py/netCDF4), whether a problem is planted, and the expected findings
as (id, rank, severities). Every WARN-or-worse finding must be expected (precision),
every expected one found (recall), and the root cause must come first (rank 1).
Severity follows measured cost: the share of the run's time across processes (MPI
start-up and the interpreter's imports included), so each workload is sized for its
problem to cost a real share of its run; WARN or HIGH where start-up takes much of it.
"""

H5_TINY_CHUNKS = """
import h5py, numpy as np
# 800-byte chunks (1 x 100 doubles), written 10 rows per call: each chunk is its own
# small access at an unaligned offset
with h5py.File("tiny.h5", "w") as f:
    d = f.create_dataset("field", shape=(12000, 100), dtype="f8", chunks=(1, 100))
    for i in range(0, 12000, 10):
        d[i:i + 10, :] = np.ones((10, 100))
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

NC_RECORDS = """
import netCDF4, numpy as np
# classic format: 6 record variables, 4000 records of 16 KB each, one record per call
# (records large enough that their writes, not the interpreter, take the time)
with netCDF4.Dataset("records.nc", "w", format="NETCDF3_CLASSIC") as ds:
    ds.createDimension("time", None)
    ds.createDimension("x", 4000)
    vs = [ds.createVariable(n, "f4", ("time", "x")) for n in ("u", "v", "w", "t", "p", "q")]
    row = np.ones(4000, "f4")
    for t in range(4000):
        for v in vs:
            v[t, :] = row
"""

NC_GOOD = """
import netCDF4, numpy as np
# netCDF-4: two fixed-size variables written in 4 slabs of 2 MiB each
with netCDF4.Dataset("good.nc", "w", format="NETCDF4") as ds:
    ds.createDimension("y", 2048)
    ds.createDimension("x", 512)
    for n in ("a", "b"):
        v = ds.createVariable(n, "f4", ("y", "x"), chunksizes=(512, 512))
        for i in range(4):
            v[512 * i:512 * (i + 1), :] = np.ones((512, 512), "f4")
"""

HIGH = ("warn", "high")  # by the share of the run the problem takes

# name: (runner, argument, planted, [(id, rank, severities)])
CORPUS = {
    # ---- planted problems
    "posix-strided-shared": ("mpi", "strided", True, [("strided-shared", 1, HIGH)]),
    "mpiio-independent-strided": ("mpi", "indep", True, [("strided-shared", 1, HIGH)]),
    "mpiio-cb-disabled": ("mpi", "nocb", True, [("hints", 1, HIGH)]),
    "mpiio-data-sieving": ("mpi", "sieve", True, [("data-sieving", 1, HIGH)]),
    "posix-misaligned-midsize": ("mpi", "misaligned", True, [("misaligned", 1, HIGH)]),
    "posix-metadata-storm": ("mpi", "meta", True, [("metadata-heavy", 1, HIGH)]),
    "posix-random-reads": ("mpi", "random", True, [("random-access", 1, HIGH)]),
    "posix-rank-imbalance": ("mpi", "imbalance", True, [("rank-imbalance", 1, HIGH)]),
    "posix-redundant-reads": ("mpi", "reread", True, [("redundant-reads", 1, HIGH)]),
    "posix-fsync-per-write": ("mpi", "fsync", True, [("fsync-storm", 1, HIGH)]),
    # its STDIO time is ~10% of the run (formatting is cheap per call), at the WARN line:
    # INFO or WARN are both the cost-following answer, but it must be found and come first
    "stdio-formatted": ("mpi", "stdio", True, [("stdio-heavy", 1, ("info",) + HIGH)]),
    "hdf5-independent-strided": ("h5", "indep", True, [("strided-shared", 1, HIGH)]),
    "hdf5-tiny-chunks": ("py", H5_TINY_CHUNKS, True, [("hdf5-chunking", 1, HIGH)]),
    "netcdf-record-variables": ("py", NC_RECORDS, True, [("netcdf-record-vars", 1, HIGH)]),
    "mpiio-two-phase-holes": ("mpi", "twophase", True, [("data-sieving", 1, HIGH)]),
    "mpiio-sieving-cb-disabled": ("mpi", "sievecoll", True, [("data-sieving", 1, HIGH)]),
    "posix-small-appends": ("mpi", "appends", True, [("small-io", 1, HIGH)]),
    "hdf5-independent-metadata": ("h5", "meta", True, [("no-collective", 1, HIGH)]),
    # ---- good workloads: no WARN-or-worse finding
    "mpiio-collective-aligned": ("mpi", "good", False, []),
    # huge aligned reads with 500-2,000 tiny misaligned ones a rank: the pieces cost ~1 us
    # each, ~1% of the run; INFO however the load on the machine skews the ranks' times
    # (cost.estimate charges what the fit's margins support: docs/advice-corpus.md)
    "posix-huge-and-tiny-reads": ("mpi", "mixed", False, []),
    "posix-file-per-process": ("mpi", "fpp", False, []),
    "hdf5-collective": ("h5", "coll", False, []),
    "h5py-slabs": ("py", H5_GOOD, False, []),
    "netcdf4-slabs": ("py", NC_GOOD, False, []),
}

# The mechanism the first finding must name (text in its message), the call its remedy
# must name, and a call it must not: (message text, remedy call, wrong call)
MECHANISM = {
    "mpiio-data-sieving": ("ROMIO data sieving", "MPI_File_write_all", None),
    "mpiio-sieving-cb-disabled": ("ROMIO data sieving", "romio_cb_write=enable", None),
    "mpiio-two-phase-holes": ("ROMIO two-phase", "MPI_File_write_all", "romio_ds_write"),
    "posix-small-appends": ("most common size 256 B", "buffer in memory", "pad headers"),
    "hdf5-independent-metadata": ("HDF5's independent metadata reads",
                                  "H5Pset_all_coll_metadata_ops", "H5Pset_alignment"),
}

# A short data pipeline (about 1 s): CSV in, Parquet out, read back by pandas and pyarrow
# (each reader opens and stats the file again), a small result written. Nothing in it is
# worth the user's time: no WARN or HIGH on a quiet machine or beside a CPU-bound load.
PIPELINE = """
import numpy as np, pandas as pd, pyarrow.parquet as pq
rng = np.random.default_rng(7)
df = pd.DataFrame({"id": np.arange(20000), "x": rng.random(20000),
                   "g": rng.integers(0, 50, 20000)})
df.to_csv("raw.csv", index=False)
pd.read_csv("raw.csv").to_parquet("clean.parquet", row_group_size=5000)
for _ in range(3):
    t = pq.read_table("clean.parquet", columns=["g", "x"])
f = pq.ParquetFile("clean.parquet")
parts = [f.read_row_group(i) for i in range(f.num_row_groups)]
agg = pd.read_parquet("clean.parquet").groupby("g")["x"].mean().reset_index()
agg.to_parquet("result.parquet")
pd.read_parquet("result.parquet")
"""
