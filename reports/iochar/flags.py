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
