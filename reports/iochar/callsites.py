"""Call sites and trace: parse CALLSITE / LOADMAP / TRACE sections, symbolize stacks
offline (addr2line, cached), and attribute advice to the code that caused it."""

from __future__ import annotations

import bisect
import os
import shutil
import struct
import subprocess

import numpy as np
import pandas as pd

from .frames import text_column
from .logformat import LogError
from .summary import human_bytes

FRAMES, SIZES = 6, 4
# One CALLSITE entry (docs/log-format.md): 248 bytes.
ENTRY_DTYPE = np.dtype([
    ("hash", "<u8"), ("nframes", "<u4"), ("nranks", "<u4"),
    ("reads", "<i8"), ("writes", "<i8"), ("meta", "<i8"),
    ("bytes_read", "<i8"), ("bytes_written", "<i8"),
    ("read_time", "<f8"), ("write_time", "<f8"), ("meta_time", "<f8"),
    ("size", "<i8", (SIZES,)), ("size_count", "<i8", (SIZES,)), ("size_other", "<i8"),
    ("frames", "<u8", (FRAMES, 2)),
])
assert ENTRY_DTYPE.itemsize == 248
TRACE_DTYPE = np.dtype([
    ("record_id", "<u8"), ("offset", "<i8"), ("length", "<i8"), ("start", "<f8"),
    ("end", "<f8"), ("rank", "<i4"), ("thread", "<u4"), ("module", "<u2"), ("op", "u1"),
    ("flags", "u1"), ("reserved", "<u4"),
])
assert TRACE_DTYPE.itemsize == 56
OPS = ("read", "write", "meta")
SYSTEM_PREFIXES = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "linux-vdso", "linux-gate")
SUMS = ["nranks", "reads", "writes", "meta", "bytes_read", "bytes_written", "read_time",
        "write_time", "meta_time"]


# ---- parsing -----------------------------------------------------------------

def _parse_loadmap(buf: bytes, count: int, objects: dict):
    off = 0
    try:
        for _ in range(count):
            key, base, blen = struct.unpack_from("<QQH", buf, off)
            off += 18
            if off + blen > len(buf):
                raise struct.error
            build_id = bytes(buf[off:off + blen]).hex()
            off += blen
            (plen,) = struct.unpack_from("<H", buf, off)
            if off + 2 + plen > len(buf):
                raise struct.error
            path = bytes(buf[off + 2:off + 2 + plen]).decode("utf-8", "surrogateescape")
            off += 2 + plen
            objects.setdefault(key, {"path": path, "base": base, "build_id": build_id})
    except struct.error:
        raise LogError(f"LOADMAP: truncated at entry byte {off}") from None
    if off != len(buf):
        raise LogError(f"LOADMAP: {len(buf) - off} bytes left after {count} entries")


def _parse_trace(buf: bytes, count: int):
    if len(buf) < 16:
        raise LogError("TRACE: payload shorter than its header")
    dropped, rowsize, nmod = struct.unpack_from("<QII", buf)
    off, names = 16, []
    if nmod > (len(buf) - off) // 2:
        raise LogError(f"TRACE: {nmod} module names cannot fit in {len(buf)} bytes")
    for _ in range(nmod):
        if off + 2 > len(buf):
            raise LogError("TRACE: payload ends inside the module names")
        (n,) = struct.unpack_from("<H", buf, off)
        if off + 2 + n > len(buf):
            raise LogError("TRACE: payload ends inside the module names")
        names.append(bytes(buf[off + 2:off + 2 + n]).decode("utf-8", "surrogateescape"))
        off += 2 + n
    if rowsize != TRACE_DTYPE.itemsize or len(buf) - off != count * rowsize:
        raise LogError(f"TRACE: {len(buf) - off} bytes of rows inconsistent with {count} "
                       f"rows of {rowsize} bytes")
    if dropped >= 1 << 63:
        raise LogError(f"TRACE: dropped count {dropped} out of range")
    rows = np.frombuffer(buf, dtype=TRACE_DTYPE, offset=off, count=count)
    for k in ("start", "end"):
        if not np.isfinite(rows[k]).all() or (np.abs(rows[k]) > 1e10).any():
            raise LogError(f"TRACE: a row's {k} time is not a number of seconds")
    if (rows["length"] < -1).any() or (rows["offset"] < -1).any():
        raise LogError("TRACE: a row's offset or length is below -1")
    return dropped, names, rows


