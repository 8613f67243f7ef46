"""Job summary: per-module files, ops, bytes, times, patterns, sizes and top files.

Reporters take plain data (the job dict and one records DataFrame per module, as
`iochar.Log.records` returns them), never paths, so they are testable on hand-built
frames. Everything is vectorized: a 1,000,000-record frame summarizes in about a second.
"""

from __future__ import annotations

import functools
import math
import re

import numpy as np
import pandas as pd

from . import schema as R
from .program import program_of

# The summary's concepts and the counter each is named by: <MOD>_<suffix> (POSIX_READS,
# MPIIO_F_READ_TIME...). Which counters are totals, times, bins... comes from the log's
# schema (iochar/schema.py); which total is "the reads" is a reading of the names, and
# only the modules whose names depart from the rule are listed below.
CONCEPT_SUFFIX = {"opens": "OPENS", "reads": "READS", "writes": "WRITES", "seeks": "SEEKS",
                  "stats": "STATS", "syncs": "SYNCS", "bytes_read": "BYTES_READ",
                  "bytes_written": "BYTES_WRITTEN", "time_read": "F_READ_TIME",
                  "time_write": "F_WRITE_TIME", "time_meta": "F_META_TIME"}
CONCEPTS = tuple(CONCEPT_SUFFIX)
# Departures from the rule: "A+B" sums columns; "X|A+B" takes the first alternative that
# has a column present; "" is a concept the module does not count. Missing columns
# count as zero, so a log from an older or newer tool still works.
DEPARTURES: dict[str, dict[str, str]] = {
    "POSIX": {"syncs": "POSIX_FSYNCS+POSIX_FDSYNCS"},
    "STDIO": {"syncs": "STDIO_FLUSHES"},
    "MPIIO": {"opens": "MPIIO_INDEP_OPENS+MPIIO_COLL_OPENS",
              "reads": "MPIIO_INDEP_READS+MPIIO_COLL_READS+MPIIO_SPLIT_READS+MPIIO_NB_READS",
              "writes": "MPIIO_INDEP_WRITES+MPIIO_COLL_WRITES+MPIIO_SPLIT_WRITES+MPIIO_NB_WRITES"},
    "H5F": {"syncs": "H5F_FLUSHES"},
    "H5D": {"syncs": "H5D_FLUSHES"},
    "NC_FILE": {"opens": "NC_FILE_CREATES+NC_FILE_OPENS"},
    "NC_VAR": {"reads": "NC_VAR_GETS", "writes": "NC_VAR_PUTS"},
    "PNETCDF_FILE": {"opens": "PNETCDF_FILE_CREATES+PNETCDF_FILE_OPENS"},
    # a Darshan log's PNETCDF_VAR_OPENS counts variables, not files: opens are PNETCDF_FILE's
    "PNETCDF_VAR": {"opens": "",
                    "reads": "PNETCDF_VAR_GETS|PNETCDF_VAR_INDEP_GETS+PNETCDF_VAR_COLL_GETS",
                    "writes": "PNETCDF_VAR_PUTS|PNETCDF_VAR_INDEP_PUTS+PNETCDF_VAR_COLL_PUTS"},
}
SPECIAL_PATHS = ("<STDIN>", "<STDOUT>", "<STDERR>")
# Modules that describe files rather than count I/O (Lustre striping, from Darshan
# logs): the advice reads them, the per-module I/O summary leaves them out.
SETTINGS_MODULES = ("LUSTRE",)
AGGREGATE_ID = 0xFFFFFFFFFFFFFFFF


def counter_map(module: str) -> dict[str, str]:
    """The module's concept->counter expressions: <MOD>_<suffix> unless it departs."""
    out = {c: f"{module}_{suffix}" for c, suffix in CONCEPT_SUFFIX.items()}
    out.update(DEPARTURES.get(module, {}))
    return out


