"""Reader of Darshan logs (.darshan, through PyDarshan) into iochar's Log interface.

Darshan's counter names are iochar's where the concept is the same (iochar took
them from Darshan), so most columns pass through unchanged; the few renames are in
RENAME. What Darshan does not record is absent from the frames (no column), never
zero; a column that Darshan filled with -1 ("not recorded") in every row is dropped.
Lustre striping becomes a LUSTRE frame (docs/log-format.md, "Darshan logs").
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from .logformat import LogError
from .schema import OP, topk_tables

# Darshan module name -> iochar module name (only these are read as records; HEATMAP
# is read as Log.heatmap; DXT, APMPI and the like have no record counterpart).
MODULES = {"POSIX": "POSIX", "MPI-IO": "MPIIO", "STDIO": "STDIO", "H5F": "H5F", "H5D": "H5D",
           "PNETCDF_FILE": "PNETCDF_FILE", "PNETCDF_VAR": "PNETCDF_VAR"}
# Darshan's aggregate-size bins of MPI-IO, HDF5 and PnetCDF are iochar's size bins.
RENAME = [(re.compile(r"^(MPIIO|H5D|PNETCDF_VAR)_SIZE_(READ|WRITE)_AGG_"), r"\1_SIZE_\2_")]
# Reduction op per counter name, so `Log.schema` answers as for an iochar log
# (summary.totals adds only SUM/BYTES counters).
_OPS = [(re.compile(r"_F_.*_START_TIMESTAMP$"), "TS_START"),
        (re.compile(r"_F_.*_END_TIMESTAMP$"), "TS_END"),
        (re.compile(r"_F_MAX_(READ|WRITE)_TIME$"), "MAXT"),
        (re.compile(r"_F_FASTEST_RANK_TIME$"), "FAST_TIME"),
        (re.compile(r"_F_SLOWEST_RANK_TIME$"), "SLOW_TIME"),
        (re.compile(r"_F_VARIANCE_RANK_TIME$"), "VAR_TIME"),
        (re.compile(r"_F_VARIANCE_RANK_BYTES$"), "VAR_BYTES"),
        (re.compile(r"_F_.*TIME$"), "TIME"),
        (re.compile(r"_MAX_(READ|WRITE)_TIME_SIZE$"), "MAXT_SIZE"),
        (re.compile(r"_FASTEST_RANK$"), "FAST_RANK"), (re.compile(r"_FASTEST_RANK_BYTES$"), "FAST_BYTES"),
        (re.compile(r"_SLOWEST_RANK$"), "SLOW_RANK"), (re.compile(r"_SLOWEST_RANK_BYTES$"), "SLOW_BYTES"),
        (re.compile(r"_ACCESS\d_ACCESS$|_STRIDE\d_STRIDE$"), "TOPK_VAL"),
        (re.compile(r"_ACCESS\d_COUNT$|_STRIDE\d_COUNT$"), "TOPK_CNT"),
        (re.compile(r"_BYTES_(READ|WRITTEN)$"), "BYTES"),
        (re.compile(r"_MAX_BYTE_|_ALIGNMENT$|_NDIMS$|_NPOINTS$|_DATATYPE_SIZE$|_CHUNK_SIZE_|"
                    r"_LENGTH_D\d$|_STRIDE_D\d$|_HINT_|_USE_|_IS_|_FORMAT$"), "MAX"),
        (re.compile(r"_MODE$"), "ANY")]
# Integer counters whose negative values are values: a record id (a 64-bit hash).
_SIGNED = re.compile(r"_RENAMED_FROM$")
LUSTRE_COLUMNS = ("LUSTRE_STRIPE_SIZE", "LUSTRE_STRIPE_COUNT", "LUSTRE_COMPONENTS", "LUSTRE_OSTS")
# Darshan 3.4's per-component counters (LUSTRE_COMP_*), in the order PyDarshan gives them;
# LUSTRE_COMPS lists them per component as text (docs/log-format.md)
COMP_COUNTERS = ("LUSTRE_COMP_STRIPE_SIZE", "LUSTRE_COMP_STRIPE_COUNT",
                 "LUSTRE_COMP_STRIPE_PATTERN", "LUSTRE_COMP_FLAGS", "LUSTRE_COMP_EXT_START",
                 "LUSTRE_COMP_EXT_END", "LUSTRE_COMP_MIRROR_ID")


# one component's counters in LUSTRE_COMPS' order (advice/pfl.py FIELDS)
_COMP_ORDER = ("EXT_START", "EXT_END", "STRIPE_SIZE", "STRIPE_COUNT", "FLAGS", "MIRROR_ID",
               "STRIPE_PATTERN")


def _values(comps: list, names: list | None) -> list[list[int]]:
    """Every component's counters in _COMP_ORDER (a value the record lacks: -1)."""
    out = []
    for c in comps:
        v = np.asarray(c.get("counters", []), dtype=np.int64)
        by = dict(zip(names or COMP_COUNTERS, v.tolist()))
        out.append([int(by.get(f"LUSTRE_COMP_{k}", -1)) for k in _COMP_ORDER])
    return out