def _parse_callsite(buf: bytes, count: int, module: str) -> np.ndarray:
    if len(buf) != count * ENTRY_DTYPE.itemsize:
        raise LogError(f"CALLSITE {module}: payload of {len(buf)} bytes "
                       f"inconsistent with {count} entries")
    arr = np.frombuffer(buf, dtype=ENTRY_DTYPE, count=count)
    if (arr["nframes"] > FRAMES).any():
        raise LogError(f"CALLSITE {module}: more than {FRAMES} frames")
    for c in SUMS[1:] + ["size_count", "size_other"]:
        v = arr[c]
        if (v.dtype.kind == "f" and not np.isfinite(v).all()) or (v < 0).any():
            raise LogError(f"CALLSITE {module}: {c} negative or not a number")
    return arr


def check_section(kind: str, module: str, count: int, buf: bytes) -> None:
    """Validate a CALLSITE, LOADMAP or TRACE payload (the reader calls this when it
    opens a log, so a bad one is refused up front by every tool); LogError if bad."""
    if kind == "CALLSITE":
        _parse_callsite(buf, count, module)
    elif kind == "LOADMAP":
        _parse_loadmap(buf, count, {})
    elif kind == "TRACE":
        _parse_trace(buf, count)


def _entries_frame(chunks: list) -> pd.DataFrame:
    """Merge identical stacks (module, hash) across sections; 'other' has hash 0."""
    cols = {"module": [], "hash": [], "frames": [], "sizes": []}
    for c in SUMS:
        cols[c] = []
    for module, arr in chunks:
        for e in arr:
            n = int(e["nframes"])
            cols["module"].append(module)
            cols["hash"].append(int(e["hash"]))
            cols["frames"].append(tuple((int(o), int(a)) for o, a in e["frames"][:n]))
            sizes = {int(v): int(k) for v, k in zip(e["size"], e["size_count"]) if k}
            if e["size_other"]:
                sizes[-1] = int(e["size_other"])
            cols["sizes"].append(sizes)
            for c in SUMS:
                cols[c].append(e[c].item())
    df = pd.DataFrame(cols)
    if df.empty:
        return df
    agg = {c: "sum" for c in SUMS}
    agg["frames"] = "first"
    agg["sizes"] = lambda s: _merge_sizes(list(s))
    return df.groupby(["module", "hash"], sort=False, as_index=False).agg(agg)


def _merge_sizes(dicts: list) -> dict:
    out: dict = {}
    for d in dicts:
        for v, k in d.items():
            out[v] = out.get(v, 0) + k
    return out


class Observed:
    """What the observers recorded: call sites (merged over ranks), objects, trace."""

    def __init__(self, extra_sections: list, names: dict | None = None):
        chunks, self.objects, traces = [], {}, []
        self.trace_dropped, self.trace_sections = 0, 0
        for kind, module, count, buf in extra_sections:
            if kind == "CALLSITE":
                chunks.append((module, _parse_callsite(buf, count, module)))
            elif kind == "LOADMAP":
                _parse_loadmap(buf, count, self.objects)
            elif kind == "TRACE":
                dropped, mods, rows = _parse_trace(buf, count)
                self.trace_dropped += dropped
                self.trace_sections += 1
                traces.append((mods, rows))
        self.sites = _entries_frame(chunks)
        self.trace = _trace_frame(traces, names or {})

    @property
    def empty(self) -> bool:
        return self.sites.empty and not self.trace_sections


