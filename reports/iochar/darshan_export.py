"""Writer of Darshan logs (format 3.41) from an iochar log: `iochar-parser --to-darshan`.

Written byte by byte from Darshan's documented format rather than through
libdarshan-util's writer (darshan_log_create/put_*, exported by the `darshan` wheel):
that writer opens the output by name with creat(), which truncates a file already
there and follows a symlink (our rule: an O_EXCL temp file linked into place, nothing
replaced), writes whatever log version the installed wheel was built with, and would
make exporting depend on PyDarshan being installed. The format is small and fixed (docs/log-format.md,
"Writing Darshan logs"):

    header (1328 bytes, uncompressed, little-endian as written by x86-64/aarch64):
      char[8] "3.41", i64 magic 6567223, u8 compression (0: zlib), 7 pad bytes,
      u64 partial flags (bit = module id), name map (u64 off, u64 len),
      64 module maps (off, len), 64 u32 module record versions
    job region (zlib): struct darshan_job (uid, start s, start ns, end s, end ns,
      nprocs, jobid: 7 x i64; char[1024] metadata "key=value\\n" lines, NUL ended),
      then the command line, the mount table ("\\n<fs type>\\t<mount point>" each)
      and a NUL, at most 4096 bytes in all
    name region (zlib): per record, u64 id then the NUL-ended name
    one region (zlib) per module, in module-id order: its records back to back,
      each u64 id, i64 rank, [u64 file record id], i64 counters[], f64 fcounters[]

Every region is one zlib (RFC 1950) stream and the maps give compressed offsets and
lengths. Fields iochar cannot fill hold -1, Darshan's "unknown".
"""

from __future__ import annotations

import math
import os
import re
import struct
import zlib
from pathlib import Path

import numpy as np

from . import __version__, atomicfile
from .advice import pfl
from .darshan_counters import LUSTRE_ID, LUSTRE_VERSION, MODULES, UNFILLED, mapping
from .logformat import LogError

VERSION = b"3.41"
MAGIC = 6567223
MAX_MODS = 64
HEADER_SIZE = 8 + 8 + 8 + 8 + 16 + 16 * MAX_MODS + 4 * MAX_MODS  # 1328
JOB_STRUCT = struct.Struct("<7q1024s")  # 1080 bytes
JOB_RECORD_SIZE = 4096  # job struct + command line + mounts + NUL, as readers read it
METADATA_LEN = 1024
# the mount entry written when the log has none (or none fits): file system unknown
NO_MOUNT = b"\nunknown\t/"
# iochar JOB keys carried as Darshan metadata lines (key=value), in this order
META_KEYS = ("hostname", "user", "jobid", "partial", "folded_files", "recovered", "ended_by",
             "exit_status", "abort_code", "missing_ranks", "finalized", "mpi", "nnodes")


def _region(payload: bytes) -> bytes:
    """One region's zlib stream: zlib's default level (Darshan's), level 1 past 1 MiB
    (as iochar's own writer does for large payloads; readers read any level)."""
    if not payload:
        return b""
    return zlib.compress(payload, 6 if len(payload) <= 1 << 20 else 1)


def _clean(text: str, limit: int) -> bytes:
    """Job-region text: bytes as recorded (surrogateescape), no newline or NUL (the
    reader splits the exe and mount lines on them), at most `limit` bytes."""
    raw = os.fsencode(text) if isinstance(text, str) else bytes(text)
    return re.sub(rb"[\x00\n\r]", b" ", raw)[:limit]


def _seconds(t) -> tuple:
    t = float(t or 0.0)
    if not math.isfinite(t) or t < 0:
        return 0, 0
    s = math.floor(t)
    ns = min(int(round((t - s) * 1e9)), 999_999_999)
    return s, ns


def _jobid(v) -> int:
    m = re.match(r"\s*(\d{1,18})", str(v or ""))
    return int(m.group(1)) if m else -1


def _metadata(job: dict) -> bytes:
    """Darshan's metadata lines: lib_ver (PyDarshan's summary shows it) and the iochar
    JOB keys that have no job-record field; lines that do not fit are left out."""
    lines = [f"lib_ver=iochar {job.get('version', __version__)}"]
    for k in META_KEYS:
        v = job.get(k)
        if v is None or (k == "jobid" and str(v).isdigit()) or (k == "partial" and not v):
            continue
        lines.append(f"{'iochar_' + k if k in ('partial', 'jobid') else k}={v}")
    out = b""
    for line in lines:
        b = _clean(line, METADATA_LEN) + b"\n"
        if len(out) + len(b) < METADATA_LEN:
            out += b
    return out


