"""Composite Lustre layouts end to end, without Lustre: a mount table bind-mounted over
the process's /proc/<pid>/mounts (a private mount namespace: unshare -m) says a scratch
directory is Lustre, and a shim preloaded before the tool (tests/integration/
lustre_shim.c) gives its files' `lustre.lov` attribute: a mirrored progressive layout,
only its first component instantiated at the first open, all of mirror 1 at the end.
The log must carry, in the LUSTRE module, the data components the accesses covered
(the stale mirror left out), the POSIX record must describe the component holding most
of the bytes, and the advice must judge that component's stripe."""

import math
import shlex
import shutil
import subprocess
import sys

import pytest

import iochar
from iochar import advice
from tool import BUILD, LIB, logs_in, mpiexec, run, workload

MiB = 1 << 20
SHIM = BUILD / "tests" / "liblustre_shim.so"


def namespaces_work():
    if not shutil.which("unshare") or not SHIM.exists():
        return False
    p = subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind /dev/null /proc/$$/mounts"],
                       capture_output=True)
    return p.returncode == 0


pytestmark = pytest.mark.skipif(not namespaces_work(),
                                reason="needs unshare -m and bind mounts (root)")


def under_lustre(tmp_path, prog: list, ranks: int = 0):
    """Run prog (under mpiexec with `ranks` ranks if ranks) with tmp_path/lus as Lustre;
    returns the job's log."""
    lus = tmp_path / "lus"
    lus.mkdir()
    table = tmp_path / "mounts"
    table.write_text(f"root / ext4 rw 0 0\nfake {lus} lustre rw 0 0\n")
    # each process binds the table over its own mounts file, then becomes the program
    # (exec keeps the pid); the tool is preloaded only there
    inner = (f"mount --bind {table} /proc/$$/mounts && exec env LD_PRELOAD={SHIM}:{LIB} "
             + " ".join(shlex.quote(str(a)) for a in prog))
    cmd = ["unshare", "-m"] + (mpiexec(ranks) if ranks else []) + ["sh", "-c", inner]
    logs = tmp_path / "logs"
    logs.mkdir()
    p = run(cmd, lus, env={"IOCHAR_LOGDIR": str(logs), "LUSTRE_SHIM_DIR": str(lus)},
            preload=False)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    (lg,) = logs_in(logs)
    return iochar.open(str(lg))


# mirror 1's three components as the LUSTRE module lists them (lustre_shim.c)
COMPS = [(0, MiB, MiB, 1), (MiB, 16 * MiB, 4 * MiB, 4), (16 * MiB, -1, 16 * MiB, 8)]


def listed(row, n):
    return [tuple(int(row[f"LUSTRE_COMP{k}_{f}"]) for f in
                  ("EXT_START", "EXT_END", "STRIPE_SIZE", "STRIPE_COUNT")) for k in
            range(1, n + 1)]


def test_one_process_lists_the_components_it_wrote_in(tmp_path):
    """Three 4 MiB writes at 0, 100 MiB and 200 MiB: every component of mirror 1 covers
    some of [0, 204 MiB); the stale mirror 2 is not listed; the POSIX record, which the
    open described by the first component (the only one instantiated then), describes
    the 16 MiB-stripe one at the end."""
    script = ("import os\n"
              "fd = os.open('f.dat', os.O_CREAT | os.O_WRONLY, 0o644)\n"
              "for off in (0, 100 << 20, 200 << 20): os.pwrite(fd, b'x' * (4 << 20), off)\n"
              "os.close(fd)\n")
    log = under_lustre(tmp_path, [sys.executable, "-c", script])
    assert "LUSTRE" in log.modules
    px = log.records("POSIX")
    r = px[px["path"].str.endswith("/f.dat")].iloc[0]
    assert (r["POSIX_LUSTRE_STRIPE_SIZE"], r["POSIX_LUSTRE_STRIPE_COUNT"],
            r["POSIX_LUSTRE_STRIPE_OFFSET"], r["POSIX_LUSTRE_COMPONENTS"]) == \
        (16 * MiB, 8, 20, 4)
    lu = log.records("LUSTRE")
    (row,) = [row for _, row in lu.iterrows() if row["record_id"] == r["record_id"]]
    assert row["path"] == r["path"] and row["LUSTRE_COMPONENTS"] == 4
    assert row["LUSTRE_COMPS_LISTED"] == 3
    assert listed(row, 3) == COMPS
    assert all(row[f"LUSTRE_COMP{k}_FLAGS"] == 0x10 and row[f"LUSTRE_COMP{k}_MIRROR_ID"] == 1
               for k in (1, 2, 3))
    assert all(row[f"LUSTRE_COMP4_{f}"] == 0 for f in ("EXT_START", "EXT_END", "FLAGS"))
    ctx = advice.Context(log.job, {m: log.records(m) for m in log.modules})
    got = ctx.lustre_components[r["record_id"]]
    assert got[:4] == (16 * MiB, 8, 16 * MiB, math.inf)
    # bytes laid below the highest byte (12 MiB: [192, 204) MiB), all in the third
    assert got[4:] == (12 * MiB, 12 * MiB)
    assert ctx.stripe_unit([r["path"]]) == 16 * MiB


def test_ranks_of_a_shared_file_combine_their_components(tmp_path):
    """4 ranks writing a 64 MiB shared file interleaved (advice_corpus strided): one
    shared LUSTRE record with the three components, 48 of the 64 MiB in the 16 MiB one;
    the Darshan log written from it lists the same components."""
    if not shutil.which("mpiexec.mpich"):
        pytest.skip("needs MPICH")
    log = under_lustre(tmp_path, [workload("advice_corpus"), "strided"], ranks=4)
    assert log.job["nprocs"] == 4
    lu = log.records("LUSTRE")
    assert lu["rank"].tolist() == [-1] and lu["LUSTRE_COMPS_LISTED"].tolist() == [3]
    assert listed(lu.iloc[0], 3) == COMPS
    ctx = advice.Context(log.job, {m: log.records(m) for m in log.modules})
    (got,) = ctx.lustre_components.values()
    assert got[:2] == (16 * MiB, 8) and got[4:] == (48 * MiB, 64 * MiB)
    pytest.importorskip("darshan")
    from iochar import darshan_export
    out = tmp_path / "j.darshan"
    out.write_bytes(darshan_export.to_bytes(log))
    back = iochar.open(str(out)).records("LUSTRE")
    assert back["LUSTRE_COMPONENTS"].tolist() == [3]
    assert back["LUSTRE_COMP3_STRIPE_SIZE"].tolist() == [16 * MiB]
    assert back["LUSTRE_COMP2_EXT_START"].tolist() == [MiB]
