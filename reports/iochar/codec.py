"""Format-2 encodings of RECORDS and NAMES payloads (docs/log-format.md, "Format 2
encodings"), and compression against the preset dictionary; the C writer's mirror is
runtime/log_codec.c.  The dictionary, varints and the bounded reader are
logformat.py's.  Vectorized: a million records decode in a fraction of a second."""

from __future__ import annotations

import zlib

import numpy as np

from .logformat import (  # noqa: F401  (DICTIONARY_ADLER, decompressor: re-exported)
    DICTIONARY,
    DICTIONARY_ADLER,
    MAX_NAME,
    Reader,
    decompressor,
    varint,
)

RAW, CONST, PLAIN, DELTA, SAME, DIFF = range(6)
NS = 0x80  # flag: a floating column stored as whole nanoseconds
DIFF_WINDOW = 8  # DIFF may refer to one of the 8 stored columns before it
NS_LIMIT = 9.0e9  # |seconds| below which n / 1e9 is exact for every integer n
_FNV_OFFSET, _FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)


class CodecError(ValueError):
    pass


def zz(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.int64)
    return ((v.view(np.uint64) << np.uint64(1)) ^ (v >> 63).view(np.uint64))


def unzz(u: np.ndarray) -> np.ndarray:
    u = np.asarray(u, dtype=np.uint64)
    return ((u >> np.uint64(1)) ^ (np.uint64(0) - (u & np.uint64(1)))).view(np.int64)


def varint_sizes(u: np.ndarray) -> np.ndarray:
    """Bytes of each LEB128 varint of the uint64 values u."""
    u = np.asarray(u, dtype=np.uint64)
    sizes = np.ones(len(u), np.int64)
    for k in range(1, 10):
        sizes += u >= np.uint64(1 << (7 * k))
    return sizes


