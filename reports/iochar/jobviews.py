"""The job page's views beyond the summary: data access by file system, file counts by
kind with their sizes, and the rank x time heatmap's matrix, from plain data (records
DataFrames, the mounts frame, Log.heatmap dicts)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import summary as S

# The layers whose bytes reached the file system (MPI-IO, HDF5 and NetCDF bytes pass
# through POSIX again: adding them would count the same bytes twice).
BOTTOM = ("POSIX", "STDIO")
# Heatmap rows drawn: past this many ranks, neighbouring ranks share a row (summed).
MAX_HEAT_ROWS = 512
# Modules shown as heatmaps, in this order (those the log has)
HEAT_MODULES = ("POSIX", "MPIIO", "STDIO")


def _file_table(df: pd.DataFrame, module: str) -> pd.DataFrame:
    """One row per file (record id): bytes read and written, and its size as the
    largest byte offset touched + 1 (0 when no data was accessed)."""
    n = len(df)
    hi = np.zeros(n)
    for c in (f"{module}_MAX_BYTE_READ", f"{module}_MAX_BYTE_WRITTEN"):
        if c in df.columns:
            v = df[c].to_numpy(dtype=np.float64, na_value=np.nan)
            hi = np.fmax(hi, np.where(np.isfinite(v) & (v >= 0), v + 1, 0))
    f = pd.DataFrame({"record_id": df["record_id"].to_numpy(),
                      "reads": S.concept(df, module, "reads"),
                      "writes": S.concept(df, module, "writes"),
                      "bytes_read": S.concept(df, module, "bytes_read"),
                      "bytes_written": S.concept(df, module, "bytes_written"), "size": hi})
    if not f["record_id"].duplicated().any():
        return f
    g = f.groupby("record_id", sort=False)
    return g[["reads", "writes", "bytes_read", "bytes_written"]].sum().assign(
        size=g["size"].max()).reset_index()


def file_kinds(records: dict) -> list:
    """[{module, kind, files, bytes_read, bytes_written, avg_size, max_size}] per module
    with reads or writes, kinds "all", "read-only", "write-only", "read-write" (a file's
    size: its largest offset accessed + 1, Darshan's MAX_BYTE counters)."""
    out = []
    for m, df in records.items():
        if df is None or not len(df) or m in S.SETTINGS_MODULES or not (
                S.has_concept(df, m, "reads") or S.has_concept(df, m, "writes")):
            continue
        ids = df["record_id"].to_numpy()
        keep = ids != np.uint64(S.AGGREGATE_ID) if ids.dtype.kind == "u" else \
            np.ones(len(df), bool)
        if "path" in df.columns:
            keep &= ~df["path"].isin(S.SPECIAL_PATHS).to_numpy()
        f = _file_table(S.rows(df, keep) if not keep.all() else df, m)
        rd = (f["reads"] > 0) | (f["bytes_read"] > 0)
        wr = (f["writes"] > 0) | (f["bytes_written"] > 0)
        for kind, sel in (("all", rd | wr), ("read-only", rd & ~wr), ("write-only", wr & ~rd),
                          ("read-write", rd & wr)):
            x = f[sel.to_numpy()]
            out.append({"module": m, "kind": kind, "files": len(x),
                        "bytes_read": S.json_value(x["bytes_read"].sum()),
                        "bytes_written": S.json_value(x["bytes_written"].sum()),
                        "avg_size": S.json_value(x["size"].mean()) if len(x) else 0,
                        "max_size": S.json_value(x["size"].max()) if len(x) else 0})
    return out


def _mount_of(paths: np.ndarray, mounts: pd.DataFrame | None) -> tuple:
    """(mount point, type) per distinct path: the longest mount point that is a whole
    prefix of it ("", "" for none, e.g. <STDOUT>). Looked up once per directory: the
    files of one directory are on one mount (unless a path is a mount point itself)."""
    pts = [] if mounts is None or not len(mounts) else sorted(
        zip(mounts["mount_point"].astype(str), mounts["fs_type"].astype(str)),
        key=lambda x: -len(x[0]))
    exact = {point: (point, kind) for point, kind in reversed(pts)}
    seen: dict = {}

    def under(d: str) -> tuple:  # d: a directory with its trailing "/"
        for point, kind in pts:
            if point == "/" and d.startswith("/") or d.startswith(point.rstrip("/") + "/"):
                return (point, kind)
        return ("", "")

    mp, ty = [], []
    for p in paths:
        hit = ("", "")
        if isinstance(p, str):
            hit = exact.get(p) or seen.get(d := p[:p.rfind("/") + 1]) or \
                seen.setdefault(d, under(d))
        mp.append(hit[0])
        ty.append(hit[1])
    return np.array(mp, dtype=object), np.array(ty, dtype=object)


def file_systems(records: dict, mounts: pd.DataFrame | None) -> list:
    """[{mount_point, fs_type, files, bytes_read, bytes_written, reads, writes}]: the
    bottom layers' (POSIX, STDIO) data by the file system each path is on (Darshan's
    "data access by category"), most bytes first; paths on no listed mount (standard
    streams, a log without MOUNTS) under mount point "" ("other")."""
    keys = ("reads", "writes", "bytes_read", "bytes_written")
    mods = [(m, df) for m in BOTTOM if (df := records.get(m)) is not None and len(df)
            and "path" in df.columns]
    if not mods:
        return []
    # numpy object arrays, not a DataFrame: pandas' Arrow strings refuse names that are
    # not UTF-8 (surrogate-escaped bytes)
    paths = np.concatenate([S.objects(df, "path") for _, df in mods])
    vals = {k: np.concatenate([np.asarray(S.concept(df, m, k), np.float64) for m, df in mods])
            for k in keys}
    codes, uniq = pd.factorize(paths, sort=False)
    mp, ty = _mount_of(np.asarray(uniq, dtype=object), mounts)
    per_path = {k: np.bincount(codes, weights=vals[k], minlength=len(uniq)) for k in keys}
    per_path["files"] = np.ones(len(uniq))  # one per distinct path
    # group the paths by (mount point, type): integer codes, no strings in pandas
    cm, um = pd.factorize(mp, sort=False)
    ct, ut = pd.factorize(ty, sort=False)
    g = cm * max(len(ut), 1) + ct
    sums = {k: np.bincount(g, weights=v, minlength=len(um) * max(len(ut), 1))
            for k, v in per_path.items()}
    out = [{"mount_point": um[i // max(len(ut), 1)], "fs_type": ut[i % max(len(ut), 1)],
            **{k: int(round(sums[k][i])) for k in ("files", *keys)}}
           for i in np.flatnonzero(sums["files"] > 0)]
    out.sort(key=lambda r: (-(r["bytes_read"] + r["bytes_written"]), r["mount_point"]))
    return out


def heat_matrix(heat: dict, nprocs: int) -> dict:
    """A heatmap dict (Log.heatmap) as the matrix drawn: bytes (read + written) of
    each rank row and time bin, rows of `per_row` neighbouring ranks summed when there
    are more ranks than MAX_HEAT_ROWS. {"bytes": (rows, bins), "per_row", "width",
    "nranks", "read", "written"}."""
    ranks = np.asarray(heat["ranks"], dtype=np.int64)
    both = np.asarray(heat["bytes_read"], np.float64) + np.asarray(heat["bytes_written"],
                                                                    np.float64)
    n = max(int(nprocs or 0), int(ranks.max()) + 1 if len(ranks) else 1, 1)
    per = -(-n // MAX_HEAT_ROWS)
    rows = -(-n // per)
    m = np.zeros((rows, both.shape[1] if both.ndim == 2 else 0))
    if len(ranks):
        np.add.at(m, ranks // per, both)
    return {"bytes": m, "per_row": per, "width": float(heat["width"]), "nranks": n,
            "read": int(np.asarray(heat["bytes_read"]).sum()),
            "written": int(np.asarray(heat["bytes_written"]).sum())}


def heat_from_trace(trace: pd.DataFrame, run_time: float, nbins: int = 64) -> dict:
    """{module: heatmap dict} from trace segments (a Darshan log's DXT, when it has no
    HEATMAP module): each segment's bytes in the bin of its start, nbins bins over the
    run (or over the last segment's end when the run time is unknown)."""
    out: dict = {}
    if trace is None or not len(trace):
        return out
    end = float(np.nanmax(trace["end"].to_numpy(np.float64)))
    span = max(float(run_time or 0), end if np.isfinite(end) else 0.0, 1e-9)
    width = span / nbins
    for m in HEAT_MODULES:
        t = trace[(trace["module"] == m) & (trace["length"] > 0)]
        if not len(t):
            continue
        rk = t["rank"].to_numpy(np.int64)
        ranks, row = np.unique(rk, return_inverse=True)
        col = np.clip((t["start"].to_numpy(np.float64) / width).astype(np.int64), 0, nbins - 1)
        n = t["length"].to_numpy(np.float64)
        bins = {}
        for op in ("read", "write"):
            sel = (t["op"] == op).to_numpy()
            b = np.zeros((len(ranks), nbins))
            np.add.at(b, (row[sel], col[sel]), n[sel])
            bins[op] = b.astype(np.int64)
        out[m] = {"width": width, "ranks": ranks, "bytes_read": bins["read"],
                  "bytes_written": bins["write"]}
    return out
