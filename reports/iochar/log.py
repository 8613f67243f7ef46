"""Reading iochar logs (docs/log-format.md; writer.py is the mirror image): each file's
sections parsed and checked (_Part), a job's `Log` (one file, or per-rank files merged
as if reduced) and `open()`. The bytes themselves are logformat.py's."""

from __future__ import annotations

import builtins
import functools
import math
import os
import re
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from . import codec, jobs, live
from .callsites import check_section
from .darshan import DarshanLog
from .frames import SCHEMA_CACHE, mounts_frame, ranks_frame, records_frame, text_column

# AGGREGATE_ID, SECTION, record_dtype and section_head are not used here: re-exported, as
# `from iochar.log import ...` has always given them (tests, tools, users' scripts)
from .logformat import (  # noqa: F401
    AGGREGATE_ID,
    FORMAT_VERSION,
    HEADER,
    JOB_KINDS,
    MAGIC,
    MAX_NAME,
    MAX_NPROCS,
    MODULE_KINDS,
    RANKS_DTYPE,
    SECTION,
    SERIES_KEYS,
    TRUNCATED_MARK,
    UNKNOWN_PATH,
    ZLIB_MAX_RATIO,
    LogError,
    Reader,
    SectionHeaderError,
    ascii_field,
    inflater_for,
    parse_job,
    payload,
    record_dtype,
    section_at,
    section_head,
)
from .merge import merge_jobs, note_missing_ranks, parse_topk, reduce_records, whole_tables
from .schema import OP, OPS, ROLE, ROLES, derive_role, topk_tables  # noqa: F401  (OPS, ROLE: re-exported)

# Memory is bounded by the file's real size, never by a number written in it: all
# payloads of a file together inflate to at most INFLATE_FLOOR + INFLATE_RATIO x its
# size (real logs stay far below: random record ids alone keep RECORDS above 1/100),
# and a module's DataFrame (records x counters cells) fits in that bound too.
PARALLEL_BYTES = 1 << 20  # compressed payload bytes past which sections inflate in threads
INFLATE_FLOOR = 16 << 20
INFLATE_RATIO = 256
MAX_COUNTERS = 1 << 16  # per module schema
_COUNTER = re.compile(r"[A-Za-z0-9_.]{1,255}\Z")


builtins_open = builtins.open  # `open` below is this module's


def _parse_mounts(buf: bytes, count: int, what: str) -> list:
    r, rows = Reader(buf, what), []
    for _ in range(count):
        (bs,) = r.unpack("<I")
        fs = r.text("<H")
        rows.append((r.text("<H"), fs, bs))
    r.done()
    return rows


def _parse_names(buf: bytes, count: int, what: str):
    """NAMES entries -> (ids uint64 array, list of paths, set of truncated ids).

    Paths are bytes: decoded with surrogateescape, so os.fsencode(path) gives them back
    exactly whatever they hold. A name the runtime cut at its path limit ends with a NUL
    and TRUNCATED_MARK's text; the marker is removed and the id noted."""
    if count * 12 > len(buf):
        raise LogError(f"{what}: {count} entries cannot fit in {len(buf)} bytes")
    offs, off, n = [], 0, len(buf)
    u32 = struct.Struct("<I").unpack_from
    # Entries are variable-length, so finding their starts is inherently sequential;
    # everything after that is vectorized.
    for _ in range(count):
        if off + 12 > n:
            raise LogError(f"{what}: payload ends inside an entry")
        offs.append(off)
        off += 12 + u32(buf, off + 8)[0]
    if off != n:
        raise LogError(f"{what}: entries cover {off} bytes of a {n}-byte payload")
    starts = np.asarray(offs, dtype=np.int64)
    raw = np.frombuffer(buf, dtype=np.uint8)
    ids = raw[starts[:, None] + np.arange(8)].copy().view("<u8").ravel() if count else \
        np.empty(0, np.uint64)
    ends = np.append(starts[1:], n).tolist()
    names = [buf[s + 12:e] for s, e in zip(offs, ends)]
    lens = np.fromiter(map(len, names), np.int64, count)
    at = np.zeros(count, np.int64)
    np.cumsum(lens[:-1] + 1, out=at[1:])
    flat = np.frombuffer(b"\0".join(names) + b"\0" if count else b"", np.uint8)
    return _names_checked(ids, flat, at, lens, what)


def _names_checked(ids: np.ndarray, flat: np.ndarray, starts: np.ndarray, lens: np.ndarray,
                   what: str):
    """NAMES of either format -> (ids, paths, truncated ids). flat holds the path bytes
    with a NUL after each (path i at starts[i], lens[i] bytes long)."""
    count, truncated = len(lens), set()
    ends = starts + lens
    nul = np.flatnonzero(flat == 0) if count else np.empty(0, np.int64)
    cut = np.zeros(count, bool)
    bad = count  # the first entry that is not a path
    if len(nul) > count:  # NULs inside paths: only the truncation marker may be one
        inner = nul
        row = np.searchsorted(starts, inner, side="right") - 1
        inside = inner < ends[row]
        row, inner = row[inside], inner[inside]
        mark = len(TRUNCATED_MARK)
        tail = np.frombuffer(TRUNCATED_MARK, np.uint8)
        for r in np.unique(row).tolist():
            marked = (lens[r] >= mark and np.array_equal(flat[ends[r] - mark:ends[r]], tail)
                      and np.count_nonzero(row == r) == 1)
            if not marked:
                bad = min(bad, r)
                break
            cut[r] = True
    long = np.flatnonzero(lens > MAX_NAME)
    if len(long):
        raise LogError(f"{what}: path {int(long[0])} is {int(lens[long[0]])} bytes, more than "
                       f"the {MAX_NAME} a name may hold")
    empty = np.flatnonzero(lens - cut * len(TRUNCATED_MARK) <= 0)
    if len(empty) and empty[0] < bad:
        raise LogError(f"{what}: path {int(empty[0])} is empty")
    if bad < count:
        raise LogError(f"{what}: path {bad} holds a NUL byte")
    if cut.any():  # the marker is not part of the path
        keep = np.ones(len(flat), bool)
        for r in np.flatnonzero(cut).tolist():
            keep[ends[r] - len(TRUNCATED_MARK):ends[r]] = False
            truncated.add(int(ids[r]))
        flat = flat[keep]
    # one decode for all: NUL ends any UTF-8 sequence, so each path decodes as it would alone
    paths = flat.tobytes().decode("utf-8", "surrogateescape").split("\0")[:-1] if count else []
    return ids, paths, truncated


