"""An independent fuzz of the log readers (issue 31), beside tests/helpers/readerfuzz.py:
it shares no code with it. Instead of mutating real logs it *generates* them with the
exact Python writer (iochar.writer, formats 1, 2 and 3, random chunking) from random
jobs, schemas, records, names, series, ranks, TOPK and ROLES, damages some (payload
bytes re-compressed with valid CRCs, declared counts, raw bytes with the header CRCs
fixed), and writes per-rank sets as directories. Every case goes through the console
entry points in process (iochar-report text or --json, iochar-parser every other case,
sometimes --total --file --perf and --html), which must exit 0/1/2 with, on stderr, at
most one error line (warnings aside), exactly one when nothing was printed, and take
at most 15 s of CPU.

    PYTHONPATH=reports python bench/fuzz_generated.py --cases 10000 --seed 1

Prints the counts and each failure as JSON; exit 1 on a failure. Not run in CI.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import resource
import shutil
import struct
import sys
import tempfile
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

import iochar
from iochar import codec
from iochar import log as L
from iochar import writer as W
from iochar.cli import parser, report
from iochar.schema import OP, ROLE

MAX_CPU = 15.0
ODD = 0.002  # per counter column: one odd value (-1, NaN, 2**63-1...) in it
INTS = [0, 1, 2, 7, 4096, -1, -2**63, 2**63 - 1, 2**40, 10**6]
FLOATS = [0.0, 0.5, 1e-9, 3.25, 1e9, -1.0, float("nan"), float("inf"), 1e300]
NAME_BYTES = [b"/", b"a", b"b", b"/dir", b"\xff", b"\x1b[2J", b"\n", b"$\\x$", b"\0"]
MODULE_OF = {"POSIX": "posix", "STDIO": "stdio", "MPIIO": "mpiio"}


def schemas() -> dict:
    """Real schemas and roles (today's runtime's): the seeds' logs, read once."""
    out = {}
    corpus = Path(__file__).resolve().parents[1] / "tests" / "corpus" / "v3"
    for f in ("mpi4.iochar", "stdio.iochar"):
        log = iochar.open(corpus / f)
        for m in log.modules:
            out[m] = [(n, op, role) for n, op, role in log.schema_roles(m)]
    return out


def pick(rng, pool, p_odd=0.003):
    return rng.choice(pool) if rng.random() < p_odd else None


def gen_names(rng, n: int) -> list:
    out, prev = [], b"/scratch/run"
    for _ in range(n):
        if rng.random() < 0.002:
            name = rng.choice(NAME_BYTES) * rng.choice([1, 4095, 4105, 4106, 9000])
        else:
            keep = prev[:rng.randrange(len(prev) + 1)]
            name = keep + b"".join(rng.choices(NAME_BYTES[:5], k=rng.randint(1, 12)))
            if rng.random() < 0.01:
                name += rng.choice(NAME_BYTES[5:])
        out.append(name or b"/x")
        prev = out[-1]
    return out


def gen_records(rng, schema: list, ids: np.ndarray, nprocs: int, rank) -> pd.DataFrame:
    n = len(ids)
    cols = {"record_id": ids,
            "rank": np.full(n, rank if rank is not None else -1, np.int64)}
    for name, _, _ in schema:
        if rng.random() < 0.6:
            continue  # absent: 0
        if "_F_" in name:
            v = np.round(np.abs(np.random.default_rng(rng.getrandbits(32)).random(n)) * 10, 9)
            odd = pick(rng, FLOATS, ODD)
        else:
            v = np.random.default_rng(rng.getrandbits(32)).integers(0, 1000, n)
            odd = pick(rng, INTS, ODD)
        if odd is not None and n:
            v = v.astype(np.float64 if "_F_" in name else np.int64)
            v[rng.randrange(n)] = odd
        cols[name] = v
    if rng.random() < 0.02 and n:  # a rank past nprocs
        cols["rank"][rng.randrange(n)] = rng.choice([nprocs, -2, 2**40])
    return pd.DataFrame(cols)


