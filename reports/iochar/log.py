"""Reader of iochar logs (docs/log-format.md); mirror image of writer.py."""

from __future__ import annotations

import builtins
import math
import os
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from . import codec

MAGIC = b"IOCHARLG"
FORMAT_VERSION = 2  # 1 still read: byte-plane RECORDS, NAMES with ids, zlib streams
HEADER = struct.Struct("<8sIIQII")  # magic, version, header size, file size, nsections, crc
SECTION = struct.Struct("<8s16sIIQII")  # kind, module, count, crc, ulen, clen, header crc
OPS = ("SUM", "MAX", "MIN_NZ", "ANY", "TOPK_VAL", "TOPK_CNT", "BYTES", "TIME",
       "TS_START", "TS_END", "MAXT", "MAXT_SIZE", "FAST_RANK", "FAST_BYTES",
       "FAST_TIME", "SLOW_RANK", "SLOW_BYTES", "SLOW_TIME", "VAR_TIME", "VAR_BYTES")
OP = {name: i for i, name in enumerate(OPS)}
AGGREGATE_ID = 0xFFFFFFFFFFFFFFFF
UNKNOWN_PATH = "<UNKNOWN>"  # shown for a record id that has no NAMES entry
SERIES_KEYS = ("bytes_read", "bytes_written", "reads", "writes")
RANKS_DTYPE = np.dtype([("rank", "<i8"), ("reads", "<i8"), ("writes", "<i8"),
                        ("bytes_read", "<i8"), ("bytes_written", "<i8"),
                        ("read_time", "<f8"), ("write_time", "<f8"), ("meta_time", "<f8")])
JOB_KINDS = {"JOB", "MOUNTS", "NAMES", "LOADMAP"}  # sections without a module name
MODULE_KINDS = {"SCHEMA", "RECORDS", "SERIES", "RANKS"}
ZLIB_MAX_RATIO = 1032  # deflate cannot expand more than this: bounds a zlib bomb up front


builtins_open = builtins.open  # `open` below is this module's


class LogError(Exception):
    """A log that cannot be read: the message names the file and the problem."""


def record_dtype(n_int: int, n_float: int) -> np.dtype:
    """One RECORDS row: u64 id, i64 rank, i64 counters[n_int], f64 counters[n_float]."""
    return np.dtype([("record_id", "<u8"), ("rank", "<i8"),
                     ("ints", "<i8", (n_int,)), ("floats", "<f8", (n_float,))])


class _Reader:
    """Bounds-checked cursor over one decompressed payload."""

    def __init__(self, buf: bytes, what: str):
        self.buf, self.off, self.what = buf, 0, what

    def take(self, n: int) -> bytes:
        if self.off + n > len(self.buf):
            raise LogError(f"{self.what}: payload ends inside an entry")
        b = self.buf[self.off:self.off + n]
        self.off += n
        return b

    def unpack(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))

    def text(self, lenfmt: str) -> str:
        (n,) = self.unpack(lenfmt)
        try:
            return self.take(n).decode()
        except UnicodeDecodeError:
            raise LogError(f"{self.what}: string is not UTF-8") from None

    def done(self):
        if self.off != len(self.buf):
            raise LogError(f"{self.what}: {len(self.buf) - self.off} bytes left after the last entry")


def _ascii_field(raw: bytes, what: str) -> str:
    s = raw.rstrip(b"\0")
    if b"\0" in s or any(c < 0x20 or c > 0x7E for c in s):
        raise LogError(f"{what}: not NUL-padded ASCII")
    return s.decode()


def inflater_for(version: int):
    """The decompressor factory of a log's format version (1: zlib streams,
    2: raw deflate against codec.DICTIONARY)."""
    return codec.decompressor if version >= 2 else zlib.decompressobj


def _payload(comp, crc: int, ulen: int, what: str, inflater=zlib.decompressobj) -> bytes:
    """Check a section's CRC and inflate its payload to exactly ulen bytes
    (format 1: zlib streams; 2: raw deflate against codec.DICTIONARY)."""
    if zlib.crc32(comp) != crc:
        raise LogError(f"{what} CRC mismatch")
    d = inflater()
    try:
        out = d.decompress(comp, ulen + 1)
    except zlib.error as e:
        raise LogError(f"{what}: zlib error: {e}") from None
    if len(out) > ulen:
        raise LogError(f"{what}: payload larger than the {ulen} bytes its header says")
    if not d.eof:
        raise LogError(f"{what}: zlib stream truncated")
    if d.unused_data:
        raise LogError(f"{what}: {len(d.unused_data)} bytes after the zlib stream")
    if len(out) != ulen:
        raise LogError(f"{what}: payload is {len(out)} bytes, header says {ulen}")
    return out


