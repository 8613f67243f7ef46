"""iochar-exporter: the live I/O of this node's jobs as Prometheus metrics (one per node).

An HTTP endpoint (/metrics, default 127.0.0.1:9479) read on every scrape, or --textfile DIR:
DIR/iochar.prom written atomically every --interval seconds for node_exporter's textfile
collector. The numbers are iochar-top's (iochar/livemonitor.py): counters per job, user,
program, module and file system, monotonic while the job runs (its ended processes' last
values kept until its last process ends), gone a few scrapes after it ends. The series
and their bounds: docs/deploying.md ("Live metrics"); what they expose: docs/security.md.
"""

from __future__ import annotations

import http.server
import ipaddress
import os
import signal
import socket
import sys
import threading

from .. import livedir, livemonitor, liveview
from .common import ArgParser, CliError, escape, run_cli, write_atomic
from .version import add_version

DEFAULT_LISTEN = "127.0.0.1:9479"
KEEP = 3  # collections an ended job's series stay (Prometheus sees its final values)
MAX_FS = 16  # file-system series per job; later ones share fs="other"
MAX_FILES = 100  # --files bound
OPS = (("read", "reads"), ("write", "writes"), ("open", "opens"), ("stat", "stats"),
       ("seek", "seeks"), ("sync", "syncs"))
KINDS = (("read", "read_time"), ("write", "write_time"), ("meta", "meta_time"))


class LiveCollector:
    """A prometheus_client collector: each collect() is one sample of the live directory."""

    def __init__(self, top, files: int = 0, keep: int = KEEP):
        self.mon = livemonitor.Monitor(top, None, keep=keep)
        self.files = files
        self.lock = threading.Lock()
        self.said: set = set()

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        with self.lock:  # scrapes may come in parallel; the monitor is one state
            views = self.mon.step(self.files)
            for line in self.mon.problems:
                if line not in self.said:
                    self.said.add(line)
                    print(f"iochar-exporter: skipped: {escape(line)}", file=sys.stderr, flush=True)
            base = ["job", "user", "program"]
            by = CounterMetricFamily("iochar_bytes", "Bytes moved by the job's processes on this "
                                     "node", labels=base + ["module", "fs", "direction"])
            ops = CounterMetricFamily("iochar_operations", "Operations of the job's processes "
                                      "on this node", labels=base + ["module", "fs", "op"])
            secs = CounterMetricFamily("iochar_io_seconds", "Seconds the job's processes on "
                                       "this node spent in I/O calls",
                                       labels=base + ["module", "fs", "kind"])
            procs = GaugeMetricFamily("iochar_processes", "Processes of the job running on "
                                      "this node", labels=base)
            fby = CounterMetricFamily("iochar_file_bytes", "Bytes moved to or from one file "
                                      "(the job's top files by bytes, --files)",
                                      labels=base + ["module", "fs", "path", "direction"])
            for v in views:
                j = v.job
                lab = [j.jobid, j.user, j.program]
                procs.add_metric(lab, j.count("running") + j.count("finishing"))
                for (mod, fs), (ints, flts) in sorted(self.mon.series(j, MAX_FS).items()):
                    i = dict(zip(liveview.INTS, (int(x) for x in ints)))
                    f = dict(zip(liveview.FLOATS, (float(x) for x in flts)))
                    by.add_metric(lab + [mod, fs, "read"], i["bytes_read"])
                    by.add_metric(lab + [mod, fs, "write"], i["bytes_written"])
                    for op, q in OPS:
                        if i[q] or op in ("read", "write"):
                            ops.add_metric(lab + [mod, fs, op], i[q])
                    for kind, q in KINDS:
                        secs.add_metric(lab + [mod, fs, kind], f[q])
                for fl in v.files:
                    for d, q in (("read", "bytes_read"), ("write", "bytes_written")):
                        fby.add_metric(lab + [fl["module"], fl["fs"], escape(fl["path"]), d], fl[q])
            scrape = GaugeMetricFamily("iochar_exporter_skipped_files", "Live files or "
                                       "directories this collection could not read (the "
                                       "exporter's stderr names them)")
            scrape.add_metric([], len(self.mon.problems))
            out = [by, ops, secs, procs, scrape]
            if self.files:
                out.append(fby)
            return out