class Table:
    """Named numpy columns of one length: the per-log tables the advice derives (the
    layer table), read through column(), col() and objects() as a frame is. A pandas
    frame costs ~100 us to build whatever its size, which on a typical log's few
    files is most of the work."""

    def __init__(self, cols: dict):
        self._cols = cols
        self.columns = list(cols)
        self._len = len(next(iter(cols.values()))) if cols else 0

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, name: str) -> np.ndarray:
        return self._cols[name]

    def frame(self) -> pd.DataFrame:
        """As a DataFrame (for a merge or join); object columns stay Python objects
        (paths may hold non-UTF-8 bytes, which pandas' Arrow-backed str refuses)."""
        idx = pd.RangeIndex(self._len)
        return pd.DataFrame({k: _text(v, idx) if v.dtype == object else v
                             for k, v in self._cols.items()})


def column(df: pd.DataFrame | Table, name: str):
    """A present column's values (numpy, or pandas' array for strings) without building
    a Series: on the small frames of a typical log, pandas' per-Series cost (~20 us)
    is most of a report's time. Read-only: copy before changing."""
    if isinstance(df, Table):
        return df[name]
    if _COLUMN_ARRAY:
        cache = _views(df)
        v = cache.get(name)  # None: not read yet, or absent (get_loc raises KeyError)
        if v is None:
            loc = df.columns.get_loc(name)
            if isinstance(loc, int):
                v = df._get_column_array(loc)
                if isinstance(v, np.ndarray):  # extension arrays (nullable, str) below
                    cache[name] = v
                    return v
        else:
            return v
    return df[name].to_numpy()


def _views(df: pd.DataFrame) -> dict:
    """The frame's {name: numpy view of a column (None: no such column)} read so far.
    A report reads the same few counters of a frame hundreds of times, and pandas'
    lookup is most of each read. Views, not copies: a value written in place shows
    through them; the cache is dropped when the frame's columns or blocks change (a
    column set, added or renamed, a dtype changed), which replaces those objects. Kept
    on the frame itself (not propagated to frames derived from it), so it lives and
    dies with the frame."""
    mgr = df._mgr
    key = getattr(df, "_iochar_views", None)
    if key is None or key[0] is not mgr or key[1] is not mgr.blocks or \
            key[2] is not df.columns:
        key = (mgr, mgr.blocks, df.columns, {})
        object.__setattr__(df, "_iochar_views", key)
    return key[3]


def rows(df: pd.DataFrame, keep: np.ndarray) -> pd.DataFrame:
    """df[keep], or df itself when every row is kept (the common case: a boolean
    filter costs pandas about a millisecond even on a few rows). Treat as read-only."""
    return df if keep.all() else df[keep]


def objects(df: pd.DataFrame, name: str = "path") -> np.ndarray:
    """A column as a numpy object array (Python str for a str column): iterating it is
    fast, unlike pandas' Arrow-backed strings, which build each element on access."""
    if isinstance(df, Table):
        return np.asarray(df[name], dtype=object)
    if _COLUMN_ARRAY:
        loc = df.columns.get_loc(name)
        if isinstance(loc, int):  # pandas' own array (Arrow strings) converts in one call
            return np.asarray(df._get_column_array(loc), dtype=object)
    return np.asarray(df[name].to_numpy(), dtype=object)


# DataFrame._get_column_array (pandas >= 1.3) returns a column's array directly;
# without it (a future pandas) column() takes the public, slower path.
_COLUMN_ARRAY = hasattr(pd.DataFrame, "_get_column_array")


def col(df: pd.DataFrame, name: str) -> np.ndarray:
    """One column as float64, zeros when the log does not carry it."""
    if not _has(df, name):
        return np.zeros(len(df))
    v = column(df, name)
    if v.dtype.kind in "iu":  # the common case, without pandas' NA scan
        return v.astype(np.float64)
    if v.dtype.kind == "f":  # NaN (an unknown) as 0 (np.nan_to_num costs ~14 us)
        v = v.copy()
        v[np.isnan(v)] = 0.0
        return v
    return df[name].to_numpy(dtype=np.float64, na_value=0.0)


