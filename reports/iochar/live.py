"""Live files: the record memory a process keeps in a shared file mapping (runtime/live.c),
turned into a normal log when the process could not write one (killed, _exit, MPI_Abort).

The layout is in docs/log-format.md ("Live files"). Nothing in the file is trusted: every
offset, size and count is checked against the bytes there before it is used.
"""

from __future__ import annotations

import math
import os
import re
import struct
from math import gcd
from pathlib import Path

import numpy as np

from .atomicfile import write_new
from .logformat import LogError, Reader
from .schema import OP

MAGIC = b"IOCHARLV"
# 1-3 still read: state in each record, top-k tables too (1) or apart (2), state apart (3);
# 4: metadata-only entries among the records
VERSION = 4
HEADER_SIZE = 20480
# header sizes this reader knows: 16384 before the job fields (issue 38), then 20480
HEADER_SIZES = (16384, HEADER_SIZE)
HEADER = struct.Struct("<8sIIQIiiiiiiiIIddQQQQQQQQQH15H16qq64s64s256s256s4096s8192sQQHHIHHHH3072s")
FIELDS = ("magic version header_size map_size state status pid rank nprocs log_pid "
          "mpi_initialized forked uid rec_size start_wall end_wall memory_bound schema_off "
          "schema_len agg_off agg_size arena_off arena_size arena_used seq rec_module_off").split()
STATES = {0: "killed", 1: "_exit", 2: "MPI_Abort", 3: "logged"}
LOGGED = 3
# iochar_rw_layout: 30 int16 indices (runtime/core.h), in this order
LAYOUT = ("ops0 ops1 bytes0 bytes1 max_byte0 max_byte1 consec0 consec1 seq0 seq1 bin0 bin1 "
          "mts0 mts1 rw_switches access1 stride1 file_not_aligned file_alignment "
          "mem_not_aligned mem_alignment ft0 ft1 ft2 fmt0 fmt1 fs0 fs1 fe0 fe1").split()
RW_OFF = ("run_k run_len run_next run_dir run_timed run_t last_byte last_end access stride "
          "topk_size topk_val topk_cnt topk_n topk_last").split()
TOPK_SLOTS = 16
NAME_RE = re.compile(r"^\.(?P<log>.+)\.[0-9a-f]{16}\.live$")
MAX_MODULES = 64


def is_live(path) -> bool:
    """A file whose name a live file has (.<log name>.<16 hex>.live)."""
    return bool(NAME_RE.match(Path(path).name))


def _fail(name, msg):
    raise LogError(f"{name}: live file: {msg}")


