"""iochar-parser's views beside the counter dump: --total, --file, --perf (the meaning
darshan-parser users know; docs/parser.md defines each line), the record filters, and
--trace (the trace section, or a Darshan log's DXT, one access a line).

Views take a module's records (a DataFrame as Log.records gives) and its schema; they
return text lines without escaping: the CLI escapes names on the way out.
"""

from __future__ import annotations

import fnmatch
import json

import numpy as np
import pandas as pd

from . import callsites
from . import darshan as D
from . import summary as S
from .logformat import AGGREGATE_ID
from .merge import reduce_group_rows
from .schema import OP

MiB = float(1 << 20)
_FAST = (OP["FAST_RANK"], OP["FAST_BYTES"], OP["FAST_TIME"])
_SLOW = (OP["SLOW_RANK"], OP["SLOW_BYTES"], OP["SLOW_TIME"])
_VAR = (OP["VAR_TIME"], OP["VAR_BYTES"])


def filter_records(df: pd.DataFrame, rank: int | None = None, path: str | None = None):
    """Rows of one rank (-1: records reduced over several ranks) and/or whose path
    matches: a glob when the pattern has *, ? or [, else a substring."""
    keep = np.ones(len(df), dtype=bool)
    if rank is not None:
        keep &= df["rank"].to_numpy() == rank
    if path is not None:
        # object dtype: a name that is not UTF-8 (surrogateescape) cannot be a pandas str
        paths = pd.Series(S.objects(df, "path"), dtype=object).astype(object)
        if any(c in path for c in "*?["):
            keep &= paths.map(lambda p: fnmatch.fnmatchcase(p, path)).to_numpy(dtype=bool)
        else:
            keep &= paths.str.contains(path, regex=False).to_numpy()
    return df[keep].reset_index(drop=True) if not keep.all() else df


def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)):  # NaN: unknown to the log (Darshan's -1)
        return "unknown" if np.isnan(v) else repr(float(v))
    return str(int(v))


def totals(df: pd.DataFrame, schema: list) -> list:
    """[(counter, value)] over every record of the module, each counter combined by
    its reduction op: sums added, MAX/TS_END/MAXT the maximum, MIN_NZ/TS_START the
    smallest non-zero, ANY the first non-zero, top-4 tables merged by value, MAXT_SIZE
    from the record with the largest paired MAXT, FASTEST_* from the record whose
    fastest rank took least time and SLOWEST_* from the one whose slowest took most.
    VAR_* (variances across ranks of one file) do not combine across files: left out."""
    if len(df) == 0:
        return [(n, 0.0 if "_F_" in n else 0) for n, op in schema if op not in _VAR]
    # unknown values (NaN: a Darshan log's -1) are in no total; rank-valued counters
    # are taken from one record below and stay unknown if it is
    known = df.fillna({n: 0 for n, op in schema if op not in (*_FAST, *_SLOW)
                       and df[n].dtype.kind == "f"})
    red = reduce_group_rows(known.sort_values("rank", kind="stable").reset_index(drop=True),
                            np.array([len(df)]), schema).iloc[0]
    out = {n: red[n] for n, _ in schema}
    fast_t = [n for n, op in schema if op == OP["FAST_TIME"]]
    slow_t = [n for n, op in schema if op == OP["SLOW_TIME"]]
    for ops, tcol, pick in ((_FAST, fast_t, "min"), (_SLOW, slow_t, "max")):
        if not tcol:
            continue
        t = np.nan_to_num(df[tcol[0]].to_numpy(dtype=float), nan=0.0)
        if pick == "min":  # a record untouched by time has 0: the fastest among timed ones
            cand = np.where(t > 0, t, np.inf)
            i = int(np.argmin(cand)) if np.isfinite(cand).any() else 0
        else:
            i = int(np.argmax(t))
        for n, op in schema:
            if op in ops:
                out[n] = df[n].iloc[i]
    return [(n, out[n]) for n, op in schema if op not in _VAR]


def total_lines(module: str, df: pd.DataFrame, schema: list) -> list:
    return [f"total_{n}: {_fmt(v)}" for n, v in totals(df, schema)]


