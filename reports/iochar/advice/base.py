"""What every advice rule shares: the Advice record and the Context rules read from."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from .. import summary as S
from . import layers as L

SEVERITIES = ("high", "warn", "info")  # most severe first
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

    def to_dict(self) -> dict:
        return {"id": self.id, "severity": self.severity, "rank": self.rank,
                "module": self.module, "message": self.message,
                "recommendation": self.recommendation, "remedy": self.recommendation,
                "evidence": {k: S._py(v) for k, v in self.evidence.items()},
                "cost": {k: S._py(v) for k, v in self.cost.items()},
                "layers": {k: dict(v) for k, v in self.layers.items()},
                "files": list(self.files),
                "folded": [dict(f) for f in self.folded]}


class Context:
    """Job, record frames, rank frames and the summary, with cached per-file views."""

    def __init__(self, job: dict, records: dict, ranks: dict | None = None,
                 summary: dict | None = None, mounts: pd.DataFrame | None = None,
                 files: dict | None = None):
        """files: per-file frames summary.summarize made of these records (its files=)."""
        self.job = S.job_block(job) if "run_time" not in job else job
        self.records = {m: df for m, df in records.items() if df is not None and len(df)}
        self.ranks = ranks or {}
        self.summary = summary or S.summarize(self.job, self.records, self.ranks)
        self.mounts = mounts if mounts is not None and len(mounts) else None
        self._files: dict = {m: f for m, f in (files or {}).items() if m in self.records}

    @property
    def nprocs(self) -> int:
        return max(int(self.job.get("nprocs") or 1), 1)

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

    def files(self, module: str) -> pd.DataFrame:
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
    def owner(self) -> pd.Series:
        """path -> the highest layer that touched it (layers.LAYERS)."""
        paths, layers, _ = self._owners
        t = self.layer_table
        if not len(t):
            return pd.Series(dtype=object)
        return pd.Series(layers, index=pd.Index(paths, name="path", dtype=t["path"].dtype),
                         name="layer", dtype=t["layer"].dtype)

    @cached_property
    def _owners(self) -> tuple:
        """(paths, owning layer of each), as layers.owner_arrays gives them."""
        t = self.layer_table
        return L.owner_arrays(t, self._path_codes if len(t) else None)


    @cached_property
    def file_time(self) -> pd.Series:
        t = self.layer_table
        return L.file_time(t, self._path_codes if len(t) else None)

    @cached_property
    def io_time(self) -> float:
        """The job's I/O seconds summed over ranks: each file counted once, at its
        largest layer; folded <AGGREGATE> records at the POSIX/STDIO level added."""
        t = float(self.file_time.sum())
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
        per = L._max_by_path(t, S.column(t, "bytes_read") + S.column(t, "bytes_written"),
                             "bytes", self._path_codes)
        return float(per.sum())

    def own_rows(self, module: str) -> np.ndarray:
        """Rows of module whose file the module's own layer owns (the application
        called it there), folded <AGGREGATE> records excluded: the rows a pattern
        rule may judge."""
        if module not in self._own_rows:
            df = self.frame(module)
            if df is None:
                return np.zeros(0, bool)
            keep = df["record_id"].to_numpy() != S.AGGREGATE_ID
            if "path" in df.columns and module in ("POSIX", "STDIO", "MPIIO"):
                keep &= self.owner_of(S.objects(df), L.LAYER_OF[module]) == \
                    L.LAYER_OF[module]
            self._own_rows[module] = keep
        return self._own_rows[module].copy()

    @cached_property
    def _own_rows(self) -> dict:
        return {}

    def owner_of(self, paths, default: str) -> np.ndarray:
        """The owning layer of each path (default for paths no layer table has)."""
        paths = np.asarray(paths, dtype=object)
        owners = self._owners[2]  # per path code
        if not len(owners) or (owners == default).all():  # one layer: nothing to look up
            return np.full(len(paths), default, dtype=object)
        at = self._path_index.get_indexer(L.path_index(paths))
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
        at = self._path_index.get_indexer(L.path_index(keys))  # file_time's index
        v = ft.to_numpy(dtype=np.float64)[np.maximum(at, 0)]
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
        sub = t[t["path"].isin(set(paths))]
        return bool((sub["nranks"] > 1).any())

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

    def stripe_unit(self, paths=()) -> float:
        """The stripe size of these files (any file if none given): the MPI-IO
        striping_unit hint, else the Lustre layout: the LUSTRE frame of a Darshan log or
        iochar's POSIX_LUSTRE_STRIPE_SIZE; 0 if the log knows none."""
        for module, name in (("MPIIO", "MPIIO_HINT_STRIPING_UNIT"),
                             ("LUSTRE", "LUSTRE_STRIPE_SIZE"),
                             ("POSIX", "POSIX_LUSTRE_STRIPE_SIZE")):
            df = self.frame(module)
            if df is None or name not in df.columns:
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
