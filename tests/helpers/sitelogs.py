"""A site's worth of small logs on several days (iochar-db's site page tests): known
users, programs, days, file systems and findings."""

from pathlib import Path

import iochar
from iochar import jobreport
from report_frames import MiB, frame, write_log_mounts

DAY = 86400.0
T0 = 1_767_225_600.0  # 2026-01-01 00:00 UTC
USERS = ("ann", "bob", "cyd", "dee", "eve")
PROGRAMS = ("/apps/sim", "/apps/post", "/apps/viz", "/apps/ml")
MOUNTS = [("/", "ext4", 4096), ("/scratch", "lustre", 1 << 20), ("/home", "nfs", 4096)]


def small_seconds(i: int) -> float:
    return 15.0 + 10.0 * (i % len(USERS))


def site_job(i: int, days: int) -> dict:
    """Job i: on day i % days (UTC), at 01:00 + i minutes; user i % 5, program i % 4;
    every third job (i % 3 == 0) writes 20,000 x 4 KiB in small_seconds(i) (a small-io
    finding costing about that, beside a 256 MiB checkpoint: WARN for ann's ~15 s and
    bob's ~25 s of a 100 s run, HIGH for the others; its exact cost and severity are
    the report's, filled in by make_site_logs),
    the others 16 x 16 MiB in 4 s; each also reads 1 MiB of /home/<user>/input.cfg."""
    start = T0 + (i % days) * DAY + 3600 + 60 * (i // days)
    user, exe = USERS[i % len(USERS)], PROGRAMS[i % len(PROGRAMS)]
    small = i % 3 == 0
    n, size = (20000, 4096) if small else (16, 16 * MiB)
    out = {"path": f"/scratch/{user}/run{i}/out.dat", "rank": 0, "POSIX_OPENS": 1,
           "POSIX_WRITES": n, "POSIX_BYTES_WRITTEN": n * size,
           ("POSIX_SIZE_WRITE_1K_10K" if small else "POSIX_SIZE_WRITE_10M_100M"): n,
           "POSIX_ACCESS1_ACCESS": size, "POSIX_ACCESS1_COUNT": n,
           "POSIX_SEQ_WRITES": n - 1, "POSIX_CONSEC_WRITES": n - 1,
           "POSIX_FILE_ALIGNMENT": 4096, "POSIX_MAX_BYTE_WRITTEN": n * size - 1,
           "POSIX_F_WRITE_TIME": small_seconds(i) if small else 4.0}
    cfg = {"path": f"/home/{user}/input.cfg", "rank": 0, "POSIX_OPENS": 1, "POSIX_READS": 1,
           "POSIX_BYTES_READ": MiB, "POSIX_SIZE_READ_100K_1M": 1, "POSIX_ACCESS1_ACCESS": MiB,
           "POSIX_ACCESS1_COUNT": 1, "POSIX_MAX_BYTE_READ": MiB - 1, "POSIX_F_READ_TIME": 0.01}
    # beside the small writes, a checkpoint of large ones: the cost model fits its
    # per-access latency and bandwidth on the two sizes (advice/cost.py)
    big = {"path": f"/scratch/{user}/run{i}/ckpt.dat", "rank": 0, "POSIX_OPENS": 1,
           "POSIX_WRITES": 16, "POSIX_BYTES_WRITTEN": 16 * 16 * MiB,
           "POSIX_SIZE_WRITE_10M_100M": 16, "POSIX_ACCESS1_ACCESS": 16 * MiB,
           "POSIX_ACCESS1_COUNT": 16, "POSIX_SEQ_WRITES": 15, "POSIX_CONSEC_WRITES": 15,
           "POSIX_FILE_ALIGNMENT": 4096, "POSIX_MAX_BYTE_WRITTEN": 16 * 16 * MiB - 1,
           "POSIX_F_WRITE_TIME": 1.0}
    job = {"nprocs": 1, "nnodes": 1, "uid": 1000 + i % len(USERS), "user": user, "exe": exe,
           "cmdline": exe, "jobid": str(5000 + i), "version": "0.1.0", "hostname": "n1",
           "start_time": start, "end_time": start + 100.0}
    return {"job": job, "frames": {"POSIX": frame([out, cfg] + ([big] if small else []))},
            "small": small,
            "day": int(i % days), "user": user, "exe": exe, "jobid": job["jobid"],
            "cost": small_seconds(i) if small else 0.0}


def make_site_logs(d: Path, n: int = 300, days: int = 6) -> list:
    """n logs in d (d/<day>/job<i>.iochar); returns site_job's dicts in order."""
    jobs = []
    for i in range(n):
        j = site_job(i, days)
        sub = d / f"day{j['day']}"
        sub.mkdir(parents=True, exist_ok=True)
        path = sub / f"job{i:04d}.iochar"
        write_log_mounts(path, j["job"], j["frames"], MOUNTS)
        if j["small"]:  # the cost as iochar-report gives it (advice/cost.py's estimate)
            adv = jobreport.build(jobreport.load_log(iochar.open(path)))["advice"]
            j["cost"], j["severity"] = next((a["cost"]["seconds"], a["severity"])
                                            for a in adv if a["id"] == "small-io")
        jobs.append(j)
    return jobs
