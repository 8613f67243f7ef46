"""The live view's walk in bulk (reports/iochar/liveview.py): a live file's records found
from the addresses they hold instead of record by record, their names taken as 8-byte
words, and the numpy helpers the reader shares. Nothing here decides an error: a record
the bulk walk cannot place is left to liveview.LiveFile._step."""

from __future__ import annotations

import numpy as np


def find_nul(buf: np.ndarray, a: int, end: int) -> int:
    """The offset of the first NUL byte in buf[a:end], or -1 (a name's end: looked for in
    steps, a name being short)."""
    step = 4352  # a name at the path limit, its mark and NUL
    while a < end:
        b = min(a + step, end)
        i = buf[a:b].tobytes().find(b"\0")
        if i >= 0:
            return a + i
        a, step = b, step * 4
    return -1


BULK = True  # the arena's records found in bulk (False: record by record, the reference)
BULK_MIN = 1 << 14  # bytes of records below which the walk goes record by record
CHUNK = 1 << 17  # words looked at in one go (1 MiB of file, 128 KiB of bools)
ROUNDS = 64  # words of a name the bulk walk looks at for its end (longer: find_nul)


class Candidates:
    """The records of an arena area found in bulk: every record made after the first of
    its module links to the one made before it (`all_next`, the record header's third
    word: its address in the process, an earlier record of the area), so the 8-byte
    words whose third word is such an address are the records, and the rare word that
    only looks like one (a list link of a record, the `full` of an entry) is not on the
    chain of record lengths (header and counters by module, the name up to its NUL, 8-
    aligned) that starts at the area's start. Only the chain's links are taken: where it
    has none (a module's first record, a truncated name, any record that does not check
    out) liveview.LiveFile._step reads the record and gives its error, so the rows and the errors
    are those of the record-by-record walk (tests/unit/test_live_bulk.py compares)."""

    def __init__(self, lf, buf: np.ndarray, base: int, start: int, end: int,
                 heads: dict):
        """buf: the file from byte base; records from start, their bytes before end."""
        self.off = None
        h = lf.h
        rs, mo, fo = h["rec_size"], h["rec_module_off"], h["rec_flags_off"]
        if not BULK or start % 8 or base % 8 or end - start < BULK_MIN or rs < 24 or \
                mo >= rs or fo >= rs:
            return
        words = buf[:len(buf) // 8 * 8].view("<u8")
        wb = base >> 3
        nw = len(words) + wb  # the words held: [wb, nw)
        k0, k1 = start // 8, (end - rs) // 8 + 1  # a record's header ends at end at most
        if k1 <= k0 or k1 + 2 > nw:
            return
        mask64 = (1 << 64) - 1
        ao = h["arena_off"]
        lo = np.uint64((h["map_addr"] + ao) & mask64)
        span = np.uint64(end - ao)
        offs = []
        hi = (h["map_addr"] + ao) >> 32
        one = hi == (h["map_addr"] + end - 1) >> 32  # the area's addresses share their top half
        top = words.view("<u4")[1::2]  # top[k - wb]: the top half of file word k
        for a in range(k0, k1, CHUNK):  # in steps: no temporaries the size of the file
            b = min(a + CHUNK, k1)
            if one:  # the words whose top half is the area's first, then the exact test
                c = np.flatnonzero(top[a + 2 - wb:b + 2 - wb] == hi)
                d = words[c + a + 2 - wb] - lo
                c = c[d < span]
                d = d[d < span]
            else:
                d = words[a + 2 - wb:b + 2 - wb] - lo
                c = np.flatnonzero(d < span)
                d = d[c]
            t = d.astype(np.int64) + ao  # the file offset linked to
            c = (c + a) * 8
            offs.append(c[(t < c) & (t % 8 == 0)])
        off = np.concatenate(offs)
        u16 = buf[:len(buf) & ~1].view("<u2")
        b2 = base >> 1
        v4 = h["version"] >= 4
        mf = h["meta_full_off"]
        if v4 and mf + 8 <= h["meta_c_off"]:
            # the records entries became: not on the lists, the entries' `full` names them
            ent = off[((u16[((off + fo) >> 1) - b2] & 2) != 0) & (off + mf + 8 <= end)]
            # (and those of the entries walked at earlier reads, made full since)
            old = lf._idx.ent_words
            old = old[(old >= wb) & (old < nw)]
            f = np.concatenate([words[((ent + mf) >> 3) - wb], words[old - wb]]) - lo
            f = f[f < np.uint64(end - rs - ao + 1)].astype(np.int64) + ao
            off = distinct(np.concatenate([off, f[(f % 8 == 0) & (f >= start)]]))
        off = np.concatenate([[start], off[off != start]]).astype(np.int64)
        mid = u16[((off + mo) >> 1) - b2].astype(np.int64)
        flags = u16[((off + fo) >> 1) - b2].astype(np.int64) if v4 else \
            np.zeros(len(off), np.int64)
        known = np.asarray(sorted(heads), np.int64)
        h_rec = np.asarray([heads[m][0] for m in known.tolist()] + [-1], np.int64)
        h_ent = np.asarray([heads[m][1] for m in known.tolist()] + [-1], np.int64)
        at = np.searchsorted(known, mid)
        at[known[np.minimum(at, len(known) - 1)] != mid] = len(known)  # unknown: -1
        entry = (flags & 2) != 0
        hd = np.where(entry, h_ent[at], h_rec[at])
        p = off + hd
        good = (hd >= 0) & ((flags & 1) == 0) & (p < end)  # truncated names: _step
        nul = np.full(len(off), -1, np.int64)
        act = np.flatnonzero(good)
        q = p[act] >> 3  # names start 8-aligned (header, counters, slots: 8 bytes each)
        ones, highs = np.uint64(0x0101010101010101), np.uint64(0x8080808080808080)
        for _ in range(ROUNDS):  # a word at a time: the names' ends are found in a few
            if not len(act):
                break
            inside = q < nw
            act, q = act[inside], q[inside]  # past the words read: find_nul below
            w = words[q - wb]
            has = ((w - ones) & ~w & highs) != 0  # a zero byte in the word
            if has.any():
                zb = w[has].view(np.uint8).reshape(-1, 8) == 0
                nul[act[has]] = q[has] * 8 + zb.argmax(axis=1)
                act, q = act[~has], q[~has]
            q = q + 1
        for i in act:  # longer names
            z = find_nul(buf, int(p[i]) - base, end - base)
            nul[i] = z + base if z >= 0 else -1
        good &= (nul >= 0) & (nul < end)
        # only what checks out is kept: a word that only looked like a record is gone, a
        # record that does not check out is left to _step
        off, mid, entry, p, nul = off[good], mid[good], entry[good], p[good], nul[good]
        self.off, self.mid, self.entry, self.p, self.nul = off, mid, entry, p, nul
        self.nxt = (nul + 8) & ~7
        linked = np.zeros(len(off), bool)
        linked[:-1] = self.nxt[:-1] == off[1:]
        self.breaks = np.flatnonzero(~linked)

    def run_from(self, pos: int):
        """The run of linked records from pos: ((offsets, module ids, entry or not, name
        offsets, name lengths), the offset after them), or None: pos is for _step."""
        if self.off is None:
            return None
        i = int(np.searchsorted(self.off, pos))
        if i >= len(self.off) or self.off[i] != pos:
            return None
        j = int(self.breaks[np.searchsorted(self.breaks, i)])  # the run's last record
        s, after = slice(i, j + 1), int(self.nxt[j])
        return (self.off[s], self.mid[s], self.entry[s], self.p[s], self.nul[s] - self.p[s]), after


def take_names(buf: np.ndarray, base: int, at: np.ndarray, n: np.ndarray, mats: dict) -> tuple:
    """Take the names of length n (< 0: none) at offsets `at` of buf into mats (number of
    8-byte words -> [rows, matrices of names of that many words, a name a row, with what
    followed it in its last word]):
    (each one's number of words, its row). A name starts 8-aligned (after a header and
    8-byte counters): its words are taken as they are, names of one length together."""
    words = buf[:len(buf) // 8 * 8].view("<u8")
    w = (np.maximum(n, 0) + 7) >> 3
    row = np.zeros(len(at), np.int64)
    at = at - base  # base: 8-aligned
    odd = (n > 0) & ((at % 8 != 0) | ((at >> 3) + w > len(words)))
    for k in distinct(w[(n > 0) & ~odd]).tolist():
        sel = np.flatnonzero((w == k) & (n > 0) & ~odd)
        blk = words[(at[sel] >> 3)[:, None] + np.arange(k)]  # with the bytes after the name
        have = mats.setdefault(k, [0])  # [rows, the matrices' parts...]: joined when read
        row[sel] = np.arange(len(sel)) + have[0]
        have[0] += len(sel)
        have.append(blk)
    for i in np.flatnonzero(odd).tolist():
        a, m, k = int(at[i]), int(n[i]), int(w[i])
        one = np.frombuffer(buf[a:a + m].tobytes().ljust(8 * k, b"\0"), "<u8")[None, :]
        have = mats.setdefault(k, [0])
        row[i] = have[0]
        have[0] += 1
        have.append(one)
    return w, row


def same(a, b) -> bool:
    """Whether two _pick results hold the same words."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
            a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a is None and b is None


def first_of(a: np.ndarray) -> tuple:
    """a's distinct values, sorted, and where each one first is in a."""
    o = np.argsort(a, kind="stable")
    b = a[o]
    keep = np.concatenate([[True], b[1:] != b[:-1]]) if len(b) else np.zeros(0, bool)
    return b[keep], o[keep]


def distinct(a: np.ndarray) -> np.ndarray:
    """a's distinct values, sorted (np.unique without its import of numpy.ma: 18 ms)."""
    a = np.sort(a)
    return a[np.concatenate([[True], a[1:] != a[:-1]])] if len(a) else a


def within(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per element of a: whether b holds it (np.isin)."""
    if not len(b):
        return np.zeros(len(a), bool)
    b = np.sort(b)
    return b[np.minimum(np.searchsorted(b, a), len(b) - 1)] == a


def i64_at(raw: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """The little-endian int64 at each byte offset pos of raw (any alignment)."""
    if not (pos % 8).any():
        return raw[:len(raw) // 8 * 8].view("<i8")[pos >> 3]
    return raw[pos[:, None] + np.arange(8)].copy().view("<i8").ravel()
