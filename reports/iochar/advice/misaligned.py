"""misaligned: file offsets (and transfer sizes) not aligned to the file system
block size or the stripe unit, judged per layer that owns the files."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from . import layers as L
from .base import Advice, Context, least, num, pct
from .remedy import HDF5_META_READ, HDF5_META_READ_EXAMPLE, HDF5_META_WRITTEN, direction, hdf5_metadata_reads

ID = "misaligned"
META_SIZE = 4096  # HDF5 metadata blocks read one by one are this size or less
SMALL = 64 << 10  # below small-io's size: the accesses are small before misaligned


EXAMPLE = {
    "HDF5": "H5Pset_alignment(fapl, 65536, {a});  /* C, before H5Fcreate */\n"
            "h5py.File(name, \"w\", alignment_threshold=65536, alignment_interval={a})",
    "MPIIO": "MPI_File_set_view(fh, (MPI_Offset)rank * region, etype, ftype, \"native\", info);"
             "  /* region a multiple of {a} */",
    "NetCDF": "nc__enddef(ncid, 0, {a}, 0, {a});  /* classic files */",
    "PnetCDF": "MPI_Info_set(info, \"nc_var_align_size\", \"{a}\");",
}


def remedy(owner: str, align: str, stripe: bool, d: str = "write") -> str:
    """The alignment remedy at the owner's layer, in the accesses' direction (d)."""
    return {
        "POSIX": f"start each {d}()/p{d}() at a multiple of {align} and make the sizes "
                 f"multiples of it (pad headers and records to {align})",
        "STDIO": f"{d} whole {align} blocks (setvbuf with a {align} buffer, pad records)",
        "MPIIO": f"give each rank a region that starts at a multiple of {align} (the offsets "
                 f"of MPI_File_{d}_at/the displacement of MPI_File_set_view)"
                 + ("" if stripe else f", and set the striping_unit hint to {align}"),
        "HDF5": f"H5Pset_alignment(fapl, threshold, {align}) on the file access property list",
        "NetCDF": f"classic files: nc__enddef(ncid, h_minfree, {align}, v_minfree, "
                  f"{align}); netCDF-4 files: nc_set_alignment(threshold, {align}) before "
                  "nc_create",
        "PnetCDF": f"the nc_header_align_size and nc_var_align_size hints ({align})",
    }.get(owner, f"align offsets and sizes to {align}")


def check(ctx: Context, cfg: dict) -> list[Advice]:
    df = ctx.frame("POSIX")
    name = "POSIX_FILE_NOT_ALIGNED"
    if df is None or name not in df.columns or "path" not in df.columns:
        return []
    df = S.rows(df, S.column(df, "record_id") != S.AGGREGATE_ID)
    traced = ctx.owner_of(S.objects(df), "POSIX")
    owner = traced.copy()
    some = S.col(df, name) > 0  # names read only where it matters (10^6-record logs)
    owner[some] = L.by_name(S.objects(df)[some], traced[some])
    out = []
    for layer in dict.fromkeys(owner):
        sub = S.rows(df, owner == layer)
        named = (traced[owner == layer] != layer).any()  # a library seen by name only
        reads = S.concept(sub, "POSIX", "reads")
        ops_row = reads + S.concept(sub, "POSIX", "writes")
        ops = float(ops_row.sum())
        # A read-to-EOF loop ends with a 0-byte read at offset = file size, rarely
        # block-aligned (Python reads every module it imports that way): up to one
        # such probe per open of a file that was read is not counted against it.
        per_file = S.col(sub, name)
        probes = np.minimum(per_file, np.minimum(S.concept(sub, "POSIX", "opens"), reads))
        bad_row = per_file - probes
        bad = float(bad_row.sum())
        if ops <= 0 or bad < cfg["min_ops"] or bad / ops < cfg["share"]:
            continue
        paths = set(sub["path"][bad_row > 0])
        stripe = ctx.stripe_unit(paths)
        block = ctx.block_size(paths)
        align = stripe or block
        if not align:
            continue  # nothing known to align to: say nothing
        top = S.top_sizes(sub[bad_row > 0], "POSIX")
        common = top[0]["size"] if top else 0
        # what the misalignment costs: a block more (and an access's latency at most)
        # per misaligned access, not the accesses' whole time (cost.estimate)
        mine = bad_row > 0  # the rows with misaligned accesses: the finding's scope
        nbytes = float((S.concept(sub, "POSIX", "bytes_read") +
                        S.concept(sub, "POSIX", "bytes_written"))[mine].sum())
        t = float((S.concept(sub, "POSIX", "time_read") +
                   S.concept(sub, "POSIX", "time_write"))[mine].sum())
        # an access of s bytes off the block boundary spans one block more when it
        # crosses a boundary: always for s >= the block, else about s / block of the time
        # (so a 100-byte read costs about 100 bytes more, a 1 MiB one a block more)
        top_all = S.top_sizes(sub[mine], "POSIX")
        s0 = top_all[0]["size"] if top_all else align
        est = ctx.estimate("POSIX", (float(ops_row[mine].sum()), nbytes, t), bad,
                           (bad * min(max(s0, 1), align), bad * align))
        bad_reads = float((reads * (bad_row > 0)).sum())
        bad_ops = float((ops_row * (bad_row > 0)).sum())
        meta = layer == "HDF5" and hdf5_metadata_reads(ctx, paths, bad_reads, bad_ops,
                                                        common, META_SIZE)
        what = "the stripe unit" if stripe else "the file system block"
        size_note = ""
        if common and common % align:
            size_note = (f"; the most common size, {S.human_bytes(common)}, is not a "
                         f"multiple of {S.human_bytes(align)}")
        out.append(Advice(
            ID, "high",
            f"{layer}{' (by the file name: the log has no ' + layer + ' records)' if named else ''}"
            f": {pct(bad / ops)} of accesses ({num(bad)} of {num(ops)}) start off "
            f"{what} ({S.human_bytes(align)}){size_note}"
            + ("; HDF5's independent metadata reads: every rank reads the file's "
               "metadata itself, a few hundred bytes at a time" if meta else ""),
            (HDF5_META_READ + (HDF5_META_WRITTEN if bad_ops > bad_reads else "")) if meta else
            remedy(layer, S.human_bytes(align), bool(stripe),
                   direction(bad_reads, bad_ops - bad_reads)),
            {name: bad, "POSIX_FILE_ALIGNMENT": block, "accesses": ops,
             "eof_probes_not_counted": float(probes.sum()),
             **({"stripe_size": stripe} if stripe else {}),
             **({"common_size": common} if common else {}),
             # the accesses are smaller than the block: small first (advice.explains)
             **({"smaller_than_block": 1.0} if 0 < common < min(align, SMALL) else {}),
             **({"hdf5_metadata_reads": 1.0} if meta else {})},
            "POSIX" if layer == "POSIX" else {"MPIIO": "MPIIO", "HDF5": "H5F", "NetCDF": "NC_FILE",
                                              "PnetCDF": "PNETCDF_FILE"}.get(layer, "POSIX"),
            least(paths), estimate=est, layers=ctx.layers_of(paths), paths=paths,
            example=HDF5_META_READ_EXAMPLE if meta else
            EXAMPLE.get(layer, "").format(a=int(align))))
    return out