def _has(df, name: str) -> bool:
    """name in df.columns, remembered with the frame's column views (absent: None)."""
    if isinstance(df, pd.DataFrame) and _COLUMN_ARRAY:
        cache = _views(df)
        if name in cache:
            return cache[name] is not None
        if name in df.columns:
            return True
        cache[name] = None
        return False
    return name in df.columns


def expr(df: pd.DataFrame, spec: str | None) -> np.ndarray:
    """Evaluate a counter expression of counter_map ("A+B", "X|A+B")."""
    if not spec:
        return np.zeros(len(df))
    alternatives = spec.split("|")
    for alt in alternatives:
        names = alt.split("+")
        if any(_has(df, n) for n in names) or alt is alternatives[-1]:
            out = np.zeros(len(df))
            for n in names:
                if _has(df, n):
                    out = out + col(df, n)
            return out
    return np.zeros(len(df))


def _spec(module: str, name: str) -> str | None:
    """counter_map(module).get(name), the map built once per module (a report asks
    ~10^4 times)."""
    return _counter_map(module).get(name)


@functools.cache
def _counter_map(module: str) -> dict[str, str]:
    return counter_map(module)  # shared: read, never changed


def concept(df: pd.DataFrame, module: str, name: str) -> np.ndarray:
    return expr(df, _spec(module, name))


def has_concept(df: pd.DataFrame, module: str, name: str) -> bool:
    spec = _spec(module, name) or ""
    return any(n in df.columns for n in re.split(r"[+|]", spec) if n)


def json_value(v):
    """numpy scalars -> plain Python for JSON."""
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        f = float(v)
        if not math.isfinite(f):
            return None
        return int(f) if f.is_integer() and abs(f) < 2**53 else round(f, 6)
    return v


def _int(v) -> int:
    return round(float(v))


def job_block(job: dict) -> dict:
    out = {k: json_value(v) for k, v in job.items()}
    start, end = job.get("start_time"), job.get("end_time")
    run = float(end) - float(start) if start is not None and end is not None else 0.0
    out["run_time"] = round(max(run, 0.0), 6)
    out.setdefault("nprocs", 1)
    out["program"], out["interpreter"] = program_of(job)  # a script's name (program.py)
    return out


def has_bins(df: pd.DataFrame, module: str) -> bool:
    return bool(R.size_bins(df.columns, module))


def size_histogram(df: pd.DataFrame, module: str) -> dict:
    """{"read": {bin: count}, "write": {bin: count}} summed over all records, over the
    bins the log names (smallest first)."""
    bins = R.size_bins(df.columns, module)
    return {d.lower(): {b: _int(col(df, f"{module}_SIZE_{d}_{b}").sum()) for b in bins}
            for d in ("READ", "WRITE")}


def top_sizes(df: pd.DataFrame, module: str, k: int = 4, table: str = "ACCESS") -> list[dict]:
    """The k most common access sizes: top-4 tables merged by value (counts added)."""
    vals, cnts = [], []
    for i in range(1, 5):
        v, c = f"{module}_{table}{i}_{table}", f"{module}_{table}{i}_COUNT"
        if v in df.columns and c in df.columns:
            vals.append(col(df, v))
            cnts.append(col(df, c))
    if not vals:
        return []
    v, c = np.concatenate(vals), np.concatenate(cnts)
    keep = c > 0
    if not keep.any():
        return []
    # counts summed per size (sizes ascending), then the largest counts first; ties
    # keep the smaller size first (what a pandas groupby + stable sort gives)
    # (hashed, then the few distinct sizes sorted: np.unique sorts every value)
    codes, uniq = pd.factorize(v[keep] + 0.0, use_na_sentinel=False)  # -0.0 is 0.0
    order = np.argsort(uniq, kind="stable")
    sizes, rank = uniq[order], np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    sums = np.bincount(rank[codes], weights=c[keep], minlength=len(sizes))
    order = np.argsort(-sums, kind="stable")[:k]
    return [{"size": _int(sizes[i]), "count": _int(sums[i])} for i in order]