def _max_byte(df: pd.DataFrame, module: str) -> np.ndarray:
    out = np.full(len(df), -1, dtype=np.int64)
    for c in (f"{module}_MAX_BYTE_READ", f"{module}_MAX_BYTE_WRITTEN"):
        if c in df.columns:
            v = np.nan_to_num(df[c].to_numpy(dtype=np.float64), nan=-1.0)  # NaN: unknown
            out = np.maximum(out, v.astype(np.int64))
    return out


def per_file(df: pd.DataFrame, module: str) -> pd.DataFrame:
    """One row per record: ranks (the rank, or -1 for a record reduced over several
    ranks), bytes read/written, max byte, type and sharing."""
    f = pd.DataFrame({
        "record_id": df["record_id"].to_numpy(), "path": pd.Series(S.objects(df, "path"), dtype=object),
        "rank": df["rank"].to_numpy(),
        "reads": S.concept(df, module, "reads"), "writes": S.concept(df, module, "writes"),
        "bytes_read": S.concept(df, module, "bytes_read").astype(np.int64),
        "bytes_written": S.concept(df, module, "bytes_written").astype(np.int64),
        "max_byte": _max_byte(df, module)})
    g = f.groupby("record_id", sort=False)
    out = g.agg(path=("path", "first"), reads=("reads", "sum"), writes=("writes", "sum"),
                bytes_read=("bytes_read", "sum"), bytes_written=("bytes_written", "sum"),
                max_byte=("max_byte", "max"),
                ranks=("rank", lambda r: ",".join(str(x) for x in sorted(set(r)))),
                nranks=("rank", "nunique"), any_shared=("rank", lambda r: bool((r < 0).any())))
    out = out.reset_index()
    rd = (out["reads"] > 0) | (out["bytes_read"] > 0)
    wr = (out["writes"] > 0) | (out["bytes_written"] > 0)
    out["type"] = np.select([rd & wr, rd, wr], ["read-write", "read-only", "write-only"],
                            "no-data")
    out["sharing"] = np.where(out["any_shared"] | (out["nranks"] > 1), "shared", "unique")
    return out


def file_lines(module: str, df: pd.DataFrame) -> list:
    """Per-file lines, then counts by type (darshan-parser --file's summary shape)."""
    f = per_file(df, module)
    lines = ["#<module> <record id> <ranks> <bytes read> <bytes written> <type> <sharing> "
             "<file name>"]
    for r in f.itertuples(index=False):
        lines.append(f"{module} {r.record_id} {r.ranks} {r.bytes_read} {r.bytes_written} "
                     f"{r.type} {r.sharing} {r.path}")
    real = f["record_id"] != AGGREGATE_ID
    lines.append("#<file type>: <files> <bytes> <max byte offset>")
    nbytes = f["bytes_read"] + f["bytes_written"]
    groups = [("total", real), ("read_only", real & (f["type"] == "read-only")),
              ("write_only", real & (f["type"] == "write-only")),
              ("read_write", real & (f["type"] == "read-write")),
              ("unique", real & (f["sharing"] == "unique")),
              ("shared", real & (f["sharing"] == "shared"))]
    for name, m in groups:
        mb = int(f["max_byte"][m].max()) if m.any() else -1
        lines.append(f"# {name}: {int(m.sum())} {int(nbytes[m].sum())} {max(mb, 0)}")
    return lines


def perf(df: pd.DataFrame, module: str, job: dict, ranks: pd.DataFrame | None) -> dict:
    """Performance estimates of one module (docs/parser.md): bytes, the slowest rank's
    I/O time, cumulative time, and the aggregate rates they give."""
    nprocs = max(int(job.get("nprocs") or 1), 1)
    per, exact = S.rank_times(df, module, nprocs, ranks)
    tot = per["time_read"] + per["time_write"] + per["time_meta"] if len(per) else pd.Series()
    slow_rank = int(tot.idxmax()) if len(tot) else None
    slow = float(tot.max()) if len(tot) else 0.0
    nbytes = int(S.concept(df, module, "bytes_read").sum()
                 + S.concept(df, module, "bytes_written").sum())
    cumul = float(sum(S.concept(df, module, c).sum()
                      for c in ("time_read", "time_write", "time_meta")))
    shared = df["rank"].to_numpy() < 0
    unique = df[~shared]
    u = unique.assign(_t=sum(S.concept(unique, module, c)
                             for c in ("time_read", "time_write", "time_meta")))
    uslow = float(u.groupby("rank")["_t"].sum().max()) if len(u) else 0.0
    col = f"{module}_F_SLOWEST_RANK_TIME"
    by_slowest = float(df.loc[shared, col].sum()) if col in df.columns else 0.0
    return {"total_bytes": nbytes, "slowest_rank": slow_rank, "slowest_rank_exact": exact,
            "slowest_rank_io_time": slow, "cumul_io_time": cumul,
            "unique_files_slowest_rank_io_time": uslow,
            "shared_files_time_by_slowest": by_slowest,
            "agg_perf_by_cumul": nbytes / MiB / (cumul / nprocs) if cumul > 0 else 0.0,
            "agg_perf_by_slowest": nbytes / MiB / slow if slow > 0 else 0.0}