def _listen(s: str) -> tuple:
    host, sep, port = s.rpartition(":")
    host = host.strip("[]")
    try:
        if not sep or not host:
            raise ValueError
        ipaddress.ip_address(host)
        p = int(port)
        if not 0 <= p <= 65535:
            raise ValueError
    except ValueError:
        raise CliError(f"--listen: not ADDR:PORT with an IP address: {s!r}") from None
    return host, p


def parser() -> ArgParser:
    p = ArgParser(prog="iochar-exporter", description="The live I/O of this node's jobs as "
                  "Prometheus metrics (their live files: docs/deploying.md).")
    add_version(p)
    p.add_argument("--listen", metavar="ADDR:PORT", help=f"serve /metrics here (default "
                   f"{DEFAULT_LISTEN}; port 0: any free port, printed)")
    p.add_argument("--textfile", metavar="DIR", help="write DIR/iochar.prom (atomically) every "
                   "--interval seconds for node_exporter's textfile collector, instead of serving")
    p.add_argument("--livedir", metavar="DIR", help="the live directory (default: IOCHAR_LIVEDIR "
                   "as the runtime sees it, else /dev/shm)")
    p.add_argument("--interval", metavar="S", type=float, default=15.0,
                   help="--textfile: seconds between writes (default 15)")
    p.add_argument("--files", metavar="N", type=int, default=0,
                   help=f"also iochar_file_bytes_total for each job's N busiest files (at most "
                   f"{MAX_FILES}; default none)")
    p.add_argument("--once", action="store_true", help="--textfile: write once and exit")
    return p


def main_(argv) -> int:
    args = parser().parse_args(argv)
    if not 0 <= args.files <= MAX_FILES:
        raise CliError(f"--files: from 0 to {MAX_FILES}")
    if not 0.1 <= args.interval <= 86400:
        raise CliError("--interval: from 0.1 to 86400 seconds")
    if args.textfile and args.listen:
        raise CliError("--textfile and --listen: one or the other")
    if args.once and not args.textfile:
        raise CliError("--once goes with --textfile")
    top = args.livedir or str(livedir.live_dir())  # made by the first job if missing
    from prometheus_client import CollectorRegistry, generate_latest

    reg = CollectorRegistry(auto_describe=False)
    col = LiveCollector(top, args.files)
    reg.register(col)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    if args.textfile:
        if not os.path.isdir(args.textfile):
            raise CliError(f"--textfile {args.textfile}: no such directory")
        out = os.path.join(args.textfile, "iochar.prom")
        while True:
            write_atomic(out, generate_latest(reg))
            if args.once or stop.wait(args.interval):
                return 0
    host, port = _listen(args.listen or DEFAULT_LISTEN)
    srv = _server(host, port, reg)
    print(f"iochar-exporter: serving http://{host if ':' not in host else f'[{host}]'}:"
          f"{srv.server_address[1]}/metrics", flush=True)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        stop.wait()
    finally:
        srv.shutdown()
        srv.server_close()
        col.mon.close()
    return 0


def _server(host: str, port: int, reg):
    from prometheus_client.exposition import MetricsHandler

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

    class Handler(MetricsHandler.factory(reg)):
        def log_message(self, *a):  # one line per scrape on stderr is noise
            pass

    try:
        return Server((host, port), Handler)
    except OSError as e:
        raise CliError(f"--listen {host}:{port}: {e.strerror or e}") from None


def main(argv=None) -> int:
    return run_cli("iochar-exporter", main_, argv)


if __name__ == "__main__":
    sys.exit(main())
