"""Tuning advice: one rule per file, thresholds in config.py, evaluated on plain data.

evaluate() runs the rules, prices each finding by the share of the run's time across
processes it explains (else of the job's I/O time or bytes; the cost model of cost.py
where a rule's accesses are a share of a module's), sets its severity from that cost,
folds symptoms under the cause that explains them (same files; never a costlier or more
severe one), and ranks what is left: the costliest first.
"""

from __future__ import annotations

from . import (
    amplification,
    data_sieving,
    file_per_process,
    fsync_storm,
    hdf5_chunking,
    hints,
    lustre,
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
    strided,
)
from . import config as config
from .base import RANK, SEVERITIES, Advice, Context
from .config import ConfigError

# The registry: every rule module has ID and check(ctx, cfg) -> list[Advice].
RULES = (lustre, hdf5_chunking, netcdf_record_vars, hints, data_sieving, strided, no_collective,
         metadata_heavy, file_per_process, redundant_reads, rank_imbalance, misaligned,
         stdio_heavy, fsync_storm, random_access, small_io, amplification, rw_switches,
         many_seeks)

# cause -> the symptoms it explains when they concern the same files. A symptom
# folded under its cause is not listed on its own; the cause carries its message.
FOLDS = {
    "lustre": {"rank-imbalance", "misaligned", "hints", "small-io", "layer-amplification",
               "stripe-size"},
    "stripe-size": {"misaligned", "small-io", "rank-imbalance", "layer-amplification"},
    "hdf5-chunking": {"misaligned", "small-io", "random-access", "many-seeks", "rw-switches",
                      "layer-amplification"},
    "netcdf-record-vars": {"small-io", "random-access", "rw-switches", "many-seeks",
                           "misaligned", "layer-amplification"},
    "hints": {"small-io", "misaligned", "strided-shared", "no-collective", "random-access"},
    "data-sieving": {"small-io", "rw-switches", "layer-amplification", "random-access",
                     "strided-shared", "no-collective", "rank-imbalance", "redundant-reads",
                     "misaligned"},
    "strided-shared": {"small-io", "random-access", "misaligned", "no-collective",
                       "many-seeks"},
    "no-collective": {"small-io", "misaligned", "random-access"},
    "metadata-heavy": {"small-io"},
    "file-per-process": {"small-io"},
    "redundant-reads": {"small-io", "random-access", "many-seeks"},
    "random-access": {"small-io", "many-seeks"},
    "misaligned": {"small-io"},  # (or the other way: explains())
    "fsync-storm": {"small-io", "metadata-heavy"},
    "rank-imbalance": set(),
    # per (cause, layer judged), over the cause's entry: at MPI-IO, small requests are
    # the cause the jumps POSIX sees under them go with (one remedy: bigger requests
    # through a file view), not the other way round
    ("small-io", "MPIIO"): {"random-access"},
    ("random-access", "MPIIO"): {"many-seeks"},
}
# Rules that name a symptom more than a cause: listed after causes of equal severity.
SYMPTOMS = {"small-io", "random-access", "rw-switches", "many-seeks", "layer-amplification"}

__all__ = ["RANK", "RULES", "SEVERITIES", "Advice", "ConfigError", "Context", "evaluate"]


def price(a: Advice, ctx: Context, sev: dict) -> None:
    """Set a.cost and lower a.severity to what the measured cost supports.

    The cost is judged against the run: the seconds a finding explains as a share of
    the run's time across processes (run time x nprocs). Under `warn` of the run it is
    INFO; under `rank_seconds` on each rank that bears it (a test-sized job) too, unless
    it takes `short_share` of the run and `short_seconds` a rank. A finding priced in
    bytes (re-reads, uneven ranks: a local page cache hides what a shared file system
    charges) is priced by its seconds when its files are on a shared file system.
    A finding with a cost model estimate (cost.estimate) is priced by the model's value;
    when the log supports only bounds, by the upper bound, but no more than WARN unless
    the lower bound itself reaches HIGH: "up to" is worth a look, not proven.
    Without a run time, the share of the job's I/O time (or bytes) stands in."""
    share = None
    est = a.estimate
    secs = a.seconds
    if est is not None:
        secs = est.seconds if est.seconds is not None else est.high
    if a.nbytes is not None and not (secs is not None and ctx.on_shared_fs(a.paths)):
        secs = None
    cap = None
    if secs is not None:
        secs = max(float(secs), 0.0)
        a.cost = {"seconds": secs}
        if est is not None:
            a.cost.update(est.to_cost())
        if ctx.io_time > 0:
            a.cost.update(io_time_s=ctx.io_time, io_time_share=min(secs / ctx.io_time, 1.0))
        run = ctx.run_time * ctx.nprocs
        if run > 0:
            share = min(secs / run, 1.0)
            rank_s = secs / ctx.ranks_of(a.paths)
            a.cost.update(run_s=run, run_share=share, rank_seconds=rank_s)
            if rank_s < sev["rank_seconds"] and not (
                    share >= sev["short_share"] and rank_s >= sev["short_seconds"]):
                share = min(share, sev["info_below"] / 2)  # a test-sized job: INFO
        elif ctx.io_time > 0:
            share = a.cost["io_time_share"]
        if est is not None and est.seconds is None:
            low = est.low / run if run > 0 else est.low / ctx.io_time if ctx.io_time else 0
            cap = None if low >= sev["high"] else "warn"
    elif a.nbytes is not None and ctx.io_bytes > 0:
        share = min(a.nbytes / ctx.io_bytes, 1.0)
        a.cost = {"bytes": a.nbytes, "io_bytes": ctx.io_bytes, "bytes_share": share}
    if share is None:
        return
    by_cost = "high" if share >= sev["high"] else "warn" if share >= sev["warn"] else "info"
    if cap is not None and RANK[by_cost] < RANK[cap]:
        by_cost = cap
    if share >= sev["info_below"] and RANK[a.floor] < RANK[by_cost]:
        by_cost = a.floor
    if RANK[by_cost] > RANK[a.severity]:
        a.severity = by_cost


