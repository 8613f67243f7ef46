"""The live view's reader: what the processes running on this node have done so far, read
from their live files while they write them (iochar-top, iochar-exporter).

A live file (docs/log-format.md, "Live files") is a process's record memory, updated with
plain stores after each call.  This reader takes it from a read-only descriptor with
pread (a mapping would raise SIGBUS on a file that shrinks under it), never takes a lock
the process could wait on, and trusts nothing in it: the header and schema are checked by
live.py's checks (logformat.Reader), every record's offsets against the bytes read, and
the bytes read are bounded by the file's real (allocated) size, not by what it declares.

Consistency without a lock: records are read before the access states their pending runs
live in, and the runtime clears a run before it adds it to the counters, so a read can
miss a run in flight (a moment too low), never count one twice; each counter is then kept
at the largest value read so far (a record caught mid-update keeps its last good values),
so no number ever goes down.  Records only ever get appended (the arena's `used` grows),
so a file is walked once and each later sample reads the new records only, then gathers
every counter with numpy.

The walk is done in bulk (livebulk.py): a record made after the first of its module
holds the address of the one made before it (`all_next`), and an entry made full the
address of its record (`full`), so the words that hold an earlier record's address give
the records' starts, checked on the chain of the records' lengths (header and counters
by module, the name to its NUL, found a word at a time) from the area's start; where the
chain has no link (a module's first record, a truncated name, a record that does not
check out) one record is read the careful way (LiveFile._step), whose checks and errors
are the only ones (tests/integration/test_live_bulk.py compares the two walks).

The records are read WINDOW bytes (4 MiB) at a time, each window whole records, into
buffers of the reader's own reused from read to read (anonymous mappings: fresh memory
costs more in page faults than the read); a first read takes the rows' counter words
from the window it walks, later reads (and _settle's second look) read the windows
again; the tables (the states' pending runs) are read right after the records in a file
of one window, else after its last window, a MiB at a time. The bytes held at once are
bounded by the window (or the one record longer than it), not by the file. The rows'
names are kept as 8-byte words and made strings only when a view asks (the busiest
files), and a path's file system is looked up once per record id and file owner
(livemonitor.Monitor).

Which files are read: livescan.py (the directory walk); what the tools make of them:
livemonitor.py (processes into jobs, totals, rates and series).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import stat
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from . import live
from .livebulk import Candidates, distinct, find_nul, i64_at, same, take_names, within
from .logformat import LogError

# the counters the live view sums, integer ones then floating ones
INTS = ("bytes_read", "bytes_written", "reads", "writes", "opens", "stats", "seeks", "syncs")
FLOATS = ("read_time", "write_time", "meta_time")
NI, NF = len(INTS), len(FLOATS)
# the metadata counters by name: a module's (its name's) opens, stats, seeks and syncs
META_SUFFIX = {"_OPENS": "opens", "_CREATES": "opens", "_FDOPENS": "opens", "_STATS": "stats",
               "_SEEKS": "seeks", "_FSYNCS": "syncs", "_FDSYNCS": "syncs", "_SYNCS": "syncs",
               "_FLUSHES": "syncs"}
MAX_RETRIES = 3  # reads of a file whose size or header changed under the read
SLACK = 1 << 16  # bytes a live file may hold past its allocated blocks (partial pages)


def _module_plan(m) -> tuple:
    """For a module of a live file: [(quantity, counter index)] of its records, and of
    its metadata-only entries (slot index instead)."""
    ints, flts = [], []
    L = m.layout
    names = [n for n, _ in m.schema]
    if L is not None:
        for q, key in enumerate(("bytes0", "bytes1", "ops0", "ops1")):
            if L[key] >= 0:
                ints.append((q, L[key]))
        for d in (0, 1):
            ints += [(2 + d, i) for i in m.more[d]]
        for q, key in enumerate(("ft0", "ft1", "ft2")):
            if L[key] >= 0:
                flts.append((q, m.n_int + L[key]))
    for i, n in enumerate(names[:m.n_int]):
        for suf, q in META_SUFFIX.items():
            if n.endswith(suf) and not n.endswith("_REQ" + suf):
                ints.append((INTS.index(q), i))
                break
    if L is None:  # no access layout: its time counters by name
        for i, n in enumerate(names[m.n_int:]):
            for q, suf in enumerate(("_F_READ_TIME", "_F_WRITE_TIME", "_F_META_TIME")):
                if n.endswith(suf):
                    flts.append((q, m.n_int + i))
    slot = {c: k for k, c in enumerate(m.meta)}
    e_ints = [(q, slot[i]) for q, i in ints if i in slot]
    e_flts = [(q, slot[i]) for q, i in flts if i in slot]
    return ints, flts, e_ints, e_flts, L is not None


class _Column(Sequence):
    """A sample's per-row names (module or path), made only for the rows asked for: a
    view shows a job's busiest files, not every one of its 20,000 names."""

    def __init__(self, get, n: int):
        self._get, self._n = get, n

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._get(j) for j in range(*i.indices(self._n))]
        j = int(i)
        if j < 0:
            j += self._n
        if not 0 <= j < self._n:
            raise IndexError(i)
        return self._get(j)


