"""Which layer owns each file, what each layer did to it, and the job's I/O time.

A file that HDF5, NetCDF, PnetCDF or MPI-IO opened is that library's: the POSIX
traffic under it is the library's doing, so rules judge the application at the
highest layer it used and show the lower layers as evidence (amplification).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import summary as S
from ..log import text_column

# Layers from the highest to the lowest, with the modules that make each one.
# NetCDF-4 files reach HDF5 and PnetCDF files reach MPI-IO underneath: the first
# layer listed that touched a file owns it.
LAYERS = (("NetCDF", ("NC_FILE", "NC_VAR")), ("PnetCDF", ("PNETCDF_FILE", "PNETCDF_VAR")),
          ("HDF5", ("H5F", "H5D")), ("MPIIO", ("MPIIO",)), ("STDIO", ("STDIO",)),
          ("POSIX", ("POSIX",)))
LAYER_OF = {m: name for name, mods in LAYERS for m in mods}
DATA_MODULE = {"NetCDF": "NC_VAR", "PnetCDF": "PNETCDF_VAR", "HDF5": "H5D", "MPIIO": "MPIIO",
               "STDIO": "STDIO", "POSIX": "POSIX"}
FILE_MODULE = {"NetCDF": "NC_FILE", "PnetCDF": "PNETCDF_FILE", "HDF5": "H5F"}
METRICS = ("opens", "reads", "writes", "bytes_read", "bytes_written", "time")


def file_of(paths: np.ndarray, files: set) -> np.ndarray:
    """Map dataset/variable record names (`<file>:<name>`) to their file's path."""
    out = []
    for p in paths:
        p = str(p)
        f = p
        i = len(p)
        while True:
            i = p.rfind(":", 0, i)
            if i <= 0:
                break
            if p[:i] in files:
                f = p[:i]
                break
        out.append(f)
    return np.array(out, dtype=object)


def table(ctx) -> pd.DataFrame:
    """One row per (file path, layer): the METRICS summed over ranks, plus `nranks`
    (ranks that used it at that layer; nprocs for a record reduced over ranks)."""
    parts = []
    file_paths = set()
    for m in ("NC_FILE", "PNETCDF_FILE", "H5F"):
        file_paths |= ctx.paths_in(m)
    for module, layer in LAYER_OF.items():
        df = ctx.frame(module)
        if df is None or "path" not in df.columns:
            continue
        f = ctx.files(module)
        f = f[f["record_id"] != S.AGGREGATE_ID]
        if not len(f):
            continue
        paths = f["path"].to_numpy()
        if module in ("H5D", "NC_VAR", "PNETCDF_VAR"):
            paths = file_of(paths, file_paths)
        nranks = np.where(f["shared_row"].to_numpy(), ctx.nprocs, f["nranks"].to_numpy())
        parts.append(pd.DataFrame({
            "path": text_column(paths), "layer": layer, "opens": f["opens"].to_numpy(),
            "reads": f["reads"].to_numpy(), "writes": f["writes"].to_numpy(),
            "bytes_read": f["bytes_read"].to_numpy(), "bytes_written": f["bytes_written"].to_numpy(),
            "time": f["time"].to_numpy(), "nranks": nranks}))
    if not parts:
        return pd.DataFrame(columns=["path", "layer", *METRICS, "nranks"])
    t = pd.concat(parts, ignore_index=True)
    agg = {k: "sum" for k in METRICS}
    agg["nranks"] = "max"
    agg["path"] = "first"
    # grouped by the name's bytes: a path that is not UTF-8 (surrogateescape) cannot be
    # a pandas group key
    t["key"] = text_column([p.encode("utf-8", "surrogateescape") if isinstance(p, str) else p
                            for p in t["path"]])
    g = t.groupby(["key", "layer"], sort=False).agg(agg).reset_index()
    return g[["path", "layer", *METRICS, "nranks"]]


def owners(t: pd.DataFrame) -> pd.Series:
    """path -> the highest layer that touched it."""
    order = {name: i for i, (name, _) in enumerate(LAYERS)}
    if not len(t):
        return pd.Series(dtype=object)
    k = t.assign(o=t["layer"].map(order)).sort_values("o", kind="stable")
    return k.drop_duplicates("path").set_index("path")["layer"]


def file_time(t: pd.DataFrame) -> pd.Series:
    """path -> I/O seconds (summed over ranks): the largest layer's time, since an
    upper layer's time includes the calls it makes below."""
    if not len(t):
        return pd.Series(dtype=float)
    return t.groupby("path", sort=False)["time"].max()


def evidence(t: pd.DataFrame, paths) -> dict:
    """{layer: {ops, bytes_read, bytes_written, ...}} over these files (nonzero only)."""
    sub = t[t["path"].isin(set(paths))]
    out = {}
    for layer, _ in LAYERS:
        rows = sub[sub["layer"] == layer]
        if not len(rows):
            continue
        d = {"reads": rows["reads"].sum(), "writes": rows["writes"].sum(),
             "bytes_read": rows["bytes_read"].sum(), "bytes_written": rows["bytes_written"].sum(),
             "time_s": rows["time"].sum(), "files": len(rows)}
        out[layer] = {k: S._py(v) for k, v in d.items() if v}
    return out
