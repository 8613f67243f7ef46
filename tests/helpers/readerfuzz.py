"""Structure-aware fuzzing of the log readers (issue: readers never crash).

Mutates real logs (tests/corpus/*.iochar) where their meaning lives: header, JOB
fields (values and types), NAMES strings, RECORDS values, SCHEMA ops and names,
SERIES width/nbins/bins, RANKS rows, CALLSITE/TRACE/LOADMAP payloads, section
counts, lengths, kinds and order; then re-fixes the CRCs and lengths, and runs every
reader entry point in process. Anything but iochar.LogError is a crash.

Used by tests/unit/test_fuzz_readers.py (IOCHAR_FUZZ_CASES, IOCHAR_FUZZ_SEED) and
bench/fuzz_readers.py (long runs, crash files kept).
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import shutil
import struct
import sys
import time
import traceback
import warnings
import zlib
from pathlib import Path
from unittest import mock

if __name__ == "__main__":  # run as a script: this checkout's package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "reports"))

import numpy as np  # noqa: E402

import iochar  # noqa: E402
from iochar import (  # noqa: E402
    callsites,
    codec,  # noqa: E402
    html,
    jobreport,  # noqa: E402
)
from iochar import summary as S  # noqa: E402
from iochar.callsites import ENTRY_DTYPE, TRACE_DTYPE  # noqa: E402
from iochar.cli import diff, parser, report  # noqa: E402
from iochar.cli.common import write_atomic  # noqa: E402
from iochar.log import HEADER, from_bytes, section_at, section_head  # noqa: E402
from iochar.logformat import Reader  # noqa: E402
from iochar.safetext import sanitize  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
CRASHES = CORPUS / "crashes"
RANK_LOGS = [f"rank{i}.iochar" for i in range(4)]

I64 = [0, 1, -1, 2**63 - 1, -2**63, 2**31, 2**32 - 1, 5 * 10**8, 2**40, 2**53 + 1, 7, 4096]
F64 = [float("nan"), float("inf"), float("-inf"), 1e20, -1.0, 0.0, 1e-300, 1e308, 2.0**40,
       1e10, 1e11, 0.5]
STRS = [b"\x1b[31mred\x1b[0m", b"a\nforged line", b"\xff\xfe\x80", b"$\\foo$", b"",
        b"x" * 5000, b"\x00", b"<script>alert(1)</script>", b"%s%n{}", b"\\", b"\r\x1b[2K",
        b"\xe2\x80\xae", b"$x^2$ \\frac{a}{b}"]


# ---- framing ------------------------------------------------------------------

class Sections(list):
    """[kind, module, count, payload, ulen override, header edit] per section, and the
    log's format version (1: 48-byte headers, zlib; 2: 48-byte headers, raw deflate
    against the dictionary, encoded NAMES and RECORDS; 3: as 2 with varint headers)."""

    version = 1


def split(data: bytes) -> Sections:
    """The sections of a valid log of any format, payloads inflated."""
    _, version, hsize, _, nsec, _ = HEADER.unpack_from(data)
    off, secs = hsize, Sections()
    secs.version = version
    for _ in range(nsec):
        kind, mod, count, _, _, clen, start = section_at(data, off, version)
        comp = data[start:start + clen]
        payload = zlib.decompress(comp) if version < 2 else \
            codec.decompressor().decompress(comp)
        secs.append([kind.rstrip(b"\0"), mod.rstrip(b"\0"), count, payload, None, None])
        off = start + clen
    return secs


def join(secs: list, version: int | None = None, nsec: int | None = None,
         extra: bytes = b"", level: int = 1) -> bytes:
    """A log around the sections, every CRC and length consistent (unless overridden:
    a section's ulen, or its header edit, a function of the header's bytes before its
    CRC, whose CRC is then fixed)."""
    version = getattr(secs, "version", 1) if version is None else version
    out = []
    for kind, mod, count, payload, ulen, *edit in secs:
        comp = zlib.compress(payload, level) if version < 2 else \
            codec.compress(payload, None if level == 1 else level)
        head = section_head(kind[:8], mod[:16], count & 0xFFFFFFFF, zlib.crc32(comp),
                            len(payload) if ulen is None else ulen, len(comp),
                            version if version in (1, 2, 3) else 3)[:-4]
        if edit and edit[0] is not None:
            with contextlib.suppress(IndexError):  # made for another version's header
                head = edit[0](head)
        out.append(head + struct.pack("<I", zlib.crc32(head)) + comp)
    total = HEADER.size + sum(map(len, out)) + len(extra)
    head = HEADER.pack(b"IOCHARLG", version, HEADER.size, total,
                       len(out) if nsec is None else nsec, 0)[:28]
    return b"".join([head, struct.pack("<I", zlib.crc32(head)), *out, extra])


# ---- payload codecs (lenient enough for the seeds) --------------------------------

def job_entries(payload: bytes) -> list:
    out, off = [], 0
    while off < len(payload):
        (kl,) = struct.unpack_from("<H", payload, off)
        key = payload[off + 2:off + 2 + kl]
        t = payload[off + 2 + kl]
        off += 3 + kl
        if t == 3:
            (n,) = struct.unpack_from("<I", payload, off)
            val = payload[off + 4:off + 4 + n]
            off += 4 + n
        else:
            val = payload[off:off + 8]
            off += 8
        out.append([key, t, val])
    return out


def job_payload(entries: list) -> bytes:
    out = []
    for key, t, val in entries:
        body = struct.pack("<I", len(val)) + val if t == 3 else val
        out.append(struct.pack("<H", len(key)) + key + bytes([t]) + body)
    return b"".join(out)


def job_value(rng: random.Random):
    """(type, encoded value): an int, a float or a string from the pools."""
    t = rng.choice((1, 2, 3))
    if t == 1:
        return 1, struct.pack("<q", rng.choice(I64 + [rng.randint(-2**63, 2**63 - 1)]))
    if t == 2:
        return 2, struct.pack("<d", rng.choice(F64))
    return 3, rng.choice(STRS)


def names_entries(payload: bytes, version: int = 1, count: int = 0) -> list:
    if version >= 2:
        ids, paths = codec.decode_names(payload, count, "seed")
        return [[int(i), p] for i, p in zip(ids.tolist(), paths)]
    out, off = [], 0
    while off < len(payload):
        rid, n = struct.unpack_from("<QI", payload, off)
        out.append([rid, payload[off + 12:off + 12 + n]])
        off += 12 + n
    return out


def names_payload(entries: list, version: int = 1) -> bytes:
    if version >= 2:
        return codec.encode_names(np.array([e[0] for e in entries], np.uint64),
                                  [e[1] for e in entries])
    return b"".join(struct.pack("<QI", rid, len(p)) + p for rid, p in entries)


def schema_entries(payload: bytes):
    version, n_int, n_float = struct.unpack_from("<III", payload)
    out, off = [], 12
    while off < len(payload):
        (n,) = struct.unpack_from("<H", payload, off)
        out.append([payload[off + 2:off + 2 + n], payload[off + 2 + n]])
        off += 3 + n
    return [version, n_int, n_float], out


def schema_payload(head: list, entries: list) -> bytes:
    return struct.pack("<III", *[h & 0xFFFFFFFF for h in head]) + b"".join(
        struct.pack("<H", len(n)) + n + bytes([op & 0xFF]) for n, op in entries)


def put_i64(buf: bytearray, off: int, v: int):
    if 0 <= off <= len(buf) - 8:
        buf[off:off + 8] = struct.pack("<q", v)


def put_f64(buf: bytearray, off: int, v: float):
    if 0 <= off <= len(buf) - 8:
        buf[off:off + 8] = struct.pack("<d", v)


# ---- mutations ------------------------------------------------------------------

def _pick(secs, rng, kind: bytes):
    idx = [i for i, s in enumerate(secs) if s[0] == kind]
    return secs[rng.choice(idx)] if idx else None


def m_job(secs, rng):
    sec = _pick(secs, rng, b"JOB")
    if sec is None:
        return "no JOB"
    ents = job_entries(sec[3])
    keys = [b"nprocs", b"start_time", b"end_time", b"rank", b"nnodes", b"partial",
            b"folded_files", b"exe", b"cmdline", b"warnings", b"truncated_paths", b"uid",
            b"folded.POSIX", b"jobid", b"finalized", b"hostname", b"mpi", b"\x1b[2J"]
    key = rng.choice(keys + [e[0] for e in ents])
    t, val = job_value(rng)
    if key == b"nprocs" and rng.random() < 0.3:
        t, val = 1, struct.pack("<q", 5 * 10**8)
    hit = [e for e in ents if e[0] == key]
    if hit and rng.random() < 0.1:
        ents.remove(hit[0])
        what = "removed"
    elif hit:
        hit[0][1:] = [t, val]
        what = "set"
    else:
        ents.insert(rng.randrange(len(ents) + 1), [key, t, val])
        what = "added"
    sec[2], sec[3] = len(ents), job_payload(ents)
    return f"JOB {what} {key!r} type {t} {val[:16]!r}"


def m_names(secs, rng):
    sec = _pick(secs, rng, b"NAMES")
    if sec is None:
        return "no NAMES"
    ents = names_entries(sec[3], secs.version, sec[2])
    if not ents:
        return "empty NAMES"
    e = rng.choice(ents)
    r = rng.random()
    if r < 0.5:
        e[1] = b"/tmp/" + rng.choice(STRS) + b"/" + rng.choice(STRS)
    elif r < 0.7:
        e[1] = e[1] + b"\0TRUNCATED"
    elif r < 0.8:
        e[0] = rng.choice([0, 2**64 - 1, rng.getrandbits(64)])
    else:
        ents.append(list(e))  # a repeated id
    sec[2], sec[3] = len(ents), names_payload(ents, secs.version)
    return f"NAMES {e[1][:24]!r}"


def m_records(secs, rng):
    sec = _pick(secs, rng, b"RECORDS")
    if sec is None or not sec[2]:
        return "no RECORDS"
    if secs.version >= 2:
        return m_columns(secs, sec, rng)
    count, buf = sec[2], bytearray(sec[3])
    schema = next((x for x in secs if x[0] == b"SCHEMA" and x[1] == sec[1]), None)
    words = (schema[2] + 63) // 64 if schema else 1
    ncols = (len(buf) - 8 * words) // (8 * count)
    col, row = rng.randrange(max(ncols, 1)), rng.randrange(count)
    v = rng.choice(I64 + [struct.unpack("<q", struct.pack("<d", rng.choice(F64)))[0]])
    base = 8 * words + 8 * count * col
    for p in range(8):  # byte-transposed column: plane p holds byte p of every value
        at = base + p * count + row
        if at < len(buf):
            buf[at] = (v >> (8 * p)) & 0xFF
    if rng.random() < 0.1 and words:
        buf[rng.randrange(8 * words)] ^= 1 << rng.randrange(8)  # presence bits
    sec[3] = bytes(buf)
    return f"RECORDS col {col} row {row} = {v}"


# ---- format 2-3 encodings: RECORDS columns, front-coded NAMES, varint headers ------

def _bitmap_words(secs, sec) -> int:
    schema = next((x for x in secs if x[0] == b"SCHEMA" and x[1] == sec[1]), None)
    return (schema[2] + 63) // 64 if schema else 1


def columns(payload: bytes, words: int) -> tuple[bytes, list]:
    """RECORDS (formats 2-3) -> (presence bitmap, [each column's bytes]), lenient."""
    c = Reader(payload, "seed", codec.CodecError)
    c.at = 8 * words
    cols = []
    while c.at < len(payload):
        start = c.at
        enc = c.take(1)[0] & 0x7F
        if enc in (codec.CONST, codec.SAME):
            c.varint()
        else:
            c.at += c.varint()
        cols.append(payload[start:min(c.at, len(payload))])
    return payload[:8 * words], cols


def _column(rng, count: int, k: int) -> bytes:
    """A fresh column of any encoding (some inconsistent on purpose)."""
    enc = rng.choice([codec.RAW, codec.CONST, codec.PLAIN, codec.DELTA, codec.SAME, codec.DIFF,
                      6, 127])
    flag = codec.NS if rng.random() < 0.15 else 0
    count = min(count, 4096)  # a count made huge by an earlier mutation: a short column
    vals = [rng.choice(I64) for _ in range(min(count, 64))] + [0] * max(count - 64, 0)
    zz = codec.zz(np.array(vals, np.int64)) if count else np.empty(0, np.uint64)
    if enc == codec.CONST:
        return bytes([enc | flag]) + codec.varint(int(codec.zz(np.array([rng.choice(I64)]))[0]))
    if enc == codec.SAME:
        return bytes([enc | flag]) + codec.varint(rng.choice([0, max(k - 1, 0), k, k + 5]))
    if enc == codec.RAW:
        data = np.array(vals, "<i8").view(np.uint8).reshape(-1, 8).T.tobytes()
    elif enc == codec.DIFF:
        data = codec.varint(rng.choice([0, max(k - 1, 0), k])) + codec.varints(zz)
    else:
        data = codec.varints(zz)
    n = len(data) + rng.choice([0, 0, 0, 1, -1, 2**40])
    return bytes([enc | flag]) + codec.varint(max(n, 0)) + data


def m_columns(secs, sec, rng):
    """RECORDS columns (formats 2-3): encodings, lengths, references, NS flags, counts."""
    words = _bitmap_words(secs, sec)
    bitmap, cols = columns(sec[3], words)
    r = rng.random()
    if r < 0.35 and cols:
        k = rng.randrange(len(cols))
        cols[k] = _column(rng, sec[2], k)
        what = f"column {k} replaced ({cols[k][0]:#x})"
    elif r < 0.5 and cols:
        k = rng.randrange(len(cols))
        cols[k] = bytes([rng.choice([0, 1, 2, 3, 4, 5, 0x80, 0x81, 0x84, 0xFF])]) + cols[k][1:]
        what = f"column {k} encoding byte {cols[k][0]:#x}"
    elif r < 0.6 and cols:
        k = rng.randrange(len(cols))
        cols.insert(k, cols[k]) if rng.random() < 0.5 else cols.pop(k)
        what = f"column {k} repeated or dropped"
    elif r < 0.75:  # a count the columns do not hold; all CONST: a few bytes, many records
        sec[2] = rng.choice([sec[2] + 1, 10**6, 10**7, 2**32 - 1])
        if rng.random() < 0.6:
            cols = [bytes([codec.CONST]) + codec.varint(rng.choice([2, 4, 0]))
                    for _ in cols]
        what = f"count {sec[2]}"
    elif r < 0.85:
        b = bytearray(bitmap)
        if b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        bitmap = bytes(b)
        what = "presence bit"
    else:
        k = rng.randrange(max(len(cols), 1))
        cols[k:k + 1] = [m_bytes_raw(cols[k] if cols else b"", rng)]
        what = f"column {k} bytes"
    sec[3] = bitmap + b"".join(cols)
    return f"RECORDS {what}"


def m_bytes_raw(buf: bytes, rng) -> bytes:
    b = bytearray(buf or b"\0")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(b))
        b[i] = rng.choice([0, 0xFF, 0x7F, 0x80, b[i] ^ (1 << rng.randrange(8))])
    return bytes(b)


def m_front(secs, rng):
    """NAMES front coding (formats 2-3): shared prefixes, suffix lengths, explicit ids,
    names up to and past the path limit, many long names sharing a prefix."""
    sec = _pick(secs, rng, b"NAMES")
    if sec is None or secs.version < 2:
        return m_names(secs, rng)
    r = rng.random()
    if r < 0.35:  # long names: at the limit, past it, megabytes (compressible)
        n = rng.choice([4095, 4105, 4106, 1 << 16, 4 << 20])
        k = rng.choice([1, 2, 64, 300])
        pat = rng.choice([b"a", b"/x/", bytes([0xFF])])
        first = (pat * (n // len(pat) + 1))[:n]
        # front-coded by hand (the writer's encoder is not built for such names): each
        # later name shares all but the last byte, ids given explicitly
        shared = codec.varints(np.array([0] + [n - 1] * (k - 1), np.uint64))
        lens = codec.varints(np.array([n] + [1] * (k - 1), np.uint64))
        ids = b"".join(codec.varint(i) + struct.pack("<Q", rng.getrandbits(64))
                       for i in range(k))
        sec[2] = k
        sec[3] = (codec.varint(len(shared)) + shared + codec.varint(len(lens)) + lens
                  + codec.varint(k) + ids + first + bytes(65 + i % 26 for i in range(1, k)))
        return f"NAMES {k} names of {n} bytes"
    c = Reader(sec[3], "seed", codec.CodecError)
    shared = c.varints(c.varint(), sec[2]).astype(np.int64)
    lens = c.varints(c.varint(), sec[2]).astype(np.int64)
    rest = sec[3][c.at:]
    if not len(shared):
        return "NAMES empty"
    i = rng.randrange(len(shared))
    if r < 0.55:
        shared[i] = rng.choice([shared[i] + 1, 2**31, 2**62, 4106])
        what = f"shared[{i}] = {shared[i]}"
    elif r < 0.75:
        lens[i] = rng.choice([lens[i] + 1, max(lens[i] - 1, 0), 0, 2**40])
        what = f"suffix length[{i}] = {lens[i]}"
    else:  # explicit ids: count and indexes
        rest = codec.varint(rng.choice([1, len(shared) + 1, 2**32])) + codec.varint(
            rng.choice([0, i, len(shared), 2**40])) + struct.pack("<Q", rng.getrandbits(64)) \
            + rest[1:]
        what = "explicit ids"
    a, b = codec.varints(shared.astype(np.uint64)), codec.varints(lens.astype(np.uint64))
    sec[3] = codec.varint(len(a)) + a + codec.varint(len(b)) + b + rest
    return f"NAMES {what}"


def m_roles(secs, rng):
    sec = _pick(secs, rng, b"ROLES")
    if sec is None:
        return "no ROLES"
    buf = bytearray(sec[3])
    r = rng.random()
    if r < 0.5 and buf:
        buf[rng.randrange(len(buf))] = rng.choice([11, 12, 255, 0, 9])
    elif r < 0.75:
        buf = buf[:-1] if rng.random() < 0.5 else buf + b"\0"
        if rng.random() < 0.5:
            sec[2] = len(buf)
    else:
        secs.insert(secs.index(sec) + 1, [sec[0], sec[1], sec[2], bytes(reversed(buf)), None,
                                           None])  # a second, different ROLES
        return "ROLES repeated, different"
    sec[3] = bytes(buf)
    return "ROLES bytes"


def _varint_edit(head: bytes, rng) -> bytes:
    """A format-3 section header's fields, bytes before its CRC: lengths of kind and
    module, overlong or out-of-range varints."""
    h = bytearray(head)
    r = rng.random()
    if r < 0.3:
        h[0] = rng.choice([0, 9, 255])
    elif r < 0.5:
        k = h[0]
        h[1 + k] = rng.choice([17, 255, 16])
    elif r < 0.8:  # the count (or a length) as an overlong or 70-bit varint
        at = 2 + h[0] + h[1 + h[0]]
        h[at:at] = rng.choice([b"\x80\x80", b"\xff" * 9 + b"\x01", b"\xff\xff\xff\xff\x7f",
                               b"\x80" * 10])
    else:
        i = rng.randrange(len(h))
        h[i] ^= 1 << rng.randrange(8)
    return bytes(h)


def m_head(secs, rng):
    """A section header (any format), its CRC fixed afterwards."""
    sec = rng.choice(secs)
    if secs.version >= 3:
        own = random.Random(rng.random())  # the edit runs later, in join
        sec[5] = lambda h: _varint_edit(h, own)
    else:
        i, bit = rng.randrange(44), 1 << rng.randrange(8)
        sec[5] = lambda h: h[:i] + bytes([h[i] ^ bit]) + h[i + 1:]
    return f"section header of {sec[0]!r} edited"


def m_schema(secs, rng):
    sec = _pick(secs, rng, b"SCHEMA")
    if sec is None:
        return "no SCHEMA"
    head, ents = schema_entries(sec[3])
    r = rng.random()
    i = rng.randrange(len(ents))
    if r < 0.5:
        ents[i][1] = rng.choice([5, 4, 11, 10, 12, 19, 20, 99, 255, 0])
        what = f"op {ents[i][0]!r} = {ents[i][1]}"
    elif r < 0.7:
        ents[i][0] = rng.choice([b"$\\foo$", b"path", b"rank", ents[0][0], b"", b"A\nB"])
        what = f"name {i} = {ents[i][0]!r}"
    elif r < 0.85:
        head[1] += rng.choice([-1, 1, 2**31])
        what = f"n_int {head[1]}"
    else:
        ents.append([b"EXTRA_COUNTER", rng.randrange(22)])
        what = "counter added"
    sec[3] = schema_payload(head, ents)
    if rng.random() < 0.5:
        sec[2] = len(ents)
    return f"SCHEMA {what}"


def m_series(secs, rng):
    sec = _pick(secs, rng, b"SERIES")
    if sec is None:
        return "no SERIES"
    buf = bytearray(sec[3])
    r = rng.random()
    if r < 0.35:
        w = rng.choice(F64 + [2.0**40 * 0.001, 0.001 / 2**40, 2**-30])
        put_f64(buf, 0, w)
        what = f"width {w}"
    elif r < 0.55:
        n = rng.choice([0, 1, 2**31, 2**32 - 1, sec[2] + 1])
        buf[8:12] = struct.pack("<I", n & 0xFFFFFFFF)
        if rng.random() < 0.5:
            sec[2] = n
        what = f"nbins {n}"
    else:
        v = rng.choice(I64)
        put_i64(buf, 16 + 8 * rng.randrange(max((len(buf) - 16) // 8, 1)), v)
        what = f"bin = {v}"
    sec[3] = bytes(buf)
    return f"SERIES {what}"


def m_rows(secs, rng, kind: bytes, rowsize: int, header: int = 0):
    """A field of a fixed-size row (RANKS, CALLSITE entries)."""
    sec = _pick(secs, rng, kind)
    if sec is None or len(sec[3]) < header + rowsize:
        return f"no {kind.decode()}"
    buf = bytearray(sec[3])
    row = rng.randrange((len(buf) - header) // rowsize)
    field = rng.randrange(rowsize // 8)
    off = header + row * rowsize + 8 * field
    if rng.random() < 0.6:
        put_i64(buf, off, rng.choice(I64))
    else:
        put_f64(buf, off, rng.choice(F64))
    sec[3] = bytes(buf)
    return f"{kind.decode()} row {row} field {field}"


def m_trace(secs, rng):
    sec = _pick(secs, rng, b"TRACE")
    if sec is None:
        return "no TRACE"
    buf = bytearray(sec[3])
    r = rng.random()
    if r < 0.25:
        buf[12:16] = struct.pack("<I", rng.choice([2**16, 2**31, 2**32 - 1, 50]))
        return "TRACE nmodules" + _set(sec, buf)
    if r < 0.35:
        buf[8:12] = struct.pack("<I", rng.choice([0, 55, 57, 2**31]))
        return "TRACE row size" + _set(sec, buf)
    if r < 0.45:
        put_i64(buf, 0, rng.choice(I64))
        return "TRACE dropped" + _set(sec, buf)
    rows_at = len(buf) - sec[2] * TRACE_DTYPE.itemsize
    if sec[2] == 0 or rows_at < 16:
        return "TRACE empty"
    row = rows_at + TRACE_DTYPE.itemsize * rng.randrange(sec[2])
    name = rng.choice(TRACE_DTYPE.names)
    off, (dt, _) = row + TRACE_DTYPE.fields[name][1], TRACE_DTYPE.fields[name][:2]
    if dt.kind == "f":
        put_f64(buf, off, rng.choice(F64))
    else:
        v = rng.choice(I64) & ((1 << (8 * dt.itemsize)) - 1)
        buf[off:off + dt.itemsize] = v.to_bytes(dt.itemsize, "little")
    return f"TRACE {name}" + _set(sec, buf)


def m_topk(secs, rng):
    """TOPK (per-rank logs): slots, table count, table values and counts."""
    sec = _pick(secs, rng, b"TOPK")
    if sec is None or len(sec[3]) < 8:
        return "no TOPK"
    buf = bytearray(sec[3])
    r = rng.random()
    if r < 0.3:
        buf[0:4] = struct.pack("<I", rng.choice([0, 1, 4, 4096, 4097, 2**31]))
        return "TOPK slots" + _set(sec, buf)
    if r < 0.45:
        buf[4:8] = struct.pack("<I", rng.choice([0, 1, 3, 2**32 - 1]))
        return "TOPK tables" + _set(sec, buf)
    put_i64(buf, 8 + 8 * rng.randrange(max((len(buf) - 8) // 8, 1)), rng.choice(I64))
    return "TOPK value" + _set(sec, buf)


def _set(sec, buf) -> str:
    sec[3] = bytes(buf)
    return ""


def m_callsite(secs, rng):
    sec = _pick(secs, rng, b"CALLSITE")
    if sec is None or not sec[2]:
        return "no CALLSITE"
    buf = bytearray(sec[3])
    row = ENTRY_DTYPE.itemsize * rng.randrange(sec[2])
    name = rng.choice(ENTRY_DTYPE.names)
    dt, off = ENTRY_DTYPE.fields[name][:2]
    size = dt.itemsize
    at = row + off + (8 * rng.randrange(size // 8) if size > 8 else 0)
    w = min(size, 8)
    if dt.base.kind == "f":
        put_f64(buf, at, rng.choice(F64))
    else:
        v = rng.choice(I64) & ((1 << (8 * w)) - 1)
        buf[at:at + w] = v.to_bytes(w, "little")
    sec[3] = bytes(buf)
    return f"CALLSITE {name}"


def m_loadmap(secs, rng):
    sec = _pick(secs, rng, b"LOADMAP")
    if sec is None:
        return "no LOADMAP"
    return m_bytes_of(sec, rng, "LOADMAP")


def m_bytes_of(sec, rng, what):
    buf = bytearray(sec[3])
    if not buf:
        sec[3] = rng.choice(STRS)
        return f"{what} filled"
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(buf))
        buf[i] = rng.choice([0, 0xFF, 0x7F, 0x80, buf[i] ^ (1 << rng.randrange(8))])
    sec[3] = bytes(buf)
    return f"{what} bytes"


def m_payload_bytes(secs, rng):
    sec = rng.choice(secs)
    return m_bytes_of(sec, rng, sec[0].decode(errors="replace"))


def m_section(secs, rng):
    """Counts, declared lengths, kinds, modules, order, presence."""
    i = rng.randrange(len(secs))
    sec = secs[i]
    r = rng.random()
    if r < 0.25:
        sec[2] = rng.choice([0, sec[2] + 1, max(sec[2] - 1, 0), 2**32 - 1, 2**31, 5 * 10**8])
        return f"section {i} count {sec[2]}"
    if r < 0.4:
        sec[4] = rng.choice([0, len(sec[3]) + 1, 2**40, 2**31 + 7, len(sec[3]) * 2000])
        return f"section {i} ulen {sec[4]}"
    if r < 0.5:
        sec[0] = rng.choice([b"JOB", b"NAMES", b"RECORDS", b"SERIES", b"RANKS", b"TRACE",
                             b"CALLSITE", b"LOADMAP", b"SCHEMA", b"NEWKIND", b"$\\foo"])
        return f"section {i} kind {sec[0]!r}"
    if r < 0.6:
        sec[1] = rng.choice([b"", b"POSIX", b"MPIIO", b"STDIO", b"$\\x$", b"NEW_MOD"])
        return f"section {i} module {sec[1]!r}"
    if r < 0.75:
        secs.insert(rng.randrange(len(secs) + 1), list(secs[rng.randrange(len(secs))]))
        return "section duplicated"
    if r < 0.9 and len(secs) > 1:
        del secs[i]
        return f"section {i} dropped"
    j = rng.randrange(len(secs))
    secs[i], secs[j] = secs[j], secs[i]
    return f"sections {i} and {j} swapped"


def m_inflate_bomb(secs, rng):
    """A payload that inflates past the file's bound (zeros compress ~1000x)."""
    sec = rng.choice(secs)
    sec[3] = sec[3] + bytes(rng.choice([1 << 20, 80 << 20]))
    return "payload padded with zeros"


MUTATORS = [(m_job, 8), (m_names, 3), (m_records, 6), (m_schema, 3), (m_series, 3),
            (m_trace, 3), (m_callsite, 2), (m_loadmap, 1), (m_payload_bytes, 2),
            (m_section, 3), (lambda s, r: m_rows(s, r, b"RANKS", 64), 2), (m_topk, 2),
            (m_inflate_bomb, 0.05), (m_front, 3), (m_roles, 1.5), (m_head, 2)]
_FNS, _WEIGHTS = zip(*MUTATORS)


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    secs = split(data)
    version = secs.version
    notes = []
    for fn in rng.choices(_FNS, _WEIGHTS, k=rng.randint(1, 3)):
        try:
            notes.append(fn(secs, rng))
        except (IndexError, struct.error, ValueError, OverflowError, ZeroDivisionError):
            notes.append("(a later mutation found its section already garbled)")
    nsec, extra = None, b""
    if rng.random() < 0.02:
        version = rng.choice([0, 1, 2, 3, 2**31])
        notes.append(f"version {version}")
    if rng.random() < 0.02:
        nsec = rng.choice([0, len(secs) + 1, 2**32 - 1])
        notes.append(f"nsections {nsec}")
    return join(secs, version, nsec, extra), "; ".join(notes)


# ---- entry points ---------------------------------------------------------------

class Context:
    """What every case is compared with (the original's report) and where HTML goes."""

    def __init__(self, tmpdir: Path):
        self.tmp = Path(tmpdir)
        self.base = {}

    def base_report(self, name: str, data):
        if name not in self.base:
            self.base[name] = jobreport.build(jobreport.load_log(from_bytes(data, name)))
        return self.base[name]


def open_all(data, name: str):
    """The reader tier: open, every Log accessor, the parser's lines, call sites and
    trace (for a list: per-rank logs merged)."""
    log = from_bytes(data, name)
    for m in log.modules:
        log.records(m)
        log.series(m)
        log.ranks(m)
        log.schema(m)
    _ = log.names, log.truncated_paths(), repr(log)
    for _ in parser._lines(log, log.modules):
        pass
    callsites.table(callsites.from_log(log))
    return log


def report_all(log, name: str, ctx: Context, with_html: bool = False, base: str | None = None):
    """The report tier: summary, advice, text and JSON report, diff against the
    original log (text and JSON), and optionally the HTML page written atomically."""
    d = jobreport.load_log(log)
    rep = jobreport.build(d)
    report.text(rep)
    json.dumps(sanitize(rep), allow_nan=False)
    base = base or name  # the seed this log was made from
    res = diff.compare(ctx.base_report(base, seed_bytes(base)), rep, 10.0, 50.0)
    diff.text(res, "base", "new")
    json.dumps(sanitize(res), default=S.json_value, allow_nan=False)
    if with_html:
        page = html.render(rep, d["series"], d["ranks"], d.get("observed"))
        write_atomic(str(ctx.tmp / "report.html"), page)
    return rep


def entry_points(data, name: str, ctx: Context, with_html: bool = True, base: str | None = None):
    """Every reader entry point on one log (bytes) or one job's per-rank logs (a list);
    `base`: the seed to diff against (default `name`)."""
    return report_all(open_all(data, name), name, ctx, with_html, base)


def run_clis(paths: list, base_path: str, tmpdir: Path, with_html: bool = True) -> list:
    """The console entry points in process: [(argv, status, stdout, stderr, cpu s)]."""
    out = []
    runs = [(report.main, paths), (report.main, paths + ["--json"]), (parser.main, paths),
            (parser.main, paths + ["--trace"])]
    if with_html:
        runs.append((report.main, paths + ["--html", str(tmpdir / "cli.html")]))
    if len(paths) == 1:
        runs.append((diff.main, [base_path, paths[0]]))
    for fn, argv in runs:
        o, e = io.StringIO(), io.StringIO()
        t0 = time.process_time()
        with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
            try:
                code = fn(argv)
            except SystemExit as x:
                code = x.code
        out.append((argv, code, o.getvalue(), e.getvalue(), time.process_time() - t0))
    return out


MAX_CPU = 15.0  # seconds of CPU any one call may take on any log (issue 31)


def cli_problem(argv, code, stdout, stderr, cpu: float = 0.0) -> str | None:
    """Why a CLI run breaks the contract (exit 0/1/2, one line on error, nothing but
    one error line when it printed nothing, bounded CPU), or None."""
    if code not in (0, 1, 2):
        return f"exit status {code}"
    if "Traceback" in stderr:
        return "traceback"
    if cpu > MAX_CPU:
        return f"{cpu:.1f} s of CPU"
    lines = stderr.splitlines()
    errors = [ln for ln in lines if ": error: " in ln]
    if len(errors) > 1 or any(": error: " not in ln and ": warning: " not in ln for ln in lines):
        return f"stderr is not one error line (and warnings): {stderr!r}"
    if code == 2 and not lines:
        return "exit status 2 without a word on stderr"
    if code == 2 and not stdout and (len(lines) != 1 or not errors):
        return f"nothing printed, and stderr is not one error line: {stderr!r}"
    if "cannot read the log (" in stderr:  # the guard's catch-all: a reader bug
        return f"unexpected exception: {stderr.strip()}"
    return None


_SEEDS: dict = {}
SEED_DIRS = ("", "v3/")  # format 1 (an older runtime's), format 3 (today's: make_seeds.sh)


def seed_bytes(name: str):
    """A seed's bytes; `ranks` and `v3/ranks`: the list of a job's per-rank logs."""
    if name not in _SEEDS:
        d = CORPUS / name.removesuffix("ranks")
        _SEEDS[name] = [(d / n).read_bytes() for n in RANK_LOGS] if name.endswith("ranks") \
            else (CORPUS / name).read_bytes()
    return _SEEDS[name]


def seed_names() -> list:
    out = []
    for sub in SEED_DIRS:
        d = CORPUS / sub
        out += sorted(sub + p.name for p in d.glob("*.iochar") if p.name not in RANK_LOGS)
        if all((d / n).exists() for n in RANK_LOGS):
            out.append(sub + "ranks")
    return out


def mutate_ranks(orig: list, rng: random.Random) -> tuple[list, str]:
    """A job's per-rank logs: one mutated (mostly), several, all, or one dropped or
    given twice."""
    data, r = list(orig), rng.random()
    if r < 0.06:
        k = rng.randrange(len(data))
        del data[k]
        return data, f"rank log {k} dropped"
    if r < 0.1:
        k = rng.randrange(len(data))
        data.append(data[k])
        return data, f"rank log {k} twice"
    which = [rng.randrange(len(data))] if r < 0.75 else \
        rng.sample(range(len(data)), rng.randint(2, len(data)))
    notes = []
    for k in which:
        data[k], note = mutate(orig[k], rng)
        notes.append(f"rank log {k}: {note}")
    return data, " | ".join(notes)


@contextlib.contextmanager
def no_addr2line():
    """Symbolizing runs addr2line, an outside program, on the seeds' binaries: not a
    reader, and slow per case. The LOADMAP parsing and table building still run."""
    with mock.patch.object(callsites.shutil, "which", return_value=None):
        yield


def fuzz(cases: int, seed: int, tmpdir: Path, report_every: int = 12, html_every: int = 1000,
         cli_every: int = 500, keep=None) -> dict:
    """Run `cases` mutated logs through the reader tier (all of them), the report tier
    (every report_every-th), the HTML page (every html_every-th) and the console
    entry points (every cli_every-th). Returns counts and the crashes."""
    rng = random.Random(seed)
    ctx = Context(tmpdir)
    names = seed_names()
    stats = {"cases": 0, "opened": 0, "rejected": 0, "report": 0, "html": 0, "cli": 0,
             "max_case_cpu": 0.0, "crashes": []}

    def crash(i, name, note, error, **kw):
        stats["crashes"].append({"case": i, "seed": seed, "log": name, "mutation": note,
                                 "error": error[:300], **kw})
        if keep:
            keep(stats["crashes"][-1], data)

    due_report = due_html = False
    with no_addr2line(), warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for i in range(cases):
            name = names[i % len(names)]
            orig = seed_bytes(name)
            if isinstance(orig, list):
                data, note = mutate_ranks(orig, rng)
            else:
                data, note = mutate(orig, rng)
            stats["cases"] += 1
            # the report tier (and the page) go to the next case that opens once due
            due_report |= i % report_every == 0
            due_html |= i % html_every == 0
            t0 = time.process_time()
            try:
                log = open_all(data, name)
                stats["opened"] += 1
                if due_report:
                    stats["report"] += 1
                    stats["html"] += due_html
                    report_all(log, name, ctx, with_html=due_html)
                    due_report = due_html = False
            except iochar.LogError:
                stats["rejected"] += 1
            except Exception as e:  # noqa: BLE001 -- a crash: record it, go on
                crash(i, name, note, f"{type(e).__name__}: {e}",
                      where=traceback.format_exc().strip().splitlines()[-3:])
            cpu = time.process_time() - t0
            stats["max_case_cpu"] = round(max(stats["max_case_cpu"], cpu), 2)
            if cpu > MAX_CPU:
                crash(i, name, note, f"{cpu:.1f} s of CPU")
            # per-rank sets go through the CLIs as a directory ten times as often
            if i % cli_every == 0 or isinstance(orig, list) and i % max(cli_every // 10, 1) == 0:
                stats["cli"] += 1
                paths = case_files(data, Path(tmpdir))
                base = CORPUS / (name.removesuffix("ranks") + RANK_LOGS[0]
                                 if isinstance(orig, list) else name)
                for argv, code, out, err, cpu in run_clis(paths, str(base), Path(tmpdir)):
                    why = cli_problem(argv, code, out, err, cpu)
                    if why:
                        crash(i, name, note, why, cli=argv[-1:])
    return stats


def case_files(data, tmpdir: Path) -> list:
    """One case on disk: a file, or (per-rank logs) a directory of them, as a user
    gives it to the CLIs."""
    if not isinstance(data, list):
        p = tmpdir / "case.iochar"
        p.write_bytes(data)
        return [str(p)]
    d = tmpdir / "case_ranks"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    for j, blob in enumerate(data):
        (d / f"job.rank{j}.iochar").write_bytes(blob)
    return [str(d)]


def main(argv=None) -> int:
    """Run the fuzzer and print its counts (and crashes) as JSON; exit 1 on a crash."""
    import argparse
    import os
    import resource
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=int(os.environ.get("IOCHAR_FUZZ_CASES", 5000)))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("IOCHAR_FUZZ_SEED", 1)))
    ap.add_argument("--report-every", type=int, default=12)
    ap.add_argument("--html-every", type=int, default=1000)
    ap.add_argument("--cli-every", type=int, default=500)
    ap.add_argument("--keep", metavar="DIR", help="write each crashing log (and why) here")
    args = ap.parse_args(argv)
    keep = None
    if args.keep:
        kdir = Path(args.keep)
        kdir.mkdir(parents=True, exist_ok=True)

        def keep(c, data):
            stem = kdir / f"seed{c['seed']}-case{c['case']}"
            for j, blob in enumerate(data if isinstance(data, list) else [data]):
                stem.with_name(f"{stem.name}.{j}.iochar").write_bytes(blob)
            stem.with_suffix(".json").write_text(json.dumps(c, indent=1))

    with tempfile.TemporaryDirectory() as d:
        stats = fuzz(args.cases, args.seed, Path(d), args.report_every, args.html_every,
                     args.cli_every, keep)
    use = resource.getrusage(resource.RUSAGE_SELF)
    stats["maxrss_bytes"] = use.ru_maxrss * 1024
    stats["cpu_seconds"] = round(use.ru_utime + use.ru_stime, 1)
    print(json.dumps(stats, indent=1))
    return 1 if stats["crashes"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