def pattern(df: pd.DataFrame, module: str, reads, writes) -> dict | None:
    """Sequential (includes consecutive) / consecutive / random shares per direction."""
    if f"{module}_SEQ_READS" not in df.columns and f"{module}_SEQ_WRITES" not in df.columns:
        return None
    out = {}
    for d, ops in (("read", reads), ("write", writes)):
        key = "READS" if d == "read" else "WRITES"
        seq = col(df, f"{module}_SEQ_{key}").sum()
        con = col(df, f"{module}_CONSEC_{key}").sum()
        n = float(ops.sum())
        # a file's first access is neither sequential nor random (by definition
        # it follows nothing): one per record is left out of the random share
        first = float((np.asarray(ops) > 0).sum())
        out[d] = {"ops": _int(n), "sequential": json_value(seq / n if n else 0.0),
                  "consecutive": json_value(con / n if n else 0.0),
                  "random": json_value(max(n - seq - first, 0.0) / n if n else 0.0)}
    return out


def all_distinct(v: np.ndarray) -> bool:
    """No value twice. Sorted and compared: numpy's hash-based np.unique takes ~2 s on a
    million random 64-bit record ids, a sort ~20 ms."""
    if len(v) < 2:
        return True
    if v.dtype.kind not in "iub":
        return len(np.unique(v)) == len(v)
    s = np.sort(v)
    return not (s[1:] == s[:-1]).any()


def per_file(df: pd.DataFrame, module: str) -> Table:
    """One row per file (record_id): summed ops/bytes/time, shared flag, path. A Table
    (a typical log has a few files, and a DataFrame of them costs ~1 ms to build);
    Table.frame() for a rule that joins it."""
    cols = {c: concept(df, module, c) for c in CONCEPTS}
    rid, rank = column(df, "record_id"), column(df, "rank")
    paths = objects(df, "path") if "path" in df.columns else None
    if all_distinct(rid):  # the common case: one record per file
        shared = rank == -1
        return Table({
            **cols, "record_id": rid, "shared_row": shared, "rank": rank,
            "nranks": np.ones(len(rid), np.int64),
            "path": paths if paths is not None else np.full(len(rid), "", dtype=object),
            "shared": shared,
            "time": cols["time_read"] + cols["time_write"] + cols["time_meta"]})
    f = pd.DataFrame({**cols, "record_id": rid, "shared_row": rank == -1, "rank": rank})
    g = f.groupby("record_id", sort=False)
    out = g[list(CONCEPTS)].sum()
    out["shared_row"] = g["shared_row"].any()
    out["nranks"] = g["rank"].nunique()
    out["rank"] = g["rank"].min()
    first = ~df["record_id"].duplicated().to_numpy()
    paths = _text(paths[first], rid[first]) if paths is not None else \
        pd.Series("", index=rid[first])
    out["path"] = paths.reindex(out.index)
    out = out.reset_index()
    out["shared"] = out["shared_row"] | (out["nranks"] > 1)
    out["time"] = out["time_read"] + out["time_write"] + out["time_meta"]
    return Table({k: objects(out, k) if k == "path" else column(out, k) for k in FILE_COLUMNS})


# per_file's columns, in order
FILE_COLUMNS = (*CONCEPTS, "record_id", "shared_row", "rank", "nranks", "path", "shared",
                "time")


def _by_rank(rank: np.ndarray, cols: dict) -> tuple:
    """(ranks ascending, {name: values}): DataFrame(cols).groupby(rank).sum() as arrays,
    without the groupby (and its frames) when ranks are unique."""
    if len(rank) and all_distinct(rank):
        order = np.argsort(rank, kind="stable")
        return rank[order], {k: v[order] for k, v in cols.items()}
    g = pd.DataFrame({**cols, "rank": rank}).groupby("rank").sum()
    return g.index.to_numpy(), {k: column(g, k) for k in cols}