def perf_lines(module: str, df: pd.DataFrame, job: dict, ranks) -> list:
    p = perf(df, module, job, ranks)
    src = "per-rank totals (RANKS)" if p["slowest_rank_exact"] else "records (estimate)"
    return [f"# total_bytes: {p['total_bytes']}",
            f"# slowest_rank: {p['slowest_rank']} (from {src})",
            f"# slowest_rank_io_time: {p['slowest_rank_io_time']:.6f}",
            f"# cumul_io_time: {p['cumul_io_time']:.6f}",
            f"# unique files: slowest_rank_io_time: {p['unique_files_slowest_rank_io_time']:.6f}",
            f"# shared files: time_by_slowest: {p['shared_files_time_by_slowest']:.6f}",
            f"# agg_perf_by_cumul: {p['agg_perf_by_cumul']:.6f}",
            f"# agg_perf_by_slowest: {p['agg_perf_by_slowest']:.6f}"]


# ---- --trace ---------------------------------------------------------------------

TRACE_HEAD = "#<rank> <module> <op> <offset> <length> <start> <end> <thread> <record id> <file name>"


def trace_of(log) -> tuple:
    """(trace frame or None, dropped calls, where it came from) of an iochar log (its
    TRACE sections) or a Darshan log (DXT_POSIX, DXT_MPIIO)."""
    if isinstance(log, D.DarshanLog):
        return D.dxt_trace(log.path), 0, "DXT"
    obs = callsites.from_log(log)
    if obs is None or not obs.trace_sections:
        return None, 0, "TRACE"
    return obs.trace, int(obs.trace_dropped), "TRACE"


def filter_trace(df: pd.DataFrame, modules, rank: int | None, path: str | None):
    """The trace rows of the modules asked for (None: all), then --rank / --path as for
    records."""
    if modules:
        df = df[df["module"].isin(list(modules))].reset_index(drop=True)
    return filter_records(df, rank, path)


def _opt(v: int):
    """-1 (no offset, no thread) as JSON null."""
    return None if v < 0 else v


def trace_lines(df: pd.DataFrame, escape, as_json: bool = False, chunk: int = 4096):
    """One line per access, in start order. Text: the columns of TRACE_HEAD, times in
    seconds after the job start to the nanosecond, -1 for no offset (metadata calls) or
    a failed call's length, `-` for no thread (DXT), the name escaped and last. JSON:
    one object per line (JSON Lines), the same fields, null for none; `escape` makes
    names safe (safetext)."""
    cols = [df[c].tolist() for c in ("rank", "module", "op", "offset", "length", "start",
                                     "end", "thread", "record_id", "path")]
    n = len(df)
    for i in range(0, n, chunk):
        out = []
        for rank, mod, op, off, ln, t0, t1, th, rid, p in zip(*(c[i:i + chunk] for c in cols)):
            if as_json:
                out.append(json.dumps({"rank": int(rank), "module": escape(mod), "op": op,
                                       "offset": _opt(off), "length": int(ln),
                                       "start": float(t0), "end": float(t1),
                                       "thread": _opt(th), "record_id": int(rid),
                                       "path": escape(p)}, separators=(",", ":")))
            else:
                out.append(f"{rank} {escape(mod)} {op} {off} {ln} {t0:.9f} {t1:.9f} "
                           f"{th if th >= 0 else '-'} {rid} {escape(p)}")
        yield "\n".join(out)
