"""The log's bytes (docs/log-format.md), the floor every other module stands on: the
file header, section headers, compression, the one bounded reader and its varints,
the JOB section, and the names the format defines (LogError, dtypes, section kinds).
log.py reads whole logs with it; jobs.py and live.py read a JOB without the rest;
writer.py and codec.py write the same bytes."""

from __future__ import annotations

import functools
import math
import re
import struct
import zlib
from pathlib import Path

import numpy as np

MAGIC = b"IOCHARLG"
FORMAT_VERSION = 3  # 2, 1 still read (section_at); 1: byte-plane RECORDS, NAMES with ids, zlib
HEADER = struct.Struct("<8sIIQII")  # magic, version, header size, file size, nsections, crc
SECTION = struct.Struct("<8s16sIIQII")  # formats 1-2: kind, module, count, crc, ulen, clen, hcrc
AGGREGATE_ID = 0xFFFFFFFFFFFFFFFF
UNKNOWN_PATH = "<UNKNOWN>"  # shown for a record id that has no NAMES entry
SERIES_KEYS = ("bytes_read", "bytes_written", "reads", "writes")
RANKS_DTYPE = np.dtype([("rank", "<i8"), ("reads", "<i8"), ("writes", "<i8"),
                        ("bytes_read", "<i8"), ("bytes_written", "<i8"),
                        ("read_time", "<f8"), ("write_time", "<f8"), ("meta_time", "<f8")])
JOB_KINDS = {"JOB", "MOUNTS", "NAMES", "LOADMAP"}  # sections without a module name
MODULE_KINDS = {"SCHEMA", "ROLES", "RECORDS", "SERIES", "RANKS", "HEAT"}
ZLIB_MAX_RATIO = 1032  # deflate cannot expand more than this: bounds a zlib bomb up front
MAX_NPROCS = 1 << 24  # JOB nprocs above this is not a job
EPOCH_MAX = 1e10  # JOB start/end times: seconds since 1970, before the year 2286
TRUNCATED_MARK = b"\0TRUNCATED"  # NAMES entry of a name cut at the runtime's path limit
# The runtime's path limit (4095 bytes) plus the truncation marker "\0TRUNCATED": no
# writer stores a longer name, and a reader that hashes names byte by byte need not
# take one (docs/log-format.md, NAMES).
MAX_NAME = 4095 + 10
_IDENT = re.compile(r"[A-Za-z0-9_]*\Z")

# The preset dictionary every format-2 section may be compressed against: the
# counter lists of the modules, JOB keys and common file-system names as the
# writer emits them.  Frozen: a log names it by its Adler-32 in the zlib header.
DICTIONARY = (Path(__file__).with_name("log_dictionary.bin")).read_bytes()
DICTIONARY_ADLER = zlib.adler32(DICTIONARY)


class LogError(Exception):
    """A log that cannot be read: the message names the file and the problem."""


class SectionHeaderError(Exception):
    """A section header that cannot be read: `short` when it runs past the end."""

    def __init__(self, msg: str, short: bool = False):
        super().__init__(msg)
        self.short = short


def record_dtype(n_int: int, n_float: int) -> np.dtype:
    """One RECORDS row: u64 id, i64 rank, i64 counters[n_int], f64 counters[n_float]."""
    return np.dtype([("record_id", "<u8"), ("rank", "<i8"),
                     ("ints", "<i8", (n_int,)), ("floats", "<f8", (n_float,))])


# ---- varints and the bounded reader --------------------------------------------

def varint_at(data, p: int) -> tuple[int, int]:
    """The LEB128 varint at byte p of data and the offset after it: the one decoder.
    IndexError when it runs past the end, ValueError when it is longer than 10 bytes;
    the value (up to 70 bits) is the caller's to bound."""
    v = shift = 0
    while True:
        b = data[p]  # IndexError past the end
        p += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, p
        shift += 7
        if shift >= 70:
            raise ValueError("varint longer than 10 bytes")


def varint(v: int) -> bytes:
    """The LEB128 bytes of v (0 <= v < 2**64): varint_at's mirror."""
    v, out = int(v), bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    return bytes(out + bytes([v]))