def _trace_frame(traces: list, names: dict) -> pd.DataFrame | None:
    if not traces:
        return None
    parts = []
    for mods, rows in traces:
        df = pd.DataFrame({k: rows[k] for k in ("rank", "thread", "record_id", "offset",
                                                   "length", "start", "end")})
        df.insert(0, "module", text_column([mods[i] if i < len(mods) else "?"
                                            for i in rows["module"]], df.index))
        df["op"] = [OPS[o] if o < 3 else "?" for o in rows["op"]]
        parts.append(df)
    df = pd.concat(parts, ignore_index=True).sort_values(["start", "rank"], kind="stable")
    df["path"] = text_column([names.get(int(i), "?") for i in df["record_id"]], df.index)
    return df.reset_index(drop=True)


def from_log(log) -> Observed | None:
    """Observed data of an iochar.Log, or None when it has no observer sections."""
    extra = [e for e in getattr(log, "extra_sections", [])
             if e[0] in ("CALLSITE", "LOADMAP", "TRACE")]
    if not extra:
        return None
    return Observed(extra, log.names if any(e[0] == "TRACE" for e in extra) else None)


# ---- symbolization -----------------------------------------------------------

def _build_id(path: str) -> str | None:
    """The GNU build-id of an ELF file (hex), or None when it cannot be read."""
    try:  # pyelftools is optional (not in the package's dependencies): imported when needed
        from elftools.common.exceptions import ELFError
        from elftools.elf.elffile import ELFFile
    except ImportError:
        return None
    try:
        with open(path, "rb") as f:
            for sec in ELFFile(f).iter_sections():
                if sec["sh_type"] == "SHT_NOTE":
                    for note in sec.iter_notes():
                        if note["n_type"] == "NT_GNU_BUILD_ID":
                            return note["n_desc"]
    except (OSError, ELFError, Exception):
        # not an ELF we can read (the LOADMAP path comes from the log): no mismatch
        return None
    return None


def _exported_functions(path: str):
    """(addresses, names) of the functions an ELF file exports (.dynsym), sorted, when
    it has no .symtab (stripped); None when it has one or cannot be read."""
    try:  # pyelftools is optional (not in the package's dependencies): imported when needed
        from elftools.common.exceptions import ELFError
        from elftools.elf.elffile import ELFFile
    except ImportError:
        return None
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            if elf.get_section_by_name(".symtab") is not None:
                return None
            dyn = elf.get_section_by_name(".dynsym")
            syms = sorted((s["st_value"], s.name) for s in (dyn.iter_symbols() if dyn else ())
                          if s["st_info"]["type"] in ("STT_FUNC", "STT_GNU_IFUNC")
                          and s["st_shndx"] != "SHN_UNDEF" and s["st_value"] and s.name)
    except (OSError, ValueError, KeyError, ELFError):
        return None
    return [a for a, _ in syms], [n for _, n in syms]


def _nearest_export(table, vaddr: int):
    """{'function', 'symbol'} of the exported function at or before the call in vaddr."""
    addrs, names = table
    i = bisect.bisect_right(addrs, max(vaddr - 1, 0)) - 1
    if i < 0:
        return None
    return {"function": names[i], "symbol": f"{names[i]}+{vaddr - addrs[i]:#x}",
            "file": None, "line": None}