def _parse_job(buf: bytes, count: int, what: str) -> dict:
    r, job = _Reader(buf, what), {}
    for _ in range(count):
        key = r.text("<H")
        (t,) = r.unpack("<B")
        if t == 1:
            (job[key],) = r.unpack("<q")
        elif t == 2:
            (job[key],) = r.unpack("<d")
        elif t == 3:
            job[key] = r.text("<I")
        else:
            raise LogError(f"{what}: key {key!r} has unknown value type {t}")
    r.done()
    return job


def _parse_mounts(buf: bytes, count: int, what: str) -> list:
    r, rows = _Reader(buf, what), []
    for _ in range(count):
        (bs,) = r.unpack("<I")
        fs = r.text("<H")
        rows.append((r.text("<H"), fs, bs))
    r.done()
    return rows


def _parse_names(buf: bytes, count: int, what: str):
    """NAMES entries -> (ids uint64 array, list of paths)."""
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
    try:
        paths = [buf[s + 12:e].decode() for s, e in zip(offs, ends)]
    except UnicodeDecodeError:
        raise LogError(f"{what}: path is not UTF-8") from None
    return ids, paths


def _parse_schema(buf: bytes, count: int, what: str):
    r = _Reader(buf, what)
    version, n_int, n_float = r.unpack("<III")
    if n_int + n_float != count:
        raise LogError(f"{what}: count {count} != n_int {n_int} + n_float {n_float}")
    if count * 3 > len(buf):
        raise LogError(f"{what}: {count} counters cannot fit in {len(buf)} bytes")
    cols = []
    for _ in range(count):
        name = r.text("<H")
        (op,) = r.unpack("<B")
        cols.append((name, op))
    r.done()
    names = [c[0] for c in cols]
    if len(set(names)) != len(names) or "" in names:
        raise LogError(f"{what}: counter names empty or repeated")
    if {"rank", "record_id", "path"} & set(names):
        raise LogError(f"{what}: counter named like a key column")
    return version, n_int, n_float, cols


