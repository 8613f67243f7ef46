"""What each counter is, read from the log's SCHEMA: the one place the reports learn it.

The C counter lists declare every counter with its reduction op (runtime/counters.h and
the wrappers' *_counters.h); the log carries them in each module's SCHEMA. The reports
take every grouping from there (which counters are totals, maxima, timestamps, times,
histogram bins, top-k tables, ranks) instead of keeping lists of their own, so a counter
added in C shows up in the reports without a Python change.

A counter's role is derived from its op, and from its name for the one thing the op
does not say (a SUM counter named <MOD>_SIZE_READ_<bin> / _SIZE_WRITE_<bin> is a bin of
the access-size histogram). When the log's SCHEMA carries an explicit role, `role()` is
the one function to switch over.
"""

from __future__ import annotations

import math
import re

# Reduction op names by their numeric value in SCHEMA (enum iochar_op in
# runtime/counters.h; tests/unit/test_schema_tables.py checks the two agree).
OPS = ("SUM", "MAX", "MIN_NZ", "ANY", "TOPK_VAL", "TOPK_CNT", "BYTES", "TIME",
       "TS_START", "TS_END", "MAXT", "MAXT_SIZE", "FAST_RANK", "FAST_BYTES",
       "FAST_TIME", "SLOW_RANK", "SLOW_BYTES", "SLOW_TIME", "VAR_TIME", "VAR_BYTES")
OP = {name: i for i, name in enumerate(OPS)}

# Roles (the list): what a report may do with a counter.
TOTAL = "total"          # additive count or byte total: summed over records and ranks
BIN = "histogram bin"    # additive, one bin of the access-size histogram
MAX = "max"              # largest value (MAX, MAXT: the slowest rank's time)
MIN = "min"              # smallest non-zero value
SETTING = "setting"      # any rank's value (modes, hints, layouts)
TOPK_VALUE = "top-k value"
TOPK_COUNT = "top-k count"
TIME = "time"            # cumulative seconds, summed
TIMESTAMP = "timestamp"  # seconds after the job start (TS_START min, TS_END max)
RANK = "rank"            # a rank number, or a statistic of the fastest/slowest rank
VARIANCE = "variance"    # across the ranks of one file: does not combine across files

_OP_ROLE = {"SUM": TOTAL, "BYTES": TOTAL, "MAX": MAX, "MAXT": MAX, "MAXT_SIZE": MAX,
            "MIN_NZ": MIN, "ANY": SETTING, "TOPK_VAL": TOPK_VALUE, "TOPK_CNT": TOPK_COUNT,
            "TIME": TIME, "TS_START": TIMESTAMP, "TS_END": TIMESTAMP,
            "FAST_RANK": RANK, "FAST_BYTES": RANK, "FAST_TIME": RANK,
            "SLOW_RANK": RANK, "SLOW_BYTES": RANK, "SLOW_TIME": RANK,
            "VAR_TIME": VARIANCE, "VAR_BYTES": VARIANCE}
_BIN_NAME = re.compile(r"_SIZE_(READ|WRITE)_(\d+[KMG]?)_(\d+[KMG]?|PLUS)\Z")
_UNIT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def role(name: str, op: int) -> str | None:
    """The role of one SCHEMA entry; None for an op this reader does not know."""
    name_op = OPS[op] if 0 <= op < len(OPS) else None
    r = _OP_ROLE.get(name_op)
    if r == TOTAL and _BIN_NAME.search(name):
        return BIN
    return r


def roles(schema) -> dict[str, str | None]:
    """{counter: role} for a module's [(name, op)] schema, in log order."""
    return {n: role(n, op) for n, op in schema}


def with_role(schema, *wanted: str) -> list[str]:
    """Counter names of the schema whose role is one of `wanted`, in log order."""
    return [n for n, op in schema if role(n, op) in wanted]


def bin_bounds(label: str) -> tuple[float, float]:
    """(lower, upper] of a size bin from its label: "1K_10K" -> (1024, 10240),
    "1G_PLUS" -> (2**30, inf). Upper bounds are inclusive (docs/log-format.md)."""
    lo, hi = label.split("_")

    def value(s: str) -> float:
        if s == "PLUS":
            return math.inf
        return int(s.rstrip("KMG")) * _UNIT[s[len(s.rstrip("KMG")):]]
    return value(lo), value(hi)


def size_bins(names, module: str) -> list[str]:
    """Labels of the module's access-size bins named in `names` (a schema's counter
    names or a frame's columns), smallest first; read and write bins together."""
    labels = set()
    for n in names:
        for d in ("READ", "WRITE"):
            prefix = f"{module}_SIZE_{d}_"
            if n.startswith(prefix) and _BIN_NAME.search(n):
                labels.add(n[len(prefix):])
    return sorted(labels, key=bin_bounds)
