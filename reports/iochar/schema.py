"""What each counter is, read from the log's SCHEMA: the one place the reports learn it.

The C counter lists declare every counter with its reduction op (runtime/counters.h and
the wrappers' *_counters.h); the log carries them in each module's SCHEMA. The reports
take every grouping from there (which counters are totals, maxima, timestamps, times,
histogram bins, top-k tables, ranks) instead of keeping lists of their own, so a counter
added in C shows up in the reports without a Python change.

Log.schema gives (name, op, role) entries: the role from the log's ROLES section, or
for an older log `derive_role` (the op, and the name for what the op does not say: a SUM
counter named <MOD>_SIZE_READ_<bin> is a histogram bin, some MAX counters are
settings). Every report asks `role()`, nothing else; a hand-built (name, op) works too.
"""

from __future__ import annotations

import functools
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

# Role numbers of the log's ROLES section (runtime/counters.h enum iochar_role).
ROLES = (TOTAL, BIN, MAX, MIN, SETTING, TIMESTAMP, TIME, TOPK_VALUE, TOPK_COUNT, RANK, RANK_STAT)
ROLE = {name: i for i, name in enumerate(ROLES)}
_OP_ROLE = {"SUM": TOTAL, "MAX": MAX, "MIN_NZ": MIN, "ANY": SETTING, "TOPK_VAL": TOPK_VALUE,
            "TOPK_CNT": TOPK_COUNT, "BYTES": TOTAL, "TIME": TIME, "TS_START": TIMESTAMP,
            "TS_END": TIMESTAMP, "MAXT": MAX, "MAXT_SIZE": RANK_STAT, "FAST_RANK": RANK,
            "SLOW_RANK": RANK}
# Logs written before ROLES: the MAX-reduced counters that are settings or flags.
_SETTING_MAX = re.compile(r"_APPROX$|_NDIMS$|_NPOINTS$|_DATATYPE_SIZE$|_FILTERS$|_USE_|_IS_|"
                          r"_DEFLATE_LEVEL$|_COLL_METADATA_")
_SIZE_BIN = re.compile(r"_SIZE_(READ|WRITE)_(AGG_)?\d")
_BIN_NAME = re.compile(r"_SIZE_(READ|WRITE)_(\d+[KMG]?)_(\d+[KMG]?|PLUS)\Z")
_UNIT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def derive_role(name: str, op: int) -> str:
    """The role of a counter in a log without ROLES (op and name, as the C lists say)."""
    op_name = OPS[op] if 0 <= op < len(OPS) else ""
    if op_name == "SUM" and _SIZE_BIN.search(name):
        return BIN
    if op_name == "MAX" and _SETTING_MAX.search(name):
        return SETTING
    return _OP_ROLE.get(op_name, RANK_STAT)


def role(entry) -> str:
    """The role of one schema entry: (name, op, role) as Log.schema gives it (from the
    log's ROLES section, else derived), or a hand-built (name, op)."""
    return entry[2] if len(entry) > 2 else derive_role(entry[0], entry[1])


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
    # a frame's columns: one tolist(), not an iteration of pandas' Arrow-backed strings
    return list(_size_bins(tuple(names.tolist() if hasattr(names, "tolist") else names),
                           module))


@functools.lru_cache(maxsize=256)  # per schema: the logs of one tool version share it
def _size_bins(names: tuple, module: str) -> tuple:
    labels = set()
    for n in names:
        for d in ("READ", "WRITE"):
            prefix = f"{module}_SIZE_{d}_"
            if n.startswith(prefix) and _BIN_NAME.search(n):
                labels.add(n[len(prefix):])
    return tuple(sorted(labels, key=bin_bounds))


def topk_tables(schema: list) -> list:
    """[(value column indices, count column indices)]: k TOPK_VAL then k TOPK_CNT."""
    ops = [op for _, op in schema]
    tables, i = [], 0
    while i < len(ops):
        if ops[i] == OP["TOPK_CNT"]:
            raise ValueError(f"{schema[i][0]} is a top-k count outside a table")
        if ops[i] != OP["TOPK_VAL"]:
            i += 1
            continue
        k = 0
        while i + k < len(ops) and ops[i + k] == OP["TOPK_VAL"]:
            k += 1
        cnt = list(range(i + k, i + 2 * k))
        if cnt[-1] >= len(ops) or any(ops[c] != OP["TOPK_CNT"] for c in cnt):
            raise ValueError(f"top-k table at {schema[i][0]} lacks its {k} TOPK_CNT counters")
        tables.append((list(range(i, i + k)), cnt))
        i += 2 * k
    return tables