def varints(u) -> bytes:
    u = np.asarray(u, dtype=np.uint64)
    if not len(u):
        return b""
    sizes = varint_sizes(u)
    starts = np.zeros(len(u), np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    out = np.empty(int(sizes.sum()), np.uint8)
    for k in range(int(sizes.max())):
        sel = sizes > k
        b = ((u[sel] >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        b[sizes[sel] > k + 1] |= 0x80
        out[starts[sel] + k] = b
    return out.tobytes()


# ---- RECORDS ---------------------------------------------------------------

def _enc_column(v: np.ndarray, done: list, ns: bool) -> bytes:
    """One column (int64 values, floats as their integer nanoseconds when ns):
    the smallest of the encodings, ties to the first listed."""
    n = len(v)
    flag = NS if ns else 0
    if n and (v == v[0]).all():
        return bytes([CONST | flag]) + varint(int(zz(v[:1])[0]))
    for j, w in enumerate(done):
        if np.array_equal(v, w):
            return bytes([SAME | flag]) + varint(j)
    cands = [(PLAIN, b"", v)]
    prev = np.empty(n, np.int64)
    prev[0], prev[1:] = 0, v[:-1]
    cands.append((DELTA, b"", v - prev))
    lo = max(0, len(done) - DIFF_WINDOW)
    cands += [(DIFF, varint(j), v - done[j]) for j in range(lo, len(done))]
    best, best_size = None, 8 * n + 1
    for enc, ref, vals in cands:
        size = len(ref) + int(varint_sizes(zz(vals)).sum())
        if size < best_size:
            best, best_size = (enc, ref, vals), size
    if best is None or (ns is False and best_size >= 8 * n):
        planes = v.astype("<i8").view(np.uint8).reshape(n, 8).T
        return bytes([RAW | flag]) + _framed(np.ascontiguousarray(planes).tobytes())
    enc, ref, vals = best
    return bytes([enc | flag]) + _framed(ref + varints(zz(vals)))


def _framed(data: bytes) -> bytes:
    return varint(len(data)) + data


def _ns_exact(f: np.ndarray):
    """The whole nanoseconds of the float64 values f when n / 1e9 gives back
    every value exactly, else None."""
    if not len(f) or not np.isfinite(f).all() or (np.abs(f) >= NS_LIMIT).any():
        return None
    n = np.rint(f * 1e9).astype(np.int64)
    return n if np.array_equal((n / 1e9).view(np.int64), f.view(np.int64)) else None


def encode_columns(body: np.ndarray, floating: np.ndarray) -> bytes:
    """body: int64 (ncols, count), floating columns as float64 bit patterns;
    floating: bool per column.  The columns after the presence bitmap."""
    out, done = [], []
    for k in range(body.shape[0]):
        v = np.ascontiguousarray(body[k]).astype(np.int64)
        ns = False
        if floating[k]:
            n = _ns_exact(v.view(np.float64))
            if n is not None:
                v, ns = n, True
        out.append(_enc_column(v, done, ns))
        done.append(v)
    return b"".join(out)


def decode_columns(buf: bytes, start: int, ncols: int, count: int, floating: np.ndarray,
                   what: str) -> np.ndarray:
    """Inverse of encode_columns from byte `start` of buf: int64 (ncols, count),
    floating columns as float64 bit patterns."""
    c = Reader(buf, what, CodecError)
    c.at = start
    body = np.empty((ncols, count), np.int64)
    if not count:  # an empty section stores no columns at all
        if start != len(buf):
            c.fail(f"{len(buf) - start} bytes of columns in an empty section")
        return body
    ints = []  # each column's integer values, for SAME and DIFF
    for k in range(ncols):
        enc = c.take(1)[0]
        ns, enc = bool(enc & NS), enc & ~NS
        if ns and not floating[k]:
            c.fail(f"column {k}: nanosecond flag on an integer column")
        if enc in (CONST, SAME):  # a single varint, no length
            nbytes = 0
        else:
            nbytes = c.varint()
        end = c.at + nbytes
        if end > len(buf):
            c.fail(f"column {k} runs past the payload")
        if enc == RAW:
            if nbytes != 8 * count:
                c.fail(f"column {k}: {nbytes} bytes for {count} raw values")
            planes = c.raw[c.at:end].reshape(8, count)
            v = np.ascontiguousarray(planes.T).view("<i8")[:, 0].astype(np.int64)
            c.at = end
        elif enc == CONST:
            v = np.full(count, unzz(np.array([c.varint()], np.uint64))[0], np.int64)
        elif enc == SAME:
            j = c.varint()
            if j >= k:
                c.fail(f"column {k} refers to column {j}")
            v = ints[j].copy()
        elif enc in (PLAIN, DELTA, DIFF):
            j = c.varint() if enc == DIFF else 0
            if enc == DIFF and j >= k:
                c.fail(f"column {k} refers to column {j}")
            v = unzz(c.varints(end - c.at, count))
            if enc == DELTA:
                v = np.cumsum(v, dtype=np.int64)
            elif enc == DIFF:
                v = v + ints[j]
        else:
            c.fail(f"column {k}: unknown encoding {enc}")
        if enc not in (CONST, SAME) and c.at != end:
            c.fail(f"column {k}: {nbytes} bytes announced, {c.at - end + nbytes} used")
        ints.append(v)
        body[k] = (v / 1e9).view(np.int64) if ns else v
    if c.at != len(buf):
        c.fail(f"{len(buf) - c.at} bytes after the last column")
    return body


# ---- NAMES -----------------------------------------------------------------

def fnv1a64_many(paths: list) -> np.ndarray:
    """FNV-1a of each bytes object, vectorized over the list."""
    n = len(paths)
    if not n:
        return np.empty(0, np.uint64)
    lens = np.fromiter(map(len, paths), np.int64, n)
    width = int(lens.max())
    grid = np.zeros((n, max(width, 1)), np.uint8)
    flat = np.frombuffer(b"".join(paths), np.uint8)
    rows = np.repeat(np.arange(n), lens)
    cols = np.arange(len(flat)) - np.repeat(np.cumsum(lens) - lens, lens)
    grid[rows, cols] = flat
    h = np.full(n, _FNV_OFFSET, np.uint64)
    short = int(lens.min())
    with np.errstate(over="ignore"):
        for k in range(width):  # whole columns; rows already ended keep their hash
            step = (h ^ grid[:, k].astype(np.uint64)) * _FNV_PRIME
            h = step if k < short else np.where(lens > k, step, h)
    return h


def encode_names(ids: np.ndarray, paths: list) -> bytes:
    """NAMES format 2: front-coded paths, ids only where they differ from
    FNV-1a(path)."""
    enc = [p.encode("utf-8", "surrogateescape") if isinstance(p, str) else bytes(p)
           for p in paths]
    ids = np.asarray(ids, np.uint64)
    shared = np.zeros(len(enc), np.uint64)
    suffix = []
    prev = b""
    for i, p in enumerate(enc):
        k, m = 0, min(len(p), len(prev))
        while k < m and p[k] == prev[k]:
            k += 1
        shared[i] = k
        suffix.append(p[k:])
        prev = p
    explicit = np.flatnonzero(fnv1a64_many(enc) != ids)
    lens = np.fromiter(map(len, suffix), np.uint64, len(suffix))
    a, b = varints(shared), varints(lens)
    ex = b"".join(varint(int(i)) + int(ids[i]).to_bytes(8, "little") for i in explicit)
    return (_framed(a) + _framed(b) + varint(len(explicit)) + ex + b"".join(suffix))


def decode_names(buf: bytes, count: int, what: str):
    """NAMES format 2 -> (ids uint64 array, list of path bytes)."""
    ids, flat, starts, lens = decode_names_flat(buf, count, what)
    data = flat.tobytes()
    return ids, [data[s:s + n] for s, n in zip(starts.tolist(), lens.tolist())]


def _bounded_sum(u: np.ndarray, limit: int) -> int | None:
    """The exact sum of the uint64 values u, or None when it exceeds limit (no wrap)."""
    if not len(u):
        return 0
    if int(u.max()) > limit:
        return None
    if len(u) * limit < 1 << 63:  # no partial sum can wrap
        total = int(u.sum())
    else:
        total = int(np.sum(u.astype(np.float64)))
        total = int(u.sum()) if total <= limit else total
    return total if total <= limit else None


def decode_names_flat(buf: bytes, count: int, what: str, limit: int | None = None):
    """NAMES format 2 -> (ids uint64, paths uint8 array with a NUL after each path,
    starts int64, lengths int64): path i is flat[starts[i]:starts[i] + lengths[i]].

    Vectorized over entries, column by column: byte j of path i is the suffix byte
    of the last entry r <= i with shared[r] <= j (the entries in between inherit it
    unchanged), so each column is a run-length repeat of its writers' bytes. FNV-1a
    runs along in the same columns. limit bounds the decoded bytes (the front coding
    can expand far beyond its payload)."""
    c = Reader(buf, what, CodecError)
    shared = c.varints(c.varint(), count)
    lens = c.varints(c.varint(), count)
    nexp = c.varint()
    if nexp > count:
        c.fail(f"{nexp} explicit ids for {count} entries")
    explicit = []
    for _ in range(nexp):
        i = c.varint()
        if i >= count:
            c.fail(f"explicit id of entry {i} of {count}")
        explicit.append((i, int.from_bytes(c.take(8), "little")))
    text = c.raw[c.at:]
    total = _bounded_sum(lens, len(text))
    if total != len(text):
        c.fail(f"suffixes of {int(lens.sum()) if total is None else total} bytes, "
               f"{len(text)} present")
    # a path is at most every suffix byte before it: larger shares are errors
    sh = np.minimum(shared, np.uint64(len(text) + 1)).astype(np.int64)
    lens = lens.astype(np.int64)
    full = sh + lens
    prev = np.zeros(count, np.int64)
    prev[1:] = full[:-1]
    bad = np.flatnonzero(sh > prev)
    if len(bad):
        i = int(bad[0])
        c.fail(f"entry {i} shares {int(shared[i])} bytes with a {int(prev[i])}-byte path")
    long = np.flatnonzero(full > MAX_NAME)
    if len(long):
        i = int(long[0])
        c.fail(f"path {i} is {int(full[i])} bytes, more than the {MAX_NAME} a name may hold")
    size = int(full.sum()) + count
    if limit is not None and size > limit:
        c.fail(f"paths of {size} bytes exceed the bound of {limit} for this file")
    starts = np.zeros(count, np.int64)
    np.cumsum(full[:-1] + 1, out=starts[1:])
    sufstart = np.zeros(count, np.int64)
    np.cumsum(lens[:-1], out=sufstart[1:])
    flat = np.zeros(size, np.uint8)
    ids = np.full(count, _FNV_OFFSET, np.uint64)
    _front_columns(sh, full, sufstart, starts, text, flat, ids)
    for i, v in explicit:
        ids[i] = v
    return ids, flat, starts, full


def _front_columns(shared, full, sufstart, starts, text, flat, h):
    """Fill flat and hash h column by column (see decode_names_flat). rows holds the
    entries at least j + 1 bytes long, in entry order: an entry that inherits byte j
    has its predecessor among them, right before it. A column costs a few numpy calls
    whatever its rows: once the rows left are few for the columns left, the rest is
    done row by row (_front_rows), so the cost stays linear in the bytes decoded."""
    rows = None  # every entry
    sh, sf, st = shared, sufstart, starts
    shortest = int(full.min()) if len(full) else 0
    longest = int(full.max()) if len(full) else 0
    at = np.empty(len(full), np.int64)
    with np.errstate(over="ignore"):
        for j in range(longest):
            if j >= shortest:  # drop the entries that end before byte j
                keep = (full if rows is None else full[rows]) > j
                rows = np.flatnonzero(keep) if rows is None else rows[keep]
                sh, sf, st = shared[rows], sufstart[rows], starts[rows]
                shortest = int(full[rows].min())
            if len(sh) * ROW_COST < (longest - j) * COLUMN_COST:
                left = np.arange(len(full)) if rows is None else rows
                _front_rows(left, j, shared, full, sufstart, starts, text, flat, h)
                return
            writers = np.flatnonzero(sh <= j)
            if len(writers) == len(sh):
                vals = text[sf + (j - sh)]
            else:
                w = writers
                vals = np.repeat(text[sf[w] + (j - sh[w])], np.diff(w, append=len(sh)))
            t = at[:len(sh)]
            np.add(st, j, out=t)
            flat[t] = vals
            if rows is None:
                h ^= vals
                h *= _FNV_PRIME
            else:
                h[rows] = (h[rows] ^ vals) * _FNV_PRIME


# Relative costs of the two ways of decoding front-coded names: a column (byte j of
# every entry still that long) is a few numpy calls; a row in Python costs about as
# much as this many columns, plus a Python step per byte of its own suffix.
COLUMN_COST, ROW_COST = 1, 8


def _front_rows(rows, j, shared, full, sufstart, starts, text, flat, h):
    """Bytes j.. of the entries `rows` (in entry order, each longer than j) and their
    hashes, row by row. An entry that inherits bytes past j takes them from the row
    before it, and its hash there from that row's hash after each of its bytes (kept
    in `trail`), so Python steps only over suffix bytes: linear in the payload."""
    mask, prime = (1 << 64) - 1, int(_FNV_PRIME)
    data = text.tobytes()
    tail, trail = b"", []  # the previous row's bytes j.. and its hash after each
    for r in rows.tolist():
        sh, end, at = int(shared[r]), int(full[r]), int(sufstart[r])
        if sh > j:  # inherits bytes j..sh from the row before
            keep = sh - j
            own, state = data[at:at + end - sh], trail[keep - 1]
            tail, trail = tail[:keep], trail[:keep]
        else:
            own, state = data[at + j - sh:at + end - sh], int(h[r])
            tail, trail = b"", []
        for b in own:
            state = ((state ^ b) * prime) & mask
            trail.append(state)
        tail += own
        flat[starts[r] + j:starts[r] + end] = np.frombuffer(tail, np.uint8)
        h[r] = state


def compress(payload: bytes, level: int | None = None, runs: bool = False) -> bytes:
    """As the C writer does (runtime/log_writer.c): level 8 with a 16 KiB
    window up to 8 KiB (JOB, SCHEMA...: the dictionary matches pay most
    there), 6 up to 64 KiB, 1 for the big ones; runs (SERIES, mostly zero
    bins) by run-length matching when small."""
    wbits, memlevel, strategy = -15, 9, zlib.Z_DEFAULT_STRATEGY
    if level is None:
        level = 8 if len(payload) <= TINY else 6 if len(payload) < SMALL else 1
    if len(payload) <= TINY:
        wbits, memlevel = -14, 7
        if runs:
            strategy = zlib.Z_RLE
    z = zlib.compressobj(level, zlib.DEFLATED, wbits, memlevel, strategy, DICTIONARY)
    return z.compress(payload) + z.flush()


TINY = 8 << 10
SMALL = 64 << 10