def _text(values, index) -> pd.Series:
    """Paths as str objects: they may hold non-UTF-8 bytes (surrogateescape), which
    pandas' Arrow-backed str dtype refuses."""
    return pd.Series(np.asarray(values, dtype=object), index=index, dtype=object)


def rank_times(df: pd.DataFrame, module: str, nprocs: int, ranks: pd.DataFrame | None):
    """Per-rank (read, write, meta) time and bytes, as a frame indexed by rank, and
    whether they are exact (rank_arrays)."""
    rank, per, exact = rank_arrays(df, module, nprocs, ranks)
    return pd.DataFrame(per, index=pd.Index(rank, name="rank")), exact


def rank_arrays(df: pd.DataFrame, module: str, nprocs: int, ranks: pd.DataFrame | None):
    """(ranks ascending, {time_read, time_write, time_meta, bytes: one value per rank},
    exact): exact from RANKS, else estimated.

    The estimate (no RANKS section) is Darshan's: a rank's own records, plus for each
    shared record the slowest rank's time split in the record's read/write/meta ratio.
    """
    if ranks is not None and len(ranks):
        return (*_by_rank(column(ranks, "rank"), {
            "time_read": col(ranks, "read_time"), "time_write": col(ranks, "write_time"),
            "time_meta": col(ranks, "meta_time"),
            "bytes": col(ranks, "bytes_read") + col(ranks, "bytes_written")}), True)
    t = {c: concept(df, module, c) for c in ("time_read", "time_write", "time_meta")}
    b = concept(df, module, "bytes_read") + concept(df, module, "bytes_written")
    rank = column(df, "rank")
    own = rank >= 0
    rk, per = _by_rank(rank[own], {**{k: v[own] for k, v in t.items()}, "bytes": b[own]})
    shared = ~own
    if shared.any():
        tot = sum(v[shared] for v in t.values())
        slow = col(df, f"{module}_F_SLOWEST_RANK_TIME")[shared]
        scale = np.where(tot > 0, np.where(slow > 0, slow / np.where(tot > 0, tot, 1),
                                           1.0 / max(nprocs, 1)), 0.0)
        add = {k: float((v[shared] * scale).sum()) for k, v in t.items()}
        add["bytes"] = float(b[shared].sum()) / max(nprocs, 1)
        if not len(rk):
            slow_rank = col(df, f"{module}_SLOWEST_RANK")[shared]
            rk = np.array([_int(slow_rank.max()) if len(slow_rank) else 0], np.int64)
            per = {k: np.zeros(1) for k in add}
        per = {k: per[k] + v for k, v in add.items()}
    return rk, per, False


def totals(df: pd.DataFrame, module: str, schema=None) -> dict:
    """Every counter whose schema role is a total, summed. Without a schema (a frame
    built by hand) only the counters the concept table names are known to be totals."""
    if schema:
        names = R.with_role(schema, R.TOTAL)
    else:
        names = [n for spec in counter_map(module).values() for n in re.split(r"[+|]", spec)
                 if n in df.columns and "_F_" not in n]
        names = [c for c in df.columns if c in set(names)]
    return {n: _int(col(df, n).sum()) for n in names if n in df.columns}