def gen_log(rng, sch: dict, job_base: dict, rank=None) -> bytes:
    """One log: random modules of the real schemas, names, records, series, ranks,
    ROLES, TOPK (per-rank), in format 1, 2 or 3."""
    version = rng.choice([3, 3, 3, 2, 1])
    nprocs = job_base["nprocs"]
    job = dict(job_base)
    if rank is not None:
        job.update(rank=rank, partial=2, finalized=0)
    if rng.random() < 0.05:
        job[rng.choice(["nprocs", "start_time", "end_time", "rank", "partial", "exe"])] = \
            rng.choice([-1, 2**40, 1e20, float("nan"), "text", 0])
    nfiles = rng.choice([0, 1, 3, 10, 30] + [300] * (rng.random() < 0.05))
    paths = gen_names(rng, nfiles)
    ids = codec.fnv1a64_many(paths) if paths else np.empty(0, np.uint64)
    if rng.random() < 0.05 and nfiles:
        ids[rng.randrange(nfiles)] = np.uint64(0xFFFFFFFFFFFFFFFF)
    modules, series, ranks = {}, {}, {}
    for m in rng.sample(sorted(sch), rng.randint(1, len(sch))):
        schema = sch[m]
        take = ids[np.random.default_rng(rng.getrandbits(32)).random(len(ids)) < 0.7]
        spec = {"schema": [(n, op) for n, op, _ in schema],
                "records": gen_records(rng, schema, take, nprocs, rank)}
        if version >= 3 or rng.random() < 0.5:
            spec["roles"] = [ROLE[r] if rng.random() > 0.01 else rng.choice([11, 255])
                             for _, _, r in schema]
        ops = [op for _, op, _ in schema]
        ntab = sum(1 for i, op in enumerate(ops) if op == OP["TOPK_VAL"]
                   and (i == 0 or ops[i - 1] != OP["TOPK_VAL"]))
        if rank is not None and ntab and len(take) and rng.random() < 0.7:
            slots = rng.choice([16, 16, 4, 1, 4097])
            spec["topk"] = (take, np.random.default_rng(rng.getrandbits(32)).integers(
                0, 5, (len(take), ntab, 2, slots)))
        modules[m] = spec
        nb = rng.choice([1, 4, 64, 5000])
        series[m] = {"width": rng.choice([0.001, 0.001, 3.0] * 10 + [2.0**-30, 1e-12]),
                     **{k: np.random.default_rng(rng.getrandbits(32)).integers(0, 9, nb)
                        for k in L.SERIES_KEYS}}
        rr = list(range(nprocs)) if rank is None else [rank]
        ranks[m] = {"rank": rr, **{k: [rng.choice([0, 1, 5])] * len(rr) for k in
                                   ("reads", "writes", "bytes_read", "bytes_written")},
                    **{k: [rng.choice([0.0, 0.25, -1.0 if rng.random() < 0.02 else 1.0])]
                       * len(rr) for k in ("read_time", "write_time", "meta_time")}}
    names = {int(i): p.decode("utf-8", "surrogateescape") for i, p in zip(ids.tolist(), paths)}
    try:
        return W.encode_log(job, modules, names=names, series=series, ranks=ranks,
                            mounts=[("/", "ext4", 4096), ("/scratch", "lustre", 1 << 20)],
                            chunk=rng.choice([None, None, 7, 300]), version=version)
    except (ValueError, OverflowError, struct.error, TypeError):
        return W.encode_log(dict(job_base), {}, names={}, version=version)


def sections(data: bytes):
    """(version, [(offset, header start, payload start, compressed length)])."""
    _, version, hsize, _, nsec, _ = L.HEADER.unpack_from(data)
    out, off = [], hsize
    for _ in range(nsec):
        kind, mod, count, pcrc, ulen, clen, start = L.section_at(data, off, version)
        out.append((off, start, clen, kind, mod, count, ulen))
        off = start + clen
    return version, out


def rebuild(data: bytes, i: int, payload: bytes | None = None, count: int | None = None) -> bytes:
    """The log with section i's payload (or count) replaced, every CRC and size right."""
    version, secs = sections(data)
    parts = [data[:L.HEADER.size]]
    for j, (_, start, clen, kind, mod, cnt, ulen) in enumerate(secs):
        comp = data[start:start + clen]
        if j == i:
            if payload is None:
                payload = (codec.decompressor() if version >= 2 else zlib.decompressobj()
                           ).decompress(comp)
            comp = codec.compress(payload) if version >= 2 else zlib.compress(payload)
            ulen, cnt = len(payload), cnt if count is None else count
        parts.append(L.section_head(kind, mod, cnt, zlib.crc32(comp), ulen, len(comp), version)
                     + comp)
    body = b"".join(parts[1:])
    head = bytearray(data[:L.HEADER.size])
    struct.pack_into("<Q", head, 16, L.HEADER.size + len(body))
    struct.pack_into("<I", head, 28, zlib.crc32(bytes(head[:28])))
    return bytes(head) + body


def damage(rng, data: bytes) -> tuple[bytes, str]:
    """Payload bytes (valid framing around them), a declared count, or raw bytes."""
    version, secs = sections(data)
    i = rng.randrange(len(secs))
    kind = secs[i][3]
    r = rng.random()
    if r < 0.55:
        comp = data[secs[i][1]:secs[i][1] + secs[i][2]]
        buf = bytearray((codec.decompressor() if version >= 2 else zlib.decompressobj()
                         ).decompress(comp))
        for _ in range(rng.randint(1, 6)):
            if buf and rng.random() < 0.8:
                buf[rng.randrange(len(buf))] = rng.choice([0, 1, 0x7F, 0x80, 0xFF,
                                                           rng.randrange(256)])
            elif rng.random() < 0.5:
                del buf[rng.randrange(len(buf) + 1):][:rng.randint(1, 9)]
            else:
                at = rng.randrange(len(buf) + 1)
                buf[at:at] = bytes(rng.choice([1, 8, 64]))
        return rebuild(data, i, bytes(buf)), f"payload of {kind!r}"
    if r < 0.8:
        c = rng.choice([0, 1, secs[i][5] + 1, max(secs[i][5] - 1, 0), 10**6, 10**7, 2**32 - 1])
        return rebuild(data, i, count=c), f"count of {kind!r} = {c}"
    raw = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        raw[rng.randrange(L.HEADER.size, len(raw))] ^= 1 << rng.randrange(8)
    return bytes(raw), "raw bits"