_WHAT = "\0SCHEMA\0"  # the section's name in a cached check's messages, put back on error


@functools.lru_cache(maxsize=SCHEMA_CACHE)
def _checked_schema(buf: bytes, count: int):
    """_check_schema, once per distinct payload (a failed check is not cached)."""
    return _check_schema(buf, count, _WHAT)


def _parse_schema(buf: bytes, count: int, what: str):
    """A SCHEMA payload, parsed and checked; an identical payload seen before (same
    bytes and count, so the same checks pass) is taken from the cache."""
    try:
        version, n_int, n_float, cols = _checked_schema(bytes(buf), count)
    except LogError as e:
        raise LogError(str(e).replace(_WHAT, what)) from None
    return version, n_int, n_float, list(cols)


def _check_schema(buf: bytes, count: int, what: str):
    r = Reader(buf, what)
    version, n_int, n_float = r.unpack("<III")
    if n_int + n_float != count:
        raise LogError(f"{what}: count {count} != n_int {n_int} + n_float {n_float}")
    if count * 3 > len(buf):
        raise LogError(f"{what}: {count} counters cannot fit in {len(buf)} bytes")
    cols, off, n = [], 12, len(buf)
    for _ in range(count):  # u16 length, name, u8 op
        if off + 2 > n or off + 3 + buf[off] + (buf[off + 1] << 8) > n:
            raise LogError(f"{what}: payload ends inside an entry")
        end = off + 2 + buf[off] + (buf[off + 1] << 8)
        cols.append((buf[off + 2:end].decode("utf-8", "surrogateescape"), buf[end]))
        off = end + 1
    if off != n:
        raise LogError(f"{what}: {n - off} bytes left after the last entry")
    names = [c[0] for c in cols]
    if count > MAX_COUNTERS:
        raise LogError(f"{what}: {count} counters (at most {MAX_COUNTERS})")
    if len(set(names)) != len(names):
        raise LogError(f"{what}: counter names repeated")
    bad = next((n for n in names if not _COUNTER.match(n)), None)
    if bad is not None:
        raise LogError(f"{what}: counter name {bad!r} is not letters, digits, '_' and '.'")
    if {"rank", "record_id", "path"} & set(names):
        raise LogError(f"{what}: counter named like a key column")
    _check_ops(cols, what)
    return version, n_int, n_float, cols


def _check_ops(cols: list, what: str):
    """Top-4 tables are k TOPK_VAL then k TOPK_CNT; each MAXT_SIZE has its MAXT. Ops a
    newer writer may add (past OPS) are kept: only merging per-rank logs needs them."""
    try:
        topk_tables(cols)
    except ValueError as e:
        raise LogError(f"{what}: {e}") from None
    ops = [op for _, op in cols]
    if ops.count(OP["MAXT_SIZE"]) > ops.count(OP["MAXT"]):
        raise LogError(f"{what}: more MAXT_SIZE counters than MAXT")