def summarize_module(module: str, df: pd.DataFrame, job: dict,
                     ranks: pd.DataFrame | None = None, schema=None, top: int = 5,
                     files: Table | None = None) -> dict:
    """files: per_file(df, module) when the caller has it already."""
    nprocs = max(int(job.get("nprocs") or 1), 1)
    run_time = float(job.get("run_time") or 0.0)
    files = per_file(df, module) if files is None else files
    f = {c: column(files, c) for c in (*CONCEPTS, "record_id", "shared")}
    real = ~np.isin(np.asarray(column(files, "path"), dtype=object), SPECIAL_PATHS) & \
        (f["record_id"] != AGGREGATE_ID)
    rd = (f["reads"] > 0) | (f["bytes_read"] > 0)
    wr = (f["writes"] > 0) | (f["bytes_written"] > 0)
    s: dict = {
        "files": len(files),
        "files_read_only": int((rd & ~wr).sum()),
        "files_write_only": int((wr & ~rd).sum()),
        "files_read_write": int((rd & wr).sum()),
        "files_shared": int((f["shared"] & real).sum()),
        "files_unique": int((~f["shared"] & real).sum()),
        "files_folded": int(job.get(f"folded.{module}") or 0),
    }
    for c in ("opens", "reads", "writes", "seeks", "stats", "syncs", "bytes_read", "bytes_written"):
        s[c] = _int(f[c].sum())
    # Times: per-process average (cumulative time / nprocs), as Darshan reports them.
    for c in ("time_read", "time_write", "time_meta"):
        s[c + "_total"] = json_value(f[c].sum())
        s[c] = json_value(f[c].sum() / nprocs)
    rk, per, exact = rank_arrays(df, module, nprocs, ranks)
    if len(rk):
        total = per["time_read"] + per["time_write"] + per["time_meta"]
        r, fast = argmax(total), argmin(total)
        slow = {"rank": int(rk[r]), "exact": exact, "time": json_value(total[r]),
                **{c: json_value(per[c][r]) for c in ("time_read", "time_write", "time_meta")}}
        s["fastest_rank"] = {"rank": int(rk[fast]), "time": json_value(total[fast])}
        max_read, max_write = nanmax(per["time_read"]), nanmax(per["time_write"])
    else:
        slow = {"rank": None, "exact": exact, "time": 0, "time_read": 0, "time_write": 0,
                "time_meta": 0}
        max_read = max_write = 0.0
    s["slowest_rank"] = slow
    io = float(slow["time"] or 0)
    s["share_of_runtime"] = {
        k: json_value(min(float(slow[f"time_{k}"] or 0) / run_time, 1.0) if run_time > 0 else 0.0)
        for k in ("read", "write", "meta")}
    s["share_of_runtime"]["io"] = json_value(min(io / run_time, 1.0) if run_time > 0 else 0.0)
    nbytes = s["bytes_read"] + s["bytes_written"]
    s["bandwidth"] = {  # bytes/s, by the slowest rank (Darshan's agg_perf_by_slowest)
        "total": json_value(nbytes / io if io > 0 else 0.0),
        "read": json_value(s["bytes_read"] / max_read if max_read > 0 else 0.0),
        "write": json_value(s["bytes_written"] / max_write if max_write > 0 else 0.0),
    }
    pat = pattern(df, module, f["reads"], f["writes"])
    if pat is not None:
        s["pattern"] = pat
    if has_bins(df, module):
        s["size_histogram"] = size_histogram(df, module)
    s["top_sizes"] = top_sizes(df, module)
    s["top_files"] = []
    if top:  # the largest times first, ties in file order (DataFrame.nlargest)
        t = column(files, "time")
        at = np.flatnonzero(t > 0)
        paths = objects(files, "path")
        for i in at[np.argsort(-t[at], kind="stable")][:top]:
            s["top_files"].append({
                "path": str(paths[i]), "shared": bool(f["shared"][i]), "time": json_value(t[i]),
                **{c: json_value(f[c][i]) for c in ("time_read", "time_write", "time_meta")},
                "bytes_read": _int(f["bytes_read"][i]),
                "bytes_written": _int(f["bytes_written"][i])})
    s["counters"] = totals(df, module, schema)
    unknown = unknown_counts(df)
    if unknown:
        s["unknown"] = unknown
    return s


# Reductions with pandas' Series semantics (NaN skipped) on plain arrays.
def argmax(v: np.ndarray) -> int:
    """Position of the first largest value, NaN skipped (Series.idxmax)."""
    return _arg(v, np.argmax)


def argmin(v: np.ndarray) -> int:
    """Position of the first smallest value, NaN skipped (Series.idxmin)."""
    return _arg(v, np.argmin)


def _arg(v: np.ndarray, fn) -> int:
    ok = ~np.isnan(v)
    if ok.all():
        return int(fn(v))
    at = np.flatnonzero(ok)
    if not len(at):
        raise ValueError("every value is NaN")
    return int(at[fn(v[at])])


