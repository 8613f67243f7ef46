"""metadata-heavy: open/stat/close time dominates, or many opens/stats per byte, on
regular files the application opens itself (a library's opens of its files, e.g. one
collective MPI_File_open by every rank, and pipes or terminals are not judged here).

A data pipeline's shape (many small files, each read whole once per pass: a data
loader's epoch) gets its own remedy: each file is already opened once per pass, so
"keep it open" does not apply; packing the files into a few large shards, or staging
them on node-local storage, removes the per-file opens."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, num, pct

ID = "metadata-heavy"

# Data files a Python library opens and stats itself, by their suffix: the calls are the
# library's habit (a reader that stats, opens, reads the footer, opens again...), and
# the fix is at the library's level.
LIBRARY_SUFFIX = {".parquet": "pyarrow", ".pq": "pyarrow", ".arrow": "pyarrow",
                  ".feather": "pyarrow", ".ipc": "pyarrow", ".csv": "pandas", ".tsv": "pandas",
                  ".json": "pandas", ".pkl": "pandas", ".pickle": "pandas", ".h5": "h5py",
                  ".hdf5": "h5py", ".nc": "netCDF4", ".npy": "numpy", ".npz": "numpy"}
LIBRARY_FIX = {
    "pyarrow": ("pyarrow: open each file once and hand the open file to the reader "
                "(pq.ParquetFile(f) and its read_row_group/read calls on it) instead of "
                "passing the path to each call; a pyarrow.dataset scanned once reads the "
                "footers once", "with open(path, \"rb\") as f:\n    t = pq.ParquetFile(f).read()"),
    "pandas": ("pandas: open each file once and pass the file object to pd.read_*/to_* "
               "(it opens and stats a path on every call); keep the frame instead of "
               "reading the file again", "with open(path, \"rb\") as f:\n"
               "    df = pd.read_parquet(f)"),
    "h5py": ("h5py: keep one h5py.File open across the accesses instead of a `with "
             "h5py.File(path)` per access", "f = h5py.File(path, \"r\")  # once, reused"),
    "netCDF4": ("netCDF4: keep one netCDF4.Dataset open across the accesses",
                "ds = netCDF4.Dataset(path)  # once, reused"),
    "numpy": ("numpy: load each array once (np.load(path, mmap_mode=\"r\") keeps it mapped)",
              "a = np.load(path, mmap_mode=\"r\")  # once"),
}


def library_of(ctx: Context, paths) -> str | None:
    """The Python library whose habit these files' metadata calls are: the program is a
    Python interpreter and most of the files carry that library's suffix."""
    exe = str(ctx.job.get("exe") or "").rsplit("/", 1)[-1]
    if not exe.startswith("python") or not paths:
        return None
    libs = [LIBRARY_SUFFIX.get("." + str(p).rsplit(".", 1)[-1].lower()) if "." in str(p)
            else None for p in paths]
    named = [x for x in libs if x]
    if len(named) * 2 < len(libs):
        return None
    return max(set(named), key=named.count)


def small_whole_files(df, module: str, opens: np.ndarray, cfg: dict):
    """(files read whole at every open and no larger than cfg["shard_file_size"], their
    median size, median opens per such file) when they are at least cfg["shard_min_files"]
    and most of the files read; else None."""
    mb = f"{module}_MAX_BYTE_READ"
    if mb not in df.columns or not len(df):
        return None
    size = S.col(df, mb).astype(np.float64) + 1
    got = S.concept(df, module, "bytes_read").astype(np.float64)
    read = got > 0
    # every open read the file through (a final short read may add nothing)
    whole = read & (opens > 0) & (got >= opens * size) & (size <= cfg["shard_file_size"])
    n = int(whole.sum())
    if n < cfg["shard_min_files"] or n < 0.5 * int(read.sum()):
        return None
    return n, float(np.median(size[whole])), float(np.median(opens[whole]))


def _small_files_remedy(n: int, size: float, passes: float, nprocs: int) -> str:
    per = "once" if passes <= 1 else f"{passes:g} times"
    return (f"{num(n)} small files (median {S.human_bytes(size)}) are each read whole {per}: "
            "pack them into a few large shards (one HDF5 or Parquet file, tar-based shards "
            "as WebDataset reads them, or a record format such as TFRecord) so that a pass "
            "opens a few large files, read sequentially, instead of one per sample; or stage "
            "them once per job on node-local storage (a node-local SSD, /tmp or /dev/shm) "
            "and read them there" + (f" (each of the {nprocs} processes its share)"
                                     if nprocs > 1 else ""))


