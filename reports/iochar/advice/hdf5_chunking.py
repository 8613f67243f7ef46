"""hdf5-chunking: tiny chunks, or accesses much smaller than compressed chunks."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from . import layers as L
from .base import Advice, Context, num

ID = "hdf5-chunking"
CHUNKED = 3  # H5D_LAYOUT: 0 unknown, 1 compact, 2 contiguous, 3 chunked, 4 virtual


def chunk_bytes(df) -> np.ndarray:
    ndims = S.col(df, "H5D_DATASPACE_NDIMS")
    prod = np.ones(len(df))
    for k in range(1, 6):
        d = S.col(df, f"H5D_CHUNK_SIZE_D{k}")
        prod *= np.where((d > 0) & ((ndims == 0) | (k <= ndims)), d, 1)
    return prod * np.maximum(S.col(df, "H5D_DATATYPE_SIZE"), 1)


def check(ctx: Context, cfg: dict) -> list[Advice]:
    df = ctx.frame("H5D")
    if df is None or "H5D_LAYOUT" not in df.columns:
        return []
    chunked = S.col(df, "H5D_LAYOUT") == CHUNKED
    if not chunked.any():
        return []
    out = []
    cb = chunk_bytes(df)
    ops = S.concept(df, "H5D", "reads") + S.concept(df, "H5D", "writes")
    nbytes = S.concept(df, "H5D", "bytes_read") + S.concept(df, "H5D", "bytes_written")
    size = S.col(df, "H5D_DATASPACE_NPOINTS") * np.maximum(S.col(df, "H5D_DATATYPE_SIZE"), 1)
    nchunks = size / cb
    paths = df["path"].to_numpy() if "path" in df.columns else np.array([""] * len(df))
    tiny = chunked & (cb < cfg["tiny_chunk"]) & ((nchunks >= cfg["min_chunks"]) |
                                                  (ops >= cfg["min_ops"]))
    files = L.file_of(paths, ctx.paths_in("H5F"))
    if tiny.any():
        i = int(np.argmax(np.where(tiny, nchunks, -1)))
        fp = set(files[tiny])
        target = max(ctx.stripe_unit(fp), 1 << 20)
        grow = max(int(target // max(cb[i], 1)), 1)
        dims = [int(S.col(df, f"H5D_CHUNK_SIZE_D{k}")[i]) for k in range(1, 6)]
        dims = [d for d in dims if d > 0]
        shape = ", ".join(str(d * grow if k == 0 else d) for k, d in enumerate(dims))
        out.append(Advice(
            ID, "high",
            f"H5D: {int(tiny.sum())} chunked dataset(s) with chunks below "
            f"{S.human_bytes(cfg['tiny_chunk'])} (worst {S.human_bytes(cb[i])}, "
            f"{num(nchunks[i])} chunks): every chunk is a separate small, unaligned "
            "access in the file",
            f"H5Pset_chunk(dcpl, {len(dims)}, {{{shape}}}) (chunks of about "
            f"{S.human_bytes(target)}, shaped like the accesses) and a chunk cache that holds "
            "the chunks being filled (H5Pset_chunk_cache); h5py: chunks=(" + shape + ")",
            {**{f"H5D_CHUNK_SIZE_D{k}": S.col(df, f"H5D_CHUNK_SIZE_D{k}")[i] for k in range(1, 6)},
             "H5D_DATATYPE_SIZE": S.col(df, "H5D_DATATYPE_SIZE")[i], "chunk_bytes": cb[i],
             "H5D_DATASPACE_NPOINTS": S.col(df, "H5D_DATASPACE_NPOINTS")[i],
             "datasets": int(tiny.sum())},
            "H5D", [str(p) for p in paths[tiny][:3]], seconds=ctx.time_of(fp),
            layers=ctx.layers_of(fp), paths=fp))
    with np.errstate(divide="ignore", invalid="ignore"):
        access = np.where(ops > 0, nbytes / ops, 0)
    filt = S.col(df, "H5D_FILTERS") > 0
    amp = chunked & filt & (ops >= cfg["min_ops"]) & (access > 0) & \
        (cb >= cfg["amplification"] * access)
    if amp.any():
        i = int(np.argmax(np.where(amp, cb / np.maximum(access, 1), -1)))
        fp = set(files[amp])
        out.append(Advice(
            ID, "high",
            f"H5D: {int(amp.sum())} compressed dataset(s) accessed in pieces of "
            f"{S.human_bytes(access[i])} from {S.human_bytes(cb[i])} chunks "
            f"({cb[i] / access[i]:.0f}x: each access decompresses a whole chunk)",
            "H5Pset_chunk with chunks shaped like the accesses (or H5Dread/H5Dwrite whole "
            "chunks), and H5Pset_chunk_cache large enough to keep the chunks being worked on",
            {"chunk_bytes": cb[i], "mean_access_bytes": access[i],
             "H5D_FILTERS": S.col(df, "H5D_FILTERS")[i], "ops": ops[i]},
            "H5D", [str(p) for p in paths[amp][:3]], seconds=ctx.time_of(fp),
            layers=ctx.layers_of(fp), paths=fp))
    return out