class Reader:
    """The one bounds-checked cursor over bytes (a section's payload, a live file's
    schema area): every read checks the length first, so no size or count read from
    the bytes reaches past them. A problem raises error(f"{what}: {message}"); `short`
    is the message of a read past the end."""

    def __init__(self, buf, what: str, error=LogError,
                 short: str = "payload ends inside an entry"):
        self.buf, self.at, self.what = buf, 0, what  # bytes or a memoryview: not copied
        self.error, self.short = error, short

    @functools.cached_property
    def raw(self) -> np.ndarray:
        """The bytes as uint8 (the vectorized readers index it)."""
        return np.frombuffer(self.buf, np.uint8)

    def fail(self, msg: str):
        raise self.error(f"{self.what}: {msg}")

    def take(self, n: int):
        if n < 0 or self.at + n > len(self.buf):
            self.fail(self.short)
        out = self.buf[self.at:self.at + n]
        self.at += n
        return out

    def unpack(self, fmt: str) -> tuple:
        at, n = self.at, struct.calcsize(fmt)
        if at + n > len(self.buf):
            self.fail(self.short)
        self.at = at + n
        return struct.unpack_from(fmt, self.buf, at)

    def text(self, lenfmt: str, errors: str = "surrogateescape") -> str:
        """A length-prefixed string; by default bytes that are not UTF-8 are kept
        (surrogateescape); errors="strict" raises UnicodeDecodeError on them."""
        (n,) = self.unpack(lenfmt)
        return str(self.take(n), "utf-8", errors)

    def varint(self) -> int:
        try:
            v, self.at = varint_at(self.buf, self.at)
        except (IndexError, ValueError):
            self.fail("bad varint")
        if v >= 1 << 64:
            self.fail("varint over 64 bits")
        return v

    def varints(self, nbytes: int, count: int) -> np.ndarray:
        """count varints filling exactly nbytes bytes, as uint64 (vectorized)."""
        if self.at + nbytes > len(self.buf):
            self.fail("varints run past the payload")
        b = self.raw[self.at:self.at + nbytes]
        self.at += nbytes
        ends = np.flatnonzero(b < 0x80)
        if len(ends) != count or (count and ends[-1] != nbytes - 1) or (not count and nbytes):
            self.fail(f"{nbytes} bytes do not hold {count} varints")
        if not count:
            return np.empty(0, np.uint64)
        starts = np.empty(count, np.int64)
        starts[0], starts[1:] = 0, ends[:-1] + 1
        lens = ends - starts + 1
        if lens.max() > 10:
            self.fail("varint over 10 bytes")
        over = (lens == 10) & (b[ends] > 1)
        if over.any():
            self.fail("varint over 64 bits")
        # byte k of every varint longer than k, k = 0, 1...: no per-byte index arrays
        low = (b & 0x7F).astype(np.uint64)
        v = low[starts]
        live = np.flatnonzero(lens > 1)
        for k in range(1, int(lens.max())):
            if k > 1:
                live = live[lens[live] > k]
            v[live] |= low[starts[live] + k] << np.uint64(7 * k)
        return v

    def done(self):
        if self.at != len(self.buf):
            self.fail(f"{len(self.buf) - self.at} bytes left after the last entry")


# ---- sections --------------------------------------------------------------------

def ascii_field(raw: bytes, what: str) -> str:
    """Section kind or module: NUL-padded letters, digits and '_' (they end up in
    column names, plot labels and file names of exports)."""
    s = raw.rstrip(b"\0")
    if b"\0" in s or not _IDENT.match(s.decode("latin-1")):
        raise LogError(f"{what}: not NUL-padded ASCII letters, digits and '_'")
    return s.decode()


def _header_varint(data, p: int, limit_bits: int, what: str) -> tuple[int, int]:
    try:
        v, p = varint_at(data, p)
    except IndexError:
        raise SectionHeaderError("header runs past the end of the file", short=True) from None
    except ValueError:
        raise SectionHeaderError(f"{what} is not a varint") from None
    if v >> limit_bits:
        raise SectionHeaderError(f"{what} {v} out of range")
    return v, p


def section_at(data, off: int, version: int) -> tuple:
    """The section header at byte off: (kind, module, count, payload crc, raw length,
    compressed length, payload start), kind and module as bytes. Formats 1-2: a fixed
    48 bytes (NUL-padded names, header CRC over 44); format 3: u8 length + kind
    (1-8 bytes), u8 length + module (0-16), LEB128 count, raw and compressed lengths,
    u32 payload CRC, u32 CRC of the header's bytes before it. Raises
    SectionHeaderError (its CRC included)."""
    n = len(data)
    if version < 3:
        if off + SECTION.size > n:
            raise SectionHeaderError("header runs past the end of the file", short=True)
        kind, mod, count, pcrc, ulen, clen, hcrc = SECTION.unpack_from(data, off)
        if zlib.crc32(data[off:off + 44]) != hcrc:
            raise SectionHeaderError("header CRC mismatch")
        return kind, mod, count, pcrc, ulen, clen, off + SECTION.size
    p = off
    names = []
    for what, lo, hi in (("kind", 1, 8), ("module", 0, 16)):
        if p >= n:
            raise SectionHeaderError("header runs past the end of the file", short=True)
        k = data[p]
        if not lo <= k <= hi:
            raise SectionHeaderError(f"{what} length {k} not in [{lo}, {hi}]")
        if p + 1 + k > n:
            raise SectionHeaderError("header runs past the end of the file", short=True)
        names.append(bytes(data[p + 1:p + 1 + k]))
        p += 1 + k
    count, p = _header_varint(data, p, 32, "count")
    ulen, p = _header_varint(data, p, 64, "raw length")
    clen, p = _header_varint(data, p, 32, "compressed length")
    if p + 8 > n:
        raise SectionHeaderError("header runs past the end of the file", short=True)
    pcrc, hcrc = struct.unpack_from("<II", data, p)
    if zlib.crc32(data[off:p + 4]) != hcrc:
        raise SectionHeaderError("header CRC mismatch")
    return names[0], names[1], count, pcrc, ulen, clen, p + 8


