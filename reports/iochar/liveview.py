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

The directory walk opens each level relative to the one above (openat), with O_NOFOLLOW,
and checks owner and mode on the opened descriptor: a symlink, a FIFO, a file or
directory of the wrong owner, or one open to others is skipped with one line naming it.
"""

from __future__ import annotations

import os
import re
import stat
import struct
import time
from dataclasses import dataclass, field

import numpy as np

from . import live, livedir
from .logformat import LogError

# the counters the live view sums, integer ones then floating ones
INTS = ("bytes_read", "bytes_written", "reads", "writes", "opens", "stats", "seeks", "syncs")
FLOATS = ("read_time", "write_time", "meta_time")
NI, NF = len(INTS), len(FLOATS)
META_OPS = ("opens", "stats", "seeks", "syncs")
# the metadata counters by name: a module's (its name's) opens, stats, seeks and syncs
META_SUFFIX = {"_OPENS": "opens", "_CREATES": "opens", "_FDOPENS": "opens", "_STATS": "stats",
               "_SEEKS": "seeks", "_FSYNCS": "syncs", "_FDSYNCS": "syncs", "_SYNCS": "syncs",
               "_FLUSHES": "syncs"}
# The modules whose calls reach the operating system: a job's totals are theirs (MPI-IO,
# HDF5 and NetCDF calls end in POSIX calls, counted there too).
BASE_MODULES = ("POSIX", "STDIO")
MAX_FILES = 4096  # live files read per scan: beyond, one line says how many were left
MAX_RETRIES = 3  # reads of a file whose size or header changed under the read
SLACK = 1 << 16  # bytes a live file may hold past its allocated blocks (partial pages)
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
_OPEN_DIR = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


def program_of(exe: str, cmdline: str) -> str:
    """The program a process runs: its executable's name, or for an interpreter the
    script or module it was given (`python3 -m pkg` -> pkg, `python3 x.py` -> x.py)."""
    base = os.path.basename(exe) or "?"
    if not re.fullmatch(r"(python|pypy|perl|ruby|Rscript|julia|node|bash|sh|tclsh)[0-9.]*", base):
        return base
    args = cmdline.split()[1:]
    for i, a in enumerate(args):
        if a == "-m" and i + 1 < len(args):
            return args[i + 1]
        if a == "-c":
            return base
        if not a.startswith("-"):
            return os.path.basename(a)
    return base


class Mounts:
    """This node's mount points (/proc/self/mountinfo), longest first: the file system a
    path is on is the longest mount point it starts with."""

    def __init__(self, text: str | None = None):
        if text is None:
            try:
                with open("/proc/self/mountinfo", "rb") as f:
                    text = f.read(1 << 20).decode(errors="surrogateescape")
            except OSError:
                text = ""
        points = set()
        for ln in text.splitlines():
            parts = ln.split()
            if len(parts) > 4:
                points.add(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), parts[4]))
        self.points = sorted(points | {"/"}, key=len, reverse=True)

    def of(self, path: str) -> str:
        if not path.startswith("/"):
            return "-"  # <STDOUT>, <AGGREGATE>...
        for p in self.points:
            if path == p or path.startswith(p if p.endswith("/") else p + "/"):
                return p
        return "/"


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


@dataclass
class Sample:
    """One read of one live file: its header and, per record, the summed counters."""
    key: tuple  # (device, inode, pid, start): the same process's file
    header: dict
    modules: list  # module name of each row
    paths: list
    ints: np.ndarray  # rows x INTS, int64
    floats: np.ndarray  # rows x FLOATS
    when: float
    unlinked: bool = False


class LiveFile:
    """One live file, open read-only: read() gives its current numbers, each never lower
    than an earlier read's."""

    def __init__(self, fd: int, name: str, uid: int | None = None):
        self.fd, self.name, self.uid = fd, name, uid
        self.h = None
        self.mods = None
        self.plans = {}
        # per row (a record or a metadata-only entry, in file order): offset, module id,
        # entry or not, module name, path
        self.r_off, self.r_mod, self.r_entry, self.modnames, self.paths = [], [], [], [], []
        self.walked = {}  # area start -> offset walked to
        self.ids = np.zeros(0, np.uint64)  # per row: record id, module id, entry or not
        self.mods_arr = np.zeros(0, np.int64)
        self.ent_arr = np.zeros(0, bool)
        self.made = np.zeros(0, np.int64)  # rows of entries whose record is there too
        self.full = np.zeros(0, np.int64)  # rows of entries whose `full` was seen set
        self.best_i = np.zeros((0, NI), np.int64)
        self.best_f = np.zeros((0, NF), np.float64)
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

    def _fail(self, msg):
        raise LogError(f"{self.name}: live file: {msg}")

    def _read_once(self):
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
        data = self._pread(used, 0)
        tb = self._pread(tables, h["arena_off"] + h["tables_low"])
        if len(data) != used or len(tb) != tables:
            raise _Changed("shrank while read")
        if os.fstat(self.fd).st_size != st.st_size:
            raise _Changed("size changed while read")
        h["tables"] = tb
        return h, data, st

    def read(self) -> Sample:
        for attempt in range(MAX_RETRIES):
            try:
                h, data, st = self._read_once()
                break
            except _Changed as e:
                if attempt == MAX_RETRIES - 1:
                    self._fail(str(e))
        if self.mods is None:
            self.mods = live.parse_schema(
                data[h["schema_off"]:h["schema_off"] + h["schema_len"]], self.name,
                len(data) // 8 + 1024, h["version"])
            self.plans = {mid: _module_plan(m) for mid, m in self.mods.items()}
        self.h = h
        n_old = len(self.r_off)
        self._walk(data, h["agg_off"], h["agg_off"] + h["agg_size"], True)
        self._walk(data, h["arena_off"], h["arena_off"] + h["arena_used"], False)
        self._idx.add(self, n_old)
        vi, vf = self._gather(data, h)
        vi, vf = self._settle(h, data, vi, vf)
        n = len(self.r_off)
        bi = np.zeros((n, NI), np.int64)
        bf = np.zeros((n, NF), np.float64)
        bi[:len(self.best_i)], bf[:len(self.best_f)] = self.best_i, self.best_f
        np.maximum(bi, vi, out=bi)
        np.fmax(bf, np.nan_to_num(vf, nan=0.0, posinf=0.0, neginf=0.0), out=bf)
        bi[self.made], bf[self.made] = 0, 0.0
        bi[self.full], bf[self.full] = 0, 0.0  # once full, counted in its record for good
        self.best_i, self.best_f = bi, bf
        h.pop("tables", None)  # not kept: memory is the rows' numbers, not the file's bytes
        return Sample((st.st_dev, st.st_ino, h["pid"], h["start_wall"]), h,
                      self.modnames[:n], self.paths[:n], bi, bf, time.time(),
                      unlinked=st.st_nlink == 0)

    def _settle(self, h: dict, data: bytes, vi, vf):
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
            start = self.r_off[int(changed[0])] // 8 * 8
            d2 = data[:start] + self._pread(len(data) - start, start)
            tb = self._pread(len(h["tables"]), h["arena_off"] + h["tables_low"])
            if len(d2) != len(data) or len(tb) != len(h["tables"]):
                self._fail("shrank while read")
            h["tables"] = tb
            vi2, vf2 = self._gather(d2, h)
            a, b, c, d = vi[changed], vi2[changed], vf[changed], vf2[changed]
            moving = (a != b).any(axis=1) | ((c != d) & (d == d)).any(axis=1)
            vi2[changed] = np.where(moving[:, None], np.minimum(a, b), b)
            vf2[changed] = np.where(moving[:, None], np.fmin(c, d), d)
            vi, vf, data = vi2, vf2, d2
            changed = changed[moving]
        return vi, vf

    def _walk(self, buf: bytes, start: int, end: int, agg: bool):
        """Append the records of [start, end) not walked yet."""
        h, mods = self.h, self.mods
        off = self.walked.get(start, start)
        if off >= end:
            return
        rs, mo, fo = h["rec_size"], h["rec_module_off"], h["rec_flags_off"]
        v4 = h["version"] >= 4
        mc, tkb = h["meta_c_off"], h["tk_below"]
        name = self.name
        # per module: (counters' bytes in a record, in an entry, bytes after an aggregate)
        sizes = {mid: (8 * (m.n_int + m.n_flt), 8 * len(m.meta),
                       tkb + ((m.state_size + 7) & ~7) if m.layout is not None else 0, m.name)
                 for mid, m in mods.items()}
        # per module: bytes before the name in a record, in an entry; after an aggregate
        heads = {mid: (rs + sz[0], mc + sz[1], sz[2], sz[3]) for mid, sz in sizes.items()}
        r_off, r_mod, r_entry, modnames, paths = \
            self.r_off, self.r_mod, self.r_entry, self.modnames, self.paths
        first = len(r_off)
        find, mark_len, mark_b = buf.find, len(live.TRUNC_MARK), live.TRUNC_MARK
        u16 = memoryview(buf)[:len(buf) & ~1].cast("H")  # rec_module_off, rec_flags_off: even
        if mo % 2 or fo % 2:
            _bad(name, "record header offsets not 2-byte aligned")
        mo2, fo2 = mo >> 1, fo >> 1
        while off < end:
            if off + rs > end:
                _bad(name, f"record at byte {off} runs past the published end")
            mid = u16[(off >> 1) + mo2]
            flags = u16[(off >> 1) + fo2] if v4 else 0
            hd = heads.get(mid)
            if hd is None:
                _bad(name, f"record at byte {off} has unknown module {mid}")
            entry = flags & 2 and not agg
            p_off = off + (hd[1] if entry else hd[0])
            if p_off >= end:
                _bad(name, f"record at byte {off} runs past the published end")
            nul = find(b"\0", p_off, end)
            if nul < 0:
                _bad(name, f"record at byte {off}: name runs past the published end")
            mark = 0
            if flags & 1:
                if buf[nul:nul + mark_len] != mark_b:
                    _bad(name, f"record at byte {off}: truncated name without its mark")
                mark = mark_len
            r_off.append(off)
            r_mod.append(mid)
            r_entry.append(bool(entry))
            modnames.append(hd[3])
            if agg:
                paths.append("<AGGREGATE>")
                off += ((p_off - off + 17 + 7) & ~7) + hd[2]  # its tables and state follow
            else:
                paths.append(buf[p_off:nul].decode("utf-8", "surrogateescape"))
                off += (p_off - off + nul - p_off + mark + 1 + 7) & ~7
        u16.release()
        self.walked[start] = off
        if not agg:
            self._entries_made(buf, first)

    def _entries_made(self, buf: bytes, first: int):
        """Entries whose record is in the file too (made just before a kill, or since the
        last read): the record counts them (docs/log-format.md, version 4)."""
        off = np.asarray(self.r_off[first:], np.int64)
        if not len(off):
            return
        ids = np.frombuffer(buf, "<u8", count=len(buf) // 8)[off // 8]
        self.ids = np.concatenate([self.ids, ids])
        self.mods_arr = np.concatenate([self.mods_arr, np.asarray(self.r_mod[first:], np.int64)])
        self.ent_arr = np.concatenate([self.ent_arr, np.asarray(self.r_entry[first:], bool)])
        if not self.ent_arr.any():
            return
        made = [np.zeros(0, np.int64)]
        for mid in np.unique(self.mods_arr[self.ent_arr]):
            m = self.mods_arr == mid
            e = np.flatnonzero(m & self.ent_arr)
            made.append(e[np.isin(self.ids[e], self.ids[m & ~self.ent_arr])])
        self.made = np.concatenate(made)

    def _gather(self, data: bytes, h: dict):
        n = len(self.r_off)
        ix = self._idx
        words = np.frombuffer(data, "<i8", count=len(data) // 8)
        vi = np.zeros(n * NI, np.int64)
        vf = np.zeros(n * NF, np.float64)
        if len(ix.iw):
            vi[ix.it_u] = np.add.reduceat(words[ix.iw], ix.it_s)
        if len(ix.fw):
            vf[ix.ft_u] = np.add.reduceat(words[ix.fw].view("<f8"), ix.ft_s)
        vi, vf = vi.reshape(n, NI), vf.reshape(n, NF)
        vi[self.made], vf[self.made] = 0, 0.0  # counted in their records
        if len(ix.ent_rows):  # an entry whose `full` is set is counted in its record
            full = ix.ent_rows[words[ix.ent_words] != 0]
            vi[full] = 0
            vf[full] = 0.0
            self.full = np.union1d(self.full, full) if len(full) != len(self.full) else full
        if len(ix.st_rows):
            self._runs(words[ix.st_words].view("<u8"), ix.st_rows, vi, data, h)
        return vi, vf

    def _runs(self, ptrs, rows, vi, data: bytes, h: dict):
        """Add the repeats each record's access state holds back (runtime/access.h):
        bytes always, operations when untimed."""
        ro = h["rw_off"]
        size = max(ro["run_k"], ro["run_len"], ro["run_next"], ro["run_dir"],
                   ro["run_timed"], ro["run_t"]) + 8
        # an address in the process minus the mapping's: the offset in the file (wrapping:
        # an address below the mapping lands far out of range, and is left out)
        fo = (ptrs - np.uint64(h["map_addr"])).view(np.int64)
        ok = (ptrs != 0) & (fo >= 0) & (fo < 1 << 48)
        t0 = h["arena_off"] + h["tables_low"]
        tb = h["tables"]
        in_t = ok & (fo >= t0) & (fo + size <= t0 + len(tb))
        in_a = ok & ~in_t & (fo >= h["agg_off"]) & (fo + size <= h["agg_off"] + h["agg_size"])
        for mask, buf, base in ((in_t, tb, t0), (in_a, data, 0)):
            if not mask.any():
                continue
            raw = np.frombuffer(buf, np.uint8)
            at = fo[mask] - base
            k, n = _i64_at(raw, at + ro["run_k"]), _i64_at(raw, at + ro["run_len"])
            d = raw[at + ro["run_dir"]].astype(np.int64)
            timed = raw[at + ro["run_timed"]]
            good = (k > 0) & (n > 0) & (d <= 1) & (k < 1 << 31) & (n < 1 << 31)
            if not good.any():
                continue
            r = rows[mask][good]
            k, n, d, timed = k[good], n[good], d[good], timed[good]
            vi[r, d] += k * n  # bytes_read, bytes_written (one state per record: rows unique)
            un = timed == 0
            vi[r[un], 2 + d[un]] += k[un]  # reads, writes


class _Index:
    """Where every summed counter of every row is (word indexes), sorted by the cell it
    adds to, for np.add.reduceat; rows added as the walk finds them."""

    def __init__(self):
        e = np.zeros(0, np.int64)
        self.iw = self.it = self.fw = self.ft = e
        self.it_u = self.it_s = self.ft_u = self.ft_s = e
        self.st_rows = self.st_words = self.ent_rows = self.ent_words = e

    def add(self, lf: LiveFile, first: int):
        n = len(lf.r_off)
        if first >= n:
            return
        h = lf.h
        off = np.asarray(lf.r_off[first:], np.int64)
        mod = np.asarray(lf.r_mod[first:], np.int64)
        ent = np.asarray(lf.r_entry[first:], bool)
        rows = np.arange(first, n, dtype=np.int64)
        iw, it, fw, ft = [self.iw], [self.it], [self.fw], [self.ft]
        new_i, new_f = [], []
        st_rows, st_words = [self.st_rows], [self.st_words]
        for mid in np.unique(mod):
            ints, flts, e_ints, e_flts, has_state = lf.plans[int(mid)]
            for is_entry, pi, pf in ((False, ints, flts), (True, e_ints, e_flts)):
                sel = (mod == mid) & (ent == is_entry)
                if not sel.any():
                    continue
                o, r = off[sel], rows[sel]
                base = (o + (h["meta_c_off"] if is_entry else h["rec_size"])) // 8
                for plan, out, width in ((pi, new_i, NI), (pf, new_f, NF)):
                    if plan:
                        q = np.asarray([x for x, _ in plan], np.int64)
                        i = np.asarray([y for _, y in plan], np.int64)
                        out.append(((base[:, None] + i).ravel(), (r[:, None] * width + q).ravel()))
                if has_state and not is_entry:
                    st_rows.append(r)
                    st_words.append((o + h["rec_state_off"]) // 8)
        for parts, words, cells in ((new_i, iw, it), (new_f, fw, ft)):
            if parts:
                w = np.concatenate([x for x, _ in parts])
                c = np.concatenate([y for _, y in parts])
                o = np.argsort(c, kind="stable")  # new rows' cells are all past the old ones
                words.append(w[o])
                cells.append(c[o])
        self.iw, self.it = np.concatenate(iw), np.concatenate(it)
        self.fw, self.ft = np.concatenate(fw), np.concatenate(ft)
        self.it_u, self.it_s = _segments(self.it)
        self.ft_u, self.ft_s = _segments(self.ft)
        order = np.argsort(np.concatenate(st_rows), kind="stable")
        self.st_rows = np.concatenate(st_rows)[order]
        self.st_words = np.concatenate(st_words)[order]
        self.ent_rows = np.concatenate([self.ent_rows, rows[ent]])
        self.ent_words = np.concatenate([self.ent_words, (off[ent] + h["meta_full_off"]) // 8])


def _segments(cells):
    """The distinct cells of a sorted array and where each one's run starts."""
    if not len(cells):
        return cells, cells
    starts = np.concatenate([[0], np.flatnonzero(np.diff(cells)) + 1])
    return cells[starts], starts


def _i64_at(raw: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """The little-endian int64 at each byte offset pos of raw (any alignment)."""
    return raw[pos[:, None] + np.arange(8)].copy().view("<i8").ravel()


class _Changed(Exception):
    """The file changed under one read: read it again."""


def _bad(name, msg):
    raise LogError(f"{name}: live file: {msg}")


# ---- the directory walk --------------------------------------------------------------

@dataclass
class Scan:
    """The live files found under a live directory, opened, and one line per thing
    skipped."""
    files: list = field(default_factory=list)  # [(fd, path, uid)]
    problems: list = field(default_factory=list)


def _check_dir(fd: int, uid: int) -> str | None:
    st = os.fstat(fd)
    if st.st_uid != uid:
        return f"owned by uid {st.st_uid}, not {uid}"
    if st.st_mode & 0o077:
        return f"open to others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def scan(top, uids=None) -> Scan:
    """Open (read-only, no symlink followed) the live files under live directory `top`:
    for a user, their own directory (iochar-<uid>); for root, every user's (`uids` limits
    it). Each directory is opened relative to its parent's descriptor."""
    out = Scan()
    me = os.geteuid()
    try:
        tfd = os.open(os.fsencode(top), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return out  # no job made it yet
    except OSError as e:
        out.problems.append(f"{top}: {e.strerror or e}; nothing read")
        return out
    try:
        if me == 0:
            names = sorted(os.listdir(tfd))
        else:
            names = [f"iochar-{me}"]
        for uname in names:
            m = livedir.USER_DIR.match(uname)
            if not m:
                continue
            uid = int(m.group(1))
            if uids is not None and uid not in uids:
                continue
            _scan_user(tfd, os.path.join(str(top), uname), uname, uid, out)
    finally:
        os.close(tfd)
    if len(out.files) > MAX_FILES:
        for fd, _, _ in out.files[MAX_FILES:]:
            os.close(fd)
        out.problems.append(f"{top}: {len(out.files) - MAX_FILES} live files past the first "
                            f"{MAX_FILES} left unread")
        del out.files[MAX_FILES:]
    return out


def _open_at(dfd: int, name: str, flags: int, shown: str, problems: list) -> int | None:
    try:
        return os.open(name, flags, dir_fd=dfd)
    except FileNotFoundError:
        return None  # gone between the listing and the open: it ended
    except OSError as e:
        import errno
        if e.errno in (errno.ELOOP, errno.ENOTDIR) and flags & os.O_NOFOLLOW:
            problems.append(f"{shown}: a symlink or not a {'directory' if flags & os.O_DIRECTORY else 'file'}; skipped")
        else:
            problems.append(f"{shown}: {e.strerror or e}; skipped")
        return None


def _entries(dfd: int, uid: int, shown: str, problems: list) -> list:
    """The sorted names in the open directory dfd, or [] with one line in problems when it
    is not one we may read (wrong owner or mode) or cannot be listed."""
    why = _check_dir(dfd, uid)
    if why:
        problems.append(f"{shown}: {why}; skipped")
        return []
    try:
        return sorted(os.listdir(dfd))
    except OSError as e:
        problems.append(f"{shown}: {e.strerror or e}; skipped")
        return []


def _scan_user(tfd: int, shown: str, uname: str, uid: int, out: Scan):
    ufd = _open_at(tfd, uname, _OPEN_DIR, shown, out.problems)
    if ufd is None:
        return
    try:
        subs = _entries(ufd, uid, shown, out.problems)
        for sub in subs:
            if not livedir.KEY.match(sub):
                continue
            sshown = f"{shown}/{sub}"
            sfd = _open_at(ufd, sub, _OPEN_DIR, sshown, out.problems)
            if sfd is None:
                continue
            try:
                files = _entries(sfd, uid, sshown, out.problems)
                for f in files:
                    if not live.is_live(f):
                        continue
                    fshown = f"{sshown}/{f}"
                    fd = _open_at(sfd, f, _OPEN_FILE, fshown, out.problems)
                    if fd is None:
                        continue
                    st = os.fstat(fd)
                    why = None if stat.S_ISREG(st.st_mode) else "not a regular file"
                    why = why or (f"owned by uid {st.st_uid}, not {uid}" if st.st_uid != uid else None)
                    if why:
                        os.close(fd)
                        out.problems.append(f"{fshown}: {why}; skipped")
                        continue
                    out.files.append((fd, fshown, uid))
            finally:
                os.close(sfd)
    finally:
        os.close(ufd)


# ---- processes into jobs ---------------------------------------------------------------

@dataclass
class Proc:
    """A process as the live view shows it."""
    sample: Sample
    status: str  # running, finishing, killed, exited, aborted, ended

    @property
    def header(self):
        return self.sample.header


def status_of(s: Sample, alive: bool) -> str:
    h = s.header
    if h["state"] == live.LOGGED or s.unlinked:
        return "ended"
    if h["state"] == 1:
        return "exited"
    if h["state"] == 2:
        return "aborted"
    if not alive:
        return "killed"  # state 0 and gone: a signal or the launcher (which is not known)
    return "finishing" if h["end_wall"] > 0 else "running"


def job_key(h: dict) -> tuple:
    """A job on this node: the scheduler id (rank 0's pid without one), user, program."""
    prog = os.path.basename(h.get("jobkey", {}).get("program", ""))  # the runtime says (20480-byte headers)
    return (h["uid"], h["jobid"] or str(h["pid"]), prog or program_of(h["exe"], h["cmdline"]))


class Reader:
    """Reads a live directory sample after sample, keeping each live file open between
    samples (read by descriptor, never reopened by name)."""

    def __init__(self, top, uids=None):
        self.top, self.uids = top, uids
        self.open: dict = {}  # (dev, ino) -> LiveFile
        self.problems: list = []

    def sample(self) -> list:
        """[Proc] of every live file now, and of those gone since the last sample (read
        once more through the descriptor: their last values)."""
        sc = scan(self.top, self.uids)
        self.problems = list(sc.problems)
        seen = set()
        procs = []
        for fd, shown, uid in sc.files:
            st = os.fstat(fd)
            ident = (st.st_dev, st.st_ino)
            if ident in self.open:
                os.close(fd)
            else:
                self.open[ident] = LiveFile(fd, shown, uid)
            seen.add(ident)
        for ident in list(self.open):
            lf = self.open[ident]
            try:
                s = lf.read()
            except (LogError, OSError, ValueError, IndexError, struct.error) as e:
                msg = str(e) if isinstance(e, LogError) else f"{lf.name}: {e}"
                self.problems.append(f"{msg}; skipped")
                lf.close()
                del self.open[ident]
                continue
            if ident not in seen:
                s.unlinked = True
            h = s.header
            st = status_of(s, livedir.alive(h) if h["pid"] > 0 else False)
            if ident not in seen or st == "ended":
                lf.close()
                del self.open[ident]
            if h["pid"] == 0:
                continue  # killed while its file was being made: no record
            procs.append(Proc(s, st))
        return procs

    def close(self):
        for lf in self.open.values():
            lf.close()
        self.open.clear()


@dataclass
class Job:
    key: tuple
    user: str
    program: str
    procs: dict = field(default_factory=dict)  # sample key -> Proc (the latest)
    nprocs: int = 0
    start: float = 0.0
    ended_at: int | None = None  # the sample count when none of it ran any more
    fs_labels: dict = field(default_factory=dict)  # fs -> its series' label (sticky)

    @property
    def jobid(self) -> str:
        return self.key[1]

    def running(self) -> bool:
        return any(p.status == "running" for p in self.procs.values())

    def count(self, status: str) -> int:
        return sum(p.status == status for p in self.procs.values())


def group(procs: list, jobs: dict | None = None, tick: int = 0) -> dict:
    """Processes into jobs (key: job_key); with the `jobs` of the samples before, a job
    keeps the last values of its processes that ended while any of it still runs."""
    jobs = {} if jobs is None else jobs
    now = set()
    for p in procs:
        h = p.header
        k = job_key(h)
        j = jobs.get(k)
        if j is None or j.ended_at is not None:
            j = jobs[k] = Job(k, h["user"] or str(h["uid"]), k[2])
        j.procs[p.sample.key] = p
        j.nprocs = max(j.nprocs, h["nprocs"] if h["mpi_initialized"] else 0)
        j.start = min(j.start or h["start_wall"], h["start_wall"])
        now.add(k)
    for k, j in jobs.items():
        if j.ended_at is None and not j.running():
            j.ended_at = tick
        for p in j.procs.values():
            if k not in now and p.status in ("running", "finishing"):
                p.status = "ended"  # its file went without a last read
    return jobs


# ---- what the tools show: jobs with totals, rates and series ------------------------------

@dataclass
class JobView:
    """One job at one sample: totals (BASE_MODULES), rates over `window` seconds, the
    share of that window its processes spent in I/O, and (when asked) its busiest files."""
    job: Job
    state: str
    ints: dict
    floats: dict
    rates: dict
    window: float
    io_share: float
    files: list = field(default_factory=list)  # [{module, fs, path, bytes..., *_per_s}]

    def as_json(self) -> dict:
        j, i = self.job, self.ints
        d = {"job": j.jobid, "user": j.user, "program": j.program,
             "processes": j.count("running") + j.count("finishing"), "ranks": j.nprocs or None,
             "state": self.state, "killed": j.count("killed"),
             "bytes_read": i["bytes_read"], "bytes_written": i["bytes_written"],
             "reads": i["reads"], "writes": i["writes"],
             "meta_ops": sum(i[k] for k in META_OPS), **{k: i[k] for k in META_OPS},
             "read_bytes_per_s": self.rates["bytes_read"],
             "write_bytes_per_s": self.rates["bytes_written"],
             "reads_per_s": self.rates["reads"], "writes_per_s": self.rates["writes"],
             "meta_ops_per_s": sum(self.rates[k] for k in META_OPS),
             "io_time": sum(self.floats.values()), "io_share": self.io_share,
             "rate_window": self.window, "start": j.start}
        if self.files:
            d["files"] = self.files
        return d


class Monitor:
    """Samples a live directory again and again; jobs keep their ended processes' last
    values until none of their processes runs, then go after `keep` more samples."""

    def __init__(self, top, uids=None, keep: int = 0, mounts: Mounts | None = None):
        self.reader = Reader(top, uids)
        self.jobs: dict = {}
        self.tick = 0
        self.keep = keep
        self.mounts = mounts or Mounts()
        self._fs: dict = {}
        self._gid: dict = {}  # (module, fs) -> group number
        self._gkeys: list = []
        self._gbase: list = []
        self._groups: dict = {}  # sample key -> (rows, (groups, order, starts), group of each)
        self._sum_cache: dict = {}  # job key -> (tick, sums)
        self._prev: dict = {}  # job key -> (time, ints, floats, {file: bytes})

    @property
    def problems(self):
        return self.reader.problems

    def fs_of(self, path: str) -> str:
        fs = self._fs.get(path)
        if fs is None:
            if len(self._fs) > 1 << 17:
                self._fs.clear()
            fs = self._fs[path] = self.mounts.of(path)
        return fs

    def step(self, files: int = 0) -> list:
        """[JobView] of the jobs running now (and those ended fewer than `keep` samples
        ago, state "ended"); `files` > 0: each with its busiest files."""
        self.tick += 1
        now = time.time()
        procs = self.reader.sample()
        group(procs, self.jobs, self.tick)
        out = []
        for k, j in list(self.jobs.items()):
            if j.ended_at is not None and self.tick - j.ended_at >= max(self.keep, 0) and \
                    not self._recently_killed(j, now):
                del self.jobs[k]
                self._prev.pop(k, None)
                self._sum_cache.pop(k, None)
                for sk in j.procs:
                    self._groups.pop(sk, None)
                continue
            out.append(self._view(j, now, files))
        return out

    @staticmethod
    def _recently_killed(j: Job, now: float) -> bool:
        """A job whose processes were killed shows as such for a minute after its last
        read (its live files stay until the epilogue recovers them)."""
        return j.count("killed") > 0 and not j.running() and \
            any(now - p.sample.when < 60 for p in j.procs.values()) and \
            all(p.status in ("killed", "exited", "aborted") for p in j.procs.values())

    def _view(self, j: Job, now: float, files: int) -> JobView:
        ti, tf = self.totals(j)
        prev = self._prev.get(j.key)
        if prev is None:  # first sight: the averages since the job started
            window = max(now - j.start, 1e-3)
            pi, pf, pfiles = np.zeros(NI, np.int64), np.zeros(NF), {}
        else:
            window = max(now - prev[0], 1e-3)
            pi, pf, pfiles = prev[1], prev[2], prev[3]
        rates = {q: float(max(int(ti[n]) - int(pi[n]), 0)) / window for n, q in enumerate(INTS)}
        nproc = max(j.count("running") + j.count("finishing"), 1)
        share = min(max(float(tf.sum() - pf.sum()), 0.0) / (window * nproc), 1.0)
        if j.running():
            state = "running"
        elif j.count("killed") and all(p.status in ("killed", "exited", "aborted")
                                       for p in j.procs.values()):
            state = "killed"
        else:
            state = "ended"
        fl, cur = ([], {})
        if files > 0:
            fl, cur = self._files(j, files, window, pfiles)
        self._prev[j.key] = (now, ti, tf, cur)
        return JobView(j, state, {q: int(ti[n]) for n, q in enumerate(INTS)},
                       {q: float(tf[n]) for n, q in enumerate(FLOATS)}, rates, window, share, fl)

    def _files(self, j: Job, n: int, window: float, pfiles: dict):
        """The n files of job j with the most bytes moved in the window (a file's rows of
        every process and module summed by (module, path))."""
        cur: dict = {}
        for p in j.procs.values():
            s = p.sample
            moved = s.ints[:, 0] + s.ints[:, 1]
            for r in np.flatnonzero(moved):
                key = (s.modules[r], s.paths[r])
                v = cur.setdefault(key, np.zeros(4, np.int64))
                v += s.ints[r, :4]
        rows = []
        for key, v in cur.items():
            old = pfiles.get(key)
            d = v - old if old is not None else v  # a file new to the list moved v since
            rows.append((int(d[0] + d[1]), key, v, d, window))
        rows.sort(key=lambda r: (-r[0], r[1]))
        out = [{"module": k[0], "fs": self.fs_of(k[1]), "path": k[1],
                "bytes_read": int(v[0]), "bytes_written": int(v[1]), "reads": int(v[2]),
                "writes": int(v[3]), "read_bytes_per_s": max(int(d[0]), 0) / w,
                "write_bytes_per_s": max(int(d[1]), 0) / w}
               for _, k, v, d, w in rows[:n]]
        return out, cur

    def _rows(self, s: Sample):
        """Sample s's rows by (module, fs) group: (the groups, the rows sorted by group,
        where each group starts in that order), cached per process (its rows only grow)."""
        have = self._groups.get(s.key)
        n = len(s.paths)
        if have is not None and have[0] == n:
            return have[1]
        have = None if have is None else have[2]
        start = 0 if have is None else len(have)
        new = np.empty(n - start, np.int64)
        for r in range(start, n):
            key = (s.modules[r], self.fs_of(s.paths[r]))
            g = self._gid.get(key)
            if g is None:
                g = self._gid[key] = len(self._gkeys)
                self._gkeys.append(key)
                self._gbase.append(key[0] in BASE_MODULES)
            new[r - start] = g
        rows = new if have is None else np.concatenate([have, new])
        order = np.argsort(rows, kind="stable")
        groups, starts = _segments(rows[order])
        self._groups[s.key] = (n, (groups, order, starts), rows)
        return groups, order, starts

    def _sums(self, j: Job):
        """Per (module, fs) group: ints and floats of job j summed over its processes
        (once a sample: the totals and the series share it)."""
        got = self._sum_cache.get(j.key)
        if got is not None and got[0] == self.tick:
            return got[1], got[2]
        parts = []
        for p in j.procs.values():
            groups, order, starts = self._rows(p.sample)
            if len(order):
                parts.append((groups, np.add.reduceat(p.sample.ints[order], starts),
                              np.add.reduceat(p.sample.floats[order], starts)))
        g = len(self._gkeys)
        si, sf = np.zeros((g, NI), np.int64), np.zeros((g, NF))
        for groups, pi, pf in parts:  # groups are distinct within a part
            si[groups] += pi
            sf[groups] += pf
        self._sum_cache[j.key] = (self.tick, si, sf)
        return si, sf

    def totals(self, j: Job) -> tuple:
        """ints, floats of job j over the modules whose calls reach the system."""
        si, sf = self._sums(j)
        base = np.asarray(self._gbase[:len(si)], bool)
        return si[base].sum(axis=0), sf[base].sum(axis=0)

    def series(self, j: Job, max_fs: int = 16) -> dict:
        """(module, fs) -> (ints, floats) of job j: the exporter's labelled series. A job's
        first max_fs file systems get a series each, any later one shares fs="other"
        (a label once given stays: the counters stay monotonic)."""
        si, sf = self._sums(j)
        out: dict = {}
        for g in np.flatnonzero(si.any(axis=1) | sf.any(axis=1)):
            m, fs = self._gkeys[g]
            label = j.fs_labels.get(fs)
            if label is None:
                label = j.fs_labels[fs] = fs if len(j.fs_labels) < max_fs else "other"
            key = (m, label)
            if key in out:
                out[key] = (out[key][0] + si[g], out[key][1] + sf[g])
            else:
                out[key] = (si[g].copy(), sf[g].copy())
        return out

    def close(self):
        self.reader.close()
