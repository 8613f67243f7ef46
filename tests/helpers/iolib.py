"""Helpers for the HDF5/NetCDF/PnetCDF tests: totals per record over every log
a run left (one reduced log per MPI job, or one log per process without it)."""

import pandas as pd

import iochar
from tool import logs_in

BINS = ["0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M",
        "10M_100M", "100M_1G", "1G_PLUS"]


def frames(logdir, module, name_part=""):
    """Rows of module from every log in logdir whose file name contains name_part."""
    dfs = []
    for p in logs_in(logdir):
        if name_part in p.name:
            log = iochar.open(str(p))
            if module in log.modules:
                dfs.append(log.records(module))
    assert dfs, f"no {module} records in {list(logs_in(logdir))}"
    return pd.concat(dfs, ignore_index=True)


def totals(df, path_suffix):
    """One record's counters: sums of counts and bytes, max of settings."""
    rows = df[df["path"].str.endswith(path_suffix)]
    assert len(rows), (path_suffix, sorted(set(df["path"])))
    out = {}
    for c in df.columns[3:]:
        settings = ("NDIMS", "NPOINTS", "DATATYPE_SIZE", "CHUNK_SIZE", "LAYOUT", "FILTERS",
                    "USE_MPIIO", "ALIGNMENT", "COLL_METADATA", "FORMAT", "IS_RECORD_VAR",
                    "DEFLATE_LEVEL", "ACCESS1_ACCESS", "ACCESS2_ACCESS", "ACCESS3_ACCESS",
                    "ACCESS4_ACCESS")
        out[c] = rows[c].max() if any(s in c for s in settings) else rows[c].sum()
    return out


def expect(t, **want):
    """Assert exact counters: expect(t, H5D_OPENS=2, ...); a name ending in
    _WRITE/_READ with a dict value checks the size bins (others must be 0)."""
    bad = {k: (t[k], v) for k, v in want.items() if t[k] != v}
    assert not bad, f"got != expected: {bad}"


def bins(t, prefix, rw, nonzero):
    """The size bins of one direction are exactly `nonzero` (bin -> count)."""
    got = {b: t[f"{prefix}_SIZE_{rw}_{b}"] for b in BINS if t[f"{prefix}_SIZE_{rw}_{b}"]}
    assert got == nonzero, (prefix, rw, got)


def top4(t, prefix, pairs):
    """The ACCESS top-4 table is exactly pairs [(value, count), ...] in order."""
    got = [(t[f"{prefix}_ACCESS{i}_ACCESS"], t[f"{prefix}_ACCESS{i}_COUNT"]) for i in range(1, 5)]
    assert got == pairs + [(0, 0)] * (4 - len(pairs)), got