def section_head(kind: bytes, module: bytes, count: int, pcrc: int, ulen: int, clen: int,
                 version: int = FORMAT_VERSION) -> bytes:
    """The header section_at reads (the writers' side)."""
    if version < 3:
        head = SECTION.pack(kind, module, count, pcrc, ulen, clen, 0)[:44]
        return head + struct.pack("<I", zlib.crc32(head))
    head = (bytes([len(kind)]) + kind + bytes([len(module)]) + module + varint(count)
            + varint(ulen) + varint(clen) + struct.pack("<I", pcrc))
    return head + struct.pack("<I", zlib.crc32(head))


def decompressor():
    """Format 2 payloads: raw deflate (RFC 1951; the section CRC covers them)
    against the preset dictionary."""
    return zlib.decompressobj(-15, zdict=DICTIONARY)


def inflater_for(version: int):
    """The decompressor factory of a log's format version (1: zlib streams,
    2: raw deflate against DICTIONARY)."""
    return decompressor if version >= 2 else zlib.decompressobj


def payload(comp, crc: int, ulen: int, what: str, inflater=zlib.decompressobj) -> bytes:
    """Check a section's CRC and inflate its payload to exactly ulen bytes
    (format 1: zlib streams; 2: raw deflate against DICTIONARY)."""
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


# ---- the JOB section ---------------------------------------------------------------

def parse_job(buf: bytes, count: int, what: str) -> dict:
    """A JOB payload -> dict, its keys checked (JOB_INTS, JOB_TIMES, JOB_STRS)."""
    r, job = Reader(buf, what), {}
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
        if not key:
            raise LogError(f"{what}: empty key")
    r.done()
    _check_job(job, what)
    return job


# Keys the reader and reporters rely on (docs/log-format.md): type and range. Other
# keys are kept as they are; a reporter shows them escaped and does no arithmetic.
JOB_INTS = {"format": (0, 1 << 31), "nprocs": (1, MAX_NPROCS), "nnodes": (1, MAX_NPROCS),
            "uid": (0, (1 << 32) - 1), "pid": (0, (1 << 32) - 1), "rank": (0, MAX_NPROCS - 1),
            "partial": (0, (1 << 31) - 1), "folded_files": (0, 1 << 62),
            "memory_bound": (0, 1 << 62), "finalized": (0, 1), "truncated_paths": (0, 1 << 62)}
JOB_TIMES = ("start_time", "end_time")
JOB_STRS = ("version", "exe", "cmdline", "jobid", "hostname", "user", "mpi", "warnings",
            "time_origin", "ended_by", "missing_ranks")


def _check_job(job: dict, what: str):
    for key, v in job.items():
        if key in JOB_INTS or key.startswith("folded."):
            lo, hi = JOB_INTS.get(key, (0, 1 << 62))
            if not isinstance(v, int):
                raise LogError(f"{what}: {key} is {type(v).__name__} {v!r}, not an integer")
            if not lo <= v <= hi:
                raise LogError(f"{what}: {key} {v} out of range [{lo}, {hi}]")
        elif key in JOB_TIMES:
            if not isinstance(v, (int, float)) or not math.isfinite(v) \
                    or not 0 <= v <= EPOCH_MAX:
                raise LogError(f"{what}: {key} {v!r} is not a time (seconds since the "
                               f"epoch, 0 to {EPOCH_MAX:g})")
            job[key] = float(v)
        elif key in JOB_STRS and not isinstance(v, str):
            raise LogError(f"{what}: {key} is {type(v).__name__} {v!r}, not a string")
    nprocs = job.get("nprocs", 1)
    for key in ("rank", "nnodes"):
        if job.get(key, 0) > nprocs - (key == "rank"):
            raise LogError(f"{what}: {key} {job[key]} out of range for nprocs {nprocs}")