def _components(comps: list, names: list | None) -> str:
    """Every component as "start:end:size:count:flags:mirror:pattern", ";" between
    (end -1: to the end of the file; a value the record lacks -1); "" with none."""
    return ";".join(":".join(str(x) for x in v) for v in _values(comps, names))


def op_of(name: str) -> int:
    for rx, op in _OPS:
        if rx.search(name):
            return OP[op]
    return OP["SUM"]


def _rename(name: str) -> str:
    for rx, to in RENAME:
        name = rx.sub(to, name)
    return name


def is_darshan(path) -> bool:
    return str(path).endswith(".darshan")


def _library():
    try:
        import darshan  # noqa: F401  (PyDarshan; optional: pip install darshan)
        from darshan.backend import cffi_backend
    except ImportError:
        raise LogError("reading Darshan logs needs PyDarshan: pip install darshan") from None
    return cffi_backend


def _frame(be, dmod: str, recs: list, names: dict) -> pd.DataFrame:
    """PyDarshan's records (numpy dtype) -> rank, record_id, path, counters."""
    ids = np.array([r["id"] for r in recs], dtype=np.uint64)
    head = pd.DataFrame({"rank": np.array([r["rank"] for r in recs], dtype=np.int64),
                         "record_id": ids, "path": [names.get(int(i), "<UNKNOWN>") for i in ids]})
    parts = [pd.DataFrame(np.vstack([r["counters"] for r in recs]).astype(np.int64),
                          columns=be.counter_names(dmod))]
    if recs[0].get("fcounters") is not None:
        parts.append(pd.DataFrame(np.vstack([r["fcounters"] for r in recs]).astype(np.float64),
                                  columns=be.fcounter_names(dmod)))
    body = pd.concat(parts, axis=1)
    body.columns = [_rename(n) for n in body.columns]
    unrecorded = [n for n in body.columns if (body[n] == -1).all()]
    return pd.concat([head, unknown_as_nan(body.drop(columns=unrecorded))], axis=1)


def unknown_as_nan(body: pd.DataFrame) -> pd.DataFrame:
    """Values Darshan did not know, as NaN: its -1 (and any negative value) in a counter
    that cannot be negative (every one but the top-4 tables' values, strides among
    them, and the ids of _SIGNED), and a floating counter that is negative, NaN or
    infinite (all of Darshan's are times or variances: a negative time is a broken
    clock, e.g. -2662.7 s of STDIO_F_WRITE_TIME in the wheel's example.darshan). Such a
    column becomes float64; NaN reaches no total (summary.col reads it as 0) and shows
    as unknown."""
    out = {}
    for name in body.columns:
        v = body[name].to_numpy()
        if v.dtype.kind == "f":
            bad = ~np.isfinite(v) | (v < 0)
        elif op_of(name) != OP["TOPK_VAL"] and not _SIGNED.search(name):
            bad = v < 0
        else:
            continue
        if bad.any():
            out[name] = np.where(bad, np.nan, v.astype(np.float64))
    return body.assign(**out) if out else body


