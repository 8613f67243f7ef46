"""Run real programs under the preload library and read back their logs."""

import os
import subprocess
from pathlib import Path

import iochar

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("IOCHAR_BUILD", ROOT / "build"))
BUILD_OPENMPI = Path(os.environ.get("IOCHAR_BUILD_OPENMPI", ROOT / "build-openmpi"))
LIB = BUILD / "libiochar.so"


def workload(name, build=BUILD):
    """Path of a C workload built by meson (tests/<name>.c)."""
    return str(build / "tests" / name)


def mpiexec(n, flavor="mpich"):
    """Launcher prefix; flavors are called by explicit name (alternatives lie)."""
    if flavor == "mpich":
        return ["mpiexec.mpich", "-n", str(n)]
    return ["mpiexec.openmpi", "--oversubscribe", "--allow-run-as-root", "-n", str(n)]


def run(cmd, logdir, env=None, preload=True, lib=LIB, timeout=300, input=None):
    """Run cmd with the tool preloaded, logs going to logdir; returns the process."""
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("IOCHAR_"):
            del e[k]
    e["IOCHAR_LOGDIR"] = str(logdir)
    e["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    if preload:
        e["LD_PRELOAD"] = str(lib)
    if env:
        e.update(env)
    return subprocess.run(cmd, env=e, cwd=str(logdir), capture_output=True,
                          timeout=timeout, input=input)


def logs_in(d):
    return sorted(Path(d).glob("*.iochar"))


def run_log(cmd, tmp_path, **kw):
    """Run under the tool; assert success and exactly one log; return (proc, log)."""
    p = run(cmd, tmp_path, **kw)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    logs = logs_in(tmp_path)
    assert len(logs) == 1, logs
    return p, iochar.open(str(logs[0]))


def one(df, path_suffix):
    """The single row of df whose path ends with path_suffix."""
    rows = df[df["path"].str.endswith(path_suffix)]
    assert len(rows) == 1, (path_suffix, rows[["rank", "path"]])
    return rows.iloc[0]
