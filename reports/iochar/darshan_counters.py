"""Darshan 3.4's record layouts (log format 3.41) and which iochar counter fills each field.

The lists are facts of Darshan's format (module ids, record versions, counter order as
in darshan-util 3.4.x's module headers); tests/unit/test_darshan_export.py checks them
against the names PyDarshan's own library reports. `source` is the one place that says
what each Darshan field takes from an iochar record (docs/log-format.md, "Writing
Darshan logs").
"""

from __future__ import annotations

BINS = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M",
        "100M_1G", "1G_PLUS")


def _bins(p: str, agg: bool) -> list:
    a = "AGG_" if agg else ""
    return [f"{p}_SIZE_{d}_{a}{b}" for d in ("READ", "WRITE") for b in BINS]


def _top4(p: str, what: str) -> list:
    return [f"{p}_{what}{i}_{what}" for i in range(1, 5)] + [f"{p}_{what}{i}_COUNT" for i in range(1, 5)]


def _top4_dims(p: str) -> list:
    """H5D and PNETCDF_VAR: each access size with its hyperslab lengths and strides."""
    out = []
    for i in range(1, 5):
        out += [f"{p}_ACCESS{i}_ACCESS"] + [f"{p}_ACCESS{i}_{k}_D{d}" for k in ("LENGTH", "STRIDE")
                                            for d in range(1, 6)]
    return out + [f"{p}_ACCESS{i}_COUNT" for i in range(1, 5)]


def _ranks(p: str) -> list:
    return [f"{p}_FASTEST_RANK", f"{p}_FASTEST_RANK_BYTES", f"{p}_SLOWEST_RANK",
            f"{p}_SLOWEST_RANK_BYTES"]


def _stamps(p: str, kinds: tuple) -> list:
    return [f"{p}_F_{k}_START_TIMESTAMP" for k in kinds] + [f"{p}_F_{k}_END_TIMESTAMP" for k in kinds]


def _io_floats(p: str) -> list:
    """The float counters POSIX, MPI-IO, H5D and PNETCDF_VAR share."""
    return _stamps(p, ("OPEN", "READ", "WRITE", "CLOSE")) + [
        f"{p}_F_{n}" for n in ("READ_TIME", "WRITE_TIME", "META_TIME", "MAX_READ_TIME",
                               "MAX_WRITE_TIME", "FASTEST_RANK_TIME", "SLOWEST_RANK_TIME",
                               "VARIANCE_RANK_TIME", "VARIANCE_RANK_BYTES")]


def _p(prefix: str, names: str) -> list:
    return [f"{prefix}_{n}" for n in names.split()]


class Module:
    """One Darshan module region: its id (bit in the header's maps), record version,
    iochar module, counter names, and whether records carry the file's record id."""

    def __init__(self, name, mod_id, version, ours, ints, floats, file_rec_id=False):
        self.name, self.id, self.version, self.ours = name, mod_id, version, ours
        self.ints, self.floats, self.file_rec_id = ints, floats, file_rec_id


_PNC_APIS = [f"{op}_{k}" for op in ("PUT", "GET") for k in ("VAR", "VAR1", "VARA", "VARS", "VARM",
                                                            "VARN", "VARD")] + \
            [f"{op}_{k}" for op in ("IPUT", "IGET", "BPUT") for k in ("VAR", "VAR1", "VARA", "VARS",
                                                                      "VARM", "VARN")]

