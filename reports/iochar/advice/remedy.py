"""Remedy phrases for the interface a file was used through (the call or hint to change)."""

from __future__ import annotations

import itertools

from . import layers as L

# Collective transfers, per layer; "{d}" is read or write, "{pg}" put or get.
COLLECTIVE = {
    "MPIIO": "MPI_File_{d}_at_all (or MPI_File_set_view + MPI_File_{d}_all) instead of "
             "MPI_File_{d}_at, with romio_cb_{d}=enable",
    "HDF5": "H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) on the transfer property list "
            "passed to H5D{d}",
    "NetCDF": "nc_var_par_access(ncid, varid, NC_COLLECTIVE) before nc_{pg}_vara",
    "PnetCDF": "the collective ncmpi_{pg}_vara_*_all calls (or ncmpi_i{pg}_vara + "
               "ncmpi_wait_all)",
}


def _per_layer(table: dict, layer: str, fallback: str, d: str, **kw) -> str:
    """table's text for layer (else fallback's), with "{d}" read or write and "{pg}" put
    or get."""
    return table.get(layer, table[fallback]).format(d=d, pg="put" if d == "write" else "get",
                                                    **kw)


def collective(layer: str, d: str) -> str:
    return _per_layer(COLLECTIVE, layer, "MPIIO", d)


# Bigger requests, per layer, when the application itself issues small ones.
BIGGER = {
    "POSIX": "buffer in memory and {d} whole blocks of >= {size} per {d}()/p{d}() call",
    "STDIO": "set a larger stream buffer (setvbuf) or f{d} whole blocks of >= {size}",
    "MPIIO": "{d} >= {size} per MPI_File_{d}* call (describe the pieces with a derived "
             "datatype and one call)",
    "HDF5": "select larger hyperslabs (>= {size}) per H5D{d} call",
    "NetCDF": "{pg} larger slabs (>= {size}) per nc_{pg}_vara call",
    "PnetCDF": "{pg} larger slabs per call, or batch them with ncmpi_i{pg}_vara + "
               "ncmpi_wait_all",
}


def bigger(layer: str, d: str, size: str) -> str:
    return _per_layer(BIGGER, layer, "POSIX", d, size=size)


def direction(reads: float, writes: float) -> str:
    return "write" if writes >= reads else "read"


# The same remedy as a line of code, per layer ("{d}" read or write, "{pg}" put or get).
BIGGER_EXAMPLE = {
    "POSIX": "p{d}(fd, block, n_big, offset);  /* one call per block of many records */",
    "STDIO": "setvbuf(f, NULL, _IOFBF, 4 << 20);  /* before the first f{d} */",
    "MPIIO": "MPI_Type_vector(count, piece, stride, MPI_BYTE, &t); MPI_Type_commit(&t);\n"
             "MPI_File_{d}_at(fh, offset, buf, 1, t, &status);  /* one call for all pieces */",
    "HDF5": "H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count_big, NULL);",
    "NetCDF": "nc_{pg}_vara_float(ncid, varid, start, count_big, data);",
    "PnetCDF": "ncmpi_i{pg}_vara_float(ncid, varid, start, count, buf, &req[i]);\n"
               "ncmpi_wait_all(ncid, n, req, st);",
}


def bigger_example(layer: str, d: str) -> str:
    return _per_layer(BIGGER_EXAMPLE, layer, "POSIX", d)


# HDF5's own causes of small writes and re-reads, named by its calls.
HDF5_META = ("HDF5 metadata (object headers, B-tree nodes) is flushed in small pieces "
             "by each rank: H5Pset_coll_metadata_write(fapl, 1) and "
             "H5Pset_all_coll_metadata_ops(fapl, 1) on the file access property list make "
             "them collective, few and large")
HDF5_META_EXAMPLE = ("H5Pset_coll_metadata_write(fapl, 1);\n"
                     "H5Pset_all_coll_metadata_ops(fapl, 1);  /* before H5Fcreate/H5Fopen */")
# HDF5's metadata read by every rank on its own: object headers, B-tree and heap blocks of
# a few hundred bytes each. Alignment cannot make such a read large; these calls can.
HDF5_META_READ = ("HDF5 reads its metadata (object headers, B-tree and heap blocks) "
                  "independently on every rank, in pieces of a few hundred bytes: "
                  "H5Pset_all_coll_metadata_ops(fapl, 1) has one rank read it and broadcast "
                  "it to the others; H5Pset_meta_block_size(fapl, 1 MiB) (before the file "
                  "is written) keeps it in large blocks, and page buffering "
                  "(H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_PAGE, 0, 0) when "
                  "writing, H5Pset_page_buffer_size(fapl, ...) when reading) reads it in "
                  "whole pages")
HDF5_META_READ_EXAMPLE = ("H5Pset_all_coll_metadata_ops(fapl, 1);  /* before H5Fopen */\n"
                          "H5Pset_page_buffer_size(fapl, 4 << 20, 0, 0);  /* paged files */")
HDF5_META_WRITTEN = ("; the ranks also write metadata: H5Pset_coll_metadata_write(fapl, 1) "
                     "makes those writes collective")


def hdf5_metadata_reads(ctx, paths, reads: float, ops: float, common: float,
                        limit: float) -> bool:
    """Small reads, most of these accesses, by several ranks, of an HDF5 file: HDF5's
    independent metadata reads."""
    return bool(paths) and ops > 0 and reads >= 0.5 * ops and 0 < common <= limit and \
        ctx.parallel(paths) and is_hdf5(ctx, paths)[0]


HDF5_CACHE = ("HDF5: a chunk cache that holds the chunks being re-read: "
              "H5Pset_chunk_cache(dapl, nslots, nbytes, 1.0) on the dataset access property "
              "list (or H5Pset_cache(fapl, 0, nslots, nbytes, 1.0) for every dataset of the "
              "file); the default holds 1 MiB")
HDF5_CACHE_EXAMPLE = ("H5Pset_chunk_cache(dapl, 12421, 64 << 20, 1.0);  /* 64 MiB, "
                      "before H5Dopen2(file, name, dapl) */")


def is_hdf5(ctx, paths) -> tuple:
    """(these files are HDF5, known by name only: the log has no HDF5 module)."""
    if not paths:
        return False, False
    h5 = ctx.paths_in("H5F")  # dataset names (`<file>:<name>`) are judged as their file
    if h5 and (h5 & set(paths) or any(str(p).split(":", 1)[0] in h5 for p in paths)):
        return True, False
    sample = list(itertools.islice(paths, 64))  # a rule may name 10^6 files
    named = L.by_name(sample, ["POSIX"] * len(sample))
    return bool((named == "HDF5").any()), True
