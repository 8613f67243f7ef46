"""What every advice rule shares: the Advice record and the Context rules read from."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from .. import summary as S

SEVERITIES = ("high", "warn", "info")  # most severe first
RANK = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass
class Advice:
    id: str
    severity: str
    message: str  # one line, with the numbers
    recommendation: str
    evidence: dict  # counters (and derived values) that triggered the rule
    module: str | None = None
    files: list = field(default_factory=list)  # worst files, when per-file

    def to_dict(self) -> dict:
        return {"id": self.id, "severity": self.severity, "module": self.module,
                "message": self.message, "recommendation": self.recommendation,
                "evidence": {k: S._py(v) for k, v in self.evidence.items()},
                "files": list(self.files)}


class Context:
    """Job, record frames, rank frames and the summary, with cached per-file views."""

    def __init__(self, job: dict, records: dict, ranks: dict | None = None,
                 summary: dict | None = None):
        self.job = S.job_block(job) if "run_time" not in job else job
        self.records = {m: df for m, df in records.items() if df is not None and len(df)}
        self.ranks = ranks or {}
        self.summary = summary or S.summarize(self.job, self.records, self.ranks)
        self._files: dict = {}

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


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def num(x) -> str:
    return f"{round(float(x)):,}"


def nonzero(evidence: dict) -> dict:
    return {k: v for k, v in evidence.items() if v}