class _Part:
    """One validated log file, sections parsed; RECORDS kept as raw payloads."""

    def __init__(self, data: bytes, name: str):
        self.name = name
        self.job = None
        self.mounts = []
        self.names = []  # (ids, paths) per NAMES section
        self.schemas = {}  # module -> (version, n_int, n_float, [(name, op)])
        self.modules = []
        self.records = {}  # module -> [payload bytes]
        self.series = {}  # module -> [(width, int64 array (4, nbins))]
        self.ranks = {}  # module -> [structured array]
        self.extra = []  # (kind, module, count, payload bytes)
        self._parse(data)

    def _fail(self, msg):
        raise LogError(f"{self.name}: {msg}")

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
        if version not in (1, FORMAT_VERSION):
            self._fail(f"unsupported format version {version} (this reader knows {FORMAT_VERSION})")
        if size < total:
            self._fail(f"truncated file: expected {total} bytes got {size}")
        if size > total:
            self._fail(f"file is {size} bytes but its header says {total} (trailing data)")
        if hsize < HEADER.size or hsize > size:
            self._fail(f"bad header size {hsize}")
        off, todo = hsize, []
        view = memoryview(data)
        for k in range(nsec):
            where = f"section {k}"
            if off + SECTION.size > size:
                self._fail(f"truncated file: {where} header at byte {off} runs past the end")
            kind_b, mod_b, count, pcrc, ulen, clen, hcrc = SECTION.unpack_from(data, off)
            if zlib.crc32(view[off:off + 44]) != hcrc:
                self._fail(f"{where} header CRC mismatch")
            kind = _ascii_field(kind_b, f"{where} kind")
            module = _ascii_field(mod_b, f"{where} module")
            where = f"section {k} ({kind}{' ' + module if module else ''})"
            start = off + SECTION.size
            if start + clen > size:
                self._fail(f"{where}: payload of {clen} bytes runs past the end of the file")
            if ulen > max(clen, 1) * ZLIB_MAX_RATIO:
                self._fail(f"{where}: uncompressed length {ulen} impossible for {clen} bytes")
            self._check_size(kind, module, count, ulen, where)
            item = (kind, module, count, view[start:start + clen], pcrc, ulen, where)
            if kind == "SCHEMA":  # needed now to check the sizes of later RECORDS
                self._section(*item[:3], _payload(*item[3:], inflater), where)
            else:
                todo.append(item)
            off = start + clen
        if off != size:
            self._fail(f"sections end at byte {off} but the file has {size}")
        # zlib releases the GIL: big logs (many RECORDS sections) decompress in parallel
        with ThreadPoolExecutor(min(8, os.cpu_count() or 1)) as pool:
            bufs = pool.map(lambda it: _payload(*it[3:], inflater), todo)
            for item, buf in zip(todo, bufs):
                self._section(*item[:3], buf, item[-1])
        if self.job is None:
            self._fail("no JOB section")

    def _check_size(self, kind, module, count, ulen, where):
        """Sizes fixed by count (and schema) are checked before decompressing."""
        if kind in JOB_KINDS and module:
            self._fail(f"{where}: {kind} must not name a module")
        if kind in MODULE_KINDS and not module:
            self._fail(f"{where}: {kind} needs a module name")
        if kind == "RECORDS":
            if module not in self.schemas:
                self._fail(f"{where}: RECORDS before the module's SCHEMA")
            if self.version >= 2:  # encoded columns: sizes are checked when decoded
                return
            _, n_int, n_float, _ = self.schemas[module]
            words, ncnt = _present_words(n_int + n_float), n_int + n_float
            body = ulen - 8 * words - 16 * count
            if body < 0 or (count and (body % (8 * count) or body // (8 * count) > ncnt)) \
                    or (not count and body):
                self._fail(f"{where}: payload size {ulen} inconsistent with schema "
                           f"({count} records of at most {ncnt} counters)")
        elif kind == "SERIES" and ulen != 16 + 32 * count:
            self._fail(f"{where}: payload size {ulen} inconsistent with {count} bins")
        elif kind == "RANKS" and ulen != RANKS_DTYPE.itemsize * count:
            self._fail(f"{where}: payload size {ulen} inconsistent with {count} rows")

    def _section(self, kind, module, count, buf, where):
        if kind == "JOB":
            if self.job is not None:
                self._fail(f"{where}: second JOB section")
            self.job = _parse_job(buf, count, f"{self.name}: {where}")
        elif kind == "MOUNTS":
            self.mounts += _parse_mounts(buf, count, f"{self.name}: {where}")
        elif kind == "NAMES":
            if self.version >= 2:
                self.names.append(self._decoded(codec.decode_names, buf, count, where))
            else:
                self.names.append(_parse_names(buf, count, f"{self.name}: {where}"))
        elif kind == "SCHEMA":
            schema = _parse_schema(buf, count, f"{self.name}: {where}")
            if module in self.schemas and self.schemas[module] != schema:
                self._fail(f"{where}: differs from the module's earlier SCHEMA")
            if module not in self.schemas:
                self.schemas[module] = schema
                self.modules.append(module)
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
            if not (math.isfinite(width) and width > 0):
                self._fail(f"{where}: bin width {width} is not a positive number")
            arr = np.frombuffer(buf, dtype="<i8", offset=16).reshape(4, nbins).copy()
            self.series.setdefault(module, []).append((width, arr))
        elif kind == "RANKS":
            self.ranks.setdefault(module, []).append(np.frombuffer(buf, dtype=RANKS_DTYPE).copy())
        else:
            self.extra.append((kind, module, count, buf))

    def _decoded(self, fn, *args):
        try:
            return fn(*args[:-1], f"{self.name}: {args[-1]}")
        except codec.CodecError as e:
            raise LogError(str(e)) from None

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
        head = pd.DataFrame({"rank": ranks, "record_id": ids, "path": _paths(ids, names)})
        return pd.concat([head,
                          pd.DataFrame(ints.T, columns=[c[0] for c in cols[:n_int]], copy=False),
                          pd.DataFrame(floats.T, columns=[c[0] for c in cols[n_int:]], copy=False)],
                         axis=1)


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


MAX_SHIFT_BINS = 1 << 20  # a rank's log starting later than that is not one job


def _coarsen(width: float, arr: np.ndarray, target: float, shift_s: float, what: str):
    """Re-bin a (4, nbins) series from `width` to `target` and shift it by shift_s seconds."""
    f = target / width
    if abs(f - round(f)) > 1e-6 * f:
        raise LogError(f"{what}: SERIES bin widths {width} and {target} are not commensurable")
    f = round(f)
    n = -(-arr.shape[1] // f)
    pad = np.zeros((4, n * f), dtype=np.int64)
    pad[:, :arr.shape[1]] = arr
    out = pad.reshape(4, n, f).sum(axis=2)
    s = round(shift_s / target)
    if s > MAX_SHIFT_BINS:
        raise LogError(f"{what}: SERIES would start {s} bins after the job start")
    if s > 0:
        out = np.concatenate([np.zeros((4, s), np.int64), out], axis=1)
    return out


class Log:
    """One job's log (or several per-rank logs of one job, merged as if reduced)."""

    def __init__(self, parts: list):
        self._parts = parts
        self.files = [p.name for p in parts]
        if len(parts) == 1:
            self.job = dict(parts[0].job)
            self._shifts = [0.0]
        else:
            from .merge import merge_jobs
            self.job = merge_jobs([p.job for p in parts], self.files)
            t0 = self.job.get("start_time", 0.0)
            self._shifts = [float(p.job.get("start_time", t0)) - t0 for p in parts]
        self.modules, self._schemas = [], {}
        for p in parts:
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
        self.mounts = pd.DataFrame(rows, columns=["mount_point", "fs_type", "block_size"])
        self.mounts["block_size"] = self.mounts["block_size"].astype(np.int64)
        self.extra_sections = [e for p in parts for e in p.extra]
        from .merge import note_missing_ranks
        note_missing_ranks(self.job, [p.job for p in parts])
        self._frames = {}
        self._name_series = None

    def __repr__(self):
        return f"<iochar.Log {self.files[0]!r} nprocs={self.job.get('nprocs')} modules={self.modules}>"

    def _names(self) -> pd.Series:
        if self._name_series is None:
            chunks = [c for p in self._parts for c in p.names]
            ids = np.concatenate([c[0] for c in chunks]) if chunks else np.empty(0, np.uint64)
            paths = [s for c in chunks for s in c[1]]
            s = pd.Series(np.array(paths, dtype=object), index=pd.Index(ids, dtype=np.uint64))
            self._name_series = s[~s.index.duplicated(keep="first")]
        return self._name_series

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
                from .merge import reduce_records, topk_tables, whole_tables
                try:
                    tables = None
                    if topk_tables(cols):  # per-rank logs carry whole tables (TOPK)
                        tables = whole_tables(df, cols, self._topk_parts(module, cols, frames))
                    df = reduce_records(df, cols, tables)
                except ValueError as e:
                    raise LogError(f"{self.files[0]}: {module}: {e}") from None
            self._frames[module] = df
        return self._frames[module].copy(deep=False)  # copy-on-write keeps the cache intact

    def _topk_parts(self, module: str, cols: list, frames: list) -> list:
        """Per part with this module: (its row count, its TOPK tables or None)."""
        from .merge import parse_topk
        out, parts = [], [p for p in self._parts if module in p.schemas]
        for p, df in zip(parts, frames):
            secs = [(c, b) for k, m, c, b in p.extra if k == "TOPK" and m == module]
            got = [parse_topk(b, c, cols, f"{p.name}: TOPK {module}") for c, b in secs]
            if not got:
                out.append((len(df), None))
                continue
            if len({a.shape[3] for _, a in got}) > 1:
                raise LogError(f"{p.name}: TOPK {module} sections differ in slots")
            out.append((len(df), (np.concatenate([i for i, _ in got]),
                                  np.concatenate([a for _, a in got]))))
        return out

    def series(self, module: str) -> dict | None:
        """I/O over time: width (s) and per-bin bytes_read/bytes_written/reads/writes."""
        items = [(w, a, shift, p.name) for p, shift in zip(self._parts, self._shifts)
                 for w, a in p.series.get(module, [])]
        if not items:
            return None
        target = max(w for w, *_ in items)
        arrs = [_coarsen(w, a, target, s, n) for w, a, s, n in items]
        out = np.zeros((4, max(a.shape[1] for a in arrs)), dtype=np.int64)
        for a in arrs:
            out[:, :a.shape[1]] += a
        return dict(width=target, **{k: out[i] for i, k in enumerate(SERIES_KEYS)})

    def ranks(self, module: str) -> pd.DataFrame:
        """Per-rank totals (before reduction): rank, reads, writes, bytes_*, *_time."""
        arrs = [a for p in self._parts for a in p.ranks.get(module, [])]
        arr = np.concatenate(arrs) if arrs else np.empty(0, RANKS_DTYPE)
        return pd.DataFrame({k: arr[k] for k in RANKS_DTYPE.names})


def _read(path: Path) -> _Part:
    from . import live
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


def from_bytes(data: bytes, name: str = "<bytes>") -> Log:
    """A Log from the bytes of one file (tests, fuzzing)."""
    return Log([_Part(bytes(data), name)])


def _expand(path_or_list) -> list:
    items = [path_or_list] if isinstance(path_or_list, (str, os.PathLike)) else list(path_or_list)
    if not items:
        raise LogError("no log files given")
    files = []
    for it in items:
        p = Path(it)
        if p.is_dir():
            from .live import live_files
            found = sorted(p.glob("*.iochar"))
            found += live_files(p, found)
            if not found:
                raise LogError(f"no *.iochar logs in {p}")
            files += found
        else:
            files.append(p)
    return files


def open(path_or_list) -> Log:
    """Open a log, a list of logs, or a directory of *.iochar logs of one job.
    A `.darshan` file is read through PyDarshan (iochar/darshan.py)."""
    if isinstance(path_or_list, (str, os.PathLike)) and str(path_or_list).endswith(".darshan"):
        from .darshan import DarshanLog
        return DarshanLog(path_or_list)
    return Log([_read(p) for p in _expand(path_or_list)])



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
