"""What every advice rule shares: the Advice record and the Context rules read from."""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from .. import summary as S
from . import layers as L
from . import pfl
from .cost import Estimate, estimate

SEVERITIES = ("high", "warn", "info")  # most severe first
REGULAR = 8  # POSIX_FILE_TYPE of a regular file ((st_mode & S_IFMT) >> 12)
# File systems whose files hold no data on storage: pipes, sockets, devices, kernel views.
PSEUDO_FS = {"pipefs", "sockfs", "devtmpfs", "devpts", "proc", "sysfs", "cgroup", "cgroup2",
             "debugfs", "tracefs", "mqueue", "configfs", "pstore", "securityfs", "bpf"}
SHARED_FS = {"lustre", "gpfs", "nfs", "nfs4", "dvs", "beegfs", "cephfs", "ceph", "panfs",
             "pvfs2", "orangefs", "wekafs", "daos", "fuse.dfuse", "glusterfs"}
SLOW_OPEN = 10.0  # s per open of a file that moves < 1 MiB per open: a FIFO waiting
RANK = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass
class Advice:
    """One problem: what was measured, what it costs, and what to change.

    Rules fill id..files, `seconds` (the I/O time the problem explains, summed over
    ranks) or `nbytes` (the bytes it moves needlessly) and `layers`; evaluate() turns
    those into `cost`, the severity, the root-cause `rank` and the `folded` symptoms.
    """

    id: str
    severity: str  # the rule's ceiling; evaluate() lowers it to what the cost supports
    message: str  # one line, with the numbers and their units
    recommendation: str  # the remedy for this case: the call or hint to change
    evidence: dict  # counters (and derived values) that triggered the rule
    module: str | None = None  # the layer judged (the highest one the application used)
    files: list = field(default_factory=list)  # worst files, when per-file
    seconds: float | None = None  # I/O seconds (all ranks) this problem explains
    nbytes: float | None = None  # bytes moved because of it (when time says nothing)
    layers: dict = field(default_factory=dict)  # {layer: {reads, writes, bytes_...}}
    floor: str = "info"  # the least severity whatever the cost (configuration errors)
    cost: dict = field(default_factory=dict)
    rank: int = 0
    folded: list = field(default_factory=list)  # symptoms explained by this cause
    paths: set = field(default_factory=set)  # every file involved (files: the worst 3)
    example: str = ""  # the remedy as code or a command: a C/Fortran/Python line, lfs...
    estimate: Estimate | None = None  # the cost model's (cost.estimate): supersedes seconds

    def to_dict(self) -> dict:
        return {"id": self.id, "severity": self.severity, "rank": self.rank,
                "module": self.module, "message": self.message,
                "recommendation": self.recommendation, "remedy": self.recommendation,
                "example": self.example,
                "evidence": {k: S.json_value(v) for k, v in self.evidence.items()},
                "cost": {k: S.json_value(v) for k, v in self.cost.items()},
                "layers": {k: dict(v) for k, v in self.layers.items()},
                "files": list(self.files),
                "folded": [dict(f) for f in self.folded]}