class Symbolizer:
    """(object key, vaddr) -> (function, file, line), one addr2line run per object.
    A stripped object (no .symtab) is named by its nearest exported function
    instead: addr2line would give that name as if it were exact."""

    def __init__(self, objects: dict):
        self.objects = objects
        self.cache: dict = {}
        self.tool = shutil.which("addr2line")

    def _usable(self, obj: dict) -> bool:
        path = obj["path"]
        if not self.tool or not path.startswith("/") or not os.path.isfile(path):
            return False
        if obj.get("build_id"):
            found = _build_id(path)
            if found is not None and found != obj["build_id"]:
                return False  # the binary was rebuilt since: its lines would lie
        return True

    def resolve(self, frames) -> None:
        want: dict = {}
        for key, vaddr in frames:
            if (key, vaddr) not in self.cache and key in self.objects:
                want.setdefault(key, set()).add(vaddr)
        for key, addrs in want.items():
            obj, addrs = self.objects[key], sorted(addrs)
            result = [None] * len(addrs)
            if self._usable(obj):
                # return addresses: the call is the instruction before (addr - 1)
                cmd = [self.tool, "-f", "-C", "-e", obj["path"]] + [hex(max(a - 1, 0))
                                                                   for a in addrs]
                try:
                    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                                         check=False)
                    lines = out.stdout.splitlines()
                    if out.returncode == 0 and len(lines) == 2 * len(addrs):
                        result = [_parse_a2l(lines[2 * i], lines[2 * i + 1])
                                  for i in range(len(addrs))]
                except (OSError, subprocess.SubprocessError):
                    pass
                # No line from the debug info (none installed): in a stripped object,
                # addr2line's function is a guess; say what it is based on.
                if any(r is None or r["file"] is None for r in result):
                    exports = _exported_functions(obj["path"])
                    if exports is not None:
                        result = [r if r is not None and r["file"] is not None
                                  else _nearest_export(exports, a)
                                  for r, a in zip(result, addrs)]
            for a, r in zip(addrs, result):
                self.cache[(key, a)] = r

    def frame(self, key: int, vaddr: int) -> dict:
        obj = self.objects.get(key, {})
        path = obj.get("path", "?")
        r = self.cache.get((key, vaddr))
        d = {"object": path, "offset": vaddr, "function": None, "file": None, "line": None,
             "symbol": None}
        if r:
            d.update(r)
        return d


def _parse_a2l(func: str, where: str):
    func = None if func.strip() in ("??", "") else func.strip()
    file, _, line = where.strip().rpartition(":")
    line = line.split(" ")[0]
    if file in ("??", "") or not line.isdigit() or line == "0":
        file, line = None, None
    return {"function": func, "file": file, "line": int(line) if line else None}


def frame_label(f: dict) -> str:
    """'write_checkpoint at ckpt.c:212'; 'libfoo.so!foo_write+0x1a' in a stripped
    object (nearest exported function); 'libfoo.so+0x1a2b' when unknown."""
    if f.get("symbol"):
        return f"{os.path.basename(f['object'])}!{f['symbol']}"
    if f.get("function") and f.get("file"):
        return f"{f['function']} at {os.path.basename(f['file'])}:{f['line']}"
    if f.get("function"):
        return f"{f['function']} in {os.path.basename(f['object'])}"
    return f"{os.path.basename(f['object'])}+{f['offset']:#x}"


def _is_system(path: str) -> bool:
    return path.startswith(SYSTEM_PREFIXES) or "/libmpi" in path or "/libhdf5" in path \
        or "/libnetcdf" in path or "/libpnetcdf" in path


START_FRAMES = ("_start", "__libc_start_main", "__libc_start_call_main",
                "__libc_start_main_impl", "__libc_csu_init", "_dl_start_user")


def _is_start(f: dict) -> bool:
    return (f.get("function") or "").split("@")[0] in START_FRAMES


# ---- the report's view ---------------------------------------------------------

def table(obs: Observed) -> list:
    """Call sites as plain dicts, symbolized, most time first ('other' last)."""
    if obs is None or obs.sites.empty:
        return []
    sym = Symbolizer(obs.objects)
    sym.resolve([f for fr in obs.sites["frames"] for f in fr])
    out = []
    for r in obs.sites.itertuples(index=False):
        stack = [sym.frame(k, a) for k, a in r.frames]
        # the frame to name: the first in the application, not in a system library
        # nor the C runtime's start-up (whatever its library's path)
        mine = [f for f in stack if not _is_system(f["object"]) and not _is_start(f)]
        user = next((f for f in mine if f["function"]),
                    mine[0] if mine else (stack[0] if stack else None))
        sizes = sorted(((v, k) for v, k in r.sizes.items() if v >= 0),
                       key=lambda t: (-t[1], t[0]))
        out.append({
            "module": r.module, "hash": f"{r.hash:016x}", "other": r.hash == 0,
            "site": "(other sites)" if r.hash == 0 else
                    (frame_label(user) if user else "(no frames)"),
            "function": user.get("function") if user else None,
            "file": user.get("file") if user else None,
            "line": user.get("line") if user else None,
            "stack": [frame_label(f) for f in stack],
            "nranks": int(r.nranks), "reads": int(r.reads), "writes": int(r.writes),
            "meta": int(r.meta), "bytes_read": int(r.bytes_read),
            "bytes_written": int(r.bytes_written), "time_read": float(r.read_time),
            "time_write": float(r.write_time), "time_meta": float(r.meta_time),
            "dominant_size": sizes[0][0] if sizes else None,
            "dominant_size_count": sizes[0][1] if sizes else 0,
        })
    out.sort(key=lambda s: (s["other"], -(s["time_read"] + s["time_write"] + s["time_meta"]),
                            -(s["reads"] + s["writes"] + s["meta"])))
    return out


