"""small-io: many reads or writes smaller than the small-size threshold, judged at
the layer the application called (POSIX, MPI-IO, HDF5, NetCDF, PnetCDF)."""

from __future__ import annotations

import numpy as np

from .. import schema as R
from .. import summary as S
from . import layers as L
from .base import Advice, Context, num, pct
from .remedy import (
    HDF5_META,
    HDF5_META_EXAMPLE,
    HDF5_META_READ,
    HDF5_META_READ_EXAMPLE,
    bigger,
    bigger_example,
    collective,
    is_hdf5,
)

ID = "small-io"
SKIP = ("STDIO",)  # libc buffers small STDIO calls; stdio-heavy covers that module


def small_counts(df, module: str, direction: str, size: float, top: list) -> tuple:
    """(per-record small ops below `size`, module total, bin counters used).

    Bins wholly below `size` count fully; the bin containing `size` counts minus the
    top-4 access sizes known to be >= size (so exact 1 MiB accesses are not small).
    """
    per = np.zeros(len(df))
    used = {}
    boundary = 0.0
    for b in R.size_bins(df.columns, module):
        lower, upper = R.bin_bounds(b)
        name = f"{module}_SIZE_{direction}_{b}"
        v = S.col(df, name)
        if upper < size:
            per += v
            used[name] = v.sum()
        elif lower < size:
            big = sum(t["count"] for t in top if size <= t["size"] <= upper)
            boundary = max(v.sum() - big, 0.0)
            if v.sum():
                per += v * (boundary / v.sum())
            used[name] = v.sum()
    return per, per.sum(), used


def stripe_unit(ctx: Context) -> float:
    """The stripe size when the log knows it (Context.stripe_unit), else 0."""
    return ctx.stripe_unit()


def judged(ctx: Context, layer: str):
    """(module, its rows to judge) for the files this layer owns."""
    module = L.DATA_MODULE[layer]
    df = ctx.frame(module)
    if df is None:
        return module, None
    if module in ("POSIX", "STDIO", "MPIIO"):
        return module, ctx.own_frame(module)
    return module, S.rows(df, S.column(df, "record_id") != S.AGGREGATE_ID)


def collective_share(df, module: str) -> float:
    if module == "MPIIO":
        coll = S.expr(df, "MPIIO_COLL_READS+MPIIO_COLL_WRITES+MPIIO_SPLIT_READS+"
                          "MPIIO_SPLIT_WRITES").sum()
    elif module == "H5D":
        coll = ((S.col(df, "H5D_USE_MPIIO_COLLECTIVE") > 0) *
                (S.col(df, "H5D_READS") + S.col(df, "H5D_WRITES"))).sum()
    elif module == "PNETCDF_VAR":
        coll = S.expr(df, "PNETCDF_VAR_COLL_PUTS+PNETCDF_VAR_COLL_GETS").sum()
    else:
        return 0.0
    ops = (S.concept(df, module, "reads") + S.concept(df, module, "writes")).sum()
    return float(coll / ops) if ops else 0.0


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for layer, _ in L.LAYERS:
        module, df = judged(ctx, layer)
        if df is None or not len(df) or module in SKIP:
            continue
        size = cfg["size"]
        if cfg["use_stripe_unit"] and 0 < stripe_unit(ctx) < size:
            size = stripe_unit(ctx)
        if collective_share(df, module) >= 0.5:
            continue  # collective buffering already merges small pieces
        top = S.top_sizes(df, module)
        best = None
        for direction, key in (("READ", "reads"), ("WRITE", "writes")):
            ops_row = S.concept(df, module, key)
            ops = float(ops_row.sum())
            if ops <= 0:
                continue
            if S.has_bins(df, module):
                per, small, used = small_counts(df, module, direction, size, top)
            else:  # no size bins (H5D, NC_VAR): the mean access size of each record
                nb = S.concept(df, module, "bytes_" + ("read" if key == "reads" else "written"))
                with np.errstate(divide="ignore", invalid="ignore"):
                    mean = np.where(ops_row > 0, nb / np.maximum(ops_row, 1), np.inf)
                per = np.where(mean < size, ops_row, 0.0)
                small, used = float(per.sum()), {}
            if small < cfg["min_ops"] or small / ops < cfg["share"]:
                continue
            if best is None or small > best[2]:
                best = (direction, key, small, ops, per, used)
        if best is None:
            continue
        direction, key, small, ops, per, used = best
        # making small accesses large saves their per-access latency; their bytes move
        # anyway (cost.estimate, nothing charged at the bandwidth)
        moved = "bytes_read" if key == "reads" else "bytes_written"
        timed = "time_read" if key == "reads" else "time_write"
        mine = per > 0  # the rows that have small accesses: the finding's scope
        est = ctx.estimate(module, (float(S.concept(df, module, key)[mine].sum()),
                                    float(S.concept(df, module, moved)[mine].sum()),
                                    float(S.concept(df, module, timed)[mine].sum())),
                           small, (0.0, 0.0))
        d = key[:-1].lower()
        typical = next((t["size"] for t in top if t["size"] < size), None)
        order = np.argsort(-per, kind="stable")
        paths = set(df["path"].to_numpy()[per > 0]) if "path" in df.columns else set()
        files = [str(df["path"].iat[i]) for i in order[:3] if per[i] > 0] \
            if "path" in df.columns else []
        fpaths = set(L.file_of(np.array(list(paths), dtype=object),
                               ctx.paths_in(L.FILE_MODULE.get(layer, "")))) if paths else set()
        rec = bigger(layer, d, S.human_bytes(size))
        if layer in ("MPIIO", "HDF5", "NetCDF", "PnetCDF") and ctx.parallel(fpaths):
            rec += "; or let collective buffering merge them: " + collective(layer, d)
        example = bigger_example(layer, d)
        label = layer
        h5, by_name = is_hdf5(ctx, fpaths) if layer in ("HDF5", "MPIIO", "POSIX") \
            else (False, False)
        # metadata-sized writes to a parallel HDF5 file: its metadata cache's flushes
        if h5 and layer != "HDF5":
            label = f"{layer} on an HDF5 file" + (" (by its name)" if by_name else "")
        if h5 and d == "write" and typical and typical <= cfg["hdf5_metadata_size"] and \
                ctx.parallel(fpaths):
            rec = HDF5_META + "; else " + rec
            example = HDF5_META_EXAMPLE
        meta_reads = h5 and d == "read" and bool(typical) and \
            typical <= cfg["hdf5_metadata_size"] and ctx.parallel(fpaths)
        if meta_reads:  # no read of the user's can be made larger: the library's calls
            label += ": HDF5's independent metadata reads"
            rec, example = HDF5_META_READ, HDF5_META_READ_EXAMPLE
        evidence = {f"{module}_{key.upper()}": ops, f"small_{key}": small,
                    "small_size": size, **{k: v for k, v in used.items() if v}}
        if typical:
            evidence["common_size"] = typical
        if meta_reads:
            evidence["hdf5_metadata_reads"] = 1.0
        out.append(Advice(
            ID, "high",
            f"{label}: {pct(small / ops)} of {key} ({num(small)} of {num(ops)}) are smaller "
            f"than {S.human_bytes(size)}"
            + (f"; most common size {S.human_bytes(typical)}" if typical else ""),
            rec, evidence, module, files, estimate=est, layers=ctx.layers_of(fpaths),
            paths=fpaths, example=example))
    return out
