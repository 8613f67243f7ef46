"""Anonymized copies of logs: every name a keyed hash (HMAC-SHA256), every number kept.

A log names the site's people and data: file paths, mount points, the user, the host,
the program and its arguments, the objects the call sites walked through, the tool's
warnings (which quote paths). `anonymize(log, key)` gives the bytes of a log with each of
them replaced by keyed hashes; counters, times, sizes, series, rank totals and the trace's
offsets stay exact, so every report reads the copy as it reads the original
(docs/parser.md, "Anonymized logs"). Under one key a name always gives the same hash, so
a set of logs anonymized with one key stays comparable across logs; without the key, a
hash cannot be checked against a guessed name.

A name is hashed piece by piece: it is split at `/`, `:`, `=` and `,`, each piece between
them replaced by 16 hex digits of HMAC-SHA256(key, piece) and the separators kept. So
directories stay directories (two files of one directory share its hashed prefix), a
dataset `file.h5:/grp/dset` stays under its hashed file, mount points stay prefixes of
the paths they hold, and `--out=/scratch/x` in a command line names the same hashed
path as the record. The special names (`<STDIN>`, `<AGGREGATE>`...) are kept.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import re
import secrets
import stat
import struct

import numpy as np

from .callsites import ENTRY_DTYPE, TRACE_DTYPE
from .codec import fnv1a64_many
from .darshan import DarshanLog
from .logformat import AGGREGATE_ID, LogError
from .writer import encode_log

PIECE_HEX = 16  # hex digits of a piece's hash: 64 bits, no collision among a site's names
KEY_BYTES = 32  # a new key file: 32 random bytes, written as 64 hex digits
KEY_MAX = 4096  # bytes of a key file read
PATH_LIMIT = 4095  # bytes of a name, as the runtime records them (docs/log-format.md)
_SEP = re.compile(r"([/:=,])")
_SPECIAL = re.compile(r"<[A-Z_]+>")
# JOB keys whose text names nothing of the site: kept as they are
KEEP_TEXT = {"version", "format", "time_origin", "ended_by", "mpi", "missing_ranks", "source",
             "modules_off", "ranks_kept"}
# JOB keys of free text that quotes names (warnings: "cannot write log /x/y: ...")
FREE_TEXT = {"warnings", "unreadable_logs"}
# a word of free text kept as it is: letters and punctuation, or a number
_PLAIN = re.compile(r"[A-Za-z_()'.,;!?%-]*|[0-9.,:;%()xkKmMgGiB+-]*")
# the module index a CALLSITE stack hash starts with (docs/log-format.md)
CALLSITE_MODULES = ("POSIX", "STDIO", "MPIIO", "H5F", "H5D", "NC_FILE", "NC_VAR",
                    "PNETCDF_FILE", "PNETCDF_VAR")
FNV_OFFSET, FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3


def _fnv(data: bytes, h: int = FNV_OFFSET) -> int:
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def _bytes(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


class Anonymizer:
    """The keyed hashes of one key (memoized: a log repeats its directories)."""

    def __init__(self, key: bytes):
        self.key = key
        self._memo: dict = {}  # piece -> its hash
        self._dirs: dict = {}  # a name's part before its last `/` -> its hashed form

    def digest(self, data: bytes) -> bytes:
        return hmac.new(self.key, data, hashlib.sha256).digest()

    def piece(self, s: str) -> str:
        h = self._memo.get(s)
        if h is None:
            h = self._memo[s] = self.digest(_bytes(s)).hex()[:PIECE_HEX]
        return h

    def key_id(self) -> str:
        """Which key made a copy (JOB `anonymized`): copies are comparable when equal."""
        return self.digest(b"iochar anonymize: key id").hex()[:PIECE_HEX]

    def pieces(self) -> set:
        """Every piece hashed so far (the names' words free text must not quote)."""
        return set(self._memo)

    def _split(self, s: str) -> str:
        return "".join(p if (i % 2 or not p) else self.piece(p)
                       for i, p in enumerate(_SEP.split(s)))

    def name(self, s: str) -> str:
        """A path (or any name): each piece between separators hashed, separators kept.
        The directory part is hashed once for all the files in it (`/` is a separator,
        so this is the same as hashing the pieces one by one)."""
        if not s or _SPECIAL.fullmatch(s):
            return s
        head, sep, tail = s.rpartition("/")
        if not head:
            return self._split(s)
        h = self._dirs.get(head)
        if h is None:
            h = self._dirs[head] = self._split(head)
        if tail and tail.isalnum() or ("." in tail and tail.replace(".", "").isalnum()):
            return h + sep + self.piece(tail)  # a plain file name: one piece
        return h + sep + self._split(tail)

    def words(self, s: str) -> str:
        """A command line (arguments joined by single spaces): each word as a name."""
        return " ".join(self.name(w) for w in s.split(" "))

    def number(self, n: int, bits: int) -> int:
        """A number that identifies someone (uid, batch job id) as a keyed one."""
        return int.from_bytes(self.digest(b"number:" + str(n).encode())[:8], "little") >> (64 - bits)

    def text(self, s: str, sensitive: set) -> str:
        """Free text (the tool's warnings): words that are plain English or numbers
        and none of the log's names kept, every other word hashed as a name."""
        out = []
        for word in re.split(r"(\s+)", s):
            bare = word.strip("()'.,;:!?")
            if word.isspace() or not word or (_PLAIN.fullmatch(word) and "/" not in word
                                              and bare.lower() not in sensitive):
                out.append(word)
            else:
                out.append(self.name(word))
        return "".join(out)


def _sensitive(job: dict, A: Anonymizer) -> set:
    """Every piece of every name the log holds (hashed so far: records, mounts, call-site
    objects) and of the JOB's names, lower case: free text quoting one of them has it
    hashed even where it looks like a plain word."""
    out = {p.lower() for p in A.pieces()}
    for s in [job.get("exe", ""), job.get("cmdline", ""), job.get("user", ""),
              job.get("hostname", ""), job.get("jobid", "")]:
        for w in str(s).split():
            out.update(p.lower() for p in _SEP.split(w) if p)
    return out


def _job(job: dict, A: Anonymizer, sensitive: set) -> dict:
    out = {}
    for k, v in job.items():
        if k == "uid" and isinstance(v, int):
            v = A.number(v, 31) | (1 << 31)  # above every real uid: never one of them
        elif k == "jobid":
            v = str(A.number(v, 40))  # digits, as batch systems' ids are
        elif not isinstance(v, str) or k in KEEP_TEXT:
            pass
        elif k in ("exe",):
            v = A.name(v)
        elif k in ("user", "hostname"):
            v = A.piece(v) if v else v
        elif k in FREE_TEXT:
            v = A.text(v, sensitive)
        else:  # cmdline, and any text key a later writer adds: hashed word by word
            v = A.words(v)
        out[k] = v
    out["anonymized"] = A.key_id()
    return out


def _new_name(A: Anonymizer, rid: int, path: str, truncated: bool) -> str:
    if rid == AGGREGATE_ID:
        return path
    new = A.name(path)
    # A name recorded truncated: its id is the whole name's, so two long names stay two
    # records. A name whose short pieces grew past the path limit is cut the same way.
    if truncated or len(_bytes(new)) > PATH_LIMIT:
        tag = "~" + A.digest(b"truncated:" + str(rid).encode()).hex()[:PIECE_HEX]
        new = _bytes(new)[:PATH_LIMIT - len(tag)].decode("utf-8", "surrogateescape") + tag
    return new


def _ids(names: list) -> np.ndarray:
    """FNV-1a of each name (the record ids): vectorized in chunks of short names (the
    vector form lays the names out in a rows x longest grid), long ones one by one."""
    enc = [_bytes(n) for n in names]
    out = np.empty(len(enc), np.uint64)
    short = [i for i, b in enumerate(enc) if len(b) <= 512]
    for k in range(0, len(short), 1 << 16):
        part = short[k:k + (1 << 16)]
        out[part] = fnv1a64_many([enc[i] for i in part])
    for i, b in enumerate(enc):
        if len(b) > 512:
            out[i] = _fnv(b)
    return out




def _remap(ids: np.ndarray, idmap: dict) -> np.ndarray:
    return np.fromiter((idmap.get(int(i), int(i)) for i in ids), dtype=np.uint64, count=len(ids))


def _trace(buf: bytes, count: int, idmap: dict) -> bytes:
    at = len(buf) - count * TRACE_DTYPE.itemsize
    rows = np.frombuffer(buf, dtype=TRACE_DTYPE, offset=at, count=count).copy()
    rows["record_id"] = _remap(rows["record_id"], idmap)
    return bytes(buf[:at]) + rows.tobytes()


def _topk(buf: bytes, count: int, idmap: dict) -> bytes:
    slots, tables = struct.unpack_from("<II", buf)
    dt = np.dtype([("id", "<u8"), ("t", "<i8", (tables * 2 * slots,))])
    rows = np.frombuffer(buf, dtype=dt, offset=8, count=count).copy()
    rows["id"] = _remap(rows["id"], idmap)
    return bytes(buf[:8]) + rows.tobytes()


def _loadmap(buf: bytes, count: int, A: Anonymizer, keys: dict) -> bytes:
    """Each object's path hashed as a name and its build-id as keyed bytes of the same
    length; its key (FNV-1a over path then build-id) recomputed, old -> new in keys."""
    out, off = [], 0
    for _ in range(count):
        key, base, blen = struct.unpack_from("<QQH", buf, off)
        bid = bytes(buf[off + 18:off + 18 + blen])
        off += 18 + blen
        (plen,) = struct.unpack_from("<H", buf, off)
        path = bytes(buf[off + 2:off + 2 + plen]).decode("utf-8", "surrogateescape")
        off += 2 + plen
        newbid = b"".join(A.digest(b"build-id:%d:" % i + bid)
                          for i in range((blen + 31) // 32))[:blen]
        newpath = _bytes(A.name(path))
        if len(newpath) > 0xFFFF:
            newpath = newpath[:0xFFFF]
        newkey = keys.setdefault(key, _fnv(newbid, _fnv(newpath)) or 1)
        out.append(struct.pack("<QQH", newkey, base, blen) + newbid
                   + struct.pack("<H", len(newpath)) + newpath)
    return b"".join(out)


def _callsite(buf: bytes, count: int, module: str, keys: dict) -> bytes:
    """Frames' object keys as the LOADMAP's new ones; each stack hash recomputed over
    them (module index, then the frames), the "other" entry (hash 0) kept."""
    arr = np.frombuffer(buf, dtype=ENTRY_DTYPE, count=count).copy()
    for e in arr:
        n = int(e["nframes"])
        for f in range(n):
            k = int(e["frames"][f][0])
            e["frames"][f][0] = keys.get(k, k) if k else 0
        if int(e["hash"]) and module in CALLSITE_MODULES:
            h = _fnv(struct.pack("<I", CALLSITE_MODULES.index(module))
                     + e["frames"][:n].astype("<u8").tobytes())
            e["hash"] = h or 1
    return arr.tobytes()


def _extra(log, A: Anonymizer, idmap: dict) -> list:
    """The observer sections (and a single per-rank log's TOPK) with their names and
    ids replaced; a kind this version does not know is left out (it could hold names)."""
    keys: dict = {}
    out, sections = [], list(getattr(log, "extra_sections", []))
    for kind, mod, count, buf in sections:  # LOADMAP first: CALLSITE needs its keys
        if kind == "LOADMAP":
            out.append((kind, mod, count, _loadmap(buf, count, A, keys)))
    for kind, mod, count, buf in sections:
        if kind == "CALLSITE":
            out.append((kind, mod, count, _callsite(buf, count, mod, keys)))
        elif kind == "TRACE":
            out.append((kind, mod, count, _trace(buf, count, idmap)))
        elif kind == "TOPK" and len(log.files) == 1:  # merged logs carry reduced records
            out.append((kind, mod, count, _topk(buf, count, idmap)))
    return out


def anonymize(log, key: bytes) -> bytes:
    """The bytes of an anonymized copy of `log` (an iochar.Log: one log, or the per-rank
    logs of one job, written as one log)."""
    if isinstance(log, DarshanLog):
        raise LogError(f"{log.path}: anonymizing a Darshan log is not supported (iochar logs "
                       "only; darshan-convert --obfuscate keeps user and host)")
    A = Anonymizer(key)
    names = log.names
    cut = set(getattr(log, "truncated_ids", set()))
    olds = list(names)
    news = [_new_name(A, rid, names[rid], rid in cut) for rid in olds]
    ids = _ids(news)  # the new names' record ids
    ids[ids == AGGREGATE_ID] -= 1  # as the runtime does
    idmap = {}
    for rid, new_id in zip(olds, ids.tolist()):
        idmap[rid] = rid if rid == AGGREGATE_ID else new_id
    newnames = {idmap[rid]: n for rid, n in zip(olds, news)}
    modules, series, ranks = {}, {}, {}
    for mod in log.modules:
        df = log.records(mod).drop(columns="path")
        df["record_id"] = _remap(df["record_id"].to_numpy(), idmap)
        roles = [r for _, _, r in log.schema_roles(mod)]
        modules[mod] = {"schema": log.schema(mod), "records": df, "roles": roles,
                        "version": log.schema_version(mod)}
        s = log.series(mod)
        if s is not None:
            series[mod] = s
        r = log.ranks(mod)
        if len(r):
            ranks[mod] = r
    mounts = log.mounts.assign(mount_point=[A.name(p) for p in log.mounts["mount_point"]])
    extra = _extra(log, A, idmap)
    job = _job(log.job, A, _sensitive(log.job, A))
    return encode_log(job, modules, newnames, series, ranks, mounts, extra_sections=extra)


def load_key(path) -> bytes:
    """The key in file `path` (its bytes less trailing white space), the file made when
    missing: O_CREAT|O_EXCL|O_NOFOLLOW, 0600, 32 random bytes as 64 hex digits. A key
    file that is a symbolic link, not a regular file, not the user's own or open to
    others is refused: whoever reads the key can test guessed names against the hashes."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600)
        except FileExistsError:  # made meanwhile by another run: read that one
            return load_key(path)
        except OSError as e:
            raise LogError(f"cannot create key file {path}: {e.strerror or e}") from None
        try:
            os.write(fd, (secrets.token_hex(KEY_BYTES) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        return load_key(path)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise LogError(f"key file {path}: a symbolic link (refused)") from None
        raise LogError(f"cannot read key file {path}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise LogError(f"key file {path}: not a regular file")
        if st.st_uid != os.geteuid():
            raise LogError(f"key file {path}: not yours (owner uid {st.st_uid})")
        if st.st_mode & 0o077:
            raise LogError(f"key file {path}: open to others (mode {st.st_mode & 0o777:o}; "
                           "chmod 600 it)")
        data = os.read(fd, KEY_MAX + 1)
    finally:
        os.close(fd)
    key = data.rstrip()
    if len(data) > KEY_MAX or len(key) < 16:
        raise LogError(f"key file {path}: a key is 16 to {KEY_MAX} bytes (this has {len(key)})")
    return key