class Context:
    """Job, record frames, rank frames and the summary, with cached per-file views."""

    def __init__(self, job: dict, records: dict, ranks: dict | None = None,
                 summary: dict | None = None, mounts: pd.DataFrame | None = None,
                 files: dict | None = None, trace: pd.DataFrame | None = None):
        """files: per-file frames summary.summarize made of these records (its files=);
        trace: iochar's trace section (callsites.Observed.trace), when recorded."""
        self.job = S.job_block(job) if "run_time" not in job else job
        self.records = {m: df for m, df in records.items() if df is not None and len(df)}
        self.ranks = ranks or {}
        self.summary = summary or S.summarize(self.job, self.records, self.ranks)
        self.mounts = mounts if mounts is not None and len(mounts) else None
        self._files: dict = {m: f for m, f in (files or {}).items() if m in self.records}
        self.trace = trace if trace is not None and len(trace) else None
        self._fit_obs: dict = {}

    @property
    def nprocs(self) -> int:
        return max(int(self.job.get("nprocs") or 1), 1)

    @property
    def mpi(self) -> bool:
        """Ranks of an MPI job (or a log that does not say: Darshan's, older iochar's), not
        processes grouped by their job key (a launcher's tasks, a process pool): the
        remedies may name MPI calls."""
        return not self.job.get("job_key")

    @property
    def nnodes(self) -> int:
        return max(int(self.job.get("nnodes") or 1), 1)

    @property
    def run_time(self) -> float:
        return float(self.job.get("run_time") or 0.0)

    def frame(self, module: str) -> pd.DataFrame | None:
        return self.records.get(module)

    def has(self, module: str, counter: str) -> bool:
        df = self.frame(module)
        return df is not None and counter in df.columns

    def total(self, module: str, counter: str) -> float:
        df = self.frame(module)
        return float(S.col(df, counter).sum()) if df is not None else 0.0

    def concept(self, module: str, name: str) -> np.ndarray:
        return S.concept(self.frame(module), module, name)

    def files(self, module: str) -> S.Table:
        """Per-file rows (summary.per_file), cached."""
        if module not in self._files:
            self._files[module] = S.per_file(self.frame(module), module)
        return self._files[module]

    def module_summary(self, module: str) -> dict:
        return self.summary["modules"].get(module, {})

    @cached_property
    def collective_paths(self) -> set:
        """Paths that MPI-IO accessed collectively (their POSIX view is ROMIO's)."""
        df = self.frame("MPIIO")
        if df is None or "path" not in df.columns:
            return set()
        coll = S.expr(df, "MPIIO_COLL_READS+MPIIO_COLL_WRITES+MPIIO_SPLIT_READS+"
                          "MPIIO_SPLIT_WRITES")
        return set(df["path"].to_numpy()[coll > 0])

    def paths_in(self, module: str) -> set:
        df = self.frame(module)
        return set() if df is None or "path" not in df.columns else set(df["path"])


    def fit_obs(self, module: str) -> tuple:
        """((n, b, t) observations to fit latency and bandwidth on, timed): the trace's
        accesses of this module when it has some (each its own length and duration),
        else each judged row's reads and its writes (count, bytes, seconds)."""
        if module in self._fit_obs:
            return self._fit_obs[module]
        out = None
        tr = self.trace
        if tr is not None:
            mod = tr["module"].to_numpy()
            op = tr["op"].to_numpy()
            sel = (mod == module) & ((op == "read") | (op == "write"))
            if sel.sum() >= 2:
                length = tr["length"].to_numpy()[sel].astype(np.float64)
                dur = (tr["end"].to_numpy() - tr["start"].to_numpy())[sel]
                out = ((np.ones(len(length)), np.maximum(length, 0), dur), True)
        if out is None:
            df = self.frame(module)
            if df is None or not len(df):
                out = ((np.empty(0), np.empty(0), np.empty(0)), False)
            else:
                keep = (df["record_id"].to_numpy() != S.AGGREGATE_ID) & \
                    self.regular_rows(module)
                cols = [np.concatenate([S.concept(df, module, a)[keep],
                                        S.concept(df, module, b)[keep]])
                        for a, b in (("reads", "writes"), ("bytes_read", "bytes_written"),
                                     ("time_read", "time_write"))]
                out = (tuple(cols), False)
        self._fit_obs[module] = out
        return out

    def estimate(self, module: str, scope: tuple, k: float, charged: tuple) -> Estimate:
        """cost.estimate with latency and bandwidth fitted on this module's observations
        (Context.fit_obs)."""
        obs, timed = self.fit_obs(module)
        return estimate(scope, k, charged, obs, timed)

    # ------------------------------------------------------------ attribution

    @cached_property
    def layer_table(self) -> pd.DataFrame:
        return self._table_codes[0]

    @cached_property
    def _table_codes(self) -> tuple:
        return L.table_codes(self)

    @cached_property
    def _path_codes(self) -> tuple:
        """(code of each layer_table row's path, the distinct paths)."""
        return self._table_codes[1] or L.path_codes(self.layer_table)

    @cached_property
    def _path_index(self) -> pd.Index:
        """The distinct paths of layer_table, indexed once for every lookup."""
        return L.path_index(self._path_codes[1])

    @cached_property
    def _path_pos(self) -> dict:
        """path -> its code in layer_table (the position in _path_codes[1])."""
        return {p: i for i, p in enumerate(self._path_codes[1].tolist())}

    def _codes_of(self, paths) -> np.ndarray:
        """The layer_table code of each path, -1 where it has none: a dict lookup,
        far cheaper than building a pandas Index per call on a log's few files."""
        pos = self._path_pos
        return np.fromiter((pos.get(p, -1) for p in paths), np.int64)

    @cached_property
    def owner(self) -> pd.Series:
        """path -> the highest layer that touched it (layers.LAYERS)."""
        paths, layers, _ = self._owners
        t = self.layer_table
        if not len(t):
            return pd.Series(dtype=object)
        return pd.Series(layers, index=pd.Index(paths, name="path", dtype=t["path"].dtype),
                         name="layer")  # str dtype inferred, as a frame column gets

    @cached_property
    def _owners(self) -> tuple:
        """(paths, owning layer of each), as layers.owner_arrays gives them."""
        t = self.layer_table
        return L.owner_arrays(t, self._path_codes if len(t) else None)


    @cached_property
    def file_time(self) -> np.ndarray:
        """I/O seconds of each path of the layer table (its _path_codes' order)."""
        t = self.layer_table
        return L.file_time(t, self._path_codes) if len(t) else np.empty(0)

    @cached_property
    def io_time(self) -> float:
        """The job's I/O seconds summed over ranks: each file counted once, at its
        largest layer; folded <AGGREGATE> records at the POSIX/STDIO level added."""
        t = float(np.nansum(self.file_time))  # as Series.sum()
        for m in ("POSIX", "STDIO"):
            df = self.frame(m)
            if df is not None:
                agg = df["record_id"].to_numpy() == S.AGGREGATE_ID
                t += float(sum(S.concept(df, m, c)[agg].sum()
                               for c in ("time_read", "time_write", "time_meta")))
        return t

    @cached_property
    def io_bytes(self) -> float:
        t = self.layer_table
        if not len(t):
            return 0.0
        per = L.max_by_path(t, S.column(t, "bytes_read") + S.column(t, "bytes_written"),
                            self._path_codes)
        return float(np.nansum(per))

    def own_rows(self, module: str) -> np.ndarray:
        """Rows of module whose file the module's own layer owns (the application
        called it there), folded <AGGREGATE> records and files that are not regular
        (Context.nonregular) excluded: the rows a pattern rule may judge."""
        if module not in self._own_rows:
            df = self.frame(module)
            if df is None:
                return np.zeros(0, bool)
            keep = (df["record_id"].to_numpy() != S.AGGREGATE_ID) & self.regular_rows(module)
            if "path" in df.columns and module in ("POSIX", "STDIO", "MPIIO"):
                keep &= self.owner_of(S.objects(df), L.LAYER_OF[module]) == \
                    L.LAYER_OF[module]
            self._own_rows[module] = keep
        return self._own_rows[module].copy()

    @cached_property
    def _own_rows(self) -> dict:
        return {}

    def own_frame(self, module: str) -> pd.DataFrame:
        """The frame's own_rows, filtered once for every rule that judges them (a
        boolean filter costs pandas ~0.2 ms even on a few rows). Read-only."""
        if module not in self._own_frames:
            self._own_frames[module] = S.rows(self.frame(module), self.own_rows(module))
        return self._own_frames[module]

    @cached_property
    def _own_frames(self) -> dict:
        return {}

    @cached_property
    def nonregular(self) -> set:
        """Paths that are not regular files on storage, kept out of the metadata,
        imbalance and access-pattern rules: the std streams (<STDOUT>...), files whose
        POSIX_FILE_TYPE is not a regular file's, files on pseudo file systems (the
        mounts' types), and, for logs that carry no file type (Darshan's), files whose
        opens each took over SLOW_OPEN seconds for little data: an open of a FIFO waits
        for the other end (a terminal or a pipe is not a metadata storm)."""
        out = set()
        for m in ("POSIX", "STDIO"):
            df = self.frame(m)
            if df is None or "path" not in df.columns:
                continue
            paths = S.objects(df)
            odd = np.isin(paths, S.SPECIAL_PATHS)
            if f"{m}_FILE_TYPE" in df.columns:
                kind = S.col(df, f"{m}_FILE_TYPE")
                odd |= (kind != 0) & (kind != REGULAR)
            else:
                opens = np.maximum(S.concept(df, m, "opens"), 1)
                moved = S.concept(df, m, "bytes_read") + S.concept(df, m, "bytes_written")
                odd |= (S.concept(df, m, "time_meta") / opens >= SLOW_OPEN) & \
                    (moved / opens < 1 << 20)
            out |= set(paths[odd].tolist())
            if self.mounts is not None and "fs_type" in self.mounts.columns:
                pseudo = [re.escape(str(mp).rstrip("/") + "/") for mp, fs in
                          zip(self.mounts["mount_point"], self.mounts["fs_type"])
                          if str(fs) in PSEUDO_FS]
                if pseudo:  # one pass over the names, whatever the number of mounts
                    on = pd.Series(paths, dtype=object).str.match("|".join(pseudo))
                    out |= set(paths[on.fillna(False).to_numpy(bool)].tolist())
        return out

    def regular_rows(self, module: str) -> np.ndarray:
        """Rows of module on regular files (Context.nonregular left out)."""
        df = self.frame(module)
        if df is None:
            return np.zeros(0, bool)
        if not self.nonregular or "path" not in df.columns:
            return np.ones(len(df), bool)
        odd = self.nonregular
        return np.fromiter((p not in odd for p in S.objects(df)), bool, len(df))

    def owner_of(self, paths, default: str) -> np.ndarray:
        """The owning layer of each path (default for paths no layer table has)."""
        paths = np.asarray(paths, dtype=object)
        owners = self._owners[2]  # per path code
        if not len(owners) or (owners == default).all():  # one layer: nothing to look up
            return np.full(len(paths), default, dtype=object)
        at = self._codes_of(paths)
        out = owners[np.maximum(at, 0)]
        out[at < 0] = default
        return out

    def owned_paths(self, layer: str) -> set:
        paths, owners, _ = self._owners
        return set(paths[owners == layer].tolist())

    def time_of(self, paths) -> float:
        """I/O seconds (all ranks) spent on these files."""
        ft = self.file_time
        # summed in the order of the set, as Series.reindex(list(set)).sum() would
        keys = list(set(paths))
        if not keys or not len(ft):
            return 0.0
        at = self._codes_of(keys)  # file_time's index
        v = ft[np.maximum(at, 0)]
        v[(at < 0) | np.isnan(v)] = 0.0
        return float(v.sum())

    def layers_of(self, paths) -> dict:
        t = self.layer_table
        return L.evidence(t, paths, self._path_codes, self._path_index) if len(t) else {}

    def parallel(self, paths) -> bool:
        """These files are used by more than one rank (so collective calls can merge
        their accesses); a file one rank opens, even through MPI-IO, is not."""
        if self.nprocs < 2:
            return False
        t = self.layer_table
        if not len(t):
            return False
        codes, uniq = self._path_codes
        at = self._codes_of(set(paths))
        hit = np.zeros(len(uniq), bool)
        hit[at[at >= 0]] = True
        return bool((S.column(t, "nranks")[hit[codes]] > 1).any())

    def ranks_of(self, paths) -> int:
        """How many ranks bear the I/O of these files: the (file, rank) pairs that used
        them, at most nprocs (every rank for none named)."""
        t = self.layer_table
        if not paths or not len(t) or self.nprocs < 2 or len(paths) >= self.nprocs:
            return self.nprocs  # (each file has a rank at least: the cap is reached)
        at = self._codes_of(paths)
        at = at[at >= 0]
        if not len(at):
            return self.nprocs
        return int(min(max(self._path_nranks[at].sum(), 1), self.nprocs))

    @cached_property
    def _path_nranks(self) -> np.ndarray:
        """Ranks that used each distinct path of layer_table (most over its layers)."""
        codes, uniq = self._path_codes
        out = np.zeros(len(uniq))
        np.maximum.at(out, codes, S.column(self.layer_table, "nranks").astype(np.float64))
        return out

    @cached_property
    def lustre_paths(self) -> set:
        """Files with a Lustre layout (a LUSTRE record, POSIX_LUSTRE_STRIPE_COUNT)."""
        out = self.paths_in("LUSTRE")
        df = self.frame("POSIX")
        if df is not None and "POSIX_LUSTRE_STRIPE_COUNT" in df.columns:
            out |= set(S.objects(df)[S.col(df, "POSIX_LUSTRE_STRIPE_COUNT") != 0].tolist())
        return out

    def on_shared_fs(self, paths) -> bool:
        """Some of these files live on a shared (network or parallel) file system, by
        the log's mount table (longest mount point); False when it has none."""
        if not paths:
            return False
        if self.lustre_paths & set(paths):
            return True
        m = self.mounts
        if m is None or "fs_type" not in m.columns:
            return False
        mounts = sorted(((str(mp).rstrip("/") + "/", str(fs)) for mp, fs in
                         zip(m["mount_point"], m["fs_type"])), key=lambda x: -len(x[0]))
        for p in heapq.nsmallest(64, paths):  # a sample: a rule may name 10^6 files
            fs = next((fs for mp, fs in mounts if str(p).startswith(mp) or mp == "/"), "")
            if fs in SHARED_FS:
                return True
        return False

    def block_size(self, paths=()) -> float:
        """The file system block size of these files: POSIX_FILE_ALIGNMENT when the log
        has it, else the block size of the longest matching mount point; 0 if unknown."""
        df = self.frame("POSIX")
        if df is not None and "POSIX_FILE_ALIGNMENT" in df.columns:
            sel = df["path"].isin(set(paths)).to_numpy() if paths and "path" in df.columns \
                else np.ones(len(df), bool)
            a = S.col(df, "POSIX_FILE_ALIGNMENT")[sel]
            if (a > 0).any():
                return float(a.max())
        if self.mounts is not None and "block_size" in self.mounts.columns:
            best, size = -1, 0.0
            for p in paths or ():
                for mp, bs in zip(self.mounts["mount_point"], self.mounts["block_size"]):
                    mp = str(mp)
                    if (p == mp or p.startswith(mp.rstrip("/") + "/")) and len(mp) > best:
                        best, size = len(mp), float(bs)
            return size
        return 0.0

    @cached_property
    def lustre_components(self) -> dict:
        """record_id -> (stripe size, stripe count, start, end, bytes in it, bytes) of the
        composite layout's OST component holding most of the bytes the file's accesses
        moved (pfl.holding: each POSIX row's bytes laid below its highest byte, pfl.extent),
        for the files whose components the LUSTRE frame lists: LUSTRE_COMP<N>_* columns
        (an iochar log's LUSTRE module, a Darshan log's frame), else a Darshan frame's
        LUSTRE_COMPS text (docs/log-format.md)."""
        comps: dict = {}
        lu = self.frame("LUSTRE")
        if lu is not None and "LUSTRE_COMPONENTS" in lu.columns:
            lu = S.rows(lu, S.col(lu, "LUSTRE_COMPONENTS") > 1)
            rid = S.column(lu, "record_id").tolist()
            # ranks' rows of one file list the same components, some fewer (a rank that
            # reached a lower byte lists the first of them): the longest is the file's
            if pfl.slots(lu.columns, "LUSTRE_"):
                for r, c in zip(rid, pfl.from_columns(lu, "LUSTRE_")):
                    if len(c) > len(comps.get(r, ())):
                        comps[r] = c
            elif "LUSTRE_COMPS" in lu.columns:
                parsed: dict = {}
                for r, text in zip(rid, S.objects(lu, "LUSTRE_COMPS")):
                    if text not in parsed:  # files share a few layouts: each parsed once
                        parsed[text] = pfl.parse(text)
                    if len(parsed[text]) > len(comps.get(r, ())):
                        comps[r] = parsed[text]
        px = self.frame("POSIX")
        if px is None or "POSIX_MAX_BYTE_READ" not in px.columns:
            return {}
        if not comps:  # plain layouts (most logs): the frame's stripe is the one
            return {}
        rid = S.column(px, "record_id")
        want = np.isin(rid, np.fromiter(comps, dtype=rid.dtype, count=len(comps)))
        top = np.maximum(S.col(px, "POSIX_MAX_BYTE_READ"), S.col(px, "POSIX_MAX_BYTE_WRITTEN"))
        moved = S.col(px, "POSIX_BYTES_READ") + S.col(px, "POSIX_BYTES_WRITTEN")
        rows: dict = {}
        for r, t, b in zip(rid[want].tolist(), top[want].tolist(), moved[want].tolist()):
            if t >= 0:
                rows.setdefault(r, []).append((t + 1, b))
        out = {}
        for r, c in comps.items():
            got = pfl.holding(c, rows.get(r, ()))
            if got is not None:
                share = pfl.attribute(c, rows[r])[c.index(got)]
                out[r] = (float(got[2]), float(got[3]), float(got[0]), float(got[1]),
                          share, float(sum(b for _, b in rows[r])))
        return out

    def stripe_unit(self, paths=()) -> float:
        """The stripe size of these files (any file if none given): the MPI-IO
        striping_unit hint, else the Lustre layout: of a composite (PFL) layout the
        component the accesses fell in (lustre_components), else the LUSTRE frame of a
        Darshan log or iochar's POSIX_LUSTRE_STRIPE_SIZE; 0 if the log knows none."""
        for module, name in (("MPIIO", "MPIIO_HINT_STRIPING_UNIT"),
                             ("LUSTRE", "LUSTRE_STRIPE_SIZE"),
                             ("POSIX", "POSIX_LUSTRE_STRIPE_SIZE")):
            df = self.frame(module)
            if df is None or name not in df.columns:
                continue
            if module != "MPIIO" and self.lustre_components:
                rids = S.column(df, "record_id")
                sel = df["path"].isin(set(paths)).to_numpy() if paths and \
                    "path" in df.columns else np.ones(len(df), bool)
                sizes = [self.lustre_components.get(r, (v,))[0] for r, v in
                         zip(rids[sel].tolist(), S.col(df, name)[sel].tolist())]
                if sizes and max(sizes) > 0:
                    return float(max(sizes))
                continue
            sel = df["path"].isin(set(paths)).to_numpy() if paths and "path" in df.columns \
                else np.ones(len(df), bool)
            v = S.col(df, name)[sel]
            if len(v) and v.max() > 0:
                return float(v.max())
        return 0.0


def least(paths, k: int = 3) -> list:
    """sorted(paths)[:k] without sorting them all (a rule may name a million files)."""
    return heapq.nsmallest(k, paths)


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def num(x) -> str:
    return f"{round(float(x)):,}"


def nonzero(evidence: dict) -> dict:
    return {k: v for k, v in evidence.items() if v}
