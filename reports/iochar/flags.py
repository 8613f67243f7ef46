"""The JOB `partial` bits (docs/log-format.md), as runtime/flags.h declares them;
tests/python/test_flags.py checks that this table equals the C header's."""

PARTIAL = {
    "FOLDED": 1,  # memory bound reached: files folded into aggregate records
    "PER_RANK": 2,  # a per-rank log: no MPI_Finalize, or a rank left the reduction
    "TRACE_TRUNCATED": 4,  # the trace kept its first rows only
    "RECOVERED": 8,  # recovered from a live file: the process wrote no log
    "MISSING_RANKS": 16,  # merged per-rank logs lack some ranks (missing_ranks)
    "IO_URING": 32,  # an io_uring was set up: its I/O is in no counter
    "SHARED_MMAP": 64,  # a file mapped shared and writable: stores are in no counter
    "TRUNCATED_PATHS": 128,  # names longer than the path limit, recorded truncated
}


def partial_names(bits: int) -> list[str]:
    """The names of the bits set in a JOB `partial` value (unknown bits as numbers)."""
    names = [n for n, b in PARTIAL.items() if bits & b]
    rest = bits & ~sum(PARTIAL.values())
    return names + [str(1 << i) for i in range(rest.bit_length()) if rest >> i & 1]
