"""Tuning advice: one rule per file, thresholds in config.py, evaluated on plain data."""

from __future__ import annotations

from . import config as config
from . import (
    fsync_storm,
    hdf5_chunking,
    hints,
    many_seeks,
    metadata_heavy,
    misaligned,
    netcdf_record_vars,
    no_collective,
    random_access,
    rank_imbalance,
    redundant_reads,
    rw_switches,
    small_io,
    stdio_heavy,
)
from .base import RANK, SEVERITIES, Advice, Context
from .config import ConfigError

# The registry: every rule module has ID and check(ctx, cfg) -> list[Advice].
RULES = (small_io, random_access, misaligned, no_collective, stdio_heavy, metadata_heavy,
         rank_imbalance, redundant_reads, hints, hdf5_chunking, netcdf_record_vars,
         fsync_storm, rw_switches, many_seeks)

__all__ = ["RANK", "RULES", "SEVERITIES", "Advice", "ConfigError", "Context", "evaluate"]


def evaluate(ctx: Context, cfg: dict | None = None) -> list[Advice]:
    """Run every enabled rule; most severe first, then by rule order."""
    cfg = cfg or config.load()
    found = []
    for order, rule in enumerate(RULES):
        if cfg[rule.ID].get("enabled", True):
            found += [(RANK[a.severity], order, a) for a in rule.check(ctx, cfg[rule.ID])]
    return [a for *_, a in sorted(found, key=lambda t: t[:2])]
