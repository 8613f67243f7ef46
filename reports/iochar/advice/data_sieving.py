"""data-sieving: POSIX reads under a file the application only wrote through MPI-IO:
ROMIO read-modify-write (data sieving of independent noncontiguous writes, or
holes in the file domains of collective writes)."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, pct

ID = "data-sieving"
ENABLE = 1  # MPIIO_HINT_ROMIO_*: 0 unknown, 1 enable, 2 disable, 3 automatic


def check(ctx: Context, cfg: dict) -> list[Advice]:
    mp, px = ctx.frame("MPIIO"), ctx.frame("POSIX")
    if mp is None or px is None or "path" not in px.columns:
        return []
    out = []
    for path, rows in mp.groupby("path", sort=False):
        if (S.concept(rows, "MPIIO", "reads").sum() or
                S.concept(rows, "MPIIO", "bytes_read").sum()):
            continue  # the application reads it too: POSIX reads are not all RMW
        wrote = float(S.concept(rows, "MPIIO", "bytes_written").sum())
        p = px[px["path"] == path]
        read = float(S.col(p, "POSIX_BYTES_READ").sum())
        if not wrote or read < cfg["min_bytes"] or read / wrote < cfg["share"]:
            continue
        written = float(S.col(p, "POSIX_BYTES_WRITTEN").sum())
        # the bytes moved beyond those asked for, as a share of the file's I/O time
        secs = ctx.time_of([path]) * max(read + written - wrote, 0.0) / (read + written)
        indep = float(S.expr(rows, "MPIIO_INDEP_WRITES+MPIIO_NB_WRITES").sum())
        coll = float(S.expr(rows, "MPIIO_COLL_WRITES+MPIIO_SPLIT_WRITES").sum())
        ds = S.col(rows, "MPIIO_HINT_ROMIO_DS_WRITE")
        owner = ctx.owner.get(path, "MPIIO")
        if indep >= coll:
            rec = ("ROMIO data sieving reads, locks and rewrites the span around each "
                   "noncontiguous independent write: call MPI_File_write_all (collective, "
                   "romio_cb_write=enable) instead of MPI_File_write/MPI_File_write_at"
                   + ("" if owner == "MPIIO" else
                      " (HDF5: H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE))")
                   + "; if the pieces are large, set romio_ds_write=disable")
            how = f"{int(indep):,} independent noncontiguous writes"
        else:
            rec = ("ROMIO two-phase reads each aggregator's file domain before writing it "
                   "because the collective writes leave holes in it: write every byte of the "
                   "extent in one MPI_File_write_all (no gaps between ranks' pieces), or "
                   "align the pieces to the file domains (striping_unit, cb_buffer_size)")
            how = f"{int(coll):,} collective writes with holes"
        out.append(Advice(
            ID, "high",
            f"MPIIO: POSIX read {S.human_bytes(read)} back from a file the program only "
            f"wrote ({S.human_bytes(wrote)} through MPI-IO, {S.human_bytes(written)} written "
            f"at POSIX, {pct(read / wrote)} read back): read-modify-write by {how}",
            rec,
            {"POSIX_BYTES_READ": read, "POSIX_BYTES_WRITTEN": written, "MPIIO_BYTES_WRITTEN": wrote,
             "MPIIO_INDEP_WRITES": indep, "MPIIO_COLL_WRITES": coll,
             "MPIIO_HINT_ROMIO_DS_WRITE": float(np.max(ds)) if len(ds) else 0.0},
            "MPIIO", [str(path)], seconds=secs, layers=ctx.layers_of([path]), paths={path},
            floor="warn"))
    return out