def _lustre(recs: list, names: dict, comp_names: list | None = None) -> pd.DataFrame:
    """One row per (rank, file): the first layout component's stripe size and count,
    the number of components and of distinct OSTs, those OSTs' indices as text
    ("11,40,3", in layout order: the advice times each OST by the files it holds), and
    every component's extent and layout (LUSTRE_COMPS, _components, and as
    LUSTRE_COMP<N>_* columns); unknown values (-1) are NaN, but in the components'
    (-1, as Darshan: an EXT_END of -1 is the end of the file)."""
    rows, per = [], []
    for r in recs:
        comps = r.get("components") or []
        per.append(_values(comps, comp_names))
        first = comps[0]["counters"] if comps else np.array([-1, -1])
        ids = [int(o) for c in comps for o in np.asarray(c.get("ost_ids", [])) if int(o) >= 0]
        rows.append((int(r["rank"]), int(r["id"]), names.get(int(r["id"]), "<UNKNOWN>"),
                     float(first[0]) if first[0] >= 0 else np.nan,
                     float(first[1]) if first[1] >= 0 else np.nan, len(comps), len(set(ids)),
                     ",".join(str(o) for o in dict.fromkeys(ids)),
                     _components(comps, comp_names)))
    df = pd.DataFrame(rows, columns=["rank", "record_id", "path", *LUSTRE_COLUMNS,
                                     "LUSTRE_OST_IDS", "LUSTRE_COMPS"])
    df["record_id"] = df["record_id"].astype(np.uint64)
    # the same as darshan-parser's LUSTRE_COMP<N>_* (N from 1), one column per counter
    # and component, NaN past a file's last component: the columns of an iochar log's
    # LUSTRE module (wrappers/lustre_counters.h; advice/pfl.py reads both)
    most = max((len(v) for v in per), default=0)
    cols = {}
    for n in range(most):
        for k, field in enumerate(_COMP_ORDER):
            cols[f"LUSTRE_COMP{n + 1}_{field}"] = np.array(
                [float(v[n][k]) if n < len(v) else np.nan for v in per], dtype=np.float64)
    return pd.concat([df, pd.DataFrame(cols, index=df.index)], axis=1) if cols else df


class DarshanLog:
    """A Darshan log with the interface of iochar.Log (job, modules, records, schema...)."""

    def __init__(self, path):
        self.path = str(path)
        self.files = [self.path]
        be = _library()
        self._frames = _read(be, Path(path))
        self.job = self._frames.pop("__job__")
        self.mounts = self._frames.pop("__mounts__")
        self._heat = self._frames.pop("__heatmap__")
        self.modules = list(self._frames)
        self.extra_sections = []

    def __repr__(self):
        return f"<iochar.DarshanLog {self.path!r} nprocs={self.job.get('nprocs')} modules={self.modules}>"

    @property
    def names(self) -> dict:
        out = {}
        for df in self._frames.values():
            out.update(zip(df["record_id"].tolist(), df["path"].tolist()))
        return out

    def _get(self, module):
        if module not in self._frames:
            raise KeyError(f"module {module!r} not in log (modules: {', '.join(self.modules) or 'none'})")
        return self._frames[module]

    def records(self, module: str) -> pd.DataFrame:
        return self._get(module).copy(deep=False)

    def schema(self, module: str) -> list:
        out = [(n, op_of(n)) for n in self._get(module).columns[3:]]
        try:
            topk_tables(out)
        except ValueError:  # tables not laid out as iochar's (H5D: lengths between
            # values and counts): no table merging; a value combines as a maximum, a
            # count as a sum
            out = [(n, {OP["TOPK_VAL"]: OP["MAX"], OP["TOPK_CNT"]: OP["SUM"]}.get(op, op))
                   for n, op in out]
        return out

    def schema_version(self, module: str) -> int:
        self._get(module)
        return 0

    def series(self, module: str):
        return None  # Darshan's heatmaps are not converted

    def heatmap(self, module: str) -> dict | None:
        """The HEATMAP module's bytes per rank and time bin for `module`, as
        iochar.Log.heatmap gives them (rows in rank order, ranks that moved bytes)."""
        return self._heat.get(module)

    def ranks(self, module: str) -> pd.DataFrame:
        return pd.DataFrame({k: pd.Series(dtype="f8" if "time" in k else "i8") for k in
                             ("rank", "reads", "writes", "bytes_read", "bytes_written",
                              "read_time", "write_time", "meta_time")})


def _job(meta: dict, exe: str) -> dict:
    j = meta.get("job", meta)
    start = j["start_time_sec"] + j.get("start_time_nsec", 0) * 1e-9
    end = j["end_time_sec"] + j.get("end_time_nsec", 0) * 1e-9
    # Darshan logs before 3.4 keep whole seconds: a job inside one second has start ==
    # end; darshan-parser counts its run time as end - start + 1, and so do we.
    if not j.get("start_time_nsec") and not j.get("end_time_nsec"):
        end += 1.0
    md = j.get("metadata") or {}
    return {"version": f"darshan {md.get('lib_ver', '?')}", "format": f"darshan {j.get('log_ver', '?')}",
            "nprocs": int(j["nprocs"]), "uid": int(j["uid"]), "jobid": str(j["jobid"]),
            "start_time": float(start), "end_time": float(end),
            "exe": exe.split(" ", 1)[0] if exe else "", "cmdline": exe,
            "time_origin": "start_time", "source": "darshan"}