def run(main, argv) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    t0 = time.process_time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue(), time.process_time() - t0


def problem(code, out, err, cpu) -> str | None:
    lines = err.splitlines()
    errors = [x for x in lines if ": error: " in x]
    if code not in (0, 1, 2):
        return f"exit {code}"
    if cpu > MAX_CPU:
        return f"{cpu:.1f} s CPU"
    if "Traceback" in err or "cannot read the log (" in err:
        return "unexpected exception"
    if len(errors) > 1 or any(": error: " not in x and ": warning: " not in x for x in lines):
        return "stderr is more than one error line and warnings"
    if code == 2 and not out and (len(lines) != 1 or not errors):
        return "nothing printed and not exactly one error line"
    if code == 0 and errors:
        return "error line with exit 0"
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", metavar="DIR", help="copy each failing case here")
    ap.add_argument("--progress", metavar="FILE", help="rewrite the counts here every 50 cases")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    sch = schemas()
    stats = {"cases": 0, "clean": 0, "damaged": 0, "dirs": 0, "exit": {}, "calls": 0,
             "max_call_cpu": 0.0, "failures": []}
    tmp = Path(tempfile.mkdtemp(prefix="iochar-fuzzgen-"))
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    t_start = time.time()
    try:
        for i in range(args.cases):
            case = tmp / f"case{i % 2}"
            shutil.rmtree(case, ignore_errors=True)
            case.mkdir()
            job = {"version": "fuzz", "format": 3, "nprocs": rng.choice([1, 1, 4, 4, 4, 16]),
                   "uid": 1000, "start_time": 1.7e9, "end_time": 1.7e9 + rng.random() * 100,
                   "exe": "/bin/app", "cmdline": "/bin/app -x", "jobid": str(rng.randrange(99)),
                   "hostname": "n0", "time_origin": "start_time"}
            note = ""
            if job["nprocs"] > 1 and rng.random() < 0.4:  # a directory of per-rank logs
                stats["dirs"] += 1
                nbad = rng.choice([0, 1, 1, 2, job["nprocs"]])
                bad = set(rng.sample(range(job["nprocs"]), min(nbad, job["nprocs"])))
                for r in range(job["nprocs"]):
                    data = gen_log(rng, sch, job, rank=r)
                    if r in bad:
                        data, how = damage(rng, data)
                        note += f"rank {r}: {how}; "
                    (case / f"app.rank{r}.iochar").write_bytes(data)
                target = str(case)
            else:
                data = gen_log(rng, sch, job)
                if rng.random() < 0.6:
                    data, note = damage(rng, data)
                    stats["damaged"] += 1
                else:
                    stats["clean"] += 1
                target = str(case / "job.iochar")
                Path(target).write_bytes(data)
            stats["cases"] += 1
            # text and JSON build the same report: one of them a case, the parser every other
            calls = [(report.main, [target] + ["--json"] * (i % 2))]
            if i % 2 == 0:
                calls.append((parser.main, [target]))
            if i % 10 == 0:
                calls.append((parser.main, [target, "--total", "--file", "--perf"]))
            if i % 500 == 0:
                calls.append((report.main, [target, "--html", str(tmp / "page.html")]))
            for fn, argv in calls:
                code, out, err, cpu = run(fn, argv)
                stats["calls"] += 1
                stats["max_call_cpu"] = round(max(stats["max_call_cpu"], cpu), 2)
                stats["exit"][str(code)] = stats["exit"].get(str(code), 0) + 1
                why = problem(code, out, err, cpu)
                if why:
                    stats["failures"].append({"case": i, "seed": args.seed, "argv": argv[1:],
                                              "why": why, "damage": note, "stderr": err[-400:]})
                    if args.keep:
                        dst = Path(args.keep) / f"seed{args.seed}-case{i}"
                        shutil.copytree(case, dst, dirs_exist_ok=True)
            if i % 500 == 0:
                print(f"case {i}: {len(stats['failures'])} failures, "
                      f"{time.time() - t_start:.0f} s", file=sys.stderr, flush=True)
            if args.progress and i % 50 == 49:
                tmp_file = Path(args.progress + ".tmp")
                tmp_file.write_text(json.dumps(stats))
                tmp_file.replace(args.progress)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    use = resource.getrusage(resource.RUSAGE_SELF)
    stats["maxrss_bytes"] = use.ru_maxrss * 1024
    stats["cpu_seconds"] = round(use.ru_utime + use.ru_stime, 1)
    stats["wall_seconds"] = round(time.time() - t_start, 1)
    print(json.dumps(stats, indent=1))
    return 1 if stats["failures"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