def _job_region(log, paths: list) -> bytes:
    j = log.job
    s0, ns0 = _seconds(j.get("start_time"))
    s1, ns1 = _seconds(j.get("end_time"))
    rec = JOB_STRUCT.pack(int(j.get("uid", -1)), s0, ns0, s1, ns1, int(j.get("nprocs", 1)),
                          _jobid(j.get("jobid")), _metadata(j))
    # readers end the exe line at the first mount entry's newline: there is always one
    room = JOB_RECORD_SIZE - JOB_STRUCT.size - 1 - len(NO_MOUNT)  # and the trailing NUL
    exe = _clean(j.get("cmdline") or j.get("exe") or "", room)
    room += len(NO_MOUNT) - len(exe)
    tail = b""
    for point, fstype in _mounts(log, paths):
        entry = b"\n" + fstype + b"\t" + point
        if len(entry) <= room:
            tail += entry
            room -= len(entry)
    return rec + exe + (tail or NO_MOUNT) + b"\0"


def _mounts(log, paths: list) -> list:
    """(mount point, fs type) as bytes, those holding a recorded file first (the job
    region has room for ~3 KB of command line and mounts); entries with white space
    are left out (Darshan's reader splits them on it)."""
    m = getattr(log, "mounts", None)
    if m is None or not len(m):
        return []
    rows = [(os.fsencode(str(p)), os.fsencode(str(t))) for p, t in
            zip(m["mount_point"].tolist(), m["fs_type"].tolist())]
    rows = [r for r in rows if r[0] and r[1] and not re.search(rb"\s", r[0] + r[1])]
    used = set(paths)

    def holds(point):
        pre = point.rstrip(b"/") + b"/"
        return any(p == point or p.startswith(pre) for p in used)
    return sorted(rows, key=lambda r: (not holds(r[0]), -len(r[0])))


def _file_ids(df, files: dict) -> np.ndarray:
    """H5D and PNETCDF_VAR records carry their file's record id: the file record whose
    path, then ':', starts the dataset or variable name (the longest such)."""
    by_path = {path: rid for rid, path in files.items()}
    out = np.zeros(len(df), dtype=np.uint64)
    for i, name in enumerate(df["path"].tolist()):
        cuts = [m.start() for m in re.finditer(":", name)]
        out[i] = next((by_path[name[:c]] for c in reversed(cuts) if name[:c] in by_path), 0)
    return out


def _records(mod, df, ours: list, file_ids) -> bytes:
    fields = [("id", "<u8"), ("rank", "<i8")]
    if mod.file_rec_id:
        fields.append(("file_rec_id", "<u8"))
    fields += [("c", "<i8", (len(mod.ints),)), ("f", "<f8", (len(mod.floats),))]
    arr = np.zeros(len(df), dtype=np.dtype(fields))
    arr["id"] = df["record_id"].to_numpy(dtype=np.uint64)
    arr["rank"] = df["rank"].to_numpy(dtype=np.int64)
    if mod.file_rec_id:
        arr["file_rec_id"] = file_ids
    arr["c"], arr["f"] = -1, -1.0
    for k, src in enumerate(mapping(mod, ours)):
        ints = k < len(mod.ints)
        if not src:
            if ints and mod.ints[k] in UNFILLED:
                arr["c"][:, k] = UNFILLED[mod.ints[k]]
            continue
        vals = sum(df[s].to_numpy(dtype=np.int64 if ints else np.float64) for s in src)
        if ints:
            arr["c"][:, k] = vals
        else:
            arr["f"][:, k - len(mod.ints)] = vals
    return arr.tobytes()


