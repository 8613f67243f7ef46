"""Bits of the JOB `partial` flags (docs/log-format.md), named once for the reports.

The C runtime declares the same bits as IOCHAR_PARTIAL_<NAME> macros;
tests/unit/test_schema_tables.py checks that every macro it declares agrees with this
table, so a bit cannot mean two things on the two sides.
"""

from __future__ import annotations

FOLDED = 1          # the memory bound was reached: files folded into <AGGREGATE> records
PER_RANK = 2        # a per-rank fallback log (no MPI_Finalize, or a rank left the reduction)
TRACE_FULL = 4      # the trace filled its buffer: later calls counted, not traced
LIVE = 8            # recovered from a live file: the process wrote no log
MISSING_RANKS = 16  # per-rank logs of an MPI job lack some ranks (JOB missing_ranks)
IO_URING = 32       # a process set up an io_uring: its I/O is in no counter
SHARED_MAP = 64     # a recorded file was mapped shared and writable
TRUNCATED = 128     # some names were longer than the path limit (JOB truncated_paths)

BITS = {"FOLDED": FOLDED, "PER_RANK": PER_RANK, "TRACE_FULL": TRACE_FULL, "LIVE": LIVE,
        "MISSING_RANKS": MISSING_RANKS, "IO_URING": IO_URING, "SHARED_MAP": SHARED_MAP,
        "TRUNCATED": TRUNCATED}
RUNTIME_BITS = 0xFF  # the bits a process's runtime can set (a live file carries these)


def flags(job: dict) -> int:
    """The JOB's `partial` value as an int (0 when absent or not an integer)."""
    v = job.get("partial", 0)
    return int(v) if isinstance(v, int) else 0


def reasons(job: dict) -> list:
    """One line per bit of the JOB `partial` flags (docs/log-format.md)."""
    bits, out = int(job.get("partial") or 0), []
    if bits & FOLDED:
        out.append(f"{job.get('folded_files', 0)} files past the memory bound were folded into "
                   "<AGGREGATE> records (totals stay exact)")
    if bits & PER_RANK:
        out.append("merged from per-rank logs: " + (
            "a rank could not take part in reducing the records at MPI_Finalize"
            if job.get("finalized") else "the job did not reach MPI_Finalize"))
    if bits & TRACE_FULL:
        out.append("the trace filled its buffer; later calls were counted, not traced")
    if bits & LIVE:
        how = {"killed": "killed by a signal", "_exit": "left by _exit",
               "MPI_Abort": "ended by MPI_Abort"}.get(job.get("ended_by"), "ended abnormally")
        out.append("counters recovered from live files of processes that wrote no log "
                   f"(this one: {how}); a call in flight at the end may be counted in part")
    if bits & MISSING_RANKS:
        out.append(f"no log or live file for ranks {job.get('missing_ranks', '?')}")
    if bits & IO_URING:
        out.append("a process used io_uring: its reads and writes are in no counter")
    if bits & SHARED_MAP:
        out.append("a recorded file was mapped shared and writable: stores through the mapping "
                   "are in no write counter")
    return out
