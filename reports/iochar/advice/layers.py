"""Which layer owns each file, what each layer did to it, and the job's I/O time.

A file that HDF5, NetCDF, PnetCDF or MPI-IO opened is that library's: the POSIX
traffic under it is the library's doing, so rules judge the application at the
highest layer it used and show the lower layers as evidence (amplification).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import summary as S
from ..frames import text_column

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


# A file's name says which library wrote it when the log has no module for that library
# (Darshan logs before HDF5 support, HDF5's sec2 or MPI-IO drivers under an untraced
# library): a remedy then names the library's call, not the MPI-IO or POSIX one under it.
SUFFIX_LAYER = {".h5": "HDF5", ".hdf5": "HDF5", ".he5": "HDF5", ".hdf": "HDF5",
                ".nc": "NetCDF", ".nc4": "NetCDF", ".cdf": "NetCDF"}


def by_name(paths, owners) -> np.ndarray:
    """Each file's owning layer, raised to HDF5/NetCDF by its name's suffix where the
    owner is MPI-IO or POSIX (the layers a library's file shows at without its module)."""
    owners = np.asarray(owners, dtype=object).copy()
    low = (owners == "MPIIO") | (owners == "POSIX")
    if not low.any():
        return owners
    paths = np.asarray(paths, dtype=object)
    for i in np.flatnonzero(low).tolist():  # str methods: a pandas .str call costs ~0.1 ms
        name = paths[i].lower() if isinstance(paths[i], str) else ""
        if name.endswith(_SUFFIXES):
            owners[i] = next(layer for suffix, layer in SUFFIX_LAYER.items()
                             if name.endswith(suffix))
    return owners


_SUFFIXES = tuple(SUFFIX_LAYER)


def file_of(paths: np.ndarray, files: set) -> np.ndarray:
    """Map dataset/variable record names (`<file>:<name>`) to their file's path."""
    if not files:  # no file to map to: every name is its own (str) path
        if pd.api.types.infer_dtype(paths, skipna=False) == "string":
            return np.array(paths, dtype=object, copy=True)
        return np.array([str(p) for p in paths], dtype=object)
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


def table(ctx) -> S.Table:
    """One row per (file path, layer): the METRICS summed over ranks, plus `nranks`
    (ranks that used it at that layer; nprocs for a record reduced over ranks)."""
    return table_codes(ctx)[0]


COLUMNS = ("path", "layer", *METRICS, "nranks")


def table_codes(ctx) -> tuple:
    """(table(ctx), its path_codes when computed on the way, else None)."""
    parts = []
    file_paths = set()
    for m in ("NC_FILE", "PNETCDF_FILE", "H5F"):
        file_paths |= ctx.paths_in(m)
    for module, layer in LAYER_OF.items():
        df = ctx.frame(module)
        if df is None or "path" not in df.columns:
            continue
        f = ctx.files(module)
        keep = S.column(f, "record_id") != S.AGGREGATE_ID
        if not keep.any():
            continue
        paths = S.objects(f, "path")[keep]
        if module in ("H5D", "NC_VAR", "PNETCDF_VAR"):
            paths = file_of(paths, file_paths)
        nranks = np.where(S.column(f, "shared_row"), ctx.nprocs, S.column(f, "nranks"))[keep]
        parts.append({"path": paths, "layer": np.full(len(paths), layer, dtype=object),
                      **{k: S.column(f, k)[keep] for k in METRICS}, "nranks": nranks})
    if not parts:
        return S.Table({k: np.empty(0, object if k in ("path", "layer") else np.float64)
                        for k in COLUMNS}), None
    # one table from the parts' columns (what pd.concat of one frame per part gives)
    cols = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    cols["path"] = np.asarray(cols["path"], dtype=object)  # str objects, as every path column
    paths = cols["path"]
    codes, uniq = pd.factorize(paths, use_na_sentinel=False)
    rank = {name: i for i, (name, _) in enumerate(LAYERS)}
    lcodes = np.concatenate([np.full(len(p["path"]), rank[p["layer"][0]]) for p in parts])
    if S.all_distinct(codes * len(LAYERS) + lcodes) and \
            pd.api.types.infer_dtype(paths, skipna=False) == "string":
        # one row per (path, layer) already: what the groupby would give
        return S.Table(cols), (codes, np.asarray(uniq, dtype=object))
    # grouped by (the name's bytes, layer), groups in first-seen order: a path that is
    # not UTF-8 (surrogateescape) cannot be a pandas group key
    key = text_column([p.encode("utf-8", "surrogateescape") if isinstance(p, str) else p
                       for p in paths]).to_numpy()
    group = pd.factorize(key, use_na_sentinel=False)[0] * len(LAYERS) + lcodes
    group = pd.factorize(group)[0]  # 0, 1, ... in first-seen order
    _, first = np.unique(group, return_index=True)  # each group's first row
    # sums by pandas' grouped sum (compensated: what a per-column agg gives)
    sums = pd.DataFrame({k: cols[k] for k in METRICS}).groupby(group, sort=False).sum()
    nranks = cols["nranks"][first]
    np.maximum.at(nranks, group, cols["nranks"])
    return S.Table({"path": paths[first], "layer": cols["layer"][first],
                    **{k: S.column(sums, k) for k in METRICS}, "nranks": nranks}), None


def path_codes(t: pd.DataFrame) -> tuple:
    """(code of each row's path, the distinct paths in first-seen order)."""
    codes, uniq = pd.factorize(S.objects(t, "path"), use_na_sentinel=False)
    return codes, np.asarray(uniq, dtype=object)


def path_index(paths) -> pd.Index:
    """An object Index of paths: pandas would infer its Arrow-backed str dtype, which
    refuses the surrogates of names that are not UTF-8."""
    return pd.Index(np.asarray(paths if not isinstance(paths, (set, frozenset)) else list(paths),
                               dtype=object), dtype=object)


def owner_arrays(t: pd.DataFrame, codes: tuple | None = None) -> tuple:
    """(paths, the highest layer that touched each, that layer per path code): the
    first row of each path in layer order (a stable sort: ties keep table order),
    paths in the order they first appear in that sorted order."""
    if not len(t):
        return np.empty(0, object), np.empty(0, object), np.empty(0, object)
    codes, uniq = codes or path_codes(t)
    layers = S.objects(t, "layer")
    rank = {name: i for i, (name, _) in enumerate(LAYERS)}
    lcodes, lnames = pd.factorize(layers, use_na_sentinel=False)
    order = np.argsort(np.array([rank[x] for x in lnames], np.int64)[lcodes], kind="stable")
    _, first = np.unique(codes[order], return_index=True)
    by_code = layers[order[first]]  # np.unique's codes come sorted: 0, 1, ...
    first = order[np.sort(first)]
    return uniq[codes[first]], layers[first], by_code


def owners(t: pd.DataFrame) -> pd.Series:
    """path -> the highest layer that touched it."""
    if not len(t):
        return pd.Series(dtype=object)
    paths, layers, _ = owner_arrays(t)
    return pd.Series(layers, index=pd.Index(paths, name="path", dtype=t["path"].dtype),
                     name="layer")  # str dtype inferred, as a frame column gets


def owner_map(t: pd.DataFrame) -> dict:
    """owners(t) as a dict, in the same order."""
    paths, layers, _ = owner_arrays(t)
    return dict(zip(paths.tolist(), layers.tolist()))


def file_time(t, codes: tuple | None = None) -> np.ndarray:
    """I/O seconds (summed over ranks) of each distinct path (path_codes' order): the
    largest layer's time, since an upper layer's time includes the calls it makes below."""
    return max_by_path(t, S.column(t, "time"), codes)


def max_by_path(t, v: np.ndarray, codes: tuple | None = None) -> np.ndarray:
    """groupby("path", sort=False).max() of values of the table's rows, as an array of
    the distinct paths (path_codes' order); NaN only where every value is."""
    codes, uniq = codes or path_codes(t)
    v = np.asarray(v, dtype=np.float64)
    if len(uniq) == len(v):  # one row per path (codes then count up from 0)
        return v
    out = np.full(len(uniq), -np.inf)
    np.fmax.at(out, codes, v)  # fmax: NaN skipped
    out[np.bincount(codes, ~np.isnan(v), len(uniq)) == 0] = np.nan
    return out


def evidence(t: pd.DataFrame, paths, codes: tuple | None = None,
             index: pd.Index | None = None) -> dict:
    """{layer: {ops, bytes_read, bytes_written, ...}} over these files (nonzero only).
    codes, index: path_codes(t) and path_index of its distinct paths, when known."""
    if codes is None:
        codes = path_codes(t)
        index = None
    index = path_index(codes[1]) if index is None else index
    at = index.get_indexer(path_index(set(paths))) if len(index) else np.empty(0, np.int64)
    hit = np.zeros(len(index), bool)
    hit[at[at >= 0]] = True
    sel = hit[codes[0]]
    layers = S.objects(t, "layer")
    out = {}
    for layer, _ in LAYERS:
        rows = sel & (layers == layer)
        if not rows.any():
            continue
        d = {k: S.column(t, c)[rows].sum() for k, c in (
            ("reads", "reads"), ("writes", "writes"), ("bytes_read", "bytes_read"),
            ("bytes_written", "bytes_written"), ("time_s", "time"))}
        d["files"] = int(rows.sum())
        out[layer] = {k: S.json_value(v) for k, v in d.items() if v}
    return out