def _kind_of(advice: dict) -> str:
    """Which ops an advice item is about, from its id and evidence counter names."""
    if advice.get("id", "").startswith(("metadata", "fsync", "many-seeks")):
        return "meta"
    keys = list(advice.get("evidence", {}))
    if any(k.endswith(("_WRITES", "_BYTES_WRITTEN")) for k in keys):
        return "writes"
    if any(k.endswith(("_READS", "_BYTES_READ")) for k in keys):
        return "reads"
    return "all"


def attribute(sites: list, module: str | None, kind: str) -> dict | None:
    """{'site', 'share', 'ops'}: where most of module's ops of this kind come from."""
    pick = [s for s in sites if module is None or s["module"] == module]
    def ops(s):
        return s["reads"] + s["writes"] if kind == "all" else s[kind]
    total = sum(ops(s) for s in pick)
    named = [s for s in pick if not s["other"]]
    if not total or not named:
        return None
    top = max(named, key=ops)
    if not ops(top):
        return None
    return {"site": top["site"], "share": ops(top) / total, "ops": ops(top), "kind": kind,
            "stack": top["stack"]}


def annotate(rep: dict, obs: Observed | None) -> None:
    """Add rep['callsites'], rep['trace'] and, per advice, where it comes from."""
    if obs is None:
        return
    sites = table(obs)
    if sites:
        rep["callsites"] = sites
    if obs.trace_sections:
        rep["trace"] = {"segments": 0 if obs.trace is None else len(obs.trace),
                        "dropped": int(obs.trace_dropped)}
    for a in rep.get("advice", []):
        at = attribute(sites, a.get("module"), _kind_of(a))
        if at:
            a["evidence"]["callsite"] = at["site"]
            a["evidence"]["callsite_share"] = round(at["share"], 4)
            a["where"] = (f"{100 * at['share']:.0f}% of {a.get('module') or 'all'} "
                          f"{at['kind'] if at['kind'] != 'all' else 'ops'} from {at['site']}")


def text_lines(rep: dict, top: int = 10) -> list:
    sites = rep.get("callsites") or []
    out = []
    if sites:
        out += ["", f"call sites ({len(sites)}; top {min(top, len(sites))} by time)"]
        for s in sites[:top]:
            what = []
            if s["reads"]:
                what.append(f"reads {s['reads']:,} ({human_bytes(s['bytes_read'])})")
            if s["writes"]:
                what.append(f"writes {s['writes']:,} ({human_bytes(s['bytes_written'])})")
            if s["meta"]:
                what.append(f"meta {s['meta']:,}")
            if s["dominant_size"] is not None:
                what.append(f"mostly {human_bytes(s['dominant_size'])}")
            t = s["time_read"] + s["time_write"] + s["time_meta"]
            out.append(f"  {s['module']:<6} {s['site']}: " + ", ".join(what)
                       + f", {t:.3g} s" + (f", {s['nranks']} ranks" if s["nranks"] > 1 else ""))
            if len(s["stack"]) > 1:
                out.append("         via " + " < ".join(s["stack"][1:4]))
    tr = rep.get("trace")
    if tr:
        out += ["", f"trace: {tr['segments']:,} segments kept"
                + (f", {tr['dropped']:,} dropped (IOCHAR_TRACE_MEMORY full)" if tr["dropped"]
                   else "")]
    return out

