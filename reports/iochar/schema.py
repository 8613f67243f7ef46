"""What each counter is, read from the log's SCHEMA: the one place the reports learn it.

The C counter lists declare every counter with its reduction op (runtime/counters.h and
the wrappers' *_counters.h); the log carries them in each module's SCHEMA. The reports
take every grouping from there (which counters are totals, maxima, timestamps, times,
histogram bins, top-k tables, ranks) instead of keeping lists of their own, so a counter
added in C shows up in the reports without a Python change.

A schema entry is (name, op) or, from a reader that knows the log's roles, (name, op,
role). Without a role, `role()` derives it from the op, and from the name for the one
thing the op does not say (a SUM counter named <MOD>_SIZE_READ_<bin> / _SIZE_WRITE_<bin>
is a bin of the access-size histogram); every report asks `role()`, nothing else.
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

# Roles, named as runtime/counters.h's enum iochar_role names them: what a report may
# do with a counter.
TOTAL = "TOTAL"            # additive count or bytes: summed over records and ranks
BIN = "BIN"                # additive, one bin of the access-size histogram
MAX = "MAX"                # a maximum (MAX, MAXT: the slowest single op)
MIN = "MIN"                # the smallest non-zero value
SETTING = "SETTING"        # describes the file or its use (modes, hints, layouts)
TIMESTAMP = "TIMESTAMP"    # seconds after the job start (TS_START min, TS_END max)
TIME = "TIME"              # cumulative seconds
TOPK_VALUE = "TOPK_VALUE"  # value of a top-4 table
TOPK_COUNT = "TOPK_COUNT"  # count of a top-4 table
RANK = "RANK"              # a rank number
RANK_STAT = "RANK_STAT"    # about one rank or op chosen by another counter, a variance

_OP_ROLE = {"SUM": TOTAL, "BYTES": TOTAL, "MAX": MAX, "MAXT": MAX, "MIN_NZ": MIN,
            "ANY": SETTING, "TOPK_VAL": TOPK_VALUE, "TOPK_CNT": TOPK_COUNT, "TIME": TIME,
            "TS_START": TIMESTAMP, "TS_END": TIMESTAMP, "FAST_RANK": RANK, "SLOW_RANK": RANK}
_BIN_NAME = re.compile(r"_SIZE_(READ|WRITE)_(\d+[KMG]?)_(\d+[KMG]?|PLUS)\Z")
_UNIT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def role(entry) -> str:
    """The role of one schema entry: (name, op, role) when the log names its roles,
    else (name, op), the role derived from the op, and from the name for a bin."""
    if len(entry) > 2:
        return entry[2]
    name, op = entry[0], entry[1]
    r = _OP_ROLE.get(OPS[op] if 0 <= op < len(OPS) else None, RANK_STAT)
    return BIN if r == TOTAL and _BIN_NAME.search(name) else r


def roles(schema) -> dict[str, str]:
    """{counter: role} for a module's schema, in log order."""
    return {e[0]: role(e) for e in schema}


def with_role(schema, *wanted: str) -> list[str]:
    """Counter names of the schema whose role is one of `wanted`, in log order."""
    return [e[0] for e in schema if role(e) in wanted]


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
