"""A tree of real-run logs for bench/site_scale.py: the test workloads run under the tool.

    PYTHONPATH=reports python bench/real_tree.py OUT [--logs N]

Runs about 70 small workloads once under build/libiochar.so (POSIX, STDIO, MPI-IO at
1, 2 and 4 ranks, parallel HDF5, NetCDF, Python with h5py / netCDF4 / plain files;
tests/integration's programs with their modes and sizes varied): OUT/runs holds their
logs, unchanged. OUT/tree then holds N logs (default 400) made from them as a site
collects them: each run's log once as it is, then copies whose JOB section alone is
restamped (another jobid, user, start time: other bytes, so another content hash),
spread over dated directories, plus two unreadable logs (truncated, corrupt byte).
Every other section of a copy is the real run's, byte for byte: records, names,
ranks, series. Runs are made once (OUT/runs kept); the tree is remade when N changes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
sys.path.insert(0, str(ROOT / "reports"))

from iochar import logformat as L  # noqa: E402
from iochar.log import from_bytes  # noqa: E402
from iochar.writer import job_payload, section  # noqa: E402

T0 = 1_760_000_000.0  # mid-October 2025, as site_scale.py's generated logs

H5_CHUNKS = """
import h5py, numpy as np
with h5py.File("chunks.h5", "w") as f:
    d = f.create_dataset("field", shape=({n}, 256), dtype="f8", chunks=(1, 256))
    for i in range({n}):
        d[i, :] = np.ones(256)
with h5py.File("chunks.h5", "r") as f:
    x = f["field"][...]
"""
NC_RECORDS = """
import netCDF4, numpy as np
with netCDF4.Dataset("records.nc", "w", format="{fmt}") as ds:
    ds.createDimension("time", None)
    ds.createDimension("x", 100)
    vs = [ds.createVariable(n, "f4", ("time", "x")) for n in "uvwtpq"[:{v}]]
    for t in range({n}):
        for v in vs:
            v[t, :] = np.ones(100, "f4")
"""
PY_FILES = """
import os
for i in range({files}):
    with open(f"part{{i}}.txt", "w") as f:
        for j in range({lines}):
            f.write(f"{{i}} {{j}} " + "x" * 60 + "\\n")
for i in range({files}):
    with open(f"part{{i}}.txt") as f:
        sum(len(line) for line in f)
    os.stat(f"part{{i}}.txt")
"""


def runs() -> list:
    """(name, command template, ranks): {out} is the run's scratch directory."""
    out = []
    for m in ("consec", "strided", "bins", "topk", "meta", "append", "many", "turns"):
        out.append((f"posix_{m}", ["posix_workload", m, "{out}"], 1))
    out.append(("stdio", ["stdio_workload", "{out}"], 1))
    for m in ("small", "random", "misaligned", "stdio", "meta", "reread", "fsync", "rmw",
              "seeks"):
        out.append((f"aposix_{m}", ["advice_posix", m], 1))
    for n in (2, 4):
        for m in ("good", "indep", "imbalance", "nocb"):
            out.append((f"ampi_{m}_{n}", ["advice_mpi", m], n))
        for m in ("strided", "indep", "nocb", "sieve", "misaligned", "meta", "random",
                  "imbalance", "reread", "fsync", "stdio", "good", "fpp"):
            out.append((f"corpus_{m}_{n}", ["advice_corpus", m], n))
        out.append((f"mpi_{n}", ["mpi_workload", "{out}"], n))
        for files in (10, 100):
            out.append((f"many_{files}_{n}", ["mpi_many", str(files)], n))
        out.append((f"h5par_{n}", ["h5_parallel", "h5_parallel.h5"], n))
        for m in ("coll", "indep"):
            out.append((f"ah5_{m}_{n}", ["advice_h5", m], n))
    out.append(("nc_serial", ["nc_serial"], 1))
    for n in (20, 150):
        out.append((f"py_h5_{n}", ["python", H5_CHUNKS.format(n=n)], 1))
    for fmt, v, n in (("NETCDF3_CLASSIC", 6, 20), ("NETCDF4", 3, 40)):
        out.append((f"py_nc_{fmt}", ["python", NC_RECORDS.format(fmt=fmt, v=v, n=n)], 1))
    for files, lines in ((3, 100), (20, 2000)):
        out.append((f"py_files_{files}", ["python", PY_FILES.format(files=files, lines=lines)], 1))
    return out