@contextlib.contextmanager
def _quiet_stderr():
    """darshan-util's C code prints its errors on fd 2: catch them, so that a bad log
    gives one LogError line and nothing else (yields a one-item list of the text)."""
    said = [""]
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield said
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield said
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            said[0] = tmp.read(4096).decode(errors="replace").strip()


def _read_check(path: Path) -> None:
    if not path.is_file():
        raise LogError(f"cannot read {path}: no such file")
    if not os.access(path, os.R_OK):
        raise LogError(f"cannot read {path}: permission denied")
    with path.open("rb") as fh:
        head = fh.read(8)
    # Darshan logs start with their format version string ("3.21\0...")
    if not re.match(rb"^\d+\.\d+\0", head):
        raise LogError(f"{path}: not a Darshan log (no version string at the start)")


def _open(be, path: Path):
    """The darshan-util handle of the log at path, or a one-line LogError."""
    _read_check(path)
    with _quiet_stderr() as said:
        try:
            log = be.log_open(str(path))
        except Exception as e:  # PyDarshan raises plain Exceptions
            raise LogError(f"{path}: PyDarshan cannot open it: {e}") from None
    if log["handle"] == be.ffi.NULL:
        why = said[0].splitlines()[0].removeprefix("Error: ") if said[0] else "corrupt or unsupported"
        raise LogError(f"{path}: PyDarshan cannot open it ({why})")
    return log


def _read(be, path: Path) -> dict:
    log = _open(be, path)
    with _quiet_stderr():
        return _records(be, log, path)


def _heatmaps(be, log, names: dict) -> dict:
    """HEATMAP records (one per rank and module, named "heatmap:POSIX"...) ->
    {iochar module: {"width", "ranks", "bytes_read", "bytes_written"}}. Darshan gives
    every record of a log one bin width and count; a record that differs is left out."""
    rows: dict = {}
    while True:
        rec = be.log_get_record(log, "HEATMAP")
        if rec is None:
            break
        name = str(names.get(int(rec["id"]), ""))
        mod = MODULES.get(name.removeprefix("heatmap:").replace("MPIIO", "MPI-IO"))
        if mod:
            rows.setdefault(mod, []).append(rec)
    out = {}
    for mod, recs in rows.items():
        width, nbins = float(recs[0]["bin_width_seconds"]), int(recs[0]["nbins"])
        recs = [r for r in recs if int(r["nbins"]) == nbins and
                float(r["bin_width_seconds"]) == width and int(r["rank"]) >= 0]
        if not (recs and nbins > 0 and np.isfinite(width) and width > 0):
            continue
        recs.sort(key=lambda r: int(r["rank"]))
        rd = np.vstack([np.maximum(r["read_bins"][:nbins], 0) for r in recs]).astype(np.int64)
        wr = np.vstack([np.maximum(r["write_bins"][:nbins], 0) for r in recs]).astype(np.int64)
        keep = (rd.any(axis=1) | wr.any(axis=1))
        out[mod] = {"width": width, "ranks": np.array([int(r["rank"]) for r in recs])[keep],
                    "bytes_read": rd[keep], "bytes_written": wr[keep]}
    return out


def _records(be, log, path) -> dict:
    try:
        meta = {"job": be.log_get_job(log)}
        exe = be.log_get_exe(log)
        mounts = be.log_get_mounts(log)
        present = be.log_get_modules(log)
        names = be.log_get_name_records(log)
        out = {}
        for dmod, mod in MODULES.items():
            if dmod not in present:
                continue
            recs = []
            while True:
                rec = be.log_get_generic_record(log, dmod, dtype="numpy")
                if rec is None:
                    break
                recs.append(rec)
            if recs:
                out[mod] = _frame(be, dmod, recs, names)
        out["__heatmap__"] = _heatmaps(be, log, names) if "HEATMAP" in present else {}
        if "LUSTRE" in present:
            recs = []
            while True:
                rec = be._log_get_lustre_record(log)
                if rec is None:
                    break
                recs.append(rec)
            if recs:
                try:  # the component counters' names, as this PyDarshan reads them
                    comp_names = be.counter_names("LUSTRE_COMP")
                except Exception:  # an older PyDarshan: Darshan 3.4's order
                    comp_names = None
                out["LUSTRE"] = _lustre(recs, names, comp_names)
    except LogError:
        raise
    except Exception as e:
        raise LogError(f"{path}: PyDarshan failed reading it: {e}") from None
    finally:
        be.log_close(log)
    out["__job__"] = _job(meta, exe)
    m = pd.DataFrame([(str(a), str(b), 0) for a, b in mounts],
                     columns=["mount_point", "fs_type", "block_size"])
    m["block_size"] = m["block_size"].astype(np.int64)  # Darshan records no block size: 0
    out["__mounts__"] = m
    return out