@dataclass
class Sample:
    """One read of one live file: its header and, per record, the summed counters."""
    key: tuple  # (device, inode, pid, start): the same process's file
    header: dict
    modules: Sequence  # module name of each row
    paths: Sequence  # path of each row (decoded when asked)
    ints: np.ndarray  # rows x INTS, int64
    floats: np.ndarray  # rows x FLOATS
    when: float
    unlinked: bool = False
    ids: np.ndarray | None = None  # per row: record id (the hash of its path)
    mids: np.ndarray | None = None  # per row: module id (module name: names[mid])
    names: dict = field(default_factory=dict)  # module id -> module name
    aggs: np.ndarray | None = None  # per row: an aggregate record
    owner: int = -1  # the file's owner


# A schema is the same in every file of one build: parsed once (its bytes are the key).
_SCHEMAS: dict = {}
MAX_SCHEMAS = 64
# Read buffers are reused from read to read (Scratch: a fresh one of 34 MiB costs its
# 8,700 page faults, more than the read), each at most SCRATCH_MAX.
SCRATCH_MAX = 64 << 20
TABLE_STEP = 1 << 20  # bytes of the tables read at a time
WINDOW = 4 << 20  # bytes of records read at a time (a window of whole records)
_scratch = threading.local()  # a LiveFile's own reader's: its thread's Scratch


def keep_freed_memory():
    """Let this process's malloc keep what it frees, for the next read (a reader's
    process: iochar-top, iochar-exporter). glibc hands arrays over 128 KiB out as fresh
    mappings and gives them back at free (its threshold adapts only slowly), so every read
    of a large file paid its arrays' page faults again: ~7,000 faults and 10 ms of a 45 ms
    first read of a 20,000-file live file (bench/live_scrape.py). Held at most the largest
    read's arrays; a no-op where the C library has no mallopt."""
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: arrays up to 32 MiB from the heap
    mallopt(-1, 64 << 20)  # M_TRIM_THRESHOLD: up to 64 MiB free kept, not given back


class Scratch:
    """The read buffers of one reader (a Reader: a monitor's every file, whatever thread
    collects; else a thread's), reused from read to read: the faults of their pages are
    paid once. One read at a time uses them."""

    def __init__(self):
        self._bufs: dict = {}

    def get(self, n: int, which: str) -> np.ndarray:
        b = self._bufs.get(which)
        if b is not None and len(b) >= n:
            return b[:n]
        # an anonymous mapping of its own, not numpy's memory: numpy asks for huge pages
        # for large arrays (madvise), and on the 2-core test VM their first touch took
        # 50-100 ms at times (no fallback to small pages counted: not compaction)
        b = np.frombuffer(mmap.mmap(-1, 1 << max(n - 1, 1 << 20).bit_length()), np.uint8)
        if len(b) <= SCRATCH_MAX:
            self._bufs[which] = b
        return b[:n]


def _thread_scratch() -> Scratch:
    s = getattr(_scratch, "s", None)
    if s is None:
        s = _scratch.s = Scratch()
    return s


