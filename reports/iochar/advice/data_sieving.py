"""data-sieving: POSIX reads under a file the application only wrote through MPI-IO:
ROMIO read-modify-write (data sieving of independent noncontiguous writes, or
holes in the file domains of collective writes)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import summary as S
from . import layers as L
from .base import Advice, Context, num, pct

ID = "data-sieving"
ENABLE = 1  # MPIIO_HINT_ROMIO_*: 0 unknown, 1 enable, 2 disable, 3 automatic
SIEVE_BUFFER = 512 << 10  # ROMIO's default ind_wr_buffer_size: a sieving write's span


def library_bytes(ctx: Context) -> dict:
    """{file: bytes the program gave HDF5's datasets in it} (H5D records)."""
    h5 = ctx.frame("H5D")
    if h5 is None or "path" not in h5.columns:
        return {}
    files = L.file_of(S.objects(h5), ctx.paths_in("H5F"))
    return pd.Series(S.concept(h5, "H5D", "bytes_written")).groupby(files).sum().to_dict()


def mechanism(ctx: Context, mp_rows, px_rows) -> tuple:
    """(ranks reading the file at POSIX, ranks writing it through MPI-IO, collective
    buffering disabled by the hint) for one file; 0 ranks when the log cannot tell.

    Per-rank records say which ranks read; for a record reduced over ranks (rank -1) the
    per-rank module totals do, when this file has (nearly) all of the job's POSIX reads."""
    ranks = S.column(px_rows, "rank")
    mranks = S.column(mp_rows, "rank")
    cb_off = bool((S.col(mp_rows, "MPIIO_HINT_ROMIO_CB_WRITE") == 2).any()) \
        if "MPIIO_HINT_ROMIO_CB_WRITE" in mp_rows.columns else False
    if not (ranks == -1).any() and not (mranks == -1).any() and len(mranks):
        readers = int(len(set(ranks[S.col(px_rows, "POSIX_READS") > 0].tolist())))
        return readers, int(len(set(mranks.tolist()))), cb_off
    pr, mr = ctx.ranks.get("POSIX"), ctx.ranks.get("MPIIO")
    mine = float(S.col(px_rows, "POSIX_BYTES_READ").sum())
    if pr is not None and mr is not None and "bytes_read" in pr.columns and \
            "writes" in mr.columns and mine >= 0.9 * float(pr["bytes_read"].sum()) > 0:
        return (int((pr["bytes_read"].to_numpy() > 0).sum()),
                int((mr["writes"].to_numpy() > 0).sum()), cb_off)
    return 0, 0, cb_off


def check(ctx: Context, cfg: dict) -> list[Advice]:
    mp, px = ctx.frame("MPIIO"), ctx.frame("POSIX")
    if mp is None or px is None or "path" not in px.columns:
        return []
    out = []
    h5_given = library_bytes(ctx)
    # without HDF5's bytes a file qualifies by its POSIX reads alone: when all of the
    # log's (their positive part) are below the floor, none does
    if not h5_given and \
            np.maximum(S.col(px, "POSIX_BYTES_READ"), 0).sum() < cfg["min_bytes"]:
        return out
    for path, rows in mp.groupby("path", sort=False):
        if (S.concept(rows, "MPIIO", "reads").sum() or
                S.concept(rows, "MPIIO", "bytes_read").sum()):
            continue  # the application reads it too: POSIX reads are not all RMW
        wrote = float(S.concept(rows, "MPIIO", "bytes_written").sum())
        p = px[px["path"] == path]
        read = float(S.col(p, "POSIX_BYTES_READ").sum())
        # the program gave HDF5's datasets `given` bytes (H5D records): MPI-IO writing
        # well above that is the library's own fill, whatever two-phase read back
        given = float(h5_given.get(path, 0.0))
        filled = given and wrote >= cfg["fill_factor"] * given and \
            wrote - given >= cfg["min_bytes"]
        if not wrote or not filled and (read < cfg["min_bytes"] or read / wrote < cfg["share"]):
            continue
        written = float(S.col(p, "POSIX_BYTES_WRITTEN").sum())
        # the bytes moved beyond those asked for, as a share of the file's I/O time
        excess = read + written - wrote + (wrote - given if filled else 0.0)
        secs = ctx.time_of([path]) * min(max(excess, 0.0) / (read + written), 1.0)
        indep = float(S.expr(rows, "MPIIO_INDEP_WRITES+MPIIO_NB_WRITES").sum())
        coll = float(S.expr(rows, "MPIIO_COLL_WRITES+MPIIO_SPLIT_WRITES").sum())
        ds = S.col(rows, "MPIIO_HINT_ROMIO_DS_WRITE")
        readers, users, cb_off = mechanism(ctx, rows, p)
        top = S.top_sizes(p, "POSIX")
        cycle = top[0]["size"] if top and top[0]["size"] >= 4096 else 0
        # independent writes can only sieve; collective ones sieve when collective
        # buffering is off, which shows as every rank reading back in cycles of the
        # sieve buffer (ind_wr_buffer_size, 512 KiB) rather than aggregators reading
        # their file domains (up to cb_buffer_size, 16 MiB)
        sieving = indep >= coll or cb_off or (
            users >= 2 and readers >= 0.75 * users and 0 < cycle <= SIEVE_BUFFER)
        traced = ctx.owner.get(path, "MPIIO")
        owner = L.by_name([path], [traced])[0]
        hdf5 = owner in ("HDF5", "NetCDF")
        # two-phase's read of a file domain shows as many 0-byte or short reads
        tiny = float(S.col(p, "POSIX_SIZE_READ_0_100").sum())
        example = ""
        # without H5D records: POSIX writing well above MPI-IO's bytes under
        # collective writes to an HDF5/NetCDF file
        extra, asked = (wrote, given) if given else (written, wrote)
        if filled or hdf5 and extra >= cfg["fill_factor"] * asked and coll > indep:
            # HDF5 writes a chunked dataset's fill values when it allocates the space
            # (parallel HDF5 allocates early), then the data: POSIX writes well above
            # what the program passed, and two-phase reads the filled domains back
            rec = ("the library writes fill values when it allocates the datasets, then "
                   "two-phase reads them back to merge the data: do not write fill values "
                   "(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER)) and allocate late where "
                   "the driver allows (H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_LATE)); "
                   "NetCDF-4: nc_def_var_fill(ncid, varid, NC_NOFILL, NULL)")
            how = (f"writes over fill values ({S.human_bytes(extra)} written for "
                   f"{S.human_bytes(asked)} the program passed)")
            example = ("H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);\n"
                       "H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_LATE);")
        elif sieving:
            rec = ("ROMIO data sieving (independent I/O: collective buffering is not used) "
                   "reads, locks and rewrites the span around each noncontiguous write, on "
                   "every rank: "
                   + ("make the transfers collective, H5Pset_dxpl_mpio(dxpl, "
                      "H5FD_MPIO_COLLECTIVE) on the dataset transfer list (NetCDF-4: "
                      "nc_var_par_access(ncid, varid, NC_COLLECTIVE))" if hdf5 else
                      "call MPI_File_write_all (collective, romio_cb_write=enable) instead "
                      "of MPI_File_write/MPI_File_write_at")
                   + ("" if indep >= coll else "; the collective calls ran independently: "
                      "set romio_cb_write=enable (it is disabled)")
                   + "; if the pieces are large, set romio_ds_write=disable")
            how = (f"ROMIO data sieving: {int(indep or coll):,} "
                   f"{'independent' if indep >= coll else 'collective (run independently)'}"
                   " noncontiguous writes"
                   + (f", {readers} of {users} ranks reading back" if readers and users
                      else "")
                   + (f" in {S.human_bytes(cycle)} cycles (the sieve buffer, "
                      "ind_wr_buffer_size)" if cycle else ""))
            example = ("H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);" if hdf5 else
                       "MPI_File_write_at_all(fh, offset, buf, count, type, &status);")
        else:
            rec = ("ROMIO two-phase reads each aggregator's file domain before writing it "
                   "because the collective writes leave holes in it: write every byte of the "
                   "extent in one MPI_File_write_all (no gaps between ranks' pieces), or "
                   "align the pieces to the file domains (striping_unit, cb_buffer_size)")
            how = (f"ROMIO two-phase: {int(coll):,} collective writes with holes"
                   + (f", read back by {readers} aggregator rank(s) of {users}" if readers and
                      users else ""))
            example = "MPI_Info_set(info, \"romio_cb_write\", \"enable\");"
        named = "" if owner == traced else \
            f" (by the file name: the log has no {owner} records)"
        out.append(Advice(
            ID, "high",
            f"{owner}{named}: POSIX read {S.human_bytes(read)} back from a file the program "
            f"only wrote ({S.human_bytes(wrote)} through MPI-IO, {S.human_bytes(written)} "
            f"written at POSIX, {pct(read / wrote)} read back"
            + (f", {num(tiny)} reads of 100 bytes or less" if tiny else "")
            + f"): read-modify-write by {how}",
            rec,
            {"POSIX_BYTES_READ": read, "POSIX_BYTES_WRITTEN": written, "MPIIO_BYTES_WRITTEN": wrote,
             "MPIIO_INDEP_WRITES": indep, "MPIIO_COLL_WRITES": coll,
             "POSIX_SIZE_READ_0_100": tiny,
             "MPIIO_HINT_ROMIO_DS_WRITE": float(np.max(ds)) if len(ds) else 0.0,
             "posix_reading_ranks": readers, "mpiio_ranks": users,
             "mechanism": 1.0 if sieving else 2.0, **({"cycle_size": cycle} if cycle else {})},
            {"HDF5": "H5D", "NetCDF": "NC_VAR"}.get(owner, "MPIIO"), [str(path)],
            seconds=secs, layers=ctx.layers_of([path]), paths={path}, floor="warn",
            example=example))
    return out