def weight(a: Advice) -> float:
    """What a finding costs, for ordering: its share of the run (else of I/O)."""
    c = a.cost
    return c.get("run_share") or c.get("io_time_share") or c.get("bytes_share") or 0.0


def overlap(cause: Advice, symptom: Advice) -> bool:
    if cause.paths and symptom.paths:  # stops at the first shared file (10^6-file sets)
        return not cause.paths.isdisjoint(symptom.paths)
    return not cause.paths and not symptom.paths


def outranks(a: Advice, b: Advice) -> bool:
    """a is more severe than b, or as severe and costlier."""
    return (RANK[a.severity], -weight(a)) < (RANK[b.severity], -weight(b))


def fold(found: list) -> list:
    """Fold each symptom under the first (most severe, then most costly) cause that
    explains it. A symptom that would be more severe or costlier than its cause is the
    parent instead: the cause is folded under it (nothing folded outranks its parent)."""
    order = sorted(found, key=lambda a: (RANK[a.severity], -weight(a)))
    gone = set()
    for c in order:
        if id(c) in gone:
            continue
        for s in order:
            if s is c or id(s) in gone or not explains(c, s):
                continue
            if overlap(c, s):
                parent, child = (s, c) if outranks(s, c) else (c, s)
                if child is c and ((c.id, s.id) in LIFTS or s.severity == c.severity and
                                   weight(s) <= TIE * weight(c)):
                    # fixing the cause removes the symptom (LIFTS), or they are as costly
                    # within TIE: the cause stays the parent and carries the symptom's
                    # cost and severity (its fix saves at least that)
                    lift(c, s)
                    parent, child = c, s
                parent.folded.append(folded_entry(child))
                parent.folded += child.folded
                child.folded = []
                parent.paths |= child.paths
                gone.add(id(child))
                if child is c:
                    break  # c lives on under s: it folds nothing more
    return [a for a in found if id(a) not in gone]


def explains(cause: Advice, symptom: Advice) -> bool:
    """FOLDS, with turns by the evidence: accesses smaller than the block they miss
    (256-byte appends) are misaligned because they are small; writing whole blocks fixes
    both, so small-io is then the cause and the misalignment its symptom. Findings that
    both name HDF5's independent metadata reads are one (the costlier lists the other)."""
    small = bool((symptom if cause.id == "small-io" else cause).evidence.get(
        "smaller_than_block"))
    if cause.evidence.get("hdf5_metadata_reads") and \
            symptom.evidence.get("hdf5_metadata_reads"):
        return True  # one mechanism seen by two rules: listed once
    if {cause.id, symptom.id} == {"small-io", "misaligned"}:
        return small == (cause.id == "small-io")
    return symptom.id in FOLDS.get((cause.id, cause.module), FOLDS.get(cause.id, ()))


# (cause, symptom) pairs where the cause's remedy certainly removes the symptom: the
# cause is the parent whatever the symptom costs, and carries that cost. Writing whole
# blocks aligns them; collective calls over a file view merge the strided pieces (and are
# the collective calls); sorting and reading larger regions makes the reads large; a
# collective transfer (or no fill) ends the read-back and what it moves.
LIFTS = {("small-io", "misaligned"), ("strided-shared", "no-collective"),
         ("strided-shared", "small-io"), ("random-access", "small-io"),
         *(("data-sieving", s) for s in ("small-io", "rw-switches", "layer-amplification",
                                          "strided-shared", "no-collective",
                                          "redundant-reads", "random-access"))}
TIE = 1.01  # costs this close are one cost measured twice (a cause and its symptom)
COSTS = ("seconds", "run_share", "io_time_share", "bytes_share", "rank_seconds", "low_s",
         "high_s")


def lift(cause: Advice, symptom: Advice) -> None:
    """Raise the cause's cost and severity to its symptom's where those are larger."""
    for k in COSTS:
        if k in symptom.cost and symptom.cost[k] > cause.cost.get(k, 0.0):
            cause.cost[k] = symptom.cost[k]
    if RANK[symptom.severity] < RANK[cause.severity]:
        cause.severity = symptom.severity


def folded_entry(a: Advice) -> dict:
    """A folded finding as its parent lists it: id, severity, message, and its cost."""
    out = {"id": a.id, "severity": a.severity, "message": a.message}
    for k in ("seconds", "run_share", "io_time_share", "bytes_share"):
        if k in a.cost:
            out[k] = a.cost[k]
    return out


def evaluate(ctx: Context, cfg: dict | None = None) -> list[Advice]:
    """Every enabled rule's findings, priced, folded and ranked (rank 1 first)."""
    cfg = cfg or config.load()
    found = []
    for rule in RULES:
        if cfg[rule.ID].get("enabled", True):
            found += rule.check(ctx, cfg[rule.ID])
    for a in found:
        price(a, ctx, cfg["severity"])
    kept = fold(found)
    kept.sort(key=lambda a: (RANK[a.severity], -weight(a), a.id in SYMPTOMS))
    for i, a in enumerate(kept, 1):
        a.rank = i
    return kept