def make_runs(dest: Path) -> list:
    """Run every workload once under the tool; their logs into dest (named by run)."""
    dest.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    env.update(LD_PRELOAD=str(BUILD / "libiochar.so"), OMPI_MCA_rmaps_base_oversubscribe="1")
    for name, cmd, ranks in runs():
        if any(dest.glob(f"{name}.*.iochar")):
            continue
        if cmd[0] == "python":
            argv = [sys.executable, "-c", cmd[1]]
        else:
            exe = BUILD / "tests" / cmd[0]
            if not exe.exists():
                print(f"  skipped {name}: {exe} not built", file=sys.stderr)
                continue
            argv = [str(exe), *cmd[1:]]
        work = Path(tempfile.mkdtemp(prefix="run-", dir=dest))
        argv = [a.replace("{out}", str(work)) for a in argv]
        if ranks > 1:
            argv = ["mpiexec.mpich", "-n", str(ranks), *argv]
        logs = work / "logs"
        logs.mkdir()
        p = subprocess.run(argv, env={**env, "IOCHAR_LOGDIR": str(logs)}, cwd=work,
                           capture_output=True, timeout=600)
        got = sorted(logs.glob("*.iochar"))
        if p.returncode != 0 or not got:
            print(f"  {name}: exit {p.returncode}, {len(got)} logs", file=sys.stderr)
        for i, g in enumerate(got):  # a Python run may log helper processes too
            shutil.move(g, dest / f"{name}.{i}.iochar")
        shutil.rmtree(work, ignore_errors=True)
    return sorted(dest.glob("*.iochar"))


def restamp(data: bytes, changes: dict) -> bytes:
    """The log with its JOB section's keys updated (every other section's bytes kept)."""
    _, version, hsize, _, nsec, _ = L.HEADER.unpack_from(data)
    off, secs = hsize, []
    for _ in range(nsec):
        kind, _, count, pcrc, ulen, clen, start = L.section_at(data, off, version)
        end = start + clen
        if kind == b"JOB":
            raw = L.payload(data[start:end], pcrc, ulen, "JOB", L.inflater_for(version))
            job = dict(L.parse_job(raw, count, "JOB"), **changes)
            secs.append(section("JOB", "", len(job), job_payload(job), version=version))
        else:
            secs.append(data[off:end])
        off = end
    total = L.HEADER.size + sum(map(len, secs))
    head = L.HEADER.pack(L.MAGIC, version, L.HEADER.size, total, len(secs), 0)[:28]
    return b"".join([head, struct.pack("<I", zlib.crc32(head)), *secs])


def make_tree(logs: list, tree: Path, n: int) -> int:
    """n logs from the runs' logs under tree/day*/ (two of them unreadable)."""
    shutil.rmtree(tree, ignore_errors=True)
    good = n - 2
    for i in range(good):
        src = logs[i % len(logs)]
        data = src.read_bytes()
        if i >= len(logs):  # a later run of the same program: restamped
            start = T0 + (i * 7919 % (90 * 86400))
            job = from_bytes(data).job
            run = job.get("end_time", 0.0) - job.get("start_time", 0.0)
            data = restamp(data, {"jobid": str(200000 + i), "user": f"user{i % 23:02d}",
                                  "uid": 2000 + i % 23, "start_time": start,
                                  "end_time": start + max(run, 0.0)})
        day = tree / f"day{i % 10}"
        day.mkdir(parents=True, exist_ok=True)
        (day / f"{src.stem}.{i}.iochar").write_bytes(data)
    first = logs[0].read_bytes()
    (tree / "day0" / "truncated.iochar").write_bytes(first[:len(first) // 2])
    bad = bytearray(first)
    bad[-5] ^= 0xFF  # the last section's payload: a CRC mismatch
    (tree / "day1" / "corrupt.iochar").write_bytes(bytes(bad))
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--logs", type=int, default=400)
    args = ap.parse_args()
    logs = make_runs(args.out / "runs")
    tree = args.out / "tree"
    if sum(1 for _ in tree.rglob("*.iochar")) != args.logs:
        make_tree(logs, tree, args.logs)
    print(f"{len(logs)} run logs in {args.out / 'runs'}; {args.logs} logs in {tree}")


if __name__ == "__main__":
    main()