def nanmax(v: np.ndarray) -> float:
    """The largest value, NaN skipped; NaN when every value is (Series.max)."""
    ok = v[~np.isnan(v)]
    return ok.max() if len(ok) else np.nan


def nanmin(v: np.ndarray) -> float:
    """The smallest value, NaN skipped; NaN when every value is (Series.min)."""
    ok = v[~np.isnan(v)]
    return ok.min() if len(ok) else np.nan


def unknown_counts(df: pd.DataFrame) -> dict:
    """{counter: records} of the values a log did not know (NaN: Darshan's -1 and
    negative times, darshan.unknown_as_nan); col() reads them as 0, so they are in
    no total. An iochar log has none (its reader rejects non-finite values)."""
    out = {}
    if _no_nan(df):
        return out
    # the dtypes once, then only the float columns' values (most counters are integers)
    for name, dtype in zip(df.columns[3:].tolist(), df.dtypes.iloc[3:]):
        if dtype.kind != "f":
            continue
        v = column(df, name)
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            n = int(np.isnan(v).sum())
            if n:
                out[name] = n
    return out


def _no_nan(df: pd.DataFrame) -> bool:
    """The frame holds numpy blocks only and none of its float ones a NaN: one check per
    block (a reader's frame has a few), not one per column."""
    blocks = getattr(getattr(df, "_mgr", None), "blocks", None)
    if blocks is None:
        return False
    for b in blocks:
        v = b.values
        if not isinstance(v, np.ndarray):
            return False
        if v.dtype.kind == "f" and np.isnan(v).any():
            return False
    return True


def summarize(job: dict, records: dict[str, pd.DataFrame],
              ranks: dict[str, pd.DataFrame | None] | None = None,
              schemas: dict | None = None, top: int = 5, files: dict | None = None) -> dict:
    """The whole job: {"job": {...}, "modules": {name: {...}}} (docs/report-json.md).
    files: a dict to fill with each module's per_file() table (advice.Context reuses them)."""
    jb = job_block(job)
    ranks = ranks or {}
    schemas = schemas or {}
    modules = {}
    for m, df in records.items():
        if df is None or len(df) == 0 or m in SETTINGS_MODULES:
            continue
        f = per_file(df, m)
        if files is not None:
            files[m] = f
        modules[m] = summarize_module(m, df, jb, ranks.get(m), schemas.get(m), top, f)
    return {"job": jb, "modules": modules}


def gather(log) -> dict:
    """Pull what the reporters need out of an `iochar.Log` into plain data."""
    records, ranks, series, schemas = {}, {}, {}, {}
    for m in log.modules:
        records[m] = log.records(m)
        # (name, op, role): the log's roles where it names them (iochar/schema.py)
        schemas[m] = log.schema_roles(m) if hasattr(log, "schema_roles") else log.schema(m)
        ranks[m] = log.ranks(m)
        series[m] = log.series(m)
    mounts = getattr(log, "mounts", None)
    return {"job": dict(log.job), "records": records, "ranks": ranks, "series": series,
            "schemas": schemas, "mounts": mounts}


def _unknown(v) -> bool:
    """A value that is no amount: NaN, infinite or negative (Darshan's unknowns)."""
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return False
    return not math.isfinite(f) or f < 0


def human_bytes(n) -> str:
    """1536 -> '1.5 KiB' (binary units, as block and stripe sizes are)."""
    if _unknown(n):
        return "unknown"
    n = float(n or 0)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" or n.is_integer() else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


def human_time(s) -> str:
    if _unknown(s):
        return "unknown"
    s = float(s or 0)
    if s >= 86400:  # "13711.79 h" reads as a typo: whole days and hours
        d, h = divmod(round(s / 3600), 24)
        return f"{d:,} d {h} h"
    if s >= 3600:
        return f"{s / 3600:.2f} h"
    if s >= 60:
        return f"{s / 60:.1f} min"
    if s >= 1 or s == 0:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} us"