def _files_opened_once_remedy(files: int, opens: float, bytes_read: float,
                              bytes_written: float) -> str:
    """Each of the `files` files opened is opened about once: nothing to keep open, the
    cost is per file. The remedy in the files' direction: fewer, larger files."""
    head = (f"each of the {num(files)} files opened is opened about once ({num(opens)} opens): the "
            "cost is one open and close per file, not per access")
    if bytes_written >= bytes_read:
        return (head + ": write fewer, larger files (gather the small outputs into a few "
                "large ones: one HDF5 or Parquet file, a tar archive, or one file per process "
                "with an index), or make them on node-local storage (/tmp, /dev/shm) during "
                "the job and copy them out once at its end")
    return (head + ": pack the files into a few large shards (one HDF5 or Parquet file, "
            "tar-based shards) so that a pass opens a few large files, or stage them once "
            "per job on node-local storage (/tmp, /dev/shm)")


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for module in ("POSIX", "STDIO"):
        df = ctx.frame(module)
        if df is None:
            continue
        df = ctx.own_frame(module)
        if not len(df):
            continue
        meta, rd, wr = (float(S.concept(df, module, k).sum())
                        for k in ("time_meta", "time_read", "time_write"))
        io = meta + rd + wr
        open_row = S.concept(df, module, "opens")
        opens, stats = float(open_row.sum()), float(S.concept(df, module, "stats").sum())
        # every rank opens a file it uses once: only the opens beyond that repeat work
        once = np.minimum(open_row, np.where(S.column(df, "rank") == -1, ctx.nprocs, 1))
        again = float((open_row - once).sum())
        # STDIO (iochar's and Darshan's) counts no stat calls: say nothing about them
        # rather than "0 stats"
        has_stats = S.has_concept(ctx.frame(module), module, "stats")
        ops = "open/stat/close" if has_stats else "open/close"
        mops = again + stats
        nbytes = float((S.concept(df, module, "bytes_read") +
                        S.concept(df, module, "bytes_written")).sum())
        found = []
        # fsync is timed as metadata: when syncs outnumber opens and stats, the meta
        # time is theirs (fsync-storm judges that)
        syncs = float(S.concept(df, module, "syncs").sum())
        if io and meta / io >= cfg["time_share"] and meta >= cfg["min_time"] and \
                opens + stats >= syncs and mops:
            found.append(f"{ops} take {pct(meta / io)} of the {module} I/O time on these "
                         "files")
        if mops >= cfg["min_meta_ops"] and nbytes / mops < cfg["bytes_per_meta_op"]:
            found.append(" and ".join(x for x in (
                f"{num(again)} repeated opens" if again else "",
                f"{num(stats)} stats" if has_stats and stats else "") if x) +
                         f" for {S.human_bytes(nbytes)} of data "
                         f"({S.human_bytes(nbytes / mops)} per open"
                         + ("/stat)" if has_stats else ")"))
        if not found:
            continue
        files = len(df)
        call = "fopen()/fclose()" if module == "STDIO" else "open()/close()"
        shards = small_whole_files(df, module, open_row, cfg)
        if shards:  # a data pipeline: each file already opened once per pass
            recs = [_small_files_remedy(*shards, ctx.nprocs)]
        elif again <= 0.1 * opens:  # "keep it open" cannot apply: it is opened once
            recs = [_files_opened_once_remedy(
                int((open_row > 0).sum()), opens,
                float(S.concept(df, module, "bytes_read").sum()),
                float(S.concept(df, module, "bytes_written").sum()))]
        else:
            recs = [f"open each file once and keep it open instead of {call} around every "
                    f"access ({num(opens)} opens of {num(files)} files)"]
        if stats:
            recs.append(f"drop the repeated stat()/access()/fstat() calls ({num(stats)}): ask "
                        "once and keep the answer")
        if ctx.nprocs > 1 and not shards and ctx.mpi:
            recs.append("let one rank stat()/open() and MPI_Bcast the result, or use one "
                        "shared file through MPI-IO/HDF5/NetCDF instead of many small files")
        elif ctx.nprocs > 1 and not shards:
            recs.append("let one process stat()/open() and share the result with the others, "
                        "or keep the data in a few shared files instead of many small ones")
        if "H5F" in ctx.records and ctx.nprocs > 1 and \
                ctx.total("H5F", "H5F_COLL_METADATA_OPS") == 0:
            recs.append("HDF5: H5Pset_all_coll_metadata_ops(fapl, 1) and "
                        "H5Pset_coll_metadata_write(fapl, 1)")
        example = ("FILE *f = fopen(path, \"r\");  /* once, before the loop */"
                   if module == "STDIO" else
                   "int fd = open(path, O_RDONLY);  /* once; then pread(fd, buf, n, off) */")
        if not shards and again <= 0.1 * opens:
            example = ""  # opening once is what it does already
        if shards:
            example = ("with h5py.File(\"train.h5\", \"w\") as f: "
                       "f.create_dataset(\"x\", data=samples)  # once; then read f[\"x\"][i]")
        paths = set(S.objects(df).tolist()) if "path" in df.columns else set()
        lib = None if shards else library_of(ctx, paths)
        ceiling = "high"
        if lib:
            # the library's habit: named as its own, with its fix; WARN or worse only
            # when material (library_seconds a rank), not because a short run was slow
            found[0] = f"{lib} (the library's own calls): " + found[0]
            recs = [LIBRARY_FIX[lib][0]] + recs[1:]
            example = LIBRARY_FIX[lib][1]
            if meta / ctx.ranks_of(paths) < cfg["library_seconds"]:
                ceiling = "info"
        out.append(Advice(
            ID, ceiling, f"{module}: " + "; ".join(found), "; ".join(recs),
            {f"{module}_F_META_TIME": meta, f"{module}_F_READ_TIME": rd,
             f"{module}_F_WRITE_TIME": wr, f"{module}_OPENS": opens,
             "repeated_opens": again,
             **({f"{module}_STATS": stats} if has_stats else {}), "bytes": nbytes,
             "files": files, "nprocs": ctx.nprocs,
             **({"small_files_read_whole": shards[0], "median_file_size": shards[1],
                 "reads_per_file": shards[2]} if shards else {})},
            module, seconds=meta, paths=paths, example=example))
    return out