# ---- DXT: Darshan's trace (issue 41: iochar-parser --trace) --------------------------

# Darshan's DXT modules -> the module a row is shown under (iochar's names).
DXT_MODULES = {"DXT_POSIX": "POSIX", "DXT_MPIIO": "MPIIO"}
# darshan-util's struct segment_info: i64 offset, i64 length, f64 start, f64 end.
_SEGMENT = np.dtype([("offset", "<i8"), ("length", "<i8"), ("start", "<f8"), ("end", "<f8")])
DXT_COLUMNS = ("module", "rank", "thread", "record_id", "offset", "length", "start", "end",
               "op", "path")


def dxt_trace(path) -> pd.DataFrame | None:
    """A Darshan log's DXT_POSIX and DXT_MPIIO segments as a trace frame with the
    columns of an iochar trace (callsites.Observed.trace): module, rank, thread (-1:
    DXT has none), record_id, offset, length, start, end (seconds after the job start),
    op ("read"/"write"), path; sorted by start then rank. None when the log has no DXT.
    Segments are copied out of darshan-util's buffer in one piece per record, not one
    Python object each (PyDarshan's log_get_dxt_record makes a dict per segment)."""
    be = _library()
    path = Path(path)
    log = _open(be, path)
    parts = []
    with _quiet_stderr():
        try:
            present = be.log_get_modules(log)
            if not any(m in present for m in DXT_MODULES):
                return None
            names = be.log_get_name_records(log)
            for dmod, mod in DXT_MODULES.items():
                if dmod in present:
                    parts += _dxt_records(be, log, present[dmod]["idx"], mod, names, path)
        except LogError:
            raise
        except Exception as e:
            raise LogError(f"{path}: PyDarshan failed reading its DXT records: {e}") from None
        finally:
            be.log_close(log)
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object if c in ("module", "op", "path")
                                          else "f8" if c in ("start", "end") else "i8")
                             for c in DXT_COLUMNS})
    df = pd.concat(parts, ignore_index=True).sort_values(["start", "rank"], kind="stable")
    return df.reset_index(drop=True)


def _dxt_records(be, log, idx: int, mod: str, names: dict, path) -> list:
    ffi, lib = be.ffi, be.libdutil
    head = ffi.sizeof("struct dxt_file_record")
    out = []
    while True:
        buf = ffi.new("void **")
        if lib.darshan_log_get_record(log["handle"], idx, buf) < 1:
            return out
        try:
            rec = ffi.cast("struct dxt_file_record *", buf[0])
            nw, nr = int(rec.write_count), int(rec.read_count)
            if nw < 0 or nr < 0 or nw + nr > (1 << 31):
                raise LogError(f"{path}: a DXT record holds {nw} writes and {nr} reads")
            rid, rank = int(rec.base_rec.id), int(rec.base_rec.rank)
            segs = np.frombuffer(ffi.buffer(ffi.cast("char *", buf[0]) + head,
                                            (nw + nr) * _SEGMENT.itemsize),
                                 dtype=_SEGMENT).copy()
        finally:
            lib.darshan_free(buf[0])
        n = len(segs)
        out.append(pd.DataFrame({
            "module": np.full(n, mod, dtype=object), "rank": np.full(n, rank, np.int64),
            "thread": np.full(n, -1, np.int64), "record_id": np.full(n, rid, np.uint64),
            "offset": segs["offset"], "length": segs["length"],
            "start": segs["start"], "end": segs["end"],
            # darshan-util stores a record's writes first, then its reads
            "op": np.array(["write"] * nw + ["read"] * nr, dtype=object),
            "path": np.full(n, names.get(rid, "<UNKNOWN>"), dtype=object)}))
