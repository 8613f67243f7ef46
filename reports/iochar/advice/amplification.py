"""layer-amplification: a library (HDF5, NetCDF, PnetCDF) moves many more bytes at
POSIX than the application asked it for."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, least
from .remedy import HDF5_META_READ, HDF5_META_READ_EXAMPLE, hdf5_metadata_reads

ID = "layer-amplification"
REMEDY = {
    "HDF5": "writes that cover part of a chunk make HDF5 read and rewrite the whole chunk: "
            "shape chunks like the accesses (H5Pset_chunk) and give the chunk cache room for "
            "the chunks being filled (H5Pset_chunk_cache)",
    "NetCDF": "write whole records or several records per nc_put_vara call (count > 1 along "
              "the unlimited dimension), so the library does not read back and rewrite "
              "partly filled blocks",
    "PnetCDF": "combine the requests with ncmpi_iput_vara + ncmpi_wait_all, or call the "
               "collective ncmpi_put_vara_*_all with whole records",
}


def check(ctx: Context, cfg: dict) -> list[Advice]:
    t = ctx.layer_table
    if not len(t):
        return []
    out = []
    for layer, rec in REMEDY.items():
        paths = ctx.owned_paths(layer)
        if not paths:
            continue
        sel = np.fromiter((p in paths for p in S.objects(t)), bool, len(t))
        layer_of = S.objects(t, "layer")
        top, low = sel & (layer_of == layer), sel & (layer_of == "POSIX")
        br, bw = S.column(t, "bytes_read"), S.column(t, "bytes_written")
        asked = float(bw[top].sum() + br[top].sum())
        low_read, low_written = br[low].sum(), bw[low].sum()
        moved = float(low_written + low_read)
        if not asked or moved < cfg["factor"] * asked or moved - asked < cfg["min_bytes"]:
            continue
        secs = ctx.time_of(paths) * (moved - asked) / moved
        example = ""
        meta = False
        if layer == "HDF5":
            # POSIX's traffic under the file mostly small reads by several ranks: the
            # library's metadata, not chunks (it reads headers the program never asked for)
            px = ctx.frame("POSIX")
            if px is not None and "path" in px.columns:
                rows = S.rows(px, np.fromiter((p in paths for p in S.objects(px)), bool,
                                              len(px)))
                top = S.top_sizes(rows, "POSIX")
                r = float(S.concept(rows, "POSIX", "reads").sum())
                n = r + float(S.concept(rows, "POSIX", "writes").sum())
                meta = bool(top) and hdf5_metadata_reads(ctx, paths, r, n, top[0]["size"],
                                                         4096)
        if meta:
            rec, example = HDF5_META_READ, HDF5_META_READ_EXAMPLE
        out.append(Advice(
            ID, "high",
            f"{layer}: POSIX moved {S.human_bytes(moved)} (read "
            f"{S.human_bytes(low_read)}, wrote "
            f"{S.human_bytes(low_written)}) for {S.human_bytes(asked)} the "
            f"program passed to {layer} ({moved / asked:.1f}x)"
            + ("; the reads are HDF5's independent metadata reads, every rank reading the "
               "file's metadata itself" if meta else ""),
            rec,
            {"posix_bytes": moved, f"{layer}_bytes": asked, "factor": moved / asked,
             "POSIX_BYTES_READ": float(low_read), "POSIX_BYTES_WRITTEN": float(low_written),
             **({"hdf5_metadata_reads": 1.0} if meta else {})},
            {"HDF5": "H5D", "NetCDF": "NC_VAR", "PnetCDF": "PNETCDF_VAR"}[layer],
            least(paths), seconds=secs, layers=ctx.layers_of(paths), paths=set(paths),
            example=example))
    return out
