"""no-collective: MPI-IO independent-only access to shared files with many operations."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import schema as R
from .. import summary as S
from . import layers as L
from .base import Advice, Context, least, num, pct
from .remedy import (
    HDF5_META,
    HDF5_META_EXAMPLE,
    HDF5_META_READ,
    HDF5_META_READ_EXAMPLE,
    collective,
    hdf5_metadata_reads,
)
from .small_io import small_counts

ID = "no-collective"
INDEP = "MPIIO_INDEP_READS+MPIIO_INDEP_WRITES+MPIIO_NB_READS+MPIIO_NB_WRITES"
COLL = "MPIIO_COLL_READS+MPIIO_COLL_WRITES+MPIIO_SPLIT_READS+MPIIO_SPLIT_WRITES"


def contiguous_share(ctx: Context, paths: set) -> float | None:
    """Sequential share of the POSIX accesses under these files (None: unknown)."""
    df = ctx.frame("POSIX")
    if df is None or "POSIX_SEQ_WRITES" not in df.columns:
        return None
    sel = df["path"].isin(paths).to_numpy()
    ops = (S.concept(df, "POSIX", "reads") + S.concept(df, "POSIX", "writes"))[sel].sum()
    seq = (S.col(df, "POSIX_SEQ_READS") + S.col(df, "POSIX_SEQ_WRITES"))[sel]
    first = np.minimum((S.concept(df, "POSIX", "reads") + S.concept(df, "POSIX", "writes"))[sel],
                       np.where(df["rank"].to_numpy()[sel] == -1, 2 * ctx.nprocs, 2))
    return float((seq.sum() + first.sum()) / ops) if ops else None


def check(ctx: Context, cfg: dict) -> list[Advice]:
    df = ctx.frame("MPIIO")
    if df is None or ctx.nprocs < 2:
        return []
    indep, coll = S.expr(df, INDEP), S.expr(df, COLL)
    f = ctx.files("MPIIO")
    # each file's operations (per_file's rows: one per record_id of df; whole counts,
    # so a float64 sum is exact in any order)
    at = pd.Index(S.column(f, "record_id")).get_indexer(S.column(df, "record_id"))
    f_indep = np.bincount(at, indep, len(f))
    f_coll = np.bincount(at, coll, len(f))
    # a file one rank uses has nothing to gain from collective calls
    sel = S.column(f, "shared") & (f_coll == 0) & (f_indep > 0) & \
        ((S.column(f, "nranks") > 1) | S.column(f, "shared_row"))
    n = float(f_indep[sel].sum())
    if n < cfg["min_ops"]:
        return []
    paths = set(S.objects(f, "path")[sel].tolist())
    rows = df["path"].isin(paths).to_numpy()
    sub = df[rows]
    top = S.top_sizes(sub, "MPIIO")
    binned = small = 0.0
    for d in ("READ", "WRITE"):
        binned += sum(S.col(sub, f"MPIIO_SIZE_{d}_{b}").sum() for b in R.size_bins(sub.columns, "MPIIO"))
        small += small_counts(sub, "MPIIO", d, cfg["large_size"], top)[1]
    large_share = (binned - small) / binned if binned else 0.0
    views = float(S.col(df, "MPIIO_VIEWS")[rows].sum())
    contig = contiguous_share(ctx, paths)
    contiguous = views == 0 or (contig is not None and contig >= cfg["contiguous_share"])
    evidence = {"MPIIO_INDEP_ops": n, "MPIIO_COLL_ops": 0, "shared_files": len(paths),
                "large_share": large_share, "MPIIO_VIEWS": views,
                **({"posix_sequential_share": contig} if contig is not None else {}),
                "nnodes": ctx.nnodes}
    files = least(paths)
    secs = ctx.time_of(paths)
    lay = ctx.layers_of(paths)
    traced = [ctx.owner.get(p, "MPIIO") for p in paths]
    owners = set(L.by_name(list(paths), traced))  # a library's file seen by name only
    owner = next((o for o in ("NetCDF", "PnetCDF", "HDF5") if o in owners), "MPIIO")
    label = owner if owner in traced or owner == "MPIIO" else f"{owner} (by the file name)"
    module = {"HDF5": "H5D", "NetCDF": "NC_VAR", "PnetCDF": "PNETCDF_VAR"}.get(owner, "MPIIO")
    wr = float(S.col(sub, "MPIIO_INDEP_WRITES").sum() + S.col(sub, "MPIIO_NB_WRITES").sum())
    d = "write" if wr >= n - wr else "read"
    if large_share >= cfg["large_share"] and contiguous:
        return [Advice(
            ID, "info",
            f"MPIIO: {num(n)} independent operations on {len(paths)} shared file(s), "
            f"{pct(large_share)} of them >= {S.human_bytes(cfg['large_size'])} and contiguous",
            "large contiguous independent access is fine as it is; if you switch to "
            "collective calls, romio_cb_write=disable (and romio_cb_read=disable) can be "
            "faster for such a pattern than two-phase I/O", evidence, module, files,
            seconds=secs, layers=lay, paths=paths)]
    rec = collective(owner, d) + f", with cb_nodes about the number of nodes ({ctx.nnodes})"
    example = ""
    if owner == "HDF5" and d == "write" and top and top[0]["size"] <= 4096:
        rec = HDF5_META + "; and " + rec  # metadata-sized writes: the metadata cache's
        example = HDF5_META_EXAMPLE
    meta = owner == "HDF5" and d == "read" and bool(top) and hdf5_metadata_reads(
        ctx, paths, n - wr, n, top[0]["size"], 4096)
    if meta:  # the library's metadata reads: a collective H5Dread changes nothing there
        rec, example = HDF5_META_READ, HDF5_META_READ_EXAMPLE
    if meta:
        evidence["hdf5_metadata_reads"] = 1.0
    return [Advice(
        ID, "high",
        f"{label}: HDF5's independent metadata reads: {num(n)} independent reads (most "
        f"often of {S.human_bytes(top[0]['size'])}) and no collective ones on "
        f"{len(paths)} shared file(s): every rank reads the file's metadata itself"
        if meta else
        f"{label}: {num(n)} independent operations and no collective ones on {len(paths)} "
        f"shared file(s) ({pct(1 - large_share)} smaller than "
        f"{S.human_bytes(cfg['large_size'])})",
        rec, evidence, module, files, seconds=secs, layers=lay, paths=paths, example=example)]
