"""The JOB `partial` bits (docs/log-format.md), as runtime/flags.h declares them;
tests/unit/test_flags.py checks that this table equals the C header's."""

from .summary import human_bytes

PARTIAL = {
    "FOLDED": 1,  # memory bound reached: files folded into aggregate records
    "PER_RANK": 2,  # a per-rank log: no MPI_Finalize, or a rank left the reduction
    "TRACE_TRUNCATED": 4,  # the trace kept its first rows only
    "RECOVERED": 8,  # recovered from a live file: the process wrote no log
    "MISSING_RANKS": 16,  # merged per-rank logs lack some ranks (missing_ranks)
    "IO_URING": 32,  # an io_uring was set up: its I/O is in no counter
    "SHARED_MMAP": 64,  # a file mapped shared and writable: stores are in no counter
    "TRUNCATED_PATHS": 128,  # names longer than the path limit, recorded truncated
    "RANKS_LEFT_OUT": 512,  # IOCHAR_RANKS(_EXCLUDE): some ranks' records not kept
}


def partial_names(bits: int) -> list[str]:
    """The names of the bits set in a JOB `partial` value (unknown bits as numbers)."""
    names = [n for n, b in PARTIAL.items() if bits & b]
    rest = bits & ~sum(PARTIAL.values())
    return names + [str(1 << i) for i in range(rest.bit_length()) if rest >> i & 1]


RUNTIME_BITS = 0xFF  # the bits a process's runtime sets (a live file carries these)


def flags(job: dict) -> int:
    """The JOB's `partial` value as an int (0 when absent or not an integer)."""
    v = job.get("partial", 0)
    return int(v) if isinstance(v, int) else 0


def reasons(job: dict) -> list:
    """One line per bit of the JOB `partial` flags (docs/log-format.md)."""
    bits, out = int(job.get("partial") or 0), []
    if bits & PARTIAL["FOLDED"]:
        bound = job.get("memory_bound")
        bound = f" ({human_bytes(bound)}, IOCHAR_MEMORY)" if isinstance(bound, int) and bound > 0 else ""
        limit = job.get("max_records")
        limit = (f" or the record limit ({limit} per module and process, IOCHAR_MAX_RECORDS)"
                 if isinstance(limit, int) and limit > 0 else "")
        out.append(f"{job.get('folded_files', 0)} files past the memory bound{bound}{limit} were "
                   "folded into <AGGREGATE> records (totals stay exact)")
    if bits & PARTIAL["PER_RANK"]:
        out.append("merged from per-rank logs: " + (
            "a rank could not take part in reducing the records at MPI_Finalize"
            if job.get("finalized") else "the job did not reach MPI_Finalize"))
    if bits & PARTIAL["TRACE_TRUNCATED"]:
        out.append("the trace filled its buffer; later calls were counted, not traced")
    if bits & PARTIAL["RECOVERED"]:
        how = {"killed": "killed by a signal", "_exit": "left by _exit",
               "MPI_Abort": "ended by MPI_Abort"}.get(job.get("ended_by"), "ended abnormally")
        out.append("counters recovered from live files of processes that wrote no log "
                   f"(this one: {how}); a call in flight at the end may be counted in part")
    if job.get("modules_off"):  # not a partial bit: the site chose it, the log says it
        out.append(f"modules turned off (IOCHAR_MODULES, IOCHAR_DISABLE_MODULES): "
                   f"{job['modules_off']}: their I/O is in no counter")
    if bits & PARTIAL["RANKS_LEFT_OUT"]:
        out.append(f"only the records of ranks {job.get('ranks_kept', '?')} were kept "
                   "(IOCHAR_RANKS): the other ranks' I/O is in no counter")
    if bits & PARTIAL["MISSING_RANKS"]:
        out.append(f"no readable log or live file for ranks {job.get('missing_ranks', '?')}")
    if job.get("unreadable_logs"):  # per-rank logs left out (log.open_ranks)
        out.append(f"left out, unreadable: {job['unreadable_logs']}")
    if bits & PARTIAL["IO_URING"]:
        out.append("a process used io_uring: its reads and writes are in no counter")
    if bits & PARTIAL["SHARED_MMAP"]:
        out.append("a recorded file was mapped shared and writable: stores through the mapping "
                   "are in no write counter")
    return out
