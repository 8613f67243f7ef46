"""The live view's cost: one exporter scrape of a node with P live processes of R records
each (default 64 x 2,000), and reads of one live file of 20,000 records. Prints CPU
seconds, wall milliseconds, peak memory and the machine's load.

    python bench/live_scrape.py [--procs P] [--records R] [--big N]

The live files are real: a Python process under the preload library creates R files
(each opened and written once: a record with data, and the metadata-only entry its open
made, made full) and stops itself; its live file is then copied P
times into a scratch live directory (the copies keep the real layout, and their process
is alive, so every copy counts as a running process). Each measurement runs in a fresh
Python process: the first scrape walks every record (the worst case), the next ones read
only the counters.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = Path(os.environ.get("IOCHAR_BUILD", ROOT / "build")) / "libiochar.so"
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "reports"))
BIG_MEMORY = "64m"  # the big file's IOCHAR_MEMORY

MEASURE = r"""
import json, os, resource, sys, time
from iochar.cli.exporter import LiveCollector
from iochar import livescan, liveview
from prometheus_client import CollectorRegistry, generate_latest
top, mode = sys.argv[1], sys.argv[2]
out = {}
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if mode == "scrape":
    reg = CollectorRegistry(auto_describe=False)
    col = LiveCollector(top)
    reg.register(col)
    for k in ("first", "second", "third"):
        c0, w0 = time.process_time(), time.perf_counter()
        text = generate_latest(reg)
        out[k] = (time.process_time() - c0, 1000 * (time.perf_counter() - w0))
    out["files"] = len(col.mon.reader.open)
    out["series"] = sum(1 for ln in text.splitlines() if ln and not ln.startswith(b"#"))
else:
    liveview.keep_freed_memory()  # as the tools' Monitor does
    sc = livescan.scan(top)
    (fd, name, uid), = sc.files
    lf = liveview.LiveFile(fd, name, uid)
    for k in ("first", "second", "third"):
        c0, w0 = time.process_time(), time.perf_counter()
        s = lf.read()
        out[k] = (time.process_time() - c0, 1000 * (time.perf_counter() - w0))
    # the same file new to a reader already running (iochar-top, the exporter: a job
    # that starts while they watch): its first read without the process's warm-up
    lf2 = liveview.LiveFile(os.dup(fd), name, uid)
    c0, w0 = time.process_time(), time.perf_counter()
    lf2.read()
    out["new_in_running"] = (time.process_time() - c0, 1000 * (time.perf_counter() - w0))
    lf2.close()
    agg = lf.n_len < 0
    out["rows"] = len(s.paths)
    out["entries"] = int(lf.r_entry.sum())
    out["records"] = int((~lf.r_entry & ~agg).sum())
    out["with_data"] = int(((s.ints[:, 0] + s.ints[:, 1] > 0) & ~lf.r_entry & ~agg).sum())
    out["aggregates"] = int(agg.sum())
    out["folded"] = int(sum(s.header["folded"]))
out["rss_delta_mib"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
out["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def make_live(tmp: Path, n: int, memory: str | None = None):
    """A stopped process's live file after it created n files: (the file, the process);
    `memory`: its IOCHAR_MEMORY (the default bound holds about 19,000 such files)."""
    data, ld = tmp / f"data{n}", tmp / f"live{n}"
    data.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    env.update(LD_PRELOAD=str(LIB), IOCHAR_LOGDIR=str(data), IOCHAR_LIVEDIR=str(ld))
    if memory:
        env["IOCHAR_MEMORY"] = memory
    code = (f"import os, signal\nfor i in range({n}):\n    with open(f'f{{i}}', 'w') as f:\n"
            "        f.write('x')\nos.kill(os.getpid(), signal.SIGSTOP)\n")
    sh = subprocess.Popen([sys.executable, "-c", code], cwd=str(data), env=env,
                          start_new_session=True)
    while True:
        st = open(f"/proc/{sh.pid}/stat").read().rsplit(")", 1)[1].split()[0]
        if st == "T":
            break
        if sh.poll() is not None:
            raise SystemExit(f"the shell ended ({sh.returncode})")
        time.sleep(0.1)
    (lv,) = ld.rglob(".*.live")
    return lv, sh


def measure(top: Path, mode: str) -> dict:
    r = subprocess.run([sys.executable, "-c", MEASURE, str(top), mode], env=ENV,
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs", type=int, default=64)
    ap.add_argument("--records", type=int, default=2000)
    ap.add_argument("--big", type=int, default=20000, help="files of the big live file")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="iochar-bench-live-"))
    shells = []
    try:
        lv, sh = make_live(tmp, args.records)
        shells.append(sh)
        node = tmp / "node"
        key = node / f"iochar-{os.getuid()}" / lv.parent.name
        key.mkdir(parents=True, mode=0o700)
        os.chmod(node / f"iochar-{os.getuid()}", 0o700)
        for i in range(args.procs):
            subprocess.run(["cp", "--sparse=always", str(lv),
                            str(key / f".bench.iochar.{i:016x}.live")], check=True)
        for f in key.iterdir():
            os.chmod(f, 0o600)
        size = (key / ".bench.iochar.0000000000000000.live").stat()
        # 20,000 files of one byte are ~1,700 bytes each (an entry, made full by the
        # write, its record, the record's state and top-4 tables): past the default
        # 32 MiB bound, so the bound is raised to keep them all (stderr says if not)
        big, sh2 = make_live(tmp, args.big, BIG_MEMORY)
        shells.append(sh2)
        load = os.getloadavg()
        s = measure(node, "scrape")
        b = measure(big.parent.parent.parent, "file")
        print(f"machine: {os.cpu_count()} cpus, load average {load[0]:.1f} {load[1]:.1f} "
              f"{load[2]:.1f}")
        print(f"node: {args.procs} live processes x {args.records} records "
              f"({size.st_blocks * 512 / 1048576:.1f} MiB allocated each), {s['series']} series")
        for k in ("first", "second", "third"):
            print(f"  scrape {k:<6}: {s[k][0]:.3f} s CPU, {s[k][1]:.0f} ms wall")
        print(f"  memory: peak RSS {s['rss_mib']:.0f} MiB (+{s['rss_delta_mib']:.0f} MiB over "
              f"the interpreter and imports)")
        if b["folded"]:
            raise SystemExit(f"the big file folded {b['folded']} files: raise BIG_MEMORY")
        print(f"one live file of {args.big} files (IOCHAR_MEMORY={BIG_MEMORY}): {b['rows']} rows, "
              f"{b['records']} records ({b['with_data']} with data), {b['entries']} "
              f"metadata-only entries (made full: counted in their records), "
              f"{b['aggregates']} aggregates; peak RSS {b['rss_mib']:.0f} MiB:")
        for k in ("first", "second", "third"):
            print(f"  read {k:<6}: {1000 * b[k][0]:.1f} ms CPU, {b[k][1]:.1f} ms wall"
                  + ("  (a fresh process: its buffers' first pages, numpy's first calls)"
                     if k == "first" else ""))
        c, w = b["new_in_running"]
        print(f"  first read of it as a new file of a running reader: {1000 * c:.1f} ms CPU, "
              f"{w:.1f} ms wall")
    finally:
        for sh in shells:
            os.killpg(sh.pid, signal.SIGKILL)
            sh.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