class _Part:
    """One validated log file, sections parsed; RECORDS kept as raw payloads."""

    def __init__(self, data: bytes, name: str):
        self.name = name
        self.job = None
        self.mounts = []
        self.names = []  # (ids, paths, truncated ids) per NAMES section
        self.cap = 0  # bytes this file may inflate to (INFLATE_FLOOR/RATIO)
        self.topk_ids = {}  # module -> [record ids of each TOPK section]
        self.schemas = {}  # module -> (version, n_int, n_float, [(name, op)])
        self.roles = {}  # module -> bytes: one role per counter (ROLES), when written
        self.modules = []
        self.records = {}  # module -> [payload bytes]
        self.series = {}  # module -> [(width, int64 array (4, nbins))]
        self.ranks = {}  # module -> [structured array]
        self.extra = []  # (kind, module, count, payload bytes)
        self._declared = {}  # module -> records its RECORDS headers declare so far
        self._names_size = 0  # bytes the format-2 NAMES sections rebuilt so far
        self._rank_as = None  # a process log read as this rank of its job (as_rank)
        self._parse(data)

    def _fail(self, msg):
        raise LogError(f"{self.name}: {msg}")

    def as_rank(self, rank: int, nprocs: int):
        """Read this process's log as rank `rank` of a job of `nprocs` processes (a job's
        process logs: jobs.process_ranks): its JOB, records and RANKS rows say so."""
        self.job = dict(self.job, rank=rank, nprocs=nprocs)
        self._rank_as = rank
        for module, arrs in self.ranks.items():
            self.ranks[module] = [a.copy() for a in arrs]
            for a in self.ranks[module]:
                a["rank"] = rank

    def _parse(self, data: bytes):
        size = len(data)
        if size == 0:
            self._fail("empty file")
        if not MAGIC.startswith(data[:8]):
            self._fail("bad magic: not an iochar log")
        if size < HEADER.size:
            self._fail(f"truncated file: expected at least {HEADER.size} bytes got {size}")
        _, version, hsize, total, nsec, crc = HEADER.unpack_from(data)
        if zlib.crc32(data[:28]) != crc:
            self._fail("header CRC mismatch")
        self.version = version
        inflater = inflater_for(version)
        if version not in (1, 2, FORMAT_VERSION):
            self._fail(f"unsupported format version {version} (this reader knows {FORMAT_VERSION})")
        if size < total:
            self._fail(f"truncated file: expected {total} bytes got {size}")
        if size > total:
            self._fail(f"file is {size} bytes but its header says {total} (trailing data)")
        if hsize < HEADER.size or hsize > size:
            self._fail(f"bad header size {hsize}")
        off, todo = hsize, []
        view = memoryview(data)
        self.cap = cap = INFLATE_FLOOR + INFLATE_RATIO * size
        inflated = 0
        for k in range(nsec):
            where = f"section {k}"
            try:
                kind_b, mod_b, count, pcrc, ulen, clen, start = section_at(view, off, version)
            except SectionHeaderError as e:
                if e.short:
                    self._fail(f"truncated file: {where} header at byte {off} runs past the end")
                self._fail(f"{where} {e}")
            kind = ascii_field(kind_b, f"{where} kind")
            module = ascii_field(mod_b, f"{where} module")
            where = f"section {k} ({kind}{' ' + module if module else ''})"
            if start + clen > size:
                self._fail(f"{where}: payload of {clen} bytes runs past the end of the file")
            if ulen > max(clen, 1) * ZLIB_MAX_RATIO:
                self._fail(f"{where}: uncompressed length {ulen} impossible for {clen} bytes")
            inflated += ulen
            if inflated > cap:
                self._fail(f"{where}: uncompressed length {ulen} takes the file's payloads "
                           f"past {cap} bytes, the bound for a {size}-byte file")
            self._check_size(kind, module, count, ulen, where)
            item = (kind, module, count, view[start:start + clen], pcrc, ulen, where)
            if kind == "SCHEMA":  # needed now to check the sizes of later RECORDS
                self._section(*item[:3], payload(*item[3:], inflater), where)
            else:
                todo.append(item)
            off = start + clen
        if off != size:
            self._fail(f"sections end at byte {off} but the file has {size}")
        # zlib releases the GIL: big logs (many RECORDS sections) decompress in parallel;
        # small ones do not pay for starting threads
        if sum(len(it[3]) for it in todo) > PARALLEL_BYTES:
            with ThreadPoolExecutor(min(8, os.cpu_count() or 1)) as pool:
                bufs = list(pool.map(lambda it: payload(*it[3:], inflater), todo))
        else:
            bufs = [payload(*it[3:], inflater) for it in todo]
        for item, buf in zip(todo, bufs):
            self._section(*item[:3], buf, item[-1])
        if self.job is None:
            self._fail("no JOB section")
        self._check_values()

    def _check_values(self):
        """Values that need the JOB (nprocs) or must be non-negative / finite."""
        nprocs = self.job.get("nprocs")
        for module, chunks in self.topk_ids.items():
            ids = np.concatenate(chunks)
            if len(np.unique(ids)) != len(ids):
                self._fail(f"TOPK {module}: a record id has two rows")
        for module, arrs in self.ranks.items():
            for a in arrs:
                where = f"RANKS {module}"
                bad = (a["rank"] < 0) | (a["rank"] >= (nprocs or MAX_NPROCS))
                if bad.any():
                    self._fail(f"{where}: rank {int(a['rank'][bad][0])} out of range "
                               f"for nprocs {nprocs}")
                for k in RANKS_DTYPE.names[1:]:
                    v = a[k]
                    if (v < 0).any() or (v.dtype.kind == "f" and not np.isfinite(v).all()):
                        self._fail(f"{where}: {k} negative or not a number")
        for module, items in self.series.items():
            for _, arr in items:
                if (arr < 0).any():
                    k = SERIES_KEYS[int(np.flatnonzero((arr < 0).any(axis=1))[0])]
                    self._fail(f"SERIES {module}: {k} has a negative bin")

    def _check_size(self, kind, module, count, ulen, where):
        """Sizes fixed by count (and schema) are checked before decompressing."""
        if kind in JOB_KINDS and module:
            self._fail(f"{where}: {kind} must not name a module")
        if kind in MODULE_KINDS and not module:
            self._fail(f"{where}: {kind} needs a module name")
        if kind == "RECORDS":
            if module not in self.schemas:
                self._fail(f"{where}: RECORDS before the module's SCHEMA")
            _, n_int, n_float, _ = self.schemas[module]
            self._records_fit(module, count, ulen - 8 * _present_words(n_int + n_float), where)
            if self.version >= 2:  # encoded columns: their sizes are checked when decoded
                return
            words, ncnt = _present_words(n_int + n_float), n_int + n_float
            body = ulen - 8 * words - 16 * count
            if body < 0 or (count and (body % (8 * count) or body // (8 * count) > ncnt)) \
                    or (not count and body):
                self._fail(f"{where}: payload size {ulen} inconsistent with schema "
                           f"({count} records of at most {ncnt} counters)")
        elif kind == "ROLES" and (module not in self.schemas or ulen != count
                                  or count != len(self.schemas[module][3])):
            self._fail(f"{where}: ROLES of {count} bytes ({ulen}) do not match the module's SCHEMA")
        elif kind == "SERIES" and ulen != 16 + 32 * count:
            self._fail(f"{where}: payload size {ulen} inconsistent with {count} bins")
        elif kind == "RANKS" and ulen != RANKS_DTYPE.itemsize * count:
            self._fail(f"{where}: payload size {ulen} inconsistent with {count} rows")

    def _section(self, kind, module, count, buf, where):
        if kind == "JOB":
            if self.job is not None:
                self._fail(f"{where}: second JOB section")
            self.job = parse_job(buf, count, f"{self.name}: {where}")
        elif kind == "MOUNTS":
            self.mounts += _parse_mounts(buf, count, f"{self.name}: {where}")
        elif kind == "NAMES":
            if self.version >= 2:
                # the bound is the file's, for all its NAMES sections together
                ids, flat, starts, lens = self._decoded(
                    lambda b, c, w: codec.decode_names_flat(b, c, w, self.cap - self._names_size),
                    buf, count, where)
                self._names_size += len(flat)
                self.names.append(_names_checked(ids, flat, starts, lens, f"{self.name}: {where}"))
            else:
                self.names.append(_parse_names(buf, count, f"{self.name}: {where}"))
        elif kind == "SCHEMA":
            schema = _parse_schema(buf, count, f"{self.name}: {where}")
            if module in self.schemas and self.schemas[module] != schema:
                self._fail(f"{where}: differs from the module's earlier SCHEMA")
            if module not in self.schemas:
                self.schemas[module] = schema
                self.modules.append(module)
        elif kind == "ROLES":
            if self.roles.setdefault(module, bytes(buf)) != bytes(buf):
                self._fail(f"{where}: differs from the module's earlier ROLES")
        elif kind == "RECORDS" and self.version >= 2:
            self.records.setdefault(module, []).append(self._records_v2(module, count, buf, where))
        elif kind == "RECORDS":
            _, n_int, n_float, _ = self.schemas[module]
            present = _present_mask(buf, n_int + n_float)
            stored = (len(buf) - 8 * _present_words(n_int + n_float) - 16 * count) // 8
            if count and present.sum() * count != stored:
                self._fail(f"{where}: {int(present.sum())} columns marked present but "
                           f"{stored // count} stored")
            if not count and present.any():
                self._fail(f"{where}: columns marked present in an empty section")
            self.records.setdefault(module, []).append((count, present, buf))
        elif kind == "SERIES":
            width, nbins, _ = struct.unpack_from("<dII", buf)
            if nbins != count:
                self._fail(f"{where}: nbins {nbins} != count {count}")
            if not (math.isfinite(width) and MIN_WIDTH <= width <= MAX_WIDTH):
                self._fail(f"{where}: bin width {width} is not a positive number of seconds in "
                           f"[{MIN_WIDTH:g}, {MAX_WIDTH:g}]")
            arr = np.frombuffer(buf, dtype="<i8", offset=16).reshape(4, nbins).copy()
            self.series.setdefault(module, []).append((width, arr))
        elif kind == "RANKS":
            self.ranks.setdefault(module, []).append(np.frombuffer(buf, dtype=RANKS_DTYPE).copy())
        else:
            if kind in ("CALLSITE", "LOADMAP", "TRACE"):  # optional observer sections
                try:
                    check_section(kind, module, count, buf)
                except LogError as e:
                    self._fail(f"{where}: {e}")
            elif kind == "TOPK":  # whole top-k tables of a per-rank log
                if module not in self.schemas:
                    self._fail(f"{where}: TOPK before the module's SCHEMA")
                ids, _ = parse_topk(buf, count, self.schemas[module][3], f"{self.name}: {where}")
                self.topk_ids.setdefault(module, []).append(ids)
            self.extra.append((kind, module, count, buf))

    def _decoded(self, fn, *args):
        try:
            return fn(*args[:-1], f"{self.name}: {args[-1]}")
        except codec.CodecError as e:
            raise LogError(str(e)) from None

    def _records_fit(self, module, count, body, where):
        """A RECORDS header's count against its bytes (formats 2-3: each record takes
        at least a byte of the `body` after the bitmap; format 1's exact size is
        checked by the caller) and the module's records so far against the file's
        bound (records x counters cells), before anything is inflated."""
        if self.version >= 2 and count > max(body, 0):
            self._fail(f"{where}: {count} records cannot fit in {max(body, 0)} bytes of "
                       "columns")
        ncnt = len(self.schemas[module][3])
        total = self._declared[module] = self._declared.get(module, 0) + count
        if 8 * total * (ncnt + 3) > self.cap:
            self._fail(f"{where}: {total} records x {ncnt} counters would take more than "
                       f"{self.cap} bytes, the bound for this file")

    def _records_v2(self, module, count, buf, where):
        """Format 2 RECORDS: presence bitmap, then encoded columns, decoded now
        into an int64 (2 + present, count) array (floats as their bits)."""
        _, n_int, n_float, _ = self.schemas[module]
        words = _present_words(n_int + n_float)
        if len(buf) < 8 * words:
            self._fail(f"{where}: payload shorter than its presence bitmap")
        present = _present_mask(buf, n_int + n_float)
        if not count and present.any():
            self._fail(f"{where}: columns marked present in an empty section")
        kinds = np.concatenate([np.zeros(2 + n_int, bool), np.ones(n_float, bool)])
        floating = kinds[np.concatenate([[True, True], present])]
        body = self._decoded(codec.decode_columns, buf, 8 * words, len(floating), count,
                             floating, where)
        return count, present, body

    def frame(self, module: str, names: pd.Series) -> pd.DataFrame:
        """This file's rows of one module: rank, record_id, path, counters."""
        _, n_int, n_float, cols = self.schemas[module]
        chunks = self.records.get(module, [])
        n = sum(c[0] for c in chunks)
        ints, floats = np.zeros((n_int, n), np.int64), np.zeros((n_float, n), np.float64)
        ids, ranks = np.empty(n, np.uint64), np.empty(n, np.int64)
        at, words = 0, _present_words(n_int + n_float)
        fbits = floats.view(np.int64)
        for count, present, buf in chunks:
            if not count:
                continue
            # columnar: ids, ranks, then only the counters marked present
            if isinstance(buf, np.ndarray):  # format 2, decoded when parsed
                body = buf
            else:  # format 1: each column byte-transposed (8 planes of `count` bytes)
                planes = np.frombuffer(buf, dtype=np.uint8, offset=8 * words)
                planes = planes.reshape(-1, 8, count)
                body = np.ascontiguousarray(planes.transpose(0, 2, 1)).view("<i8")[..., 0]
            sl = slice(at, at + count)
            ids[sl], ranks[sl] = body[0].view(np.uint64), body[1]
            cols_i, cols_f = np.flatnonzero(present[:n_int]), np.flatnonzero(present[n_int:])
            ints[cols_i, sl] = body[2:2 + len(cols_i)]
            fbits[cols_f, sl] = body[2 + len(cols_i):]
            at += count
        nprocs = self.job.get("nprocs")
        bad = ranks < -1
        if isinstance(nprocs, int) and nprocs > 0:
            bad |= ranks >= nprocs
        if bad.any():
            self._fail(f"RECORDS {module}: rank {int(ranks[bad][0])} out of range "
                       f"for nprocs {nprocs}")
        _check_counters(module, cols, n_int, ints, floats, self._fail)
        if self._rank_as is not None:
            ranks[ranks >= 0] = self._rank_as
        return records_frame(ranks, ids, _paths(ids, names), ints, floats,
                             [c[0] for c in cols])


# Ops whose values count, measure or time something: never negative. TOPK_VAL (a
# stride may be negative), ANY (a setting), MAX, MIN_NZ and the rank ops are free.
_NONNEG = {OP[k] for k in ("SUM", "BYTES", "TIME", "TOPK_CNT", "MAXT", "MAXT_SIZE",
                            "FAST_BYTES", "FAST_TIME", "SLOW_BYTES", "SLOW_TIME",
                            "VAR_TIME", "VAR_BYTES")}
TS_SLACK = 60.0  # seconds a timestamp may precede its log's start (clock skew)


def _check_counters(module, cols, n_int, ints, floats, fail):
    """Counters that must be non-negative are; floating counters are finite."""
    for i, (name, op) in enumerate(cols):
        v = ints[i] if i < n_int else floats[i - n_int]
        if not len(v):
            return
        if i >= n_int and not np.isfinite(v).all():
            fail(f"RECORDS {module}: {name} is not a finite number")
        lo = -TS_SLACK if op in (OP["TS_START"], OP["TS_END"]) else 0
        if (op in _NONNEG or lo) and v.min() < lo:
            fail(f"RECORDS {module}: {name} is negative ({v.min()!r})")


def _present_words(ncounters: int) -> int:
    return (ncounters + 63) // 64


def _present_mask(buf: bytes, ncounters: int) -> np.ndarray:
    """The RECORDS presence bitmap as one bool per counter (docs/log-format.md)."""
    words = np.frombuffer(buf, dtype="<u8", count=_present_words(ncounters))
    bits = np.unpackbits(words.view(np.uint8), bitorder="little").astype(bool)
    if bits[ncounters:].any():
        raise LogError(f"RECORDS: presence bit set past the {ncounters} counters")
    return bits[:ncounters]


def _paths(ids: np.ndarray, names: pd.Series) -> np.ndarray:
    """Vectorized id -> path lookup; `names` is indexed by unique uint64 ids."""
    idx = names.index.get_indexer(ids) if len(names) else np.full(len(ids), -1)
    out = names.to_numpy(dtype=object)[np.maximum(idx, 0)] if len(names) else \
        np.empty(len(ids), dtype=object)
    out[idx < 0] = UNKNOWN_PATH
    return out


MIN_WIDTH, MAX_WIDTH = 1e-9, 1e10  # SERIES bin width, seconds
MIN_SERIES_BINS = 4096  # a merged series may reach max(this, 2 x the longest input)


def _coarsen(width: float, arr: np.ndarray, target: float, shift_s: float, what: str):
    """Re-bin a (4, nbins) series from `width` to `target` and shift it by shift_s seconds.
    The output has at most nbins + shift bins whatever the widths' ratio."""
    f = target / width
    if abs(f - round(f)) > 1e-6 * f:
        raise LogError(f"{what}: SERIES bin widths {width} and {target} are not commensurable")
    nbins = arr.shape[1]
    s = max(round(shift_s / target), 0)
    if f >= nbins:  # every bin lands in the first target bin: no index arithmetic on f
        out = arr.sum(axis=1, keepdims=True)
    else:
        f = round(f)
        n = -(-nbins // f)  # n * f < nbins + f < 2 * nbins
        pad = np.zeros((4, n * f), dtype=np.int64)
        pad[:, :nbins] = arr
        out = pad.reshape(4, n, f).sum(axis=2)
    if s > 0:
        out = np.concatenate([np.zeros((4, s), np.int64), out], axis=1)
    return out


def _series_width(items: list) -> float:
    """The merged series' width: the widest input's, doubled (as the writer does) until
    the shifts between per-rank logs fit in a bound set by the inputs' lengths."""
    target = max(w for w, *_ in items)
    limit = max(MIN_SERIES_BINS, 2 * max(a.shape[1] for _, a, *_ in items))
    span = max(s for _, _, s, _ in items)
    while span / target > limit and target < MAX_WIDTH:
        target *= 2
    return target


class Log:
    """One job's log (or several per-rank logs of one job, merged as if reduced)."""

    def __init__(self, parts: list):
        self._parts = parts
        self.files = [p.name for p in parts]
        if len(parts) == 1:
            self.job = dict(parts[0].job)
            self._shifts = [0.0]
        else:
            self.job = merge_jobs([p.job for p in parts], self.files)
            t0 = self.job.get("start_time", 0.0)
            self._shifts = [float(p.job.get("start_time", t0)) - t0 for p in parts]
        self.modules, self._schemas, self._roles = [], {}, {}
        for p in parts:
            for m, r in p.roles.items():
                self._roles.setdefault(m, r)
            for m in p.modules:
                if m not in self._schemas:
                    self._schemas[m] = p.schemas[m]
                    self.modules.append(m)
                elif self._schemas[m] != p.schemas[m]:
                    raise LogError(f"{p.name}: SCHEMA of {m} differs from {self.files[0]}'s")
        seen, rows = set(), []
        for p in parts:
            for r in p.mounts:
                if r[0] not in seen:
                    seen.add(r[0])
                    rows.append(r)
        self.mounts = mounts_frame(rows)
        self.extra_sections = [e for p in parts for e in p.extra]
        if not self.job.get("job_key"):
            # a job's processes that did no I/O leave no log: no rank is "missing"
            note_missing_ranks(self.job, [p.job for p in parts])
        self._frames = {}
        self._name_series = None
        # ids of names the runtime cut at its path limit (NAMES truncation marker)
        self.truncated_ids = set().union(*(c[2] for p in parts for c in p.names))

    def __repr__(self):
        return f"<iochar.Log {self.files[0]!r} nprocs={self.job.get('nprocs')} modules={self.modules}>"

    def _names(self) -> pd.Series:
        if self._name_series is None:
            chunks = [c for p in self._parts for c in p.names]
            ids = np.concatenate([c[0] for c in chunks]) if chunks else np.empty(0, np.uint64)
            paths = [s for c in chunks for s in c[1]]
            s = text_column(paths, index=pd.Index(ids, dtype=np.uint64))
            self._name_series = s[~s.index.duplicated(keep="first")]
        return self._name_series

    def truncated_paths(self) -> set:
        """The (cut) paths of the records whose names were truncated."""
        s = self._names()
        return {s[i] for i in self.truncated_ids if i in s.index}

    @property
    def names(self) -> dict:
        """Record id -> path."""
        s = self._names()
        return dict(zip(s.index.tolist(), s.tolist()))

    def _schema(self, module: str):
        if module not in self._schemas:
            raise KeyError(f"module {module!r} not in log (modules: {', '.join(self.modules) or 'none'})")
        return self._schemas[module]

    def schema(self, module: str) -> list:
        """[(counter name, reduction op)] in log order; op names are in OPS."""
        return list(self._schema(module)[3])

    def schema_roles(self, module: str) -> list:
        """[(counter name, reduction op, role)] in log order; roles are names in ROLES,
        from the log's ROLES section, else derived from op and name (older logs)."""
        cols, roles = self._schema(module)[3], self._roles.get(module)
        return [(name, op, ROLES[roles[i]] if roles and roles[i] < len(ROLES) else derive_role(name, op))
                for i, (name, op) in enumerate(cols)]

    def schema_version(self, module: str) -> int:
        return self._schema(module)[0]

    def records(self, module: str) -> pd.DataFrame:
        """One row per (record, rank): rank, record_id, path, then every counter."""
        cols = self._schema(module)[3]
        if module not in self._frames:
            names = self._names()
            frames = []
            for p, shift in zip(self._parts, self._shifts):
                if module not in p.schemas:
                    continue
                df = p.frame(module, names)
                if shift:
                    for c, op in cols:
                        if op in (OP["TS_START"], OP["TS_END"]):
                            v = df[c].to_numpy()
                            df[c] = np.where(v != 0, v + shift, v)
                frames.append(df)
            df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
            if len(self._parts) > 1:
                try:
                    tables = None
                    if topk_tables(cols):  # per-rank logs carry whole tables (TOPK)
                        tables = whole_tables(df, cols, self._topk_parts(module, cols, frames))
                    df = reduce_records(df, cols, tables)
                except ValueError as e:  # the set's problem, not one file's
                    raise LogError(f"merging the {module} records of {len(self.files)} "
                                   f"logs ({self.files[0]}...): {e}") from None
            self._frames[module] = df
        return self._frames[module].copy(deep=False)  # copy-on-write keeps the cache intact

    def _topk_parts(self, module: str, cols: list, frames: list) -> list:
        """Per part with this module: (its row count, its TOPK tables or None)."""
        out, parts = [], [p for p in self._parts if module in p.schemas]
        for p, df in zip(parts, frames):
            secs = [(c, b) for k, m, c, b in p.extra if k == "TOPK" and m == module]
            got = [parse_topk(b, c, cols, f"{p.name}: TOPK {module}") for c, b in secs]
            if not got:
                out.append((len(df), None))
                continue
            if len({a.shape[3] for _, a in got}) > 1:
                raise LogError(f"{p.name}: TOPK {module} sections differ in slots")
            ids = np.concatenate([i for i, _ in got])
            if len(np.unique(ids)) != len(ids):
                raise LogError(f"{p.name}: TOPK {module}: a record id has two rows")
            out.append((len(df), (ids, np.concatenate([a for _, a in got]))))
        # the merged tables take rows x tables x 2 x slots cells: slots is a number in
        # the log, so the whole must fit the parts' bound (docs: Reader validation)
        shapes = [t[1].shape for _, t in out if t is not None]
        if shapes:
            cells = sum(n for n, _ in out) * shapes[0][1] * 2 * max(s[3] for s in shapes)
            if 8 * cells > sum(p.cap for p in parts):
                raise LogError(f"{self.files[0]}: TOPK {module}: {cells} table cells exceed "
                               "the bound for these files")
        return out

    def series(self, module: str) -> dict | None:
        """I/O over time: width (s) and per-bin bytes_read/bytes_written/reads/writes."""
        items = [(w, a, shift, p.name) for p, shift in zip(self._parts, self._shifts)
                 for w, a in p.series.get(module, [])]
        if not items:
            return None
        target = _series_width(items)
        arrs = [_coarsen(w, a, target, s, n) for w, a, s, n in items]
        out = np.zeros((4, max(a.shape[1] for a in arrs)), dtype=np.int64)
        for a in arrs:
            out[:, :a.shape[1]] += a
        return dict(width=target, **{k: out[i] for i, k in enumerate(SERIES_KEYS)})

    def ranks(self, module: str) -> pd.DataFrame:
        """Per-rank totals (before reduction): rank, reads, writes, bytes_*, *_time."""
        arrs = [a for p in self._parts for a in p.ranks.get(module, [])]
        return ranks_frame(np.concatenate(arrs) if arrs else np.empty(0, RANKS_DTYPE))


def _read(path: Path) -> _Part:
    try:
        with builtins_open(path, "rb") as fh:
            magic = fh.read(8)
    except OSError as e:
        raise LogError(f"cannot read {path}: {e.strerror or e}") from None
    if magic == live.MAGIC:  # a live file: the log it holds (reports/iochar/live.py)
        data, _ = live.recovered_log(path)
        return _Part(data, str(path))
    try:
        data = path.read_bytes()
    except OSError as e:
        raise LogError(f"cannot read {path}: {e.strerror or e}") from None
    return _Part(data, str(path))


def from_bytes(data, name: str = "<bytes>") -> Log:
    """A Log from the bytes of one file, or from a list of the bytes of several per-rank
    files of one job (tests, fuzzing)."""
    if isinstance(data, (list, tuple)):  # as a directory of them: from those that read
        parts, bad = [], []
        for i, d in enumerate(data):
            try:
                parts.append(_Part(bytes(d), f"{name}[{i}]"))
            except LogError as e:
                bad.append((f"{name}[{i}]", str(e)))
        return merge_readable(parts, bad)
    return Log([_Part(bytes(data), name)])


def open(path_or_list, job: str | None = None) -> Log:
    """Open a log, a list of per-rank logs of one job, or a directory of logs.
    A directory may hold several jobs (iochar/jobs.py groups them by their JOB
    sections): name one with `job` (an id from `iochar-report DIR --list`, or a
    jobid), else the directory must hold exactly one. A `.darshan` file is read
    through PyDarshan (iochar/darshan.py)."""
    if isinstance(path_or_list, (str, os.PathLike)) and str(path_or_list).endswith(".darshan"):
        return DarshanLog(path_or_list)
    items = [path_or_list] if isinstance(path_or_list, (str, os.PathLike)) else list(path_or_list)
    if job is None and not any(Path(it).is_dir() for it in items):
        files = jobs.expand(items)
        if len(files) > 1 and all(jobs.process_log(_head(f)) for f in files):
            found, bad = jobs.find(files, None)  # one job's process logs: ranks numbered
            if len(found) == 1 and not bad:
                return open_job(found[0])
        return Log([_read(p) for p in files])
    found, bad = jobs.find(items, job)
    if bad:  # a log that is no job's and does not read is an error, as when named alone
        raise LogError(bad[0][1])
    if len(found) > 1:
        raise LogError(f"{len(found)} jobs in {', '.join(map(str, items))}: pick one with "
                       f"job= (ids: {', '.join(g.id for g in found[:5])}"
                       f"{', ...' if len(found) > 5 else ''})")
    return open_job(found[0])  # per-rank logs: from those that read (open_ranks)


def _head(path) -> dict:
    try:
        return jobs.read_job(Path(path))
    except LogError:
        return {}


def open_job(job, want: str | None = None) -> Log:
    """The Log of one job: a jobs.Job (jobs.find), or the job `want` (an id or a jobid;
    None: the only one) among the logs under a path or list of paths. Per-rank logs are
    merged as if reduced, from those that read (open_ranks); a job's process logs each
    as the rank jobs.process_ranks numbered."""
    if not isinstance(job, jobs.Job):
        items = [job] if isinstance(job, (str, os.PathLike)) else list(job)
        found, bad = jobs.find(items, want)
        if len(found) > 1:
            raise LogError(f"{len(found)} jobs in {', '.join(map(str, items))}: pick one "
                           f"(ids: {', '.join(g.id for g in found[:5])}"
                           f"{', ...' if len(found) > 5 else ''})")
        job = found[0]
    if len(job.files) == 1 and not job.unreadable:
        return open(job.files[0])
    return open_ranks(job.files, job.unreadable, job.ranks if job.processes else None)


def open_ranks(files: list, unreadable=(), ranks=None) -> Log:
    """One job's per-rank logs merged from those that read: a log that does not
    (its own error, found reading it whole: framing, sections, records, merging) is
    left out and named in the JOB (`unreadable_logs`, one "file: reason" each, "; "
    apart) beside the files in `unreadable` already known bad; the ranks it held are
    then missing (`missing_ranks`, partial bit 16). Raises one LogError when none
    reads. The Log's `unreadable` lists [(file, reason)]."""
    parts, bad = [], list(unreadable)
    nprocs = max(ranks) + 1 if ranks else None
    for i, f in enumerate(files):
        try:
            parts.append(_read(Path(f)))
            if ranks:
                parts[-1].as_rank(ranks[i], nprocs)
        except LogError as e:
            bad.append((f, str(e)))
    return merge_readable(parts, bad)


def merge_readable(parts: list, bad: list) -> Log:
    """The Log of the parts (_Part) that read whole, the others moved to `bad`
    [(name, reason)] (open_ranks)."""
    parts, log = list(parts), None
    while parts:
        try:
            log = Log(parts)
            for m in log.modules:  # everything a report reads, so errors surface here
                log.records(m), log.series(m), log.ranks(m)
            break
        except LogError as e:
            log, culprit = None, _blamed(parts, str(e))
            if culprit is None:  # a problem of the set, not of one file
                raise
            parts.remove(culprit)
            bad.append((culprit.name, str(e)))
    if log is None:
        if len(bad) == 1:
            raise LogError(bad[0][1])
        raise LogError(f"none of the {len(bad)} logs of this job reads: "
                       + "; ".join(_named(f, why) for f, why in bad[:3])
                       + (f"; and {len(bad) - 3} more" if len(bad) > 3 else ""))
    log.unreadable = bad
    if bad:
        log.job["unreadable_logs"] = "; ".join(_named(f, why) for f, why in bad)
    return log


def _named(path, why: str) -> str:
    """A reader's error names its file; others get it in front."""
    return why if why.startswith(f"{path}: ") or str(path) in why else f"{path}: {why}"


def _blamed(parts: list, msg: str):
    """The part an error is about: the reader's errors start with its name, merging's
    say `cannot merge NAME:`."""
    return next((p for p in parts if msg.startswith(f"{p.name}: ")
                 or msg.startswith(f"cannot merge {p.name}: ")), None)


def timestamp_columns(df: pd.DataFrame) -> list:
    """Columns holding timestamps (F_*_TIMESTAMP counters, iochar's and Darshan's)."""
    return [c for c in df.columns if isinstance(c, str) and c.endswith("_TIMESTAMP")]


def job_origin(job: dict) -> float:
    """Epoch seconds that a log's timestamps count from. iochar: JOB `start_time` (its
    `time_origin` key says so; logs without the key are the same). A Darshan log read
    through PyDarshan: its job start (`start_time` + `start_time_nsec`), the moment
    Darshan initialised (MPI_Init in MPI jobs)."""
    origin = job.get("time_origin", "start_time")
    if origin == "epoch":
        return 0.0
    if origin != "start_time":
        raise LogError(f"unknown JOB time_origin {origin!r}")
    t = job.get("start_time", 0)
    if not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t):
        raise LogError(f"JOB start_time {t!r} is not a time")
    nsec = job.get("start_time_nsec", 0)
    return float(t) + (nsec * 1e-9 if isinstance(nsec, int) and 0 <= nsec < 10**9 else 0.0)


def to_epoch(df: pd.DataFrame, job: dict) -> pd.DataFrame:
    """A copy of df whose timestamp columns are epoch seconds (0 stays 0: never
    happened), so records of iochar and Darshan logs of different origins compare."""
    out, base = df.copy(), job_origin(job)
    for c in timestamp_columns(df):
        v = out[c].to_numpy(dtype=np.float64)
        out[c] = np.where(v != 0, v + base, 0.0)
    return out


def file_systems(df: pd.DataFrame, mounts: pd.DataFrame) -> pd.DataFrame:
    """A copy of df with the file system of each row's path: `mount_point`, `fs_type`
    and `fs_block_size` of the longest mount point (a whole path prefix) in the log's
    MOUNTS (`log.mounts`), as Darshan's tools match records to its mount table;
    empty/0 when none matches (a special name such as <STDOUT>)."""
    pts = [(str(m), str(t), int(b)) for m, t, b in mounts[["mount_point", "fs_type",
                                                         "block_size"]].itertuples(index=False)]
    pts.sort(key=lambda x: -len(x[0]))
    cache = {}

    def find(path):
        if path not in cache:
            cache[path] = next((x for x in pts if isinstance(path, str) and (
                x[0] == "/" and path.startswith("/") or path == x[0]
                or path.startswith(x[0].rstrip("/") + "/"))), ("", "", 0))
        return cache[path]

    got = [find(p) for p in df["path"]]
    out = df.copy()
    out["mount_point"] = [g[0] for g in got]
    out["fs_type"] = [g[1] for g in got]
    out["fs_block_size"] = np.array([g[2] for g in got], dtype=np.int64)
    return out