# In module-id order, the order of the regions in a log.
MODULES = [
    Module("POSIX", 1, 4, "POSIX",
           _p("POSIX", "OPENS FILENOS DUPS READS WRITES SEEKS STATS MMAPS FSYNCS FDSYNCS "
                       "RENAME_SOURCES RENAME_TARGETS RENAMED_FROM MODE BYTES_READ BYTES_WRITTEN "
                       "MAX_BYTE_READ MAX_BYTE_WRITTEN CONSEC_READS CONSEC_WRITES SEQ_READS "
                       "SEQ_WRITES RW_SWITCHES MEM_NOT_ALIGNED MEM_ALIGNMENT FILE_NOT_ALIGNED "
                       "FILE_ALIGNMENT MAX_READ_TIME_SIZE MAX_WRITE_TIME_SIZE")
           + _bins("POSIX", False) + _top4("POSIX", "STRIDE") + _top4("POSIX", "ACCESS")
           + _ranks("POSIX"), _io_floats("POSIX")),
    Module("MPI-IO", 2, 3, "MPIIO",
           _p("MPIIO", "INDEP_OPENS COLL_OPENS INDEP_READS INDEP_WRITES COLL_READS COLL_WRITES "
                       "SPLIT_READS SPLIT_WRITES NB_READS NB_WRITES SYNCS HINTS VIEWS MODE "
                       "BYTES_READ BYTES_WRITTEN RW_SWITCHES MAX_READ_TIME_SIZE MAX_WRITE_TIME_SIZE")
           + _bins("MPIIO", True) + _top4("MPIIO", "ACCESS") + _ranks("MPIIO"),
           _io_floats("MPIIO")),
    Module("H5F", 3, 3, "H5F", _p("H5F", "OPENS FLUSHES USE_MPIIO"),
           _stamps("H5F", ("OPEN", "CLOSE")) + ["H5F_F_META_TIME"]),
    Module("H5D", 4, 2, "H5D",
           _p("H5D", "OPENS READS WRITES FLUSHES BYTES_READ BYTES_WRITTEN RW_SWITCHES "
                     "REGULAR_HYPERSLAB_SELECTS IRREGULAR_HYPERSLAB_SELECTS POINT_SELECTS "
                     "MAX_READ_TIME_SIZE MAX_WRITE_TIME_SIZE")
           + _bins("H5D", True) + _top4_dims("H5D")
           + _p("H5D", "DATASPACE_NDIMS DATASPACE_NPOINTS DATATYPE_SIZE CHUNK_SIZE_D1 "
                       "CHUNK_SIZE_D2 CHUNK_SIZE_D3 CHUNK_SIZE_D4 CHUNK_SIZE_D5 "
                       "USE_MPIIO_COLLECTIVE USE_DEPRECATED") + _ranks("H5D"),
           _io_floats("H5D"), file_rec_id=True),
    Module("PNETCDF_FILE", 5, 3, "PNETCDF_FILE",
           _p("PNETCDF_FILE", "CREATES OPENS REDEFS INDEP_WAITS COLL_WAITS SYNCS BYTES_READ "
                              "BYTES_WRITTEN WAIT_FAILURES"),
           _stamps("PNETCDF_FILE", ("OPEN", "CLOSE", "WAIT"))
           + ["PNETCDF_FILE_F_META_TIME", "PNETCDF_FILE_F_WAIT_TIME"]),
    Module("PNETCDF_VAR", 6, 1, "PNETCDF_VAR",
           _p("PNETCDF_VAR", "OPENS INDEP_READS INDEP_WRITES COLL_READS COLL_WRITES NB_READS "
                             "NB_WRITES BYTES_READ BYTES_WRITTEN RW_SWITCHES")
           + _p("PNETCDF_VAR", " ".join(_PNC_APIS))
           + _p("PNETCDF_VAR", "MAX_READ_TIME_SIZE MAX_WRITE_TIME_SIZE")
           + _bins("PNETCDF_VAR", True) + _top4_dims("PNETCDF_VAR")
           + _p("PNETCDF_VAR", "NDIMS NPOINTS DATATYPE_SIZE IS_RECORD_VAR") + _ranks("PNETCDF_VAR"),
           _io_floats("PNETCDF_VAR"), file_rec_id=True),
    Module("STDIO", 9, 2, "STDIO",
           _p("STDIO", "OPENS FDOPENS READS WRITES SEEKS FLUSHES BYTES_WRITTEN BYTES_READ "
                       "MAX_BYTE_READ MAX_BYTE_WRITTEN") + _ranks("STDIO"),
           _p("STDIO", "F_META_TIME F_WRITE_TIME F_READ_TIME")
           + _stamps("STDIO", ("OPEN", "CLOSE", "WRITE", "READ"))
           + _p("STDIO", "F_FASTEST_RANK_TIME F_SLOWEST_RANK_TIME F_VARIANCE_RANK_TIME "
                         "F_VARIANCE_RANK_BYTES")),
]
# LUSTRE records: id, rank, i64 components, i64 stripes, then per component 7 i64
# (stripe size, stripe count, pattern, flags, extent start, extent end, mirror id) and
# a 16-byte pool name, then one i64 OST id per stripe
LUSTRE_ID, LUSTRE_VERSION = 8, 2

# Darshan fields filled from an iochar counter of another name.
RENAMED = {"PNETCDF_VAR_INDEP_READS": "PNETCDF_VAR_INDEP_GETS",
           "PNETCDF_VAR_INDEP_WRITES": "PNETCDF_VAR_INDEP_PUTS",
           "PNETCDF_VAR_COLL_READS": "PNETCDF_VAR_COLL_GETS",
           "PNETCDF_VAR_COLL_WRITES": "PNETCDF_VAR_COLL_PUTS",
           "PNETCDF_VAR_NB_READS": "PNETCDF_VAR_NB_GETS",
           "PNETCDF_VAR_NB_WRITES": "PNETCDF_VAR_NB_PUTS"}
# Darshan fields that are a sum of iochar counters: Darshan's POSIX_OPENS counts dup()s
# too (and fileno(), which iochar does not see).
SUMMED = {"POSIX_OPENS": ("POSIX_OPENS", "POSIX_DUPS")}
# Darshan fields whose iochar namesake means something else: left unknown (-1).
DIFFERENT = {
    # Darshan: bytes of the whole file, library metadata I/O included; iochar has no
    # file-level byte counters for PnetCDF
    "PNETCDF_FILE_BYTES_READ", "PNETCDF_FILE_BYTES_WRITTEN",
}

# The value of a field nothing fills: -1 (Darshan's "unknown"), but 0 (Darshan's "none")
# for a record id, where -1 would name the aggregate record (id 2^64 - 1).
UNFILLED = {"POSIX_RENAMED_FROM": 0}


def source(dname: str) -> tuple:
    """The iochar counters (of the same module) whose sum fills Darshan field `dname`;
    () when none can. A name is tried as Darshan spells it, then with the `_AGG_` of
    MPI-IO/H5D/PnetCDF size bins dropped (iochar's bins are the same ones)."""
    if dname in DIFFERENT:
        return ()
    if dname in SUMMED:
        return SUMMED[dname]
    if dname in RENAMED:
        return (RENAMED[dname],)
    return (dname.replace("_SIZE_READ_AGG_", "_SIZE_READ_").replace("_SIZE_WRITE_AGG_", "_SIZE_WRITE_"),)


def mapping(mod: Module, ours: list) -> list:
    """For each of the module's Darshan fields (ints then floats), the tuple of iochar
    columns that fill it, () for -1; `ours` is the iochar module's counter names."""
    have = set(ours)
    out = []
    for d in mod.ints + mod.floats:
        src = source(d)
        out.append(src if src and all(s in have for s in src) else ())
    return out