class LiveFile:
    """One live file, open read-only: read() gives its current numbers, each never lower
    than an earlier read's."""

    def __init__(self, fd: int, name: str, uid: int | None = None,
                 scratch: Scratch | None = None):
        self.fd, self.name, self.uid = fd, name, uid
        self.scratch = scratch or _thread_scratch()
        self.h = None
        self._held = None  # a small file's bytes, read whole, during one read
        self._tabs = None  # and its tables, read right after them
        self.mods = None
        self.plans = {}
        e = np.zeros(0, np.int64)
        # per row (a record or a metadata-only entry, in file order): offset, module id,
        # entry or not, its name's length (-1: the aggregate), words and row in nmats
        self.r_off, self.r_mod, self.n_len, self.n_w, self.n_row = e, e, e, e, e
        self.r_entry = np.zeros(0, bool)
        self.nmats = {}  # the rows' names: words -> [rows, matrix parts] (take_names)
        self.walked = {}  # area start -> offset walked to
        self.ids = np.zeros(0, np.uint64)  # per row: record id
        self.made = np.zeros(0, np.int64)  # rows of entries whose record is there too
        self.full = np.zeros(0, np.int64)  # rows of entries whose `full` was seen set
        self.best_i = np.zeros((0, NI), np.int64)
        self.best_f = np.zeros((0, NF), np.float64)
        self.modnames = {}  # module id -> name
        self._idx = _Index()
        st = os.fstat(fd)
        self.ident = (st.st_dev, st.st_ino)

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _pread(self, n: int, off: int) -> bytes:
        out, got = [], 0
        while got < n:
            b = os.pread(self.fd, n - got, off + got)
            if not b:
                break
            out.append(b)
            got += len(b)
        return out[0] if len(out) == 1 else b"".join(out)

    def _pread_into(self, buf: np.ndarray, off: int) -> int:
        """Fill buf from file offset off: the bytes read (fewer at the end of the file)."""
        got, n = 0, len(buf)
        while got < n:
            k = os.preadv(self.fd, [buf[got:]], off + got)
            if k <= 0:
                break
            got += k
        return got

    def _fail(self, msg):
        raise LogError(f"{self.name}: live file: {msg}")

    def _read_once(self):
        """The header, checked, and the bytes before the records (header, schema, the
        aggregate records and their states): (header, those bytes, fstat)."""
        st = os.fstat(self.fd)
        if not stat.S_ISREG(st.st_mode):
            self._fail("not a regular file")
        if self.uid is not None and st.st_uid != self.uid:
            self._fail(f"owned by uid {st.st_uid}, not {self.uid}")
        h = live.read_header(self._pread(live.HEADER_SIZE, 0), self.name)
        live.check_layout(h, st.st_size, self.name)
        if h["version"] < 3:
            self._fail(f"version {h['version']} (the live view reads 3 and later)")
        fixed = ("schema_off", "schema_len", "agg_off", "agg_size", "arena_off", "arena_size",
                 "map_addr", "rec_size")
        if self.h is not None and any(h[k] != self.h[k] for k in fixed):
            self._fail("its layout changed between two reads")
        if self.h is not None and h["arena_used"] < self.h["arena_used"]:
            self._fail("its records went back")
        if h["agg_off"] % 8 or h["arena_off"] % 8 or h["rec_state_off"] % 8 or \
                h["rec_size"] % 8 or h["meta_full_off"] % 8 or h["meta_c_off"] % 8:
            self._fail("areas not 8-byte aligned")
        used = h["arena_off"] + h["arena_used"]
        tables = h["arena_size"] - h["tables_low"]
        # what the file really holds bounds what is read, whatever the header says
        real = st.st_blocks * 512 + SLACK
        if used + tables > real:
            self._fail(f"declares {used + tables} bytes in use but holds {st.st_blocks * 512}")
        # a file of one window is read whole (one pread); a larger one its head only
        n = used if used <= WINDOW else h["arena_off"]
        whole = self.scratch.get(n, "whole" if used <= WINDOW else "head")
        if self._pread_into(whole, 0) != n:
            raise _Changed("shrank while read")
        head = whole[:h["arena_off"]]
        self._held = whole if used <= WINDOW else None
        self._tabs = self._read_tables(h, tables) if used <= WINDOW else None
        if os.fstat(self.fd).st_size != st.st_size:
            raise _Changed("size changed while read")
        # the records are read after, WINDOW bytes at a time (_walk_arena, _pick), then
        # the tables (the records' access states) a piece at a time, for their pending runs
        h["tables"] = tables
        return h, head, st

    def read(self) -> Sample:
        for attempt in range(MAX_RETRIES):
            try:
                h, head, st = self._read_once()
                break
            except _Changed as e:
                if attempt == MAX_RETRIES - 1:
                    self._fail(str(e))
        used = h["arena_off"] + h["arena_used"]
        if self.mods is None:
            sb = head[h["schema_off"]:h["schema_off"] + h["schema_len"]].tobytes()
            key = (sb, h["version"], used // 8 + 1024)
            got = _SCHEMAS.get(key)
            if got is None:
                mods = live.parse_schema(sb, self.name, key[2], h["version"])
                got = (mods, {mid: _module_plan(m) for mid, m in mods.items()})
                if len(_SCHEMAS) >= MAX_SCHEMAS:
                    _SCHEMAS.clear()
                _SCHEMAS[key] = got
            self.mods, self.plans = got
            self.modnames = {mid: m.name for mid, m in self.mods.items()}
        self.h = h
        n_old = len(self.r_off)
        got = {} if n_old == 0 else None  # a first read: the words taken during the walk
        self._walk(head, 0, h["agg_off"], h["agg_off"] + h["agg_size"], True)
        if got is not None:
            self._take(got, 0, len(self.r_off), head, 0, self._idx.add(self, 0))
        self._walk_arena(h["arena_off"], used, got)
        if got is None:
            self._idx.add(self, n_old)
            picked = self._pick(head, h)
        else:
            picked = self._picked(got, head, h)
        vi, vf = self._sum(picked)
        vi, vf = self._settle(h, head, vi, vf, picked)
        if os.fstat(self.fd).st_size != st.st_size:  # records and tables read after the header
            self._fail("size changed while read")
        n = len(self.r_off)
        bi = np.zeros((n, NI), np.int64)
        bf = np.zeros((n, NF), np.float64)
        bi[:len(self.best_i)], bf[:len(self.best_f)] = self.best_i, self.best_f
        np.maximum(bi, vi, out=bi)
        np.fmax(bf, np.nan_to_num(vf, nan=0.0, posinf=0.0, neginf=0.0), out=bf)
        bi[self.made], bf[self.made] = 0, 0.0
        bi[self.full], bf[self.full] = 0, 0.0  # once full, counted in its record for good
        self.best_i, self.best_f = bi, bf
        h.pop("tables", None)
        self._held = self._tabs = None  # not kept: memory is the rows' numbers, not bytes
        mods, names = self.r_mod, self.modnames
        return Sample((st.st_dev, st.st_ino, h["pid"], h["start_wall"]), h,
                      _Column(lambda r: names[int(mods[r])], n), _Column(self.path, n),
                      bi, bf, time.time(), unlinked=st.st_nlink == 0, ids=self.ids[:n],
                      mids=self.r_mod[:n], names=names, aggs=self.n_len[:n] < 0,
                      owner=st.st_uid)

    def path(self, r: int) -> str:
        """Row r's path (a truncated name without its mark)."""
        k = int(self.n_len[r])
        if k < 0:
            return "<AGGREGATE>"
        have = self.nmats[int(self.n_w[r])]
        if len(have) > 2:
            have[1:] = [np.concatenate(have[1:])]
        b = have[1][int(self.n_row[r])].tobytes()
        return b[:k].decode("utf-8", "surrogateescape")

    def _window(self, off: int, n: int, again: bool = False) -> np.ndarray:
        """File bytes [off, off + n), in the reused window buffer (or those read whole by
        _read_once, but to read them `again`)."""
        if self._held is not None and not again and off + n <= len(self._held):
            return self._held[off:off + n]
        buf = self.scratch.get(n, "window")
        if self._pread_into(buf, off) != n:
            self._fail("shrank while read")
        return buf

    def _settle(self, h: dict, head: np.ndarray, vi, vf, picked):
        """Read again the records whose numbers changed since the last read (then their
        states): one whose numbers differ between two reads was caught mid-update, and is
        read again (up to MAX_RETRIES times). One that never reads the same twice (busy
        enough to change between two reads) takes, counter by counter, the lower of its
        last two reads: never more than it had done, each counter at least its value at
        the earlier read."""
        old = len(self.best_i)
        changed = np.flatnonzero((vi[:old] != self.best_i).any(axis=1) |
                                 (vf[:old] > self.best_f).any(axis=1))
        if old < len(vi):
            changed = np.concatenate([changed, np.arange(old, len(vi))])
        for _ in range(MAX_RETRIES):
            if not len(changed):
                break
            # the records from the first changed one read again, then the states
            picked2 = self._pick(head, h, int(changed[0]), picked)
            if same(picked, picked2):
                break  # every word as before: nothing was caught mid-update
            vi2, vf2 = self._sum(picked2)
            picked = picked2
            a, b, c, d = vi[changed], vi2[changed], vf[changed], vf2[changed]
            moving = (a != b).any(axis=1) | ((c != d) & (d == d)).any(axis=1)
            vi2[changed] = np.where(moving[:, None], np.minimum(a, b), b)
            vf2[changed] = np.where(moving[:, None], np.fmin(c, d), d)
            vi, vf = vi2, vf2
            changed = changed[moving]
        return vi, vf

    def _heads(self) -> dict:
        """Per module: bytes before the name in a record, in an entry; after an aggregate."""
        h = self.h
        rs = h["rec_size"]
        return {mid: (rs + 8 * (m.n_int + m.n_flt), h["meta_c_off"] + 8 * len(m.meta),
                      h["tk_below"] + ((m.state_size + 7) & ~7) if m.layout is not None else 0)
                for mid, m in self.mods.items()}

    def _walk_arena(self, start: int, end: int, got: dict | None):
        """The arena's records not walked yet, WINDOW bytes of the file at a time (a window
        ends before the first record it does not hold whole; one record longer than a
        window gets a larger window). got: also index the new rows and take their words
        (_take) from their window (a first read: no row needs the file read again)."""
        off = self.walked.get(start, start)
        first = len(self.r_off)
        while off < end:
            size = min(WINDOW, end - off)
            while True:
                i = len(self.r_off)
                buf = self._window(off, size)
                nxt = self._walk(buf, off, start, end, False, off + size)
                if nxt > off or off + size >= end:
                    break
                size = min(size * 4, end - off)
            if got is not None and len(self.r_off) > i:
                self._take(got, i, len(self.r_off), buf, off, self._idx.add(self, i))
            off = nxt
        if len(self.r_off) > first:
            self._entries_made()

    def _walk(self, buf: np.ndarray, base: int, start: int, end: int, agg: bool,
              lim: int | None = None) -> int:
        """Append the rows of [start, end) not walked yet whose bytes buf holds (buf: the
        file from byte `base` to `lim`): the arena's found in bulk (Candidates), checked
        record by record where the bulk walk has no answer (_step: the first record of
        each module, a truncated name, and every bad record, whose error is _step's).
        The offset walked to."""
        lim = end if lim is None else lim
        off = self.walked.get(start, start)
        if off >= end:
            return off
        h = self.h
        rs, mo, fo = h["rec_size"], h["rec_module_off"], h["rec_flags_off"]
        if mo % 2 or fo % 2:
            _bad(self.name, "record header offsets not 2-byte aligned")
        heads = self._heads()
        ctx = (buf, buf[:len(buf) & ~1].view("<u2"), base, lim, end, rs, mo >> 1, fo >> 1,
               h["version"] >= 4, heads, agg)
        rows = []  # (offsets, module ids, entry or not, name offsets, name lengths)
        cand = None if agg else Candidates(self, buf, base, off, lim, heads)
        while off < min(end, lim):
            got = cand.run_from(off) if cand is not None else None
            if got is not None:
                rows.append(got[0])
                off = got[1]
                continue
            try:
                r, off = self._step(ctx, off)
            except _More:
                break  # the next window
            rows.append(tuple(np.asarray([x]) for x in r))
        self.walked[start] = off
        if not rows:
            return off
        o, m, e, na, nl = (np.concatenate([r[i] for r in rows]).astype(np.int64) for i in range(5))
        nw, nrow = take_names(buf, base, na, nl, self.nmats)
        self.r_off = np.concatenate([self.r_off, o])
        self.r_mod = np.concatenate([self.r_mod, m])
        self.r_entry = np.concatenate([self.r_entry, e.astype(bool)])
        self.n_w = np.concatenate([self.n_w, nw])
        self.n_row = np.concatenate([self.n_row, nrow])
        self.n_len = np.concatenate([self.n_len, nl])
        ids = buf[:len(buf) // 8 * 8].view("<u8")[(o - base) >> 3]
        self.ids = np.concatenate([self.ids, ids])
        return off

    def _step(self, ctx, off: int):
        """The record at off, checked byte by byte: ((offset, module id, entry or not,
        name offset, name length), the next record's offset). _More: its bytes go past
        the window (lim) before the published end."""
        buf, u16, base, lim, end, rs, mo2, fo2, v4, heads, agg = ctx
        name = self.name
        if off + rs > end:
            _bad(name, f"record at byte {off} runs past the published end")
        if off + rs > lim:
            raise _More
        o = (off - base) >> 1
        mid = int(u16[o + mo2])
        flags = int(u16[o + fo2]) if v4 else 0
        hd = heads.get(mid)
        if hd is None:
            _bad(name, f"record at byte {off} has unknown module {mid}")
        entry = bool(flags & 2) and not agg
        p_off = off + (hd[1] if entry else hd[0])
        if p_off >= end:
            _bad(name, f"record at byte {off} runs past the published end")
        nul = find_nul(buf, p_off - base, min(end, lim) - base) if p_off < lim else -1
        if nul < 0:
            if lim < end:
                raise _More
            _bad(name, f"record at byte {off}: name runs past the published end")
        nul += base
        mark = 0
        if flags & 1:
            if nul + len(live.TRUNC_MARK) > lim and lim < end:
                raise _More
            if buf[nul - base:nul - base + len(live.TRUNC_MARK)].tobytes() != live.TRUNC_MARK:
                _bad(name, f"record at byte {off}: truncated name without its mark")
            mark = len(live.TRUNC_MARK)
        if agg:
            return (off, mid, False, p_off, -1), off + ((p_off - off + 17 + 7) & ~7) + hd[2]
        return (off, mid, entry, p_off, nul - p_off), off + ((nul - off + mark + 1 + 7) & ~7)

    def _entries_made(self):
        """Entries whose record is in the file too (made just before a kill, or since the
        last read): the record counts them (docs/log-format.md, version 4)."""
        ent = self.r_entry
        if not ent.any():
            return
        made = [np.zeros(0, np.int64)]
        mods = self.r_mod
        for mid in distinct(mods[ent]):
            m = mods == mid
            e = np.flatnonzero(m & ent)
            made.append(e[within(self.ids[e], self.ids[m & ~ent])])
        self.made = np.concatenate(made)

    def _pick(self, head: np.ndarray, h: dict, again: int | None = None, before=None) -> list:
        """Every word the rows' numbers are made of: per group of rows, its counters;
        the entries' `full`; the states' pointers and pending runs. The aggregates' from
        head, the arena's read WINDOW bytes at a time (each window whole records), then
        the states. `again`: the records from row `again` on are read again, the words of
        those before are `before`'s."""
        ix = self._idx
        n = len(self.r_off)
        n_agg = int(np.searchsorted(self.r_off, h["arena_off"]))
        used = h["arena_off"] + h["arena_used"]
        cut = 0 if again is None else again  # rows before it: as in `before`
        whole = None
        if again is not None and used <= WINDOW:  # a file of one window: read whole again
            whole = self.scratch.get(used, "again")
            if self._pread_into(whole, 0) != used:
                self._fail("shrank while read")
            head = whole[:h["arena_off"]]
            self._tabs = self._read_tables(h, h["tables"])
        elif again is not None and cut < n_agg:  # the aggregates read again too
            head = self.scratch.get(h["arena_off"], "head2")
            if self._pread_into(head, 0) != len(head):
                self._fail("shrank while read")
        got: dict = {}
        if cut:
            for g, (key, (rows, _, _, pi, pf)) in enumerate(ix.groups.items()):
                lo = int(np.searchsorted(rows, cut))
                for k, p in enumerate((pi, pf)):
                    if len(p[0]):
                        got[key, k] = [before[2 * g + k][:lo].ravel()]
            if before[-2] is not None:
                got["ent"] = [before[-2][:int(np.searchsorted(ix.ent_rows, cut))]]
            if before[-1] is not None:
                got["st"] = [before[-1][0][:int(np.searchsorted(ix.st_rows, cut))]]
        src = whole if again is not None else self._held
        if src is not None:  # a file of one window, read whole: every row at once
            self._take(got, cut, n, src, 0)
            return self._picked(got, head, h)
        if cut < n_agg:
            self._take(got, 0, n_agg, head, 0)
        i = max(cut, n_agg)
        while i < n:  # windows of whole records: rows i to j
            a = int(self.r_off[i])
            j = max(int(np.searchsorted(self.r_off, a + WINDOW, side="right")) - 1, i + 1)
            b = int(self.r_off[j]) if j < n else used
            self._take(got, i, j, self._window(a, b - a, again is not None), a)
            i = j
        return self._picked(got, head, h)

    def _take(self, got: dict, i: int, j: int, buf: np.ndarray, base: int,
              new: dict | None = None):
        """Into got, the words of rows i to j, whose bytes buf holds (the file from byte
        base on); `new`: those rows' parts (_Index.add), else found in the groups."""
        ix = self._idx
        words = buf[:len(buf) // 8 * 8].view("<i8")
        wb = base >> 3
        if new is None:
            new = {}
            for key, (rows, wi, wf, pi, pf) in ix.groups.items():
                lo, hi = np.searchsorted(rows, (i, j))
                ni, nf = len(pi[0]), len(pf[0])
                if hi > lo:
                    new[key] = (None, wi[lo * ni:hi * ni], wf[lo * nf:hi * nf])
            for k in ("st", "ent"):
                r, w = ix.st_rows if k == "st" else ix.ent_rows, \
                    ix.st_words if k == "st" else ix.ent_words
                lo, hi = np.searchsorted(r, (i, j))
                new[k] = (None, w[lo:hi])
        for key, part in new.items():
            if key in ("st", "ent"):
                w = words.take(part[1] - wb)
                got.setdefault(key, []).append(w.view("<u8") if key == "st" else w)
                continue
            for k in (0, 1):
                if len(part[1 + k]):
                    got.setdefault((key, k), []).append(words.take(part[1 + k] - wb))

    def _picked(self, got: dict, head: np.ndarray, h: dict) -> list:
        """The words taken (_take) as _sum wants them, and the states' pending runs (read
        now: after the records)."""
        ix = self._idx
        out = []
        for key, (rows, _, _, pi, pf) in ix.groups.items():
            for k, p in enumerate((pi, pf)):
                c = len(p[0])
                out.append(_joined(got[key, k]).reshape(len(rows), c) if c else None)
        out.append(_joined(got["ent"]) if len(ix.ent_rows) else None)  # taken with them
        ptrs = _joined(got.get("st", [np.zeros(0, np.uint64)])).view("<u8")
        out.append((ptrs, self._runs(ptrs, ix.st_rows, head, h)) if len(ix.st_rows) else None)
        return out

    def _sum(self, picked: list):
        n = len(self.r_off)
        ix = self._idx
        vi = np.zeros((n, NI), np.int64)
        vf = np.zeros((n, NF), np.float64)
        for k, (rows, _, _, pi, pf) in enumerate(ix.groups.values()):
            for m, (_, _, uq, sq), out in ((picked[2 * k], pi, vi), (picked[2 * k + 1], pf, vf)):
                if m is not None:
                    out[rows] = _quantities(m if out is vi else m.view("<f8"), uq, sq, out.shape[1])
        vi[self.made], vf[self.made] = 0, 0.0  # counted in their records
        if picked[-2] is not None:  # an entry whose `full` is set is counted in its record
            full = ix.ent_rows[picked[-2] != 0]
            vi[full] = 0
            vf[full] = 0.0
            if len(full) != len(self.full):
                full = distinct(np.concatenate([self.full, full]))
            self.full = full
        for r, k, n_, d, timed in (picked[-1] or (None, ()))[1]:
            vi[r, d] += k * n_  # bytes_read, bytes_written (one state per record: rows unique)
            un = timed == 0
            vi[r[un], 2 + d[un]] += k[un]  # reads, writes
        return vi, vf

    def _runs(self, ptrs, rows, head: np.ndarray, h: dict) -> list:
        """The repeats each record's access state holds back (runtime/access.h), to be
        added: bytes always, operations when untimed. [(rows, size, count, direction,
        timed)]"""
        ro = h["rw_off"]
        size = max(ro["run_k"], ro["run_len"], ro["run_next"], ro["run_dir"],
                   ro["run_timed"], ro["run_t"]) + 8
        # an address in the process minus the mapping's: the offset in the file (wrapping:
        # an address below the mapping lands far out of range, and is left out)
        fo = (ptrs - np.uint64(h["map_addr"])).view(np.int64)
        ok = (ptrs != 0) & (fo >= 0) & (fo < 1 << 48)
        t0 = h["arena_off"] + h["tables_low"]
        in_t = ok & (fo >= t0) & (fo + size <= t0 + h["tables"])
        in_a = ok & ~in_t & (fo >= h["agg_off"]) & (fo + size <= h["agg_off"] + h["agg_size"])
        out = []
        for mask, raw in ((in_t, None), (in_a, head)):  # the aggregates' follow them
            if not mask.any():
                continue
            if raw is None:
                k, n, d, timed = self._table_runs(fo[mask], ro, size, t0 + h["tables"])
            else:
                at = fo[mask]
                k, n = i64_at(raw, at + ro["run_k"]), i64_at(raw, at + ro["run_len"])
                d = raw[at + ro["run_dir"]].astype(np.int64)
                timed = raw[at + ro["run_timed"]]
            good = (k > 0) & (n > 0) & (d <= 1) & (k < 1 << 31) & (n < 1 << 31)
            if good.any():
                out.append((rows[mask][good], k[good], n[good], d[good], timed[good]))
        return out


    def _read_tables(self, h: dict, n: int) -> np.ndarray | None:
        """A small file's tables, read right after its records (the runs a read of the
        records misses, moved into their counters meanwhile, are the fewer); None: too big
        for one buffer (then read after the records' last window, a piece at a time)."""
        if n > WINDOW:
            return None
        buf = self.scratch.get(n, "tabs")
        if self._pread_into(buf, h["arena_off"] + h["tables_low"]) != n:
            self._fail("shrank while read")
        return buf

    def _table_runs(self, pos: np.ndarray, ro: dict, size: int, lim: int) -> tuple:
        """The pending runs of the access states at file offsets pos (each of `size`
        bytes, below lim): from the tables read with the records (_read_tables), else read
        now in pieces of TABLE_STEP bytes into a buffer of their own: (size, count,
        direction, timed) of each."""
        if self._tabs is not None:
            raw, at = self._tabs, pos - (lim - len(self._tabs))
            return (i64_at(raw, at + ro["run_k"]), i64_at(raw, at + ro["run_len"]),
                    raw[at + ro["run_dir"]].astype(np.int64), raw[at + ro["run_timed"]])
        order = np.argsort(pos, kind="stable")
        ps = pos[order]
        k, n, d = (np.empty(len(ps), np.int64) for _ in range(3))
        timed = np.empty(len(ps), np.uint8)
        i = 0
        while i < len(ps):
            a = int(ps[i])
            b = min(a + max(TABLE_STEP, size), lim)
            raw = self.scratch.get(b - a, "tables")
            if self._pread_into(raw, a) != b - a:
                self._fail("shrank while read")
            j = max(int(np.searchsorted(ps, b - size, side="right")), i + 1)
            at = ps[i:j] - a
            k[i:j], n[i:j] = i64_at(raw, at + ro["run_k"]), i64_at(raw, at + ro["run_len"])
            d[i:j], timed[i:j] = raw[at + ro["run_dir"]], raw[at + ro["run_timed"]]
            i = j
        out = tuple(np.empty_like(x) for x in (k, n, d, timed))
        for o, x in zip(out, (k, n, d, timed)):
            o[order] = x
        return out


class _Index:
    """Where the summed counters of the rows are: rows in groups by module and kind
    (record or entry), each with its rows' first counter words and its plans (_plan);
    the entries' `full` words; the records' state pointers. Rows are added as the walk
    finds them (a window at a time: the parts are put together when asked for)."""

    def __init__(self):
        self._parts: dict = {}  # (module id, entry or not) -> [(rows, int words, float words)]
        self._plans: dict = {}  # (module id, entry or not) -> (ints plan, floats plan)
        self._st: list = []  # [(rows, state pointer words)], rows in file order
        self._ent: list = []  # [(rows, `full` words)]

    @property
    def groups(self) -> dict:
        """(module id, entry or not) -> (rows, their int words, float words, plans)."""
        out = {}
        for key, parts in self._parts.items():
            if len(parts) > 1:
                parts[:] = [tuple(np.concatenate(x) for x in zip(*parts))]
            out[key] = (*parts[0], *self._plans[key])
        return out

    def _joined(self, name: str) -> tuple:
        parts = getattr(self, name)
        if not parts:
            e = np.zeros(0, np.int64)
            return e, e
        if len(parts) > 1:
            parts[:] = [tuple(np.concatenate(x) for x in zip(*parts))]
        return parts[0]

    st_rows = property(lambda self: self._joined("_st")[0])
    st_words = property(lambda self: self._joined("_st")[1])
    ent_rows = property(lambda self: self._joined("_ent")[0])
    ent_words = property(lambda self: self._joined("_ent")[1])

    def add(self, lf: LiveFile, first: int) -> dict:
        """Rows first.. of lf: {group: (rows, int words, float words)} of them, and
        "st", "ent": (rows, words) of their state pointers and `full`."""
        n = len(lf.r_off)
        new: dict = {}
        if first >= n:
            return new
        h = lf.h
        off, mod, ent = lf.r_off[first:], lf.r_mod[first:], lf.r_entry[first:]
        rows = np.arange(first, n, dtype=np.int64)
        st_rows, st_words = [], []
        for mid in distinct(mod).tolist():
            ints, flts, e_ints, e_flts, has_state = lf.plans[mid]
            for is_entry, pi, pf in ((False, ints, flts), (True, e_ints, e_flts)):
                sel = np.flatnonzero((mod == mid) & (ent == is_entry))
                if not len(sel):
                    continue
                o = off[sel]
                base = (o + (h["meta_c_off"] if is_entry else h["rec_size"])) // 8
                key = (mid, is_entry)
                if key not in self._plans:
                    self._plans[key] = (_plan(pi), _plan(pf))
                pi, pf = self._plans[key]
                # the words each row's numbers are summed from, row after row
                new[key] = (rows[sel], (base[:, None] + pi[0]).ravel(),
                            (base[:, None] + pf[0]).ravel())
                self._parts.setdefault(key, []).append(new[key])
                if has_state and not is_entry:
                    st_rows.append(rows[sel])
                    st_words.append((o + h["rec_state_off"]) // 8)
        if st_rows:
            order = np.argsort(np.concatenate(st_rows), kind="stable")  # in row (file) order
            new["st"] = (np.concatenate(st_rows)[order], np.concatenate(st_words)[order])
            self._st.append(new["st"])
        if ent.any():
            new["ent"] = (rows[ent], (off[ent] + h["meta_full_off"]) // 8)
            self._ent.append(new["ent"])
        return new


def _plan(plan: list) -> tuple:
    """A plan [(quantity, counter)] in quantity order: (counters, quantities, the distinct
    quantities, where each one's counters start)."""
    plan = sorted(plan, key=lambda x: x[0])
    q = np.asarray([x for x, _ in plan], np.int64)
    i = np.asarray([y for _, y in plan], np.int64)
    uq = distinct(q)
    return i, q, uq, np.searchsorted(q, uq)


def _joined(parts: list) -> np.ndarray:
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _quantities(m: np.ndarray, uq: np.ndarray, sq: np.ndarray, width: int) -> np.ndarray:
    """Per row of m (a group's counter words, in plan order): its quantities, a row of
    `width` (quantity uq[j] the sum of m's columns sq[j] to sq[j + 1]). Column by column,
    then one row assignment: a third of np.add.reduceat's and a 2-D scatter's time."""
    if len(uq) == width == m.shape[1]:
        return m  # a counter per quantity, every quantity
    out = np.zeros((len(m), width), m.dtype)
    ends = sq[1:].tolist() + [m.shape[1]]
    for q, a, b in zip(uq.tolist(), sq.tolist(), ends):
        out[:, q] = m[:, a] if b - a == 1 else m[:, a:b].sum(axis=1)
    return out


class _More(Exception):
    """A record's bytes go past the window read: the next window starts with it."""


class _Changed(Exception):
    """The file changed under one read: read it again."""


def _bad(name, msg):
    raise LogError(f"{name}: live file: {msg}")