def _lustre(df, comps=None) -> bytes:
    """One LUSTRE record per POSIX record on Lustre: the components the runtime listed
    for it (the LUSTRE module's record of the same id and rank: a composite's data
    components over the accessed extent), else the one component iochar describes; OSTs
    unknown (-1) but the first stripe of a one-component record."""
    need = ("POSIX_LUSTRE_STRIPE_SIZE", "POSIX_LUSTRE_STRIPE_COUNT", "POSIX_LUSTRE_STRIPE_OFFSET")
    if any(c not in df for c in need):
        return b""
    listed = {}
    if comps is not None and pfl.slots(comps.columns, "LUSTRE_"):
        listed = dict(zip(zip(comps["record_id"].tolist(), comps["rank"].tolist()),
                          pfl.from_columns(comps, "LUSTRE_")))
    out = []
    for rid, rank, size, count, first in zip(
            df["record_id"].tolist(), df["rank"].tolist(), *(df[c].tolist() for c in need)):
        mine = listed.get((rid, rank))
        if mine:  # Darshan's order: size, count, pattern, flags, start, end, mirror
            body = b"".join(struct.pack("<7q16s", c[2], max(c[3], 0), c[6], c[4], c[0],
                                        -1 if c[1] == math.inf else c[1], c[5], b"")
                            for c in mine)
            stripes = sum(max(c[3], 0) for c in mine)
            out.append(struct.pack("<Qqqq", rid, rank, len(mine), stripes) + body
                       + struct.pack(f"<{stripes}q", *[-1] * stripes))
            continue
        if size <= 0 or count <= 0:  # not on Lustre, on the MDT only, or not decided yet
            continue
        size, count, first = int(size), int(count), int(first)
        comp = struct.pack("<7q16s", size, count, -1, -1, -1, -1, -1, b"")
        osts = [first if first >= 0 else -1] + [-1] * (count - 1)
        out.append(struct.pack("<Qqqq", rid, rank, 1, count) + comp
                   + struct.pack(f"<{count}q", *osts))
    return b"".join(out)


def to_bytes(log) -> bytes:
    """The Darshan log (bytes) of an iochar log (an iochar.Log)."""
    if log.job.get("source") == "darshan":
        raise LogError(f"{log.files[0]}: is a Darshan log already")
    regions, names, partial = {}, {}, 0
    folded = {k.split(".", 1)[1] for k, v in log.job.items() if k.startswith("folded.") and v}
    files = {}  # iochar module -> {record id: path}, for the file ids of H5D/PNETCDF_VAR
    for mod in MODULES:
        if mod.ours not in log.modules:
            continue
        df = log.records(mod.ours)
        if not len(df):
            continue
        ids = df["record_id"].tolist()
        names.update(zip(ids, df["path"].tolist()))
        files[mod.ours] = dict(zip(ids, df["path"].tolist()))
        parent = {"H5D": "H5F", "PNETCDF_VAR": "PNETCDF_FILE"}.get(mod.ours)
        fid = _file_ids(df, files.get(parent, {})) if mod.file_rec_id else None
        regions[mod.id] = (mod.version, _records(mod, df, [n for n, _ in log.schema(mod.ours)], fid))
        if mod.ours in folded:
            partial |= 1 << mod.id
        if mod.ours == "POSIX":
            lu = _lustre(df, log.records("LUSTRE") if "LUSTRE" in log.modules else None)
            if lu:
                regions[LUSTRE_ID] = (LUSTRE_VERSION, lu)
    name_blob = b"".join(struct.pack("<Q", int(i)) + os.fsencode(p).split(b"\0")[0] + b"\0"
                         for i, p in names.items())
    body = bytearray()
    job = _region(_job_region(log, [os.fsencode(p) for p in names.values()]))
    body += job
    off = HEADER_SIZE + len(body)
    name_map = (0, 0)
    if name_blob:
        z = _region(name_blob)
        name_map, off = (off, len(z)), off + len(z)
        body += z
    maps, vers = [(0, 0)] * MAX_MODS, [0] * MAX_MODS
    for mid in sorted(regions):
        ver, blob = regions[mid]
        z = _region(blob)
        maps[mid], vers[mid] = (off, len(z)), ver
        off += len(z)
        body += z
    head = struct.pack("<8sqB7xQ", VERSION, MAGIC, 0, partial) + struct.pack("<2Q", *name_map)
    head += b"".join(struct.pack("<2Q", *m) for m in maps) + struct.pack(f"<{MAX_MODS}I", *vers)
    assert len(head) == HEADER_SIZE
    return bytes(head + body)


def write_new(path, data: bytes) -> Path:
    """Write `data` as a new 0600 file at `path`, never replacing one, with no name on
    the way another user could swap (atomicfile.write_new: an unnamed file linked in)."""
    path = Path(path)
    if os.path.lexists(path):
        raise LogError(f"{path}: exists (not overwritten)")
    try:
        atomicfile.write_new(path, data)
    except FileExistsError:
        raise LogError(f"{path}: exists (not overwritten)") from None
    except OSError as e:
        raise LogError(f"cannot write {path}: {e.strerror or e}") from None
    return path


def export(log, out) -> Path:
    """Write `log` (an iochar.Log) as the Darshan log `out`; returns its path."""
    return write_new(out, to_bytes(log))