def _cstr(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode(errors="replace")


def _size_bin(n: int) -> int:
    for i, lim in enumerate((100, 1024, 10240, 102400, 1048576, 4194304, 10485760,
                             104857600, 1073741824)):
        if n <= lim:
            return i
    return 9


class _Module:
    def __init__(self, mid, name, version, n_int, n_flt, state_size, layout, more, schema,
                 meta=()):
        self.id, self.name, self.version = mid, name, version
        self.n_int, self.n_flt, self.state_size = n_int, n_flt, state_size
        # no layout at all (every index -1): the module has no access accounting
        self.layout = dict(zip(LAYOUT, layout)) if any(v >= 0 for v in layout) else None
        self.more = more
        self.schema = schema
        self.meta = list(meta)  # the counter index of each slot of a metadata-only entry


def parse_schema(buf: bytes, name: str, max_counters: int, version: int = VERSION) -> dict:
    """The modules a live file's records may belong to, by module id."""
    r, mods = Reader(buf, f"{name}: live file", short="schema runs past its area"), {}

    def text():
        try:
            return r.text("<H", errors="strict")
        except UnicodeDecodeError:
            _fail(name, "schema name is not UTF-8")

    (nmod,) = r.unpack("<I")
    if nmod > MAX_MODULES:
        _fail(name, f"{nmod} modules")
    for _ in range(nmod):
        (mid,) = r.unpack("<H")
        mname = text()
        mversion, n_int, n_flt, state_size = r.unpack("<IIII")
        layout = r.unpack("<30h")
        (nmore,) = r.unpack("<B")
        more = r.unpack("<8h")
        if mid >= MAX_MODULES or mid in mods or not mname:
            _fail(name, f"bad module id {mid} ({mname!r})")
        if n_int + n_flt > max_counters or state_size > 1 << 20 or nmore > 4:
            _fail(name, f"module {mname}: sizes out of range")
        if any(v >= n_int or v < -1 for v in layout[:21]) or \
                any(v >= n_flt or v < -1 for v in layout[21:]):
            _fail(name, f"module {mname}: access layout out of range")
        more = [list(more[0:nmore]), list(more[4:4 + nmore])]
        if any(not 0 <= v < n_int for d in more for v in d):
            _fail(name, f"module {mname}: more-ops index out of range")
        schema = []
        for _ in range(n_int + n_flt):
            cname = text()
            (op,) = r.unpack("<B")
            schema.append((cname, op))
        names = [c for c, _ in schema]
        if len(set(names)) != len(names) or "" in names or {"rank", "record_id", "path"} & set(names):
            _fail(name, f"module {mname}: counter names empty, repeated or reserved")
        meta = ()
        if version >= 4:
            (nmeta,) = r.unpack("<H")
            meta = r.unpack(f"<{nmeta}H")
            if len(set(meta)) != nmeta or any(i >= n_int + n_flt for i in meta):
                _fail(name, f"module {mname}: metadata-only slots out of range")
        mods[mid] = _Module(mid, mname, mversion, n_int, n_flt, state_size, layout, more, schema,
                            meta)
    return mods


def _topk_read(buf, at, ro):
    val = struct.unpack_from(f"<{TOPK_SLOTS}q", buf, at + ro["topk_val"])
    cnt = struct.unpack_from(f"<{TOPK_SLOTS}q", buf, at + ro["topk_cnt"])
    (n,) = struct.unpack_from("<i", buf, at + ro["topk_n"])
    (last,) = struct.unpack_from("<i", buf, at + ro["topk_last"])
    if not 0 <= n <= TOPK_SLOTS or not 0 <= last < TOPK_SLOTS:
        n, last = max(0, min(n, TOPK_SLOTS)), 0
    return {"val": list(val), "cnt": list(cnt), "n": n, "last": last}


def _topk_add_k(t, v, k):
    """k occurrences of v, as runtime/access.h's iochar_topk_add_k."""
    if t["n"] > 0 and t["val"][t["last"]] == v:
        t["cnt"][t["last"]] += 1
    else:
        mn, found = 0, False
        for i in range(t["n"]):
            if t["val"][i] == v:
                t["cnt"][i] += 1
                t["last"], found = i, True
                break
            if t["cnt"][i] < t["cnt"][mn]:
                mn = i
        if not found:
            if t["n"] < TOPK_SLOTS:
                t["val"][t["n"]], t["cnt"][t["n"]] = v, 1
                t["last"] = t["n"]
                t["n"] += 1
            else:
                t["val"][mn] = v
                t["cnt"][mn] += 1
                t["last"] = mn
    t["cnt"][t["last"]] += k - 1


def _topk_emit(t, c, first):
    used = set()
    for k in range(4):
        best = -1
        for i in range(t["n"]):
            if i in used:
                continue
            if best < 0 or t["cnt"][i] > t["cnt"][best] or \
                    (t["cnt"][i] == t["cnt"][best] and t["val"][i] < t["val"][best]):
                best = i
        c[first + k] = 0 if best < 0 else t["val"][best]
        c[first + 4 + k] = 0 if best < 0 else t["cnt"][best]
        if best >= 0:
            used.add(best)


def _misses(off, n, a, k):
    """How many of off, off+n, ..., off+(k-1)n are not multiples of a."""
    if a <= 0 or k <= 0:
        return 0
    g = gcd(n, a)
    if off % g:
        return k  # none of them is
    period = a // g  # the residues repeat with this period, one zero in each
    full, rem = divmod(k, period)
    hits = full + sum(1 for i in range(rem) if (off + i * n) % a == 0)
    return k - hits


def _tk_size(ro: dict) -> int:
    """sizeof(iochar_rw_topk): the two tables."""
    return max(ro["access"], ro["stride"]) + ro["topk_size"]


def _at(ptr: int, size: int, h: dict, data: bytes):
    """(bytes, offset) of the `size` bytes at address ptr of the process when they are
    in the aggregates area or the tables area, else None."""
    off = ptr - h["map_addr"]
    if ptr and h["agg_off"] <= off and off + size <= h["agg_off"] + h["agg_size"]:
        return data, off
    t0 = h["arena_off"] + h["tables_low"]
    if ptr and t0 <= off and off + size <= t0 + len(h["tables"]):
        return h["tables"], off - t0
    return None


def _tables_of(st: bytes, h: dict, data: bytes, ro: dict):
    """(bytes, offset) of a record's top-k tables: in its state (version 1),
    where its state's pointer says (version 2) or tk_below bytes below its
    state (version 3: st is then (bytes, offset) of the state); in the
    aggregates area or the tables area.  None yet, or kept out of the file
    when its file system was full, reads as empty tables."""
    if h["version"] < 2:
        return st, 0
    size = _tk_size(ro)
    if h["version"] >= 3:
        buf, at = st
        return buf, at - h["tk_below"]
    (ptr,) = struct.unpack_from("<Q", st, h["tk_off"])
    return _at(ptr, size, h, data) or (bytes(size), 0)


def _run_end(ro: dict) -> int:
    """The bytes of an access state that the reader reads (the pending run)."""
    return max(ro["run_k"], ro["run_len"], ro["run_next"], ro["run_t"], ro["run_dir"],
               ro["run_timed"]) + 8


def _state_v3(buf: bytes, off: int, h: dict, m, ro: dict, data: bytes):
    """(bytes, offset) of a version 3 record's state (its tables just below it), or
    None: none made yet, or kept out of the file (its file system full)."""
    (ptr,) = struct.unpack_from("<Q", buf, off + h["rec_state_off"])
    below = h["tk_below"]
    found = _at(ptr - below, below + m.state_size, h, data) if ptr >= below else None
    return (found[0], found[1] + below) if found else None


def _finish(m: _Module, c: list, f: list, st, ro: dict, tables=None):
    """Apply a record's deferred run and top-4 tables, as runtime/access.c does at the end.
    st: its state, bytes or (bytes, offset) (version 3; None: no state, empty tables);
    tables: (bytes, offset) of its top-k tables (default: inside st, version 1)."""
    L = m.layout
    if L is None:
        return
    if st is None:  # no read or write yet: empty tables
        empty = {"val": [0] * TOPK_SLOTS, "cnt": [0] * TOPK_SLOTS, "n": 0, "last": 0}
        for key in ("access1", "stride1"):
            if L[key] >= 0:
                _topk_emit(empty, c, L[key])
        return
    if isinstance(st, tuple):
        st, so = st
    else:
        so = 0
    k, n, nxt = (struct.unpack_from("<q", st, so + ro[x])[0] for x in ("run_k", "run_len", "run_next"))
    d, timed = st[so + ro["run_dir"]], st[so + ro["run_timed"]]
    (t,) = struct.unpack_from("<d", st, so + ro["run_t"])
    tb, at = tables if tables is not None else (st, 0)
    access = _topk_read(tb, at + ro["access"], ro)
    stride = _topk_read(tb, at + ro["stride"], ro)
    if k > 0 and d in (0, 1) and n > 0 and k * n < 1 << 62:
        off = nxt - k * n
        if not timed and L[f"ops{d}"] >= 0:
            c[L[f"ops{d}"]] += k
            if L[f"fs{d}"] >= 0 and math.isfinite(t):
                s, e = L[f"fs{d}"], L[f"fe{d}"]
                if f[s] == 0 or t < f[s]:
                    f[s] = t
                if t > f[e]:
                    f[e] = t
        if L[f"bytes{d}"] >= 0:
            c[L[f"bytes{d}"]] += k * n
        if L[f"bin{d}"] >= 0:
            c[L[f"bin{d}"] + _size_bin(n)] += k
        if L["access1"] >= 0:
            _topk_add_k(access, n, k)
        if L["file_not_aligned"] >= 0:
            a = c[L["file_alignment"]]
            c[L["file_not_aligned"]] += _misses(off, n, a, k)
        for key in (f"consec{d}", f"seq{d}"):
            if L[key] >= 0:
                c[L[key]] += k
        # a repeat is consecutive: no forward gap, so no stride (runtime/access.h)
        if L[f"max_byte{d}"] >= 0 and nxt - 1 > c[L[f"max_byte{d}"]]:
            c[L[f"max_byte{d}"]] = nxt - 1
    if L["access1"] >= 0:
        _topk_emit(access, c, L["access1"])
    if L["stride1"] >= 0:
        _topk_emit(stride, c, L["stride1"])


def _rank_stats(m: _Module, c: list, f: list, rank: int):
    """FASTEST/SLOWEST are this rank, variances 0: as the C writer's per-rank rows."""
    ints, flts = m.schema[:m.n_int], m.schema[m.n_int:]
    time = sum(f[i] for i, (_, op) in enumerate(flts) if op == OP["TIME"])
    nbytes = sum(c[i] for i, (_, op) in enumerate(ints) if op == OP["BYTES"])
    for i, (_, op) in enumerate(ints):
        if op in (OP["FAST_RANK"], OP["SLOW_RANK"]):
            c[i] = rank
        elif op in (OP["FAST_BYTES"], OP["SLOW_BYTES"]):
            c[i] = nbytes
    for i, (_, op) in enumerate(flts):
        if op in (OP["FAST_TIME"], OP["SLOW_TIME"]):
            f[i] = time
        elif op in (OP["VAR_TIME"], OP["VAR_BYTES"]):
            f[i] = 0.0


def _touched(m: _Module, c, f) -> bool:
    skip = set()
    if m.layout:
        skip = {m.layout["mem_alignment"], m.layout["file_alignment"]}
    return any(v for i, v in enumerate(c) if i not in skip) or any(v != 0 for v in f)


def _record_head(buf: bytes, off: int, end: int, h: dict, mods: dict, name: str):
    """The module and id of the record at off (every version's header starts so)."""
    if off + h["rec_size"] > end:
        _fail(name, f"record at byte {off} runs past the published end")
    (rid,) = struct.unpack_from("<Q", buf, off)
    (mid,) = struct.unpack_from("<H", buf, off + h["rec_module_off"])
    if mid not in mods:
        _fail(name, f"record at byte {off} has unknown module {mid}")
    return mods[mid], rid


def _record_body(buf: bytes, off: int, end: int, m, c_off: int, p_off: int, name: str):
    """The counters at c_off and the NUL-ended name at p_off of the record at off:
    (ints, floats, name, where its NUL is)."""
    if p_off > end:
        _fail(name, f"record at byte {off} runs past the published end")
    nul = buf.find(b"\0", p_off, end)
    if nul < 0:
        _fail(name, f"record at byte {off}: name runs past the published end")
    c = list(struct.unpack_from(f"<{m.n_int}q", buf, c_off))
    f = list(struct.unpack_from(f"<{m.n_flt}d", buf, c_off + 8 * m.n_int))
    return c, f, buf[p_off:nul].decode("utf-8", "surrogateescape"), nul


def _walk(buf: bytes, start: int, end: int, h: dict, mods: dict, ro: dict, name: str, agg: bool):
    """Records laid end to end in [start, end): (module, id, path, ints, floats, state)."""
    if h["version"] >= 3:
        return _walk_v3(buf, start, end, h, mods, ro, name, agg)
    out, off, rs = [], start, h["rec_size"]
    while off < end:
        m, rid = _record_head(buf, off, end, h, mods, name)
        c_off = off + rs
        s_off = (c_off + 8 * (m.n_int + m.n_flt) + 15) & ~15
        p_off = s_off + ((m.state_size + 15) & ~15)
        c, f, path, nul = _record_body(buf, off, end, m, c_off, p_off, name)
        namelen = 16 if agg else nul - p_off
        size = (rs + 8 * (m.n_int + m.n_flt) + ((m.state_size + 15) & ~15) + namelen + 1 + 32
                + 15) & ~15
        st = bytes(buf[s_off:s_off + m.state_size])
        need = h["tk_off"] + 8 if h["version"] >= 2 else \
            max(ro["access"], ro["stride"]) + ro["topk_size"]
        if m.layout is not None and len(st) < need:
            _fail(name, f"module {m.name}: state too small for the access state")
        out.append((m, rid, path, c, f, st))
        off += size
        if agg and h["version"] >= 2 and m.layout is not None:  # its top-k tables follow it
            off += (max(ro["access"], ro["stride"]) + ro["topk_size"] + 15) & ~15
    return out


def _walk_v3(buf: bytes, start: int, end: int, h: dict, mods: dict, ro: dict, name: str,
             agg: bool):
    """Version 3: a record is its header, counters and NUL-ended name, 8-aligned; its
    state (tables just below) where its header's pointer says: (bytes, offset) or None.
    An aggregate's tables and state follow it."""
    out, off, rs = [], start, h["rec_size"]
    entries, made = [], set()
    while off < end:
        m, rid = _record_head(buf, off, end, h, mods, name)
        flags = struct.unpack_from("<H", buf, off + h["rec_flags_off"])[0] if h["version"] >= 4 else 0
        if flags & 2:
            off = _entry(buf, off, end, h, m, rid, flags, name, entries)
            continue
        made.add((m.id, rid))
        c_off = off + rs
        p_off = c_off + 8 * (m.n_int + m.n_flt)
        c, f, path, nul = _record_body(buf, off, end, m, c_off, p_off, name)
        path, mark = _marked(buf, path, nul, end, flags, off, name)
        namelen = 16 if agg else nul - p_off + mark
        size = (rs + 8 * (m.n_int + m.n_flt) + namelen + 1 + 7) & ~7
        if m.layout is not None and m.state_size < _run_end(ro):
            _fail(name, f"module {m.name}: state too small for the access state")
        st = _state_v3(buf, off, h, m, ro, buf) if m.layout is not None else None
        out.append((m, rid, path, c, f, st))
        off += size
        if agg and m.layout is not None:  # its tables and state follow it
            off += h["tk_below"] + ((m.state_size + 7) & ~7)
    # an entry whose record is there too was made full just before the end: the
    # record has everything the entry counted
    return out + [e for e in entries if (e[0].id, e[1]) not in made]


TRUNC_MARK = b"\0TRUNCATED"  # after a name cut at the path limit (flags bit 1)


def _marked(buf: bytes, path: str, nul: int, end: int, flags: int, off: int, name: str):
    """(path, mark bytes) of a name at whose NUL nul a truncated one (version 4:
    flags bit 1) has its mark: the path then carries it, as in a log's NAMES."""
    if not flags & 1:
        return path, 0
    if buf[nul:nul + len(TRUNC_MARK)] != TRUNC_MARK or nul + len(TRUNC_MARK) >= end:
        _fail(name, f"record at byte {off}: truncated name without its mark")
    return path + TRUNC_MARK.decode(), len(TRUNC_MARK)


def _entry(buf: bytes, off: int, end: int, h: dict, m, rid: int, flags: int, name: str,
           out: list) -> int:
    """Version 4: the metadata-only entry at off (its counters in its module's meta
    slots, then its name) as a record without a state into out, unless it became a
    record (counted there); returns the offset of what follows it."""
    c_off = off + h["meta_c_off"]
    p_off = c_off + 8 * len(m.meta)
    if p_off > end:
        _fail(name, f"entry at byte {off} runs past the published end")
    nul = buf.find(b"\0", p_off, end)
    if nul < 0:
        _fail(name, f"entry at byte {off}: name runs past the published end")
    path, mark = _marked(buf, buf[p_off:nul].decode("utf-8", "surrogateescape"), nul, end, flags, off, name)
    (full,) = struct.unpack_from("<Q", buf, off + h["meta_full_off"])
    if not full:
        c, f = [0] * m.n_int, [0.0] * m.n_flt
        for k, i in enumerate(m.meta):
            if i < m.n_int:
                (c[i],) = struct.unpack_from("<q", buf, c_off + 8 * k)
            else:
                (f[i - m.n_int],) = struct.unpack_from("<d", buf, c_off + 8 * k)
        out.append((m, rid, path, c, f, None))
    return off + ((h["meta_c_off"] + 8 * len(m.meta) + nul - p_off + mark + 1 + 7) & ~7)


# The job of a process that is no MPI rank (runtime/live.h, after the log's path, in
# headers of 20480 bytes): job key, its source, the rank's and world size's variables,
# task rank, world size, parent pid, pad, this process's and its parent's start ticks,
# interpreter, program.  A 16384-byte header (an earlier writer) has none.
JOBKEY_AT = 16384
JOBKEY = struct.Struct("<320s48s32s32siiiiqq256s2048s")


def _jobkey(data: bytes, header_size: int) -> dict:
    """The JOB keys runtime/log_sections.c writes for a process's job, from the header."""
    if header_size < JOBKEY_AT + JOBKEY.size or len(data) < JOBKEY_AT + JOBKEY.size:
        return {}
    key, key_from, rank_from, world_from, rank, world, ppid, _, start, pstart, interp, prog = \
        JOBKEY.unpack_from(data, JOBKEY_AT)
    out = {"program": _cstr(prog)} if _cstr(prog) else {}
    if _cstr(interp):
        out["interpreter"] = _cstr(interp)
    if not _cstr(key):
        return out
    out.update(job_key=_cstr(key), job_key_from=_cstr(key_from), proc_start=start)
    if rank >= 0 and _cstr(rank_from):
        out.update(task_rank=rank, task_rank_from=_cstr(rank_from))
        if world > 0:
            out.update(world_size=world, world_size_from=_cstr(world_from))
    if ppid > 0:
        out.update(parent_pid=ppid, parent_start=pstart)
    return out


def read_header(data: bytes, name: str) -> dict:
    if len(data) < HEADER.size or data[:8] != MAGIC:
        _fail(name, "bad magic or truncated header")
    vals = HEADER.unpack_from(data)
    h = dict(zip(FIELDS, vals[:len(FIELDS)]))
    rest = vals[len(FIELDS):]
    h["rw_off"] = dict(zip(RW_OFF, rest[:15]))
    h["folded"], h["partial"] = list(rest[15:31]), rest[31]
    for k, v in zip(("jobid", "user", "hostname", "mpi", "exe", "cmdline"), rest[32:38]):
        h[k] = _cstr(v)
    h["map_addr"], h["tables_low"], h["tk_off"], h["rec_state_off"], h["tk_below"] = rest[38:43]
    h["rec_flags_off"], h["meta_full_off"], h["meta_c_off"] = rest[43:46]
    # the log's real path (issue 38; b"" in older files): bytes, as paths are
    dest = rest[47]
    h["log_dest"] = dest[:dest.find(b"\0")] if b"\0" in dest else dest
    h["jobkey"] = _jobkey(data, h["header_size"])
    if h["version"] not in (1, 2, 3, VERSION):
        _fail(name, f"unsupported version {h['version']} (this reader knows {VERSION})")
    if h["header_size"] not in HEADER_SIZES:
        _fail(name, f"bad header size {h['header_size']}")
    return h


def check_layout(h: dict, size: int, name: str):
    if h["map_size"] != size:
        _fail(name, f"file is {size} bytes but its header says {h['map_size']}")
    if not (h["header_size"] <= h["schema_off"] and h["schema_off"] + h["schema_len"] <= h["agg_off"]
            <= h["agg_off"] + h["agg_size"] <= h["arena_off"] <= size
            and h["arena_used"] <= h["arena_size"] and h["arena_off"] + h["arena_size"] <= size):
        _fail(name, "areas out of order or past the end of the file")
    if not 16 <= h["rec_size"] <= 256 or h["rec_module_off"] + 2 > h["rec_size"]:
        _fail(name, f"record header size {h['rec_size']} out of range")
    ro = h["rw_off"]
    if ro["topk_size"] < 8 * 2 * TOPK_SLOTS + 8 or ro["access"] + ro["topk_size"] > 4096 or \
            ro["stride"] + ro["topk_size"] > 4096 or max(ro.values()) > 4096:
        _fail(name, "access state offsets out of range")
    if h["version"] >= 2 and not (h["tables_low"] <= h["arena_size"] and h["tk_off"] <= 4096
                                  and h["arena_used"] <= h["tables_low"]):
        _fail(name, "top-k tables out of range")
    if h["version"] >= 3 and not (h["rec_state_off"] + 8 <= h["rec_size"] and
                                  _tk_size(ro) <= h["tk_below"] <= 4096):
        _fail(name, "access state offsets out of range")
    if h["version"] >= 4 and not (h["rec_flags_off"] + 2 <= h["rec_size"] and
                                  h["rec_size"] <= h["meta_full_off"] and
                                  h["meta_full_off"] + 8 <= h["meta_c_off"] <= 4096):
        _fail(name, "metadata-only entry offsets out of range")
    if not (h["state"] in STATES and -1 <= h["rank"] < max(h["nprocs"], 1) and h["nprocs"] >= 0):
        _fail(name, f"state {h['state']}, rank {h['rank']} or nprocs {h['nprocs']} out of range")
    if not all(math.isfinite(x) and 0 <= x < 1e11 for x in (h["start_wall"], h["end_wall"])):
        _fail(name, "start or end time is not a time")


def _read_used(path: Path) -> tuple:
    """Header, then only the used parts of the file (the rest is sparse zeros):
    the records from the start, and (version 2) the top-k tables from the end,
    as {file offset: bytes}."""
    name = str(path)
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            head = fh.read(HEADER_SIZE)
            h = read_header(head, name)
            check_layout(h, size, name)
            fh.seek(0)
            data = fh.read(h["arena_off"] + h["arena_used"])
            tables = b""
            if h["version"] >= 2:
                fh.seek(h["arena_off"] + h["tables_low"])
                tables = fh.read(h["arena_size"] - h["tables_low"])
    except OSError as e:
        raise LogError(f"cannot read {path}: {e.strerror or e}") from None
    if len(data) != h["arena_off"] + h["arena_used"] or \
            len(tables) != (h["arena_size"] - h["tables_low"] if h["version"] >= 2 else 0):
        _fail(name, "file shrank while read")
    h["tables"] = tables
    return h, data


def recovered_log(path) -> tuple:
    """(log bytes, header) of the log a live file holds."""
    # here, not at the top: the live view (liveview.py) reads live files without pandas
    import pandas as pd

    from . import writer
    from .flags import PARTIAL, RUNTIME_BITS

    path = Path(path)
    name = str(path)
    h, data = _read_used(path)
    mods = parse_schema(data[h["schema_off"]:h["schema_off"] + h["schema_len"]], name,
                         len(data) // 8 + 1024, h["version"])
    ro = h["rw_off"]
    recs = _walk(data, h["agg_off"], h["agg_off"] + h["agg_size"], h, mods, ro, name, True) + \
        _walk(data, h["arena_off"], h["arena_off"] + h["arena_used"], h, mods, ro, name, False)
    mpi = bool(h["mpi_initialized"])
    rank = h["rank"] if mpi else 0
    rows = {}
    names = {}
    tend = 0.0
    truncated = 0
    for m, rid, p, c, f, st in recs:
        if not _touched(m, c, f):
            continue
        has_tables = m.layout is not None and (st is not None or h["version"] < 3)
        _finish(m, c, f, st, ro, _tables_of(st, h, data, ro) if has_tables else None)
        _rank_stats(m, c, f, rank)
        for i, (_, op) in enumerate(m.schema[m.n_int:]):
            if op == OP["TS_END"] and math.isfinite(f[i]):
                tend = max(tend, f[i])
        rows.setdefault(m.name, (m, []))[1].append((rid, c, f))
        names[rid] = p
        truncated += p.endswith(TRUNC_MARK.decode())
    modules, ranks = {}, {}
    for mname, (m, items) in rows.items():
        df = pd.DataFrame([[rid, rank] + c + f for rid, c, f in items],
                          columns=["record_id", "rank"] + [n for n, _ in m.schema])
        df["record_id"] = df["record_id"].astype(np.uint64)
        modules[mname] = {"schema": m.schema, "records": df, "n_int": m.n_int,
                          "version": m.version}
        ranks[mname] = _rank_totals(m, items, rank)
    state = STATES[h["state"]]
    end = h["end_wall"] if h["state"] in (1, 2) and h["end_wall"] else h["start_wall"] + tend
    job = {"version": "recovered", "format": 1, "nprocs": max(h["nprocs"], 1) if mpi else 1,
           "nnodes": 1, "uid": h["uid"], "pid": h["pid"]}
    if mpi:
        job["rank"] = rank
    job.update(start_time=h["start_wall"], end_time=max(end, h["start_wall"]), exe=h["exe"],
               cmdline=h["cmdline"], jobid=h["jobid"], hostname=h["hostname"], user=h["user"],
               memory_bound=h["memory_bound"], finalized=0)
    if h["mpi"]:
        job["mpi"] = h["mpi"]
    job.update(h["jobkey"] if not mpi else
               {k: v for k, v in h["jobkey"].items() if k in ("program", "interpreter")})
    folded = 0
    for m in mods.values():
        if m.id < 16 and h["folded"][m.id] > 0:
            job[f"folded.{m.name}"] = h["folded"][m.id]
            folded += h["folded"][m.id]
    job["folded_files"] = folded
    job["partial"] = (h["partial"] & RUNTIME_BITS) | PARTIAL["RECOVERED"] | (PARTIAL["PER_RANK"] if mpi else 0)
    if truncated:  # version 4: the names a log's JOB would count
        job["truncated_paths"] = truncated
        job["partial"] |= PARTIAL["TRUNCATED_PATHS"]
    job["recovered"] = 1
    job["ended_by"] = state
    if h["state"] == 1:
        job["exit_status"] = h["status"]
    if h["state"] == 2:
        job["abort_code"] = h["status"]
    return writer.encode_log(job, modules, names=names, ranks=ranks), h


def _rank_totals(m: _Module, items, rank) -> dict:
    """One RANKS row: this rank's reads, writes, bytes and times (runtime/log_writer.c)."""
    v = {"rank": [rank], "reads": [0], "writes": [0], "bytes_read": [0], "bytes_written": [0],
         "read_time": [0.0], "write_time": [0.0], "meta_time": [0.0]}
    L = m.layout
    for _, c, f in items:
        if L is None:
            continue
        for d, (ops, by) in enumerate((("reads", "bytes_read"), ("writes", "bytes_written"))):
            if L[f"ops{d}"] >= 0:
                v[ops][0] += c[L[f"ops{d}"]]
            v[ops][0] += sum(c[i] for i in m.more[d])
            if L[f"bytes{d}"] >= 0:
                v[by][0] += c[L[f"bytes{d}"]]
        for k, key in enumerate(("read_time", "write_time", "meta_time")):
            if L[f"ft{k}"] >= 0:
                v[key][0] += f[L[f"ft{k}"]]
    return v


def header_of(path) -> dict | None:
    """The header of a live file, or None when it is not one (any problem)."""
    try:
        with open(path, "rb") as fh:
            return read_header(fh.read(HEADER_SIZE), str(path))
    except (OSError, LogError):
        return None


def default_output(path) -> Path:
    """Where `recover` writes by default: the log name the live file was named after,
    with .rank<N> for an MPI rank and .recovered before .iochar; beside the live file, or
    in the working directory for one in a node's live directory (iochar/livedir.py)."""
    path = Path(path)
    m = NAME_RE.match(path.name)
    base = m.group("log") if m else path.name
    if base.endswith(".iochar"):
        base = base[:-7]
    h = header_of(path)
    if h and h["mpi_initialized"] and f".rank{h['rank']}" not in base:
        base += f".rank{h['rank']}"
    if path.parent.parent.name.startswith("iochar-"):
        return Path.cwd() / (base + ".recovered.iochar")
    return path.with_name(base + ".recovered.iochar")


def recover(path, out=None) -> Path:
    """Write the log a live file holds as a normal .iochar file (never replacing one);
    returns its path."""
    data, _ = recovered_log(path)
    out = Path(out) if out is not None else default_output(path)
    try:
        write_new(out, data)  # an unnamed file linked in: no name to swap on the way
    except OSError as e:
        raise LogError(f"cannot write {out}: {e.strerror or e}") from None
    return out
